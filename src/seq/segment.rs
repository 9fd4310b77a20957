//! Segments given by head flags: the segmented scans, `segmented_reduce`, `head_flags`.

use super::{DeviceSeq, length};
use crate::error::Result;
use crate::item::{Element, Flag};
use crate::op::Op;
use crate::source::Source;

impl<F: Flag> DeviceSeq<F> {
    /// These flags as the `u8` flags the backends take (nonzero is true); lazy where they are
    /// `bool`s that are not a comparison or head flags of their own.
    pub(crate) fn flags_u8(&self) -> Result<DeviceSeq<u8>> {
        Ok(DeviceSeq::from_source(
            self.device(),
            self.source().flags_u8()?,
        ))
    }
}

impl<T: Element> DeviceSeq<T> {
    fn segment_inputs(&self, flags: &DeviceSeq<u8>) -> Result<()> {
        self.same_device(flags)?;
        length(self.len(), flags.len())
    }

    /// An inclusive scan that restarts at every segment head: a nonzero flag starts a segment
    /// at that element, and element 0 always starts one.
    ///
    /// Deterministic as [`inclusive_scan`](Self::inclusive_scan) (a single-pass scan of
    /// (value, flag) pairs with the flag-carrying operator).
    ///
    /// Cost: one read of the sequence and the flags, one write of the output.
    ///
    /// # Errors
    ///
    /// `Error::LengthMismatch` where `flags` has another length; `Error::DeviceMismatch`;
    /// `Error::UnsupportedOp`; `Error::OutOfMemory`; `Error::Cuda`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq, Op};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[1i64, 2, 3, 4, 5])?;
    /// let flags = DeviceSeq::from_slice(&dev, &[0u8, 0, 1, 0, 7])?;
    /// assert_eq!(xs.segmented_inclusive_scan(&flags, Op::Add)?.to_vec()?, [1, 3, 3, 7, 5]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn segmented_inclusive_scan<F: Flag>(&self, flags: &DeviceSeq<F>, op: Op) -> Result<Self> {
        op.check::<T>()?;
        let flags = &flags.flags_u8()?;
        self.segment_inputs(flags)?;
        let b = self.device().backend();
        let col = b.segmented_scan(self.source(), flags.source(), op, None)?;
        Ok(Self::stored(self.device(), col))
    }
    /// An exclusive scan that restarts, with `init`, at every segment head.
    ///
    /// Deterministic as [`inclusive_scan`](Self::inclusive_scan).
    ///
    /// Cost: as [`segmented_inclusive_scan`](Self::segmented_inclusive_scan).
    ///
    /// # Errors
    ///
    /// As [`segmented_inclusive_scan`](Self::segmented_inclusive_scan).
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq, Op};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[1i64, 2, 3, 4, 5])?;
    /// let flags = DeviceSeq::from_slice(&dev, &[1u8, 0, 1, 0, 0])?;
    /// assert_eq!(xs.segmented_exclusive_scan(&flags, 10, Op::Add)?.to_vec()?, [10, 11, 10, 13, 17]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn segmented_exclusive_scan<F: Flag>(
        &self,
        flags: &DeviceSeq<F>,
        init: T,
        op: Op,
    ) -> Result<Self> {
        op.check::<T>()?;
        let flags = &flags.flags_u8()?;
        self.segment_inputs(flags)?;
        let b = self.device().backend();
        let init = Some(init.compute_bits());
        let col = b.segmented_scan(self.source(), flags.source(), op, init)?;
        Ok(Self::stored(self.device(), col))
    }
    /// One value per segment, in order: the `op`-combination of each segment (the
    /// `reduce_by_key` of sorted keys, with keys given as head flags).
    ///
    /// Deterministic as [`inclusive_scan`](Self::inclusive_scan).
    ///
    /// Cost: one read of the sequence and the flags and one write per segment, in one pass
    /// that also counts the segments; the call waits for that count. The output is allocated
    /// for the worst case (a segment an element) and moved to storage of its own size when
    /// much of it is left over. A lazy sequence stores nothing of its size, so where its
    /// worst case passes 4 MiB its output holds 4 MiB of results: the segments of its first
    /// 4 MiB worth of flags are counted first, and where they promise more than fit, all the
    /// segments are (a pass over the flags, and a wait); more segments than the output holds
    /// take a second pass.
    ///
    /// # Errors
    ///
    /// As [`segmented_inclusive_scan`](Self::segmented_inclusive_scan).
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq, Op};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[4u16, 1, 9, 2, 8, 3])?;
    /// let flags = DeviceSeq::from_slice(&dev, &[1u8, 0, 0, 1, 0, 1])?;
    /// assert_eq!(xs.segmented_reduce(&flags, Op::Max)?.to_vec()?, [9, 8, 3]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn segmented_reduce<F: Flag>(&self, flags: &DeviceSeq<F>, op: Op) -> Result<Self> {
        self.segmented_reduce_of(&flags.flags_u8()?, op, None)
    }

    /// `segmented_reduce` where the caller may know the number of segments (from the heads it
    /// compacted), which saves counting them.
    pub(crate) fn segmented_reduce_of(
        &self,
        flags: &DeviceSeq<u8>,
        op: Op,
        segments: Option<usize>,
    ) -> Result<Self> {
        op.check::<T>()?;
        self.segment_inputs(flags)?;
        let b = self.device().backend();
        let col = b.segmented_reduce(self.source(), flags.source(), op, segments)?;
        Ok(Self::stored(self.device(), col))
    }
}

impl<T: crate::item::Key> DeviceSeq<T> {
    /// `true` where `i == 0` or `self[i] != self[i-1]` (bitwise for floats; for tuples, in any
    /// component), else `false`: the heads of the runs of equal elements.
    ///
    /// Of a stored sequence the flags are lazy: no kernel runs and no memory is taken; the
    /// operation that reads them compares neighbours in its own pass (so `keys.compact(&flags)`
    /// and `values.segmented_reduce(&flags, op)` read the keys once, with no flag array). Of a
    /// lazy sequence they are computed and stored: one read of the sequence, one write of the
    /// flags.
    ///
    /// # Errors
    ///
    /// `Error::OutOfMemory`; `Error::Cuda`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[1u32, 1, 2, 2, 2, 5])?;
    /// let heads = xs.head_flags()?;
    /// assert_eq!(heads.to_vec()?, [true, false, true, false, false, true]);
    /// assert_eq!(heads.count()?, 3); // the runs
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn head_flags(&self) -> Result<DeviceSeq<bool>> {
        let dev = self.device();
        // A tuple's heads are those of any of its components.
        let mut heads: Option<DeviceSeq<bool>> = None;
        for src in self.sources() {
            let h = match src.as_column() {
                Some(col) => DeviceSeq::from_source(
                    dev,
                    Source::head_flags(col.clone()).retyped(crate::item::ScalarType::Bool),
                ),
                None => DeviceSeq::stored(dev, dev.backend().head_flags(src)?),
            };
            heads = Some(match heads {
                None => h,
                Some(acc) => acc.zip_map(&h, |a, b| a | b)?,
            });
        }
        heads.ok_or_else(|| crate::Error::Internal("an item without components".into()))
    }
}
