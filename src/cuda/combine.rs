//! `scatter_combine` on the GPU: a stable sort of (index, value) on the bits the indices
//! need, then one single-pass kernel (`kernels/combine.cu`) that combines each run of equal
//! indices in order and writes its slot once. No atomics: float results are the same on
//! every run.

use super::gather::index_error;
use super::jit::Instance;
use super::reduce::op_functor;
use super::scan::{all_aligned, launch_single_pass, tiles};
use super::sort::sort_by_index;
use super::{Args, Buffer, Gpu, Ptr, tuning};
use crate::element::ScalarType;
use crate::error::Result;
use crate::op::Op;
use std::sync::Arc;

pub(crate) fn instance(ty: ScalarType, idx: ScalarType, op: Op, aligned: bool) -> Instance {
    let sh = tuning::combine(ty.size());
    Instance {
        source: "#include \"combine.cu\"\n".to_string(),
        expr: format!(
            "ds_combine_runs<{}, {}, {}, {}, {}, {}, {aligned}>",
            ty.name(),
            idx.name(),
            op_functor(op),
            sh.block,
            sh.rounds,
            tuning::register_min_blocks()
        ),
    }
}

/// A copy of the `len` elements at `base` with every `vals[i]` combined into
/// `out[idx[i]]` by `op`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn scatter_combine(
    gpu: &Arc<Gpu>,
    ty: ScalarType,
    vals: Ptr,
    idx_ty: ScalarType,
    idx: Ptr,
    n: usize,
    base: Ptr,
    len: usize,
    op: Op,
) -> Result<Buffer> {
    let out = super::map::copy(gpu, base, len * ty.size())?;
    if n == 0 {
        return Ok(out);
    }
    if len == 0 {
        return Err(index_error(gpu, idx_ty, idx, 0, len)?);
    }
    let s = sort_by_index(gpu, idx_ty, idx, n, ty, vals, len, false)?;
    let (keys, sorted) = (&s.keys, s.values()?);
    let size = ty.size();
    let aligned = all_aligned(
        tuning::vec(size),
        &[(sorted.ptr(), size), (keys.ptr(), idx_ty.size())],
    );
    let kernel = gpu.jit.get(&instance(ty, idx_ty, op, aligned))?;
    launch_single_pass(
        gpu,
        &kernel,
        tiles(n, size, tuning::combine(size)),
        tuning::combine(size).block,
        0,
        || {
            Args::new()
                .ptr(keys.ptr())
                .ptr(sorted.ptr())
                .ptr(base)
                .ptr(out.ptr())
                .u64(n as u64)
                .ptr(s.error_word())
        },
    )?;
    // An index out of range is reported now (the kernel skipped it; `out` is dropped).
    s.check(gpu)?;
    Ok(out)
}
