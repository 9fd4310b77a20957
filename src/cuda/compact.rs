//! `compact` and `nonzero_indices` on the GPU (`kernels/compact.cu`): one fused pass.

use super::jit::Instance;
use super::scan::{all_aligned, launch_single_pass, tiles};
use super::{Args, Buffer, Gpu, Ptr, tuning};
use crate::element::ScalarType;
use crate::error::Result;
use std::sync::Arc;

pub(crate) fn instance(ty: ScalarType, wide: bool, aligned: bool, indices: bool) -> Instance {
    let sh = tuning::compact(ty.size());
    Instance {
        source: "#include \"compact.cu\"\n".to_string(),
        expr: format!(
            "ds_compact<{}, {}, {}, {}, {}, {aligned}, {indices}>",
            ty.name(),
            if wide { "u64" } else { "u32" },
            sh.block,
            sh.rounds,
            tuning::register_min_blocks()
        ),
    }
}

/// The elements at `src` (or, with `src == None`, the indices, as `ty`) whose flag is
/// nonzero: a buffer and how many elements it holds. The kernel writes into a buffer of `n`
/// elements; where fewer than half are kept they move to a buffer of their own size.
pub(crate) fn compact(
    gpu: &Arc<Gpu>,
    ty: ScalarType,
    src: Option<Ptr>,
    flags: Ptr,
    n: usize,
) -> Result<(Buffer, usize)> {
    let size = ty.size();
    let out = Buffer::new(gpu, n * size)?;
    if n == 0 {
        return Ok((out, 0));
    }
    let total = gpu.mailbox()?;
    let mut ptrs = vec![(flags, 1)];
    if let Some(s) = src {
        ptrs.push((s, size));
    }
    let aligned = all_aligned(tuning::vec(size), &ptrs);
    let wide = n as u64 >= u32::MAX as u64;
    let kernel = gpu.jit.get(&instance(ty, wide, aligned, src.is_none()))?;
    launch_single_pass(
        gpu,
        &kernel,
        tiles(n, size, tuning::compact(size)),
        tuning::compact(size).block,
        0,
        || {
            Args::new()
                .ptr(src.unwrap_or(Ptr(0)))
                .ptr(flags)
                .ptr(out.ptr())
                .u64(n as u64)
                .ptr(total.slot)
        },
    )?;
    let count = gpu.take_slot(total)? as usize;
    if count * 2 >= n {
        return Ok((out, count));
    }
    let fit = super::map::copy(gpu, out.ptr(), count * size)?;
    Ok((fit, count))
}
