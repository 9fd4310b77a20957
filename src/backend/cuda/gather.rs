//! `gather` and `scatter` on the GPU (`kernels/gather.cu`), bounds-checked: the kernels note
//! the lowest position of an index outside the target in a mailbox, which the host reads when
//! the result is first used (a kernel reads it, it is copied to the host), not before the call
//! returns: a gather or scatter queues its kernels and returns at once, and a result with a
//! bad index gives `IndexOutOfBounds` to every use. (`dev.synchronize()` does not read the
//! checks: on a device that threads share, it would report another thread's bad index.)
//!
//! A scatter whose target is larger than the L2 cache and whose indices are far apart (a
//! permutation, a transpose) first partitions the (index, value) pairs by the top 8 bits of
//! the index, one stable radix pass (`sort.rs`): the writes then arrive a slice of the target
//! at a time, each 32-byte sector filled while it sits in L2, instead of one read-modify-write
//! of a sector in memory for every 4-byte value.

use super::bounds::{BoundsCheck, CHAIN_POSITION_BITS, Failed, ScatterChain};
use super::gpu::Gpu;
use super::key::{GatherKey, Launch, ScatterBaseKey, ScatterKey, SpreadKey, Template};
use super::map::materialize;
use super::mem::{Buffer, Ptr, Report};
use super::params::kernel_params;
use super::single_pass::counter;
use super::sort::sort_by_index;
use super::tuning;
use crate::error::{Error, Result};
use crate::item::ScalarType;
use crate::source::Source;
use std::sync::Arc;

kernel_params!(
    /// `ds_gather`'s parameters: a bad index's position goes to `err` (atomicMax of its
    /// complement), and `flag` (mapped host memory) is set.
    GatherParams {
        out: Ptr,
        n: u64,
        len: u64,
        err: Ptr,
        flag: Ptr,
    }
);

kernel_params!(
    /// `ds_scatter`'s parameters: where a bad index is noted (`Report`: its position, or its
    /// value in a chain of in-place scatters; `err` null: skipped, already reported).
    ScatterParams {
        out: Ptr,
        n: u64,
        len: u64,
        err: Ptr,
        flag: Ptr,
        val: Ptr,
        lock: Ptr,
        tag: u64,
    }
);

kernel_params!(
    /// `ds_scatter_base`'s parameters: `ScatterParams`' and the grid barrier's two counter
    /// words (`ds::grid_barrier`'s `arrive` and `gen`).
    ScatterBaseParams {
        out: Ptr,
        n: u64,
        len: u64,
        err: Ptr,
        flag: Ptr,
        arrive: Ptr,
        passed: Ptr,
    }
);

kernel_params!(
    /// `ds_index_spread`'s parameters.
    SpreadParams {
        n: u64,
        span: u64,
        far: Ptr,
        windows: u32,
    }
);

impl Template for GatherKey {
    type Params = GatherParams;
    const FILE: &'static str = "gather.cu";
    const KERNEL: &'static str = "ds_gather";
}

impl Template for ScatterKey {
    type Params = ScatterParams;
    const FILE: &'static str = "gather.cu";
    const KERNEL: &'static str = "ds_scatter";
}

impl Template for ScatterBaseKey {
    type Params = ScatterBaseParams;
    const FILE: &'static str = "gather.cu";
    const KERNEL: &'static str = "ds_scatter_base";
}

impl Template for SpreadKey {
    type Params = SpreadParams;
    const FILE: &'static str = "gather.cu";
    const KERNEL: &'static str = "ds_index_spread";
}

/// Elements a thread takes per access (by the wider of value and index).
fn vec(ty: ScalarType, idx: ScalarType) -> u32 {
    tuning::vec(ty.size().max(idx.size()))
}

/// Grid of a gather or scatter of `n` elements.
fn grid(n: usize, vec: u32, wave: impl FnOnce(u64) -> Result<u64>) -> Result<u64> {
    let tiles = tuning::gather().tiles(n, vec);
    if tuning::gather_tiles() {
        Ok(tiles.clamp(1, i32::MAX as u64))
    } else {
        wave(tiles)
    }
}

/// `out[i] = src[idx[i]]`.
pub(crate) fn gather(gpu: &Gpu, src: &Source, idx: &Source) -> Result<Buffer> {
    let (n, ty) = (idx.len, src.ty());
    let out = Buffer::new(&gpu.mem, n * ty.size())?;
    if n == 0 {
        return Ok(out);
    }
    let v = vec(ty, idx.ty());
    let sh = tuning::gather();
    let key = GatherKey {
        launch: sh.launch(v, 0),
    };
    let k = gpu.kernel(key, &[(src, 1), (idx, v)])?;
    let err = gpu.mem.mailbox()?;
    let g = grid(n, v, |t| k.wave(sh.block, t))?;
    k.launch(
        g,
        sh.block,
        0,
        &GatherParams {
            out: out.ptr(),
            n: n as u64,
            len: src.len as u64,
            err: err.word,
            flag: err.slot,
        },
    )?;
    Ok(BoundsCheck::guard(gpu, out, err.keep()?, idx, src.len))
}

/// Queues the scatter of `vals` to `idx` into `out` (of `len` elements); bad indices are
/// noted as `report` says.
fn scatter_into(
    gpu: &Gpu,
    vals: &Source,
    idx: &Source,
    out: Ptr,
    len: usize,
    report: Report,
) -> Result<()> {
    let v = vec(vals.ty(), idx.ty());
    let sh = tuning::gather();
    let key = ScatterKey {
        launch: sh.launch(v, 0),
    };
    let k = gpu.kernel(key, &[(vals, v), (idx, v)])?;
    let g = grid(vals.len, v, |t| k.wave(sh.block, t))?;
    k.launch(
        g,
        sh.block,
        0,
        &ScatterParams {
            out,
            n: vals.len as u64,
            len: len as u64,
            err: report.err,
            flag: report.flag,
            val: report.val,
            lock: report.lock,
            tag: report.tag,
        },
    )
}

/// A copy of `base` with `out[idx[i]] = vals[i]`.
pub(crate) fn scatter(gpu: &Gpu, vals: &Source, idx: &Source, base: &Source) -> Result<Buffer> {
    let (n, len) = (vals.len, base.len);
    if n > 0 && gpu.arch.cooperative && len * vals.ty().size() <= tuning::scatter_base_bytes() {
        return scatter_with_base(gpu, vals, idx, base);
    }
    let out = materialize(gpu, base)?;
    if n == 0 {
        return Ok(out);
    }
    if partition_pays(gpu, vals.ty(), idx, len)? {
        // Without the memory for the partition, the direct scatter below.
        match scatter_partitioned(gpu, vals, idx, out.ptr(), len) {
            Err(Error::OutOfMemory { .. }) => {}
            r => return r.map(|()| out),
        }
    }
    let err = gpu.mem.mailbox()?;
    scatter_into(gpu, vals, idx, out.ptr(), len, Report::position(&err))?;
    Ok(BoundsCheck::guard(gpu, out, err.keep()?, idx, len))
}

/// `out[idx[i]] = vals[i]` into rows `off..off + len` of `buf`, a column that no other sequence
/// shares: `scatter` without the copy of a base. The buffer keeps the checks it had (a bad
/// index of the writes that made it stays an error) and gets this scatter's, which joins the
/// chain of the scatters into it since its last read where there is one (`ScatterChain`: no
/// wait however many scatters come before the read); where the call itself fails after
/// writing (the partitioned path reads its check), every later use of the buffer gets that
/// error too.
pub(crate) fn scatter_in_place(
    gpu: &Gpu,
    vals: &Source,
    idx: &Source,
    buf: &mut Buffer,
    off: usize,
    len: usize,
) -> Result<()> {
    if vals.len == 0 {
        return Ok(());
    }
    let out = buf.ptr().add(off * vals.ty().size());
    if partition_pays(gpu, vals.ty(), idx, len)? {
        match scatter_partitioned(gpu, vals, idx, out, len) {
            Err(Error::OutOfMemory { .. }) => {}
            Err(e) => {
                buf.add_check(Arc::new(Failed(e.clone())));
                return Err(e);
            }
            Ok(()) => return Ok(()),
        }
    }
    if vals.len as u64 > 1 << CHAIN_POSITION_BITS {
        let err = gpu.mem.mailbox()?;
        scatter_into(gpu, vals, idx, out, len, Report::position(&err))?;
        buf.add_check(BoundsCheck::check(gpu, err.keep()?, idx, len));
        return Ok(());
    }
    match buf.join_check(len) {
        Some(report) => scatter_into(gpu, vals, idx, out, len, report),
        None => {
            let (chain, report) = ScatterChain::start(gpu, len)?;
            buf.add_check(chain);
            scatter_into(gpu, vals, idx, out, len, report)
        }
    }
}

/// `scatter` in one launch (`ds_scatter_base`): the blocks copy the base, wait for each other,
/// then scatter, where a small target would otherwise take a copy (and its launch) first.
/// One wave of blocks, launched cooperatively so that all are resident at once (the barrier
/// waits for every block, not only for those that started before).
fn scatter_with_base(gpu: &Gpu, vals: &Source, idx: &Source, base: &Source) -> Result<Buffer> {
    let (n, len) = (vals.len, base.len);
    let out = Buffer::new(&gpu.mem, len * vals.ty().size())?;
    let v = vec(vals.ty(), idx.ty());
    let sh = tuning::gather();
    let key = ScatterBaseKey {
        launch: sh.launch(v, 0),
    };
    let k = gpu.kernel(key, &[(vals, v), (idx, v), (base, v)])?;
    let tiles = sh.tiles(n.max(len), v);
    let err = gpu.mem.mailbox()?;
    k.launch_cooperative(
        k.wave(sh.block, tiles)?,
        sh.block,
        &ScatterBaseParams {
            out: out.ptr(),
            n: n as u64,
            len: len as u64,
            err: err.word,
            flag: err.slot,
            arrive: gpu.passes.counter(counter::BARRIER),
            passed: gpu.passes.counter(counter::BARRIER_GEN),
        },
    )?;
    Ok(BoundsCheck::guard(gpu, out, err.keep()?, idx, len))
}

/// Whether partitioning the writes pays: the target exceeds L2, the writes cover a good part
/// of it (at least a quarter of its slots), and most sampled windows of 32 neighbouring
/// indices span more than SPREAD_SPAN elements. Costs one small kernel and a wait, only for
/// targets beyond L2 (a scatter there takes 0.1 ms or more).
fn partition_pays(gpu: &Gpu, ty: ScalarType, idx: &Source, len: usize) -> Result<bool> {
    let n = idx.len;
    if len * ty.size() <= tuning::scatter_partition_bytes(&gpu.arch) || n < len / 4 || n < 32 {
        return Ok(false);
    }
    let block = tuning::FLAT_BLOCK;
    let k = gpu.kernel(
        SpreadKey {
            launch: Launch::block(block),
        },
        &[(idx, 1)],
    )?;
    let far = gpu.mem.mailbox()?;
    k.launch(
        (tuning::SPREAD_WINDOWS * 32).div_ceil(block) as u64,
        block,
        0,
        &SpreadParams {
            n: n as u64,
            span: tuning::SPREAD_SPAN,
            far: far.word,
            windows: tuning::SPREAD_WINDOWS,
        },
    )?;
    Ok(gpu.mem.take_word(far)? * 2 > tuning::SPREAD_WINDOWS as u64)
}

/// The scatter into `out` through a stable pass over the top 8 bits of the indices (the
/// sort's histogram checks them), then the scatter of the partitioned pairs.
fn scatter_partitioned(gpu: &Gpu, vals: &Source, idx: &Source, out: Ptr, len: usize) -> Result<()> {
    let s = sort_by_index(gpu, idx, vals, len, true)?;
    let (k, v) = (
        Source::column(s.keys.clone()),
        Source::column(s.values()?.clone()),
    );
    scatter_into(gpu, &v, &k, out, len, Report::default())?;
    s.check(gpu)
}

#[cfg(test)]
pub(crate) mod check {
    use super::*;
    use crate::backend::cuda::key::KernelKey;
    use crate::backend::cuda::source::SourceKey;

    /// The instances a compile check builds; for each of `lazy`, its gather by u32 indices and
    /// its scatter (values) by them.
    pub(crate) fn variants(lazy: &[SourceKey]) -> Vec<KernelKey> {
        let sh = tuning::gather();
        let gather = |w: u32, sources: Vec<SourceKey>| KernelKey {
            functor: None,
            family: GatherKey {
                launch: sh.launch(w, 0),
            }
            .into(),
            sources,
        };
        let scatter = |w: u32, sources: Vec<SourceKey>| KernelKey {
            functor: None,
            family: ScatterKey {
                launch: sh.launch(w, 0),
            }
            .into(),
            sources,
        };
        let mut v = Vec::new();
        for s in lazy {
            let i = ScalarType::U32;
            let w = vec(s.ty, i);
            v.push(gather(w, vec![s.clone(), SourceKey::plain(i, w)]));
            v.push(scatter(w, vec![s.clone(), SourceKey::plain(i, w)]));
        }
        for i in [ScalarType::U32, ScalarType::U64] {
            v.push(KernelKey {
                functor: None,
                family: SpreadKey {
                    launch: Launch::block(tuning::FLAT_BLOCK),
                }
                .into(),
                sources: vec![SourceKey::plain(i, 1)],
            });
            for t in ScalarType::ALL {
                let w = vec(t, i);
                for avec in [w, 0] {
                    v.push(gather(
                        w,
                        vec![SourceKey::plain(t, 1), SourceKey::plain(i, avec)],
                    ));
                    v.push(scatter(
                        w,
                        vec![SourceKey::plain(t, avec), SourceKey::plain(i, avec)],
                    ));
                    v.push(KernelKey {
                        functor: None,
                        family: ScatterBaseKey {
                            launch: sh.launch(w, 0),
                        }
                        .into(),
                        sources: vec![
                            SourceKey::plain(t, avec),
                            SourceKey::plain(i, avec),
                            SourceKey::plain(t, avec),
                        ],
                    });
                }
            }
        }
        v
    }
}
