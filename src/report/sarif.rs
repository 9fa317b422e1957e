//! `analysis.sarif`: findings as SARIF 2.1.0 for GitHub code scanning
//! (`github/codeql-action/upload-sarif`).
//!
//! Hand-rolled like ruff's `message/sarif.rs` and cargo-deny's `src/sarif`: only the fields
//! code scanning reads (reference aesthetics.md §6, ci_bots.md "SARIF → code scanning").
//! Artifact URIs are relative to the repository root with `uriBaseId: %SRCROOT%`, as
//! code scanning requires; fixes turn the engine's byte ranges into line/column regions.

use std::collections::HashMap;

use serde_json::{Value, json};

use crate::analysis::model::{Applicability, Finding, Severity};
use crate::report::analysis_json::{AnalysisReport, RuleMeta};

/// The SARIF version written.
pub const SARIF_VERSION: &str = "2.1.0";

/// The schema URI GitHub's documentation uses for SARIF 2.1.0.
pub const SARIF_SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// Where the tool's documentation lives: the package's `repository` (or `homepage`) from
/// Cargo.toml; omitted while neither is set (`informationUri` is optional in SARIF 2.1.0 §3.19.17).
const INFORMATION_URI: &str = match option_env!("CARGO_PKG_REPOSITORY") {
    Some(uri) if !uri.is_empty() => uri,
    _ => env!("CARGO_PKG_HOMEPAGE"),
};

/// Renders the SARIF log (pretty-printed, trailing newline).
pub fn render(report: &AnalysisReport) -> Result<String, serde_json::Error> {
    let mut text = serde_json::to_string_pretty(&log(report))?;
    text.push('\n');
    Ok(text)
}

/// The SARIF log as a JSON value.
#[must_use]
pub fn log(report: &AnalysisReport) -> Value {
    // Rule descriptors: every known rule, plus a bare one for any id the metadata lacks, so
    // every result has a valid `ruleIndex`.
    let mut rules: Vec<RuleMeta> = report.rules.clone();
    for finding in &report.findings {
        if !rules.iter().any(|r| r.id == finding.rule) {
            rules.push(RuleMeta {
                id: finding.rule.clone(),
                name: finding.rule.clone(),
                category: finding.category,
                severity: finding.severity,
                summary: format!("{} finding.", finding.category.as_str()),
                docs: String::new(),
            });
        }
    }
    let index: HashMap<&str, usize> = rules
        .iter()
        .enumerate()
        .map(|(i, r)| (r.id.as_str(), i))
        .collect();

    let mut occurrences: HashMap<(String, u64), usize> = HashMap::new();
    let results: Vec<Value> = report
        .findings
        .iter()
        .map(|finding| {
            let rule_index = index.get(finding.rule.as_str()).copied().unwrap_or(0);
            result(report, finding, rule_index, &mut occurrences)
        })
        .collect();

    let mut driver = json!({
        "name": report.tool.name,
        "version": report.tool.version,
        "semanticVersion": report.tool.version,
        "rules": rules.iter().map(descriptor).collect::<Vec<_>>(),
    });
    if !INFORMATION_URI.is_empty() {
        driver["informationUri"] = json!(INFORMATION_URI);
    }
    json!({
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [{
            "tool": { "driver": driver },
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    })
}

fn descriptor(rule: &RuleMeta) -> Value {
    let full = what_it_does(&rule.docs).unwrap_or_else(|| rule.summary.clone());
    let help_markdown = if rule.docs.trim().is_empty() {
        rule.summary.clone()
    } else {
        rule.docs.clone()
    };
    json!({
        "id": rule.id,
        "name": rule.name,
        "shortDescription": { "text": rule.summary },
        "fullDescription": { "text": full },
        "help": { "text": markdown_to_text(&help_markdown), "markdown": help_markdown },
        "defaultConfiguration": { "level": level(rule.severity) },
        "properties": {
            "tags": ["performance", rule.category.as_str()],
            // Rules stay silent when a value is unknown (DESIGN §1 Step 2): high precision.
            "precision": "high",
            "problem.severity": problem_severity(rule.severity),
        },
    })
}

fn result(
    report: &AnalysisReport,
    finding: &Finding,
    rule_index: usize,
    occurrences: &mut HashMap<(String, u64), usize>,
) -> Value {
    let artifact = artifact_location(&finding.path);
    let line_text = report
        .sources
        .get(&finding.path)
        .and_then(|(text, idx)| idx.line_text(text, finding.line))
        .unwrap_or("");
    let hash = fnv1a(&[
        finding.rule.as_bytes(),
        finding.path.as_bytes(),
        line_text.trim().as_bytes(),
    ]);
    let count = occurrences
        .entry((finding.path.clone(), hash))
        .and_modify(|n| *n += 1)
        .or_insert(1);
    let mut value = json!({
        "ruleId": finding.rule,
        "ruleIndex": rule_index,
        "level": level(finding.severity),
        "message": { "text": finding.message },
        "locations": [{
            "physicalLocation": {
                "artifactLocation": artifact,
                "region": {
                    "startLine": finding.line.max(1),
                    "startColumn": finding.column.max(1),
                    "endLine": finding.end_line.max(finding.line).max(1),
                },
            },
        }],
        "partialFingerprints": { "efficiencyAudit/v1": format!("{hash:016x}:{count}") },
        "properties": {
            "category": finding.category.as_str(),
            "resource": finding.resource.as_str(),
        },
    });
    if let Some(fix) = fix(report, finding) {
        value["fixes"] = json!([fix]);
    }
    value
}

fn fix(report: &AnalysisReport, finding: &Finding) -> Option<Value> {
    let fix = finding.fix.as_ref()?;
    let (text, idx) = report.sources.get(&finding.path)?;
    let replacements: Vec<Value> = fix
        .edits
        .iter()
        .map(|edit| {
            let start = idx.locate(text, edit.start);
            let end = idx.locate(text, edit.end.max(edit.start));
            json!({
                "deletedRegion": {
                    "startLine": start.line,
                    "startColumn": start.column,
                    "endLine": end.line,
                    "endColumn": end.column,
                },
                "insertedContent": { "text": edit.content },
            })
        })
        .collect();
    let description = match fix.applicability {
        Applicability::Safe => "Safe fix: keeps the program's results",
        Applicability::Numerics => {
            "Fix that changes floating-point results: check accuracy before merging"
        }
        Applicability::Manual => "Suggested change: review it by hand before applying",
    };
    Some(json!({
        "description": { "text": description },
        "artifactChanges": [{
            "artifactLocation": artifact_location(&finding.path),
            "replacements": replacements,
        }],
    }))
}

/// SARIF level of a severity: high → `error`, medium → `warning`, low → `note`.
#[must_use]
pub fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::High => "error",
        Severity::Medium => "warning",
        Severity::Low => "note",
    }
}

/// GitHub's `problem.severity` property of a severity: high → `error`, medium → `warning`,
/// low → `recommendation`.
fn problem_severity(severity: Severity) -> &'static str {
    match severity {
        Severity::High => "error",
        Severity::Medium => "warning",
        Severity::Low => "recommendation",
    }
}

/// A relative path becomes a `%SRCROOT%`-relative URI reference (forward slashes,
/// percent-encoded); an absolute one a `file://` URI, since code scanning cannot map it anyway.
fn artifact_location(path: &str) -> Value {
    let forward = path.replace('\\', "/");
    let forward = forward.strip_prefix("./").unwrap_or(&forward);
    let is_windows_abs = forward.as_bytes().get(1) == Some(&b':');
    if forward.starts_with('/') || is_windows_abs {
        let slash = if is_windows_abs { "/" } else { "" };
        json!({ "uri": format!("file://{slash}{}", percent_encode(forward)) })
    } else {
        json!({ "uri": percent_encode(forward), "uriBaseId": "%SRCROOT%" })
    }
}

/// Percent-encodes everything but RFC 3986 unreserved characters, `/` and a drive colon.
fn percent_encode(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for (i, b) in path.bytes().enumerate() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                out.push(char::from(b));
            }
            b':' if i == 1 => out.push(':'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// The `## What it does` section of a rule's docs, as one paragraph of text.
fn what_it_does(docs: &str) -> Option<String> {
    let mut lines = docs.lines().skip_while(|l| l.trim() != "## What it does");
    lines.next()?;
    let body: Vec<&str> = lines
        .take_while(|l| !l.starts_with("## "))
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    (!body.is_empty()).then(|| markdown_to_text(&body.join(" ")))
}

/// Markdown without heading marks and backticks, for SARIF's plain-text fields.
fn markdown_to_text(markdown: &str) -> String {
    markdown
        .lines()
        .map(|l| l.trim_start_matches('#').trim_start().replace('`', ""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// FNV-1a 64 over the parts (with a separator): stable across Rust versions and platforms,
/// unlike `DefaultHasher`, so fingerprints stay the same from run to run.
fn fnv1a(parts: &[&[u8]]) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut hash = OFFSET;
    for part in parts {
        for &b in part.iter().chain(std::iter::once(&0xff)) {
            hash ^= u64::from(b);
            hash = hash.wrapping_mul(PRIME);
        }
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::analysis_json::tests::{TRAIN_PY, sample};

    #[test]
    fn log_has_what_code_scanning_reads() {
        let log = log(&sample());
        assert_eq!(log["version"], "2.1.0");
        assert!(log["$schema"].as_str().unwrap().contains("sarif-2.1.0"));
        let run = &log["runs"][0];
        let driver = &run["tool"]["driver"];
        assert_eq!(driver["name"], "efficiency-audit");
        assert_eq!(driver["version"], "0.0.0-test");
        let rules = driver["rules"].as_array().unwrap();
        assert_eq!(rules.len(), 2);
        for rule in rules {
            for key in [
                "id",
                "name",
                "shortDescription",
                "fullDescription",
                "help",
                "properties",
                "defaultConfiguration",
            ] {
                assert!(rule.get(key).is_some(), "rule lacks {key}: {rule}");
            }
            assert!(rule["help"]["text"].is_string() && rule["help"]["markdown"].is_string());
            assert!(rule["properties"]["tags"].is_array());
            assert_eq!(rule["properties"]["precision"], "high");
        }
        assert_eq!(
            rules[0]["fullDescription"]["text"],
            "Finds DataLoader(...) without num_workers."
        );
        let results = run["results"].as_array().unwrap();
        assert_eq!(results.len(), 2);
        for (i, r) in results.iter().enumerate() {
            let rule_index = r["ruleIndex"].as_u64().unwrap() as usize;
            assert_eq!(rules[rule_index]["id"], r["ruleId"], "result {i}");
            let loc = &r["locations"][0]["physicalLocation"];
            assert_eq!(loc["artifactLocation"]["uri"], "src/train.py");
            assert_eq!(loc["artifactLocation"]["uriBaseId"], "%SRCROOT%");
            assert!(loc["region"]["startLine"].as_u64().unwrap() >= 1);
            assert!(loc["region"]["startColumn"].as_u64().unwrap() >= 1);
            assert!(r["partialFingerprints"].as_object().unwrap().len() == 1);
        }
        assert_eq!(results[0]["level"], "error");
        assert_eq!(results[1]["level"], "warning");
        assert!(results[1].get("fixes").is_none());
    }

    #[test]
    fn fix_offsets_become_line_and_column() {
        let log = log(&sample());
        let replacement =
            &log["runs"][0]["results"][0]["fixes"][0]["artifactChanges"][0]["replacements"][0];
        let region = &replacement["deletedRegion"];
        // Byte 91 is the `)` of `loader = DataLoader(ds, batch_size=32)` on line 4, column 38.
        assert_eq!(TRAIN_PY.lines().nth(3).unwrap().find(')'), Some(37));
        assert_eq!(region["startLine"], 4);
        assert_eq!(region["startColumn"], 38);
        assert_eq!(region["endLine"], 4);
        assert_eq!(region["endColumn"], 38);
        assert_eq!(replacement["insertedContent"]["text"], ", num_workers=8");
    }

    #[test]
    fn fingerprints_are_stable_and_distinct() {
        let a = log(&sample());
        let b = log(&sample());
        let fp = |v: &Value, i: usize| v["runs"][0]["results"][i]["partialFingerprints"].clone();
        assert_eq!(fp(&a, 0), fp(&b, 0));
        assert_ne!(fp(&a, 0), fp(&a, 1));
    }

    #[test]
    fn uris_are_relative_encoded_and_forward_slashed() {
        assert_eq!(
            artifact_location(r".\my dir\a#b.py"),
            json!({"uri": "my%20dir/a%23b.py", "uriBaseId": "%SRCROOT%"})
        );
        assert_eq!(
            artifact_location("/abs/x.py"),
            json!({"uri": "file:///abs/x.py"})
        );
        assert_eq!(
            artifact_location("C:/w/x.py"),
            json!({"uri": "file:///C:/w/x.py"})
        );
    }

    #[test]
    fn unknown_rule_ids_get_a_descriptor() {
        let mut report = sample();
        report.rules.clear();
        let log = log(&report);
        let rules = log["runs"][0]["tool"]["driver"]["rules"]
            .as_array()
            .unwrap();
        assert_eq!(rules.len(), 2);
        assert_eq!(log["runs"][0]["results"][1]["ruleIndex"], 1);
    }

    #[test]
    fn snapshot() {
        insta::assert_snapshot!(render(&sample()).unwrap());
    }
}
