//! `merge` and `merge_pairs` on the GPU (`kernels/merge.cu`): merge path. One kernel finds
//! where the merge of the two sequences crosses every tile's first output (a binary search
//! along a diagonal); a second merges each tile in shared memory and stores it coalesced. An
//! output of one tile needs no search (one launch).
//! `rank` merges sorted needles with a haystack the same way, for large searches. `set_op`
//! merges each tile the same way and keeps what a set operation keeps, placed by a look-back
//! (one pass after the cuts).

use super::gpu::Gpu;
use super::key::{Launch, MergeKey, MergeRankKey, MergeSplitKey, SetOpKey, Template};
use super::mem::{Buffer, Ptr};
use super::params::kernel_params;
use super::tuning;
use crate::backend::SetOp;
use crate::error::Result;
use crate::item::ScalarType;
use crate::source::Source;

kernel_params!(
    /// The parameters of `ds_merge_split` and `ds_merge`: tile `t` starts at output
    /// `t * TILE`, and `cuts[t]` of its outputs before it come from `a`.
    MergeParams {
        cuts: Ptr,
        keys: Ptr,
        values: Ptr,
        na: u64,
        nb: u64,
        tiles: u64,
    }
);

kernel_params!(
    /// The parameters of `ds_set_op`: the cuts as `MergeParams`', the outputs (of `room`
    /// elements, the most the operation keeps: `na` or `na + nb`), the look-back's slots, and
    /// `total` for the count kept.
    SetParams {
        cuts: Ptr,
        keys: Ptr,
        values: Ptr,
        total: Ptr,
        counter: Ptr,
        status: Ptr,
        na: u64,
        nb: u64,
        room: u64,
        base: u32,
        epoch: u32,
        tiles: u32,
    }
);

impl Template for MergeSplitKey {
    type Params = MergeParams;
    const FILE: &'static str = "merge.cu";
    const KERNEL: &'static str = "ds_merge_split";
}

impl Template for MergeKey {
    type Params = MergeParams;
    const FILE: &'static str = "merge.cu";
    const KERNEL: &'static str = "ds_merge";
}

impl Template for MergeRankKey {
    type Params = MergeParams;
    const FILE: &'static str = "merge.cu";
    const KERNEL: &'static str = "ds_merge_rank";
}

impl Template for SetOpKey {
    type Params = SetParams;
    const FILE: &'static str = "merge.cu";
    const KERNEL: &'static str = "ds_set_op";
}

/// Threads a block of `ds_merge_split` (fixed by its `__launch_bounds__`).
const SPLIT_BLOCK: u32 = 256;

/// A merge's threads a block and keys a thread (for keys of `size` bytes), compiled for `minb`
/// blocks a multiprocessor.
fn merge_launch(size: usize, minb: u32) -> Launch {
    Launch {
        block: tuning::merge_block(),
        items: tuning::merge_items(size),
        vec: 1,
        minb,
    }
}

fn key(size: usize, keys: bool, values: bool) -> MergeKey {
    MergeKey {
        launch: merge_launch(size, 0),
        keys,
        values,
    }
}

/// Where each tile's stretch of `a` starts: found by `ds_merge_split`, or, for one tile, the
/// stream's constant pair that stands for all of `a` (`Gpu::whole_cut`).
enum Cuts {
    Searched(Buffer),
    Whole(Ptr),
}

impl Cuts {
    fn ptr(&self) -> Ptr {
        match self {
            Cuts::Searched(b) => b.ptr(),
            Cuts::Whole(p) => *p,
        }
    }
}

/// Where the merge of `a` and `b` crosses the first output of each tile of `tile` outputs
/// (and its end): how many of the outputs before it come from `a`; and the tiles.
fn cut(gpu: &Gpu, a: &Source, b: &Source, tile: u32) -> Result<(Cuts, u64)> {
    let total = (a.len + b.len) as u64;
    let tiles = total.div_ceil(tile as u64);
    if tiles <= 1 {
        // One tile takes all of both: the stream's constant cuts, no search.
        return Ok((Cuts::Whole(gpu.passes.whole_cut()), tiles));
    }
    let cuts = Buffer::new(&gpu.mem, (tiles as usize + 1) * 8)?;
    let p = MergeParams {
        cuts: cuts.ptr(),
        keys: Ptr(0),
        values: Ptr(0),
        na: a.len as u64,
        nb: b.len as u64,
        tiles,
    };
    gpu.kernel(
        MergeSplitKey {
            launch: Launch::block(SPLIT_BLOCK),
            tile,
        },
        &[(a, 1), (b, 1)],
    )?
    .launch((tiles + 1).div_ceil(SPLIT_BLOCK as u64), SPLIT_BLOCK, 0, &p)?;
    Ok((Cuts::Searched(cuts), tiles))
}

/// For each of the sorted `needles`, the number of keys of the sorted `hay` below it (at or
/// below it where `upper`), written to `out` in the needles' order as `idx`: the needles
/// merge with the haystack, first on ties for lower bounds, second for upper bounds.
pub(crate) fn rank(
    gpu: &Gpu,
    needles: &Source,
    hay: &Source,
    upper: bool,
    out: &Buffer,
    idx: ScalarType,
) -> Result<()> {
    let (a, b) = if upper {
        (hay, needles)
    } else {
        (needles, hay)
    };
    let k = rank_key(hay.ty().size(), upper, idx);
    let (cuts, tiles) = cut(gpu, a, b, k.launch.block * k.launch.items)?;
    let v = tuning::vec(hay.ty().size());
    let p = MergeParams {
        cuts: cuts.ptr(),
        keys: out.ptr(),
        values: Ptr(0),
        na: a.len as u64,
        nb: b.len as u64,
        tiles,
    };
    gpu.kernel(k, &[(a, v), (b, v)])?
        .launch(tiles, k.launch.block, 0, &p)
}

fn rank_key(size: usize, side_b: bool, idx: ScalarType) -> MergeRankKey {
    MergeRankKey {
        launch: merge_launch(size, 0),
        side_b,
        idx,
    }
}

/// The stable merge of the sorted `a` and `b` (ties from `a` first), and each pair of value
/// columns `values[c]` (of `a`, of `b`) moved with its keys.
pub(crate) fn merge(
    gpu: &Gpu,
    a: &Source,
    b: &Source,
    values: &[(&Source, &Source)],
) -> Result<(Buffer, Vec<Buffer>)> {
    let (na, nb) = (a.len as u64, b.len as u64);
    let total = na + nb;
    let size = a.ty().size();
    let keys = Buffer::new(&gpu.mem, total as usize * size)?;
    let mut vals = Vec::with_capacity(values.len());
    for (va, _) in values {
        vals.push(Buffer::new(&gpu.mem, total as usize * va.ty().size())?);
    }
    if total == 0 {
        return Ok((keys, vals));
    }
    let k0 = key(size, true, false);
    let (cuts, tiles) = cut(gpu, a, b, k0.launch.block * k0.launch.items)?;
    let mut p = MergeParams {
        cuts: cuts.ptr(),
        keys: keys.ptr(),
        values: Ptr(0),
        na,
        nb,
        tiles,
    };
    // The keys with the first value columns, then each further value column alone. Stored
    // keys aligned for 16-byte vectors are copied to shared memory in whole vectors.
    let v = tuning::vec(size);
    let mut first = true;
    for ((va, vb), out) in values.iter().zip(&vals) {
        p.values = out.ptr();
        let k = key(size, first, true);
        gpu.kernel(k, &[(a, v), (b, v), (va, 1), (vb, 1)])?
            .launch(tiles, k.launch.block, 0, &p)?;
        first = false;
    }
    if first {
        gpu.kernel(k0, &[(a, v), (b, v), (a, 1), (b, 1)])?
            .launch(tiles, k0.launch.block, 0, &p)?;
    }
    Ok((keys, vals))
}

fn set_key(op: SetOp, size: usize, wide: bool, keys: bool, values: bool) -> SetOpKey {
    // Compiled for two blocks a multiprocessor (kernels/merge.cu's `ds_set_op` says why).
    SetOpKey {
        launch: merge_launch(size, 2),
        op,
        wide,
        keys,
        values,
    }
}

/// The set operation `op` of the sorted `a` and `b`, and each pair of value columns
/// `values[c]` (of `a`, of `b`) moved with the kept keys: buffers of the most elements `op`
/// keeps (moved to buffers of their own size where far fewer are kept), and how many it kept
/// (waits for the count).
pub(crate) fn set_op(
    gpu: &Gpu,
    a: &Source,
    b: &Source,
    op: SetOp,
    values: &[(&Source, &Source)],
) -> Result<(Buffer, Vec<Buffer>, usize)> {
    let (na, nb) = (a.len as u64, b.len as u64);
    let room = op.room(a.len, b.len);
    let size = a.ty().size();
    let keys = Buffer::new(&gpu.mem, room * size)?;
    let mut vals = Vec::with_capacity(values.len());
    for (va, _) in values {
        vals.push(Buffer::new(&gpu.mem, room * va.ty().size())?);
    }
    if room == 0 {
        return Ok((keys, vals, 0));
    }
    let wide = na + nb >= u32::MAX as u64;
    let k0 = set_key(op, size, wide, true, false);
    let (cuts, tiles) = cut(gpu, a, b, k0.launch.block * k0.launch.items)?;
    let total = gpu.mem.mailbox()?;
    let v = tuning::vec(size);
    // The keys with the first value columns, then each further value column alone (each
    // launch walks the same merge and keeps the same outputs).
    let launch = |k: SetOpKey, (va, vb): (&Source, &Source), out: Ptr| -> Result<()> {
        let kernel = gpu.kernel(k, &[(a, v), (b, v), (va, 1), (vb, 1)])?;
        kernel.launch_single_pass(tiles, k.launch.block, 0, |s| SetParams {
            cuts: cuts.ptr(),
            keys: keys.ptr(),
            values: out,
            total: total.slot,
            counter: s.counter,
            status: s.status,
            na,
            nb,
            room: room as u64,
            base: s.base,
            epoch: s.epoch,
            tiles: tiles as u32,
        })
    };
    match values.split_first() {
        None => launch(k0, (a, b), Ptr(0))?,
        Some((first, rest)) => {
            launch(set_key(op, size, wide, true, true), *first, vals[0].ptr())?;
            for (pair, out) in rest.iter().zip(&vals[1..]) {
                launch(set_key(op, size, wide, false, true), *pair, out.ptr())?;
            }
        }
    }
    let count = gpu.mem.take_slot(total)? as usize;
    let keys = keys.fit(&gpu.mem, count * size)?;
    let vals = vals
        .into_iter()
        .zip(values)
        .map(|(b, (va, _))| b.fit(&gpu.mem, count * va.ty().size()))
        .collect::<Result<Vec<_>>>()?;
    Ok((keys, vals, count))
}

#[cfg(test)]
pub(crate) mod check {
    use super::*;
    use crate::backend::cuda::key::KernelKey;
    use crate::backend::cuda::source::SourceKey;

    /// The instances a compile check builds.
    pub(crate) fn variants(lazy: &[SourceKey]) -> Vec<KernelKey> {
        let mut v = Vec::new();
        for t in ScalarType::ALL {
            let plain = SourceKey::plain(t, 1);
            let aligned = SourceKey::plain(t, tuning::vec(t.size()));
            let k = key(t.size(), true, false);
            v.push(KernelKey {
                functor: None,
                family: MergeSplitKey {
                    launch: Launch::block(SPLIT_BLOCK),
                    tile: k.launch.block * k.launch.items,
                }
                .into(),
                sources: vec![plain.clone(), plain.clone()],
            });
            for keys in [&plain, &aligned] {
                v.push(KernelKey {
                    functor: None,
                    family: k.into(),
                    sources: vec![keys.clone(), keys.clone(), plain.clone(), plain.clone()],
                });
            }
            for (keys, vt) in [(true, ScalarType::U32), (false, ScalarType::F64)] {
                let pv = SourceKey::plain(vt, 1);
                v.push(KernelKey {
                    functor: None,
                    family: key(t.size(), keys, true).into(),
                    sources: vec![aligned.clone(), aligned.clone(), pv.clone(), pv],
                });
            }
        }
        for t in ScalarType::ALL {
            let plain = SourceKey::plain(t, 1);
            let aligned = SourceKey::plain(t, tuning::vec(t.size()));
            for idx in [ScalarType::U32, ScalarType::U64] {
                for side_b in [false, true] {
                    for keys in [&plain, &aligned] {
                        v.push(KernelKey {
                            functor: None,
                            family: rank_key(t.size(), side_b, idx).into(),
                            sources: vec![keys.clone(), keys.clone()],
                        });
                    }
                }
            }
        }
        for t in ScalarType::ALL {
            let plain = SourceKey::plain(t, 1);
            let aligned = SourceKey::plain(t, tuning::vec(t.size()));
            let pv = SourceKey::plain(ScalarType::U32, 1);
            for op in [
                SetOp::Union,
                SetOp::Intersection,
                SetOp::Difference,
                SetOp::SymmetricDifference,
            ] {
                for keys in [&plain, &aligned] {
                    v.push(KernelKey {
                        functor: None,
                        family: set_key(op, t.size(), false, true, false).into(),
                        sources: vec![keys.clone(), keys.clone(), keys.clone(), keys.clone()],
                    });
                }
                for (keys, values, wide) in [(true, true, false), (false, true, true)] {
                    v.push(KernelKey {
                        functor: None,
                        family: set_key(op, t.size(), wide, keys, values).into(),
                        sources: vec![aligned.clone(), aligned.clone(), pv.clone(), pv.clone()],
                    });
                }
            }
        }
        for p in lazy {
            v.push(KernelKey {
                functor: None,
                family: set_key(SetOp::Union, p.ty.size(), false, true, true).into(),
                sources: vec![p.clone(), p.clone(), p.clone(), p.clone()],
            });
            v.push(KernelKey {
                functor: None,
                family: key(p.ty.size(), true, true).into(),
                sources: vec![p.clone(), p.clone(), p.clone(), p.clone()],
            });
        }
        v
    }
}
