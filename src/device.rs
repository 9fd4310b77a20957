//! `Device`: where sequences live and work runs (one CUDA GPU with its stream, or the host).
//! It holds the backend; this file's constructors are the only place that chooses one.

use crate::backend::Backend;
use crate::backend::cuda::CudaBackend;
use crate::backend::host::HostBackend;
use crate::error::{Error, Result};
use std::sync::Arc;

/// Where sequences live and work runs: one CUDA GPU with a stream of its own, or the host CPU
/// (a rayon thread pool).
///
/// `Device` is `Clone + Send + Sync`; clones share the GPU context and stream, and work queued
/// through any clone runs in order. Two `Device::cuda(0)` values are two streams on one GPU:
/// their work may overlap, and their sequences cannot be mixed (`Error::DeviceMismatch`).
/// Every `Device::host()` is the same device.
///
/// Work is queued on the device's stream and runs asynchronously; a call that returns host
/// data (`to_vec`, `reduce`, `fold`, or a length known only from the data) waits for what it
/// needs.
///
/// # Examples
///
/// ```
/// use devseq::Device;
/// let dev = Device::auto()?; // DEVSEQ_DEVICE decides, else GPU 0 where there is one
/// println!("running on {}", dev.name());
/// assert_eq!(Device::host().is_cuda(), false);
/// # Ok::<(), devseq::Error>(())
/// ```
#[derive(Clone)]
pub struct Device {
    backend: Arc<dyn Backend>,
}

impl std::fmt::Debug for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Device({})", self.name())
    }
}

impl Device {
    /// The device `DEVSEQ_DEVICE` names (`cpu`, `cuda` for GPU 0, or `cuda:N`); where it is
    /// unset, GPU 0 when a driver, a GPU and NVRTC are present, else the host.
    ///
    /// Never panics, also where no CUDA library is installed.
    ///
    /// # Errors
    ///
    /// `Error::NoCuda` when `DEVSEQ_DEVICE` asks for a GPU that cannot be used (never a silent
    /// fallback); `Error::InvalidArgument` for any other value of `DEVSEQ_DEVICE`.
    ///
    /// # Examples
    ///
    /// ```
    /// let dev = devseq::Device::auto()?;
    /// assert!(!dev.name().is_empty());
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn auto() -> Result<Device> {
        crate::diagnostics::init();
        match std::env::var("DEVSEQ_DEVICE") {
            Ok(v) if !v.trim().is_empty() => Self::parse(v.trim()),
            _ => Ok(Self::cuda(0).unwrap_or_else(|e| {
                log::debug!("Device::auto takes the host: no GPU can be used ({e})");
                Self::host()
            })),
        }
    }

    fn parse(v: &str) -> Result<Device> {
        let lower = v.to_ascii_lowercase();
        match lower.as_str() {
            "cpu" | "host" => Ok(Self::host()),
            "cuda" | "gpu" => Self::cuda(0),
            _ => match lower
                .strip_prefix("cuda:")
                .and_then(|n| n.parse::<usize>().ok())
            {
                Some(n) => Self::cuda(n),
                None => Err(Error::InvalidArgument(format!(
                    "DEVSEQ_DEVICE={v}: expected cpu, cuda or cuda:N"
                ))),
            },
        }
    }

    /// The host CPU backend (rayon's global thread pool).
    ///
    /// # Examples
    ///
    /// ```
    /// let dev = devseq::Device::host();
    /// assert!(dev.name().starts_with("host"));
    /// ```
    pub fn host() -> Device {
        crate::diagnostics::init();
        Device {
            backend: HostBackend::get(),
        }
    }

    /// GPU `ordinal`, with a new stream.
    ///
    /// # Errors
    ///
    /// `Error::NoCuda` where the CUDA driver, that GPU or NVRTC is missing.
    ///
    /// # Examples
    ///
    /// ```
    /// match devseq::Device::cuda(0) {
    ///     Ok(gpu) => assert!(gpu.is_cuda()),
    ///     Err(e) => println!("no GPU here: {e}"),
    /// }
    /// ```
    pub fn cuda(ordinal: usize) -> Result<Device> {
        crate::diagnostics::init();
        Ok(Device {
            backend: Arc::new(CudaBackend::new(ordinal)?),
        })
    }

    /// The backend that runs this device's work.
    pub(crate) fn backend(&self) -> &dyn Backend {
        &*self.backend
    }

    /// Whether this is a GPU.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::Device;
    /// assert!(!Device::host().is_cuda());
    /// if let Ok(gpu) = Device::cuda(0) {
    ///     assert!(gpu.is_cuda());
    /// }
    /// ```
    pub fn is_cuda(&self) -> bool {
        self.backend.is_cuda()
    }

    /// The device's name, e.g. `"NVIDIA H100 80GB HBM3"` or `"host (16 threads)"`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::Device;
    /// let dev = Device::auto()?;
    /// assert!(!dev.name().is_empty());
    /// assert_eq!(format!("{dev:?}"), format!("Device({})", dev.name()));
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn name(&self) -> String {
        self.backend.name()
    }

    /// Waits for all work queued on this device (its stream).
    ///
    /// # Errors
    ///
    /// `Error::Cuda` where queued work failed. (A `gather` or `scatter` with a bad index
    /// reports it to the uses of its result, not here.)
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::<u32>::sequence(&dev, 1000)?.map(|x| x * 3)?.copy()?; // queued
    /// dev.synchronize()?; // waits for it (returns at once on the host)
    /// assert_eq!(xs.to_vec()?[999], 2997);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn synchronize(&self) -> Result<()> {
        self.backend.synchronize()
    }

    /// Waits until every kernel this process has compiled so far runs in its optimized form.
    ///
    /// A kernel that is not in the disk cache is first compiled quickly (about a third of the
    /// time, slower code) so that the first call returns soon, and then again with full
    /// optimization by background threads, which swap it in and write it to the disk cache
    /// (docs/guide.md, "The kernel cache and environment variables"). The two forms
    /// give the same bits; only their speed differs. Call this before timing a pipeline,
    /// after a first call that compiled its kernels; the host backend, and a GPU with
    /// `DEVSEQ_JIT=optimized`, have nothing to wait for.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq, Op};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::<f32>::sequence(&dev, 1 << 16)?;
    /// let warm = xs.map(|x| x * 0.5)?.reduce(Op::Add)?; // compiles (quickly, on a GPU)
    /// dev.finish_compiling();
    /// let ms = dev.time(|| xs.map(|x| x * 0.5)?.reduce(Op::Add).map(|_| ()))?; // optimized
    /// assert_eq!(warm, xs.map(|x| x * 0.5)?.reduce(Op::Add)?); // the same bits
    /// assert!(ms >= 0.0);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn finish_compiling(&self) {
        self.backend.finish_compiling()
    }

    /// Runs `f` and returns the milliseconds its device work took: between two CUDA events on
    /// the stream (waiting for the second), or by the wall clock on the host. For benchmarks.
    ///
    /// # Errors
    ///
    /// What `f` returns, or `Error::Cuda` from the events.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::<f32>::sequence(&dev, 1 << 16)?;
    /// let ms = dev.time(|| xs.map(|x| x * 2.0).map(|_| ()))?;
    /// assert!(ms >= 0.0);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn time(&self, f: impl FnOnce() -> Result<()>) -> Result<f64> {
        let mut f = Some(f);
        self.backend.time(&mut || f.take().map_or(Ok(()), |f| f()))
    }

    /// Total and free memory of the device in bytes (the host reports zeros: it has no fixed
    /// pool).
    ///
    /// # Errors
    ///
    /// `Error::Cuda` from the driver.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::Device;
    /// let dev = Device::auto()?;
    /// let (total, free) = dev.memory()?;
    /// assert!(free <= total);
    /// assert_eq!(Device::host().memory()?, (0, 0));
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn memory(&self) -> Result<(usize, usize)> {
        self.backend.memory()
    }

    /// Bytes that devseq holds on this device now, for live stored sequences and for the
    /// temporaries of work in flight (on the host: the bytes of its stored sequences). Memory
    /// kept in a pool for reuse does not count, so the figure returns to its earlier value when
    /// sequences drop. Lazy sequences hold no memory of their own.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let before = dev.memory_in_use();
    /// let xs = DeviceSeq::from_slice(&dev, &[1u64; 1000])?;
    /// assert!(dev.memory_in_use() >= before + 8000);
    /// drop(xs);
    /// assert_eq!(dev.memory_in_use(), before);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn memory_in_use(&self) -> usize {
        self.backend.memory_in_use()
    }

    /// Gives every buffer that devseq keeps for reuse on this device back to the driver, and
    /// the driver's pool its unused memory back to the device, after the work queued so far:
    /// for a program that shares the GPU with another library. Sequences that live keep their
    /// memory; later calls allocate again (a little slower at first). Nothing to do on the host,
    /// whose sequences free their memory when they drop.
    ///
    /// # Errors
    ///
    /// `Error::Cuda` where the driver fails.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq, Op};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::<u32>::sequence(&dev, 1 << 20)?.copy()?;
    /// let before = dev.memory_in_use();
    /// drop(xs.inclusive_scan(Op::Add)?); // its buffer is kept for reuse, not counted
    /// dev.trim_memory()?; // and now given back
    /// assert_eq!(dev.memory_in_use(), before);
    /// assert_eq!(xs.reduce(Op::Max)?, (1 << 20) - 1); // live sequences are untouched
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn trim_memory(&self) -> Result<()> {
        self.backend.trim_memory()
    }

    /// The most bytes that devseq keeps for reuse on this device from now on (its own kept
    /// buffers, and what the driver's memory pool keeps past a synchronization); what it keeps
    /// beyond that is given back at once. 0 keeps nothing: every buffer goes back when its last
    /// user drops it (slower small calls, as each then allocates). The default keeps up to 1 GiB
    /// of devseq's buffers and all of the driver pool's. A driver that refuses the pool's limit
    /// leaves it as it was (logged at warn level). Nothing to do on the host.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq, Op};
    /// let dev = Device::auto()?;
    /// dev.set_kept_memory_limit(0);
    /// let xs = DeviceSeq::<f64>::sequence(&dev, 1000)?;
    /// assert_eq!(xs.inclusive_scan(Op::Add)?.to_vec()?[999], 499_500.0);
    /// dev.set_kept_memory_limit(64 << 20);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn set_kept_memory_limit(&self, bytes: usize) {
        if let Err(e) = self.backend.set_kept_memory_limit(bytes) {
            log::warn!("set_kept_memory_limit({bytes}): {e}");
        }
    }

    /// The high-water mark of [`memory_in_use`](Self::memory_in_use) since the last
    /// [`reset_peak_memory`](Self::reset_peak_memory) (or since the device was opened).
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq, Op};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::<f32>::sequence(&dev, 1 << 20)?; // lazy: no memory
    /// dev.reset_peak_memory();
    /// let before = dev.peak_memory_in_use();
    /// let total = xs.map(|x| x * x)?.reduce(Op::Add)?;  // fused: nothing n-sized stored
    /// assert!(total > 0.0);
    /// assert!(dev.peak_memory_in_use() < before + (1 << 20));
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn peak_memory_in_use(&self) -> usize {
        self.backend.peak_memory_in_use()
    }

    /// Starts a new high-water mark for [`peak_memory_in_use`](Self::peak_memory_in_use) at
    /// the memory in use now.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let big = DeviceSeq::from_slice(&dev, &vec![0u8; 1 << 20])?;
    /// assert!(dev.peak_memory_in_use() >= 1 << 20);
    /// drop(big);
    /// dev.reset_peak_memory(); // the mark starts again from what is in use now
    /// assert!(dev.peak_memory_in_use() < 1 << 20);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn reset_peak_memory(&self) {
        self.backend.reset_peak_memory()
    }

    /// Whether `self` and `other` are the same device (clones of one `Device`, or both the
    /// host).
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::Device;
    /// let dev = Device::auto()?;
    /// assert!(dev.same(&dev.clone()));
    /// assert!(Device::host().same(&Device::host()));
    /// assert_eq!(dev.same(&Device::host()), !dev.is_cuda());
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn same(&self, other: &Device) -> bool {
        Arc::ptr_eq(&self.backend, &other.backend)
    }

    /// The cudarc stream devseq queues this GPU's work on (`None` on the host).
    ///
    /// Ordering: work that you queue on this stream (copies, your own kernels, crates built
    /// on cudarc) runs in order with devseq's, before and after, with no synchronization.
    /// Work on another stream is not ordered with devseq's: make that stream wait for this
    /// one (`other.join(&stream)`, which records and waits for a cudarc event) before it
    /// reads what devseq wrote, and this one wait for it (`stream.join(&other)`) before
    /// devseq reads what it wrote.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[1.0f32, 2.0, 3.0])?;
    /// if let Some(stream) = dev.cuda_stream() {
    ///     // A copy that devseq owns no more, read back through cudarc on devseq's stream.
    ///     let slice = xs.to_cuda_slice()?;
    ///     assert_eq!(stream.clone_dtoh(&slice).unwrap(), [1.0, 2.0, 3.0]);
    /// } else {
    ///     assert!(!dev.is_cuda());
    /// }
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn cuda_stream(&self) -> Option<Arc<cudarc::driver::CudaStream>> {
        self.backend.cuda().map(|c| c.stream())
    }

    /// Compiles the CUDA C++ kernel `name` (an `extern "C" __global__` function of
    /// `source`) through devseq's NVRTC path: the same options as devseq's own kernels, its
    /// prelude included before `source` (fixed-width `i8` ... `u64`, `f32`, `f64`, and the
    /// 16-bit storage types `f16`, `bf16` with `ds::f16_to_f32`, `ds::f32_to_f16`,
    /// `ds::bf16_to_f32`, `ds::f32_to_bf16`), and its caches: compiled once a process, and
    /// loaded from the disk cache (the same trust checks as devseq's own entries) by later
    /// processes. Launch the returned function with cudarc's launch builder on
    /// [`cuda_stream`](Self::cuda_stream), with [`DeviceSeq::device_ptr`](crate::DeviceSeq::device_ptr) addresses.
    ///
    /// # Errors
    ///
    /// `Error::NoCuda` on the host; `Error::Compile` with NVRTC's log and the source where it
    /// does not compile; `Error::Cuda` where the module does not load or has no `name`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::Device;
    /// let dev = Device::auto()?;
    /// let src = r#"extern "C" __global__ void twice(float* x, u64 n) {
    ///     u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x;
    ///     if (i < n) x[i] *= 2.0f;
    /// }"#;
    /// match dev.compile("twice", src) {
    ///     Ok(_kernel) => assert!(dev.is_cuda()),
    ///     Err(e) => assert!(!dev.is_cuda(), "{e}"),
    /// }
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn compile(&self, name: &str, source: &str) -> Result<cudarc::driver::CudaFunction> {
        match self.backend.cuda() {
            Some(c) => c.compile(name, source),
            None => Err(Error::NoCuda(format!(
                "compile({name:?}) needs a GPU device, not {}",
                self.name()
            ))),
        }
    }
}
