//! Segmented scans, `segmented_reduce` and `head_flags` on the GPU (`kernels/segment.cu`).

use super::gpu::Gpu;
use super::key::{HeadFlagsKey, SegReduceKey, SegScanKey, Template, op_functor};
use super::launch::kernel_params;
use super::mem::{Buffer, Ptr};
use super::reduce::reduce;
use super::tuning;
use crate::backend::Init;
use crate::error::Result;
use crate::expr::trace;
use crate::item::Expr;
use crate::item::ScalarType;
use crate::op::Op;
use crate::source::Source;

kernel_params!(
    /// `ds_segscan`'s parameters (the look-back's as `ScanParams`).
    SegScanParams {
        out: Ptr,
        n: u64,
        init: u64,
        counter: Ptr,
        status: Ptr,
        base: u32,
        epoch: u32,
        tiles: u32,
    }
);

kernel_params!(
    /// `ds_segreduce`'s parameters.
    SegReduceParams {
        out: Ptr,
        n: u64,
        counter: Ptr,
        status: Ptr,
        base: u32,
        epoch: u32,
        tiles: u32,
    }
);

kernel_params!(
    /// `ds_head_flags`' parameters.
    HeadFlagsParams { out: Ptr, n: u64 }
);

impl Template for SegScanKey {
    type Params = SegScanParams;
    const FILE: &'static str = "segment.cu";
    fn name(&self, s: &[String]) -> String {
        format!(
            "ds_segscan<{}, {}, {}, {}, {}, {}, {}>",
            s[0],
            s[1],
            op_functor(self.op),
            self.block,
            self.rounds,
            self.minb,
            self.exclusive
        )
    }
}

impl Template for SegReduceKey {
    type Params = SegReduceParams;
    const FILE: &'static str = "segment.cu";
    fn name(&self, s: &[String]) -> String {
        format!(
            "ds_segreduce<{}, {}, {}, {}, {}, {}, {}>",
            s[0],
            s[1],
            op_functor(self.op),
            if self.wide { "u64" } else { "u32" },
            self.block,
            self.rounds,
            self.minb
        )
    }
}

impl Template for HeadFlagsKey {
    type Params = HeadFlagsParams;
    const FILE: &'static str = "segment.cu";
    fn name(&self, s: &[String]) -> String {
        format!("ds_head_flags<{}, {}>", s[0], self.block)
    }
}

fn scan_key(size: usize, op: Op, exclusive: bool) -> SegScanKey {
    let sh = tuning::seg(size);
    SegScanKey {
        op,
        block: sh.block,
        rounds: sh.rounds,
        minb: tuning::register_min_blocks(),
        exclusive,
    }
}

fn reduce_key(size: usize, op: Op, wide: bool) -> SegReduceKey {
    let sh = tuning::seg(size);
    SegReduceKey {
        op,
        wide,
        block: sh.block,
        rounds: sh.rounds,
        minb: tuning::segreduce_min_blocks(),
    }
}

/// The segmented scan of `src` with head flags `flags`.
pub(crate) fn scan(gpu: &Gpu, src: &Source, flags: &Source, op: Op, init: Init) -> Result<Buffer> {
    let (n, size) = (src.len, src.ty().size());
    let out = Buffer::new(gpu, n * size)?;
    if n == 0 {
        return Ok(out);
    }
    let vec = tuning::vec(size);
    let sh = tuning::seg(size);
    let k = gpu.kernel(
        scan_key(size, op, init.is_some()),
        &[(src, vec), (flags, vec)],
    )?;
    let tiles = sh.tiles(n, vec);
    gpu.launch_single_pass(&k, tiles, sh.block, 0, |s| SegScanParams {
        out: out.ptr(),
        n: n as u64,
        init: init.unwrap_or(0),
        counter: s.counter,
        status: s.status,
        base: s.base,
        epoch: s.epoch,
        tiles: tiles as u32,
    })?;
    Ok(out)
}

/// Number of segments of the `n > 0` flags: element 0, and every other nonzero flag (a
/// reduction of the flags as 0 or 1, counted in u32 where that cannot overflow).
pub(crate) fn count_heads(gpu: &Gpu, flags: &Source) -> Result<usize> {
    let n = flags.len;
    if n <= 1 {
        return Ok(n);
    }
    let wide = n as u64 > u32::MAX as u64;
    let t = if wide {
        trace(&[ScalarType::U8], |a, id| {
            Expr::<u8>::from_node(id, a[0]).ne(0).cast::<u64>()
        })
    } else {
        trace(&[ScalarType::U8], |a, id| {
            Expr::<u8>::from_node(id, a[0]).ne(0).cast::<u32>()
        })
    }?;
    let ones = Source::map(&[&flags.slice(1, n - 1)], &t, n - 1);
    Ok(reduce(gpu, &ones, Op::Add)? as usize + 1)
}

/// One value per segment: the buffer and the number of segments (counted unless `known`).
pub(crate) fn reduce_segments(
    gpu: &Gpu,
    src: &Source,
    flags: &Source,
    op: Op,
    known: Option<usize>,
) -> Result<(Buffer, usize)> {
    let (n, size) = (src.len, src.ty().size());
    let segments = match known {
        Some(s) => s,
        None => count_heads(gpu, flags)?,
    };
    let out = Buffer::new(gpu, segments * size)?;
    if n == 0 {
        return Ok((out, 0));
    }
    let vec = tuning::vec(size);
    let sh = tuning::seg(size);
    let wide = n as u64 >= u32::MAX as u64;
    let k = gpu.kernel(reduce_key(size, op, wide), &[(src, vec), (flags, vec)])?;
    let tiles = sh.tiles(n, vec);
    gpu.launch_single_pass(&k, tiles, sh.block, 0, |s| SegReduceParams {
        out: out.ptr(),
        n: n as u64,
        counter: s.counter,
        status: s.status,
        base: s.base,
        epoch: s.epoch,
        tiles: tiles as u32,
    })?;
    Ok((out, segments))
}

/// 1 where an element starts a run of equal elements (bitwise), else 0.
pub(crate) fn head_flags(gpu: &Gpu, src: &Source) -> Result<Buffer> {
    let n = src.len;
    let out = Buffer::new(gpu, n)?;
    if n == 0 {
        return Ok(out);
    }
    let block = tuning::FLAT_BLOCK;
    let k = gpu.kernel(HeadFlagsKey { block }, &[(src, 1)])?;
    let grid = k.wave(block, (n as u64).div_ceil(block as u64))?;
    k.launch(
        grid,
        block,
        0,
        &HeadFlagsParams {
            out: out.ptr(),
            n: n as u64,
        },
    )?;
    Ok(out)
}

#[cfg(test)]
pub(crate) mod check {
    use super::*;
    use crate::backend::cuda::key::KernelKey;
    use crate::backend::cuda::source::SourceKey;

    /// The instances a compile check builds.
    pub(crate) fn variants(lazy_flags: &[SourceKey]) -> Vec<KernelKey> {
        let mut v = Vec::new();
        for f in lazy_flags {
            let (ty, vec) = (ScalarType::F32, tuning::vec(4));
            v.push(KernelKey {
                functor: None,
                family: reduce_key(4, Op::Add, false).into(),
                sources: vec![SourceKey::plain(ty, vec), f.clone()],
            });
            v.push(KernelKey {
                functor: None,
                family: scan_key(4, Op::Add, true).into(),
                sources: vec![SourceKey::plain(ty, vec), f.clone()],
            });
        }
        let flags = |vec| SourceKey::plain(ScalarType::U8, vec);
        for ty in ScalarType::ALL {
            let (size, vec) = (ty.size(), tuning::vec(ty.size()));
            v.push(KernelKey {
                functor: None,
                family: HeadFlagsKey {
                    block: tuning::FLAT_BLOCK,
                }
                .into(),
                sources: vec![SourceKey::plain(ty, 1)],
            });
            for op in Op::ALL
                .into_iter()
                .filter(|o| !(o.is_bitwise() && ty.is_float()))
            {
                for exclusive in [false, true] {
                    v.push(KernelKey {
                        functor: None,
                        family: scan_key(size, op, exclusive).into(),
                        sources: vec![SourceKey::plain(ty, vec), flags(vec)],
                    });
                }
                v.push(KernelKey {
                    functor: None,
                    family: reduce_key(size, op, false).into(),
                    sources: vec![SourceKey::plain(ty, vec), flags(vec)],
                });
            }
            v.push(KernelKey {
                functor: None,
                family: reduce_key(size, Op::Add, true).into(),
                sources: vec![SourceKey::plain(ty, 0), flags(0)],
            });
            v.push(KernelKey {
                functor: None,
                family: scan_key(size, Op::Max, false).into(),
                sources: vec![SourceKey::plain(ty, 0), flags(0)],
            });
        }
        v
    }
}
