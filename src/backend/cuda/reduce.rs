//! `reduce` and `fold` on the GPU (`kernels/reduce.cu`): a fixed grid, one partial a block,
//! the last block combining them in order.

use super::gpu::Gpu;
use super::key::{ReduceKey, Template};
use super::mem::{Buffer, Ptr};
use super::params::kernel_params;
use super::single_pass::{PARTIAL_BYTES, counter};
use super::tuning::{self, Arch};
use crate::error::Result;
use crate::op::Op;
use crate::source::Source;

kernel_params!(
    /// `ds_reduce`'s parameters: `partial` holds a compute value a block, `done` counts the
    /// blocks that finished, `result` gets the stored result.
    ReduceParams {
        n: u64,
        partial: Ptr,
        done: Ptr,
        result: Ptr,
    }
);

impl Template for ReduceKey {
    type Params = ReduceParams;
    const FILE: &'static str = "reduce.cu";
    const KERNEL: &'static str = "ds_reduce";
}

fn key(arch: &Arch, size: usize, op: Op) -> ReduceKey {
    let launch = tuning::REDUCE.launch(tuning::vec(size), tuning::reduce_min_blocks(arch, size));
    ReduceKey { launch, op }
}

/// The key for `src`: as `key`, but a lazy source of integers reads its narrowest stored
/// column in whole 16-byte vectors (`tuning::reduce_vec`), with fewer rounds, so that a thread
/// takes as many elements a tile; one that loops takes one element a thread and tile. Integer
/// operators are exact, so the grouping this changes gives the same bits as the stored copy's.
fn key_for(arch: &Arch, src: &Source, op: Op) -> ReduceKey {
    let ty = src.ty();
    let mut k = key(arch, ty.size(), op);
    if src.as_column().is_some() || ty.is_float() {
        return k;
    }
    if src.graph.loops() {
        // Elements that loop are work, not bytes: one a thread and tile, so that the grid's
        // threads share them evenly (at 256 elements, 256 threads rather than 32).
        k.launch.vec = 1;
        k.launch.items = 1;
    } else if let Some(leaf) = src.columns.iter().map(|c| c.ty.size()).min() {
        let l = &mut k.launch;
        let vec = tuning::reduce_vec(ty.size(), leaf);
        l.items = (l.items * l.vec / vec).max(1);
        l.vec = vec;
    }
    k
}

/// Queues the combination of the `n > 0` elements of `src` into `dst` (stored as their type).
/// The grid depends on `n` and the device alone (not on the kernel instance), so that every
/// source of the same elements gives the same bits.
pub(crate) fn reduce_into(gpu: &Gpu, src: &Source, op: Op, dst: Ptr) -> Result<()> {
    let key = key_for(&gpu.arch, src, op);
    let l = key.launch;
    let k = gpu.kernel(key, &[(src, l.vec)])?;
    let grid = l
        .shape()
        .tiles(src.len, l.vec)
        .min(gpu.arch.sms as u64 * l.minb as u64)
        .max(1);
    // One partial result per block (8 bytes each, the widest accumulator): in the stream's
    // buffer where the wave fits it.
    let bytes = 8 * grid as usize;
    let own = Buffer::new(&gpu.mem, if bytes > PARTIAL_BYTES { bytes } else { 0 })?;
    let partial = if bytes > PARTIAL_BYTES {
        own.ptr()
    } else {
        gpu.passes.partials()
    };
    let params = ReduceParams {
        n: src.len as u64,
        partial,
        done: gpu.passes.counter(counter::DONE),
        result: dst,
    };
    k.launch(grid, l.block, 0, &params)
}

/// As `reduce_into`, waiting for the result: its stored bits (the result goes to mapped host
/// memory, a zeroed slot: narrower results read as their bits, zero-extended).
pub(crate) fn reduce(gpu: &Gpu, src: &Source, op: Op) -> Result<u64> {
    let m = gpu.mem.mailbox()?;
    reduce_into(gpu, src, op, m.slot)?;
    gpu.mem.take_slot(m)
}

/// As `reduce_into`, into a new one-element buffer.
pub(crate) fn reduce_to_buffer(gpu: &Gpu, src: &Source, op: Op) -> Result<Buffer> {
    let out = Buffer::new(&gpu.mem, src.ty().size())?;
    reduce_into(gpu, src, op, out.ptr())?;
    Ok(out)
}

#[cfg(test)]
pub(crate) mod check {
    use super::*;
    use crate::backend::cuda::key::KernelKey;
    use crate::backend::cuda::source::SourceKey;
    use crate::item::ScalarType;

    /// The instances a compile check builds: every type and operator, aligned or not.
    pub(crate) fn variants(arch: &Arch) -> Vec<KernelKey> {
        let mut v = Vec::new();
        for ty in ScalarType::ALL {
            let vec = tuning::vec(ty.size());
            for op in Op::ALL.into_iter().filter(|o| o.applies_to(ty)) {
                for avec in [vec, 0] {
                    v.push(KernelKey {
                        functor: None,
                        family: key(arch, ty.size(), op).into(),
                        sources: vec![SourceKey::plain(ty, avec)],
                    });
                    if avec == 0 && op != Op::Add {
                        break;
                    }
                }
            }
        }
        v
    }

    /// The instances for lazy sources (integers read by their narrowest column): every operator.
    pub(crate) fn lazy_variants(arch: &Arch, srcs: &[Source]) -> Vec<KernelKey> {
        let mut v = Vec::new();
        for src in srcs {
            for op in Op::ALL.into_iter().filter(|o| o.applies_to(src.ty())) {
                let k = key_for(arch, src, op);
                v.push(KernelKey {
                    functor: None,
                    family: k.into(),
                    sources: vec![SourceKey::assuming(src, k.launch.vec)],
                });
            }
        }
        v
    }
}
