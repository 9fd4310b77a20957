//! `lower_bound` and `upper_bound` on the GPU (`kernels/search.cu`): a binary search per
//! needle whose top levels are samples of the haystack in shared memory. Where the haystack
//! is larger than the L2 cache and the needles many, random searches would each cost a
//! chain of trips to memory; the needles are sorted instead (with their positions), merged
//! with the haystack (`merge::rank`, which reads each once), and their ranks scattered back;
//! needles the caller knows ascending (the set operations') are merged as they are.

use super::gpu::Gpu;
use super::key::{Launch, SearchKey, Template};
use super::mem::{Buffer, Ptr};
use super::params::kernel_params;
use super::{gather, merge, sort, tuning};
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
    const KERNEL: &'static str = "ds_search";
}

fn key(upper: bool, idx: ScalarType) -> SearchKey {
    SearchKey {
        launch: Launch::block(tuning::FLAT_BLOCK),
        upper,
        idx,
        split: tuning::SEARCH_SAMPLES,
    }
}

/// For each needle, the first position of `hay` whose key is `>=` it (`>` where `upper`), as
/// indices of type `idx`. Where there are many needles and the haystack is larger than the L2
/// cache, needles not known ascending (`ascending_needles`) are sorted first, and ascending
/// ones are merged with the haystack as they are.
pub(crate) fn search(
    gpu: &Gpu,
    hay: &Source,
    needles: &Source,
    upper: bool,
    idx: ScalarType,
    ascending_needles: bool,
) -> Result<Buffer> {
    let (n, len) = (needles.len, hay.len);
    if n >= tuning::SEARCH_SORTED_NEEDLES && len.saturating_mul(hay.ty().size()) > gpu.arch.l2_bytes
    {
        if !ascending_needles {
            return sorted_search(gpu, hay, needles, upper, idx);
        }
        // Ascending already: merged with the haystack as they are, each read once.
        let ranks = Buffer::new(&gpu.mem, n * idx.size())?;
        gpu.mem.fill(&ranks, 4, 0, n * idx.size() / 4)?;
        merge::rank(gpu, needles, hay, upper, &ranks, idx)?;
        return Ok(ranks);
    }
    let out = Buffer::new(&gpu.mem, n * idx.size())?;
    if n == 0 {
        return Ok(out);
    }
    let k = key(upper, idx);
    let step = (len as u64).div_ceil(k.split as u64).max(1);
    let samples = (len as u64).div_ceil(step) as u32;
    let bound = gpu.kernel(k, &[(hay, 1), (needles, 1)])?;
    let block = k.launch.block;
    let grid = bound.wave(block, (n as u64).div_ceil(block as u64))?;
    bound.launch(
        grid,
        block,
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

/// `search` by sorting the needles with their positions, merging them with the haystack,
/// and scattering the ranks back to the positions (a partitioned scatter, as `scatter`'s).
fn sorted_search(
    gpu: &Gpu,
    hay: &Source,
    needles: &Source,
    upper: bool,
    idx: ScalarType,
) -> Result<Buffer> {
    let n = needles.len;
    let at = if n <= u32::MAX as usize {
        ScalarType::U32
    } else {
        ScalarType::U64
    };
    let s = sort::sort(gpu, needles, Some(&Source::sequence(at, n)), false)?;
    let pos = s
        .values
        .ok_or_else(|| Error::Internal("a sort returned no values".into()))?;
    let ranks = Buffer::new(&gpu.mem, n * idx.size())?;
    // A haystack that is not sorted may leave needles unranked: they read 0.
    gpu.mem.fill(&ranks, 4, 0, n * idx.size() / 4)?;
    merge::rank(gpu, &Source::column(s.keys), hay, upper, &ranks, idx)?;
    gather::scatter(
        gpu,
        &Source::column(ranks.into_column(idx, n)),
        &Source::column(pos),
        &Source::constant(idx, 0, n),
    )
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
                        family: key(upper, idx).into(),
                        sources: vec![plain.clone(), plain],
                    });
                }
            }
        }
        for p in lazy {
            v.push(KernelKey {
                functor: None,
                family: key(false, ScalarType::U32).into(),
                sources: vec![p.clone(), p.clone()],
            });
        }
        v
    }
}
