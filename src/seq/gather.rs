//! `gather` and `scatter`, bounds-checked without waiting for the device.

use super::{DeviceSeq, length};
use crate::error::Result;
use crate::item::{Index, Item};

impl<T: Item> DeviceSeq<T> {
    /// `gather` stored at once, checked without waiting: on a GPU the kernel notes a bad
    /// index in a word that the result's first use reads (for devseq's own steps, whose
    /// indices are valid by construction and whose gathers are read more than once).
    pub(crate) fn gather_stored<I: Index>(&self, indices: &DeviceSeq<I>) -> Result<Self> {
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
    /// lands (which is unspecified, and on a GPU may differ from run to run: the one exception
    /// to the crate's determinism; [`scatter_combine`](Self::scatter_combine) combines them
    /// in a defined order, and `scatter_combine_with(indices, base, |_, later| later)` lands
    /// the value of the highest position, on every run and device).
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
    /// // Repeated indices, the last value landing (deterministic):
    /// let vals = DeviceSeq::from_slice(&dev, &[7u8, 9, 4, 1])?;
    /// let idx = DeviceSeq::from_slice(&dev, &[3u32, 0, 3, 0])?;
    /// let last = vals.scatter_combine_with(&idx, &base, |_, later| later)?;
    /// assert_eq!(last.to_vec()?, [1, 0, 0, 4, 0]);
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

    /// `out[indices[i]] = self[i]` in place: `out` keeps its other elements (Thrust's
    /// `scatter` into an output range, NumPy's `out[indices] = seq`); where indices repeat, one
    /// of their values lands (which is unspecified, and on a GPU may differ from run to run;
    /// see [`scatter`](Self::scatter) for a deterministic choice).
    ///
    /// Where `out` is stored and no other sequence shares its memory (no clone, slice or lazy
    /// sequence over it), the values are written into that memory and nothing is copied. Else
    /// `out` becomes a new sequence, as `*out = self.scatter(indices, out)?` makes it;
    /// sequences that shared `out`'s memory keep their elements either way.
    ///
    /// Cost: in place, one read of the values and indices and one random write per value;
    /// else that of [`scatter`](Self::scatter), which copies `out` first.
    ///
    /// # Errors
    ///
    /// `Error::LengthMismatch` where `indices` and `self` differ in length, and
    /// `Error::DeviceMismatch`: `out` untouched. `Error::IndexOutOfBounds` for an index not
    /// below `out.len()`, from this call or (on a GPU) from the first use of `out` after it, as
    /// for [`gather`](Self::gather); `self` and `indices` stay intact. Where the call returns
    /// it, `out` keeps its elements (the host checks every index before it writes), except
    /// after writes into its own memory on a GPU, where it holds the error instead; where the
    /// first use of `out` returns it, so does every later use. `Error::OutOfMemory`;
    /// `Error::Cuda`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let mut out = DeviceSeq::from_slice(&dev, &[0u16; 5])?;
    /// let vals = DeviceSeq::from_slice(&dev, &[7u16, 9])?;
    /// vals.scatter_into(&DeviceSeq::from_slice(&dev, &[3u32, 0])?, &mut out)?;
    /// vals.scatter_into(&DeviceSeq::from_slice(&dev, &[1u32, 4])?, &mut out)?;
    /// assert_eq!(out.to_vec()?, [9, 7, 0, 7, 9]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn scatter_into<I: Index>(
        &self,
        indices: &DeviceSeq<I>,
        out: &mut DeviceSeq<T>,
    ) -> Result<()> {
        self.same_device(indices)?;
        self.same_device(out)?;
        length(self.len(), indices.len())?;
        let b = self.device().backend();
        // Sources of `out` that another sequence holds are cloned first: the backend then sees
        // their memory shared and writes into a new column.
        let comps = std::sync::Arc::make_mut(&mut out.comps);
        for (s, o) in self.sources().iter().zip(comps.iter_mut()) {
            b.scatter_into(s, indices.source(), o)?;
        }
        Ok(())
    }
}
