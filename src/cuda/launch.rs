//! Kernel launches.

use super::jit::Kernel;
use super::{Gpu, Ptr, check};
use crate::error::{Error, Result};
use cudarc::driver::sys;
use std::ffi::c_void;
use std::sync::atomic::Ordering;

/// Kernel arguments, each in an 8-byte slot. The driver copies as many bytes from a slot as
/// the kernel's parameter has, so a `u32` parameter reads the low half (little-endian).
pub(crate) struct Args {
    slots: [u64; 24],
    n: usize,
}

impl Args {
    pub fn new() -> Self {
        Args {
            slots: [0; 24],
            n: 0,
        }
    }

    fn push(mut self, v: u64) -> Self {
        // 24 slots are more than any kernel of the crate takes.
        if self.n < self.slots.len() {
            self.slots[self.n] = v;
        }
        self.n += 1;
        self
    }

    /// A device pointer.
    pub fn ptr(self, p: Ptr) -> Self {
        self.push(p.0)
    }

    /// A 64-bit integer (sizes, offsets, element bits).
    pub fn u64(self, v: u64) -> Self {
        self.push(v)
    }

    /// A 32-bit integer.
    pub fn u32(self, v: u32) -> Self {
        self.push(v as u64)
    }
}

impl Gpu {
    /// Queues `kernel` on this stream with `grid` blocks of `block` threads.
    pub fn launch(&self, kernel: &Kernel, grid: u64, block: u32, args: Args) -> Result<()> {
        self.launch_smem(kernel, grid, block, 0, args)
    }

    /// As `launch`, with `smem` bytes of dynamic shared memory a block. The kernel's limit on
    /// dynamic shared memory is raised to `smem` first (once for each larger size): static and
    /// dynamic shared memory together beyond 48 KB need it, whichever part is the larger.
    pub fn launch_smem(
        &self,
        kernel: &Kernel,
        grid: u64,
        block: u32,
        smem: u32,
        args: Args,
    ) -> Result<()> {
        if grid == 0 {
            return Ok(());
        }
        if grid > i32::MAX as u64 || args.n > args.slots.len() {
            return Err(Error::InvalidArgument(format!(
                "launch of {} with {grid} blocks and {} arguments exceeds the limits",
                kernel.name, args.n
            )));
        }
        self.bind()?;
        if smem > 0 && kernel.smem_limit.load(Ordering::Relaxed) < smem {
            // SAFETY: a valid function of this context; the attribute takes an int.
            check(
                unsafe {
                    sys::cuFuncSetAttribute(
                        kernel.func,
                        sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                        smem as i32,
                    )
                },
                "cuFuncSetAttribute",
            )?;
            kernel.smem_limit.store(smem, Ordering::Relaxed);
        }
        let mut slots = args.slots;
        let mut params: Vec<*mut c_void> = slots[..args.n]
            .iter_mut()
            .map(|s| s as *mut u64 as *mut c_void)
            .collect();
        // SAFETY: `kernel` was compiled for this context; its parameter list is the one the
        // caller's module declares, each at most 8 bytes and given in order (each family's
        // launcher passes exactly the parameters of its template); `params` outlives the call
        // (the driver copies the values before returning).
        check(
            unsafe {
                sys::cuLaunchKernel(
                    kernel.func,
                    grid as u32,
                    1,
                    1,
                    block,
                    1,
                    1,
                    smem,
                    self.stream,
                    params.as_mut_ptr(),
                    std::ptr::null_mut(),
                )
            },
            "cuLaunchKernel",
        )
    }

    /// How many blocks of `block` threads of `kernel` fit on one multiprocessor.
    pub fn occupancy(&self, kernel: &Kernel, block: u32) -> Result<u32> {
        if let Some(&v) = kernel.occupancy.get() {
            return Ok(v);
        }
        self.bind()?;
        let mut n = 0;
        // SAFETY: valid function of this context; writes one int.
        check(
            unsafe {
                sys::cuOccupancyMaxActiveBlocksPerMultiprocessor(
                    &mut n,
                    kernel.func,
                    block as i32,
                    0,
                )
            },
            "cuOccupancyMaxActiveBlocksPerMultiprocessor",
        )?;
        let v = n.max(1) as u32;
        let _ = kernel.occupancy.set(v);
        Ok(v)
    }

    /// Blocks for a grid-stride kernel over `tiles` tiles: one full wave of the device, or
    /// fewer where there are fewer tiles. Fixed for a given size and device, so kernels that
    /// combine per block stay deterministic.
    pub fn wave(&self, kernel: &Kernel, block: u32, tiles: u64) -> Result<u64> {
        let occ = self.occupancy(kernel, block)? as u64;
        Ok(tiles.min(self.sms as u64 * occ).max(1))
    }
}
