use crate::analysis::model::{Applicability, Edit};

use super::patch::{call_args, find_all, insert_before, set_keywords, statement_of};
use super::{Context, Gain, GpuState, Proposal, Strategy, VariantEdits, at, site, worker_counts};

super::declare_strategy! {
    /// ## What it does
    /// Loads batches in worker processes, pinned and kept alive across epochs: sets
    /// `num_workers` on every `DataLoader` call that has none (or `0`), adds
    /// `persistent_workers=True` where the loader is iterated once per epoch, and adds
    /// `pin_memory=True` when the machine has a CUDA GPU (`torch.cuda.is_available()` when
    /// that is unknown).
    ///
    /// ## Why is it faster?
    /// With `num_workers=0` the main process builds every sample itself, so the model waits
    /// while `Dataset.__getitem__` runs, and the CPU work uses one core. Workers prepare the
    /// next batches in parallel while the step runs; pinned pages make the host→device copy
    /// asynchronous; persistent workers are not re-spawned at every epoch.
    ///
    /// ## Example
    /// ```python
    /// train_loader = DataLoader(train_set, batch_size=64, shuffle=True)
    /// ```
    ///
    /// Use instead:
    /// ```python
    /// train_loader = DataLoader(train_set, batch_size=64, shuffle=True, num_workers=4, persistent_workers=True, pin_memory=True)
    /// ```
    ///
    /// On a machine without a GPU the model also runs on the CPU: the main process's intra-op
    /// threads are capped at the cores the workers leave (`torch.set_num_threads(cores −
    /// workers)`, at least 1), so workers and model do not oversubscribe the cores.
    ///
    /// Variants: `num_workers` ∈ {2, cores/2, cores} of the measured core count.
    ///
    /// ## Safety
    /// Safe for map-style datasets whose items do not depend on shared mutable state. Workers
    /// must be able to pickle the dataset under `spawn`/`forkserver` start methods, which also
    /// need an `if __name__ == "__main__":` guard (scripts without one get no workers, only
    /// pinning); an `IterableDataset` without per-worker
    /// sharding would yield duplicates. Per-worker random streams differ from the main
    /// process's, so augmented samples change (the loss trajectory stays statistically equal).
    ///
    /// ## Expected gain
    /// Up to 2.7x when data-bound (reference ml_rules.md S8: the PyTorch data-loading
    /// tutorial's 2.7x → 3.7x cumulative; third-party 2.48x with 8 workers), ~1.0x when items
    /// are cheap. Bounded by the number of CPUs that can build samples. Without the thread cap,
    /// two workers beside PyTorch's default two intra-op threads on a 2-CPU machine gained
    /// about 1.1x instead of 1.4–1.7x on `examples/torch-train` in tuning runs (BENCHMARKS.md,
    /// Quickstart end to end).
    pub struct ParallelDataLoading {
        id: "parallel-data-loading",
        title: "Parallel, pinned, persistent data loading",
        kind: Basic,
        resource: Cpu,
        targets: [DataloaderWorkers, DataloaderPinMemory, DataloaderPersistent],
    }
}

/// A DataLoader call and what it lacks.
struct Target {
    file: usize,
    /// The call's byte range (to find it again in the tree).
    call: (usize, usize),
    /// Keywords to set whatever the variant (pin, persistent).
    fixed: Vec<(&'static str, String)>,
    /// How `num_workers` is set, when it is.
    workers: Option<WorkersSlot>,
}

enum WorkersSlot {
    /// Keyword absent or literal 0.
    Keyword,
    /// Positional argument 6 is literal `0`: replace those bytes.
    Positional { start: usize, end: usize },
}

impl Strategy for ParallelDataLoading {
    fn meta(&self) -> &'static super::Meta {
        &Self::META
    }

    fn propose(&self, ctx: &Context<'_>) -> Result<Proposal, String> {
        let cores = ctx.machine.cores;
        let counts = worker_counts(cores, 1);
        let mut targets = Vec::new();
        let mut sites = Vec::new();
        let mut reasons = Vec::new();
        let mut applicability: f64 = 0.6;
        for (fi, file) in ctx.files.iter().enumerate() {
            let root = file.tree.root_node();
            for call in find_all(root, |n| n.kind() == "call") {
                let Some(func) = call.child_by_field_name("function") else {
                    continue;
                };
                let is_loader = file.qualified(func).is_some_and(|q| {
                    q == "torch.utils.data.DataLoader"
                        || q == "torch.utils.data.dataloader.DataLoader"
                });
                if !is_loader {
                    continue;
                }
                let args = call_args(call, &file.text);
                if args.splat {
                    continue;
                }
                // DataLoader(dataset, batch_size, shuffle, sampler, batch_sampler, num_workers,
                //            collate_fn, pin_memory, ...)
                let mut missing = Vec::new();
                // Without a main guard, spawn/forkserver workers (macOS, Python ≥ 3.14 on
                // Linux) re-run the script's top level: workers are not added there.
                let guarded = file.has_main_guard();
                let workers = if !guarded {
                    None
                } else if let Some(pos) = args.positional.get(5) {
                    (file.text_of(*pos) == "0").then(|| WorkersSlot::Positional {
                        start: pos.start_byte(),
                        end: pos.end_byte(),
                    })
                } else {
                    match args.keyword("num_workers") {
                        None => Some(WorkersSlot::Keyword),
                        Some(v) if file.text_of(v) == "0" => Some(WorkersSlot::Keyword),
                        // A literal > 0 or an expression: leave it (never guessed).
                        Some(_) => None,
                    }
                };
                let workers_positive = workers.is_some()
                    || args
                        .keyword("num_workers")
                        .and_then(|v| file.text_of(v).parse::<u32>().ok())
                        .is_some_and(|n| n > 0);
                if workers.is_some() {
                    missing.push("no num_workers (loads in the main process)");
                }
                let mut fixed = Vec::new();
                let epoch_fed = iterated_per_epoch(file, call)
                    || !ctx
                        .findings_at(
                            &[crate::analysis::model::Category::DataloaderPersistent],
                            &file.path,
                            call.start_position().row + 1,
                            call.end_position().row + 1,
                        )
                        .is_empty();
                if workers_positive && epoch_fed && args.keyword("persistent_workers").is_none() {
                    missing.push("no persistent_workers (re-spawned every epoch)");
                    fixed.push(("persistent_workers", "True".to_owned()));
                }
                let pinned_positionally = args.positional.len() > 7;
                if args.keyword("pin_memory").is_none() && !pinned_positionally {
                    let value = match &ctx.machine.gpu {
                        GpuState::Present { .. } => Some("True".to_owned()),
                        GpuState::Unknown => file
                            .torch_name()
                            .map(|t| format!("{t}.cuda.is_available()")),
                        GpuState::Absent => None,
                    };
                    if let Some(value) = value {
                        missing.push("no pin_memory");
                        fixed.push(("pin_memory", value));
                    }
                }
                if missing.is_empty() {
                    continue;
                }
                let what = format!(
                    "DataLoader at {} has {}",
                    at(file, call),
                    missing.join(", ")
                );
                sites.push(site(file, call, what.clone()));
                reasons.push(what);
                if !ctx
                    .findings_at(
                        Self::META.targets,
                        &file.path,
                        call.start_position().row + 1,
                        call.end_position().row + 1,
                    )
                    .is_empty()
                {
                    applicability = applicability.max(0.9);
                }
                targets.push(Target {
                    file: fi,
                    call: (call.start_byte(), call.end_byte()),
                    fixed,
                    workers,
                });
            }
            if targets.iter().any(|t| t.file == fi) {
                // Real per-item work in a Dataset of this file makes the loader the bottleneck.
                let heavy = find_all(root, |n| n.kind() == "function_definition")
                    .into_iter()
                    .any(|f| {
                        f.child_by_field_name("name")
                            .is_some_and(|n| file.text_of(n) == "__getitem__")
                            && !find_all(f, |n| {
                                matches!(
                                    n.kind(),
                                    "for_statement" | "while_statement" | "list_comprehension"
                                )
                            })
                            .is_empty()
                    });
                if heavy {
                    applicability = applicability.max(0.9);
                    reasons.push(format!(
                        "{}: `__getitem__` loops per item: CPU work the main process does serially",
                        file.path
                    ));
                }
                if !file.has_main_guard() {
                    reasons.push(format!(
                        "{}: num_workers left alone: without an `if __name__ == \"__main__\":` guard, spawn/forkserver workers re-run the script",
                        file.path
                    ));
                }
            }
        }
        if targets.is_empty() {
            return Err("no DataLoader call lacks workers, persistence or pinning".to_owned());
        }
        let any_workers = targets.iter().any(|t| t.workers.is_some());
        let mut variants = Vec::new();
        let names: Vec<Option<usize>> = if any_workers {
            counts.iter().map(|n| Some(*n)).collect()
        } else {
            vec![None]
        };
        for n in names {
            let mut files: Vec<(usize, Vec<Edit>)> = Vec::new();
            let mut capped: Vec<usize> = Vec::new();
            for t in &targets {
                let file = &ctx.files[t.file];
                let Some(call) = find_all(file.tree.root_node(), |c| {
                    c.kind() == "call" && (c.start_byte(), c.end_byte()) == t.call
                })
                .into_iter()
                .next() else {
                    continue;
                };
                let mut edits = Vec::new();
                let mut pairs: Vec<(&str, String)> = Vec::new();
                match (n, &t.workers) {
                    (Some(n), Some(WorkersSlot::Positional { start, end })) => edits.push(Edit {
                        start: *start,
                        end: *end,
                        content: n.to_string(),
                    }),
                    (Some(n), Some(WorkersSlot::Keyword)) => {
                        pairs.push(("num_workers", n.to_string()))
                    }
                    _ => {}
                }
                pairs.extend(t.fixed.iter().map(|(k, v)| (*k, v.clone())));
                let borrowed: Vec<(&str, &str)> =
                    pairs.iter().map(|(k, v)| (*k, v.as_str())).collect();
                edits.extend(set_keywords(call, &file.text, &borrowed));
                // Ex) train_loader = DataLoader(ds, num_workers=2)  on 2 CPUs without a GPU
                //  => torch.set_num_threads(1) on the line before
                if let (Some(n), Some(_), GpuState::Absent) = (n, &t.workers, &ctx.machine.gpu)
                    && !capped.contains(&t.file)
                    && let Some(torch) = file.torch_name()
                    && !file.text.contains("set_num_threads(")
                    && let Some(stmt) = statement_of(call)
                {
                    capped.push(t.file);
                    let threads = cores.saturating_sub(n).max(1);
                    edits.push(insert_before(
                        &file.text,
                        stmt,
                        &[format!(
                            "{torch}.set_num_threads({threads})  # the model shares the CPUs with {n} loader worker(s)"
                        )],
                    ));
                }
                files.push((t.file, edits));
            }
            variants.push(VariantEdits {
                name: n.map(|n| format!("workers-{n}")),
                files,
            });
        }
        let upper = 2.7_f64.min(cores as f64).max(1.0);
        let expected = if cores >= 2 {
            1.0 + (upper - 1.0) * 0.6
        } else {
            1.0
        };
        if cores < 2 {
            applicability *= 0.3;
            reasons.push("one CPU: workers cannot run beside the training loop".to_owned());
        }
        reasons.push(format!(
            "{}: worker counts {:?}",
            ctx.machine.cores_source, counts
        ));
        Ok(Proposal {
            sites,
            applicability,
            reasons,
            gain: Gain {
                expected,
                upper,
                source: "ml_rules.md S8 (PyTorch data-loading tutorial: 2.7x when data-bound), 60 % of the bound expected [est]".to_owned(),
                bound: Some(format!("≤ {cores} CPUs building samples ({})", ctx.machine.cores_source)),
            },
            safety: Applicability::Safe,
            variants,
        })
    }
}

/// Whether the loader a call builds is iterated inside another loop (an epoch loop), where
/// persistent workers save a re-spawn per epoch.
/// Ex) loader = DataLoader(...)
///     for epoch in range(n):
///         for batch in loader: ...
fn iterated_per_epoch(file: &super::Parsed, call: tree_sitter::Node<'_>) -> bool {
    let Some(assign) = call.parent().filter(|p| p.kind() == "assignment") else {
        return false;
    };
    let Some(name) = assign
        .child_by_field_name("left")
        .filter(|l| l.kind() == "identifier")
        .map(|l| file.text_of(l))
    else {
        return false;
    };
    find_all(file.tree.root_node(), |n| n.kind() == "for_statement")
        .into_iter()
        .any(|l| {
            let iterates = l.child_by_field_name("right").is_some_and(|r| {
                file.text_of(r) == name
                    || (r.kind() == "call"
                        && call_args(r, &file.text)
                            .positional
                            .first()
                            .is_some_and(|a| file.text_of(*a) == name))
            });
            iterates && super::patch::ancestor(l, &["for_statement", "while_statement"]).is_some()
        })
}
