//! `scatter_combine`: values combined into slots, deterministically.

use super::{DeviceSeq, length};
use crate::error::Result;
use crate::item::{Element, Index};
use crate::op::Op;

impl<T: Element> DeviceSeq<T> {
    /// `base` with every `self[i]` combined into `out[indices[i]]` by `op`, for any number of
    /// repeats: the values for one slot are combined in ascending order of `i`, then with the
    /// base value.
    ///
    /// Deterministic, floats included: built on a stable sort of (index, value) on the bits
    /// the indices need and a segmented reduction of each run, not on atomics.
    ///
    /// Cost: the sort (one histogram pass, then per 8 index bits one read and one write of
    /// index and value), one read of the sorted pairs, one write per distinct index, and a
    /// copy of `base`. On a GPU, up to one tile of values (2048 to 4096 by type) is sorted and
    /// combined by one block in one launch. The call does not wait for the bounds check: as for
    /// [`gather`](Self::gather), an index out of range is reported by the first use of the
    /// result.
    ///
    /// # Errors
    ///
    /// `Error::LengthMismatch`; `Error::IndexOutOfBounds`, from this call or from the first
    /// use of the result (`base` intact);
    /// `Error::UnsupportedOp`; `Error::DeviceMismatch`; `Error::OutOfMemory`; `Error::Cuda`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq, Op};
    /// let dev = Device::auto()?;
    /// let vals = DeviceSeq::from_slice(&dev, &[1.0f32, 2.0, 3.0, 4.0])?;
    /// let idx = DeviceSeq::from_slice(&dev, &[2u32, 0, 2, 2])?;
    /// let base = DeviceSeq::filled(&dev, 10.0f32, 3)?;
    /// assert_eq!(vals.scatter_combine(&idx, &base, Op::Add)?.to_vec()?, [12.0, 10.0, 18.0]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn scatter_combine<I: Index>(
        &self,
        indices: &DeviceSeq<I>,
        base: &DeviceSeq<T>,
        op: Op,
    ) -> Result<Self> {
        op.check::<T>()?;
        self.same_device(indices)?;
        self.same_device(base)?;
        length(self.len(), indices.len())?;
        let b = self.device().backend();
        let col = b.scatter_combine(self.source(), indices.source(), base.source(), op)?;
        Ok(Self::stored(self.device(), col))
    }
}
