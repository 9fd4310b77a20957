//! Stream compaction: `compact` and `nonzero_indices`.

use super::{DeviceSeq, index_width, length};
use crate::error::Result;
use crate::item::{Flag, Index, Item};

impl<T: Item> DeviceSeq<T> {
    /// The elements whose flag is true (a `bool`, or a nonzero `u8`), in order (stream
    /// compaction).
    ///
    /// Cost: one fused pass (the flags scanned and each kept element written in the same
    /// kernel); waits for the count. On a GPU the result stays in the kernel's storage of
    /// `len` elements unless fewer than `len / 16` are kept, when it moves to storage of its
    /// own size (`copy()` gives any result storage of its own size).
    ///
    /// # Errors
    ///
    /// `Error::LengthMismatch`; `Error::DeviceMismatch`; `Error::OutOfMemory`; `Error::Cuda`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[10i16, 11, 12, 13])?;
    /// let keep = DeviceSeq::from_slice(&dev, &[0u8, 1, 0, 3])?;
    /// assert_eq!(xs.compact(&keep)?.to_vec()?, [11, 13]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn compact<F: Flag>(&self, flags: &DeviceSeq<F>) -> Result<Self> {
        self.same_device(flags)?;
        length(self.len(), flags.len())?;
        let flags = flags.flags_u8()?;
        let b = self.device().backend();
        let cols = self
            .sources()
            .iter()
            .map(|s| b.compact(s, flags.source()))
            .collect::<Result<Vec<_>>>()?;
        Ok(Self::stored_columns(self.device(), cols))
    }
}

impl<F: Flag> DeviceSeq<F> {
    /// The positions whose flag is true (nonzero), in order, as indices of type `I` (as
    /// `numpy.flatnonzero`): `DeviceSeq::sequence(..).compact(flags)` without reading a
    /// sequence of positions.
    ///
    /// Cost: one fused pass over the flags; waits for the count.
    ///
    /// # Errors
    ///
    /// `Error::InvalidArgument` where `I` cannot index every element; `Error::OutOfMemory`;
    /// `Error::Cuda`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let flags = DeviceSeq::from_slice(&dev, &[0u8, 1, 1, 0, 5])?;
    /// assert_eq!(flags.nonzero_indices::<u32>()?.to_vec()?, [1, 2, 4]);
    /// let odd = DeviceSeq::<u32>::sequence(&dev, 6)?.map(|i| (i % 2).eq(1))?;
    /// assert_eq!(odd.nonzero_indices::<u64>()?.to_vec()?, [1, 3, 5]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn nonzero_indices<I: Index>(&self) -> Result<DeviceSeq<I>> {
        index_width(I::TYPE.size(), self.len())?;
        DeviceSeq::<I>::sequence(self.device(), self.len())?.compact(self)
    }
}
