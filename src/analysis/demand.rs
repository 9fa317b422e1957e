//! The demand model (DESIGN §1 Step 2): per hot loop and resource, an upper bound on saturation
//! with its one-line reason, combined with the ceilings of `theoretical_limits.yaml`.
//!
//! - CPU ≤ processes doing the work / logical CPUs (a main-process loader on 16 CPUs → ≤ 6 %).
//! - GPU ≤ rate of the precision in use / best tensor rate of the GPU (fp32 without TF32 on an
//!   H100 → ≤ 7 %), with the idle sources (host syncs, main-process loading) named.
//! - IO ≤ QD1 bandwidth / best bandwidth, for serial readers.
//!
//! Unknown stays unknown: `value: None` with the reason.

use serde::Serialize;

use super::facts::{Device, Model, Val};
use super::model::{CodeKind, Demand, Estimate, HotLoop, Saturation, Stage, StageKind};
use crate::ceilings::model::{Ceilings, GpuFigure, TableValue};

/// What the demand model needs to know about one hot loop.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoopProfile {
    /// 1-based line of the loop.
    pub line: usize,
    /// What the loop does.
    pub kind: CodeKind,
    /// `num_workers` of the DataLoader it iterates (`absent` = 0); `None` when it iterates none.
    pub workers: Option<Val>,
    /// The file uses CUDA.
    pub cuda: bool,
    /// The loop runs torch on the CPU device (intra-op threads: CPU not estimated).
    pub cpu_device: bool,
    /// `fp32`, `tf32` or `fp16_bf16`.
    pub precision: &'static str,
    /// Unguarded host-device synchronisations per iteration.
    pub host_syncs: usize,
    /// Reads files in the loop body (or its Dataset does, in the main process).
    pub reads_files: bool,
    /// A serial Python loop (per record), not parallelised.
    pub serial: bool,
}

const SYNC_METHODS: &[&str] = &["item", "cpu", "numpy", "tolist", "synchronize"];
const READS: &[&str] = &[
    "open",
    "load",
    "imread",
    "read_csv",
    "read_parquet",
    "read_json",
    "read_image",
    "loadtxt",
];

pub(crate) fn hot_loops(m: &Model<'_>, path: &str) -> (Vec<HotLoop>, Vec<LoopProfile>) {
    let mut loops = Vec::new();
    let mut profiles = Vec::new();
    let precision = if m.facts.precision.autocast || m.facts.precision.half {
        "fp16_bf16"
    } else if m.facts.precision.tf32 {
        "tf32"
    } else {
        "fp32"
    };
    let getitem_reads = m
        .calls
        .iter()
        .any(|c| c.ctx.getitem && READS.contains(&m.last_name(c)));
    for l in &m.loops {
        let step = l.info.step;
        let record = !step && super::resolve::is_record_loop(m, l);
        if !(step || record) {
            continue;
        }
        // only the outermost loop of its kind
        let mut p = l.parent;
        let mut nested = false;
        while let Some(pi) = p {
            let Some(pl) = m.loops.get(pi as usize) else {
                break;
            };
            if pl.info.step || (!step && super::resolve::is_record_loop(m, pl)) {
                nested = true;
                break;
            }
            p = pl.parent;
        }
        if nested || (record && l.parent.is_some_and(|p| super::rules::step_ctx_loop(m, p))) {
            continue;
        }
        let mut stages = Vec::new();
        let mut workers = None;
        if let Some(var) = &l.info.iterates_loader {
            let lf = m
                .facts
                .loaders
                .iter()
                .find(|f| f.var.as_deref() == Some(var.as_str()));
            if let Some(lf) = lf {
                workers = Some(lf.num_workers.clone());
                stages.push(Stage {
                    kind: StageKind::DataSource,
                    detail: "Dataset".to_string(),
                    line: Some(lf.line),
                });
                stages.push(Stage {
                    kind: StageKind::Loader,
                    detail: format!(
                        "DataLoader(num_workers={}, pin_memory={})",
                        show(&lf.num_workers, "0"),
                        show(&lf.pin_memory, "False")
                    ),
                    line: Some(lf.line),
                });
            } else {
                workers = Some(Val::Unknown);
                stages.push(Stage {
                    kind: StageKind::Loader,
                    detail: format!("{var} (loader defined elsewhere)"),
                    line: Some(l.line),
                });
            }
        } else {
            stages.push(Stage {
                kind: StageKind::DataSource,
                detail: m
                    .text(l.iter.unwrap_or_default())
                    .chars()
                    .take(60)
                    .collect(),
                line: Some(l.line),
            });
            stages.push(Stage {
                kind: StageKind::Loader,
                detail: "Python loop in the main process".to_string(),
                line: Some(l.line),
            });
        }
        let mut syncs = 0;
        let mut reads = false;
        let mut h2d = None;
        let mut compute = None;
        let first = m.calls.partition_point(|c| c.span.start < l.span.start);
        for c in m.calls.get(first..).unwrap_or(&[]) {
            if c.span.start >= l.span.end {
                break;
            }
            if c.ctx.loop_.is_none() || !l.span.contains(c.span) || m.dead(&c.ctx) {
                continue;
            }
            let last = m.last_name(c);
            if c.method.is_some() && SYNC_METHODS.contains(&last) && !c.ctx.mod_guard {
                syncs += 1;
                stages.push(Stage {
                    kind: StageKind::SyncPoint,
                    detail: format!(".{last}()"),
                    line: Some(c.line),
                });
            }
            if READS.contains(&last) && last != "load" || (last == "load" && c.method.is_some()) {
                reads = true;
            }
            if h2d.is_none() && c.method.is_some() && matches!(last, "to" | "cuda") {
                h2d = Some(c.line);
            }
            if compute.is_none() && super::resolve::runs_model(m, c) {
                compute = Some(c.line);
            }
        }
        if let Some(line) = h2d {
            stages.insert(
                stages
                    .iter()
                    .position(|s| s.kind == StageKind::SyncPoint)
                    .unwrap_or(stages.len()),
                Stage {
                    kind: StageKind::HostToDevice,
                    detail: "batch copied to the device".to_string(),
                    line: Some(line),
                },
            );
        }
        stages.insert(
            stages
                .iter()
                .position(|s| s.kind == StageKind::SyncPoint)
                .unwrap_or(stages.len()),
            Stage {
                kind: StageKind::Compute,
                detail: if compute.is_some() {
                    "model forward".to_string()
                } else {
                    "loop body".to_string()
                },
                line: compute.or(Some(l.line)),
            },
        );
        let workers_zero = workers
            .as_ref()
            .is_some_and(|w| matches!(w, Val::Absent) || w.int() == Some(0));
        let kind = if l.info.train {
            CodeKind::Train
        } else if step {
            CodeKind::Infer
        } else {
            CodeKind::Data
        };
        profiles.push(LoopProfile {
            line: l.line,
            kind,
            workers,
            cuda: m.facts.device == Device::Cuda,
            cpu_device: m.facts.device == Device::Cpu && step,
            precision,
            host_syncs: syncs,
            reads_files: reads || (workers_zero && getitem_reads),
            serial: record && !m.parallel_lib,
        });
        loops.push(HotLoop {
            path: path.to_string(),
            line: l.line,
            end_line: l.end_line,
            function: l
                .ctx
                .func
                .and_then(|f| m.funcs.get(f as usize))
                .map(|f| m.text(f.name).to_string()),
            kind,
            stages,
            saturation: unknown_saturation("not estimated yet: run estimate_demand"),
        });
    }
    (loops, profiles)
}

fn show(v: &Val, absent: &str) -> String {
    match v {
        Val::Absent => format!("{absent} (default)"),
        Val::Int(i) => i.to_string(),
        Val::Bool(b) => if *b { "True" } else { "False" }.to_string(),
        Val::Str(s) => s.clone(),
        Val::None => "None".to_string(),
        Val::Unknown => "unknown".to_string(),
    }
}

fn unknown(reason: &str) -> Estimate {
    Estimate {
        value: None,
        reason: reason.to_string(),
    }
}

fn unknown_saturation(reason: &str) -> Saturation {
    Saturation {
        gpu: unknown(reason),
        cpu: unknown(reason),
        io: unknown(reason),
    }
}

fn pct(v: f64) -> String {
    format!("{:.0} %", (v * 100.0).round())
}

fn gpu_figure(f: &GpuFigure) -> Option<f64> {
    f.measured
        .or(match &f.datasheet {
            Some(TableValue::Value(v)) => Some(*v),
            _ => None,
        })
        .or(f.theoretical_nvml)
        .filter(|v| v.is_finite() && *v > 0.0)
}

/// Per-resource estimate of one loop.
#[must_use]
pub fn estimate_loop(
    p: &LoopProfile,
    ceilings: Option<&Ceilings>,
    logical_cpus: usize,
) -> Saturation {
    let cpus = ceilings
        .map_or(logical_cpus, |c| c.host.logical_cpus)
        .max(1);
    let cpu = if p.cpu_device {
        unknown(
            "torch on the CPU device uses intra-op threads: CPU saturation not estimated statically",
        )
    } else {
        let procs = match (&p.workers, p.serial) {
            (Some(w), _) if matches!(w, Val::Absent) || w.int() == Some(0) => {
                Some((1usize, "main-process loader"))
            }
            (Some(w), _) => w.int().map(|n| {
                (
                    usize::try_from(n).unwrap_or(0) + 1,
                    "loader workers + main process",
                )
            }),
            (None, true) => Some((1, "serial Python loop")),
            (None, false) => Some((1, "Python loop in one process")),
        };
        match procs {
            Some((n, why)) => {
                let v = (n as f64 / cpus as f64).min(1.0);
                Estimate {
                    value: Some(v),
                    reason: format!("{why}: {n} of {cpus} CPUs → ≤ {}", pct(v)),
                }
            }
            None => unknown("num_workers is not a known constant"),
        }
    };
    let gpu = if !p.cuda {
        unknown("the code does not use CUDA")
    } else {
        match ceilings.and_then(|c| c.gpus.first()) {
            None => unknown("no GPU ceilings (--ceilings with a GPU) given"),
            Some(g) => {
                let fp32 = gpu_figure(&g.fp32_tflops);
                let tf32 = gpu_figure(&g.tf32_tflops);
                let half = gpu_figure(&g.fp16_bf16_tflops);
                let best = [fp32, tf32, half]
                    .into_iter()
                    .flatten()
                    .fold(None, |a: Option<f64>, b| Some(a.map_or(b, |a| a.max(b))));
                let rate = match p.precision {
                    "fp16_bf16" => half,
                    "tf32" => tf32,
                    _ => fp32,
                };
                match (rate, best) {
                    (Some(r), Some(b)) => {
                        let v = (r / b).min(1.0);
                        let mut idle = Vec::new();
                        if p.host_syncs > 0 {
                            idle.push(format!("{} host sync(s) per step", p.host_syncs));
                        }
                        if p.workers
                            .as_ref()
                            .is_some_and(|w| matches!(w, Val::Absent) || w.int() == Some(0))
                        {
                            idle.push("main-process loading".to_string());
                        }
                        let idle = if idle.is_empty() {
                            String::new()
                        } else {
                            format!("; idle while: {}", idle.join(", "))
                        };
                        Estimate {
                            value: Some(v),
                            reason: format!(
                                "{} at {r:.0} of {b:.0} TFLOP/s on {} → ≤ {}{idle}",
                                p.precision,
                                g.name,
                                pct(v)
                            ),
                        }
                    }
                    _ => unknown("the GPU ceilings lack the tensor rates"),
                }
            }
        }
    };
    let io = if !p.reads_files {
        unknown("no file reads in the loop")
    } else {
        let disk = ceilings.map(|c| &c.disk.read_mbs);
        match disk {
            None => unknown("no disk ceilings (--ceilings) given"),
            Some(d) => match (d.qd1.as_ref(), d.qd4.as_ref()) {
                (Some(q1), q4) => {
                    let best = q4.map_or(q1.median, |q| q.median.max(q1.median));
                    if best > 0.0 {
                        let v = (q1.median / best).min(1.0);
                        Estimate {
                            value: Some(v),
                            reason: format!(
                                "serial reader: QD1 {:.0} of {best:.0} MB/s → ≤ {}",
                                q1.median,
                                pct(v)
                            ),
                        }
                    } else {
                        unknown("disk ceilings are zero")
                    }
                }
                _ => unknown("the disk ceilings lack a QD1 figure"),
            },
        }
    };
    Saturation { gpu, cpu, io }
}

fn max_estimate<'a>(it: impl Iterator<Item = &'a Estimate>, none: &str) -> Estimate {
    let mut best: Option<&Estimate> = None;
    let mut first_unknown: Option<&Estimate> = None;
    for e in it {
        match (e.value, best.and_then(|b| b.value)) {
            (Some(v), Some(b)) if v > b => best = Some(e),
            (Some(_), None) => best = Some(e),
            (None, _) if first_unknown.is_none() => first_unknown = Some(e),
            _ => {}
        }
    }
    best.or(first_unknown)
        .cloned()
        .unwrap_or_else(|| unknown(none))
}

/// Combines the hot loops of all files with the ceilings (or, without them, `logical_cpus` and a
/// note) into per-loop and overall saturation (the best any loop can reach, per resource).
#[must_use]
pub fn estimate_demand(
    files: &[super::FileAnalysis],
    ceilings: Option<&Ceilings>,
    logical_cpus: usize,
) -> Demand {
    let mut notes = Vec::new();
    match ceilings {
        Some(c) => notes.push(format!(
            "ceilings measured at {} on {} ({} logical CPUs, {} GPU(s))",
            c.measured_at,
            c.host.cpu_brand,
            c.host.logical_cpus,
            c.gpus.len()
        )),
        None => notes.push(format!(
            "no --ceilings given: using this machine's {} logical CPUs; GPU and IO not estimated",
            logical_cpus.max(1)
        )),
    }
    let mut loops = Vec::new();
    for f in files {
        for (hl, p) in f.hot_loops.iter().zip(&f.facts.hot) {
            let mut hl = hl.clone();
            hl.saturation = estimate_loop(p, ceilings, logical_cpus);
            loops.push(hl);
        }
    }
    if loops.is_empty() {
        notes.push("no hot loop found: nothing to estimate".to_string());
    }
    let saturation = Saturation {
        gpu: max_estimate(loops.iter().map(|l| &l.saturation.gpu), "no hot loop"),
        cpu: max_estimate(loops.iter().map(|l| &l.saturation.cpu), "no hot loop"),
        io: max_estimate(loops.iter().map(|l| &l.saturation.io), "no hot loop"),
    };
    Demand {
        loops,
        saturation,
        notes,
    }
}
