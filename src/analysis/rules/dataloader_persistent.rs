use crate::analysis::facts::NodeKind;
use crate::analysis::fix::enable_switch;
use crate::analysis::model::{Applicability, Fix};
use crate::analysis::resolve::{switch_off_as_written, workers_at_least};
use crate::analysis::rule::{Checker, Rule, RuleMeta};
use crate::declare_rule;

declare_rule! {
    /// ## What it does
    /// Flags a `DataLoader` with `num_workers > 0` as shipped (a constant, or a floor such as
    /// `min(os.cpu_count(), 8)` or `int(cpu_count() * 0.7)`, taking a GPU machine's cores as at
    /// least two; also a parameter of the loader's function that its one call fills with
    /// such, `get_loaders(ds, 64, cpu_count() // 2)`) and no `persistent_workers` (or `persistent_workers=False` written in the call), when it
    /// is iterated once per epoch (in an epoch loop, also through the name a phase chooses it
    /// by, `dataloader = trainloader if phase == 'train' else testloader`, or a dict of loaders
    /// read by phase, `dataloaders = {'train': train_loader, 'val': val_loader}` or
    /// `loaders[phase] = DataLoader(...)`, also built by a comprehension and handed to a function
    /// of the file, `train_model(model, {x: DataLoader(...) for x in ['train', 'val']}, ...)`,
    /// then `for x in dataloaders[phase]` with the phase
    /// among those an enclosing loop names, or those the calls of the loop's function pass,
    /// `run_epoch('train')`: an entry no per-epoch read names, `dataloaders['test']` read once
    /// after training, is not reported; returned by a function of the file, bound first or
    /// returned as built, `return DataLoader(ds_tr, ...), DataLoader(ds_te, ...)`, under the
    /// names its callers bind; passed to a
    /// per-epoch function (also read a few calls deep, `test_and_save(epoch)` calling
    /// `output_img(dir)`, whose loop reads the loader), also handed on from a function's epoch loop, `for epoch in ...:
    /// process_samples(model, loader, ...)`; kept by an object of a class of the file and
    /// iterated in its per-epoch method, `Trainer(train_loader=train_loader)` then `for b in
    /// tqdm(self.train_loader)`; given to an Ignite engine's `trainer.run(loader, epochs)` for
    /// several epochs, or to an evaluator a handler of each completed epoch runs,
    /// `@trainer.on(Events.EPOCH_COMPLETED)` ... `evaluator.run(val_loader)`; given to a Lightning `Trainer.fit`, or returned by a Lightning
    /// module's `train_dataloader` / `val_dataloader` hook, also bound first (`loader =
    /// DataLoader(...)` ... `return loader`), in a file whose trainer fits (its
    /// `test_dataloader` serves `trainer.test` once); or restarted in a loop each
    /// time its iterator runs out, `it = iter(loader)` in a step loop, also every `epoch_size`
    /// steps). An epoch loop over `range(1)` (or `range(1, n + 1)` with `n = 1`) runs once and restarts
    /// nothing; one over `range(args.epoch)` with `default=-1` runs none. Not reported for a loader over indices (`DataLoader(range(n),
    /// batch_size)`: its batches are integers), nor for a loader built anew for each pass (inside
    /// the epoch loop, or in a function it calls): it has no workers to keep; one built per
    /// cross-validation fold and read by the fold's own epoch loop is reported (also built by a
    /// function of the file the fold calls, `train_loader, val_loader = get_loaders(...)`, or
    /// handed each epoch to a function that reads it, `train(trainloader, model, ...)`, or to a
    /// training pass of an object of another module built with the optimizer,
    /// `trainer.Train_Epoch(train_loader)`). Nor when an epoch
    /// loop calls a method of the loader's dataset (`train_loader.dataset.ng_sample()`, also in
    /// a function the epoch loop hands the loader to: `loader.dataset.load_next_buffer()`, or
    /// in a function each epoch runs, some calls deep, on the dataset's name: `train(epoch)`
    /// calling `reset_input_size()`, which calls `train_dataset.reset_resize_shape(size)`):
    /// persistent workers would keep serving the samples they forked with.
    ///
    /// Reported on the line where the `DataLoader(` call starts.
    ///
    /// ## Why is this slow?
    /// Without `persistent_workers=True`, every epoch shuts the worker processes down and starts
    /// new ones: each re-imports its modules and re-runs the dataset's `__init__` while the GPU
    /// waits (PyTorch tuning guide: ~1.3x with many short epochs).
    ///
    /// ## Example
    /// ```python
    /// from torch.utils.data import DataLoader
    ///
    /// loader = DataLoader(dataset, batch_size=64, num_workers=4)
    /// for epoch in range(10):
    ///     for x, y in loader:
    ///         loss = model(x).sum()
    ///         loss.backward()
    /// ```
    ///
    /// Use instead:
    /// ```python
    /// from torch.utils.data import DataLoader
    ///
    /// loader = DataLoader(dataset, batch_size=64, num_workers=4, persistent_workers=True)
    /// for epoch in range(10):
    ///     for x, y in loader:
    ///         loss = model(x).sum()
    ///         loss.backward()
    /// ```
    ///
    /// ## Fix safety
    /// `safe`: adds `persistent_workers=True` (or turns a literal `False` into `True`). Workers then keep their copy of the dataset, so
    /// dataset state changed between epochs (curriculum, a custom `set_epoch`) is not seen.
    pub(crate) struct DataloaderPersistent {
        id: "EA103",
        name: "dataloader-workers-not-persistent",
        category: DataloaderPersistent,
        resource: Cpu,
        severity: Low,
    }
}

impl Rule for DataloaderPersistent {
    fn meta(&self) -> &'static RuleMeta {
        &Self::META
    }

    // also outside hot loops: a DataLoader call
    fn triggers(&self) -> crate::analysis::prefilter::Triggers {
        use crate::analysis::prefilter::{Context, Triggers, t};
        Triggers::EngineOr(
            const { &[t::contains("dataloader", Context::Called), t::code("torch")] },
        )
    }

    fn check(&self, cx: &mut Checker<'_>) {
        let m = cx.m;
        // (Lightning's: a `Trainer` of the repository's own code may fit once)
        let lightning_fit = super::lightning_fit(m).is_some();
        for (ci, c) in m.calls.iter().enumerate() {
            if !super::live_loader(m, c)
                || super::index_loader(m, c)
                || super::device_resident_dataset(m, c)
                || super::loader_read_once(m, c)
            {
                continue;
            }
            if workers_at_least(m, c).is_none_or(|n| n <= 0)
                || !switch_off_as_written(m, c, "persistent_workers", usize::MAX)
            {
                continue;
            }
            // (the assignment of the call, when it is bound: to a name, or by key)
            let bound = m.assigns.iter().find(|a| a.rhs_call == Some(ci as u32));
            let var = bound
                .filter(|a| a.targets.len() == 1)
                .map(|a| m.text(a.left));
            // `loaders = {x: DataLoader(...) for x in ["train", "val"]}`, or `loaders[phase] =
            // DataLoader(...)`: iterated as `loaders[x]`
            let container = super::loader_container(m, ci, c)
                .or_else(|| bound.and_then(|a| subscript_target(m, a)));
            let iterated_per_epoch = |v: &str| {
                m.loops
                    .iter()
                    .any(|l| l.info.iterates_loader.as_deref() == Some(v) && loop_per_epoch(m, l))
                    || handed_to_epoch_loop(m, v)
                    || restarted_in_loop(m, v)
                    || ignite_runs_per_epoch(m, v)
                    // (handed to a call made once per epoch: in the epoch loop, or at the top
                    // of a function it calls, `def train_epoch(self): pbar =
                    // tqdm(self.train_loader)`)
                    || m.calls.iter().any(|o| {
                        m.call_args(o).iter().any(|a| m.text(a.value) == v)
                            && (in_epoch(m, o.ctx.loop_)
                                || (o.ctx.loop_.is_none() && called_per_epoch(m, o.ctx.func)))
                    })
                    || (lightning_fit
                        && m.calls.iter().any(|o| {
                            m.last_name(o) == "fit"
                                && m.call_args(o).iter().any(|a| m.text(a.value) == v)
                        }))
            };
            // `def train_dataloader(self): return DataLoader(...)` in a Lightning module (also
            // bound first, `loader = DataLoader(...)` ... `return loader`): `trainer.fit`
            // iterates it every epoch
            let fit_hook = lightning_fit
                && matches!(
                    super::lightning_loader_hook(m, c),
                    Some("train_dataloader" | "val_dataloader")
                );
            let per_epoch = fit_hook
                || match var {
                    // (or where a function that builds and returns it hands it: `tr_loader,
                    // va_loader = build_loaders(...)`; or a name a phase chooses it by:
                    // `dataloader = trainloader if phase == 'train' else testloader`)
                    Some(v) => {
                        iterated_per_epoch(v)
                            || super::returned_to(m, v, c.ctx.func)
                                .into_iter()
                                .any(iterated_per_epoch)
                            || chosen_as(m, v).any(iterated_per_epoch)
                            || stored_in_object(m, v).into_iter().any(iterated_per_epoch)
                            || dicts_holding(m, v).any(|(d, key)| {
                                super::container_loops(m, d)
                                    .any(|l| loop_per_epoch(m, l) && super::reads_key(m, l, key))
                            })
                    }
                    // (an entry of a dict written out counts only where a per-epoch read may name
                    // its key)
                    // (also through the parameter of a function of the file it is handed to:
                    // `train_model(model, dataloaders_dict, ...)` iterating
                    // `dataloaders[phase]` each epoch)
                    None if container.is_some() => container.is_some_and(|v| {
                        let key = super::entry_key(m, c);
                        let read_per_epoch = |name: &str, func: Option<u32>| {
                            super::container_loops(m, name).any(|l| {
                                (func.is_none() || l.ctx.func == func)
                                    && loop_per_epoch(m, l)
                                    && key.is_none_or(|k| super::reads_key(m, l, k))
                            })
                        };
                        read_per_epoch(v, None)
                            || m.calls.iter().any(|o| {
                                handed_param(m, o, v)
                                    .is_some_and(|(fi, p)| read_per_epoch(p, Some(fi)))
                            })
                    }),
                    // (or returned as it is built: `return DataLoader(ds_tr, ...), ...` and
                    // `tr_l, te_l, classes = get_data_loaders(...)`)
                    None => {
                        fit_hook
                            || super::call_returned_to(m, c)
                                .into_iter()
                                .any(iterated_per_epoch)
                    }
                };
            // a loader built anew for each pass (`def validate(): loader = DataLoader(...)`
            // called every epoch) has no workers to keep between passes
            if !per_epoch
                || (built_per_epoch(m, c) && !var.is_some_and(|v| epochs_inside(m, c, v)))
                || dataset_changes_per_epoch(m, c, var)
            {
                continue;
            }
            let fix = enable_switch(m, c, "persistent_workers", usize::MAX).map(|e| Fix {
                applicability: Applicability::Safe,
                edits: vec![e],
            });
            cx.at_call(
                &Self::META,
                c,
                "DataLoader workers are restarted every epoch: add `persistent_workers=True`"
                    .to_string(),
                fix,
            );
        }
    }
}

/// The dicts written out with loader `v` as an entry (`dataloaders = {'train': train_loader,
/// 'val': val_loader}`), read as `dataloaders[phase]`, with the entry's key as written.
fn dicts_holding<'s>(
    m: &crate::analysis::facts::Model<'s>,
    v: &str,
) -> impl Iterator<Item = (&'s str, &'s str)> {
    m.assigns.iter().filter_map(move |a| {
        let n = m.node(a.value).filter(|n| n.node_kind() == "dictionary")?;
        if a.targets.len() != 1 {
            return None;
        }
        let mut cur = n.walk();
        let pair = n.named_children(&mut cur).find(|p| {
            p.node_kind() == "pair"
                && p.child_by_field_name("value")
                    .is_some_and(|x| m.node_text(x) == v)
        })?;
        Some((
            m.text(a.left),
            m.node_text(pair.child_by_field_name("key")?),
        ))
    })
}

/// The dict assignment `a` stores into by key (`dataloaders[phase] = DataLoader(...)`).
fn subscript_target<'s>(
    m: &crate::analysis::facts::Model<'s>,
    a: &crate::analysis::facts::Assign,
) -> Option<&'s str> {
    let left = m.node(a.left).filter(|l| l.node_kind() == "subscript")?;
    let object = left.child_by_field_name("value")?;
    (object.node_kind() == "identifier").then(|| m.node_text(object))
}

/// The names a conditional expression binds to loader `v` or another
/// (`dataloader = trainloader if phase == 'train' else testloader`).
fn chosen_as<'s>(m: &crate::analysis::facts::Model<'s>, v: &str) -> impl Iterator<Item = &'s str> {
    m.assigns.iter().filter_map(move |a| {
        let n = m.node(a.value)?;
        let chosen = a.targets.len() == 1
            && n.node_kind() == "conditional_expression"
            && [n.named_child(0), n.named_child(2)]
                .into_iter()
                .flatten()
                .any(|b| m.node_text(b) == v);
        chosen.then(|| m.text(a.left))
    })
}

/// Does loop `l` run once per epoch: inside an epoch loop, or at the top of a function that an
/// epoch loop calls (`for epoch in ...: train(epoch)` with `train` iterating a global loader)?
fn loop_per_epoch(m: &crate::analysis::facts::Model<'_>, l: &crate::analysis::facts::Loop) -> bool {
    if in_epoch(m, l.parent) {
        return true;
    }
    let mut top = l;
    for _ in 0..256 {
        match top.parent.and_then(|p| m.loops.get(p as usize)) {
            Some(p) => top = p,
            None => break,
        }
    }
    called_per_epoch(m, top.ctx.func)
}

/// Is the loader named `v` handed to a function of the file (`train(train_loader, model)`)
/// whose own epoch loop iterates that parameter (`for epoch in ...: for x in loader:`), or hands
/// it on from its epoch loop (`for epoch in ...: process_samples(args, model, loader, ...)`)?
fn handed_to_epoch_loop(m: &crate::analysis::facts::Model<'_>, v: &str) -> bool {
    m.calls.iter().any(|o| {
        handed_param(m, o, v).is_some_and(|(fi, p)| {
            // (the parameter need not be named like a loader: `for x in enumerate(trainingData)`)
            m.loops.iter().any(|l| {
                l.ctx.func == Some(fi)
                    && l.info.step
                    && l.iter
                        .is_some_and(|it| super::words(m.text(it)).any(|w| w == p))
                    && in_epoch(m, l.parent)
            }) || m.calls.iter().any(|inner| {
                inner.ctx.func == Some(fi)
                    && m.call_args(inner).iter().any(|a| m.text(a.value) == p)
                    && in_epoch(m, inner.ctx.loop_)
            })
        })
    })
}

/// Where call `o` hands `v` to a function of the file (`train(model, train_loader)`): the
/// function's index and the name of the parameter that receives it.
fn handed_param<'m>(
    m: &'m crate::analysis::facts::Model<'_>,
    o: &crate::analysis::facts::Call,
    v: &str,
) -> Option<(u32, &'m str)> {
    if o.method.is_some() {
        return None;
    }
    let name = m.text(o.func);
    let fi = m.plain_fn(name)?;
    let f = m.funcs.get(fi)?;
    let args = m.call_args(o);
    let param = args.iter().enumerate().find_map(|(i, a)| {
        (m.text(a.value) == v).then(|| match a.name {
            Some(n) => Some(m.text(n)),
            None => f.params.get(i).map(|(p, _)| m.text(*p)),
        })?
    })?;
    Some((u32::try_from(fi).ok()?, param))
}

/// Does an Ignite engine iterate loader `v` once per epoch: the trainer run for several epochs,
/// `trainer.run(loader, epochs)` (not a known single one: `run(loader)` alone runs one), or an
/// evaluator run by a handler of each completed epoch (`@trainer.on(Events.EPOCH_COMPLETED)`
/// ... `evaluator.run(val_loader)`)?
// Ex) trainer.run(train_loader, EPOCHS); @trainer.on(Events.EPOCH_COMPLETED) def log_epoch(engine): evaluator.run(val_loader)
fn ignite_runs_per_epoch(m: &crate::analysis::facts::Model<'_>, v: &str) -> bool {
    if !m.imports.values().any(|q| q.starts_with("ignite")) {
        return false;
    }
    let runs = || {
        m.calls
            .iter()
            .filter(|c| c.method.is_some() && m.last_name(c) == "run" && !m.dead(&c.ctx))
    };
    // (a run given several epochs, or a number the engine cannot read)
    let several_epochs = |c: &crate::analysis::facts::Call| {
        m.kw(c, "max_epochs")
            .or_else(|| m.pos(c, 1))
            .is_some_and(|e| {
                !matches!(
                    m.resolve(&e, c.span.start, c.ctx.func),
                    crate::analysis::facts::Val::Int(n) if n <= 1
                )
            })
    };
    let trainer_epochs = runs().any(several_epochs);
    runs().any(|c| {
        m.pos(c, 0).is_some_and(|a| m.text(a.value) == v)
            && (several_epochs(c)
                || trainer_epochs && m.decorated_with(c.ctx.func, "EPOCH_COMPLETED"))
    })
}

/// Is function `f` (by name) called from inside an epoch loop? A method, as `self.name(...)`.
fn called_per_epoch(m: &crate::analysis::facts::Model<'_>, f: Option<u32>) -> bool {
    // (also a few calls deep: `for epoch in ...: test_and_save(epoch)` calling
    // `output_img(dir)`, whose loop reads the test loader)
    f.is_some_and(|f| runs_per_epoch(m, f, 0))
}

/// The attributes an object of a class of the file keeps loader `v` in: `CLIPTrainer(model,
/// train_loader=train_loader)` with `def __init__(self, model, train_loader): self.train_loader
/// = train_loader` keeps it as `self.train_loader`, which its methods iterate.
fn stored_in_object<'s>(m: &crate::analysis::facts::Model<'s>, v: &str) -> Vec<&'s str> {
    let mut out = Vec::new();
    for o in m.calls.iter().filter(|o| o.method.is_none()) {
        let Some(fi) = super::method_of(m, m.text(o.func), "__init__") else {
            continue;
        };
        let Some(init) = m.funcs.get(fi as usize) else {
            continue;
        };
        // (the arguments fill the parameters after `self`)
        let param = m.call_args(o).iter().enumerate().find_map(|(i, a)| {
            (m.text(a.value) == v).then(|| match a.name {
                Some(n) => Some(m.text(n)),
                None => init.params.get(i + 1).map(|(p, _)| m.text(*p)),
            })?
        });
        let Some(param) = param else { continue };
        out.extend(
            m.assigns
                .iter()
                .filter(|a| {
                    a.ctx.func == Some(fi)
                        && a.targets.len() == 1
                        && !a.augmented
                        && m.text(a.value) == param
                        && m.text(a.left).starts_with("self.")
                })
                .map(|a| m.text(a.left)),
        );
    }
    out
}

/// Does the DataLoader call `c` run once per epoch: inside an epoch loop, or in a function
/// that an epoch loop calls?
// Ex) def validate(model, valset): val_loader = DataLoader(valset, num_workers=1) ...
fn built_per_epoch(
    m: &crate::analysis::facts::Model<'_>,
    c: &crate::analysis::facts::Call,
) -> bool {
    in_epoch(m, c.ctx.loop_) || called_per_epoch(m, c.ctx.func)
}

/// Is the loader `v`, built in a loop (a cross-validation fold), iterated by an epoch loop
/// nested in that loop? Then each fold's loader serves several epochs, and its workers restart
/// at each of them. Also where a function of the file builds and returns it, called in such a
/// loop (`for fold in ...: train_loader, val_loader = get_loaders(...)`).
// Ex) for fold in range(5): train_loader = DataLoader(...) ... for epoch in range(n): for d in train_loader:
fn epochs_inside(
    m: &crate::analysis::facts::Model<'_>,
    c: &crate::analysis::facts::Call,
    v: &str,
) -> bool {
    if let Some(home) = c.ctx.loop_.and_then(|h| m.loops.get(h as usize)) {
        return epoch_iterates_within(m, home, v);
    }
    // (built by a function of the file that the fold's loop calls, under the names it binds)
    let Some(f) = c.ctx.func.and_then(|f| m.funcs.get(f as usize)) else {
        return false;
    };
    let function = m.text(f.name);
    let names = super::returned_to(m, v, c.ctx.func);
    m.assigns.iter().any(|a| {
        a.rhs_call
            .and_then(|i| m.calls.get(i as usize))
            .is_some_and(|k| k.method.is_none() && m.text(k.func) == function)
            && a.ctx
                .loop_
                .and_then(|h| m.loops.get(h as usize))
                .is_some_and(|home| {
                    a.targets
                        .iter()
                        .map(|t| m.text(*t))
                        .filter(|t| names.contains(t))
                        .any(|name| epoch_iterates_within(m, home, name))
                })
    })
}

/// Does an epoch loop nested in loop `home` (not `home` itself) hold a loop over loader `v`,
/// or hand `v` to a call each epoch (`train(trainloader, model, ...)`)?
fn epoch_iterates_within(
    m: &crate::analysis::facts::Model<'_>,
    home: &crate::analysis::facts::Loop,
    v: &str,
) -> bool {
    let nested_epoch = |e: &crate::analysis::facts::Loop| {
        e.info.epoch && e.span != home.span && home.span.contains(e.span)
    };
    m.loops.iter().any(|l| {
        l.info.iterates_loader.as_deref() == Some(v)
            && l.parent
                .and_then(|p| m.loops.get(p as usize))
                .is_some_and(nested_epoch)
    }) || m.calls.iter().any(|o| {
        o.ctx
            .loop_
            .and_then(|e| m.loops.get(e as usize))
            .is_some_and(nested_epoch)
            && m.call_args(o).iter().any(|a| m.text(a.value) == v)
    })
}

/// Does an epoch loop call a method of the loader's dataset (`train_loader.dataset.ng_sample()`,
/// `train_set.resample()`)? Persistent workers keep the copy of the dataset they forked with
/// and would go on serving the old samples: restarting them is what makes the change visible.
fn dataset_changes_per_epoch(
    m: &crate::analysis::facts::Model<'_>,
    c: &crate::analysis::facts::Call,
    var: Option<&str>,
) -> bool {
    let dataset = m
        .pos(c, 0)
        .or_else(|| m.kw(c, "dataset"))
        .map(|a| m.text(a.value))
        .filter(|t| {
            t.chars()
                .all(|ch| ch.is_alphanumeric() || ch == '_' || ch == '.')
        });
    let through_loader = var.map(|v| format!("{v}.dataset"));
    // (also in a function each epoch hands the loader to: `def train(loader): loader.dataset.
    // load_next_buffer()` called as `train(train_loader)` in the epoch loop)
    let handed: Vec<(u32, String)> = var
        .map(|v| {
            m.calls
                .iter()
                .filter(|o| in_epoch(m, o.ctx.loop_))
                .filter_map(|o| handed_param(m, o, v))
                .map(|(fi, p)| (fi, format!("{p}.dataset")))
                .collect()
        })
        .unwrap_or_default();
    // (also in a function of the file each epoch runs, at any depth, that reads the dataset's
    // module-level name: `train(epoch)` calling `reset_input_size()`, which calls
    // `train_dataset.reset_resize_shape(size)`)
    let per_epoch_fn = |o: &crate::analysis::facts::Call, r: &str| {
        o.ctx.func.is_some_and(|f| {
            !m.assigns
                .iter()
                .any(|a| a.ctx.func == Some(f) && a.targets.iter().any(|t| m.text(*t) == r))
                && runs_per_epoch(m, f, 0)
        })
    };
    m.calls.iter().any(|o| {
        o.method.is_some()
            && o.recv.is_some_and(|r| {
                let r = m.text(r);
                ((in_epoch(m, o.ctx.loop_) || (Some(r) == dataset && per_epoch_fn(o, r)))
                    && (Some(r) == dataset || through_loader.as_deref() == Some(r)))
                    || handed
                        .iter()
                        .any(|(fi, through)| o.ctx.func == Some(*fi) && r == through)
            })
    })
}

/// Does function `f` run once per epoch: called from an epoch loop, or from a function that
/// does (a few calls deep)?
fn runs_per_epoch(m: &crate::analysis::facts::Model<'_>, f: u32, depth: u8) -> bool {
    depth < 4
        && super::calls_of(m, Some(f)).any(|c| {
            in_epoch(m, c.ctx.loop_)
                || c.ctx
                    .func
                    .is_some_and(|g| g != f && runs_per_epoch(m, g, depth + 1))
        })
}

/// Is loop `li` (or one of its ancestors) an epoch loop that runs as shipped?
fn in_epoch(m: &crate::analysis::facts::Model<'_>, mut li: Option<u32>) -> bool {
    for _ in 0..256 {
        let Some(i) = li else { return false };
        let Some(l) = m.loops.get(i as usize) else {
            return false;
        };
        // (an epoch loop that does not run as shipped repeats nothing; nor does one that
        // runs once, `for epoch in range(1):`)
        if l.info.epoch {
            return !m.dead(&l.ctx) && !m.uncalled_line(l.line) && !single_pass(m, l);
        }
        li = l.parent;
    }
    false
}

/// Is loader `v` restarted inside a loop, each time its iterator runs out (`try: x =
/// next(it) except StopIteration: it = iter(loader)` in the step loop of FixMatch-style
/// training, also in a function it is handed to under the same name)? Each restart shuts its
/// workers down and starts new ones.
fn restarted_in_loop(m: &crate::analysis::facts::Model<'_>, v: &str) -> bool {
    m.assigns.iter().any(|a| {
        a.ctx.loop_.is_some()
            && !m.dead(&a.ctx)
            && a.rhs_call
                .and_then(|i| m.calls.get(i as usize))
                .is_some_and(|c| {
                    c.method.is_none()
                        && m.text(c.func) == "iter"
                        && m.pos(c, 0).is_some_and(|x| m.text(x.value) == v)
                })
    })
}

/// Does loop `l` iterate `range(1)` (or `range(n)` with `n` known to be 1): a single pass?
fn single_pass(m: &crate::analysis::facts::Model<'_>, l: &crate::analysis::facts::Loop) -> bool {
    if !l.iter.is_some_and(|it| m.text(it).starts_with("range(")) {
        return false;
    }
    // (also `range(1, NUM_EPOCHS + 1)` with `NUM_EPOCHS = args.num_epochs` defaulting to 1, and
    // `range(args.epoch)` defaulting to -1, which runs no epoch at all)
    if super::known_iterations(m, l).is_some_and(|n| n <= 1) {
        return true;
    }
    m.calls.iter().any(|c| {
        l.iter == Some(c.span)
            && c.method.is_none()
            && m.text(c.func) == "range"
            && matches!(m.call_args(c), [a] if a.name.is_none()
                && m.resolve(a, c.span.start, c.ctx.func) == crate::analysis::facts::Val::Int(1))
    })
}
