//! Runs of equal consecutive elements: `dedup`, `run_lengths`, `reduce_by_key`, and
//! `group_by_key` (the runs of the sorted keys). Built on the
//! head flags, which are lazy for a stored sequence: the compaction and the segmented reduction
//! that read them compare neighbours in their own pass.

use super::{DeviceSeq, length};
use crate::error::Result;
use crate::item::{Element, Item, Key};
use crate::op::Op;

impl<T: Key> DeviceSeq<T> {
    /// The first element of each run of equal consecutive elements, in order (`Vec::dedup`,
    /// Thrust's `unique`); equal means bitwise, as for [`head_flags`](Self::head_flags).
    ///
    /// Cost: one fused pass over the sequence (a compaction whose flags compare neighbours);
    /// waits for the count.
    ///
    /// # Errors
    ///
    /// `Error::OutOfMemory`; `Error::Cuda`; `Error::Compile`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let v = [3u16, 3, 1, 1, 1, 3, 7, 7];
    /// let mut want = v.to_vec();
    /// want.dedup();
    /// assert_eq!(DeviceSeq::from_slice(&dev, &v)?.dedup()?.to_vec()?, want);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn dedup(&self) -> Result<Self> {
        self.compact(&self.head_flags()?)
    }

    /// Each run of equal consecutive elements (bitwise, as for `dedup`): its element, and its
    /// length.
    ///
    /// Cost: as [`reduce_by_key`](Self::reduce_by_key) of a lazy sequence of ones: one fused
    /// pass on the GPU.
    ///
    /// # Errors
    ///
    /// As [`dedup`](Self::dedup).
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[5i8, 5, 5, -1, 5, 5])?;
    /// let (elems, lens) = xs.run_lengths()?;
    /// assert_eq!(elems.to_vec()?, [5, -1, 5]);
    /// assert_eq!(lens.to_vec()?, [3, 1, 2]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn run_lengths(&self) -> Result<(Self, DeviceSeq<u64>)> {
        // The lengths are the sums of a lazy sequence of ones by key.
        let ones = DeviceSeq::filled(self.device(), 1u64, self.len())?;
        self.reduce_by_key(&ones, Op::Add)
    }

    /// For each run of equal consecutive keys (bitwise for floats): its key and the
    /// `op`-combination of its values, in order (Thrust's and CUB's `reduce_by_key`). The
    /// values of a run are combined in order, so float results are the same on every run.
    ///
    /// Cost: one fused pass on the GPU (a segmented reduction of the values over the keys' lazy
    /// head flags that also writes the key at each run's head; outputs allocated for a run an
    /// element, as CUB's `ReduceByKey` callers do, and moved to storage of their own size where
    /// there are fewer than n/16 runs); waits for the number of runs. On the host: the keys'
    /// `dedup`, then the segmented reduction.
    ///
    /// # Errors
    ///
    /// `Error::LengthMismatch`; `Error::DeviceMismatch`; `Error::UnsupportedOp`;
    /// `Error::OutOfMemory`; `Error::Cuda`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq, Op};
    /// let dev = Device::auto()?;
    /// let keys = DeviceSeq::from_slice(&dev, &[1u32, 1, 2, 2, 2, 1])?;
    /// let vals = DeviceSeq::from_slice(&dev, &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
    /// let (k, v) = keys.reduce_by_key(&vals, Op::Add)?;
    /// assert_eq!(k.to_vec()?, [1, 2, 1]);
    /// assert_eq!(v.to_vec()?, [3.0, 12.0, 6.0]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn reduce_by_key<V: Element>(
        &self,
        values: &DeviceSeq<V>,
        op: Op,
    ) -> Result<(Self, DeviceSeq<V>)> {
        op.check::<V>()?;
        self.same_device(values)?;
        length(self.len(), values.len())?;
        let heads = self.head_flags()?;
        let [keys] = self.sources() else {
            return Ok((self.compact(&heads)?, values.segmented_reduce(&heads, op)?));
        };
        let heads = heads.flags_u8()?;
        let b = self.device().backend();
        let (keys, sums) = b.reduce_by_key(keys, values.source(), heads.source(), op)?;
        Ok((
            Self::stored_columns(self.device(), vec![keys]),
            DeviceSeq::stored(values.device(), sums),
        ))
    }

    /// Every distinct key once, ascending (as [`sort`](Self::sort) orders; equal means bitwise,
    /// as for `dedup`), with the `op`-combination of its values in their order of position: a
    /// group-by, [`sort_pairs`](Self::sort_pairs) then [`reduce_by_key`](Self::reduce_by_key).
    /// The values of a key are combined in their order, so float results are the same on
    /// every run.
    ///
    /// Cost: the stable sort of the values by the keys, then the one fused pass of
    /// `reduce_by_key`; waits for the number of keys.
    ///
    /// # Errors
    ///
    /// As [`reduce_by_key`](Self::reduce_by_key).
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq, Op};
    /// let dev = Device::auto()?;
    /// let keys = DeviceSeq::from_slice(&dev, &[2u32, 1, 2, 7, 1])?;
    /// let vals = DeviceSeq::from_slice(&dev, &[1.0f32, 2.0, 3.0, 4.0, 5.0])?;
    /// let (k, v) = keys.group_by_key(&vals, Op::Add)?;
    /// assert_eq!(k.to_vec()?, [1, 2, 7]);
    /// assert_eq!(v.to_vec()?, [7.0, 4.0, 4.0]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn group_by_key<V: Element>(
        &self,
        values: &DeviceSeq<V>,
        op: Op,
    ) -> Result<(Self, DeviceSeq<V>)> {
        op.check::<V>()?;
        let (keys, values) = self.sort_pairs(values)?;
        keys.reduce_by_key(&values, op)
    }

    /// [`group_by_key`](Self::group_by_key) with a traced operator over values of any item
    /// type (as [`reduce_by_key_with`](Self::reduce_by_key_with)).
    ///
    /// # Errors
    ///
    /// As [`reduce_by_key_with`](Self::reduce_by_key_with).
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let keys = DeviceSeq::from_slice(&dev, &[5i16, -2, 5])?;
    /// let vals = DeviceSeq::from_slice(&dev, &[(1.0f32, 1u32), (3.0, 1), (5.0, 1)])?;
    /// let (k, v) = keys.group_by_key_with(&vals, |(s, n), (t, m)| (s + t, n + m))?;
    /// assert_eq!(k.to_vec()?, [-2, 5]);
    /// assert_eq!(v.to_vec()?, [(3.0, 1), (6.0, 2)]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn group_by_key_with<V: Item>(
        &self,
        values: &DeviceSeq<V>,
        f: impl Fn(V::Exprs, V::Exprs) -> V::Exprs,
    ) -> Result<(Self, DeviceSeq<V>)> {
        crate::expr::combiner::Combiner::trace::<V>(&f)?;
        let (keys, values) = self.sort_pairs(values)?;
        keys.reduce_by_key_with(&values, f)
    }
}
