//! Sequences as cudarc memory: a copy out as a `CudaSlice`, and a stored sequence's address
//! for a user's kernel.

use super::DeviceSeq;
use crate::error::{Error, Result};
use crate::item::Element;
use cudarc::driver::CudaSlice;

impl<T: Element> DeviceSeq<T> {
    /// The elements in a new device allocation that the caller owns (a lazy sequence is
    /// computed into it), as a cudarc slice on the device's stream
    /// ([`Device::cuda_stream`](crate::Device::cuda_stream)), which frees it when dropped.
    ///
    /// # Errors
    ///
    /// `Error::NoCuda` on the host; `Error::OutOfMemory`; `Error::Cuda`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::<u32>::sequence(&dev, 5)?.map(|i| i * i)?;
    /// match (xs.to_cuda_slice(), dev.cuda_stream()) {
    ///     (Ok(slice), Some(stream)) => {
    ///         assert_eq!(stream.clone_dtoh(&slice).unwrap(), [0, 1, 4, 9, 16]);
    ///     }
    ///     (r, _) => assert!(r.is_err() && !dev.is_cuda()),
    /// }
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn to_cuda_slice(&self) -> Result<CudaSlice<T>> {
        match self.device().backend().cuda() {
            Some(c) => c.to_slice(self.source()),
            None => Err(Error::NoCuda(
                "to_cuda_slice needs a sequence on a GPU device".into(),
            )),
        }
    }

    /// The device address of the first element of a stored sequence (a view's first
    /// element), valid while the sequence (or anything sharing its memory) lives, for a
    /// user's kernel ([`Device::compile`](crate::Device::compile)) queued on the device's
    /// stream. Writing through it changes every sequence that shares the memory.
    ///
    /// # Errors
    ///
    /// `Error::InvalidArgument` for a lazy sequence (`copy()` it first); `Error::NoCuda` on
    /// the host.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[1u64, 2, 3])?;
    /// if dev.is_cuda() {
    ///     let p = xs.device_ptr()?;
    ///     assert_eq!(xs.slice(1..).device_ptr()?, p + 8);
    ///     assert!(xs.map(|x| x + 1)?.device_ptr().is_err()); // lazy: no memory
    /// } else {
    ///     assert!(xs.device_ptr().is_err());
    /// }
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn device_ptr(&self) -> Result<u64> {
        match self.device().backend().cuda() {
            Some(c) => c.address(self.source()),
            None => Err(Error::NoCuda(
                "device_ptr needs a sequence on a GPU device".into(),
            )),
        }
    }
}
