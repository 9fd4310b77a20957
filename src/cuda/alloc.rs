//! Device memory: stream-ordered allocations from the device's default pool, and page-locked
//! host memory for small read-backs.

use super::{Gpu, check};
use crate::error::{Error, Result};
use cudarc::driver::sys;
use std::ffi::c_void;
use std::sync::Arc;

/// A device address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

/// Allocates `bytes` in stream order; `Error::OutOfMemory` where the device has no room.
fn alloc_async(bytes: usize, stream: sys::CUstream) -> Result<u64> {
    let mut ptr = 0u64;
    // SAFETY: writes one device address; the caller's context is current.
    let r = unsafe { sys::cuMemAllocAsync(&mut ptr, bytes, stream) };
    match r {
        sys::CUresult::CUDA_SUCCESS => Ok(ptr),
        sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY => Err(Error::OutOfMemory { bytes }),
        _ => check(r, "cuMemAllocAsync").map(|_| 0),
    }
}

/// An allocation owned by the `Gpu` itself (counters, status words), freed explicitly.
pub(crate) struct Raw {
    pub ptr: u64,
    pub bytes: usize,
}

impl Raw {
    /// `bytes` of zeroed device memory (queued on `stream`).
    pub fn zeroed(bytes: usize, stream: sys::CUstream) -> Result<Raw> {
        let ptr = alloc_async(bytes, stream)?;
        // SAFETY: the allocation holds `bytes` bytes.
        check(
            unsafe { sys::cuMemsetD8Async(ptr, 0, bytes, stream) },
            "cuMemsetD8Async",
        )?;
        Ok(Raw { ptr, bytes })
    }

    /// Frees the allocation after the work queued on `stream` so far.
    pub fn free(self, stream: sys::CUstream) {
        self.free_ref(stream)
    }

    /// As `free`, for an owner being dropped.
    pub fn free_ref(&self, stream: sys::CUstream) {
        // SAFETY: the address came from `cuMemAllocAsync` and is freed once, by its owner.
        unsafe { sys::cuMemFreeAsync(self.ptr, stream) };
    }
}

/// A device allocation that frees itself, in stream order, when the last sequence or temporary
/// using it is dropped. The kernels queued before the free still see valid memory.
pub(crate) struct Buffer {
    gpu: Arc<Gpu>,
    ptr: u64,
    bytes: usize,
}

impl Buffer {
    /// `bytes` of uninitialized device memory. Out of memory, the pool is trimmed and the
    /// allocation tried once more before `Error::OutOfMemory`.
    pub fn new(gpu: &Arc<Gpu>, bytes: usize) -> Result<Buffer> {
        if bytes == 0 {
            return Ok(Buffer {
                gpu: gpu.clone(),
                ptr: 0,
                bytes: 0,
            });
        }
        gpu.bind()?;
        let ptr = match alloc_async(bytes, gpu.stream) {
            Err(Error::OutOfMemory { .. }) => {
                // Memory freed by this stream's finished work (or other streams') may be held
                // by the pool; give it back to the device and try again.
                gpu.synchronize()?;
                gpu.trim_pool()?;
                alloc_async(bytes, gpu.stream)?
            }
            r => r?,
        };
        Ok(Buffer {
            gpu: gpu.clone(),
            ptr,
            bytes,
        })
    }

    /// The start address.
    pub fn ptr(&self) -> Ptr {
        Ptr(self.ptr)
    }

    /// The GPU (and stream) the buffer belongs to.
    pub fn gpu(&self) -> &Arc<Gpu> {
        &self.gpu
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        if self.bytes == 0 {
            return;
        }
        if self.gpu.bind().is_ok() {
            // SAFETY: the address came from `cuMemAllocAsync` on this stream and is freed once;
            // work queued earlier that reads or writes it completes before the free.
            unsafe { sys::cuMemFreeAsync(self.ptr, self.gpu.stream) };
        }
    }
}

impl Gpu {
    /// Returns the pool's unused memory to the device.
    pub fn trim_pool(&self) -> Result<()> {
        // SAFETY: the pool is the device's default pool, valid while the context lives.
        check(
            unsafe { sys::cuMemPoolTrimTo(self.pool, 0) },
            "cuMemPoolTrimTo",
        )
    }
}

/// Page-locked host memory.
pub(crate) struct Pinned {
    pub ptr: *mut c_void,
    pub bytes: usize,
}

// SAFETY: plain host memory; every use is behind the owner's mutex.
unsafe impl Send for Pinned {}

impl Pinned {
    /// `bytes` of page-locked host memory (a context must be current).
    pub fn new(bytes: usize) -> Result<Pinned> {
        let mut ptr = std::ptr::null_mut();
        // SAFETY: writes one host pointer.
        check(
            unsafe { sys::cuMemAllocHost_v2(&mut ptr, bytes) },
            "cuMemAllocHost",
        )?;
        Ok(Pinned { ptr, bytes })
    }

    /// Frees the memory now (the context must still exist).
    pub fn free(&mut self) {
        if !self.ptr.is_null() {
            // SAFETY: allocated by `cuMemAllocHost` and freed once.
            unsafe { sys::cuMemFreeHost(self.ptr) };
            self.ptr = std::ptr::null_mut();
            self.bytes = 0;
        }
    }
}
