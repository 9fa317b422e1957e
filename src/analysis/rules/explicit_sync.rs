use crate::analysis::facts::NodeKind;
use crate::analysis::facts::{Call, Model};
use crate::analysis::rule::{Checker, Rule, RuleMeta};
use crate::declare_rule;

declare_rule! {
    /// ## What it does
    /// Flags `torch.cuda.synchronize()` and `torch.cuda.empty_cache()` inside a step loop, when
    /// not under a `step % N == 0` guard (in a file whose work runs on the CPU or MPS as
    /// shipped both do nothing, and are not reported). A `synchronize()` followed at once by a clock read
    /// (`time.time()`, `time.perf_counter()`, ..., also inside the next call, `batch_time.update(time.time() - end)`,
    /// or after an `if` whose other branch syncs another accelerator, `elif device == 'mps':
    /// torch.mps.synchronize()`) or by CUDA event timing (`torch.cuda.Event(
    /// enable_timing=True)`, `start.elapsed_time(end)`) times the step: it is measurement, not
    /// waste.
    ///
    /// Reported on the line of the `torch.cuda.synchronize()` call.
    ///
    /// ## Why is this slow?
    /// `synchronize()` blocks the host until the GPU has finished all queued work, so the next
    /// step's kernels cannot be queued ahead and the GPU idles between steps. `empty_cache()`
    /// also synchronises and throws away the caching allocator's blocks, which the next step
    /// must allocate again with `cudaMalloc`.
    ///
    /// ## Example
    /// ```python
    /// import torch
    ///
    /// torch.set_float32_matmul_precision("high")
    /// for x, y in train_loader:
    ///     with torch.autocast("cuda", dtype=torch.bfloat16):
    ///         loss = criterion(model(x), y)
    ///     loss.backward()
    ///     optimizer.step()
    ///     torch.cuda.synchronize()
    /// ```
    ///
    /// Use instead:
    /// ```python
    /// import torch
    ///
    /// torch.set_float32_matmul_precision("high")
    /// for x, y in train_loader:
    ///     with torch.autocast("cuda", dtype=torch.bfloat16):
    ///         loss = criterion(model(x), y)
    ///     loss.backward()
    ///     optimizer.step()
    /// ```
    ///
    /// ## Fix safety
    /// No automatic fix: a synchronize may be there on purpose to time steps; time with CUDA
    /// events or every N steps instead.
    pub(crate) struct ExplicitSync {
        id: "EA302",
        name: "cuda-synchronize-in-step-loop",
        category: ExplicitSync,
        resource: Gpu,
        severity: Medium,
    }
}

impl Rule for ExplicitSync {
    fn meta(&self) -> &'static RuleMeta {
        &Self::META
    }

    // fires in a step or record loop, or on a file's kind: nothing beyond the engine's triggers
    fn triggers(&self) -> crate::analysis::prefilter::Triggers {
        crate::analysis::prefilter::Triggers::Engine
    }

    fn check(&self, cx: &mut Checker<'_>) {
        let m = cx.m;
        // (on a file whose work runs on the CPU or MPS as shipped, CUDA's calls do nothing)
        if matches!(
            m.facts.device,
            crate::analysis::facts::Device::Cpu | crate::analysis::facts::Device::Mps
        ) {
            return;
        }
        for c in &m.calls {
            let last = m.last_name(c);
            if !matches!(last, "synchronize" | "empty_cache") || c.ctx.in_except {
                continue;
            }
            let q = m.qual(c);
            if !(q == "torch.cuda.synchronize" || q == "torch.cuda.empty_cache") {
                continue;
            }
            let Some(s) = super::step_ctx(m, c) else {
                continue;
            };
            if s.mod_guard || (last == "synchronize" && times_the_step(m, c)) {
                continue;
            }
            cx.at_call(
                &Self::META,
                c,
                format!("`torch.cuda.{last}()` every step stalls the host until the GPU drains its queue; remove it or run it every N steps"),
                None,
            );
        }
    }
}

/// Clock reads: a `synchronize()` right before one makes the reading include the GPU work.
const CLOCKS: &[&str] = &[
    "time.time",
    "time.time_ns",
    "time.perf_counter",
    "time.perf_counter_ns",
    "time.monotonic",
    "time.monotonic_ns",
    "timeit.default_timer",
];

/// Is the first call after `sync` in the same loop body a clock read (or does it hold one), or does the statement
/// after it time with CUDA events (`torch.cuda.Event(enable_timing=True)`, `start.record()`,
/// `start.elapsed_time(end)`)?
// Ex) torch.cuda.synchronize(); t0 = time.time(); outputs = model(images)
// Ex) torch.cuda.synchronize(); batch_time.update(time.time() - end)
// Ex) end.record(); torch.cuda.synchronize(); latencies.append(start.elapsed_time(end))
fn times_the_step(m: &Model<'_>, sync: &Call) -> bool {
    // (the other branches of the `if` the sync sits in do not run after it: `if device ==
    // 'cuda': torch.cuda.synchronize()` / `elif device == 'mps': torch.mps.synchronize()`)
    let skipped = other_branches(m, sync);
    let mut after: Vec<&Call> = m
        .calls
        .iter()
        .filter(|c| c.span.start >= sync.span.end && c.ctx.loop_ == sync.ctx.loop_)
        .filter(|c| !skipped.is_some_and(|(a, b)| a <= c.span.start && c.span.start < b))
        .collect();
    after.sort_by_key(|c| c.span.start);
    let Some(first) = after.first() else {
        return false;
    };
    let events = |c: &&Call| {
        c.span.start < first.span.end
            && matches!(m.last_name(c), "Event" | "record" | "elapsed_time")
            && (m.last_name(c) != "Event" || m.qual(c).starts_with("torch.cuda."))
    };
    // (the clock read may sit inside the first call: `batch_time.update(time.time() - end)`)
    let clock = |c: &&Call| c.span.start < first.span.end && CLOCKS.contains(&m.qual(c).as_ref());
    after.iter().any(clock) || after.iter().any(events)
}

/// The byte range of the `elif` / `else` branches that follow the branch holding call `c`
/// directly (its statement in the `if`'s own block).
fn other_branches(m: &Model<'_>, c: &Call) -> Option<(usize, usize)> {
    let stmt = m
        .node(c.span)?
        .parent()
        .filter(|p| p.node_kind() == "expression_statement")?;
    let b = crate::analysis::as_shipped::enclosing_branch(stmt)?;
    Some((b.block.end_byte(), b.top.end_byte()))
}
