//! Kernel launches. A kernel takes its sources by value (one parameter each, the structs
//! `source.rs` describes) and then one parameter struct of its family (`params.rs`). The one
//! unsafe launch (`launch_raw`) is reached only through `Bound::launch`, whose kernel, sources
//! and parameter type come from the same key.

use super::driver::DriverResult;
use super::gpu::Gpu;
use super::jit::{HeldKernel, Kernel};
use super::key::{KernelKey, Template};
use super::mem::{Buffer, Ptr};
use super::params::KernelParams;
use super::single_pass::{PassSlots, Status};
use super::source::{self, SourceArgs, SourceKey};
use super::tuning;
use crate::error::{Error, Result};
use crate::expr::combiner::CombinerShape;
use crate::item::ScalarType;
use crate::source::Source;
use cudarc::driver::{LaunchConfig, PushKernelArg, sys};
use std::marker::PhantomData;
use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};

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
            .map(|(s, _)| source::args(&self.mem, s))
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

impl<P: KernelParams> Bound<'_, P> {
    /// Launches a single-pass kernel over scan slots: `tiles` blocks of `block` threads with
    /// `smem` bytes of dynamic shared memory each, its parameters made by `params` from the
    /// reservation.
    pub fn launch_single_pass(
        &self,
        tiles: u64,
        block: u32,
        smem: u32,
        params: impl FnOnce(&PassSlots) -> P,
    ) -> Result<()> {
        if tiles == 0 {
            return Ok(());
        }
        if tiles > u32::MAX as u64 {
            return Err(Error::InvalidArgument(format!(
                "{tiles} tiles are more than a single-pass launch numbers"
            )));
        }
        // An aggregate slot and an inclusive-prefix slot a tile.
        let status = 2 * tiles as usize * tuning::SLOT_BYTES;
        self.gpu.passes.reserve(Status::Scan, tiles, status, |s| {
            self.launch(tiles, block, smem, &params(s))
        })
    }

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
