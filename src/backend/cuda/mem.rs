//! Device memory: buffers from the device's stream-ordered pool (cudarc's `CudaSlice`, freed
//! in stream order when dropped; small ones kept by devseq for reuse first), their accounting,
//! copies between host and device, and the mailboxes through which kernels leave small results
//! for the host.

use super::driver::{DriverResult, check};
use crate::error::{Error, Result};
use crate::source::{Column, Storage};
use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr, PinnedHostSlice, sys};
use std::any::Any;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// A device address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(transparent)]
pub(crate) struct Ptr(pub u64);

impl Ptr {
    /// The address `bytes` further on.
    pub fn add(self, bytes: usize) -> Ptr {
        Ptr(self.0 + bytes as u64)
    }

    /// Whether the address is a multiple of `align`.
    pub fn aligned(self, align: usize) -> bool {
        self.0.is_multiple_of(align as u64)
    }
}

/// Devseq's memory on one device: the bytes of live buffers and their high-water mark, and the
/// buffers dropped lately, kept for the next buffers of their size class.
///
/// Keeping them saves a driver allocation and a stream-ordered free a call (at small sizes
/// they cost more GPU time than the work: 2-5 us a call on an H100, `benches/overhead`).
/// Reusing a buffer at once is safe for the reason the driver's stream-ordered pool gives
/// for its own reuse: every buffer is used on the one stream that made it, so whatever a
/// later call queues there runs after all the work queued on the buffer before it dropped.
#[derive(Debug)]
pub(crate) struct Pool {
    pub in_use: AtomicUsize,
    pub peak: AtomicUsize,
    kept: Mutex<Kept>,
    /// The most bytes kept (`Device::set_kept_memory_limit`; `KEEP_BYTES` at first).
    limit: AtomicUsize,
}

impl Default for Pool {
    fn default() -> Pool {
        Pool {
            in_use: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
            kept: Mutex::default(),
            limit: AtomicUsize::new(KEEP_BYTES),
        }
    }
}

/// The buffers a pool keeps, by size class, and their bytes.
#[derive(Debug, Default)]
struct Kept {
    by_class: std::collections::HashMap<usize, Vec<CudaSlice<u8>>, crate::hash::Fast>,
    bytes: usize,
}

/// The largest buffer a pool keeps, and the most bytes it keeps in all: larger buffers cost
/// little to allocate next to their work, and memory kept here is not for the driver's pool to
/// split for other sizes. 128 MiB holds 2^24 elements of 8 bytes: a driver allocation and
/// free cost such a call 2-3 us of the GPU's 50-60 (copy_f32 at 2^24, 0.94 of the peer's
/// `cudaMemcpyAsync` into memory it allocated once).
const KEEP_BUFFER: usize = 128 << 20;
const KEEP_BYTES: usize = 1 << 30;

/// The bytes allocated for a request of `bytes`: up to the next multiple of an eighth of the
/// next power of two (at least 512), so that nearby sizes share a class (at most a quarter,
/// or 511 bytes, more than asked); the exact size beyond what a pool keeps.
fn size_class(bytes: usize) -> usize {
    if bytes > KEEP_BUFFER {
        return bytes;
    }
    let step = (bytes.next_power_of_two() / 8).max(512);
    bytes.div_ceil(step) * step
}

impl Pool {
    fn add(&self, bytes: usize) {
        let now = self.in_use.fetch_add(bytes, Ordering::Relaxed) + bytes;
        self.peak.fetch_max(now, Ordering::Relaxed);
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, Kept> {
        // A panic while the lock was held leaves the lists whole (each step is one push or pop).
        self.kept.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A kept buffer of `class` bytes (none past `KEEP_BUFFER`, without taking the lock).
    fn take(&self, class: usize) -> Option<CudaSlice<u8>> {
        if class > KEEP_BUFFER {
            return None;
        }
        let mut k = self.kept();
        let s = k.by_class.get_mut(&class)?.pop()?;
        k.bytes -= class;
        Some(s)
    }

    /// Keeps `s` for reuse where it is of a size class and there is room; else hands it back.
    fn keep(&self, s: CudaSlice<u8>) -> Option<CudaSlice<u8>> {
        let bytes = s.len();
        let mut k = self.kept();
        let limit = self.limit.load(Ordering::Relaxed);
        if bytes > KEEP_BUFFER || size_class(bytes) != bytes || k.bytes + bytes > limit {
            return Some(s);
        }
        k.bytes += bytes;
        k.by_class.entry(bytes).or_default().push(s);
        None
    }

    /// Every kept buffer, to be freed.
    fn release(&self) -> Vec<CudaSlice<u8>> {
        let mut k = self.kept();
        k.bytes = 0;
        k.by_class.drain().flat_map(|(_, v)| v).collect()
    }

    /// Keeps at most `limit` bytes from now on: the kept buffers past it, to be freed.
    fn limit_to(&self, limit: usize) -> Vec<CudaSlice<u8>> {
        self.limit.store(limit, Ordering::Relaxed);
        let mut k = self.kept();
        let mut freed = Vec::new();
        let classes: Vec<usize> = k.by_class.keys().copied().collect();
        for class in classes.into_iter().rev() {
            while k.bytes > limit {
                let Some(s) = k.by_class.get_mut(&class).and_then(|v| v.pop()) else {
                    break;
                };
                k.bytes -= class;
                freed.push(s);
            }
        }
        freed
    }
}

/// One GPU's memory service: buffers from its stream-ordered pool and their accounts, copies
/// and fills on its stream, small read-backs through page-locked staging, and the mailboxes.
pub(crate) struct Memory {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    /// Bytes of live buffers (sequences and temporaries), their high-water mark, and the
    /// buffers kept for reuse.
    pub pool: Arc<Pool>,
    /// Page-locked host memory for small read-backs that no kernel leaves in a mailbox (a bad
    /// index's value, a sort's error word, single elements).
    staging: Mutex<Raw>,
    /// Small results that kernels leave for the host.
    mail: Mailboxes,
}

impl Memory {
    /// The memory of the device of `ctx`, used in the order of `stream`; freed memory stays in
    /// the device's pool for the next allocation (`keep_pool_memory`).
    pub fn new(ctx: &Arc<CudaContext>, stream: &Arc<CudaStream>) -> Result<Memory> {
        keep_pool_memory(ctx)?;
        Ok(Memory {
            ctx: ctx.clone(),
            stream: stream.clone(),
            pool: Arc::new(Pool::default()),
            staging: Mutex::new(Raw::pinned(ctx, 4096)?),
            mail: Mailboxes::default(),
        })
    }

    /// Waits for all work queued on the stream.
    pub fn synchronize(&self) -> Result<()> {
        self.stream.synchronize().cuda("cuStreamSynchronize")
    }

    /// Gives every buffer devseq and the driver's pool keep for reuse back to the device
    /// (after the work queued so far, which may still use them).
    pub fn trim_memory(&self) -> Result<()> {
        free_slices(self.pool.release());
        self.synchronize()?;
        trim_pool(&self.ctx)
    }

    /// Keeps at most `bytes` for reuse: devseq's kept buffers and the driver pool's memory
    /// above that go back to the device (the pool's at its next synchronization).
    pub fn set_kept_memory_limit(&self, bytes: usize) -> Result<()> {
        free_slices(self.pool.limit_to(bytes));
        set_pool_threshold(&self.ctx, bytes as u64)
    }
}

/// Makes freed memory stay in the device's default pool for the next allocation instead of
/// going back to the driver at every synchronization (up to `Device::set_kept_memory_limit`'s
/// bytes).
fn keep_pool_memory(ctx: &Arc<CudaContext>) -> Result<()> {
    set_pool_threshold(ctx, u64::MAX)
}

/// The bytes the device's default pool keeps past a synchronization. cudarc has no wrapper for
/// memory pools.
fn set_pool_threshold(ctx: &Arc<CudaContext>, bytes: u64) -> Result<()> {
    ctx.bind_to_thread().cuda("cuCtxSetCurrent")?;
    let mut pool = std::ptr::null_mut();
    // SAFETY: a valid device of a live context; writes one handle.
    check(
        unsafe { sys::cuDeviceGetDefaultMemPool(&mut pool, ctx.cu_device()) },
        "cuDeviceGetDefaultMemPool",
    )?;
    let mut keep: u64 = bytes;
    // SAFETY: the attribute takes a u64, passed by pointer; the pool lives with the device.
    check(
        unsafe {
            sys::cuMemPoolSetAttribute(
                pool,
                sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                &mut keep as *mut u64 as *mut std::ffi::c_void,
            )
        },
        "cuMemPoolSetAttribute",
    )
}

/// Returns the pool's unused memory to the device (cudarc has no wrapper for pools).
fn trim_pool(ctx: &Arc<CudaContext>) -> Result<()> {
    ctx.bind_to_thread().cuda("cuCtxSetCurrent")?;
    let mut pool = std::ptr::null_mut();
    // SAFETY: as in `set_pool_threshold`.
    unsafe {
        check(
            sys::cuDeviceGetDefaultMemPool(&mut pool, ctx.cu_device()),
            "cuDeviceGetDefaultMemPool",
        )?;
        check(sys::cuMemPoolTrimTo(pool, 0), "cuMemPoolTrimTo")
    }
}

/// Uninitialized device memory in stream order for a request of `bytes` (its size class,
/// `size_class`); out of memory, the kept buffers are freed, the pool is trimmed and the
/// allocation tried once more before `Error::OutOfMemory` with the bytes asked for (trimmed
/// again then, so a failed request leaves no memory reserved).
fn alloc(mem: &Memory, bytes: usize) -> Result<CudaSlice<u8>> {
    let class = size_class(bytes);
    let once = || {
        // SAFETY: the memory is uninitialized; every caller writes what it later reads (a copy,
        // a fill, or a kernel's output) before anything reads it.
        unsafe { mem.stream.alloc::<u8>(class) }
    };
    match once() {
        Ok(s) => Ok(s),
        Err(e) if e.0 == sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY => {
            // Memory freed by this stream's finished work (or other streams') may be held by
            // devseq's pool or the driver's; give it back to the device and try again.
            free_slices(mem.pool.release());
            mem.synchronize()?;
            trim_pool(&mem.ctx)?;
            once().or_else(|e| {
                // A failed request may leave the pool grown by whatever it could reserve
                // (seen on an H100: 4 MB of 80 GB free after asking for twice the memory),
                // which would starve this process's later work and every other process.
                trim_pool(&mem.ctx)?;
                Err(match e.0 {
                    sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY => Error::OutOfMemory { bytes },
                    _ => super::driver::driver_error(e, "cuMemAllocAsync"),
                })
            })
        }
        Err(e) => Err(super::driver::driver_error(e, "cuMemAllocAsync")),
    }
}

/// A device allocation that frees itself, in stream order, when the last sequence or
/// temporary using it is dropped: the kernels queued before the free still see valid memory.
pub(crate) struct Buffer {
    slice: Option<CudaSlice<u8>>,
    ptr: Ptr,
    bytes: usize,
    mem: Arc<Pool>,
    /// Checks of the kernels that wrote the buffer, not read yet (a gather's bounds check; an
    /// in-place scatter's, one per call), earliest first:
    /// whatever reads the buffer first (`column_ptr`, `Memory::read`) waits for it and gets its
    /// error, as does every later read.
    check: Vec<Arc<dyn Pending>>,
}

/// A verdict on a buffer's contents that a kernel leaves on the device and the host reads
/// later, at the first use of the buffer, so that the call that queued the kernel returns
/// without waiting for it.
pub(crate) trait Pending: Send + Sync {
    /// Waits for the verdict where it is not known yet; the same answer every time.
    fn resolve(&self) -> Result<()>;

    /// Where this check can take the bounds check of one more in-place write into a target of
    /// `len` elements (a `ScatterChain` not read yet), where that write notes a bad index.
    fn join(&self, _len: usize) -> Option<Report> {
        None
    }
}

/// Where a scatter kernel notes a bad index (`ScatterParams`' fields of the same names): with
/// `val` null, its position in `err` (`note_bad_index`); else under the key `tag | position`
/// in `err`, and the index itself in `val` under the lock word `lock` (`note_chain_index`);
/// with `err` null, nowhere (the indices were checked already). `flag` is a mailbox's host
/// slot, set on any error.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Report {
    pub err: Ptr,
    pub flag: Ptr,
    pub val: Ptr,
    pub lock: Ptr,
    pub tag: u64,
}

impl Report {
    /// The position of a bad index, in `m`.
    pub fn position(m: &Mailbox) -> Report {
        Report {
            err: m.word,
            flag: m.slot,
            ..Report::default()
        }
    }
}

/// The most unread checks a buffer holds: past them, `add_check` reads those it has (a wait for
/// the stream), so that a loop of in-place writes into one buffer that is never read holds a
/// bounded number of mailboxes. (In-place scatters share one check between reads, a
/// `ScatterChain`, and reach this only with writes of more than 2^40 elements.)
const MAX_CHECKS: usize = 64;

impl Buffer {
    /// `bytes` of uninitialized device memory.
    pub fn new(mem: &Memory, bytes: usize) -> Result<Buffer> {
        if crate::fault::allocation() {
            return Err(Error::OutOfMemory { bytes });
        }
        let slice = if bytes == 0 {
            None
        } else {
            Some(match mem.pool.take(size_class(bytes)) {
                Some(s) => s,
                None => alloc(mem, bytes)?,
            })
        };
        Ok(Buffer::owning(mem, slice, bytes))
    }

    /// A buffer owning `slice` (`bytes` long; `None` for no bytes), counted as in use.
    fn owning(mem: &Memory, slice: Option<CudaSlice<u8>>, bytes: usize) -> Buffer {
        let ptr = match &slice {
            Some(s) => Ptr(s.device_ptr(&mem.stream).0),
            None => Ptr(0),
        };
        mem.pool.add(bytes);
        Buffer {
            slice,
            ptr,
            bytes,
            mem: mem.pool.clone(),
            check: Vec::new(),
        }
    }

    /// This buffer, its contents valid only if `check` resolves to `Ok`.
    pub fn pending(mut self, check: Arc<dyn Pending>) -> Buffer {
        self.check = vec![check];
        self
    }

    /// Adds `check` to the buffer's checks (a kernel wrote into it in place): it is valid once
    /// the checks it had and `check` pass. Past `MAX_CHECKS` the earlier ones are read: those
    /// that passed are let go, the first that failed is kept (its error is the buffer's).
    pub fn add_check(&mut self, check: Arc<dyn Pending>) {
        if self.check.len() >= MAX_CHECKS {
            let failed = self.check.iter().find(|c| c.resolve().is_err()).cloned();
            self.check = failed.into_iter().collect();
        }
        self.check.push(check);
    }

    /// Where the buffer's last check is one that this buffer alone holds and that can take
    /// the check of one more in-place write into `len` of its elements: where that write
    /// notes a bad index (`Pending::join`).
    pub fn join_check(&self, len: usize) -> Option<Report> {
        let c = self.check.last()?;
        if Arc::strong_count(c) != 1 {
            return None;
        }
        c.join(len)
    }

    /// `Ok` unless the kernel that wrote the buffer found an error (waits for its check).
    pub fn verify(&self) -> Result<()> {
        self.check.iter().try_for_each(|c| c.resolve())
    }

    /// A buffer over the memory of a caller's cudarc slice (no copy), which devseq owns from
    /// now on and frees on its own stream. The caller checked that the slice belongs to
    /// `mem`'s context; its stream's queued work (and the events cudarc tracks for it) come
    /// before anything devseq queues on the buffer.
    pub fn adopt<T>(mem: &Memory, slice: CudaSlice<T>) -> Result<Buffer> {
        let bytes = slice.num_bytes();
        if bytes == 0 {
            // Nothing to own: the empty slice frees itself on its own stream.
            let _ = slice.context().bind_to_thread();
            drop(slice);
            return Buffer::new(mem, 0);
        }
        let theirs = slice.stream().clone();
        let ptr = slice.leak();
        // SAFETY: `ptr` is the live allocation of `bytes` bytes that `slice` owned (leaked just
        // above, so nothing else frees it) in `mem`'s context (checked by the caller); the new
        // slice owns it and frees it on devseq's stream, after the work devseq queues there.
        let s = unsafe { mem.stream.upgrade_device_ptr::<u8>(ptr, bytes) };
        let buf = Buffer::owning(mem, Some(s), bytes);
        if !Arc::ptr_eq(&theirs, &mem.stream) {
            // Devseq's stream waits for what the caller queued on the slice's stream.
            mem.stream.join(&theirs).cuda("cuStreamWaitEvent")?;
        }
        Ok(buf)
    }

    /// The start address.
    pub fn ptr(&self) -> Ptr {
        self.ptr
    }

    /// Its length in bytes (as asked for).
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// This buffer where its first `used` bytes fill at least a sixteenth of it, else a buffer
    /// of `used` bytes with a copy of them (results written into worst-case outputs, such as
    /// compaction's: moving them costs more than the memory they waste until then).
    pub fn fit(self, mem: &Memory, used: usize) -> Result<Buffer> {
        if used * 16 >= self.bytes {
            return Ok(self);
        }
        let fit = Buffer::new(mem, used)?;
        mem.copy(&fit, self.ptr, used)?;
        Ok(fit)
    }

    /// A column of `len` elements of type `ty` over the whole buffer.
    pub fn into_column(self, ty: crate::item::ScalarType, len: usize) -> Column {
        Column::new(ty, Arc::new(self), len)
    }

    /// The allocation handed over as a cudarc slice of `len` elements of `T` (which must fit
    /// in it), on the stream it was made on; devseq no longer counts it as in use. `None` for
    /// a buffer of no bytes.
    pub fn into_slice<T>(mut self, len: usize) -> Option<CudaSlice<T>> {
        let s = self.slice.take()?;
        if len * std::mem::size_of::<T>() > self.bytes {
            self.slice = Some(s);
            return None;
        }
        let stream = s.stream().clone();
        let ptr = s.leak();
        // SAFETY: `ptr` is the live allocation of `self.bytes` bytes that `s` owned (leaked
        // just above, so nothing else frees it), made on `stream`, and `len` elements of `T`
        // fit in it (checked); the new slice owns it and frees it on `stream` when dropped.
        Some(unsafe { stream.upgrade_device_ptr::<T>(ptr, len) })
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        self.mem.in_use.fetch_sub(self.bytes, Ordering::Relaxed);
        if let Some(s) = self.slice.take() {
            free_slices(self.mem.keep(s));
        }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        free_slices(self.release());
    }
}

/// Frees `slices`: each frees itself on its stream (cuMemFreeAsync), after the work queued
/// there, with its context current on this thread.
fn free_slices(slices: impl IntoIterator<Item = CudaSlice<u8>>) {
    for s in slices {
        let _ = s.context().bind_to_thread();
        drop(s);
    }
}

impl Storage for Buffer {
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The device address of a column's first element, for a kernel or copy that reads it: the
/// buffer's pending check, if any, is read first, and its error returned.
pub(crate) fn column_ptr(c: &Column) -> Result<Ptr> {
    let b = c.storage::<Buffer>()?;
    b.verify()?;
    Ok(b.ptr().add(c.off * c.ty.size()))
}

/// Memory a GPU keeps for itself (look-back words, counters, page-locked staging), not
/// counted as in use by sequences.
pub(crate) enum Raw {
    Device(CudaSlice<u8>),
    Pinned(PinnedHostSlice<u8>, Ptr),
}

impl Raw {
    /// `bytes` of zeroed device memory (queued on `stream`).
    pub fn zeroed(stream: &Arc<CudaStream>, bytes: usize) -> Result<Raw> {
        Ok(Raw::Device(
            stream.alloc_zeros::<u8>(bytes).cuda("cuMemAllocAsync")?,
        ))
    }

    /// `bytes` of zeroed page-locked host memory, mapped into the device's address space.
    pub fn pinned(ctx: &Arc<CudaContext>, bytes: usize) -> Result<Raw> {
        // SAFETY: zeroed below, before any use.
        let mut h =
            unsafe { ctx.alloc_pinned_with_flags::<u8>(bytes, sys::CU_MEMHOSTALLOC_DEVICEMAP) }
                .cuda("cuMemHostAlloc")?;
        h.as_mut_slice().cuda("cuEventSynchronize")?.fill(0);
        let host = h.as_mut_ptr().cuda("cuEventSynchronize")?;
        let mut dev = 0;
        // SAFETY: `host` is page-locked memory allocated as mapped; writes one address.
        // (cudarc has no wrapper for mapped host memory.)
        check(
            unsafe { sys::cuMemHostGetDevicePointer_v2(&mut dev, host as *mut _, 0) },
            "cuMemHostGetDevicePointer",
        )?;
        Ok(Raw::Pinned(h, Ptr(dev)))
    }

    /// The device address.
    pub fn ptr(&self, stream: &CudaStream) -> Ptr {
        match self {
            Raw::Device(s) => Ptr(s.device_ptr(stream).0),
            Raw::Pinned(_, p) => *p,
        }
    }

    pub fn bytes(&self) -> usize {
        match self {
            Raw::Device(s) => s.len(),
            Raw::Pinned(h, _) => h.len(),
        }
    }

    /// The host side of page-locked memory.
    fn host(&mut self) -> Result<&mut [u8]> {
        match self {
            Raw::Pinned(h, _) => h.as_mut_slice().cuda("cuEventSynchronize"),
            Raw::Device(_) => Err(Error::Internal("device memory read as host memory".into())),
        }
    }
}

impl Memory {
    /// Makes the context current on this thread, for the driver calls made without cudarc.
    pub fn bind(&self) -> Result<()> {
        self.ctx.bind_to_thread().cuda("cuCtxSetCurrent")
    }

    /// Copies host bytes into `dst` (a new buffer of at least `data.len()` bytes; queued, the
    /// host bytes may be dropped on return).
    pub fn write(&self, dst: &Buffer, data: &[u8]) -> Result<()> {
        if data.is_empty() {
            return Ok(());
        }
        if dst.bytes < data.len() {
            return Err(Error::Internal("a write past a buffer's end".into()));
        }
        self.bind()?;
        // SAFETY: `dst` holds at least `data.len()` bytes (checked); from pageable memory the
        // driver stages the bytes before returning, so `data` may go. (A raw copy: the buffer's
        // slice is shared by the columns that read it, so no `&mut` to it exists.)
        check(
            unsafe {
                sys::cuMemcpyHtoDAsync_v2(
                    dst.ptr().0,
                    data.as_ptr() as *const std::ffi::c_void,
                    data.len(),
                    self.stream.cu_stream(),
                )
            },
            "cuMemcpyHtoDAsync",
        )
    }

    /// Copies `out.len()` bytes from a column's elements to the host, waiting for the stream.
    pub fn read(&self, src: &Column, out: &mut [u8]) -> Result<()> {
        if out.is_empty() {
            return Ok(());
        }
        let buf = src.storage::<Buffer>()?;
        buf.verify()?;
        let start = src.off * src.ty.size();
        if start + out.len() > buf.bytes {
            return Err(Error::Internal("a read past a buffer's end".into()));
        }
        let slice = buf
            .slice
            .as_ref()
            .ok_or_else(|| Error::Internal("a read of an empty buffer".into()))?;
        self.stream
            .memcpy_dtoh(&slice.slice(start..start + out.len()), out)
            .cuda("cuMemcpyDtoHAsync")?;
        self.synchronize()
    }

    /// The page-locked staging memory, locked, for a read of `bytes` (at most its size).
    fn staging_for(&self, bytes: usize) -> Result<std::sync::MutexGuard<'_, Raw>> {
        let staging = self
            .staging
            .lock()
            .map_err(|_| Error::Internal("staging lock poisoned".into()))?;
        if bytes > staging.bytes() {
            return Err(Error::Internal("a small read of many bytes".into()));
        }
        Ok(staging)
    }

    /// Reads the `out.len() <= 4096` bytes at device address `src` (inside a live buffer of
    /// this stream), through page-locked staging; waits for the stream. A raw copy: `src` is
    /// an address inside a buffer (a bad index, an error word), not a slice cudarc knows.
    pub fn read_small(&self, src: Ptr, out: &mut [u8]) -> Result<()> {
        let mut staging = self.staging_for(out.len())?;
        let host = staging.host()?.as_mut_ptr();
        self.bind()?;
        // SAFETY: the staging memory holds at least `out.len()` bytes (checked); `src` points at
        // as many device bytes (callers pass addresses inside their own buffers); the stream is
        // drained before the host reads the staging memory.
        unsafe {
            check(
                sys::cuMemcpyDtoHAsync_v2(
                    host as *mut std::ffi::c_void,
                    src.0,
                    out.len(),
                    self.stream.cu_stream(),
                ),
                "cuMemcpyDtoHAsync",
            )?;
        }
        self.synchronize()?;
        out.copy_from_slice(&staging.host()?[..out.len()]);
        Ok(())
    }

    /// Queues `write` with the device address of `out.len() <= 4096` bytes of mapped
    /// page-locked staging memory, waits for the stream and copies those bytes to `out`: a
    /// small result that a kernel writes straight to the host, with no copy queued after it.
    /// `write` must queue work that writes every one of those bytes.
    pub fn read_mapped(&self, out: &mut [u8], write: impl FnOnce(Ptr) -> Result<()>) -> Result<()> {
        let mut staging = self.staging_for(out.len())?;
        write(staging.ptr(&self.stream))?;
        self.synchronize()?;
        out.copy_from_slice(&staging.host()?[..out.len()]);
        Ok(())
    }

    /// Reads one little-endian u64 from device memory (waits for the stream).
    pub fn read_u64(&self, src: Ptr) -> Result<u64> {
        let mut b = [0u8; 8];
        self.read_small(src, &mut b)?;
        Ok(u64::from_le_bytes(b))
    }

    /// Queues a copy of `bytes` bytes from `src` into the new buffer `dst`.
    pub fn copy(&self, dst: &Buffer, src: Ptr, bytes: usize) -> Result<()> {
        if bytes == 0 {
            return Ok(());
        }
        if dst.bytes < bytes {
            return Err(Error::Internal("a copy past a buffer's end".into()));
        }
        self.bind()?;
        // SAFETY: `dst` holds `bytes` bytes (checked); `src` is the start of `bytes` bytes of
        // a live column (callers' invariant). A raw copy for the reason `write` gives.
        check(
            unsafe {
                sys::cuMemcpyDtoDAsync_v2(dst.ptr().0, src.0, bytes, self.stream.cu_stream())
            },
            "cuMemcpyDtoDAsync",
        )
    }

    /// Queues a fill of `count` elements of `size` bytes (1, 2 or 4) with `v` at `dst`, the
    /// start of a buffer this call's caller made.
    pub fn fill(&self, dst: &Buffer, size: usize, v: u32, count: usize) -> Result<()> {
        if count == 0 {
            return Ok(());
        }
        if dst.bytes < count * size {
            return Err(Error::Internal("a fill past a buffer's end".into()));
        }
        self.bind()?;
        let (p, s) = (dst.ptr().0, self.stream.cu_stream());
        // SAFETY: `dst` holds `count` elements of `size` bytes (checked) and is aligned (a
        // pool allocation). cudarc's memset fills zeros only.
        let r = unsafe {
            match size {
                1 => sys::cuMemsetD8Async(p, v as u8, count, s),
                2 => sys::cuMemsetD16Async(p, v as u16, count, s),
                _ => sys::cuMemsetD32Async(p, v, count, s),
            }
        };
        check(r, "cuMemsetAsync")
    }
}

/// Where a kernel leaves a small result for the host: a zeroed 8-byte device word (for
/// atomics: the first bad position `i` of an index, as `~i` by atomicMax) and a zeroed 8-byte
/// slot of page-locked host memory mapped for the device (for plain stores: a reduction's
/// result, a count, the flag that an error was noted). After the stream drains the host reads
/// the slot where it lies, without a copy: about 7 us less a call than a copy back (H200, run
/// 27: gather_f32 of 2^16 took 15 us instead of 22).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Mailbox {
    pub word: Ptr,
    /// The host slot's device address.
    pub slot: Ptr,
    chunk: usize,
    index: usize,
}

/// The pool of mailboxes, in chunks of device words and mapped host slots.
#[derive(Default)]
pub(crate) struct Mailboxes {
    inner: Mutex<MailState>,
}

#[derive(Default)]
struct MailState {
    free: Vec<Mailbox>,
    chunks: Vec<(Raw, Raw)>,
    /// Given back unread (a dropped pending check): a kernel may still write them, so they
    /// are cleaned after the stream next drains, when the free ones run out.
    dirty: Vec<Mailbox>,
}

const BOXES: usize = 512;

/// A mailbox lent out by `Memory::mailbox`; `held` until taken back (or dropped).
pub(crate) struct LentMailbox<'g> {
    mem: &'g Memory,
    m: Mailbox,
    held: bool,
}

impl LentMailbox<'_> {
    fn take(&mut self) -> Result<Mailbox> {
        if !std::mem::replace(&mut self.held, false) {
            return Err(Error::Internal("a mailbox taken twice".into()));
        }
        Ok(self.m)
    }

    /// The mailbox, no longer given back when this is dropped: its keeper reads it with
    /// `take_error` or hands it to `retire`.
    pub fn keep(mut self) -> Result<Mailbox> {
        self.take()
    }
}

impl std::ops::Deref for LentMailbox<'_> {
    type Target = Mailbox;
    fn deref(&self) -> &Mailbox {
        &self.m
    }
}

impl Drop for LentMailbox<'_> {
    fn drop(&mut self) {
        if std::mem::replace(&mut self.held, false) {
            let m = self.m;
            // Zero both words after the stream drains; where that fails the mailbox is
            // left out of the pool rather than lent again dirty.
            let clean = self
                .mem
                .read_slot(m)
                .and_then(|_| self.mem.zero_word(m))
                .and_then(|_| self.mem.synchronize());
            if clean.is_ok() {
                let _ = self.mem.give_back(m);
            }
        }
    }
}

impl Memory {
    fn mail(&self) -> Result<std::sync::MutexGuard<'_, MailState>> {
        self.mail
            .inner
            .lock()
            .map_err(|_| Error::Internal("mailbox lock poisoned".into()))
    }

    /// A mailbox of zeroed words; give it back with `take_error`, `take_word` or `take_slot`.
    /// One dropped untaken (an error between its launch and its reading) is zeroed again once
    /// the stream drains and goes back to the pool.
    pub fn mailbox(&self) -> Result<LentMailbox<'_>> {
        if self.mail()?.free.is_empty() {
            self.recycle()?;
        }
        let mut st = self.mail()?;
        if st.free.is_empty() {
            let words = Raw::zeroed(&self.stream, BOXES * 8)?;
            let slots = Raw::pinned(&self.ctx, BOXES * 8)?;
            let (w, s) = (words.ptr(&self.stream), slots.ptr(&self.stream));
            let chunk = st.chunks.len();
            st.free.extend((0..BOXES).map(|k| Mailbox {
                word: w.add(8 * k),
                slot: s.add(8 * k),
                chunk,
                index: k,
            }));
            st.chunks.push((words, slots));
        }
        let m = st
            .free
            .pop()
            .ok_or_else(|| Error::Internal("no mailbox".into()))?;
        Ok(LentMailbox {
            mem: self,
            m,
            held: true,
        })
    }

    /// Waits for the stream, reads `m`'s host slot and zeroes it.
    fn read_slot(&self, m: Mailbox) -> Result<u64> {
        self.synchronize()?;
        self.read_drained_slot(m)
    }

    /// Reads `m`'s host slot and zeroes it, once the stream has drained.
    fn read_drained_slot(&self, m: Mailbox) -> Result<u64> {
        let mut st = self.mail()?;
        let host = st
            .chunks
            .get_mut(m.chunk)
            .ok_or_else(|| Error::Internal("a mailbox of no chunk".into()))?
            .1
            .host()?;
        let slot = &mut host[8 * m.index..8 * m.index + 8];
        // The stream has drained: no kernel writes the slot now.
        let v = u64::from_le_bytes(
            slot.try_into()
                .map_err(|_| Error::Internal("slot".into()))?,
        );
        slot.fill(0);
        Ok(v)
    }

    /// Returns a mailbox that no queued kernel writes any more, its word zero, to the pool.
    pub fn give_back(&self, m: Mailbox) -> Result<()> {
        self.mail()?.free.push(m);
        Ok(())
    }

    /// A mailbox lent out by `mailbox` (`LentMailbox::keep`) back unread: it goes back to the pool
    /// once the stream has drained after its last kernel.
    pub fn retire(&self, m: Mailbox) -> Result<()> {
        self.mail()?.dirty.push(m);
        Ok(())
    }

    /// `retire` of a mailbox whose device word a kernel may have written without setting its
    /// slot: the word is zeroed in stream order, after those kernels, before it is lent again.
    pub fn retire_zeroed(&self, m: Mailbox) -> Result<()> {
        self.zero_word(m)?;
        self.retire(m)
    }

    /// Waits for the stream and cleans the retired mailboxes: an error noted in one (its slot
    /// set) is zeroed, in both words; then they are free again.
    fn recycle(&self) -> Result<()> {
        let dirty = std::mem::take(&mut self.mail()?.dirty);
        if dirty.is_empty() {
            return Ok(());
        }
        self.synchronize()?;
        for m in dirty {
            if self.read_drained_slot(m)? != 0 {
                self.zero_word(m)?;
            }
            self.give_back(m)?;
        }
        Ok(())
    }

    /// Waits for the stream and returns the position noted in `m`'s word, if any (the kernel
    /// also set the host slot); the mailbox (kept out of its `LentMailbox` by `LentMailbox::keep`) is zeroed
    /// again and goes back to the pool.
    pub fn take_error(&self, m: Mailbox) -> Result<Option<u64>> {
        let pos = if self.read_slot(m)? == 0 {
            None
        } else {
            let w = self.read_u64(m.word)?;
            self.zero_word(m)?;
            Some(!w)
        };
        self.give_back(m)?;
        Ok(pos)
    }

    /// Waits for the stream and returns the value of `m`'s device word (kernels may count
    /// into one); the mailbox is zeroed again and goes back to the pool.
    pub fn take_word(&self, mut h: LentMailbox<'_>) -> Result<u64> {
        let m = h.take()?;
        self.take_kept_word(m)
    }

    /// `take_word` of a mailbox kept out of its `LentMailbox` (`LentMailbox::keep`).
    pub fn take_kept_word(&self, m: Mailbox) -> Result<u64> {
        let w = self.read_u64(m.word)?;
        if w != 0 {
            self.zero_word(m)?;
        }
        self.give_back(m)?;
        Ok(w)
    }

    /// Waits for the stream and returns the value of `m`'s host slot; the slot is zeroed
    /// again and the mailbox goes back to the pool (its device word must be zero by then).
    pub fn take_slot(&self, mut h: LentMailbox<'_>) -> Result<u64> {
        let m = h.take()?;
        let v = self.read_slot(m)?;
        self.give_back(m)?;
        Ok(v)
    }

    /// Zeroes a mailbox's device word (a raw fill: the word is 8 bytes inside a chunk).
    fn zero_word(&self, m: Mailbox) -> Result<()> {
        self.bind()?;
        // SAFETY: the word is 8 bytes of a chunk that lives as long as `self`.
        check(
            unsafe { sys::cuMemsetD8Async(m.word.0, 0, 8, self.stream.cu_stream()) },
            "cuMemsetD8Async",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_classes_cover_their_requests_and_are_their_own_class() {
        let mut sizes: Vec<usize> = (0..29)
            .flat_map(|k| {
                let p = 1usize << k;
                [p - 1, p, p + 1, p + p / 3]
            })
            .chain([KEEP_BUFFER - 1, KEEP_BUFFER, KEEP_BUFFER + 1, 3 << 30])
            .filter(|&b| b > 0)
            .collect();
        sizes.sort();
        let mut last = 0;
        for bytes in sizes {
            let c = size_class(bytes);
            assert!(c >= bytes && c >= last, "{bytes} -> {c}: covers and grows");
            if bytes <= KEEP_BUFFER {
                // At most a quarter more (or up to the smallest step); a kept buffer's size is
                // its own class, which `Pool::keep` relies on.
                assert!(c - bytes <= 511.max(bytes / 4), "{bytes} -> {c}");
                assert_eq!(size_class(c), c, "{bytes} -> {c}");
                assert!(c <= KEEP_BUFFER);
            } else {
                assert_eq!(c, bytes);
            }
            last = c;
        }
    }
}
