//! Reading and writing single elements and ranges: `get`, `first`, `last`, `set`, `write_at`,
//! `fill_range`, `scatter_if`. The writes are `scatter_into` with positions computed, not
//! stored (a lazy `offset + i`), so they share its copy-on-write: in place where nothing else
//! holds the memory, else into a copy.

use super::DeviceSeq;
use crate::error::{Error, Result};
use crate::item::{Flag, Index, Item};
use std::ops::{Bound, RangeBounds};

/// `range` within `0..len` as `start..end`, or `None` where it reaches outside.
pub(super) fn within(range: &impl RangeBounds<usize>, len: usize) -> Option<(usize, usize)> {
    let start = match range.start_bound() {
        Bound::Included(&s) => s,
        Bound::Excluded(&s) => s.checked_add(1)?,
        Bound::Unbounded => 0,
    };
    let end = match range.end_bound() {
        Bound::Included(&e) => e.checked_add(1)?,
        Bound::Excluded(&e) => e,
        Bound::Unbounded => len,
    };
    (start <= end && end <= len).then_some((start, end))
}

impl<T: Item> DeviceSeq<T> {
    /// `Err(IndexOutOfBounds)` where `i >= len()`.
    fn check_index(&self, i: usize) -> Result<()> {
        if i < self.len() {
            return Ok(());
        }
        Err(Error::IndexOutOfBounds {
            index: i as u64,
            len: self.len(),
        })
    }

    /// Element `i` (of a lazy sequence, only that element is computed).
    ///
    /// Cost: a copy of one item to the host; waits for it.
    ///
    /// # Errors
    ///
    /// `Error::IndexOutOfBounds` where `i >= len()`; `Error::Cuda`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq, Error};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::<u32>::sequence(&dev, 10)?.map(|i| i * i)?;
    /// assert_eq!(xs.get(7)?, 49);
    /// assert!(matches!(xs.get(10), Err(Error::IndexOutOfBounds { index: 10, len: 10 })));
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn get(&self, i: usize) -> Result<T> {
        self.check_index(i)?;
        let one = self.slice(i..i + 1).to_vec()?;
        Ok(one[0])
    }

    /// The first element, `None` when empty.
    ///
    /// # Errors
    ///
    /// `Error::Cuda`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[(1u8, 2.5f32), (3, 4.5)])?;
    /// assert_eq!(xs.first()?, Some((1, 2.5)));
    /// assert_eq!(xs.slice(..0).first()?, None);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn first(&self) -> Result<Option<T>> {
        if self.is_empty() {
            return Ok(None);
        }
        self.get(0).map(Some)
    }

    /// The last element, `None` when empty.
    ///
    /// # Errors
    ///
    /// `Error::Cuda`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::<i64>::sequence(&dev, 5)?;
    /// assert_eq!(xs.last()?, Some(4));
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn last(&self) -> Result<Option<T>> {
        match self.len() {
            0 => Ok(None),
            n => self.get(n - 1).map(Some),
        }
    }

    /// `self[i] = v`, in place where nothing else shares the memory, else into a copy (other
    /// clones and views keep their elements), as [`scatter_into`](Self::scatter_into).
    ///
    /// Cost: one small copy to the device and one write; a copy of the sequence where its
    /// memory is shared or it is lazy.
    ///
    /// # Errors
    ///
    /// `Error::IndexOutOfBounds` where `i >= len()` (nothing written); `Error::OutOfMemory`;
    /// `Error::Cuda`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let mut xs = DeviceSeq::from_slice(&dev, &[1.0f32, 2.0, 3.0])?;
    /// let before = xs.clone();
    /// xs.set(1, -5.0)?;
    /// assert_eq!(xs.to_vec()?, [1.0, -5.0, 3.0]);
    /// assert_eq!(before.to_vec()?, [1.0, 2.0, 3.0]); // the clone keeps its elements
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn set(&mut self, i: usize, v: T) -> Result<()> {
        self.check_index(i)?;
        self.write_at(i, &DeviceSeq::from_slice(self.device(), &[v])?)
    }

    /// `self[offset + i] = src[i]` for every element of `src` (Thrust's `copy` into an output
    /// range), in place where nothing else shares the memory, else into a copy, as
    /// [`scatter_into`](Self::scatter_into). `src` may be lazy (computed as it is written).
    ///
    /// Cost: one read of `src`, one write of its length.
    ///
    /// # Errors
    ///
    /// `Error::InvalidArgument` where `offset + src.len() > self.len()` (nothing written);
    /// `Error::DeviceMismatch`; `Error::OutOfMemory`; `Error::Cuda`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let mut xs = DeviceSeq::filled(&dev, 0u16, 6)?.copy()?;
    /// xs.write_at(2, &DeviceSeq::<u16>::sequence(&dev, 3)?.map(|i| i + 7)?)?;
    /// assert_eq!(xs.to_vec()?, [0, 0, 7, 8, 9, 0]);
    /// assert!(xs.write_at(5, &DeviceSeq::filled(&dev, 1u16, 2)?).is_err());
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn write_at(&mut self, offset: usize, src: &DeviceSeq<T>) -> Result<()> {
        self.same_device(src)?;
        if offset
            .checked_add(src.len())
            .is_none_or(|end| end > self.len())
        {
            return Err(Error::InvalidArgument(format!(
                "write_at({offset}) of {} elements into a sequence of {}",
                src.len(),
                self.len()
            )));
        }
        if src.is_empty() {
            return Ok(());
        }
        let at = DeviceSeq::<u64>::sequence(self.device(), src.len())?;
        let at = at.map(|i| i + offset as u64)?;
        src.scatter_into(&at, self)
    }

    /// `self[i] = value` for every `i` in `range` (Thrust's `fill` of a range), in place where
    /// nothing else shares the memory, else into a copy.
    ///
    /// Cost: one write of the range's length.
    ///
    /// # Errors
    ///
    /// `Error::InvalidArgument` for a range that reaches outside `0..len()` (nothing
    /// written); `Error::OutOfMemory`; `Error::Cuda`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let mut xs = DeviceSeq::<i32>::sequence(&dev, 6)?.copy()?;
    /// xs.fill_range(1..=3, -1)?;
    /// assert_eq!(xs.to_vec()?, [0, -1, -1, -1, 4, 5]);
    /// assert!(xs.fill_range(4..9, 0).is_err());
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn fill_range(&mut self, range: impl RangeBounds<usize>, value: T) -> Result<()> {
        let Some((start, end)) = within(&range, self.len()) else {
            return Err(Error::InvalidArgument(format!(
                "fill_range({:?}..{:?}) of a sequence of {}",
                range.start_bound(),
                range.end_bound(),
                self.len()
            )));
        };
        let fill = DeviceSeq::filled(self.device(), value, end - start)?;
        self.write_at(start, &fill)
    }

    /// `out[indices[i]] = self[i]` for every `i` whose `stencil[i]` is true (nonzero for `u8`
    /// flags): Thrust's `scatter_if`. Only the chosen elements' indices are checked. In place
    /// where nothing else shares `out`'s memory, as [`scatter_into`](Self::scatter_into).
    ///
    /// Cost: the chosen values and indices compacted (a read of the three inputs), then
    /// scattered.
    ///
    /// # Errors
    ///
    /// `Error::LengthMismatch` where `indices` or `stencil` differ in length from `self`;
    /// `Error::IndexOutOfBounds` for a chosen index not below `out.len()`, as for
    /// [`scatter_into`](Self::scatter_into); `Error::DeviceMismatch`; `Error::OutOfMemory`;
    /// `Error::Cuda`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let vals = DeviceSeq::from_slice(&dev, &[10u32, 20, 30, 40])?;
    /// let idx = DeviceSeq::from_slice(&dev, &[0u32, 99, 2, 1])?; // 99 is not chosen
    /// let keep = vals.map(|v| v.ne(20u32))?;
    /// let mut out = DeviceSeq::filled(&dev, 0u32, 4)?.copy()?;
    /// vals.scatter_if(&idx, &keep, &mut out)?;
    /// assert_eq!(out.to_vec()?, [10, 40, 30, 0]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn scatter_if<I: Index, F: Flag>(
        &self,
        indices: &DeviceSeq<I>,
        stencil: &DeviceSeq<F>,
        out: &mut DeviceSeq<T>,
    ) -> Result<()> {
        self.same_device(indices)?;
        self.same_device(stencil)?;
        self.same_device(out)?;
        super::length(self.len(), indices.len())?;
        super::length(self.len(), stencil.len())?;
        let vals = self.compact(stencil)?;
        let at = indices.compact(stencil)?;
        vals.scatter_into(&at, out)
    }
}
