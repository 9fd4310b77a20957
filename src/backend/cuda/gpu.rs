//! One CUDA device as one `Device` (and its clones) uses it, on cudarc's safe layer: the
//! device's primary context (`CudaContext`), a stream of its own (`CudaStream`), its facts
//! (name, multiprocessors, cache), the compiler, and the memory accounts.
//!
//! cudarc's event tracking is off for devseq's context: every buffer devseq makes lives on the
//! one stream that uses it, so the stream's order is all the ordering there is, and no event
//! is recorded or waited for at each launch.

use super::driver::{DriverResult, check, driver_error, driver_has, driver_present, nvrtc_present};
use super::jit::{HeldKernel, Jit};
use super::mem::Memory;
use super::single_pass::StreamState;
use super::tuning::Arch;
use crate::error::{Error, Result};
use cudarc::driver::{CudaContext, CudaStream, sys};
use std::sync::{Arc, OnceLock, Weak};

/// One CUDA device with a stream of its own.
pub(crate) struct Gpu {
    pub ctx: Arc<CudaContext>,
    pub stream: Arc<CudaStream>,
    pub name: String,
    pub arch: Arch,
    /// The compiler and its caches (jit.rs).
    pub jit: Arc<Jit>,
    /// Buffers, copies, read-backs and mailboxes (mem.rs).
    pub mem: Memory,
    /// The single-pass kernels' tile counter and look-back words, the reductions' partials
    /// (single_pass.rs).
    pub passes: StreamState,
    /// This GPU, for what outlives a call and must reach it later (pending checks).
    pub me: Weak<Gpu>,
    /// The copy kernels of stored bytes (map.rs `copy_by_kernel`: 4-byte words, bytes), held
    /// after their first use.
    pub copiers: [OnceLock<HeldKernel>; 2],
}

impl Gpu {
    /// Opens GPU `ordinal` with a new stream.
    pub fn new(ordinal: usize) -> Result<Arc<Gpu>> {
        super::tuning::check_knobs()?;
        if !driver_present() {
            return Err(Error::NoCuda(
                "the CUDA driver library (libcuda.so) was not found".into(),
            ));
        }
        let count = CudaContext::device_count()
            .map_err(|e| Error::NoCuda(driver_error(e, "cuDeviceGetCount").to_string()))?;
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
        // NVRTC's start (`nvrtc::warm_up`), beside the context's creation; the scope waits for
        // it on every path.
        let t0 = std::time::Instant::now();
        let ctx = std::thread::scope(|s| {
            let warmed = std::thread::Builder::new()
                .name("devseq-jit".into())
                .spawn_scoped(s, super::nvrtc::warm_up);
            let ctx = CudaContext::new(ordinal).cuda("cuDevicePrimaryCtxRetain");
            if warmed.is_err() {
                super::nvrtc::warm_up();
            }
            let ms = t0.elapsed().as_secs_f64() * 1e3;
            log::debug!("the context of GPU {ordinal} made in {ms:.1} ms");
            ctx
        })?;
        // SAFETY: devseq orders all work on a buffer through the one stream that made it
        // (documented for users who hand buffers in or out), so cudarc need not record events.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.new_stream().cuda("cuStreamCreate")?;
        let attr = |a| ctx.attribute(a).cuda("cuDeviceGetAttribute");
        use sys::CUdevice_attribute as A;
        let arch = Arch {
            major: attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)? as u32,
            minor: attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)? as u32,
            sms: attr(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?.max(1) as u32,
            l2_bytes: attr(A::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)?.max(0) as usize,
            smem_block: attr(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?.max(0)
                as usize,
            smem_sm: attr(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR)?.max(0)
                as usize,
            smem_reserved: attr(A::CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK)?.max(0)
                as usize,
            threads_sm: attr(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)?.max(32) as u32,
            blocks_sm: attr(A::CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR)?.max(1) as u32,
            cooperative: attr(A::CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH)? != 0,
        };
        let name = ctx.name().cuda("cuDeviceGetName")?;
        supported(&name, &arch)?;
        let mem = Memory::new(&ctx, &stream)?;
        let jit = Jit::for_device(&ctx, &name, arch)?;
        let passes = StreamState::new(&stream)?;
        Ok(Arc::new_cyclic(|me| Gpu {
            passes,
            me: me.clone(),
            copiers: Default::default(),
            ctx,
            stream,
            name,
            arch,
            jit,
            mem,
        }))
    }

    /// Waits for all work queued on this stream.
    pub fn synchronize(&self) -> Result<()> {
        self.mem.synchronize()
    }

    /// Total and free device memory in bytes.
    pub fn memory(&self) -> Result<(usize, usize)> {
        let (free, total) = self.ctx.mem_get_info().cuda("cuMemGetInfo")?;
        Ok((total, free))
    }

    /// Runs `f` between two events on this stream and returns the milliseconds between them
    /// (waits for the stream).
    pub fn time(&self, f: &mut dyn FnMut() -> Result<()>) -> Result<f64> {
        // Both events exist before the first is recorded, so that creating the second is not
        // timed (the GPU may be idle, waiting for the host, when `f` returns).
        let timed = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
        let start = self.ctx.new_event(timed).cuda("cuEventCreate")?;
        let end = self.ctx.new_event(timed).cuda("cuEventCreate")?;
        start.record(&self.stream).cuda("cuEventRecord")?;
        f()?;
        end.record(&self.stream).cuda("cuEventRecord")?;
        if driver_has("cuEventElapsedTime_v2") {
            return Ok(start.elapsed_ms(&end).cuda("cuEventElapsedTime")? as f64);
        }
        // Drivers before CUDA 12.8 have only the first form, which cudarc's CUDA 13 bindings
        // do not call.
        end.synchronize().cuda("cuEventSynchronize")?;
        elapsed_v1(start.cu_event(), end.cu_event())
    }
}

/// The milliseconds between two completed events by the driver's `cuEventElapsedTime`.
fn elapsed_v1(start: sys::CUevent, end: sys::CUevent) -> Result<f64> {
    type ElapsedTime = unsafe extern "C" fn(*mut f32, sys::CUevent, sys::CUevent) -> sys::CUresult;
    // SAFETY: the driver library is loaded (a context exists); `cuEventElapsedTime` has this
    // signature in every CUDA version that exports it.
    let f = unsafe { sys::culib().get::<ElapsedTime>(b"cuEventElapsedTime") }
        .map_err(|e| Error::NoCuda(format!("the driver has no cuEventElapsedTime ({e})")))?;
    let mut ms = 0f32;
    // SAFETY: both events were created in the current context and have completed; `ms` is a
    // valid f32 to write.
    check(unsafe { f(&mut ms, start, end) }, "cuEventElapsedTime")?;
    Ok(ms as f64)
}

/// `Ok` for a GPU devseq's kernels run on (compute capability 7.0, Volta, and later: they use
/// its memory-ordering loads and stores and `__nanosleep`), else an error naming it.
pub(crate) fn supported(name: &str, arch: &Arch) -> Result<()> {
    if arch.major >= 7 {
        return Ok(());
    }
    Err(Error::NoCuda(format!(
        "{name} has compute capability {}.{}; devseq needs 7.0 (Volta) or later",
        arch.major, arch.minor
    )))
}

impl Drop for Gpu {
    fn drop(&mut self) {
        // Work still queued may use the look-back words, mailboxes and staging memory that
        // drop with `self`: let it finish first.
        let _ = self.stream.synchronize();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::cuda::tuning::gpus;

    /// GPUs from Volta on are supported; an older one (a Pascal P100, 6.0; a GTX 1080, 6.1) is an
    /// error naming it and what devseq needs.
    #[test]
    fn volta_and_later_are_supported() {
        for (name, arch) in gpus::ALL {
            assert!(supported(name, &arch).is_ok(), "{name}");
        }
        for (name, minor) in [("Tesla P100-PCIE-16GB", 0), ("NVIDIA GeForce GTX 1080", 1)] {
            let pascal = Arch {
                major: 6,
                minor,
                ..gpus::V100
            };
            let e = supported(name, &pascal).unwrap_err();
            let msg = e.to_string();
            assert!(
                matches!(e, Error::NoCuda(_)) && msg.contains(name) && msg.contains("7.0"),
                "{msg}"
            );
        }
    }
}
