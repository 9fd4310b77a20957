//! Interoperation with cudarc and users' kernels: devseq's stream, sequences copied out as
//! cudarc slices, the addresses of stored sequences, and users' CUDA C++ kernels compiled
//! through devseq's NVRTC path and caches.

use super::CudaBackend;
use super::map::materialize;
use super::mem::{Buffer, column_ptr};
use crate::error::{Error, Result};
use crate::item::ScalarType;
use crate::source::{Column, Source};
use cudarc::driver::{CudaFunction, CudaSlice, CudaStream};
use std::sync::Arc;

impl CudaBackend {
    /// The stream devseq queues this GPU's work on.
    pub fn stream(&self) -> Arc<CudaStream> {
        self.gpu.stream.clone()
    }

    /// The elements of `src` in a new allocation that the caller owns, as `T` (the source's
    /// element type), on devseq's stream.
    pub fn to_slice<T>(&self, src: &Source) -> Result<CudaSlice<T>> {
        let n = src.len;
        // A slice of no elements still owns an allocation (of one byte).
        let buf = if n == 0 {
            Buffer::new(&self.gpu.mem, 1)?
        } else {
            materialize(&self.gpu, src)?
        };
        buf.into_slice(n)
            .ok_or_else(|| Error::Internal("a buffer too small for its slice".into()))
    }

    /// A column of type `ty` over a caller's slice of `T` (no copy; devseq owns it now).
    pub fn adopt<T>(&self, slice: CudaSlice<T>, ty: ScalarType) -> Result<Column> {
        if slice.context().cu_ctx() != self.gpu.ctx.cu_ctx() {
            return Err(Error::DeviceMismatch);
        }
        let len = slice.len();
        Ok(Buffer::adopt(&self.gpu.mem, slice)?.into_column(ty, len))
    }

    /// The device address of the first element of a stored `src`.
    pub fn address(&self, src: &Source) -> Result<u64> {
        let c = src.as_column().ok_or_else(|| {
            Error::InvalidArgument("a lazy sequence has no address: copy() it first".into())
        })?;
        Ok(column_ptr(c)?.0)
    }

    /// The user's kernel `name` from `source`.
    pub fn compile(&self, name: &str, source: &str) -> Result<CudaFunction> {
        Ok(self.gpu.jit.user(name, source)?.func.clone())
    }
}
