//! `histogram` on the GPU (`kernels/histogram.cu`).

use super::gpu::Gpu;
use super::key::{HistogramKey, Launch, Template};
use super::mem::{Buffer, Ptr};
use super::params::kernel_params;
use super::single_pass::{TALLY_BYTES, counter};
use super::tuning;
use crate::error::Result;
use crate::item::ScalarType;
use crate::source::Source;

kernel_params!(
    /// `ds_histogram`'s parameters (`lo`, `hi`: compute bits).
    HistogramParams {
        n: u64,
        counts: Ptr,
        bins: u64,
        lo: u64,
        hi: u64,
        tally: Ptr,
        done: Ptr,
    }
);

impl Template for HistogramKey {
    type Params = HistogramParams;
    const FILE: &'static str = "histogram.cu";
    const KERNEL: &'static str = "ds_histogram";
}

/// Bins that fit the per-block shared counters (`SMEM_BINS` in the kernel), and the stream's
/// tally that merges them.
const SMEM_BINS: u64 = 8192;
const _: () = assert!(SMEM_BINS as usize * 8 == TALLY_BYTES);

fn key(ty: ScalarType, bins: u64) -> HistogramKey {
    HistogramKey {
        launch: Launch::block(tuning::FLAT_BLOCK),
        // 64-bit integers (or absurd bin counts) need a 128-bit product for the exact bin.
        wide: !ty.is_float() && (ty.size() == 8 || bins > u32::MAX as u64),
        smem: bins <= SMEM_BINS,
    }
}

/// Counts of `bins` equal bins over [lo, hi) (compute bits) of `src`.
pub(crate) fn histogram(gpu: &Gpu, src: &Source, bins: u64, lo: u64, hi: u64) -> Result<Buffer> {
    let counts = Buffer::new(&gpu.mem, bins as usize * 8)?;
    let n = src.len;
    let (ty, block) = (src.ty(), tuning::FLAT_BLOCK);
    let key = key(ty, bins);
    // Shared counters go through the stream's tally, which writes every count (one launch).
    if n == 0 || !key.smem {
        gpu.mem.fill(&counts, 1, 0, bins as usize * 8)?;
    }
    if n == 0 {
        return Ok(counts);
    }
    let vec = tuning::vec(ty.size());
    let k = gpu.kernel(key, &[(src, vec)])?;
    let tiles = (n as u64).div_ceil(block as u64 * vec as u64);
    let grid = tuning::histogram_blocks(tiles, k.wave(block, tiles)?);
    k.launch(
        grid,
        block,
        0,
        &HistogramParams {
            n: n as u64,
            counts: counts.ptr(),
            bins,
            lo,
            hi,
            tally: gpu.passes.tally(),
            done: gpu.passes.counter(counter::DONE),
        },
    )?;
    Ok(counts)
}

#[cfg(test)]
pub(crate) mod check {
    use super::*;
    use crate::backend::cuda::key::KernelKey;
    use crate::backend::cuda::source::SourceKey;

    /// The instances a compile check builds; each of `lazy` into 256 bins.
    pub(crate) fn variants(lazy: &[SourceKey]) -> Vec<KernelKey> {
        let mut v = Vec::new();
        for s in lazy {
            v.push(KernelKey {
                functor: None,
                family: key(s.ty, 256).into(),
                sources: vec![s.clone()],
            });
        }
        for t in ScalarType::ALL {
            let vec = tuning::vec(t.size());
            for (bins, avec) in [(256, vec), (100_000, 0)] {
                v.push(KernelKey {
                    functor: None,
                    family: key(t, bins).into(),
                    sources: vec![SourceKey::plain(t, avec)],
                });
            }
        }
        v
    }
}
