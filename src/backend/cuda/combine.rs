//! `scatter_combine` on the GPU: a stable sort of (index, value) on the bits the indices
//! need, then one single-pass kernel (`kernels/combine.cu`) that combines each run of equal
//! indices in order and writes its slot once; pairs of one tile in one launch, sorted by the
//! kernel's block. No atomics: float results are the same on every run.

use super::bounds::{BoundsCheck, index_error};
use super::gpu::Gpu;
use super::key::{CombineKey, CombineTileKey, Template};
use super::map::materialize;
use super::mem::{Buffer, Ptr, column_ptr};
use super::params::kernel_params;
use super::sort::{digit_passes, index_bits, sort_by_index, tile_smem};
use super::tuning::{self, Arch};
use crate::error::Result;
use crate::item::ScalarType;
use crate::op::Op;
use crate::source::Source;

kernel_params!(
    /// `ds_combine_runs`' parameters: the sorted pairs, the output (a copy of the base), and
    /// the sort's error word (nothing is written where it is set).
    CombineParams {
        keys: Ptr,
        vals: Ptr,
        out: Ptr,
        n: u64,
        err: Ptr,
        mail: Ptr,
        flag: Ptr,
        counter: Ptr,
        status: Ptr,
        base: u32,
        epoch: u32,
        tiles: u32,
    }
);

kernel_params!(
    /// `ds_combine_tile`'s parameters: as `CombineParams` for the runs (the sorted pairs in
    /// the block's shared memory; one tile, so no look-back's words), and the sort's digits
    /// (`lo`, `passes`) and bounds (`len`).
    CombineTileParams {
        out: Ptr,
        n: u64,
        mail: Ptr,
        flag: Ptr,
        lo: u32,
        passes: u32,
        copy: u64,
        len: u64,
    }
);

/// The most base elements a thread of `ds_combine_tile` copies (`copy`): a base of up to this
/// many rounds of the block is copied by the kernel, not by a copy queued first.
const COMBINE_COPY: usize = 8;

impl Template for CombineKey {
    type Params = CombineParams;
    const FILE: &'static str = "combine.cu";
    const KERNEL: &'static str = "ds_combine_runs";
}

impl Template for CombineTileKey {
    type Params = CombineTileParams;
    const FILE: &'static str = "combine.cu";
    const KERNEL: &'static str = "ds_combine_tile";
    /// The block sort's tile of (index, value) pairs (sources: indices, values, base).
    fn dynamic_smem(&self, types: &[ScalarType]) -> u32 {
        let size = types[1].size();
        tile_smem(
            self.launch.block,
            self.launch.items * tuning::vec(size),
            types[0].size(),
            Some(size),
        )
    }
}

/// Bytes of static shared memory the one-block scatter_combine keeps beside its tile (its block
/// scans' and sort's scratch; ptxas: 17 KB for 8-byte values), which its tile leaves free.
const TILE_STATIC: usize = 20 << 10;

/// The tile of scatter_combine's runs and of its one-block form (the same, so that both give the
/// same results): `tuning::combine`'s, with fewer rounds where the one block's tile of
/// (index, value) pairs would not fit the GPU's block beside its static shared memory.
fn shape(arch: &Arch, size: usize, idx: ScalarType) -> tuning::Shape {
    let mut sh = tuning::combine(size);
    let bytes = |sh: tuning::Shape| {
        tile_smem(
            sh.block,
            sh.rounds * tuning::vec(size),
            idx.size(),
            Some(size),
        ) as usize
    };
    while sh.rounds > 1 && bytes(sh) + TILE_STATIC > arch.smem_block {
        sh.rounds -= 1;
    }
    sh
}

fn tile_key(arch: &Arch, size: usize, idx: ScalarType, op: Op) -> CombineTileKey {
    let sh = shape(arch, size, idx);
    // One block a launch, compiled as one.
    CombineTileKey {
        launch: sh.launch(0, 1),
        op,
    }
}

fn key(arch: &Arch, size: usize, idx: ScalarType, op: Op) -> CombineKey {
    let sh = shape(arch, size, idx);
    CombineKey {
        launch: sh.launch(0, tuning::combine_min_blocks(arch, size, sh.block, 0)),
        idx,
        op,
    }
}

/// A copy of `base` with every `vals[i]` combined into `out[idx[i]]` by `op`.
pub(crate) fn scatter_combine(
    gpu: &Gpu,
    vals: &Source,
    idx: &Source,
    base: &Source,
    op: Op,
) -> Result<Buffer> {
    let (n, len, size) = (vals.len, base.len, vals.ty().size());
    let sh = shape(&gpu.arch, size, idx.ty());
    let tiles = sh.tiles(n, tuning::vec(size));
    // One tile is sorted and combined in one launch (`combine_tile`), whose block also copies
    // a small base itself (one launch fewer).
    let copy = tiles == 1 && len <= COMBINE_COPY * sh.block as usize;
    let out = if copy && len > 0 {
        Buffer::new(&gpu.mem, len * size)?
    } else {
        materialize(gpu, base)?
    };
    if n == 0 {
        return Ok(out);
    }
    if len == 0 {
        return Err(index_error(gpu, idx, 0, len)?);
    }
    if tiles == 1 {
        return combine_tile(gpu, vals, idx, base, op, out, copy);
    }
    let s = sort_by_index(gpu, idx, vals, len, false)?;
    let k = gpu.kernel(key(&gpu.arch, size, idx.ty(), op), &[(base, 1)])?;
    let (keys, sorted) = (column_ptr(&s.keys)?, column_ptr(s.values()?)?);
    let m = gpu.mem.mailbox()?;
    k.launch_single_pass(tiles, sh.block, 0, |p| CombineParams {
        keys,
        vals: sorted,
        out: out.ptr(),
        n: n as u64,
        err: s.error_word(),
        mail: m.word,
        flag: m.slot,
        counter: p.counter,
        status: p.status,
        base: p.base,
        epoch: p.epoch,
        tiles: tiles as u32,
    })?;
    // An index out of range is reported by the first use of `out` (the kernel wrote nothing).
    Ok(BoundsCheck::guard(gpu, out, m.keep()?, idx, len))
}

/// scatter_combine of one tile in one launch (`ds_combine_tile`): the block sorts the pairs
/// by index and combines their runs, into `out` (the base's copy, or with `copy` a buffer for
/// the kernel to copy it into). The same tile as `ds_combine_runs`', so the same results.
fn combine_tile(
    gpu: &Gpu,
    vals: &Source,
    idx: &Source,
    base: &Source,
    op: Op,
    out: Buffer,
    copy: bool,
) -> Result<Buffer> {
    let (n, len, size) = (vals.len, base.len, vals.ty().size());
    let key = tile_key(&gpu.arch, size, idx.ty(), op);
    let (lo, passes) = digit_passes(0..index_bits(len));
    let smem = key.dynamic_smem(&[idx.ty(), vals.ty()]);
    let k = gpu.kernel(key, &[(idx, 1), (vals, 1), (base, 1)])?;
    let m = gpu.mem.mailbox()?;
    k.launch(
        1,
        key.launch.block,
        smem,
        &CombineTileParams {
            out: out.ptr(),
            n: n as u64,
            mail: m.word,
            flag: m.slot,
            lo,
            passes,
            copy: if copy { len as u64 } else { 0 },
            len: len as u64,
        },
    )?;
    // An index out of range is reported by the first use of `out` (the kernel wrote nothing).
    Ok(BoundsCheck::guard(gpu, out, m.keep()?, idx, len))
}

#[cfg(test)]
pub(crate) mod check {
    use super::*;
    use crate::backend::cuda::key::KernelKey;
    use crate::backend::cuda::source::SourceKey;

    /// The instances a compile check builds.
    pub(crate) fn variants(arch: &Arch) -> Vec<KernelKey> {
        let mut v = Vec::new();
        for t in ScalarType::ALL {
            for op in Op::ALL.into_iter().filter(|o| o.applies_to(t)) {
                v.push(KernelKey {
                    functor: None,
                    family: key(arch, t.size(), ScalarType::U32, op).into(),
                    sources: vec![SourceKey::plain(t, 1)],
                });
            }
            v.push(KernelKey {
                functor: None,
                family: key(arch, t.size(), ScalarType::U64, Op::Min).into(),
                sources: vec![SourceKey::plain(t, 1)],
            });
            // One launch: every operator with u32 indices, the minimum with u64 ones.
            for (op, idx) in Op::ALL
                .into_iter()
                .filter(|o| o.applies_to(t))
                .map(|o| (o, ScalarType::U32))
                .chain([(Op::Min, ScalarType::U64)])
            {
                v.push(KernelKey {
                    functor: None,
                    family: tile_key(arch, t.size(), idx, op).into(),
                    sources: vec![
                        SourceKey::plain(idx, 1),
                        SourceKey::plain(t, 1),
                        SourceKey::plain(t, 1),
                    ],
                });
            }
        }
        v
    }
}
