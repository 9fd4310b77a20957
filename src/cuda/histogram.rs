//! `histogram` on the GPU (`kernels/histogram.cu`).

use super::jit::Instance;
use super::{Args, Buffer, Gpu, Ptr, tuning};
use crate::element::ScalarType;
use crate::error::Result;
use std::sync::Arc;

/// Bins that fit the per-block shared counters (`SMEM_BINS` in the kernel).
const SMEM_BINS: u64 = 8192;

pub(crate) fn instance(ty: ScalarType, bins: u64) -> Instance {
    // 64-bit integers (or absurd bin counts) need a 128-bit product for the exact bin.
    let wide = !ty.is_float() && (ty.size() == 8 || bins > u32::MAX as u64);
    Instance {
        source: "#include \"histogram.cu\"\n".to_string(),
        expr: format!(
            "ds_histogram<{}, {wide}, {}, 256, {}>",
            ty.name(),
            bins <= SMEM_BINS,
            tuning::vec(ty.size())
        ),
    }
}

/// Counts of `bins` equal bins over [lo, hi) (compute bits) of the `n` elements at `src`.
pub(crate) fn histogram(
    gpu: &Arc<Gpu>,
    ty: ScalarType,
    src: Ptr,
    n: usize,
    bins: u64,
    lo: u64,
    hi: u64,
) -> Result<Buffer> {
    let counts = Buffer::new(gpu, bins as usize * 8)?;
    gpu.memset_u8(counts.ptr(), 0, bins as usize * 8)?;
    if n == 0 {
        return Ok(counts);
    }
    let vec = tuning::vec(ty.size());
    let kernel = gpu.jit.get(&instance(ty, bins))?;
    let grid = gpu.wave(&kernel, 256, (n as u64).div_ceil(256 * vec as u64))?;
    gpu.launch(
        &kernel,
        grid,
        256,
        Args::new()
            .ptr(src)
            .u64(n as u64)
            .ptr(counts.ptr())
            .u64(bins)
            .u64(lo)
            .u64(hi)
            .u32(src.aligned(16) as u32),
    )?;
    Ok(counts)
}
