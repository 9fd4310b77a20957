//! Segmented scans, `segmented_reduce` and `head_flags` on the GPU (`kernels/segment.cu`).

use super::jit::Instance;
use super::reduce::{Load, op_functor, reduce};
use super::scan::{all_aligned, launch_single_pass, tiles};
use super::{Args, Buffer, Gpu, Ptr, tuning};
use crate::element::ScalarType;
use crate::error::Result;
use crate::op::Op;
use std::sync::Arc;

pub(crate) fn scan_instance(ty: ScalarType, op: Op, aligned: bool, exclusive: bool) -> Instance {
    let sh = tuning::seg(ty.size());
    Instance {
        source: "#include \"segment.cu\"\n".to_string(),
        expr: format!(
            "ds_segscan<{}, {}, {}, {}, {}, {aligned}, {exclusive}>",
            ty.name(),
            op_functor(op),
            sh.block,
            sh.rounds,
            tuning::register_min_blocks()
        ),
    }
}

pub(crate) fn reduce_instance(ty: ScalarType, op: Op, wide: bool, aligned: bool) -> Instance {
    let sh = tuning::seg(ty.size());
    Instance {
        source: "#include \"segment.cu\"\n".to_string(),
        expr: format!(
            "ds_segreduce<{}, {}, {}, {}, {}, {}, {aligned}>",
            ty.name(),
            op_functor(op),
            if wide { "u64" } else { "u32" },
            sh.block,
            sh.rounds,
            tuning::register_min_blocks()
        ),
    }
}

pub(crate) fn head_flags_instance(ty: ScalarType) -> Instance {
    Instance {
        source: "#include \"segment.cu\"\n".to_string(),
        expr: format!("ds_head_flags<{}, 256>", ty.name()),
    }
}

/// The segmented scan of `n` elements at `src` with head flags at `flags`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn scan(
    gpu: &Arc<Gpu>,
    ty: ScalarType,
    op: Op,
    src: Ptr,
    flags: Ptr,
    n: usize,
    exclusive: bool,
    init: u64,
) -> Result<Buffer> {
    let size = ty.size();
    let out = Buffer::new(gpu, n * size)?;
    if n == 0 {
        return Ok(out);
    }
    let aligned = all_aligned(
        tuning::vec(size),
        &[(src, size), (flags, 1), (out.ptr(), size)],
    );
    let kernel = gpu.jit.get(&scan_instance(ty, op, aligned, exclusive))?;
    launch_single_pass(
        gpu,
        &kernel,
        tiles(n, size, tuning::seg(size)),
        tuning::seg(size).block,
        0,
        || {
            Args::new()
                .ptr(src)
                .ptr(flags)
                .ptr(out.ptr())
                .u64(n as u64)
                .u64(init)
        },
    )?;
    Ok(out)
}

/// Number of segments of `n > 0` flags: element 0, and every other nonzero flag.
pub(crate) fn count_heads(gpu: &Arc<Gpu>, flags: Ptr, n: usize) -> Result<usize> {
    if n <= 1 {
        return Ok(n);
    }
    let rest = reduce(
        gpu,
        ScalarType::U8,
        Op::Add,
        Load::Nonzero,
        flags.add(1),
        n - 1,
    )?;
    Ok(rest as usize + 1)
}

/// One value per segment; `segments` is `count_heads` of the flags.
pub(crate) fn reduce_segments(
    gpu: &Arc<Gpu>,
    ty: ScalarType,
    op: Op,
    src: Ptr,
    flags: Ptr,
    n: usize,
    segments: usize,
) -> Result<Buffer> {
    let size = ty.size();
    let out = Buffer::new(gpu, segments * size)?;
    if n == 0 {
        return Ok(out);
    }
    let aligned = all_aligned(tuning::vec(size), &[(src, size), (flags, 1)]);
    let wide = n as u64 >= u32::MAX as u64;
    let kernel = gpu.jit.get(&reduce_instance(ty, op, wide, aligned))?;
    launch_single_pass(
        gpu,
        &kernel,
        tiles(n, size, tuning::seg(size)),
        tuning::seg(size).block,
        0,
        || Args::new().ptr(src).ptr(flags).ptr(out.ptr()).u64(n as u64),
    )?;
    Ok(out)
}

/// 1 where an element starts a run of equal elements (bitwise), else 0.
pub(crate) fn head_flags(gpu: &Arc<Gpu>, ty: ScalarType, src: Ptr, n: usize) -> Result<Buffer> {
    let out = Buffer::new(gpu, n)?;
    if n == 0 {
        return Ok(out);
    }
    let kernel = gpu.jit.get(&head_flags_instance(ty))?;
    let grid = gpu.wave(&kernel, 256, (n as u64).div_ceil(256))?;
    gpu.launch(
        &kernel,
        grid,
        256,
        Args::new().ptr(src).ptr(out.ptr()).u64(n as u64),
    )?;
    Ok(out)
}
