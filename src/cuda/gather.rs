//! `gather` and `scatter` on the GPU (`kernels/gather.cu`), bounds-checked: the kernels note
//! the lowest position of an index outside the target, checked when the call completes.
//!
//! A scatter whose target is larger than the L2 cache and whose indices are far apart (a
//! permutation, a transpose) first partitions the (index, value) pairs by the top 8 bits of
//! the index, one stable radix pass (`sort`): the writes then arrive a slice of the target at
//! a time, each 32-byte sector filled while it sits in L2, instead of one read-modify-write of
//! a sector in memory for every 4-byte value.

use super::jit::Instance;
use super::sort::sort_by_index;
use super::{Args, Buffer, Gpu, Mailbox, Ptr, tuning};
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

/// Waits for the kernel and turns a position noted in `err` into `IndexOutOfBounds`.
fn check_error(
    gpu: &Arc<Gpu>,
    err: Mailbox,
    idx_ty: ScalarType,
    idx: Ptr,
    len: usize,
) -> Result<()> {
    match gpu.take_error(err)? {
        None => Ok(()),
        Some(pos) => Err(index_error(gpu, idx_ty, idx, pos, len)?),
    }
}

/// `IndexOutOfBounds` for the index at position `pos` of the `idx_ty` indices at `idx`, read
/// back, against a target of `len` elements.
pub(crate) fn index_error(
    gpu: &Arc<Gpu>,
    idx_ty: ScalarType,
    idx: Ptr,
    pos: u64,
    len: usize,
) -> Result<Error> {
    let mut b = [0u8; 8];
    let w = idx_ty.size();
    gpu.read_small(idx.add(pos as usize * w), &mut b[..w])?;
    Ok(Error::IndexOutOfBounds {
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
    let tiles = sh.tiles(n, v);
    let grid = if tuning::gather_tiles() {
        tiles.clamp(1, i32::MAX as u64)
    } else {
        gpu.wave(&k, sh.block, tiles)?
    };
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
    let err = gpu.mailbox()?;
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
            .ptr(err.word)
            .ptr(err.slot),
    )?;
    check_error(gpu, err, idx_ty, idx, len)?;
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
    if partition_pays(gpu, ty, idx_ty, idx, n, len)? {
        // Without the memory for the partition, the direct scatter below.
        match scatter_partitioned(gpu, ty, vals, idx_ty, idx, n, out.ptr(), len) {
            Err(Error::OutOfMemory { .. }) => {}
            r => return r.map(|()| out),
        }
    }
    let err = gpu.mailbox()?;
    launch(
        gpu,
        "ds_scatter",
        ty,
        idx_ty,
        &[(idx, idx_ty.size()), (vals, ty.size())],
        n,
        scatter_args(vals, idx, out.ptr(), len, n, Some(err)),
    )?;
    check_error(gpu, err, idx_ty, idx, len)?;
    Ok(out)
}

fn scatter_args(vals: Ptr, idx: Ptr, out: Ptr, len: usize, n: usize, err: Option<Mailbox>) -> Args {
    Args::new()
        .ptr(vals)
        .ptr(idx)
        .ptr(out)
        .u64(len as u64)
        .u64(n as u64)
        .ptr(err.map_or(Ptr(0), |e| e.word))
        .ptr(err.map_or(Ptr(0), |e| e.slot))
}

/// Windows of 32 neighbouring indices that `partition_pays` samples, and the span (in
/// elements) past which a window's writes count as far apart.
const SPREAD_WINDOWS: u32 = 256;
const SPREAD_SPAN: u64 = 1024;

/// Whether partitioning the writes pays: the target exceeds L2, the writes cover a good part
/// of it (at least a quarter of its slots), and most sampled windows of 32 neighbouring
/// indices span more than SPREAD_SPAN elements. Costs one small kernel and a wait, only for
/// targets beyond L2 (a scatter there takes 0.1 ms or more).
fn partition_pays(
    gpu: &Arc<Gpu>,
    ty: ScalarType,
    idx_ty: ScalarType,
    idx: Ptr,
    n: usize,
    len: usize,
) -> Result<bool> {
    if len * ty.size() <= tuning::scatter_partition_bytes(gpu.l2_bytes) || n < len / 4 || n < 32 {
        return Ok(false);
    }
    let k = gpu.jit.get(&spread_instance(idx_ty))?;
    let far = gpu.mailbox()?;
    gpu.launch(
        &k,
        (SPREAD_WINDOWS * 32).div_ceil(256) as u64,
        256,
        Args::new()
            .ptr(idx)
            .u64(n as u64)
            .u32(SPREAD_WINDOWS)
            .u64(SPREAD_SPAN)
            .ptr(far.word),
    )?;
    Ok(gpu.take_word(far)? * 2 > SPREAD_WINDOWS as u64)
}

pub(crate) fn spread_instance(idx: ScalarType) -> Instance {
    Instance {
        source: "#include \"gather.cu\"\n".to_string(),
        expr: format!("ds_index_spread<{}, 256>", idx.name()),
    }
}

/// The scatter into `out` through a stable pass over the top 8 bits of the indices (the
/// sort's histogram checks them), then the scatter of the partitioned pairs.
#[allow(clippy::too_many_arguments)]
fn scatter_partitioned(
    gpu: &Arc<Gpu>,
    ty: ScalarType,
    vals: Ptr,
    idx_ty: ScalarType,
    idx: Ptr,
    n: usize,
    out: Ptr,
    len: usize,
) -> Result<()> {
    let s = sort_by_index(gpu, idx_ty, idx, n, ty, vals, len, true)?;
    let sv = s.values()?;
    launch(
        gpu,
        "ds_scatter",
        ty,
        idx_ty,
        &[(s.keys.ptr(), idx_ty.size()), (sv.ptr(), ty.size())],
        n,
        scatter_args(sv.ptr(), s.keys.ptr(), out, len, n, None),
    )?;
    s.check(gpu)
}
