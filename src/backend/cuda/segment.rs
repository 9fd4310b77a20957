//! Segmented scans, `segmented_reduce` and `head_flags` on the GPU (`kernels/segment.cu`).

use super::gpu::Gpu;
use super::key::{HeadFlagsKey, Launch, SegReduceKey, SegScanKey, Template};
use super::mem::{Buffer, Ptr};
use super::params::kernel_params;
use super::reduce::reduce;
use super::source;
use super::tuning::{self, Arch};
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
    /// `ds_segreduce`'s parameters: `keys` the keys at the segments' heads (reduce_by_key),
    /// `total` (where not null) the number of segments, `cap` the segments the outputs hold.
    SegReduceParams {
        out: Ptr,
        keys: Ptr,
        total: Ptr,
        n: u64,
        cap: u64,
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
    const KERNEL: &'static str = "ds_segscan";
}

impl Template for SegReduceKey {
    type Params = SegReduceParams;
    const FILE: &'static str = "segment.cu";
    const KERNEL: &'static str = "ds_segreduce";
}

impl Template for HeadFlagsKey {
    type Params = HeadFlagsParams;
    const FILE: &'static str = "segment.cu";
    const KERNEL: &'static str = "ds_head_flags";
}

/// The key of a segmented scan of `n` values of `ty`, `computed` in registers (a lazy source
/// that is not one column: `source::computed`) or not. Stored 8-byte floats, and stored 8-byte
/// integers' sums and products, take 64 registers a thread (`tuning::segscan`).
fn scan_key(
    arch: &Arch,
    ty: ScalarType,
    n: usize,
    op: Op,
    exclusive: bool,
    computed: bool,
) -> SegScanKey {
    let fits_64 = ty.is_float() || matches!(op, Op::Add | Op::Mul);
    let (sh, minb) = tuning::segscan(arch, ty.size(), n, computed, fits_64);
    SegScanKey {
        launch: sh.launch(0, minb),
        op,
        exclusive,
    }
}

fn reduce_key(arch: &Arch, size: usize, n: usize, op: Op, wide: bool, keys: bool) -> SegReduceKey {
    let minb = tuning::segreduce_min_blocks(arch, size, wide);
    SegReduceKey {
        launch: tuning::seg(size, n).launch(0, minb),
        op,
        wide,
        keys,
    }
}

/// The segmented scan of `src` with head flags `flags`.
pub(crate) fn scan(gpu: &Gpu, src: &Source, flags: &Source, op: Op, init: Init) -> Result<Buffer> {
    let (n, size) = (src.len, src.ty().size());
    let out = Buffer::new(&gpu.mem, n * size)?;
    if n == 0 {
        return Ok(out);
    }
    let vec = tuning::vec(size);
    // The tiles follow the shape the instance is compiled for.
    let key = scan_key(
        &gpu.arch,
        src.ty(),
        n,
        op,
        init.is_some(),
        source::computed(src),
    );
    let sh = key.launch.shape();
    let k = gpu.kernel(key, &[(src, vec), (flags, vec)])?;
    let tiles = sh.tiles(n, vec);
    k.launch_single_pass(tiles, sh.block, 0, |s| SegScanParams {
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
fn count_heads(gpu: &Gpu, flags: &Source) -> Result<usize> {
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

/// The room of a lazy input's first `segmented_reduce` output: its worst case (a segment an
/// element) can be far larger than anything stored (the random walkers' 3.3e9 steps make
/// 65 536 segments), and a lazy pipeline stores nothing of its input's size.
const LAZY_ROOM_BYTES: usize = 4 << 20;

/// One value per segment: the buffer and the number of segments.
///
/// Where the caller does not know the number (`known`), one pass both reduces and counts. The
/// output of a stored input, or of a lazy one whose worst case fits in `LAZY_ROOM_BYTES`, is
/// allocated for the worst case, as compaction's (no larger than the input), and moved to
/// storage of its own size when much of it is left over. A larger lazy input's holds
/// `LAZY_ROOM_BYTES`, where the segments of its first room-full of flags, counted, promise that
/// all of them fit with room to spare; else they are counted first (a pass over the flags
/// alone, where a second reduction would evaluate the values again). Where more segments come
/// than the output holds, the kernel still counts them all, and runs again into storage of
/// their number. (Counting first costs a pass evaluating the flags: 4.4 of the random walkers'
/// 22 ms on an H100; the sample, one room of flags, 0.03% of it.)
pub(crate) fn reduce_segments(
    gpu: &Gpu,
    src: &Source,
    flags: &Source,
    op: Op,
    known: Option<usize>,
) -> Result<(Buffer, usize)> {
    let (n, size) = (src.len, src.ty().size());
    if let Some(segments) = known {
        let out = Buffer::new(&gpu.mem, segments * size)?;
        launch_reduce(gpu, src, flags, op, None, &out, Ptr(0))?;
        return Ok((out, segments));
    }
    if n == 0 {
        return Ok((Buffer::new(&gpu.mem, 0)?, 0));
    }
    let room = LAZY_ROOM_BYTES / size;
    let cap = if src.as_column().is_some() || n <= room {
        n
    } else {
        let sampled = count_heads(gpu, &flags.slice(0, room))?;
        if sampled.saturating_mul(n / room).saturating_mul(2) > room {
            let segments = count_heads(gpu, flags)?;
            return reduce_segments(gpu, src, flags, op, Some(segments));
        }
        room
    };
    let out = Buffer::new(&gpu.mem, cap * size)?;
    let total = gpu.mem.mailbox()?;
    launch_reduce(gpu, src, flags, op, None, &out, total.slot)?;
    let segments = gpu.mem.take_slot(total)? as usize;
    if segments <= cap {
        return Ok((out.fit(&gpu.mem, segments * size)?, segments));
    }
    drop(out);
    reduce_segments(gpu, src, flags, op, Some(segments))
}

/// `reduce_by_key` in one pass: for each segment the key at its head and the combination of its
/// values. The outputs are allocated for the worst case (a segment an element, as CUB's callers
/// do), the kernel counts the segments, and the count is read back; results with fewer than
/// n/16 segments move to storage of their own size (as compaction's).
pub(crate) fn reduce_by_key(
    gpu: &Gpu,
    keys: &Source,
    values: &Source,
    flags: &Source,
    op: Op,
) -> Result<(Buffer, Buffer, usize)> {
    let n = values.len;
    let (ks, vs) = (keys.ty().size(), values.ty().size());
    let out_keys = Buffer::new(&gpu.mem, n * ks)?;
    let out = Buffer::new(&gpu.mem, n * vs)?;
    if n == 0 {
        return Ok((out_keys, out, 0));
    }
    let total = gpu.mem.mailbox()?;
    launch_reduce(
        gpu,
        values,
        flags,
        op,
        Some((keys, &out_keys)),
        &out,
        total.slot,
    )?;
    let count = gpu.mem.take_slot(total)? as usize;
    Ok((
        out_keys.fit(&gpu.mem, count * ks)?,
        out.fit(&gpu.mem, count * vs)?,
        count,
    ))
}

/// Queues `ds_segreduce` over the `src.len` elements into `out` (and the keys at the heads into
/// the buffer given with them), which hold the first segments, as many as `out` has room for;
/// the number of segments to `total` where not null.
fn launch_reduce(
    gpu: &Gpu,
    src: &Source,
    flags: &Source,
    op: Op,
    keys: Option<(&Source, &Buffer)>,
    out: &Buffer,
    total: Ptr,
) -> Result<()> {
    let (n, size) = (src.len, src.ty().size());
    if n == 0 {
        return Ok(());
    }
    let vec = tuning::vec(size);
    let wide = n as u64 >= u32::MAX as u64;
    // Without keys, the flags stand in for the (unread) key source.
    let (key_src, key_out) = match keys {
        Some((k, b)) => (k, b.ptr()),
        None => (flags, Ptr(0)),
    };
    let key = reduce_key(&gpu.arch, size, n, op, wide, keys.is_some());
    let sh = key.launch.shape();
    let k = gpu.kernel(key, &[(src, vec), (flags, vec), (key_src, 1)])?;
    let tiles = sh.tiles(n, vec);
    k.launch_single_pass(tiles, sh.block, 0, |s| SegReduceParams {
        out: out.ptr(),
        keys: key_out,
        total,
        n: n as u64,
        cap: (out.bytes() / size) as u64,
        counter: s.counter,
        status: s.status,
        base: s.base,
        epoch: s.epoch,
        tiles: tiles as u32,
    })
}

/// 1 where an element starts a run of equal elements (bitwise), else 0.
pub(crate) fn head_flags(gpu: &Gpu, src: &Source) -> Result<Buffer> {
    let n = src.len;
    let out = Buffer::new(&gpu.mem, n)?;
    if n == 0 {
        return Ok(out);
    }
    let block = tuning::FLAT_BLOCK;
    let launch = Launch::block(block);
    let k = gpu.kernel(HeadFlagsKey { launch }, &[(src, 1)])?;
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

    /// Values enough for the tiles of large inputs.
    const LARGE: usize = 1 << 40;

    /// The instances a compile check builds, in the tiles of large inputs; for each of
    /// `lazy_values`, also its inclusive sum under stored flags; the small inputs' tiles of the
    /// types that have them (sums, and reduce_by_key's f32 sums over u32 keys).
    pub(crate) fn variants(
        arch: &Arch,
        lazy_flags: &[SourceKey],
        lazy_values: &[SourceKey],
    ) -> Vec<KernelKey> {
        let mut v = Vec::new();
        for s in lazy_values {
            v.push(KernelKey {
                functor: None,
                family: scan_key(arch, s.ty, LARGE, Op::Add, false, s.computed()).into(),
                sources: vec![s.clone(), SourceKey::plain(ScalarType::U8, s.avec)],
            });
        }
        for f in lazy_flags {
            let (ty, vec) = (ScalarType::F32, tuning::vec(4));
            v.push(KernelKey {
                functor: None,
                family: reduce_key(arch, 4, LARGE, Op::Add, false, false).into(),
                sources: vec![SourceKey::plain(ty, vec), f.clone(), f.clone()],
            });
            // reduce_by_key: u32 keys (the flags' column) at the heads.
            v.push(KernelKey {
                functor: None,
                family: reduce_key(arch, 4, LARGE, Op::Add, false, true).into(),
                sources: vec![
                    SourceKey::plain(ty, vec),
                    f.clone(),
                    SourceKey::plain(ScalarType::U32, 1),
                ],
            });
            v.push(KernelKey {
                functor: None,
                family: scan_key(arch, ScalarType::F32, LARGE, Op::Add, true, false).into(),
                sources: vec![SourceKey::plain(ty, vec), f.clone()],
            });
        }
        let flags = |vec| SourceKey::plain(ScalarType::U8, vec);
        for ty in ScalarType::ALL {
            let (size, vec) = (ty.size(), tuning::vec(ty.size()));
            v.push(KernelKey {
                functor: None,
                family: HeadFlagsKey {
                    launch: Launch::block(tuning::FLAT_BLOCK),
                }
                .into(),
                sources: vec![SourceKey::plain(ty, 1)],
            });
            for op in Op::ALL.into_iter().filter(|o| o.applies_to(ty)) {
                for exclusive in [false, true] {
                    v.push(KernelKey {
                        functor: None,
                        family: scan_key(arch, ty, LARGE, op, exclusive, false).into(),
                        sources: vec![SourceKey::plain(ty, vec), flags(vec)],
                    });
                }
                v.push(KernelKey {
                    functor: None,
                    family: reduce_key(arch, size, LARGE, op, false, false).into(),
                    sources: vec![SourceKey::plain(ty, vec), flags(vec), flags(1)],
                });
            }
            v.push(KernelKey {
                functor: None,
                family: reduce_key(arch, size, LARGE, Op::Add, true, false).into(),
                sources: vec![SourceKey::plain(ty, 0), flags(0), flags(1)],
            });
            v.push(KernelKey {
                functor: None,
                family: reduce_key(arch, 4, LARGE, Op::Min, false, true).into(),
                sources: vec![
                    SourceKey::plain(ScalarType::I32, 4),
                    flags(4),
                    SourceKey::plain(ty, 1),
                ],
            });
            v.push(KernelKey {
                functor: None,
                family: scan_key(arch, ty, LARGE, Op::Max, false, false).into(),
                sources: vec![SourceKey::plain(ty, 0), flags(0)],
            });
            if tuning::seg(size, 1).rounds != tuning::seg(size, LARGE).rounds {
                for exclusive in [false, true] {
                    v.push(KernelKey {
                        functor: None,
                        family: scan_key(arch, ty, 1, Op::Add, exclusive, false).into(),
                        sources: vec![SourceKey::plain(ty, vec), flags(vec)],
                    });
                }
                v.push(KernelKey {
                    functor: None,
                    family: reduce_key(arch, size, 1, Op::Add, false, false).into(),
                    sources: vec![SourceKey::plain(ty, vec), flags(vec), flags(1)],
                });
            }
        }
        v.push(KernelKey {
            functor: None,
            family: reduce_key(arch, 4, 1, Op::Add, false, true).into(),
            sources: vec![
                SourceKey::plain(ScalarType::F32, 4),
                flags(4),
                SourceKey::plain(ScalarType::U32, 1),
            ],
        });
        v
    }
}
