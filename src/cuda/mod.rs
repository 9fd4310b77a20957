//! The GPU backend: one CUDA device (its primary context and one stream per `Device`), device
//! memory from the stream-ordered pool, kernel launches, and one module per algorithm family.
//!
//! Every `unsafe` block of the crate lives in this folder.

pub(crate) mod alloc;
pub(crate) mod combine;
pub(crate) mod compact;
pub(crate) mod gather;
pub(crate) mod histogram;
pub(crate) mod jit;
pub(crate) mod launch;
pub(crate) mod map;
pub(crate) mod reduce;
pub(crate) mod scan;
pub(crate) mod segment;
pub(crate) mod sort;
pub(crate) mod tuning;

use crate::error::{Error, Result};
use cudarc::driver::sys;
use std::ffi::c_void;
use std::sync::{Arc, Mutex, OnceLock};

pub(crate) use alloc::{Buffer, Ptr};
pub(crate) use launch::Args;

/// Turns a driver status into `Ok` or `Error::Cuda` naming the call.
pub(crate) fn check(r: sys::CUresult, call: &'static str) -> Result<()> {
    if r == sys::CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(driver_error(r, call))
    }
}

fn driver_error(r: sys::CUresult, call: &'static str) -> Error {
    let e = cudarc::driver::result::DriverError(r);
    let name = e
        .error_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|_| format!("{r:?}"));
    let desc = e
        .error_string()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    Error::Cuda(format!("{call}: {name} ({desc})"))
}

/// Whether the CUDA driver library can be loaded (cudarc panics on first use where it cannot,
/// so this is asked first, once).
fn driver_present() -> bool {
    static P: OnceLock<bool> = OnceLock::new();
    // SAFETY: only tries to open the library by its candidate names.
    *P.get_or_init(|| unsafe { sys::is_culib_present() })
}

/// Whether the NVRTC library can be loaded.
pub(crate) fn nvrtc_present() -> bool {
    static P: OnceLock<bool> = OnceLock::new();
    // SAFETY: only tries to open the library by its candidate names.
    *P.get_or_init(|| unsafe { cudarc::nvrtc::sys::is_culib_present() })
}

/// Whether the driver library exports `name` (for entry points newer than the oldest
/// supported driver; cudarc panics when a missing one is called).
fn driver_has(name: &str) -> bool {
    // SAFETY: `culib` is only called once `driver_present` said the library loads; looking up a
    // symbol has no side effects.
    driver_present() && unsafe { sys::culib().get::<*const c_void>(name.as_bytes()).is_ok() }
}

/// Per-stream bookkeeping: the single-pass kernels' (scans, compaction, sort passes) tile
/// counter and the status words of their look-back, and the pool of mailboxes.
pub(crate) struct StreamState {
    /// Value the tile counter will have when the next launch starts (the counter only grows,
    /// so a launch's tiles are `counter - base`).
    counter_base: u32,
    /// Launch number written into status words, so they need no clearing between launches.
    epoch: u32,
    /// Status words; zeroed when allocated.
    status: Option<alloc::Raw>,
    /// The sort passes' status words (one 64-bit word a tile and digit, tagged with
    /// `sort_epoch`), apart from the scans' so that no scan slot is ever read as one of them.
    sort_status: Option<alloc::Raw>,
    sort_epoch: u32,
    /// Mailboxes (see `Mailbox`), carved from chunks of device words and of mapped host
    /// memory.
    mailboxes: Vec<Mailbox>,
    mailbox_chunks: Vec<(alloc::Raw, alloc::Pinned)>,
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
    host: *mut u64,
}

/// Which status words a single-pass launch looks back over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    /// `ds::Slot`s of the scans, tagged with 30-bit epochs.
    Scan,
    /// 64-bit words of the sort passes, tagged with 22-bit epochs (`ds_sort_pass`).
    Sort,
}

/// What a single-pass launch gets from `Gpu::single_pass`.
pub(crate) struct PassSlots {
    pub counter: Ptr,
    pub base: u32,
    pub epoch: u32,
    pub status: Ptr,
}

/// One CUDA device as used by one `Device` value (and its clones): the device's primary
/// context, a stream of its own, and the module cache shared by every `Device` on that GPU.
pub(crate) struct Gpu {
    dev: sys::CUdevice,
    ctx: sys::CUcontext,
    pub stream: sys::CUstream,
    pool: sys::CUmemoryPool,
    pub name: String,
    /// Multiprocessors.
    pub sms: u32,
    /// Bytes of L2 cache.
    pub l2_bytes: usize,
    pub jit: Arc<jit::Jit>,
    /// Counters that kernels leave at zero (reduce's "last block" counter, ...), and the
    /// single-pass tile counter.
    counters: alloc::Raw,
    /// Per-block partial results of one-wave kernels (reduce), reused launch after launch:
    /// the stream runs one kernel at a time, so no allocation a call.
    partials: alloc::Raw,
    state: Mutex<StreamState>,
    /// Page-locked host memory for small read-backs that no kernel leaves in a mailbox (a bad
    /// index's value, a sort's error word, single elements).
    staging: Mutex<alloc::Pinned>,
}

// SAFETY: the driver handles (context, stream, pool) may be used from any thread once the
// context is made current, which `bind` does before every use; the mutable state is behind
// mutexes.
unsafe impl Send for Gpu {}
// SAFETY: as above.
unsafe impl Sync for Gpu {}

/// Bytes of `Gpu::partials`: 8 bytes for each of up to 8192 blocks.
pub(crate) const PARTIAL_BYTES: usize = 8 * 8192;

/// Index of the counters in `Gpu::counters` (each a 32-bit word).
pub(crate) mod counter {
    /// The tile counter of single-pass kernels (only grows; see `StreamState`).
    pub const TILES: usize = 0;
    /// The "blocks done" counter of kernels whose last block finishes the work (reset to 0
    /// by that block).
    pub const DONE: usize = 1;
    /// Words in the counter block.
    pub const WORDS: usize = 64;
}

impl Gpu {
    /// Opens GPU `ordinal` with a new stream.
    pub fn new(ordinal: usize) -> Result<Arc<Gpu>> {
        if !driver_present() {
            return Err(Error::NoCuda(
                "the CUDA driver library (libcuda.so) was not found".into(),
            ));
        }
        // SAFETY: cuInit may be called any number of times.
        let r = unsafe { sys::cuInit(0) };
        if r != sys::CUresult::CUDA_SUCCESS {
            return Err(Error::NoCuda(driver_error(r, "cuInit").to_string()));
        }
        let mut count = 0;
        // SAFETY: writes one int.
        check(
            unsafe { sys::cuDeviceGetCount(&mut count) },
            "cuDeviceGetCount",
        )
        .map_err(|e| Error::NoCuda(e.to_string()))?;
        if ordinal >= count.max(0) as usize {
            return Err(Error::NoCuda(format!(
                "GPU {ordinal} requested, {count} present"
            )));
        }
        if !nvrtc_present() {
            return Err(Error::NoCuda(
                "the NVRTC library (libnvrtc.so) was not found; devseq compiles its kernels with it"
                    .into(),
            ));
        }
        let mut dev = 0;
        // SAFETY: ordinal checked above; writes one handle.
        check(
            unsafe { sys::cuDeviceGet(&mut dev, ordinal as i32) },
            "cuDeviceGet",
        )?;
        let attr = |a: sys::CUdevice_attribute| -> Result<i32> {
            let mut v = 0;
            // SAFETY: valid device handle; writes one int.
            check(
                unsafe { sys::cuDeviceGetAttribute(&mut v, a, dev) },
                "cuDeviceGetAttribute",
            )?;
            Ok(v)
        };
        use sys::CUdevice_attribute as A;
        let cc = (
            attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
            attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
        );
        let sms = attr(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?.max(1) as u32;
        let l2_bytes = attr(A::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)?.max(0) as usize;
        let mut name_buf = [0 as std::ffi::c_char; 256];
        // SAFETY: the buffer holds 256 bytes, as passed.
        check(
            unsafe { sys::cuDeviceGetName(name_buf.as_mut_ptr(), 256, dev) },
            "cuDeviceGetName",
        )?;
        // SAFETY: the driver wrote a NUL-terminated string into the buffer.
        let name = unsafe { std::ffi::CStr::from_ptr(name_buf.as_ptr()) }
            .to_string_lossy()
            .into_owned();
        let mut ctx = std::ptr::null_mut();
        // SAFETY: valid device; retains (and on first use creates) its primary context.
        check(
            unsafe { sys::cuDevicePrimaryCtxRetain(&mut ctx, dev) },
            "cuDevicePrimaryCtxRetain",
        )?;
        // SAFETY: the context was just retained.
        check(unsafe { sys::cuCtxSetCurrent(ctx) }, "cuCtxSetCurrent")?;
        let mut stream = std::ptr::null_mut();
        // SAFETY: a context is current; writes one handle.
        check(
            unsafe {
                sys::cuStreamCreate(
                    &mut stream,
                    sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32,
                )
            },
            "cuStreamCreate",
        )?;
        let mut pool = std::ptr::null_mut();
        // SAFETY: valid device; writes one handle.
        check(
            unsafe { sys::cuDeviceGetDefaultMemPool(&mut pool, dev) },
            "cuDeviceGetDefaultMemPool",
        )?;
        let mut keep: u64 = u64::MAX;
        // SAFETY: the attribute takes a u64, passed by pointer. Freed memory then stays in the
        // pool for the next allocation instead of going back to the driver at every sync.
        check(
            unsafe {
                sys::cuMemPoolSetAttribute(
                    pool,
                    sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                    &mut keep as *mut u64 as *mut c_void,
                )
            },
            "cuMemPoolSetAttribute",
        )?;
        let counters = alloc::Raw::zeroed(counter::WORDS * 4, stream)?;
        let partials = alloc::Raw::zeroed(PARTIAL_BYTES, stream)?;
        let staging = alloc::Pinned::new(4096)?;
        let jit = jit::Jit::for_device(ordinal, ctx, cc)?;
        Ok(Arc::new(Gpu {
            dev,
            ctx,
            stream,
            pool,
            name,
            sms,
            l2_bytes,
            jit,
            counters,
            partials,
            state: Mutex::new(StreamState {
                counter_base: 0,
                epoch: 0,
                status: None,
                sort_status: None,
                sort_epoch: 0,
                mailboxes: Vec::new(),
                mailbox_chunks: Vec::new(),
            }),
            staging: Mutex::new(staging),
        }))
    }

    /// Makes this GPU's context current on the calling thread (cheap; done before every use).
    pub fn bind(&self) -> Result<()> {
        // SAFETY: the context is retained for the lifetime of `self`.
        check(unsafe { sys::cuCtxSetCurrent(self.ctx) }, "cuCtxSetCurrent")
    }

    /// Waits for all work queued on this stream.
    pub fn synchronize(&self) -> Result<()> {
        self.bind()?;
        // SAFETY: the stream lives as long as `self`.
        check(
            unsafe { sys::cuStreamSynchronize(self.stream) },
            "cuStreamSynchronize",
        )
    }

    /// Total and free device memory in bytes.
    pub fn memory(&self) -> Result<(usize, usize)> {
        self.bind()?;
        let (mut free, mut total) = (0usize, 0usize);
        // SAFETY: writes two sizes.
        check(
            unsafe { sys::cuMemGetInfo_v2(&mut free, &mut total) },
            "cuMemGetInfo",
        )?;
        Ok((total, free))
    }

    /// The stream's buffer of PARTIAL_BYTES for per-block partial results.
    pub fn partials(&self) -> Ptr {
        Ptr(self.partials.ptr)
    }

    /// The address of counter word `i`.
    pub fn counter(&self, i: usize) -> Ptr {
        Ptr(self.counters.ptr + 4 * i as u64)
    }

    /// Reserves what a single-pass (look-back) launch of `tiles` tiles needs: its slice of the
    /// tile counter, an epoch, and at least `status_bytes` of status words. `launch` is called
    /// with them while the reservation is held, so launches take their tiles in the order they
    /// reserved them.
    pub fn single_pass(
        &self,
        tiles: u64,
        status_bytes: usize,
        launch: impl FnOnce(&PassSlots) -> Result<()>,
    ) -> Result<()> {
        self.reserve(Status::Scan, tiles, status_bytes, launch)
    }

    /// As `single_pass`, over status words of the given kind.
    pub fn reserve(
        &self,
        kind: Status,
        tiles: u64,
        status_bytes: usize,
        launch: impl FnOnce(&PassSlots) -> Result<()>,
    ) -> Result<()> {
        let mut guard = self
            .state
            .lock()
            .map_err(|_| Error::Cuda("stream state lock poisoned".into()))?;
        let st = &mut *guard;
        let (status, epoch, limit) = match kind {
            // Scan epochs are 30 bits (kernels keep flag bits beside them).
            Status::Scan => (&mut st.status, &mut st.epoch, (1u32 << 30) - 1),
            // Sort words keep 40 bits of count and 2 of flags beside a 22-bit epoch.
            Status::Sort => (&mut st.sort_status, &mut st.sort_epoch, (1u32 << 22) - 1),
        };
        let need = status_bytes.max(256);
        if status.as_ref().is_none_or(|s| s.bytes < need) {
            // Grow by doubling; the old buffer is freed in stream order, after the launches
            // that used it.
            let bytes = need
                .max(status.as_ref().map_or(0, |s| s.bytes * 2))
                .next_multiple_of(1 << 16);
            let fresh = alloc::Raw::zeroed(bytes, self.stream)?;
            if let Some(old) = status.replace(fresh) {
                old.free(self.stream);
            }
            *epoch = 0;
        }
        // Past the last epoch, clear the words and restart.
        if *epoch >= limit {
            let s = status.as_ref().map_or(Ptr(0), |s| Ptr(s.ptr));
            let bytes = status.as_ref().map_or(0, |s| s.bytes);
            self.memset_u8(s, 0, bytes)?;
            *epoch = 0;
        }
        *epoch += 1;
        let slots = PassSlots {
            // Without the counter (null), kernels number their tiles by block index.
            counter: if tuning::tile_counter() {
                self.counter(counter::TILES)
            } else {
                Ptr(0)
            },
            base: st.counter_base,
            epoch: *epoch,
            status: status.as_ref().map_or(Ptr(0), |s| Ptr(s.ptr)),
        };
        launch(&slots)?;
        st.counter_base = st.counter_base.wrapping_add(tiles as u32);
        Ok(())
    }

    /// A mailbox of zeroed words (see `Mailbox`); give it back with `take_error`,
    /// `take_word` or `take_slot`.
    pub fn mailbox(&self) -> Result<Mailbox> {
        let mut st = self
            .state
            .lock()
            .map_err(|_| Error::Cuda("stream state lock poisoned".into()))?;
        if st.mailboxes.is_empty() {
            const BOXES: usize = 512;
            let words = alloc::Raw::zeroed(BOXES * 8, self.stream)?;
            let slots = alloc::Pinned::new(BOXES * 8)?;
            let host = slots.ptr as *mut u64;
            let mut dev = 0;
            // SAFETY: `slots` holds BOXES u64s of page-locked host memory, zeroed here before
            // any kernel sees them; the call writes one device address.
            unsafe {
                std::ptr::write_bytes(host, 0, BOXES);
                check(
                    sys::cuMemHostGetDevicePointer_v2(&mut dev, slots.ptr, 0),
                    "cuMemHostGetDevicePointer",
                )?;
            }
            st.mailboxes.extend((0..BOXES).map(|k| Mailbox {
                word: Ptr(words.ptr + 8 * k as u64),
                slot: Ptr(dev + 8 * k as u64),
                host: host.wrapping_add(k),
            }));
            st.mailbox_chunks.push((words, slots));
        }
        st.mailboxes
            .pop()
            .ok_or_else(|| Error::Cuda("no mailbox".into()))
    }

    /// Waits for the stream and returns the position noted in `m`'s word, if any (the kernel
    /// also set the host slot); the mailbox is zeroed again and goes back to the pool.
    pub fn take_error(&self, m: Mailbox) -> Result<Option<u64>> {
        let pos = if self.read_slot(m)? == 0 {
            None
        } else {
            let w = self.read_u64(m.word)?;
            self.memset_u8(m.word, 0, 8)?;
            Some(!w)
        };
        self.give_back(m)?;
        Ok(pos)
    }

    /// Waits for the stream and returns the value of `m`'s device word (kernels may count
    /// into one); the mailbox is zeroed again and goes back to the pool.
    pub fn take_word(&self, m: Mailbox) -> Result<u64> {
        let w = self.read_u64(m.word)?;
        if w != 0 {
            self.memset_u8(m.word, 0, 8)?;
        }
        self.give_back(m)?;
        Ok(w)
    }

    /// Waits for the stream and returns the value of `m`'s host slot; the slot is zeroed
    /// again and the mailbox goes back to the pool (its device word must be zero by then).
    pub fn take_slot(&self, m: Mailbox) -> Result<u64> {
        let v = self.read_slot(m)?;
        self.give_back(m)?;
        Ok(v)
    }

    /// Waits for the stream, reads `m`'s host slot and zeroes it.
    fn read_slot(&self, m: Mailbox) -> Result<u64> {
        self.synchronize()?;
        // SAFETY: `host` is a slot of a chunk that lives as long as `self`; the stream has
        // drained, so no kernel writes it now, and the mailbox is this caller's alone.
        let v = unsafe { std::ptr::read_volatile(m.host) };
        if v != 0 {
            // SAFETY: as above.
            unsafe { std::ptr::write_volatile(m.host, 0) };
        }
        Ok(v)
    }

    fn give_back(&self, m: Mailbox) -> Result<()> {
        self.state
            .lock()
            .map_err(|_| Error::Cuda("stream state lock poisoned".into()))?
            .mailboxes
            .push(m);
        Ok(())
    }

    /// Copies `bytes` from device address `src` to the host, waiting for the stream.
    pub fn read_small(&self, src: Ptr, out: &mut [u8]) -> Result<()> {
        let staging = self
            .staging
            .lock()
            .map_err(|_| Error::Cuda("staging lock poisoned".into()))?;
        if out.len() > staging.bytes {
            drop(staging);
            return self.read_pageable(src, out);
        }
        self.bind()?;
        // SAFETY: the staging buffer holds `staging.bytes >= out.len()` bytes; `src` is a
        // device address of at least `out.len()` bytes (callers pass their own buffers).
        unsafe {
            check(
                sys::cuMemcpyDtoHAsync_v2(staging.ptr, src.0, out.len(), self.stream),
                "cuMemcpyDtoHAsync",
            )?;
            check(sys::cuStreamSynchronize(self.stream), "cuStreamSynchronize")?;
            std::ptr::copy_nonoverlapping(staging.ptr as *const u8, out.as_mut_ptr(), out.len());
        }
        Ok(())
    }

    /// Copies device memory to a host slice of any size, waiting for the stream.
    pub fn read_pageable(&self, src: Ptr, out: &mut [u8]) -> Result<()> {
        if out.is_empty() {
            return Ok(());
        }
        self.bind()?;
        // SAFETY: `out` is a live host buffer of `out.len()` bytes; `src` points at as many
        // device bytes (callers pass a sequence's own range).
        unsafe {
            check(
                sys::cuMemcpyDtoHAsync_v2(
                    out.as_mut_ptr() as *mut c_void,
                    src.0,
                    out.len(),
                    self.stream,
                ),
                "cuMemcpyDtoHAsync",
            )?;
            check(sys::cuStreamSynchronize(self.stream), "cuStreamSynchronize")
        }
    }

    /// Reads one little-endian u64 from device memory (waits for the stream).
    pub fn read_u64(&self, src: Ptr) -> Result<u64> {
        let mut b = [0u8; 8];
        self.read_small(src, &mut b)?;
        Ok(u64::from_le_bytes(b))
    }

    /// Copies host bytes to device memory (queued; the host bytes may be dropped on return).
    pub fn write(&self, dst: Ptr, data: &[u8]) -> Result<()> {
        if data.is_empty() {
            return Ok(());
        }
        self.bind()?;
        // SAFETY: `dst` has room for `data.len()` bytes (a buffer allocated for them). From
        // pageable memory the driver stages the bytes before returning, so `data` may go.
        check(
            unsafe {
                sys::cuMemcpyHtoDAsync_v2(
                    dst.0,
                    data.as_ptr() as *const c_void,
                    data.len(),
                    self.stream,
                )
            },
            "cuMemcpyHtoDAsync",
        )
    }

    /// Queues a device-to-device copy.
    pub fn copy(&self, dst: Ptr, src: Ptr, bytes: usize) -> Result<()> {
        if bytes == 0 {
            return Ok(());
        }
        self.bind()?;
        // SAFETY: both ranges are `bytes` long inside live buffers (callers' invariant).
        check(
            unsafe { sys::cuMemcpyDtoDAsync_v2(dst.0, src.0, bytes, self.stream) },
            "cuMemcpyDtoDAsync",
        )
    }

    /// Queues a fill of `count` bytes with `v`.
    pub fn memset_u8(&self, dst: Ptr, v: u8, count: usize) -> Result<()> {
        if count == 0 {
            return Ok(());
        }
        self.bind()?;
        // SAFETY: `dst` has room for `count` bytes.
        check(
            unsafe { sys::cuMemsetD8Async(dst.0, v, count, self.stream) },
            "cuMemsetD8Async",
        )
    }

    /// Queues a fill of `count` 16-bit words (`dst` 2-byte aligned).
    pub fn memset_u16(&self, dst: Ptr, v: u16, count: usize) -> Result<()> {
        if count == 0 {
            return Ok(());
        }
        self.bind()?;
        // SAFETY: `dst` is 2-byte aligned with room for `count` words.
        check(
            unsafe { sys::cuMemsetD16Async(dst.0, v, count, self.stream) },
            "cuMemsetD16Async",
        )
    }

    /// Queues a fill of `count` 32-bit words (`dst` 4-byte aligned).
    pub fn memset_u32(&self, dst: Ptr, v: u32, count: usize) -> Result<()> {
        if count == 0 {
            return Ok(());
        }
        self.bind()?;
        // SAFETY: `dst` is 4-byte aligned with room for `count` words.
        check(
            unsafe { sys::cuMemsetD32Async(dst.0, v, count, self.stream) },
            "cuMemsetD32Async",
        )
    }

    /// Runs `f` between two events on this stream and returns the milliseconds between them
    /// (waits for the stream).
    pub fn time(&self, f: impl FnOnce() -> Result<()>) -> Result<f64> {
        if !driver_has("cuEventElapsedTime_v2") {
            return Err(Error::NoCuda(
                "the driver lacks cuEventElapsedTime_v2 (CUDA 12.8 or later)".into(),
            ));
        }
        self.bind()?;
        let mut ev = [std::ptr::null_mut(); 2];
        for e in ev.iter_mut() {
            // SAFETY: writes one handle; the context is current.
            check(
                unsafe { sys::cuEventCreate(e, sys::CUevent_flags::CU_EVENT_DEFAULT as u32) },
                "cuEventCreate",
            )?;
        }
        let run = || -> Result<f64> {
            // SAFETY: the events were created above; the stream lives as long as `self`.
            check(
                unsafe { sys::cuEventRecord(ev[0], self.stream) },
                "cuEventRecord",
            )?;
            f()?;
            self.bind()?;
            let mut ms = 0f32;
            // SAFETY: as above; elapsed time is read after the end event completed.
            unsafe {
                check(sys::cuEventRecord(ev[1], self.stream), "cuEventRecord")?;
                check(sys::cuEventSynchronize(ev[1]), "cuEventSynchronize")?;
                check(
                    sys::cuEventElapsedTime_v2(&mut ms, ev[0], ev[1]),
                    "cuEventElapsedTime",
                )?;
            }
            Ok(ms as f64)
        };
        let r = run();
        for e in ev {
            // SAFETY: destroying events we created; pending records complete first.
            unsafe { sys::cuEventDestroy_v2(e) };
        }
        r
    }
}

impl Drop for Gpu {
    fn drop(&mut self) {
        // SAFETY: no buffer outlives its `Gpu` (each holds an `Arc` to it), so after the
        // stream drains nothing uses the counters, the status words, the stream or this
        // reference to the primary context.
        unsafe {
            sys::cuCtxSetCurrent(self.ctx);
            sys::cuStreamSynchronize(self.stream);
            if let Ok(mut st) = self.state.lock() {
                for s in [st.status.take(), st.sort_status.take()]
                    .into_iter()
                    .flatten()
                {
                    s.free(self.stream);
                }
                st.mailboxes.clear();
                for (words, mut slots) in st.mailbox_chunks.drain(..) {
                    words.free(self.stream);
                    sys::cuStreamSynchronize(self.stream);
                    slots.free();
                }
            }
            self.counters.free_ref(self.stream);
            self.partials.free_ref(self.stream);
            sys::cuStreamSynchronize(self.stream);
            if let Ok(mut p) = self.staging.lock() {
                p.free();
            }
            sys::cuStreamDestroy_v2(self.stream);
            sys::cuDevicePrimaryCtxRelease_v2(self.dev);
        }
        let _ = self.pool;
    }
}

/// Compiles the kernel instances of every family with NVRTC for sm_90, without a GPU: every
/// element type, operator and variant the launchers can ask for. Needs the NVRTC library,
/// so it is ignored by default: `cargo test --lib -- --ignored kernels_compile`. With
/// `DEVSEQ_DUMP_DIR` set, the images are written there (for cuobjdump); `DEVSEQ_COMPILE_ONLY`
/// keeps the instances whose expression contains that text (e.g. `ds_segscan<i32`).
#[cfg(test)]
mod compile_check {
    use super::jit::{Instance, compile_for};
    use crate::element::ScalarType;
    use crate::expr::{Expr, trace};
    use crate::op::Op;
    use rayon::prelude::*;

    fn ops_for(t: ScalarType) -> Vec<Op> {
        Op::ALL
            .into_iter()
            .filter(|o| !(o.is_bitwise() && t.is_float()))
            .collect()
    }

    fn instances() -> Vec<Instance> {
        let mut v = Vec::new();
        let idx = [ScalarType::U32, ScalarType::U64];
        for t in ScalarType::ALL {
            v.push(super::map::generator_instance("ds_sequence", t));
            v.push(super::map::generator_instance("ds_fill", t));
            v.push(super::segment::head_flags_instance(t));
            v.push(super::histogram::instance(t, 256));
            v.push(super::histogram::instance(t, 100_000));
            v.push(super::sort::hist_instance(t));
            v.push(super::sort::pass_instance(t, super::sort::Values::None));
            for u in ScalarType::ALL {
                let values = super::sort::Values::Given(u, super::Ptr(0));
                v.push(super::sort::pass_instance(t, values));
            }
            for i in idx {
                v.push(super::sort::pass_instance(
                    t,
                    super::sort::Values::Positions(i),
                ));
                v.push(super::gather::instance("ds_gather", t, i, true));
                v.push(super::gather::instance("ds_scatter", t, i, false));
                v.push(super::gather::spread_instance(i));
                v.push(super::compact::instance(i, false, true, true));
            }
            v.push(super::compact::instance(t, false, true, false));
            v.push(super::compact::instance(t, true, false, false));
            for op in ops_for(t) {
                v.push(super::reduce::instance(
                    t,
                    op,
                    super::reduce::Load::Value,
                    true,
                ));
                v.push(super::scan::instance(t, op, true, false));
                v.push(super::scan::instance(t, op, true, true));
                v.push(super::segment::scan_instance(t, op, true, false));
                v.push(super::segment::scan_instance(t, op, true, true));
                v.push(super::segment::reduce_instance(t, op, false, true));
                v.push(super::combine::instance(t, ScalarType::U32, op, true));
            }
            v.push(super::reduce::instance(
                t,
                Op::Add,
                super::reduce::Load::Value,
                false,
            ));
            v.push(super::scan::instance(t, Op::Max, false, false));
            v.push(super::segment::reduce_instance(t, Op::Add, true, false));
            v.push(super::combine::instance(t, ScalarType::U64, Op::Min, false));
        }
        v.push(super::reduce::instance(
            ScalarType::U8,
            Op::Add,
            super::reduce::Load::Nonzero,
            true,
        ));
        // Map: one graph with every operator, per type pair.
        let g = trace(&[ScalarType::F32, ScalarType::I32], |a, id| {
            let x = Expr::<f32>::from_node(id, a[0]);
            let k = Expr::<i32>::from_node(id, a[1]);
            let y = (x * 2.0 + 1.0)
                .sqrt()
                .exp()
                .ln()
                .sin()
                .cos()
                .tanh()
                .floor()
                .ceil();
            let z = (y.round().abs().powf(x) - x / 3.0).min(x).max(-x);
            let m = ((k % 7) & 3 | 1) ^ !k;
            let s = (m << 3u32) >> Expr::constant(1u32);
            let c = Expr::select(z.lt(1.0), s.cast::<f32>(), -z);
            c.cast::<half::f16>()
                .cast::<half::bf16>()
                .cast::<f64>()
                .cast::<u8>()
                .cast::<i64>()
        })
        .unwrap();
        v.push(super::map::map_instance(&g, true));
        v.push(super::map::map_instance(&g, false));
        let g = trace(&[ScalarType::U8], |a, id| {
            Expr::<u8>::from_node(id, a[0]).cast::<f32>().cast::<u8>()
        })
        .unwrap();
        v.push(super::map::map_instance(&g, true));
        // Float min/max against a constant zero (which zero wins must follow the host).
        let g = trace(&[ScalarType::F32], |a, id| {
            let x = Expr::<f32>::from_node(id, a[0]);
            Expr::constant(0.0f32).min(x).sqrt() + Expr::constant(0.0f32).max(x)
        })
        .unwrap();
        v.push(super::map::map_instance(&g, true));
        // The benchmark's map.
        let g = trace(&[ScalarType::F32], |a, id| {
            Expr::<f32>::from_node(id, a[0]) * 2.0 + 1.0
        })
        .unwrap();
        v.push(super::map::map_instance(&g, true));
        v.sort_by(|a, b| a.expr.cmp(&b.expr));
        v.dedup();
        v
    }

    #[test]
    #[ignore = "needs the NVRTC library; run with --ignored"]
    fn kernels_compile() {
        let dump = std::env::var_os("DEVSEQ_DUMP_DIR").map(std::path::PathBuf::from);
        let only = std::env::var("DEVSEQ_COMPILE_ONLY").unwrap_or_default();
        let all: Vec<Instance> = instances()
            .into_iter()
            .filter(|i| i.expr.contains(&only))
            .collect();
        let failures: Vec<String> = all
            .par_iter()
            .filter_map(|inst| match compile_for("sm_90", inst) {
                Ok(image) => {
                    if let Some(d) = &dump {
                        let name: String = inst
                            .expr
                            .chars()
                            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                            .collect();
                        let _ = std::fs::create_dir_all(d);
                        let _ = std::fs::write(d.join(format!("{name}.cubin")), image);
                    }
                    None
                }
                Err(crate::Error::Compile { log, .. }) => Some(format!("{}:\n{log}", inst.expr)),
                Err(e) => Some(format!("{}: {e}", inst.expr)),
            })
            .collect();
        println!(
            "{} instances compiled, {} failed",
            all.len(),
            failures.len()
        );
        for f in failures.iter().take(5) {
            println!("{f}");
        }
        assert!(failures.is_empty());
    }
}
