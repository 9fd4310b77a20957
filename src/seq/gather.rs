//! `gather` and `scatter`, bounds-checked without waiting for the device.

use super::{DeviceSeq, length};
use crate::error::Result;
use crate::item::{Index, Item};

impl<T: Item> DeviceSeq<T> {
    /// `out[i] = self[indices[i]]`; `out.len() == indices.len()`.
    ///
    /// Bounds-checked at (nearly) no cost, and without a round trip: on a GPU the call queues
    /// the kernel and returns; the kernel notes a bad index in a word that the host reads when
    /// the result is first used (a primitive reads it, `to_vec`, `copy`, ...). A result with a
    /// bad index is never seen: every use of it is the error, and the inputs are intact. A
    /// result dropped unused reports nothing, and `dev.synchronize()` does not report it (it
    /// belongs to the result, not to the device, which threads may share).
    ///
    /// Cost: one read of the indices, one random read per index, one write of the output.
    ///
    /// # Errors
    ///
    /// `Error::IndexOutOfBounds { index, len }` for the index at the lowest position that is
    /// not below `self.len()`, from this call or (on a GPU) from the first use of the result;
    /// `Error::DeviceMismatch`; `Error::OutOfMemory`; `Error::Cuda`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq, Error};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[1.5f32, 2.5, 3.5])?;
    /// let idx = DeviceSeq::from_slice(&dev, &[2u32, 0, 2])?;
    /// assert_eq!(xs.gather(&idx)?.to_vec()?, [3.5, 1.5, 3.5]);
    /// let bad = DeviceSeq::from_slice(&dev, &[0u64, 3])?;
    /// // The error comes from the gather (host) or from the first use of its result (GPU).
    /// let got = xs.gather(&bad).and_then(|ys| ys.to_vec());
    /// assert!(matches!(got, Err(Error::IndexOutOfBounds { index: 3, len: 3 })));
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn gather<I: Index>(&self, indices: &DeviceSeq<I>) -> Result<Self> {
        self.same_device(indices)?;
        let b = self.device().backend();
        let cols = self
            .sources()
            .iter()
            .map(|s| b.gather(s, indices.source()))
            .collect::<Result<Vec<_>>>()?;
        Ok(Self::stored_columns(self.device(), cols))
    }
    /// `base` with `out[indices[i]] = self[i]`; where indices repeat, one of their values
    /// lands (which is unspecified).
    ///
    /// Bounds-checked as [`gather`](Self::gather).
    ///
    /// Cost: a copy of `base`, one read of the values and indices, one random write per value.
    ///
    /// # Errors
    ///
    /// `Error::LengthMismatch` where `indices` and `self` differ in length;
    /// `Error::IndexOutOfBounds`, from this call or from the first use of the result, as for
    /// [`gather`](Self::gather) (`base` intact); `Error::DeviceMismatch`;
    /// `Error::OutOfMemory`; `Error::Cuda`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let vals = DeviceSeq::from_slice(&dev, &[7u8, 9])?;
    /// let idx = DeviceSeq::from_slice(&dev, &[3u32, 0])?;
    /// let base = DeviceSeq::filled(&dev, 0u8, 5)?;
    /// assert_eq!(vals.scatter(&idx, &base)?.to_vec()?, [9, 0, 0, 7, 0]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn scatter<I: Index>(&self, indices: &DeviceSeq<I>, base: &DeviceSeq<T>) -> Result<Self> {
        self.same_device(indices)?;
        self.same_device(base)?;
        length(self.len(), indices.len())?;
        let b = self.device().backend();
        let cols = self
            .sources()
            .iter()
            .zip(base.sources())
            .map(|(s, base)| b.scatter(s, indices.source(), base))
            .collect::<Result<Vec<_>>>()?;
        Ok(Self::stored_columns(self.device(), cols))
    }
}
