//! `reduce` and `fold` on the GPU (`kernels/reduce.cu`), and the counting of nonzero flags
//! that the segment operations size their output with.

use super::jit::Instance;
use super::{Args, Buffer, Gpu, PARTIAL_BYTES, Ptr, counter, tuning};
use crate::element::ScalarType;
use crate::error::Result;
use crate::op::Op;
use std::sync::Arc;

/// The C++ functor of an operator.
pub(crate) fn op_functor(op: Op) -> &'static str {
    match op {
        Op::Add => "ds::OpAdd",
        Op::Mul => "ds::OpMul",
        Op::Min => "ds::OpMin",
        Op::Max => "ds::OpMax",
        Op::BitAnd => "ds::OpAnd",
        Op::BitOr => "ds::OpOr",
        Op::BitXor => "ds::OpXor",
    }
}

/// What the reduction combines: the elements (in their compute type) or, as u64, whether
/// each is nonzero.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Load {
    Value,
    Nonzero,
}

pub(crate) fn instance(ty: ScalarType, op: Op, load: Load, aligned: bool) -> Instance {
    let t = ty.name();
    let l = match load {
        Load::Value => format!("ds::LoadValue<{t}>"),
        Load::Nonzero => format!("ds::LoadNonzero<{t}>"),
    };
    Instance {
        source: "#include \"reduce.cu\"\n".to_string(),
        expr: format!(
            "ds_reduce<{t}, {}, {l}, {}, {}, {}, {aligned}>",
            op_functor(op),
            tuning::REDUCE.block,
            tuning::vec(ty.size()),
            tuning::REDUCE.rounds
        ),
    }
}

/// Queues the combination of the `n > 0` elements at `src` into `dst`: stored as `ty`
/// (`Load::Value`), or the count of nonzero elements as a u64 (`Load::Nonzero`).
pub(crate) fn reduce_into(
    gpu: &Arc<Gpu>,
    ty: ScalarType,
    op: Op,
    load: Load,
    src: Ptr,
    n: usize,
    dst: Ptr,
) -> Result<()> {
    let sh = tuning::REDUCE;
    let vec = tuning::vec(ty.size());
    let aligned = src.aligned(16);
    let kernel = gpu.jit.get(&instance(ty, op, load, aligned))?;
    let tiles = sh.tiles(n, vec);
    let grid = gpu.wave(&kernel, sh.block, tiles)?;
    // One partial result per block (8 bytes each, the widest accumulator): in the stream's
    // buffer where the wave fits it.
    let bytes = 8 * grid as usize;
    let own = Buffer::new(gpu, if bytes > PARTIAL_BYTES { bytes } else { 0 })?;
    let partial = if bytes > PARTIAL_BYTES {
        own.ptr()
    } else {
        gpu.partials()
    };
    gpu.launch(
        &kernel,
        grid,
        sh.block,
        Args::new()
            .ptr(src)
            .u64(n as u64)
            .ptr(partial)
            .ptr(gpu.counter(counter::DONE))
            .ptr(dst),
    )
}

/// As `reduce_into`, waiting for the result: its stored bits (or the count).
pub(crate) fn reduce(
    gpu: &Arc<Gpu>,
    ty: ScalarType,
    op: Op,
    load: Load,
    src: Ptr,
    n: usize,
) -> Result<u64> {
    // The result goes to mapped host memory (a zeroed slot: narrower results read as their
    // bits, zero-extended).
    let m = gpu.mailbox()?;
    reduce_into(gpu, ty, op, load, src, n, m.slot)?;
    gpu.take_slot(m)
}
