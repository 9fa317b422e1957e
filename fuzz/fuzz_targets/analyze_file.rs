//! Fuzzes step 2 end to end on one file: `analysis::analyze_file` on arbitrary bytes (and on
//! mutations of the real scripts given as seed corpus), then the demand model, the verdict and
//! every renderer on its result.
//!
//! Run (see docs/bench-analyze.md):
//! `RUSTC_BOOTSTRAP=1 cargo fuzz run analyze_file fuzz/corpus/analyze_file tests/fixtures examples -- -dict=fuzz/python.dict -max_total_time=600`

#![no_main]

use efficiency_audit::analysis::{analyze_file, estimate_demand};
use efficiency_audit::config::Rules;
use efficiency_audit::report::analysis_json::{AnalysisReport, FileEntry, SCHEMA, Sources, Tool};
use efficiency_audit::report::{analysis_html, analysis_json, annotations, sarif};
use efficiency_audit::verdict::{Basis, decide};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let analysis = analyze_file("fuzz.py", data, &Rules::default());

    // What the renderers rely on: 1-based, ordered lines and edits inside the file.
    for f in &analysis.findings {
        assert!(
            f.line >= 1 && f.end_line >= f.line && f.column >= 1,
            "{f:?}"
        );
        if let Some(fix) = &f.fix {
            for e in &fix.edits {
                assert!(
                    e.start <= e.end && e.end <= data.len(),
                    "{e:?} in {} bytes",
                    data.len()
                );
            }
        }
    }
    for hot in &analysis.hot_loops {
        assert!(hot.line >= 1 && hot.end_line >= hot.line, "{hot:?}");
    }

    let demand = estimate_demand(std::slice::from_ref(&analysis), None, 8);
    let verdict = decide(&demand.saturation, Basis::Estimated, 0.7);
    let mut sources = Sources::default();
    sources.insert("fuzz.py".into(), String::from_utf8_lossy(data).into_owned());
    let report = AnalysisReport {
        schema: SCHEMA,
        tool: Tool::this(),
        files: vec![FileEntry {
            path: analysis.path.clone(),
            kind: analysis.kind,
            facts: serde_json::to_value(&analysis.facts).unwrap_or_default(),
            parsed: analysis.parsed,
        }],
        findings: analysis.findings.clone(),
        demand,
        verdict,
        ceilings: None,
        warnings: analysis.warnings.clone(),
        rules: Vec::new(),
        sources,
    };
    let _ = analysis_json::render(&report);
    let _ = analysis_html::render(&report);
    let _ = sarif::render(&report);
    let _ = annotations::render(&report.findings);
});
