//! `merge` and `merge_pairs` on the GPU (`kernels/merge.cu`): merge path. One kernel finds
//! where the merge of the two sequences crosses every tile's first output (a binary search
//! along a diagonal); a second merges each tile in shared memory and stores it coalesced.

use super::gpu::Gpu;
use super::key::{MergeKey, MergeSplitKey, Template};
use super::launch::kernel_params;
use super::mem::{Buffer, Ptr};
use super::tuning;
use crate::error::Result;
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

impl Template for MergeSplitKey {
    type Params = MergeParams;
    const FILE: &'static str = "merge.cu";
    fn name(&self, s: &[String]) -> String {
        format!("ds_merge_split<{}, {}, {}>", s[0], s[1], self.tile)
    }
}

impl Template for MergeKey {
    type Params = MergeParams;
    const FILE: &'static str = "merge.cu";
    fn name(&self, s: &[String]) -> String {
        format!(
            "ds_merge<{}, {}, {}, {}, {}, {}, {}, {}>",
            s[0], s[1], s[2], s[3], self.keys as u32, self.values as u32, self.block, self.items
        )
    }
}

/// Threads a block of `ds_merge_split` (fixed by its `__launch_bounds__`).
const SPLIT_BLOCK: u32 = 256;

fn key(size: usize, keys: bool, values: bool) -> MergeKey {
    MergeKey {
        keys,
        values,
        block: tuning::MERGE_BLOCK,
        items: tuning::merge_items(size),
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
    let keys = Buffer::new(gpu, total as usize * size)?;
    let mut vals = Vec::with_capacity(values.len());
    for (va, _) in values {
        vals.push(Buffer::new(gpu, total as usize * va.ty().size())?);
    }
    if total == 0 {
        return Ok((keys, vals));
    }
    let k0 = key(size, true, false);
    let tile = (k0.block * k0.items) as u64;
    let tiles = total.div_ceil(tile);
    let cuts = Buffer::new(gpu, (tiles as usize + 1) * 8)?;
    let mut p = MergeParams {
        cuts: cuts.ptr(),
        keys: keys.ptr(),
        values: Ptr(0),
        na,
        nb,
        tiles,
    };
    let split = MergeSplitKey { tile: tile as u32 };
    gpu.kernel(split, &[(a, 1), (b, 1)])?.launch(
        (tiles + 1).div_ceil(SPLIT_BLOCK as u64),
        SPLIT_BLOCK,
        0,
        &p,
    )?;
    // The keys with the first value columns, then each further value column alone.
    let mut first = true;
    for ((va, vb), out) in values.iter().zip(&vals) {
        p.values = out.ptr();
        let k = key(size, first, true);
        gpu.kernel(k, &[(a, 1), (b, 1), (va, 1), (vb, 1)])?
            .launch(tiles, k.block, 0, &p)?;
        first = false;
    }
    if first {
        gpu.kernel(k0, &[(a, 1), (b, 1), (a, 1), (b, 1)])?
            .launch(tiles, k0.block, 0, &p)?;
    }
    Ok((keys, vals))
}

#[cfg(test)]
pub(crate) mod check {
    use super::*;
    use crate::backend::cuda::key::KernelKey;
    use crate::backend::cuda::source::SourceKey;
    use crate::item::ScalarType;

    /// The instances a compile check builds.
    pub(crate) fn variants(lazy: &[SourceKey]) -> Vec<KernelKey> {
        let mut v = Vec::new();
        for t in ScalarType::ALL {
            let plain = SourceKey::plain(t, 1);
            let k = key(t.size(), true, false);
            v.push(KernelKey {
                functor: None,
                family: MergeSplitKey {
                    tile: k.block * k.items,
                }
                .into(),
                sources: vec![plain.clone(), plain.clone()],
            });
            v.push(KernelKey {
                functor: None,
                family: k.into(),
                sources: vec![plain.clone(), plain.clone(), plain.clone(), plain.clone()],
            });
            for (keys, vt) in [(true, ScalarType::U32), (false, ScalarType::F64)] {
                let pv = SourceKey::plain(vt, 1);
                v.push(KernelKey {
                    functor: None,
                    family: key(t.size(), keys, true).into(),
                    sources: vec![plain.clone(), plain.clone(), pv.clone(), pv],
                });
            }
        }
        for p in lazy {
            v.push(KernelKey {
                functor: None,
                family: key(p.ty.size(), true, true).into(),
                sources: vec![p.clone(), p.clone(), p.clone(), p.clone()],
            });
        }
        v
    }
}
