//! `inclusive_scan` and `exclusive_scan` on the GPU (`kernels/scan.cu`), and the launch of
//! every single-pass kernel built on the look-back (scans, segments, compaction).

use super::jit::{Instance, Kernel};
use super::reduce::op_functor;
use super::{Args, Buffer, Gpu, PassSlots, Ptr, tuning};
use crate::element::ScalarType;
use crate::error::Result;
use crate::op::Op;
use std::sync::Arc;

/// Tiles of a single-pass kernel of shape `sh` over `n` elements of size `size`.
pub(crate) fn tiles(n: usize, size: usize, sh: tuning::Shape) -> u64 {
    sh.tiles(n, tuning::vec(size))
}

/// Whether every pointer (with its element size) allows the whole-vector accesses of a
/// single-pass kernel whose vectors hold `vec` elements.
pub(crate) fn all_aligned(vec: u32, ptrs: &[(Ptr, usize)]) -> bool {
    ptrs.iter()
        .all(|&(p, size)| p.aligned((vec as usize * size).min(16)))
}

/// Launches a single-pass kernel of `tiles` tiles, with `smem` bytes of dynamic shared memory a
/// block, and the arguments `args` builds from its look-back slots (they end with counter,
/// base, epoch, status, tiles, as every such kernel takes them).
pub(crate) fn launch_single_pass(
    gpu: &Gpu,
    kernel: &Kernel,
    tiles: u64,
    block: u32,
    smem: u32,
    args: impl FnOnce() -> Args,
) -> Result<()> {
    if tiles == 0 {
        return Ok(());
    }
    // An aggregate slot and an inclusive-prefix slot a tile.
    let status = 2 * tiles as usize * tuning::SLOT_BYTES;
    let args = args();
    gpu.single_pass(tiles, status, |s: &PassSlots| {
        let a = args
            .ptr(s.counter)
            .u32(s.base)
            .u32(s.epoch)
            .ptr(s.status)
            .u32(tiles as u32);
        gpu.launch_smem(kernel, tiles, block, smem, a)
    })
}

pub(crate) fn instance(ty: ScalarType, op: Op, aligned: bool, exclusive: bool) -> Instance {
    let sh = tuning::scan(ty.size());
    Instance {
        source: "#include \"scan.cu\"\n".to_string(),
        expr: format!(
            "ds_scan<{}, {}, {}, {}, {}, {aligned}, {exclusive}>",
            ty.name(),
            op_functor(op),
            sh.block,
            sh.rounds,
            tuning::scan_min_blocks()
        ),
    }
}

/// The inclusive scan, or the exclusive one starting from the element whose compute bits are
/// `init`, of the `n` elements at `src`.
pub(crate) fn scan(
    gpu: &Arc<Gpu>,
    ty: ScalarType,
    op: Op,
    src: Ptr,
    n: usize,
    exclusive: bool,
    init: u64,
) -> Result<Buffer> {
    let size = ty.size();
    let out = Buffer::new(gpu, n * size)?;
    if n == 0 {
        return Ok(out);
    }
    let aligned = all_aligned(tuning::vec(size), &[(src, size), (out.ptr(), size)]);
    let kernel = gpu.jit.get(&instance(ty, op, aligned, exclusive))?;
    let sh = tuning::scan(size);
    // The tile waits in shared memory.
    let smem = sh.tile(tuning::vec(size)) * size as u32;
    launch_single_pass(gpu, &kernel, tiles(n, size, sh), sh.block, smem, || {
        Args::new().ptr(src).ptr(out.ptr()).u64(n as u64).u64(init)
    })?;
    Ok(out)
}
