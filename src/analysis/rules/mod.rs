//! The rule registry: one rule per file, one static slice.

use super::facts::{Call, Device, Model};
use super::model::CodeKind;
use super::rule::Rule;

mod dataloader_pin_memory;
mod dataloader_workers;
mod host_sync;

/// Every rule, in id order.
pub static RULES: &[&dyn Rule] = &[
    &dataloader_workers::DataloaderWorkers,
    &dataloader_pin_memory::DataloaderPinMemory,
    &host_sync::HostSync,
];

/// Where a call sits relative to the step loop that encloses it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StepCtx {
    /// The step loop.
    pub loop_: u32,
    /// Under an `if` inside the step loop.
    pub under_if: bool,
    /// Under a `% N` guard inside the step loop.
    pub mod_guard: bool,
    /// The step loop trains.
    pub train: bool,
}

/// The step loop enclosing a call (through inner non-step loops, never across an epoch loop).
pub(crate) fn step_ctx(m: &Model<'_>, c: &Call) -> Option<StepCtx> {
    let mut under_if = c.ctx.under_if;
    let mut mod_guard = c.ctx.mod_guard;
    let mut cur = c.ctx.loop_;
    for _ in 0..256 {
        let i = cur?;
        let l = m.loops.get(i as usize)?;
        if l.info.step {
            return Some(StepCtx {
                loop_: i,
                under_if,
                mod_guard,
                train: l.info.train,
            });
        }
        if l.info.epoch {
            return None;
        }
        under_if |= l.ctx.under_if;
        mod_guard |= l.ctx.mod_guard;
        cur = l.parent;
    }
    None
}

pub(crate) fn cuda(m: &Model<'_>) -> bool {
    m.facts.device == Device::Cuda
}

pub(crate) fn trains_or_infers(m: &Model<'_>) -> bool {
    matches!(m.kind, CodeKind::Train | CodeKind::Infer)
}
