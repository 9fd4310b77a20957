//! `gather` and `scatter` on the GPU (`kernels/gather.cu`), bounds-checked: the kernels note
//! the lowest position of an index outside the target, checked when the call completes.

use super::jit::Instance;
use super::{Args, Buffer, Gpu, Ptr, tuning};
use crate::element::ScalarType;
use crate::error::{Error, Result};
use std::sync::Arc;

fn vec(ty: ScalarType, idx: ScalarType) -> u32 {
    tuning::vec(ty.size().max(idx.size()))
}

pub(crate) fn instance(kernel: &str, ty: ScalarType, idx: ScalarType, aligned: bool) -> Instance {
    Instance {
        source: "#include \"gather.cu\"\n".to_string(),
        expr: format!(
            "{kernel}<{}, {}, {}, {}, {}, {aligned}>",
            ty.name(),
            idx.name(),
            tuning::gather().block,
            vec(ty, idx),
            tuning::gather().rounds
        ),
    }
}

/// A word holding u64::MAX, for kernels to atomicMin the position of a bad index into.
fn error_word(gpu: &Arc<Gpu>) -> Result<Buffer> {
    let err = Buffer::new(gpu, 8)?;
    gpu.memset_u8(err.ptr(), 0xff, 8)?;
    Ok(err)
}

/// Waits for the kernel and turns a recorded position into `IndexOutOfBounds`.
fn check_error(
    gpu: &Arc<Gpu>,
    err: &Buffer,
    idx_ty: ScalarType,
    idx: Ptr,
    len: usize,
) -> Result<()> {
    let pos = gpu.read_u64(err.ptr())?;
    if pos == u64::MAX {
        return Ok(());
    }
    let mut b = [0u8; 8];
    let w = idx_ty.size();
    gpu.read_small(idx.add(pos as usize * w), &mut b[..w])?;
    Err(Error::IndexOutOfBounds {
        index: u64::from_le_bytes(b),
        len,
    })
}

fn launch(
    gpu: &Arc<Gpu>,
    kernel: &str,
    ty: ScalarType,
    idx_ty: ScalarType,
    ptrs: &[(Ptr, usize)],
    n: usize,
    args: Args,
) -> Result<()> {
    let v = vec(ty, idx_ty);
    let aligned = ptrs
        .iter()
        .all(|&(p, size)| p.aligned((v as usize * size).min(16)));
    let k = gpu.jit.get(&instance(kernel, ty, idx_ty, aligned))?;
    let sh = tuning::gather();
    let tiles = (n as u64).div_ceil((sh.block * v * sh.rounds) as u64);
    let grid = gpu.wave(&k, sh.block, tiles)?;
    gpu.launch(&k, grid, sh.block, args)
}

/// `out[i] = src[idx[i]]` for `n` indices into `len` elements.
pub(crate) fn gather(
    gpu: &Arc<Gpu>,
    ty: ScalarType,
    src: Ptr,
    len: usize,
    idx_ty: ScalarType,
    idx: Ptr,
    n: usize,
) -> Result<Buffer> {
    let out = Buffer::new(gpu, n * ty.size())?;
    if n == 0 {
        return Ok(out);
    }
    let err = error_word(gpu)?;
    launch(
        gpu,
        "ds_gather",
        ty,
        idx_ty,
        &[(idx, idx_ty.size()), (out.ptr(), ty.size())],
        n,
        Args::new()
            .ptr(src)
            .u64(len as u64)
            .ptr(idx)
            .ptr(out.ptr())
            .u64(n as u64)
            .ptr(err.ptr()),
    )?;
    check_error(gpu, &err, idx_ty, idx, len)?;
    Ok(out)
}

/// A copy of the `len` elements at `base` with `out[idx[i]] = vals[i]` for `n` values.
#[allow(clippy::too_many_arguments)]
pub(crate) fn scatter(
    gpu: &Arc<Gpu>,
    ty: ScalarType,
    vals: Ptr,
    idx_ty: ScalarType,
    idx: Ptr,
    n: usize,
    base: Ptr,
    len: usize,
) -> Result<Buffer> {
    let out = super::map::copy(gpu, base, len * ty.size())?;
    if n == 0 {
        return Ok(out);
    }
    let err = error_word(gpu)?;
    launch(
        gpu,
        "ds_scatter",
        ty,
        idx_ty,
        &[(idx, idx_ty.size()), (vals, ty.size())],
        n,
        Args::new()
            .ptr(vals)
            .ptr(idx)
            .ptr(out.ptr())
            .u64(len as u64)
            .u64(n as u64)
            .ptr(err.ptr()),
    )?;
    check_error(gpu, &err, idx_ty, idx, len)?;
    Ok(out)
}
