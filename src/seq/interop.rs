//! Sequences as cudarc memory: a `CudaSlice` taken in without a copy, a copy out as a
//! `CudaSlice` or into host memory the caller keeps (page-locked, for speed), and a stored
//! sequence's address for a user's kernel.

use super::DeviceSeq;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::item::Element;
use cudarc::driver::CudaSlice;

impl<T: Element> DeviceSeq<T> {
    /// A stored sequence over the memory of a cudarc slice, with no copy: devseq owns the
    /// memory from now on and frees it, in order on its stream, when the last sequence using
    /// it is dropped. The slice must live on `dev`'s GPU (cudarc's `CudaContext` for the same
    /// device). Devseq's stream waits for the work queued on the slice's stream before it
    /// reads the elements, so a slice written on another stream needs no synchronization.
    ///
    /// # Errors
    ///
    /// `Error::NoCuda` on the host; `Error::DeviceMismatch` for a slice of another GPU;
    /// `Error::Cuda` where the streams cannot be ordered. The slice is consumed either way.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq, Op};
    /// let dev = Device::auto()?;
    /// if let Some(stream) = dev.cuda_stream() {
    ///     let slice = stream.clone_htod(&[3u32, 1, 2]).unwrap();
    ///     let xs = DeviceSeq::from_cuda_slice(&dev, slice)?;
    ///     assert_eq!(xs.sort()?.to_vec()?, [1, 2, 3]);
    ///     assert_eq!(xs.reduce(Op::Add)?, 6);
    /// }
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn from_cuda_slice(dev: &Device, slice: CudaSlice<T>) -> Result<Self> {
        match dev.backend().cuda() {
            Some(c) => Ok(Self::stored(dev, c.adopt(slice, T::TYPE)?)),
            None => Err(Error::NoCuda(format!(
                "from_cuda_slice needs a GPU device, not {}",
                dev.name()
            ))),
        }
    }

    /// Copies the elements into `out` (waits for the work that produces them; a lazy
    /// sequence is evaluated on the device first): [`to_vec`](Self::to_vec) into memory the
    /// caller keeps. Into page-locked memory (cudarc's `PinnedHostSlice`, through its
    /// `as_mut_slice`) the driver copies straight from the device; into ordinary memory it
    /// stages the bytes through a buffer of its own, which is slower for large copies.
    ///
    /// # Errors
    ///
    /// `Error::LengthMismatch` unless `out.len() == self.len()` (`out` untouched);
    /// `Error::Cuda`; `Error::OutOfMemory`; `Error::Compile`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let mut out = [0u16; 4];
    /// DeviceSeq::<u16>::sequence(&dev, 4)?.map(|i| i * 3)?.to_vec_into(&mut out)?;
    /// assert_eq!(out, [0, 3, 6, 9]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn to_vec_into(&self, out: &mut [T]) -> Result<()> {
        if out.len() != self.len() {
            return Err(Error::LengthMismatch {
                expected: self.len(),
                actual: out.len(),
            });
        }
        let b = self.device().backend();
        match T::stored_mut(out) {
            Some(bytes) => b.download(self.source(), bytes),
            None => {
                let mut bytes = vec![0u8; out.len() * T::TYPE.size()];
                b.download(self.source(), &mut bytes)?;
                T::from_stored(&bytes, out);
                Ok(())
            }
        }
    }

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
