//! `lower_bound` and `upper_bound` on the GPU (`kernels/search.cu`): a binary search per
//! needle whose top levels are samples of the haystack in shared memory. Where the haystack
//! is larger than the L2 cache and the needles many, the needles are sorted first (with their
//! positions) and each answer is written to its needle's position: searches of sorted needles
//! share their paths through the haystack, so most of their reads hit the caches instead of
//! each costing a trip to memory.

use super::gpu::Gpu;
use super::key::{SearchKey, Template};
use super::launch::kernel_params;
use super::mem::{Buffer, Ptr};
use super::{sort, tuning};
use crate::error::{Error, Result};
use crate::item::ScalarType;
use crate::source::Source;

kernel_params!(
    /// `ds_search`'s parameters: sample `k` of the haystack is at `k * step`.
    SearchParams {
        out: Ptr,
        n: u64,
        len: u64,
        step: u64,
        samples: u32,
    }
);

impl Template for SearchKey {
    type Params = SearchParams;
    const FILE: &'static str = "search.cu";
    fn name(&self, s: &[String]) -> String {
        format!(
            "ds_search<{}, {}, {}, {}, {}, {}, {}, {}>",
            s[0],
            s[1],
            s[2],
            self.idx.name(),
            self.upper as u32,
            self.scatter as u32,
            self.block,
            self.split
        )
    }
}

fn key(upper: bool, idx: ScalarType, scatter: bool) -> SearchKey {
    SearchKey {
        upper,
        idx,
        scatter,
        block: tuning::FLAT_BLOCK,
        split: tuning::SEARCH_SAMPLES,
    }
}

/// For each needle, the first position of `hay` whose key is `>=` it (`>` where `upper`), as
/// indices of type `idx`.
pub(crate) fn search(
    gpu: &Gpu,
    hay: &Source,
    needles: &Source,
    upper: bool,
    idx: ScalarType,
) -> Result<Buffer> {
    let (n, len) = (needles.len, hay.len);
    let out = Buffer::new(gpu, n * idx.size())?;
    if n == 0 {
        return Ok(out);
    }
    let sorted = n >= tuning::SEARCH_SORTED_NEEDLES
        && len.saturating_mul(hay.ty().size()) > gpu.arch.l2_bytes;
    // The needles sorted, with the positions they came from.
    let held;
    let (needles, pos) = if sorted {
        let at = if n <= u32::MAX as usize {
            ScalarType::U32
        } else {
            ScalarType::U64
        };
        let s = sort::sort(gpu, needles, Some(&Source::sequence(at, n)), false)?;
        let values = s
            .values
            .ok_or_else(|| Error::Internal("a sort returned no values".into()))?;
        held = (Source::column(s.keys), Source::column(values));
        (&held.0, &held.1)
    } else {
        (needles, needles)
    };
    let k = key(upper, idx, sorted);
    let step = (len as u64).div_ceil(k.split as u64).max(1);
    let samples = (len as u64).div_ceil(step) as u32;
    let bound = gpu.kernel(k, &[(hay, 1), (needles, 1), (pos, 1)])?;
    let grid = bound.wave(k.block, (n as u64).div_ceil(k.block as u64))?;
    bound.launch(
        grid,
        k.block,
        0,
        &SearchParams {
            out: out.ptr(),
            n: n as u64,
            len: len as u64,
            step,
            samples,
        },
    )?;
    Ok(out)
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
            for idx in [ScalarType::U32, ScalarType::U64] {
                for upper in [false, true] {
                    let plain = SourceKey::plain(t, 1);
                    v.push(KernelKey {
                        functor: None,
                        family: key(upper, idx, false).into(),
                        sources: vec![plain.clone(), plain.clone(), plain.clone()],
                    });
                    let at = SourceKey::plain(idx, 1);
                    v.push(KernelKey {
                        functor: None,
                        family: key(upper, idx, true).into(),
                        sources: vec![plain.clone(), plain, at],
                    });
                }
            }
        }
        for p in lazy {
            v.push(KernelKey {
                functor: None,
                family: key(false, ScalarType::U32, false).into(),
                sources: vec![p.clone(), p.clone(), p.clone()],
            });
        }
        v
    }
}
