//! Kernel launches. A kernel takes its sources by value (one parameter each, the structs
//! `source.rs` describes) and then one parameter struct of its family, declared once with
//! `kernel_params!`, which gives both the Rust `#[repr(C)]` struct and its C++ twin. The one
//! unsafe launch (`launch_raw`) is reached only through `Bound::launch`, whose kernel, sources
//! and parameter type come from the same key.

use super::driver::DriverResult;
use super::gpu::Gpu;
use super::jit::{Kernel, Pinned};
use super::key::{KernelKey, Template};
use super::mem::{Buffer, Ptr};
use super::source::{self, SourceArgs, SourceKey};
use crate::error::{Error, Result};
use crate::expr::combine::CombinerShape;
use crate::item::ScalarType;
use crate::source::Source;
use cudarc::driver::{DeviceRepr, LaunchConfig, PushKernelArg, sys};
use std::marker::PhantomData;
use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};

/// A kernel's parameter struct, laid out as its C++ twin.
pub(crate) trait KernelParams: DeviceRepr + Copy {
    /// The C++ twin (`struct Name { ... };`).
    fn cpp() -> String;
}

/// The C++ spelling of a parameter field's type.
pub(crate) trait CppType {
    const CPP: &'static str;
}
impl CppType for Ptr {
    const CPP: &'static str = "void*";
}
impl CppType for u64 {
    const CPP: &'static str = "u64";
}
impl CppType for u32 {
    const CPP: &'static str = "u32";
}

/// Constants passed by value in a parameter struct: at most `WORDS`, else a kernel reads them
/// from device memory. Its C++ twin `ds::Words` and `ds::WORDS` are printed from these
/// (`Words::cpp`), before the parameter structs.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct Words(pub [u64; WORDS]);

/// The words of `Words` (`ds::WORDS`).
pub(crate) const WORDS: usize = 32;

impl Words {
    /// The C++ twin: `ds::WORDS` and `ds::Words`.
    pub fn cpp() -> String {
        format!(
            "namespace ds {{ constexpr int WORDS = {WORDS}; struct Words {{ u64 w[WORDS]; }}; }}\n"
        )
    }
}

impl Default for Words {
    fn default() -> Words {
        Words([0; WORDS])
    }
}
impl CppType for Words {
    const CPP: &'static str = "ds::Words";
}

/// Declares a kernel parameter struct (fields of type `Ptr`, `u64`, `u32` or `Words`) and its C++
/// twin of the same name, fields in the same order.
macro_rules! kernel_params {
    ($(#[$m:meta])* $name:ident { $($(#[$fm:meta])* $field:ident: $ty:ident),* $(,)? }) => {
        $(#[$m])*
        #[repr(C)]
        #[derive(Debug, Clone, Copy, Default)]
        pub(crate) struct $name {
            $($(#[$fm])* pub $field: $ty,)*
        }

        // SAFETY: a `repr(C)` struct of plain integers and addresses, laid out as the C++
        // struct that `cpp` prints (the same fields, types of the same size and alignment, in
        // the same order), which is the kernel's parameter.
        unsafe impl cudarc::driver::DeviceRepr for $name {}

        impl $crate::backend::cuda::launch::KernelParams for $name {
            fn cpp() -> String {
                let mut s = format!("struct {} {{", stringify!($name));
                $(
                    s.push_str(" ");
                    s.push_str(<$ty as $crate::backend::cuda::launch::CppType>::CPP);
                    s.push_str(concat!(" ", stringify!($field), ";"));
                )*
                s.push_str(" };\n");
                s
            }
        }
    };
}
pub(crate) use kernel_params;

/// A kernel with its sources bound, ready to launch with parameters `P`.
pub(crate) struct Bound<'a, P> {
    gpu: &'a Gpu,
    kernel: Arc<Kernel>,
    sources: Vec<SourceArgs>,
    /// Whether the kernel takes its parameter struct before its sources.
    params_first: bool,
    /// The constants of sources that have too many for their argument words, alive until the
    /// launches are queued.
    _spilled: Vec<Option<Buffer>>,
    _p: PhantomData<P>,
}

impl Gpu {
    /// The kernel of `key` reading `sources` (each with the vector width its kernel reads it
    /// in), compiled on first use, with the sources' arguments.
    pub fn kernel<K: Template>(
        &self,
        key: K,
        sources: &[(&Source, u32)],
    ) -> Result<Bound<'_, K::Params>> {
        self.kernel_with(key, sources, None)
    }

    /// As `kernel`, instantiated with the combiner `functor` (`ds_F`) where there is one.
    pub fn kernel_with<K: Template>(
        &self,
        key: K,
        sources: &[(&Source, u32)],
        functor: Option<Arc<CombinerShape>>,
    ) -> Result<Bound<'_, K::Params>> {
        let keys = sources
            .iter()
            .map(|(s, vec)| source::key(s, *vec))
            .collect::<Result<Vec<_>>>()?;
        let (args, spilled): (Vec<_>, Vec<_>) = sources
            .iter()
            .map(|(s, _)| source::args(self, s))
            .collect::<Result<Vec<_>>>()?
            .into_iter()
            .unzip();
        let kernel = self.jit.get(&KernelKey {
            functor,
            family: key.into(),
            sources: keys,
        })?;
        Ok(Bound {
            gpu: self,
            kernel,
            sources: args,
            params_first: K::PARAMS_FIRST,
            _spilled: spilled,
            _p: PhantomData,
        })
    }
}

impl Gpu {
    /// The kernel of `key` reading the stored columns `cols` (each its element type, the
    /// vector width it is aligned for, and the address of its element 0), held in `slot`
    /// after its first use, so that later launches build and look up no key (a copy: map.rs).
    /// A slot holds one kernel: a use with another key or other columns is an internal error.
    pub fn kernel_held<K: Template>(
        &self,
        slot: &OnceLock<HeldKernel>,
        key: K,
        cols: &[(ScalarType, u32, Ptr)],
    ) -> Result<Bound<'_, K::Params>> {
        let family = key.into();
        let held = match slot.get() {
            Some(h) => h,
            None => {
                let key = KernelKey {
                    functor: None,
                    family,
                    sources: cols
                        .iter()
                        .map(|&(ty, avec, _)| SourceKey::plain(ty, avec))
                        .collect(),
                };
                let kernel = self.jit.pin(&key)?;
                let _ = slot.set(HeldKernel { key, kernel });
                slot.get()
                    .ok_or_else(|| Error::Internal("a held kernel's slot is empty".into()))?
            }
        };
        let same = held.key.family == family
            && held.key.sources.len() == cols.len()
            && held
                .key
                .sources
                .iter()
                .zip(cols)
                .all(|(k, &(ty, avec, _))| *k == SourceKey::plain(ty, avec));
        if !same {
            return Err(Error::Internal(format!(
                "a held kernel's slot used for {family:?} of other sources"
            )));
        }
        Ok(Bound {
            gpu: self,
            kernel: held.kernel.current()?,
            sources: cols.iter().map(|&(_, _, p)| SourceArgs::plain(p)).collect(),
            params_first: K::PARAMS_FIRST,
            _spilled: Vec::new(),
            _p: PhantomData,
        })
    }
}

/// A kernel held for launches without a key lookup (`Gpu::kernel_held`), with its key.
pub(crate) struct HeldKernel {
    key: KernelKey,
    kernel: Pinned,
}

impl<P: KernelParams> Bound<'_, P> {
    /// Queues the kernel with `grid` blocks of `block` threads and `smem` bytes of dynamic
    /// shared memory a block. The kernel's limit on dynamic shared memory is raised to `smem`
    /// first (once for each larger size): static and dynamic shared memory together beyond 48
    /// KB need it, whichever part is the larger.
    pub fn launch(&self, grid: u64, block: u32, smem: u32, params: &P) -> Result<()> {
        self.queue(grid, block, smem, params, false)
    }

    /// As `launch`, cooperatively (`cuLaunchCooperativeKernel`): every block is resident at
    /// once, so blocks may wait for each other (`ds::grid_barrier`). `grid` must not exceed
    /// one wave of the kernel (`wave`), or the launch fails.
    pub fn launch_cooperative(&self, grid: u64, block: u32, params: &P) -> Result<()> {
        self.queue(grid, block, 0, params, true)
    }

    fn queue(&self, grid: u64, block: u32, smem: u32, params: &P, cooperative: bool) -> Result<()> {
        if grid == 0 {
            return Ok(());
        }
        if grid > i32::MAX as u64 {
            return Err(Error::InvalidArgument(format!(
                "a launch of {} with {grid} blocks exceeds the grid limit",
                self.kernel.name
            )));
        }
        if crate::fault::launch() {
            return Err(Error::Cuda(format!(
                "cuLaunchKernel: {}: an injected fault",
                self.kernel.name
            )));
        }
        let k = &self.kernel;
        if smem > 0 && k.smem_limit.load(Ordering::Relaxed) < smem {
            k.func
                .set_attribute(
                    sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    smem as i32,
                )
                .cuda("cuFuncSetAttribute")?;
            k.smem_limit.store(smem, Ordering::Relaxed);
        }
        let cfg = LaunchConfig {
            grid_dim: (grid as u32, 1, 1),
            block_dim: (block, 1, 1),
            shared_mem_bytes: smem,
        };
        // SAFETY: `Gpu::kernel` (or `kernel_held`, which checks its slot's key) compiled this
        // kernel from a key whose source keys and family were made from the same sources
        // (`self.sources`) and whose family's parameter struct is `P`: the template takes
        // exactly those sources, then a `P` (or a `P` first, as `params_first` says, from the
        // same family).
        unsafe {
            launch_raw(
                self.gpu,
                k,
                cfg,
                &self.sources,
                params,
                self.params_first,
                cooperative,
            )
        }
    }

    /// How many blocks of `block` threads fit on one multiprocessor.
    pub fn occupancy(&self, block: u32) -> Result<u32> {
        let k = &self.kernel;
        if let Some(&v) = k.occupancy.get() {
            return Ok(v);
        }
        let n = k
            .func
            .occupancy_max_active_blocks_per_multiprocessor(block, 0, None)
            .cuda("cuOccupancyMaxActiveBlocksPerMultiprocessor")?;
        let v = n.max(1);
        let _ = k.occupancy.set(v);
        Ok(v)
    }

    /// Blocks for a grid-stride kernel over `tiles` tiles: one full wave of the device, or
    /// fewer where there are fewer tiles. It follows the kernel's occupancy, which may differ
    /// between a kernel's quick and optimized forms (`jit.rs`), so only kernels whose results
    /// do not depend on the grid use it: element-wise ones, and exact combinations (counts).
    pub fn wave(&self, block: u32, tiles: u64) -> Result<u64> {
        let occ = self.occupancy(block)? as u64;
        Ok(tiles.min(self.gpu.arch.sms as u64 * occ).max(1))
    }
}

/// Queues `kernel` on the stream with the source arguments and then `params`.
///
/// # Safety
///
/// The kernel's parameters must be exactly one source struct for each of `sources`, of the
/// types that those arguments were made for (`source::key` and `source::args` of the same
/// sources), and then a `P` (a `P` first where `params_first`); every address in them must be valid for what the kernel does with
/// it until the kernel ends (buffers held by their sources, or by the caller until the work is
/// queued: buffers free themselves in stream order). A `cooperative` launch may not exceed one
/// wave of the kernel (the driver refuses it then, an error, not undefined behaviour).
unsafe fn launch_raw<P: KernelParams>(
    gpu: &Gpu,
    kernel: &Kernel,
    cfg: LaunchConfig,
    sources: &[SourceArgs],
    params: &P,
    params_first: bool,
    cooperative: bool,
) -> Result<()> {
    let mut b = gpu.stream.launch_builder(&kernel.func);
    if params_first {
        b.arg(params);
    }
    for s in sources {
        b.arg(s);
    }
    if !params_first {
        b.arg(params);
    }
    if cooperative {
        // SAFETY: as this function's caller promises; the arguments live until the launch
        // returns, and the driver copies them before then.
        unsafe { b.launch_cooperative(cfg) }.cuda("cuLaunchCooperativeKernel")?;
    } else {
        // SAFETY: as for the cooperative launch.
        unsafe { b.launch(cfg) }.cuda("cuLaunchKernel")?;
    }
    Ok(())
}
