//! The GPU backend: one CUDA device through cudarc (`gpu.rs`: its primary context, one stream
//! per `Device`, and its services), one file per algorithm family, and a compile check of
//! every kernel instance (`compile_check.rs`, a test).
//!
//! The files stand in layers, each using only those below it (no module cycle):
//! - the driver's calls and errors (`driver.rs`), NVRTC (`nvrtc.rs`), launch shapes
//!   (`tuning/`), the compile helpers and the disk cache (`helper.rs`, `disk_cache.rs`);
//! - the services a `Gpu` holds: memory, copies, read-backs and mailboxes (`mem.rs`'s
//!   `Memory`), the single-pass kernels' counters and look-back words (`single_pass.rs`'s
//!   `StreamState`), and the compiler with its caches (`jit.rs`'s `Jit`, over kernel
//!   parameter structs, `params.rs`, sources as kernel parameters, `source.rs`, and typed
//!   kernel keys, `key.rs`);
//! - the `Gpu` (`gpu.rs`), then launches on it (`launch.rs`), then the families.
//!
//! Every `unsafe` block of the crate lives in this folder.

mod assoc;
mod bounds;
mod combine;
mod compact;
pub(crate) mod disk_cache;
mod driver;
mod functor;
mod gather;
mod gpu;
mod helper;
mod histogram;
mod interop;
pub(crate) mod jit;
mod key;
mod launch;
mod map;
mod mem;
mod merge;
pub(crate) mod nccl;
mod nvrtc;
mod params;
mod reduce;
mod scan;
mod search;
mod segment;
mod single_pass;
mod sort;
mod source;
mod tuning;

use super::{Backend, Init, ScanMode, SetOp, SortValues};
use crate::error::Result;
use crate::expr::combiner::Combiner;
use crate::item::ScalarType;
use crate::op::Op;
use crate::source::{Column, Source};
use gpu::Gpu;
use mem::Buffer;
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// A CUDA GPU as a backend.
pub(crate) struct CudaBackend {
    gpu: Arc<Gpu>,
}

impl CudaBackend {
    /// GPU `ordinal` with a new stream, or `Error::NoCuda`.
    pub fn new(ordinal: usize) -> Result<CudaBackend> {
        Ok(CudaBackend {
            gpu: Gpu::new(ordinal)?,
        })
    }
}

/// For the exit test, without a GPU: the quick form of a large scan compiled for `arch` in this
/// thread, then the optimized forms of every type's large sums queued for compile helpers
/// (`jit::compile_in_background`); the handle keeps the queue.
pub(crate) fn compile_scans_in_background(arch: &str) -> Result<impl Sized + use<>> {
    if !driver::nvrtc_present() {
        return Err(crate::Error::NoCuda(
            "the NVRTC library was not found".into(),
        ));
    }
    jit::compile_in_background(arch, &scan::large_sums(&tuning::gpus::for_target(arch)))
}

fn column(b: Buffer, ty: ScalarType, len: usize) -> Column {
    b.into_column(ty, len)
}

/// The value columns of `n` elements a merge or set operation moved with its keys, of the
/// types of `values`' first sides.
fn value_columns(vs: Vec<Buffer>, values: &[(&Source, &Source)], n: usize) -> Vec<Column> {
    vs.into_iter()
        .zip(values)
        .map(|(v, (va, _))| column(v, va.ty(), n))
        .collect()
}

impl Backend for CudaBackend {
    fn name(&self) -> String {
        self.gpu.name.clone()
    }

    fn is_cuda(&self) -> bool {
        true
    }

    fn cuda(&self) -> Option<&CudaBackend> {
        Some(self)
    }

    fn synchronize(&self) -> Result<()> {
        self.gpu.synchronize()
    }

    fn finish_compiling(&self) {
        self.gpu.jit.finish()
    }

    fn time(&self, f: &mut dyn FnMut() -> Result<()>) -> Result<f64> {
        self.gpu.time(f)
    }

    fn memory(&self) -> Result<(usize, usize)> {
        self.gpu.memory()
    }

    fn memory_in_use(&self) -> usize {
        self.gpu.mem.pool.in_use.load(Ordering::Relaxed)
    }

    fn peak_memory_in_use(&self) -> usize {
        self.gpu.mem.pool.peak.load(Ordering::Relaxed)
    }

    fn trim_memory(&self) -> Result<()> {
        self.gpu.mem.trim_memory()
    }

    fn set_kept_memory_limit(&self, bytes: usize) -> Result<()> {
        self.gpu.mem.set_kept_memory_limit(bytes)
    }

    fn reset_peak_memory(&self) {
        let m = &self.gpu.mem.pool;
        m.peak
            .store(m.in_use.load(Ordering::Relaxed), Ordering::Relaxed);
    }

    fn upload(&self, ty: ScalarType, bytes: &[u8], len: usize) -> Result<Column> {
        Ok(column(map::upload(&self.gpu, bytes)?, ty, len))
    }

    fn download(&self, src: &Source, out: &mut [u8]) -> Result<()> {
        map::download(&self.gpu, src, out)
    }

    fn materialize(&self, src: &Source) -> Result<Column> {
        Ok(column(map::materialize(&self.gpu, src)?, src.ty(), src.len))
    }

    fn reduce(&self, src: &Source, op: Op) -> Result<u64> {
        reduce::reduce(&self.gpu, src, op)
    }

    fn reduce_to_column(&self, src: &Source, op: Op) -> Result<Column> {
        let b = reduce::reduce_to_buffer(&self.gpu, src, op)?;
        Ok(column(b, src.ty(), 1))
    }

    fn scan(&self, src: &Source, op: Op, init: Init) -> Result<Column> {
        let b = scan::scan(&self.gpu, src, op, init)?;
        Ok(column(b, src.ty(), src.len))
    }

    fn segmented_scan(&self, src: &Source, flags: &Source, op: Op, init: Init) -> Result<Column> {
        let b = segment::scan(&self.gpu, src, flags, op, init)?;
        Ok(column(b, src.ty(), src.len))
    }

    fn segmented_reduce(
        &self,
        src: &Source,
        flags: &Source,
        op: Op,
        segments: Option<usize>,
    ) -> Result<Column> {
        let (b, segments) = segment::reduce_segments(&self.gpu, src, flags, op, segments)?;
        Ok(column(b, src.ty(), segments))
    }

    fn reduce_by_key(
        &self,
        keys: &Source,
        values: &Source,
        flags: &Source,
        op: Op,
    ) -> Result<(Column, Column)> {
        let (k, v, segments) = segment::reduce_by_key(&self.gpu, keys, values, flags, op)?;
        Ok((
            column(k, keys.ty(), segments),
            column(v, values.ty(), segments),
        ))
    }

    fn head_flags(&self, src: &Source) -> Result<Column> {
        let b = segment::head_flags(&self.gpu, src)?;
        Ok(column(b, ScalarType::Bool, src.len))
    }

    fn compact(&self, src: &Source, flags: &Source) -> Result<Column> {
        let (b, count) = compact::compact(&self.gpu, src, flags)?;
        Ok(column(b, src.ty(), count))
    }

    fn gather(&self, src: &Source, idx: &Source) -> Result<Column> {
        let b = gather::gather(&self.gpu, src, idx)?;
        Ok(column(b, src.ty(), idx.len))
    }

    fn scatter(&self, vals: &Source, idx: &Source, base: &Source) -> Result<Column> {
        let b = gather::scatter(&self.gpu, vals, idx, base)?;
        Ok(column(b, base.ty(), base.len))
    }

    fn scatter_into(&self, vals: &Source, idx: &Source, out: &mut Source) -> Result<()> {
        // In place where `out` is one stored column whose memory nothing else holds (no other
        // sequence, slice or lazy sequence over it: those would see the writes).
        if let Some((buf, off, len)) = out.sole_storage_mut::<Buffer>() {
            return gather::scatter_in_place(&self.gpu, vals, idx, buf, off, len);
        }
        super::scatter_anew(self, vals, idx, out)
    }

    fn scatter_combine(
        &self,
        vals: &Source,
        idx: &Source,
        base: &Source,
        op: Op,
    ) -> Result<Column> {
        let b = combine::scatter_combine(&self.gpu, vals, idx, base, op)?;
        Ok(column(b, base.ty(), base.len))
    }

    fn sort(
        &self,
        keys: &Source,
        values: Option<SortValues<'_>>,
        descending: bool,
    ) -> Result<(Column, Option<Column>)> {
        let s = sort::sort(&self.gpu, keys, values.map(|v| v.values), descending)?;
        Ok((s.keys, s.values))
    }

    fn search(
        &self,
        hay: &Source,
        needles: &Source,
        upper: bool,
        idx: ScalarType,
        ascending_needles: bool,
    ) -> Result<Column> {
        let b = search::search(&self.gpu, hay, needles, upper, idx, ascending_needles)?;
        Ok(column(b, idx, needles.len))
    }

    fn merge(
        &self,
        a: &Source,
        b: &Source,
        values: &[(&Source, &Source)],
    ) -> Result<(Column, Vec<Column>)> {
        let (k, vs) = merge::merge(&self.gpu, a, b, values)?;
        let n = a.len + b.len;
        Ok((column(k, a.ty(), n), value_columns(vs, values, n)))
    }

    fn set_op(
        &self,
        a: &Source,
        b: &Source,
        op: SetOp,
        values: &[(&Source, &Source)],
    ) -> Result<(Column, Vec<Column>)> {
        let (k, vs, n) = merge::set_op(&self.gpu, a, b, op, values)?;
        Ok((column(k, a.ty(), n), value_columns(vs, values, n)))
    }

    fn reduce_with(&self, srcs: &[Source], c: &Combiner) -> Result<Vec<u64>> {
        assoc::reduce(&self.gpu, srcs, c)
    }

    fn scan_with(&self, srcs: &[Source], c: &Combiner, mode: &ScanMode) -> Result<Vec<Column>> {
        assoc::scan(&self.gpu, srcs, c, mode)
    }

    fn histogram(&self, src: &Source, bins: usize, lo: u64, hi: u64) -> Result<Column> {
        let b = histogram::histogram(&self.gpu, src, bins as u64, lo, hi)?;
        Ok(column(b, ScalarType::U64, bins))
    }
}

#[cfg(test)]
mod compile_check;
