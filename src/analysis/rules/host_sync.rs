use crate::analysis::facts::NodeKind;
use crate::analysis::rule::{Checker, Rule, RuleMeta};
use crate::declare_rule;

declare_rule! {
    /// ## What it does
    /// Flags `.item()`, `.cpu()`, `.numpy()` (also after `.to('cpu')`, the same copy to the
    /// host as `.cpu()`: `label_ids = b_labels.to('cpu').numpy()`) and `.tolist()` in a step
    /// loop (training or inference) on CUDA, when not under a `step % N == 0` guard (also one the loop binds to a
    /// name first: `log_now = step % 100 == 0` ... `if log_now:`, and the `else` of `if step %
    /// N != 0:`, where gradient accumulation steps the optimizer) (nor in a branch that runs
    /// once, like `if i == 0:`, the last batch's `if i == len(loader) - 1:` or another count the loop does not change, `if i == (n_iter - 2):` or `if i == sample_idx:` (also against a counter the loop steps by one, `if iteration == iterations_phase1:`), `if len(preds) == 0: preds.append(...)` or the last short batch's `if x.size(0) != batch_size:`, or at the iterations a test selects, `if t in markers:`, `if
    /// i < len(writers):`, behind a command-line switch that is off by default, or in a step
    /// loop of at most 16 known iterations, `range(15)`, `range(args.steps + 1)`, `tqdm(range(n))`, a loader whose one batch is its whole dataset (`batch_size=len(test_set)`, also handed to
    /// a function of the file by every call of it, `evaluate(model, test_loader)`) or a list of
    /// settings written out, unless a longer step loop holds it);
    /// also an `.item()` in the body of a
    /// module-level helper (outside any loop or `if` of its own) whose every call in the file
    /// (but those in functions the script never calls) sits unguarded in a step loop (`correct += number_of_correct(pred, y)` with `def
    /// number_of_correct(pred, y): return pred.eq(y).sum().item()`; a helper that runs the
    /// backward pass itself may be chosen by any branch but a cadence guard, a GAN's `if
    /// d_steps_left > 0: discriminator_step(...)`); also a read directly in
    /// the step a framework runs (outside any loop or `if` of its own): a `*_step` method of a
    /// Lightning module the file fits (`training_step`, `validation_step`, a `shared_step` they
    /// call; not `test_step` / `predict_step`), or the function handed to Ignite's
    /// `Engine(step)`. A `.cpu()` / `.numpy()` / `.tolist()` whose
    /// value is written out in the same iteration, by a write that runs as shipped (not under `if
    /// opts.save_dir:` with the option's default `None`) (an image or a file saved, an LMDB or queue
    /// `put`, a CSV row, an HDF5 dataset, `f.create_dataset(id, data=emb[i].cpu().numpy())`, a
    /// database row, `cursor.executemany("INSERT ...", rows)`, a
    /// socket's or viewer's `send`, by a library call, a writer named `write_*` / `save_*` (or `writeFlow`, `saveImage`) or a function
    /// of the file that writes what it is handed, also started on a thread with it
    /// (`_thread.start_new_thread(clear_buffer, (out, buffer))`), directly or through values
    /// computed from it, a buffer it is appended to,
    /// a loop over it, or boxes drawn from it on the frame then saved or shown, also a mask
    /// from it painted into the frame, `frame[mask] = color` ... `cv2.imshow(name, frame)`; an
    /// environment stepped with the action) is the loop's product, not a read that could wait;
    /// so is one collected into a list that a loop over the loader (or over files) around the
    /// step loop writes out in the same iteration, directly or through a value it derives from
    /// the list (the features of each video's windows, saved once per video;
    /// not the features of a whole dataset, saved once per model). A batch
    /// from the loader that is not yet moved (`inputs, labels = data` ... `inputs.numpy()`;
    /// moved when its items are, `targets[k] = v.to(device)`; unpacked from a batch sliced by
    /// hand and moved only after the read, `sen_len = torch.sum(word_mask, dim=1).max().item()`
    /// then `word_mask = word_mask.to(device)`)
    /// is a CPU tensor: reading it waits for nothing (also through an inner loop over it, `for
    /// qid, out in zip(question_id, outputs): qid.item()`); so is a value computed on the host from
    /// one already copied (`output = model(x).cpu()` ... `probs, classes = torch.max(
    /// torch.softmax(output, 1), 1)` ... `for p, c in zip(probs, classes): c.numpy()`; `psnr =
    /// mse_to_psnr(loss.detach().cpu())` ... `psnr.item()`; a helper handed a copy among its
    /// arguments, `mse = compute_mse(pred, alpha, trimap)` with `pred = pred.cpu().numpy()`), and a
    /// tensor built without a device from host data (`torch.tensor(decode(ids.cpu().numpy()))`, a
    /// list of numbers the file keeps, `torch.Tensor(losses).mean().item()` with `losses = deque()`). A step loop that decodes with a language
    /// model's `generate(...)` (decoding options, `**inputs`, token ids; or a decoder's the file
    /// builds around the model, `BeamSearch(model, tokenizer).generate(src)`), itself or through a
    /// function of the file it calls (an RL fine-tune's `rollout(model, tokenizer, q)`), reads
    /// every token back already and is left alone; a GAN's `generator.generate(n, device)` is no such loop.
    /// So is the stop test of a hand-written greedy or sampled decode (`decoder_input =
    /// topi.squeeze().detach()` ... `if decoder_input.item() == EOS_token: break`; `next_token =
    /// torch.multinomial(probs, 1)`, `tokens = torch.cat([tokens, next_token], dim=1)`, `if
    /// next_token.item() == eot: break`; `topv, topi = out.topk(1)` ... `if topi.item() ==
    /// EOS_token: break` with `decoder_input = topi.squeeze()` the next pass's input), with any
    /// other `.item()` of that token (its word, `index2word[topi.item()]`), and the
    /// `.item()` method of a Python object built from no tensor (`val_res =
    /// utils.Averager()` ... `val_res.item()`). So is
    /// a loop that steps a simulated environment (`env.step(...)`, or an environment handed to
    /// a helper: `act(env, policy, obs)`): its `.cpu()` / `.numpy()` reads, its `done` test
    /// and the action it hands the step (`env.step(action.item())`, or `action =
    /// Categorical(probs).sample().item()` then `env.step(action)`) belong to the interaction
    /// with the host-side simulator.
    ///
    /// Reported on the line of the `.item()` / `.cpu()` / `.numpy()` / `.tolist()` call: where
    /// the call starts (`torch.sum(` of `torch.sum(\n ...\n).item()`), or for a chain written one
    /// method per line, the line of its first read (`.cpu()` of `(out\n .detach()\n .cpu()\n
    /// .numpy())`).
    ///
    /// ## Why is this slow?
    /// Reading a GPU value on the host waits until every queued kernel has run: the CPU stops
    /// issuing work, the GPU drains its queue and then idles while the CPU catches up. Once per
    /// step this serialises host and device (HTA "host wait").
    ///
    /// ## Example
    /// ```python
    /// import torch
    ///
    /// device = torch.device("cuda")
    /// model.eval()
    /// with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
    ///     for x, y in val_loader:
    ///         correct += (model(x.to(device)).argmax(1) == y.to(device)).sum().item()
    /// ```
    ///
    /// Use instead:
    /// ```python
    /// import torch
    ///
    /// device = torch.device("cuda")
    /// model.eval()
    /// with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
    ///     for x, y in val_loader:
    ///         correct += (model(x.to(device)).argmax(1) == y.to(device)).sum()
    /// ```
    ///
    /// ## Fix safety
    /// No automatic fix: accumulate on the device (`loss.detach()`) and read the value once
    /// every N steps or at the end of the epoch. Values used for control flow (early stopping,
    /// NaN checks) need the same cadence change.
    pub(crate) struct HostSync {
        id: "EA301",
        name: "host-sync-in-step-loop",
        category: HostSync,
        resource: Gpu,
        severity: Medium,
    }
}

impl Rule for HostSync {
    fn meta(&self) -> &'static RuleMeta {
        &Self::META
    }

    // fires in a step or record loop, or on a file's kind: nothing beyond the engine's triggers
    fn triggers(&self) -> crate::analysis::prefilter::Triggers {
        crate::analysis::prefilter::Triggers::Engine
    }

    fn check(&self, cx: &mut Checker<'_>) {
        let m = cx.m;
        if !super::cuda(m) {
            return;
        }
        for c in &m.calls {
            if c.method.is_none() || c.ctx.in_except || !m.call_args(c).is_empty() {
                continue;
            }
            let last = m.last_name(c);
            if !READS.contains(&last) || python_object(m, c) {
                continue;
            }
            // (also an `.item()` in a helper that every step calls: `correct +=
            // number_of_correct(...)`; a helper's `.cpu()` / `.numpy()` hands its product back)
            let Some(s) = super::step_ctx(m, c).or_else(|| {
                (last == "item")
                    .then(|| super::helper_step_ctx(m, c))
                    .flatten()
            }) else {
                // the step a framework runs: a Lightning module's `training_step`, an Ignite
                // process function
                if let Some(step) = framework_step(m, c) {
                    report(cx, c, &format!("`{step}`"));
                }
                continue;
            };
            // autoregressive `generate()` reads every sampled token back to decide when to stop:
            // one more read of its output per call adds nothing
            if s.mod_guard || generate_loop(m, s.loop_) {
                continue;
            }
            // a batch straight from the loader that is never moved to the device is still a
            // CPU tensor: `labels.numpy()` there does not synchronise
            // (also through a comprehension over it: `{t["id"].item(): o for t, o in zip(targets, outs)}`)
            if let (Some(l), Some(root)) = (
                m.loops.get(s.loop_ as usize),
                tensor_root(m, c).map(|r| comprehension_source(m, c, r).unwrap_or(r)),
            ) && stays_on_host(m, c)
                && unmoved_batch_value(m, l, c, root)
            {
                continue;
            }
            // a tensor built on the host from a Python list of numbers, `torch.Tensor(losses)
            // .mean().item()` with `losses = deque()`: no device in the chain
            if stays_on_host(m, c) && host_list_tensor(m, c) {
                continue;
            }
            // a value already copied to the host in this iteration (`boxes = out["boxes"].cpu()`
            // ... `for box in boxes: box.tolist()`) reads host memory: no wait
            // (`(mask > t).numpy()`: the first name of a parenthesised receiver)
            if let (Some(l), Some(root)) = (
                m.loops.get(s.loop_ as usize),
                tensor_root(m, c).or_else(|| c.recv.and_then(|r| super::words(m.text(r)).next())),
            ) && on_host(m, l, c, root)
            {
                continue;
            }
            // a function applied to host values only (`loss_func(logits, y).item()` after
            // `logits = model(x).cpu()`, `y` straight from the loader) computes on the host; a
            // loop that steps a simulated environment through a helper (`act(env, ...)`,
            // `update_belief_and_act(args, env, ...)`) keeps its actions and rewards on the host
            // side of each step, and its `done` test decides whether the episode goes on; an
            // action read back to step the simulator (`env.step(action.item())`) must be on
            // the host
            if let Some(l) = m.loops.get(s.loop_ as usize)
                && (host_call_result(m, l, c)
                    || c.recv
                        .and_then(|r| m.node(r))
                        .is_some_and(|r| host_expr(m, l, c, r))
                    || ((last != "item" || in_condition(m, c)) && steps_environment(m, l))
                    || steps_environment_with(m, c))
            {
                continue;
            }
            // a token read back to build the model's next input (a hand-written autoregressive
            // decode) is the decode itself, and so is its stop test
            if let Some(l) = m.loops.get(s.loop_ as usize)
                && (feeds_next_input(m, l, c) || decode_stop(m, l, c) || decoded_token(m, l, c))
            {
                continue;
            }
            // an output that must reach the host now (an image or file written, an environment
            // stepped with the action) is the loop's product, not a read that could wait
            if last != "item"
                && let Some(l) = m.loops.get(s.loop_ as usize)
                && feeds_host_sink(m, l, c)
            {
                continue;
            }
            report(cx, c, "the step loop");
        }
    }
}

/// Is the receiver of read `c` a plain name whose every binding in its function builds an
/// object of a class outside torch and numpy, from no arguments or literals only (`val_res =
/// utils.Averager()` ...
/// `val_res.item()`, `meter = AverageMeter()`)? Its `.item()` is that class's method, which
/// reads no tensor.
fn python_object(m: &crate::analysis::facts::Model<'_>, c: &crate::analysis::facts::Call) -> bool {
    let Some(recv) = c
        .recv
        .filter(|r| m.node(*r).is_some_and(|n| n.node_kind() == "identifier"))
    else {
        return false;
    };
    let name = m.text(recv);
    // (a name the engine knows as a model or tensor reads one)
    if m.var_kind(name).is_some() {
        return false;
    }
    let mut binds = m
        .assigns
        .iter()
        .filter(|a| a.ctx.func == c.ctx.func && a.targets.iter().any(|t| m.text(*t) == name))
        .peekable();
    binds.peek().is_some()
        && binds.all(|a| {
            !a.augmented
                && a.targets.len() == 1
                && a.rhs_call
                    .and_then(|i| m.calls.get(i as usize))
                    .is_some_and(|k| {
                        let q = m.qual(k);
                        // (built from nothing or from literals: `IoU(pred, masks)` is a metric
                        // function of tensors that returns one)
                        m.last_name(k)
                            .starts_with(|ch: char| ch.is_ascii_uppercase())
                            && m.call_args(k).iter().all(|a| a.vkind.is_literal())
                            && k.recv_call.is_none()
                            && !q.starts_with("torch")
                            && !q.starts_with("numpy")
                            && !m.text(k.func).starts_with("np.")
                    })
        })
}

/// Reports read `c`, made every step in `place` (`the step loop`, `` `training_step` ``), where
/// [`chain_anchor`] puts it, else on the call's line.
fn report(cx: &mut Checker<'_>, c: &crate::analysis::facts::Call, place: &str) {
    let message = format!(
        "`.{}()` in {place} waits for the GPU every step; keep values on the device and read them every N steps",
        cx.m.last_name(c)
    );
    match chain_anchor(cx.m, c) {
        Some((line, col)) => cx.at(&HostSync::META, line, col, c.end_line, message, None),
        None => cx.at_call(&HostSync::META, c, message, None),
    }
}

/// The name of the function a framework runs every step that holds read `c` directly (not
/// under an `if` or in a loop of its own): a `*_step` method of a Lightning module the file
/// fits (`training_step`, `validation_step`, a `shared_step` they call; not `test_step` /
/// `predict_step`, run once after training), or the process function handed to Ignite's
/// `Engine(step)`. A `.cpu()` / `.numpy()` / `.tolist()` in a step that writes files (features
/// saved per batch) is its product and left alone.
fn framework_step<'s>(
    m: &crate::analysis::facts::Model<'s>,
    c: &crate::analysis::facts::Call,
) -> Option<&'s str> {
    if c.ctx.loop_.is_some()
        || c.ctx.under_if
        || c.ctx.mod_guard
        || m.dead(&c.ctx)
        || m.uncalled_line(c.line)
        || super::under_if_in_function(m, c)
    {
        return None;
    }
    let fi = c.ctx.func?;
    let f = m.funcs.get(fi as usize)?;
    let name = m.text(f.name);
    let lightning = || {
        name.ends_with("_step")
            && !matches!(name, "test_step" | "predict_step")
            && f.class
                .and_then(|k| m.classes.get(k as usize))
                .and_then(|k| k.bases)
                .is_some_and(|b| m.text(b).contains("LightningModule"))
            && super::lightning_fit(m).is_some()
    };
    let ignite = || {
        m.calls.iter().any(|e| {
            m.last_name(e) == "Engine"
                && m.qual(e).starts_with("ignite")
                && !m.dead(&e.ctx)
                && m.pos(e, 0).is_some_and(|a| m.text(a.value) == name)
        })
    };
    if !(lightning() || ignite()) {
        return None;
    }
    let writes = m.calls.iter().any(|k| {
        k.ctx.func == Some(fi)
            && matches!(
                m.last_name(k),
                "save" | "savez" | "savez_compressed" | "write" | "imwrite" | "save_image" | "dump"
            )
    });
    (m.last_name(c) == "item" || !writes).then_some(name)
}

/// The names the value read by call `c` is assigned to in loop `l`'s body (`x = out.cpu()`).
fn assigned_in_body<'a, 's>(
    m: &'a crate::analysis::facts::Model<'s>,
    l: &'a crate::analysis::facts::Loop,
    c: &'a crate::analysis::facts::Call,
) -> impl Iterator<Item = &'s str> + 'a {
    m.assigns
        .iter()
        .filter(move |a| l.span.contains(a.span) && a.value.contains(c.span))
        .flat_map(move |a| a.targets.iter().map(move |t| m.text(*t)))
}

/// Does the value read by call `c` become part of what the model is handed in the same loop:
/// through the names it is assigned to, the buffers it is appended to and what is computed from
/// them (`idx = dist.sample().item()`, `sequence.append(idx)` ... `inp = torch.tensor(sequence)`,
/// `logits = model(inp)`), accumulating in a buffer or a tensor concatenated onto itself? A
/// hand-written autoregressive decode needs each token on the host to build the next step's
/// input, as `generate()` does.
// Ex) decoder_input = torch.cat([decoder_input, torch.empty(1, 1).fill_(next_word.item())], dim=1)
fn feeds_next_input(
    m: &crate::analysis::facts::Model<'_>,
    l: &crate::analysis::facts::Loop,
    c: &crate::analysis::facts::Call,
) -> bool {
    let in_body = |span: crate::analysis::facts::Span| l.span.contains(span);
    let appended_to = |k: &crate::analysis::facts::Call| {
        (in_body(k.span) && matches!(m.last_name(k), "append" | "extend"))
            .then_some(k.recv)
            .flatten()
    };
    let mut names: Vec<&str> = assigned_in_body(m, l, c)
        .chain(
            m.calls
                .iter()
                .filter(|k| k.args_span.contains(c.span))
                .filter_map(appended_to)
                .map(|r| m.text(r)),
        )
        .collect();
    // what is computed from them anywhere in the body: the next iteration reads it
    grow_in_body(m, l, &mut names, true);
    // the tokens accumulate: appended to a buffer, or concatenated onto what holds them
    // (`x = torch.cat([x, tok])`), and what accumulates them is what the model is handed; a
    // size or a count read back is no decode, nor a state the model maps to its next value
    // (`x = model(x)`), nor frames kept for a figure
    let uses =
        |s: crate::analysis::facts::Span| super::words(m.text(s)).any(|w| names.contains(&w));
    let mut acc: Vec<&str> = m
        .calls
        .iter()
        .filter(|k| uses(k.args_span))
        .filter_map(appended_to)
        .map(|r| m.text(r))
        .chain(
            m.assigns
                .iter()
                .filter(|a| in_body(a.span) && uses(a.value) && m.text(a.value).contains("cat("))
                .flat_map(|a| a.targets.iter().map(|t| m.text(*t)))
                .filter(|t| names.contains(t)),
        )
        .collect();
    grow_in_body(m, l, &mut acc, false);
    !acc.is_empty() && model_handed(m, l, c, &acc)
}

/// Does a call in loop `l`'s body other than read `c` run the model on one of `names`
/// (`logits = model(inp)`, `decoder(decoder_input, hidden)`)?
fn model_handed(
    m: &crate::analysis::facts::Model<'_>,
    l: &crate::analysis::facts::Loop,
    c: &crate::analysis::facts::Call,
    names: &[&str],
) -> bool {
    m.calls.iter().any(|k| {
        l.span.contains(k.span)
            && k.span != c.span
            && crate::analysis::resolve::runs_model(m, k)
            && super::words(m.text(k.args_span)).any(|w| names.contains(&w))
    })
}

/// Adds to `names`, a few steps on, the names loop `l`'s body computes from them anywhere in it
/// (`inp = torch.tensor(sequence)`), and with `appends` the buffers it appends them to
/// (`sequence.append(idx)`).
fn grow_in_body<'s>(
    m: &crate::analysis::facts::Model<'s>,
    l: &crate::analysis::facts::Loop,
    names: &mut Vec<&'s str>,
    appends: bool,
) {
    for _ in 0..4 {
        let uses =
            |s: crate::analysis::facts::Span| super::words(m.text(s)).any(|w| names.contains(&w));
        let more: Vec<&str> = m
            .assigns
            .iter()
            .filter(|a| l.span.contains(a.span) && uses(a.value))
            .flat_map(|a| a.targets.iter().map(|t| m.text(*t)))
            .chain(
                m.calls
                    .iter()
                    .filter(|k| {
                        appends
                            && l.span.contains(k.span)
                            && matches!(m.last_name(k), "append" | "extend")
                            && uses(k.args_span)
                    })
                    .filter_map(|k| k.recv.map(|r| m.text(r))),
            )
            .filter(|t| !names.contains(t))
            .collect();
        if more.is_empty() {
            break;
        }
        names.extend(more);
    }
}

/// The calls that read a tensor back to the host.
pub(crate) const READS: &[&str] = &["item", "cpu", "numpy", "tolist"];

/// Does the loop iterate what a model returns (`for target, prediction in zip(targets,
/// model(images)):`)? Its items are device tensors, not a loader's host batches.
// Ex) for target, prediction in zip(targets, model(images)): prediction["boxes"].cpu()
fn iterates_model_output(
    m: &crate::analysis::facts::Model<'_>,
    l: &crate::analysis::facts::Loop,
) -> bool {
    l.iter.is_some_and(|it| {
        m.calls
            .iter()
            .any(|k| it.contains(k.span) && crate::analysis::resolve::runs_model(m, k))
    })
}

/// Where a read that ends a chain written one method per line is: the line of its first
/// read method (`outputs[i]` / `.get("boxes")` / `.detach()` / `.cpu()` / `.numpy()`: the
/// `.cpu()` line), not the line the chain starts on. `None` when the read is on the chain's
/// first line, or closes a call written over several lines (`torch.sum(\n ...\n).item()`).
// Ex) pred_boxes = (outputs[i]\n .get("boxes")\n .detach()\n .cpu()\n .numpy())
fn chain_anchor(
    m: &crate::analysis::facts::Model<'_>,
    c: &crate::analysis::facts::Call,
) -> Option<(usize, usize)> {
    let mut first = c;
    for _ in 0..8 {
        match first.recv_call.and_then(|i| m.calls.get(i as usize)) {
            Some(inner) if READS.contains(&m.last_name(inner)) => {
                first = inner;
            }
            _ => break,
        }
    }
    let name = m.node(first.method?)?;
    let (line, col) = crate::analysis::facts::line_col(m.src, name);
    // a chain written one method per line (`.cpu()` opens its line), not a call closed on a
    // later line (`torch.sum(\n ...\n).item()`: the statement's line)
    let opens_line = m
        .src
        .get(..name.start_byte())
        .and_then(|before| before.rsplit('\n').next())
        .is_some_and(|lead| lead.trim_start() == ".");
    (line != c.line && opens_line).then_some((line, col))
}

/// The name a comprehension around call `c` iterates to bind `name`: `targets` for `target` in
/// `[... for target in targets]`, `for target, out in zip(targets, outs)` or
/// `for i, target in enumerate(targets)`.
fn comprehension_source<'s>(
    m: &crate::analysis::facts::Model<'s>,
    c: &crate::analysis::facts::Call,
    name: &str,
) -> Option<&'s str> {
    use crate::analysis::facts::field;
    let text = |n: tree_sitter::Node<'_>| m.src.get(n.start_byte()..n.end_byte()).unwrap_or("");
    let (left, right) = super::comprehension_clause(m, c, name)?;
    let source = if left.node_kind() == "identifier" {
        Some(right)
    } else {
        let mut lw = left.walk();
        let i = left
            .named_children(&mut lw)
            .position(|ch| text(ch) == name)?;
        let f = field::get(right, field::FUNCTION).map(text)?;
        let args = field::get(right, field::ARGUMENTS)?;
        match f {
            "zip" => args.named_child(u32::try_from(i).ok()?),
            "enumerate" if i == 1 => args.named_child(0),
            _ => None,
        }
    };
    source
        .filter(|s| s.node_kind() == "identifier")
        .and_then(|s| m.src.get(s.start_byte()..s.end_byte()))
}

/// Is `name` an environment by its name (`env`, `envs`, `test_envs`, `train_env`)?
fn env_name(name: &str) -> bool {
    let l = name.to_ascii_lowercase();
    l == "env"
        || l == "envs"
        || l == "environment"
        || l.ends_with("_env")
        || l.ends_with("_envs")
        || l.starts_with("env_")
}

/// Does loop `l` step an environment: `env.step(...)` on an environment by its name, or an
/// environment handed to a function of the loop (`act(env, policy, obs)`)?
fn steps_environment(
    m: &crate::analysis::facts::Model<'_>,
    l: &crate::analysis::facts::Loop,
) -> bool {
    m.calls.iter().any(|k| {
        l.span.contains(k.span)
            && !m.dead(&k.ctx)
            && match k.method {
                Some(_) => {
                    m.last_name(k) == "step" && k.recv_root.is_some_and(|r| env_name(m.text(r)))
                }
                None => m.call_args(k).iter().any(|a| {
                    a.vkind == crate::analysis::facts::ValKind::Ident && env_name(m.text(a.value))
                }),
            }
    })
}

/// Is call `c` an argument of an environment's step (`env.step(action.item())`), or the
/// value of the action that step is handed later in the loop?
fn steps_environment_with(
    m: &crate::analysis::facts::Model<'_>,
    c: &crate::analysis::facts::Call,
) -> bool {
    let env_step = |k: &crate::analysis::facts::Call| {
        k.method.is_some()
            && m.last_name(k) == "step"
            && k.recv_root.is_some_and(|r| env_name(m.text(r)))
    };
    // (or bound to a name first, `action = Categorical(probs).sample().item()` ...
    // `env.step(action)`, in the same loop)
    let action = m
        .assigns
        .iter()
        .find(|a| a.value == c.span && a.targets.len() == 1 && !a.augmented)
        .map(|a| m.text(a.left));
    let in_loop = |k: &crate::analysis::facts::Call| {
        c.ctx
            .loop_
            .and_then(|i| m.loops.get(i as usize))
            .is_some_and(|l| l.span.contains(k.span))
    };
    m.calls.iter().any(|k| {
        env_step(k)
            && (k.args_span.contains(c.span)
                || action.is_some_and(|name| {
                    k.span.start >= c.span.end
                        && in_loop(k)
                        && m.call_args(k).iter().any(|a| m.text(a.value) == name)
                }))
    })
}

/// Is call `c` inside the condition of an `if` / `while` (`if done.sum().item() == n:`)?
fn in_condition(m: &crate::analysis::facts::Model<'_>, c: &crate::analysis::facts::Call) -> bool {
    let Some(mut n) = m.node(c.span) else {
        return false;
    };
    for _ in 0..32 {
        let Some(p) = n.parent() else { return false };
        if matches!(
            p.node_kind(),
            "if_statement" | "elif_clause" | "while_statement"
        ) {
            return p
                .child_by_field_name("condition")
                .is_some_and(|cond| cond.id() == n.id());
        }
        if matches!(p.node_kind(), "block" | "module") {
            return false;
        }
        n = p;
    }
    false
}

/// Is read `c` the stop test of a hand-written decode: `if decoder_input.item() == EOS_token:
/// break`, where the name read is rebound in loop `l`'s body and handed to a call there (the
/// model's next input, or the sequence it is appended to, `torch.cat([tokens, next_token])`)? The decode needs the token on the host to know when to stop, as
/// `generate()` does.
// Ex) decoder_input = topi.squeeze().detach(); ...; if decoder_input.item() == EOS_token: break
fn decode_stop(
    m: &crate::analysis::facts::Model<'_>,
    l: &crate::analysis::facts::Loop,
    c: &crate::analysis::facts::Call,
) -> bool {
    let Some(name) = c.recv.map(|r| m.text(r)) else {
        return false;
    };
    // (the `if` the read tests breaks off the loop)
    let breaks = || {
        std::iter::successors(m.node(c.span), |n| n.parent())
            .take(32)
            .find(|n| n.node_kind() == "if_statement")
            .and_then(|n| n.child_by_field_name("consequence"))
            .is_some_and(|b| {
                let mut w = b.walk();
                b.named_children(&mut w)
                    .any(|st| st.node_kind() == "break_statement")
            })
    };
    m.last_name(c) == "item"
        && in_condition(m, c)
        && breaks()
        && m.assigns.iter().any(|a| {
            l.span.contains(a.span)
                && (m.text(a.left) == name || a.targets.iter().any(|t| m.text(*t) == name))
        })
        && (m.calls.iter().any(|k| {
            l.span.contains(k.span)
                && k.span.start < c.span.start
                // (not a call around the read itself, `float(loss.item()) < 0.06`)
                && !k.span.contains(c.span)
                // (also inside a list it hands, the sequence grown token by token:
                // `tokens = torch.cat([tokens, next_token], dim=1)`)
                && m.call_args(k)
                    .iter()
                    .any(|a| super::words(m.text(a.value)).any(|w| w == name))
        }) || {
            // (or the token, or what the body computes from it, is the model's input on the
            // next pass: `topv, topi = out.topk(1)` ... `decoder_input = topi.squeeze()` with
            // `decoder(decoder_input, hidden)` at the top of the body)
            let mut names = vec![name];
            grow_in_body(m, l, &mut names, false);
            model_handed(m, l, c, &names)
        })
}

/// Is read `c` another `.item()` of the token whose stop test ends a hand-written decode in loop
/// `l` (`if topi.item() == EOS_token: break` / `else: words.append(index2word[topi.item()])`)?
/// The stop test has already waited for that token; reading it again waits for nothing new.
// Ex) if topi.item() == EOS_token: break; else: decoded_words.append(lang.index2word[topi.item()])
fn decoded_token(
    m: &crate::analysis::facts::Model<'_>,
    l: &crate::analysis::facts::Loop,
    c: &crate::analysis::facts::Call,
) -> bool {
    let Some(name) = c.recv.map(|r| m.text(r)) else {
        return false;
    };
    m.last_name(c) == "item"
        && m.calls.iter().any(|k| {
            k.span != c.span
                && l.span.contains(k.span)
                && k.recv.is_some_and(|r| m.text(r) == name)
                && decode_stop(m, l, k)
        })
}

/// Calls that take an output off the device for good: writing an image, a frame or a file,
/// showing it, or stepping an environment with it.
const HOST_SINKS: &[&str] = &[
    "fromarray",
    "save",
    "imwrite",
    "imsave",
    "save_image",
    "write",
    "writeFrame",
    "savez",
    "savez_compressed",
    "dump",
    "imshow",
    "step",
    // an LMDB transaction's or a queue's `put`, a CSV writer's rows, an HDF5 file's datasets
    "put",
    "create_dataset",
    // a database's rows, `cursor.executemany("INSERT ...", rows)`
    "execute",
    "executemany",
    "writerow",
    "writerows",
    // a socket's, a pipe's or a viewer connection's
    "send",
    "sendall",
    // a medical volume written out (`nib.Nifti1Image(out, affine).to_filename(path)`,
    // SimpleITK's `WriteImage`), a MATLAB file
    "to_filename",
    "WriteImage",
    "savemat",
];

/// Calls that draw on the image they are handed, in place (OpenCV's drawing functions).
const DRAWING: &[&str] = &[
    "rectangle",
    "putText",
    "circle",
    "line",
    "polylines",
    "fillPoly",
    "drawContours",
    "arrowedLine",
    "ellipse",
];

/// Does the value read by call `c` reach one of [`HOST_SINKS`] in the same loop body: as its
/// argument, or through the name it is assigned to (`x = 255 * out.cpu().numpy()` ...
/// `Image.fromarray(x.astype(np.uint8))`), or through a list it is appended to and that the
/// loop over batches around the step loop writes out after it, in the same iteration? An
/// optimizer's or scheduler's `step` is not a sink, nor a value only derived from it (a token
/// sampled from CPU logits, then written out).
fn feeds_host_sink(
    m: &crate::analysis::facts::Model<'_>,
    l: &crate::analysis::facts::Loop,
    c: &crate::analysis::facts::Call,
) -> bool {
    let sink_name = |k: &crate::analysis::facts::Call| {
        let last = m.last_name(k);
        // `write_depth(path, out)`, `save_output(name, pred)`: a writer by its name (also
        // camel-cased, `flow_utils.writeFlow(path, flow)`, `saveImage(img, path)`)
        let camel = |p: &str| {
            last.strip_prefix(p)
                .and_then(|rest| rest.chars().next())
                .is_some_and(|ch| ch.is_ascii_uppercase())
        };
        let writer = ["write_", "save_"].iter().any(|p| last.starts_with(p))
            || camel("write")
            || camel("save");
        (HOST_SINKS.contains(&last) || writer)
            && k.recv.is_none_or(|r| {
                let r = m.text(r).to_ascii_lowercase();
                !(r.contains("optim") || r.contains("sched") || r.contains("scaler") || r == "opt")
            })
    };
    // a function of the file that writes what it is handed (`flush_if_needed(out_dir,
    // emb_buf, ...)` whose body calls `np.save`)
    let writer_fn = |name: &str| {
        m.plain_fn(name).is_some_and(|fi| {
            m.calls
                .iter()
                .any(|x| x.ctx.func == Some(fi as u32) && sink_name(x))
        })
    };
    // also such a function started on a thread with what it writes (`_thread.
    // start_new_thread(clear_buffer, (args, buffer))`, `Thread(target=save, args=(frames,))`,
    // `pool.submit(save, frames)`): the frames go to the writer, not back to the GPU
    // (not a write in a branch that does not run as shipped, `if opts.save_val_results_to:
    // colorized.save(...)` with the option's default `None`: the value goes nowhere)
    let is_sink = |k: &crate::analysis::facts::Call| {
        !m.dead(&k.ctx)
            && (sink_name(k)
                || (k.method.is_none() && writer_fn(m.text(k.func)))
                || (matches!(
                    m.last_name(k),
                    "start_new_thread" | "Thread" | "submit" | "apply_async"
                ) && m
                    .kw(k, "target")
                    .or_else(|| m.pos(k, 0))
                    .is_some_and(|a| writer_fn(m.text(a.value)))))
    };
    let in_body = |span: crate::analysis::facts::Span| l.span.contains(span);
    // directly an argument of a sink, or the object it writes (`to_pil(out.cpu()).save(p)`)
    if m.calls.iter().any(|k| {
        in_body(k.span)
            && is_sink(k)
            && k.span != c.span
            && (k.args_span.contains(c.span) || k.recv.is_some_and(|r| r.contains(c.span)))
    }) {
        return true;
    }
    // stored into an array on disk (`h5feat[indices, :] = enc.cpu().numpy()` with `h5feat =
    // h5.create_dataset(...)`, an `np.memmap`): written to the file
    if m.assigns.iter().any(|a| {
        in_body(a.span)
            && a.value.contains(c.span)
            && m.text(a.left).contains('[')
            && m.text(a.left).split('[').next().is_some_and(|base| {
                m.assigns.iter().any(|b| {
                    b.ctx.func == a.ctx.func
                        && b.span.end <= a.span.start
                        && m.text(b.left) == base.trim()
                        && b.rhs_call
                            .and_then(|i| m.calls.get(i as usize))
                            .is_some_and(|k| {
                                matches!(
                                    m.last_name(k),
                                    "create_dataset" | "require_dataset" | "memmap" | "open_memmap"
                                )
                            })
                })
            })
    }) {
        return true;
    }
    // the names it is assigned to, and those of a loop in the body that iterates it (`for
    // score, box in zip(scores.cpu().numpy(), boxes.cpu().numpy()):`)
    let mut names: Vec<&str> = assigned_in_body(m, l, c)
        .chain(
            m.loops
                .iter()
                .filter(|k| in_body(k.span) && k.iter.is_some_and(|i| i.contains(c.span)))
                .flat_map(|k| k.targets.iter().map(|t| m.text(*t))),
        )
        .collect();
    // and what is computed from it in the body, a few steps on (`depth = out.cpu().numpy()`,
    // `color = cv2.applyColorMap(depth, ...)`, `cv2.imwrite(path, color)`), also the image it
    // is drawn on in place (`cv2.rectangle(frame, (x1, y1), ...)` ... `cv2.imwrite(p, frame)`)
    for _ in 0..4 {
        let drawn = m.calls.iter().filter(|k| {
            in_body(k.span)
                && k.span.start > c.span.end
                && DRAWING.contains(&m.last_name(k))
                && super::words(m.text(k.args_span)).any(|w| names.contains(&w))
        });
        let more: Vec<&str> = m
            .assigns
            .iter()
            // (an image written in place through a mask computed from it, `frame[mask] =
            // blended[mask]`, is the image: its name before the index)
            .filter(|a| {
                in_body(a.span)
                    && a.span.start > c.span.end
                    && (super::words(m.text(a.value)).any(|w| names.contains(&w))
                        || (m.text(a.left).contains('[')
                            && super::words(m.text(a.left)).any(|w| names.contains(&w))))
            })
            .flat_map(|a| {
                let left = m.text(a.left);
                let written = left
                    .contains('[')
                    .then(|| left.split('[').next().unwrap_or_default().trim());
                a.targets.iter().map(|t| m.text(*t)).chain(written)
            })
            .chain(drawn.filter_map(|k| m.pos(k, 0)).map(|a| m.text(a.value)))
            // the targets of a loop over it (`for file, top in zip(names, codes):`)
            .chain(
                m.loops
                    .iter()
                    .filter(|k| {
                        in_body(k.span)
                            && k.span.start > c.span.end
                            && k.iter.is_some_and(|i| {
                                super::words(m.text(i)).any(|w| names.contains(&w))
                            })
                    })
                    .flat_map(|k| k.targets.iter().map(|t| m.text(*t))),
            )
            // a buffer it is appended to (`emb_buf.append(feats_np)`)
            .chain(
                m.calls
                    .iter()
                    .filter(|k| {
                        in_body(k.span)
                            && k.span.start > c.span.end
                            && matches!(m.last_name(k), "append" | "extend")
                            && super::words(m.text(k.args_span)).any(|w| names.contains(&w))
                    })
                    .filter_map(|k| k.recv.map(|r| m.text(r))),
            )
            .filter(|t| !names.contains(t))
            .collect();
        if more.is_empty() {
            break;
        }
        names.extend(more);
    }
    let uses = |text: &str| super::words(text).any(|w| names.contains(&w));
    // as an argument, or as the object written (`img = to_pil(out.cpu())` ... `img.save(p)`)
    if m.calls.iter().any(|k| {
        in_body(k.span)
            && is_sink(k)
            && k.span.start > c.span.end
            && (uses(m.text(k.args_span)) || k.recv.is_some_and(|r| names.contains(&m.text(r))))
    }) {
        return true;
    }
    // collected per window and written once per item of the loop around the step loop
    // (`for start in windows: feats.append(net(x).cpu().numpy())`, then `np.save(path,
    // np.concatenate(feats))` in the same iteration over videos): the item's product. Not
    // when the step loop itself walks the data (features of a whole dataset saved per model)
    let Some(outer) = l.parent.and_then(|p| m.loops.get(p as usize)) else {
        return false;
    };
    // (also per file of a folder: `for folder in flow_folders:` ... windows ... `np.save`)
    if iterates_batches(m, l)
        || !(iterates_batches(m, outer) || crate::analysis::resolve::is_record_loop(m, outer))
    {
        return false;
    }
    // (the read itself appended, or a value computed from it: `feats_np = out.cpu().numpy()`
    // ... `all_features.append(feats_np)`)
    let mut collected: Vec<&str> = m
        .calls
        .iter()
        .filter(|k| {
            in_body(k.span)
                && matches!(m.last_name(k), "append" | "extend")
                && (k.args_span.contains(c.span)
                    || (k.span.start > c.span.end
                        && m.pos(k, 0)
                            .is_some_and(|a| names.contains(&m.text(a.value)))))
        })
        .filter_map(|k| k.recv.map(|r| m.text(r)))
        .collect();
    // and what the outer loop derives from the list (`feats = np.concatenate(all_features)`)
    for _ in 0..2 {
        let more: Vec<&str> = m
            .assigns
            .iter()
            .filter(|a| {
                outer.span.contains(a.span)
                    && a.span.start >= l.span.end
                    && a.targets.len() == 1
                    && super::words(m.text(a.value)).any(|w| collected.contains(&w))
            })
            .map(|a| m.text(a.left))
            .filter(|n| !collected.contains(n))
            .collect();
        if more.is_empty() {
            break;
        }
        collected.extend(more);
    }
    !collected.is_empty()
        && m.calls.iter().any(|k| {
            outer.span.contains(k.span)
                && k.span.start >= l.span.end
                && is_sink(k)
                && super::words(m.text(k.args_span)).any(|w| collected.contains(&w))
        })
}

/// The name whose tensor a read's receiver holds: the receiver's first name
/// (`out["boxes"].cpu()`), or, when that is torch itself, the first argument of the torch
/// function the receiver starts with (`torch.max(out, 1)[1].numpy()`: `out`, whose device the
/// result keeps).
fn tensor_root<'s>(
    m: &crate::analysis::facts::Model<'s>,
    c: &crate::analysis::facts::Call,
) -> Option<&'s str> {
    let r = c.recv_root?;
    let name = m.text(r);
    if !m.imports.get(name).is_some_and(|q| q.starts_with("torch")) {
        return Some(name);
    }
    let inner = m
        .calls
        .iter()
        .filter(|k| k.span.start == r.start && k.span != c.span && c.span.contains(k.span))
        .min_by_key(|k| k.span.end - k.span.start)?;
    let arg = m.pos(inner, 0)?;
    super::words(m.text(arg.value)).next()
}

/// Is the receiver of `c` a plain function call (`loss_func(logits, y)`, `F.mse_loss(a, b)`)
/// whose arguments are all names holding host values: copied to the host earlier in the loop
/// body, or a loader's batch not yet moved?
fn host_call_result(
    m: &crate::analysis::facts::Model<'_>,
    l: &crate::analysis::facts::Loop,
    c: &crate::analysis::facts::Call,
) -> bool {
    let Some(r) = c.recv_call.and_then(|i| m.calls.get(i as usize)) else {
        return false;
    };
    let args = m.call_args(r);
    r.method.is_none()
        && r.splat.is_none()
        && !r.star
        && !args.is_empty()
        && args.iter().all(|a| {
            let name = m.text(a.value);
            a.vkind == crate::analysis::facts::ValKind::Ident
                && (on_host(m, l, c, name)
                    || (l.targets.iter().any(|t| m.text(*t) == name) && !moved_in_loop(m, l, name))
                    || loader_host_value(m, c, name))
        })
}

/// Is expression `n` (the receiver of a read at call `c` in step loop `l`) computed on the
/// host: see [`place`].
// Ex) for i, negCount in enumerate(negCounts): negIx = (torch.sum(negCounts[:i]) + n).item()
fn host_expr(
    m: &crate::analysis::facts::Model<'_>,
    l: &crate::analysis::facts::Loop,
    c: &crate::analysis::facts::Call,
    n: tree_sitter::Node<'_>,
) -> bool {
    matches!(place(m, l, c, n, 0), Place::Host | Place::Copied)
}

/// Where an expression's value lives, as far as [`place`] can tell.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    /// A Python literal: it takes the place of what it is combined with.
    Literal,
    /// Host memory, as the engine reads the names involved (a loader's batch may still have
    /// been moved by its collate function).
    Host,
    /// A copy to the host made in the iteration (`.cpu()`, `.numpy()`): host memory for sure.
    Copied,
    /// Placed on the GPU as written (`.cuda()`, `torch.tensor(x, device='cuda')`): whatever a
    /// host copy meets it in is not known to be on the host.
    Device,
    Unknown,
}

/// Where the value of expression `n` (in step loop `l`, before call `c`) lives: host memory for
/// names holding host values ([`on_host`], a loader's batch not yet moved, a name bound earlier
/// in the iteration to a host expression; the counter of an inner `range` or `enumerate` loop
/// and a value read back with `.item()` / `.tolist()` are Python numbers, which mix with
/// tensors anywhere), a `.cpu()` / `.numpy()` copy, items and methods of host values, `torch` /
/// `numpy` functions of host values and literals that place nothing on a device, and
/// arithmetic or comparisons with a host tensor (PyTorch refuses to mix a CPU tensor with a
/// CUDA one: `(flow_pr - flow_gt)` with `flow_pr` copied to the host is on the host).
fn place(
    m: &crate::analysis::facts::Model<'_>,
    l: &crate::analysis::facts::Loop,
    c: &crate::analysis::facts::Call,
    n: tree_sitter::Node<'_>,
    depth: u8,
) -> Place {
    // (deep enough for a metric a dozen steps from the copy: `out = (epe.flatten() > 1.0)`
    // from `epe = torch.sum((flow_pr - flow_gt)**2, dim=0).sqrt()` from `flow_pr = ...cpu()`)
    if depth > 24 {
        return Place::Unknown;
    }
    let of = |x: Option<tree_sitter::Node<'_>>| {
        x.map_or(Place::Unknown, |x| place(m, l, c, x, depth + 1))
    };
    // arithmetic: a copy made on the host makes the result a host tensor (PyTorch would refuse
    // a CUDA operand); otherwise every operand must be on the host (or a literal)
    let combine = |places: &[Place]| {
        if places.contains(&Place::Device) {
            Place::Unknown
        } else if places.contains(&Place::Copied) {
            Place::Copied
        } else if places.iter().all(|p| *p == Place::Literal) {
            Place::Literal
        } else if places
            .iter()
            .all(|p| matches!(p, Place::Host | Place::Literal))
        {
            Place::Host
        } else {
            Place::Unknown
        }
    };
    match n.node_kind() {
        "integer" | "float" | "true" | "false" | "none" | "string" => Place::Literal,
        "identifier" => {
            let name = m.node_text(n);
            if counter(m, l, c, name) {
                return Place::Literal;
            }
            // the last binding earlier in the iteration (`out = (epe_flattened > 1.0)`; a
            // Python number read back, `n = mask.sum().item()`, mixes with tensors anywhere)
            // (not one added to since, `momentum_norm = 0` then `momentum_norm += x.norm(2)`)
            let bound = m
                .assigns
                .iter()
                .filter(|a| {
                    l.span.contains(a.span)
                        && a.span.end <= n.start_byte()
                        && a.targets.len() == 1
                        && m.text(a.left) == name
                })
                .last()
                .map(|a| {
                    if a.augmented {
                        Place::Unknown
                    } else {
                        of(m.node(a.value))
                    }
                });
            // (a binding that says nothing, `pred = torch.from_numpy(p).cuda()`, is the value:
            // not an earlier host binding of the same name)
            match bound {
                Some(p) => p,
                // (a host value the engine knows less of, `torch.tensor(values)` perhaps a
                // scalar, takes the device of what it meets)
                _ if on_host(m, l, c, name) => Place::Host,
                _ if unmoved_batch_value(m, l, c, name) => Place::Host,
                _ if moved_later(m, l, c, name) => Place::Host,
                _ => Place::Unknown,
            }
        }
        "parenthesized_expression" => of(n.named_child(0)),
        "subscript" => match of(n.child_by_field_name("value")) {
            p @ (Place::Host | Place::Copied) => p,
            _ => Place::Unknown,
        },
        "unary_operator" => of(n.child_by_field_name("argument")),
        "binary_operator" => combine(&[
            of(n.child_by_field_name("left")),
            of(n.child_by_field_name("right")),
        ]),
        "comparison_operator" => {
            let mut cur = n.walk();
            let parts: Vec<Place> = n.named_children(&mut cur).map(|x| of(Some(x))).collect();
            combine(&parts)
        }
        "call" => {
            let Some(k) = m.call_at(crate::analysis::facts::Span::of(n)) else {
                return Place::Unknown;
            };
            let last = m.last_name(k);
            if k.method.is_some() && matches!(last, "cpu" | "numpy") {
                return Place::Copied;
            }
            // (a Python number or list)
            if k.method.is_some() && matches!(last, "item" | "tolist") {
                return Place::Literal;
            }
            // (the GPU written out: `.cuda()`, `device='cuda'`, `.to(device)`)
            let gpu = |t: &str| (t.contains("cuda") || t.contains("device")) && !t.contains("cpu");
            if last == "cuda"
                || m.kw(k, "device").is_some_and(|a| gpu(m.text(a.value)))
                || (last == "to" && m.pos(k, 0).is_some_and(|a| gpu(m.text(a.value))))
            {
                return Place::Device;
            }
            if matches!(last, "to" | "cuda")
                || m.kw(k, "device").is_some()
                || k.splat.is_some()
                || k.star
            {
                return Place::Unknown;
            }
            let q = m.qual(k);
            // (options that shape the result place nothing: `dim=1`, `dtype=torch.int64`)
            let args: Vec<Place> = m
                .call_args(k)
                .iter()
                .filter(|a| {
                    a.name.is_none_or(|n| {
                        !matches!(m.text(n), "dim" | "dtype" | "keepdim" | "axis" | "keepdims")
                    })
                })
                .map(|a| of(m.node(a.value)))
                .collect();
            match (k.method, k.recv) {
                // `torch.sum(x)`, `np.abs(x)`: a library function of host values and literals
                _ if k.dotted
                    && (q.starts_with("torch.") || q.starts_with("numpy."))
                    && !q.starts_with("torch.cuda.") =>
                {
                    match combine(&args) {
                        Place::Literal if !args.is_empty() => Place::Host,
                        Place::Literal => Place::Unknown,
                        p => p,
                    }
                }
                // `x.float()`, `x.sum()`: a method of a host value
                (Some(_), Some(r)) => {
                    let mut all = args;
                    all.push(of(m.node(r)));
                    match combine(&all) {
                        Place::Literal => Place::Unknown,
                        p => p,
                    }
                }
                // `compute_mse(pred, alpha, trimap)` with `pred` a `.cpu().numpy()` copy: a
                // metric helper handed a host copy computes on the host (a NumPy array cannot
                // meet a CUDA tensor); a forward pass of a model is not such a helper
                // (not one also handed a tensor placed on the GPU: it may compute there)
                (None, None)
                    if args.contains(&Place::Copied)
                        && !args.contains(&Place::Device)
                        && !crate::analysis::resolve::is_model_call(m, k) =>
                {
                    Place::Copied
                }
                _ => Place::Unknown,
            }
        }
        _ => Place::Unknown,
    }
}

/// Is `name` unpacked earlier in the iteration of step loop `l` (`word_ids, word_mask =
/// batch`) and moved to the device only after call `c` (`word_mask = word_mask[:, :n].to(
/// self.device)`): until that move, it is the host tensor it was unpacked as.
// Ex) sen_len = torch.max(torch.sum(word_mask, dim=1)).item()  (word_mask moved on the next line)
fn moved_later(
    m: &crate::analysis::facts::Model<'_>,
    l: &crate::analysis::facts::Loop,
    c: &crate::analysis::facts::Call,
    name: &str,
) -> bool {
    let unpacked = m.assigns.iter().any(|a| {
        l.span.contains(a.span)
            && a.span.end <= c.span.start
            && a.targets.len() > 1
            && a.targets.iter().any(|t| m.text(*t) == name)
    });
    unpacked
        && m.assigns.iter().any(|a| {
            l.span.contains(a.span)
                && a.span.start >= c.span.end
                && a.targets.len() == 1
                && m.text(a.left) == name
                && a.rhs_call
                    .and_then(|i| m.calls.get(i as usize))
                    .is_some_and(|k| {
                        matches!(m.last_name(k), "to" | "cuda")
                            && k.recv_root.is_some_and(|r| m.text(r) == name)
                    })
        })
}

/// Is `name` the counter of a loop between call `c` and step loop `l` (`for n in
/// range(k):`, the index of `for i, x in enumerate(xs):`): a Python integer?
fn counter(
    m: &crate::analysis::facts::Model<'_>,
    l: &crate::analysis::facts::Loop,
    c: &crate::analysis::facts::Call,
    name: &str,
) -> bool {
    let mut cur = c.ctx.loop_;
    for _ in 0..64 {
        let Some(inner) = cur.and_then(|i| m.loops.get(i as usize)) else {
            return false;
        };
        if std::ptr::eq(inner, l) {
            return false;
        }
        let it = inner.iter.map(|i| m.text(i)).unwrap_or("");
        let first = inner
            .targets
            .iter()
            .min_by_key(|t| t.start)
            .map(|t| m.text(*t));
        if (it.starts_with("range(") && inner.targets.len() == 1 && first == Some(name))
            || (it.starts_with("enumerate(") && first == Some(name))
        {
            return true;
        }
        cur = inner.parent;
    }
    false
}

/// Is `name`, at call `c` inside step loop `l`, a value already copied to the host: bound
/// earlier in the loop body from a `.cpu()` / `.numpy()` / `.tolist()` / `.item()` read (or
/// methods of a `.cpu()` copy: `pred.eq(y).cpu().sum()`), or the
/// target of an inner loop over such a value (`for box in boxes:`, `zip(scores, boxes)`) or
/// over a batch value the loader yields and the loop never moves?
fn on_host(
    m: &crate::analysis::facts::Model<'_>,
    l: &crate::analysis::facts::Loop,
    c: &crate::analysis::facts::Call,
    name: &str,
) -> bool {
    let copied = |n: &str| copied_to_host(m, l, c.span.start, n, 3);
    if copied(name) {
        return true;
    }
    // the target of a loop between `c` and the step loop, over a copied value
    let mut cur = c.ctx.loop_;
    for _ in 0..64 {
        let Some(i) = cur else { return false };
        let Some(inner) = m.loops.get(i as usize) else {
            return false;
        };
        if std::ptr::eq(inner, l) {
            return false;
        }
        if inner.targets.iter().any(|t| m.text(*t) == name) {
            // (also over a batch value from the loader never moved: `for ques_id, topk_id in
            // zip(question_id, topk_ids):` ... `ques_id.item()`)
            return m
                .node(inner.span)
                .and_then(|f| loop_source(m, f, name))
                .is_some_and(|s| {
                    s.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
                        && (copied(s) || unmoved_batch_value(m, l, c, s))
                });
        }
        cur = inner.parent;
    }
    false
}

/// What `for` statement `f` binds `name` to: the iterable of a plain target (`for box in
/// boxes:`), the `zip` argument at the target's place (`for s, b in zip(scores, boxes):`), also
/// under `enumerate` (`for i, (p, c) in enumerate(zip(probs, classes)):`).
fn loop_source<'s, 't>(
    m: &crate::analysis::facts::Model<'s>,
    f: tree_sitter::Node<'t>,
    name: &str,
) -> Option<&'s str> {
    let mut left = f.child_by_field_name("left")?;
    let mut right = f.child_by_field_name("right")?;
    let parts = |n: tree_sitter::Node<'t>| -> Vec<tree_sitter::Node<'t>> {
        let n = crate::analysis::facts::unparen(n);
        let mut cur = n.walk();
        match n.node_kind() {
            "pattern_list" | "tuple_pattern" | "list_pattern" | "tuple" | "list" => {
                n.named_children(&mut cur).collect()
            }
            _ => vec![n],
        }
    };
    let call_of = |n: tree_sitter::Node<'t>, func: &str| -> Option<Vec<tree_sitter::Node<'t>>> {
        (n.node_kind() == "call"
            && n.child_by_field_name("function")
                .is_some_and(|x| m.node_text(x) == func))
        .then(|| n.child_by_field_name("arguments"))
        .flatten()
        .map(|a| {
            let mut cur = a.walk();
            a.named_children(&mut cur).collect::<Vec<_>>()
        })
    };
    if let Some(args) = call_of(right, "enumerate") {
        let ps = parts(left);
        let (Some(first), [_, second]) = (args.first(), ps.as_slice()) else {
            return None;
        };
        right = *first;
        left = *second;
    }
    if left.node_kind() == "identifier" {
        return (m.node_text(left) == name).then(|| m.node_text(right));
    }
    let args = call_of(right, "zip")?;
    let pos = parts(left)
        .iter()
        .position(|p| p.node_kind() == "identifier" && m.node_text(*p) == name)?;
    args.get(pos).map(|a| m.node_text(*a))
}

/// Is expression text `v` a copy to the host: it ends in a read (`.cpu()`, `.numpy()`,
/// `.tolist()`, `.item()`), or applies methods to a `.cpu()` copy (`pred.eq(y).cpu().sum()`:
/// they stay on the host)?
fn reads_to_host(v: &str) -> bool {
    let v = v.trim_end();
    [".cpu()", ".numpy()", ".tolist()", ".item()"]
        .iter()
        .any(|r| v.ends_with(r))
        || v.rfind(".cpu()").is_some_and(|i| {
            let rest = v.get(i + ".cpu()".len()..).unwrap_or("");
            rest.starts_with('.')
                && !rest.contains(".to(")
                && !rest.contains(".cuda(")
                && !rest.contains(['[', ' ', '+', '*', '/', '-'])
        })
}

/// Is `name` bound in step loop `l`'s body before byte `at` to a host value: a `.cpu()` /
/// `.numpy()` / `.tolist()` / `.item()` read, methods of a `.cpu()` copy
/// (`pred.eq(y).cpu().sum()`), or — up to `depth` steps back — a function of host values only
/// (`predict = torch.softmax(output, dim=1)`, `probs, classes = torch.max(predict, dim=1)`
/// with `output = model(x).cpu()`), or a method of one (`output.argmax(1)`), or a file read
/// into host memory (`waveform, sr = torchaudio.load(path)`)?
fn copied_to_host(
    m: &crate::analysis::facts::Model<'_>,
    l: &crate::analysis::facts::Loop,
    at: usize,
    name: &str,
    depth: u8,
) -> bool {
    m.assigns.iter().any(|a| {
        if !l.span.contains(a.span)
            || a.span.end > at
            || a.augmented
            || !a.targets.iter().any(|t| m.text(*t) == name)
        {
            return false;
        }
        let v = m.text(a.value);
        // (the whole value is the read: not `torch.sum(x) / torch.sum(mask).item()`)
        let whole_read = a
            .rhs_call
            .and_then(|i| m.calls.get(i as usize))
            .is_some_and(|r| r.span == a.value);
        if a.targets.len() == 1 && whole_read && reads_to_host(v) {
            return true;
        }
        if depth == 0 {
            return false;
        }
        let Some(r) = a.rhs_call.and_then(|i| m.calls.get(i as usize)) else {
            return false;
        };
        if r.span != a.value || r.splat.is_some() || r.star {
            return false;
        }
        // `torch.tensor(decode(ids.cpu().numpy()))`, `torch.from_numpy(arr)` without a device:
        // a tensor built on the host from host data
        if matches!(
            &*m.qual(r),
            "torch.tensor" | "torch.as_tensor" | "torch.from_numpy" | "torch.Tensor"
        ) && m.kw(r, "device").is_none()
        {
            return true;
        }
        // `waveform, sr = torchaudio.load(path)`: a file read into host memory
        if matches!(
            &*m.qual(r),
            "torchaudio.load" | "librosa.load" | "soundfile.read" | "numpy.load"
        ) {
            return true;
        }
        let host = |n: &str| copied_to_host(m, l, a.span.start, n, depth - 1);
        let q = m.qual(r);
        match r.recv.filter(|_| r.method.is_some()) {
            // `output.argmax(1)`: a method of a host name, not a move
            Some(recv)
                if m.node(recv).is_some_and(|n| n.node_kind() == "identifier")
                    && host(m.text(recv)) =>
            {
                !matches!(m.last_name(r), "to" | "cuda")
            }
            // a method of anything else (`self.head(x)`, `out.to(device)`): not known
            Some(_) if !(q.starts_with("torch.") || q.starts_with("numpy.")) => false,
            // `torch.softmax(output, dim=1)`, `criterion(out, y)`: every positional argument a
            // host name
            _ => {
                let args = m.call_args(r);
                let pos: Vec<_> = args.iter().filter(|x| x.name.is_none()).collect();
                // (or a copy itself: `psnr = mse_to_psnr(loss.detach().cpu())`); not a call
                // that places its result (`torch.tensor(n, device=device)`)
                !pos.is_empty()
                    && m.kw(r, "device").is_none()
                    && pos.iter().all(|x| {
                        let t = m.text(x.value);
                        (x.vkind == crate::analysis::facts::ValKind::Ident && host(t))
                            || (x.vkind == crate::analysis::facts::ValKind::Call
                                && reads_to_host(t))
                    })
            }
        }
    })
}

/// Does the chain of methods `c` reads (`y.sum().item()`, `(y > 0).float().mean().item()`)
/// keep a host tensor on the host: no `.to(...)` / `.cuda()` in it, only methods of the tensor?
fn stays_on_host(m: &crate::analysis::facts::Model<'_>, c: &crate::analysis::facts::Call) -> bool {
    let mut cur = c.recv_call;
    for _ in 0..16 {
        let Some(r) = cur.and_then(|i| m.calls.get(i as usize)) else {
            return true;
        };
        if r.method.is_none() || matches!(m.last_name(r), "to" | "cuda") {
            return false;
        }
        cur = r.recv_call;
    }
    false
}

/// Does the chain `c` reads start at a tensor built without a device from a Python list the
/// file keeps (`torch.Tensor(losses)` with `losses = deque()` or `[]`): a host tensor?
// Ex) pbar.set_postfix({'loss': torch.Tensor(losses).mean().item()})
fn host_list_tensor(
    m: &crate::analysis::facts::Model<'_>,
    c: &crate::analysis::facts::Call,
) -> bool {
    let mut cur = c.recv_call;
    for _ in 0..16 {
        let Some(r) = cur.and_then(|i| m.calls.get(i as usize)) else {
            return false;
        };
        if r.method.is_some() && r.recv_call.is_some() {
            cur = r.recv_call;
            continue;
        }
        let ctor = matches!(
            &*m.qual(r),
            "torch.Tensor" | "torch.tensor" | "torch.as_tensor" | "torch.FloatTensor"
        );
        let [arg] = m.call_args(r) else {
            return false;
        };
        let name = m.text(arg.value);
        let mut bound = m
            .assigns
            .iter()
            .filter(|a| a.targets.len() == 1 && m.text(a.left) == name)
            .peekable();
        return ctor
            && m.kw(r, "device").is_none()
            && arg.name.is_none()
            && bound.peek().is_some()
            && bound.all(|a| {
                let v = m.text(a.value).replace(' ', "");
                !a.augmented
                    && matches!(
                        v.as_str(),
                        "[]" | "list()" | "deque()" | "collections.deque()"
                    )
            });
    }
    false
}

/// Is `name`, at call `c` in step loop `l`, a batch value still on the host: the step loop's
/// own target, never moved in it (and not an output of the model the loop iterates), or a part
/// of a batch a loader yielded ([`loader_host_value`])?
fn unmoved_batch_value(
    m: &crate::analysis::facts::Model<'_>,
    l: &crate::analysis::facts::Loop,
    c: &crate::analysis::facts::Call,
    name: &str,
) -> bool {
    (l.targets.iter().any(|t| m.text(*t) == name)
        && !moved_in_loop(m, l, name)
        && !iterates_model_output(m, l))
        || loader_host_value(m, c, name)
}

/// Is `name`, at call `c`, a part of a batch a loader yielded in this iteration of a loop
/// around `c` and not yet moved: the loop's target, or a name unpacked or indexed from it before
/// `c` (`for data in loader: inputs, labels, name = data` ... `inputs.numpy()`, also from an
/// inner loop over windows of the clip)? Loader batches are CPU tensors until moved.
fn loader_host_value(
    m: &crate::analysis::facts::Model<'_>,
    c: &crate::analysis::facts::Call,
    name: &str,
) -> bool {
    let mut cur = c.ctx.loop_;
    for _ in 0..64 {
        let Some(l) = cur.and_then(|i| m.loops.get(i as usize)) else {
            return false;
        };
        cur = l.parent;
        if !iterates_batches(m, l) {
            continue;
        }
        let before = |a: &&crate::analysis::facts::Assign| {
            l.span.contains(a.span) && a.span.end <= c.span.start
        };
        let mut names: Vec<&str> = l.targets.iter().map(|t| m.text(*t)).collect();
        for a in m.assigns.iter().filter(before) {
            let v = m.text(a.value).trim();
            let part_of = |n: &&str| {
                v == *n
                    || v.strip_prefix(*n)
                        .is_some_and(|r| r.starts_with('[') || r.starts_with('.'))
            };
            if !a.augmented && !v.contains('(') && names.iter().any(part_of) {
                names.extend(a.targets.iter().map(|t| m.text(*t)));
            } else if v.contains('(') || v.contains("device") {
                // rebound from a call (`batch = tuple(t.to(device) for t in batch)`): what is
                // unpacked from it afterwards is no longer the loader's CPU tensor
                names.retain(|n| !a.targets.iter().any(|t| m.text(*t) == *n));
            }
        }
        if !names.contains(&name) {
            continue;
        }
        // moved (or rebound from anything else) before `c`, or its items moved (`targets[k] =
        // v.to(device)`): no longer the loader's CPU tensor
        return !m.assigns.iter().filter(before).any(|a| {
            binds_or_fills(m, a, name) && {
                let v = m.text(a.value);
                v.contains('(') || v.contains("device")
            }
        });
    }
    false
}

/// Does loop `l` iterate a loader, or one of a dict of them (`for data in
/// dataloaders[phase]:`)?
fn iterates_batches(
    m: &crate::analysis::facts::Model<'_>,
    l: &crate::analysis::facts::Loop,
) -> bool {
    l.info.iterates_loader.is_some()
        || l.iter.is_some_and(|it| {
            m.text(it).split_once('[').is_some_and(|(base, _)| {
                m.var_kind(base) == Some(crate::analysis::facts::VarKind::Loader)
            })
        })
}

/// Is `name` (re)bound inside the loop from a `.to(...)` / `.cuda(...)` expression, or are its
/// items (`for k, v in targets.items(): targets[k] = v.to(device)`)?
fn moved_in_loop(
    m: &crate::analysis::facts::Model<'_>,
    l: &crate::analysis::facts::Loop,
    name: &str,
) -> bool {
    let first = m.assigns.partition_point(|a| a.span.start < l.span.start);
    m.assigns
        .get(first..)
        .unwrap_or(&[])
        .iter()
        .take_while(|a| a.span.start < l.span.end)
        .any(|a| {
            binds_or_fills(m, a, name) && {
                let v = m.text(a.value);
                v.contains(".to(") || v.contains(".cuda(") || v.contains("device")
            }
        })
}

/// Does step loop `li` decode with `model.generate(...)`?
fn generate_loop(m: &crate::analysis::facts::Model<'_>, li: u32) -> bool {
    let Some(l) = m.loops.get(li as usize) else {
        return false;
    };
    let decoding = |c: &crate::analysis::facts::Call| {
        m.last_name(c) == "generate"
            && !m.dead(&c.ctx)
            && (((crate::analysis::resolve::is_model_call(m, c) || unwrapped_model(m, c))
                && decodes_tokens(m, c))
                || decoder_object(m, c))
    };
    // a `generate()` every N steps (a training loop sampling now and then) decodes nothing in
    // the other steps; also one in a function of the file the loop calls every step (an RL
    // fine-tune's `rollout(model, tokenizer, q, ...)`)
    // Ex) for q, a in zip(...): sequence_ids, returns, ... = rollout(model, tokenizer, q, a, ...)
    let decoders: Vec<&str> = m
        .funcs
        .iter()
        .enumerate()
        .filter(|(fi, _)| {
            m.calls.iter().any(|c| {
                c.ctx.func == u32::try_from(*fi).ok() && c.ctx.loop_.is_none() && decoding(c)
            })
        })
        .map(|(_, f)| m.text(f.name))
        .collect();
    m.calls.iter().any(|c| {
        l.span.contains(c.span)
            && !(c.ctx.mod_guard && c.ctx.loop_ == Some(li))
            && (decoding(c)
                || (c.method.is_none() && !m.dead(&c.ctx) && decoders.contains(&m.text(c.func))))
    })
}

/// Does this `generate(...)` decode tokens: a decoding option (`max_new_tokens=`, `do_sample=`,
/// ...), a splat of the tokenizer's output (`**inputs`), or inputs named for ids, tokens,
/// features or prompts? A GAN's `generator.generate(batch_size, device)` samples images in one
/// pass, reading nothing back.
fn decodes_tokens(m: &crate::analysis::facts::Model<'_>, c: &crate::analysis::facts::Call) -> bool {
    const OPTIONS: &[&str] = &[
        "max_new_tokens",
        "max_length",
        "min_length",
        "do_sample",
        "num_beams",
        "temperature",
        "top_k",
        "top_p",
        "eos_token_id",
        "pad_token_id",
        "generation_config",
        "streamer",
        "attention_mask",
        "input_ids",
        "inputs",
        "input_features",
        "num_return_sequences",
        "use_cache",
    ];
    if c.splat.is_some() || c.star {
        return true;
    }
    m.call_args(c).iter().any(|a| match a.name {
        Some(n) => OPTIONS.contains(&m.text(n)),
        None => {
            let t = m.text(a.value).to_ascii_lowercase();
            [
                "input", "ids", "token", "prompt", "feature", "idx", "context", "encod",
            ]
            .iter()
            .any(|w| t.contains(w))
        }
    })
}

/// `beam_search.generate(src, src_lens)` with `beam_search = BeamSearchLSTM(model, tokenizer,
/// beam_size=4)`: a decoder the file builds around the model (a beam or greedy search, a
/// translator), which reads every token back as it decodes.
fn decoder_object(m: &crate::analysis::facts::Model<'_>, c: &crate::analysis::facts::Call) -> bool {
    use crate::analysis::facts::VarKind;
    let Some(recv) = c.recv.map(|r| m.text(r)) else {
        return false;
    };
    m.assigns.iter().any(|a| {
        a.targets.len() == 1
            && !a.augmented
            && m.text(a.left) == recv
            && a.rhs_call
                .and_then(|i| m.calls.get(i as usize))
                .is_some_and(|b| {
                    let class = m.last_name(b).to_ascii_lowercase();
                    ["beam", "search", "decod", "translat", "greedy"]
                        .iter()
                        .any(|w| class.contains(w))
                        && m.call_args(b)
                            .iter()
                            .any(|x| m.var_kind(m.text(x.value)) == Some(VarKind::Model))
                })
    })
}

/// `accelerator.unwrap_model(model).generate(...)`: `generate` on a call that hands a model
/// variable through (an unwrapping helper) is still the model's.
fn unwrapped_model(
    m: &crate::analysis::facts::Model<'_>,
    c: &crate::analysis::facts::Call,
) -> bool {
    use crate::analysis::facts::VarKind;
    c.recv_call
        .and_then(|i| m.calls.get(i as usize))
        .is_some_and(|r| {
            m.call_args(r)
                .iter()
                .any(|a| m.var_kind(m.text(a.value)) == Some(VarKind::Model))
        })
}

/// Does assignment `a` bind `name`, or write one of its items (`targets[k] = ...`)?
fn binds_or_fills(
    m: &crate::analysis::facts::Model<'_>,
    a: &crate::analysis::facts::Assign,
    name: &str,
) -> bool {
    a.targets.iter().any(|t| m.text(*t) == name)
        || m.text(a.left)
            .strip_prefix(name)
            .is_some_and(|rest| rest.starts_with('['))
}
