//! Set operations over ascending sequences, with the multiset semantics of C++'s `std::set_*`:
//! `set_union`, `set_intersection`, `set_difference`, `set_symmetric_difference`, and their
//! `_by_key` forms carrying a value with each key.
//!
//! Each is one backend call (`Backend::set_op`): on the GPU one pass over merge path after the
//! tiles' cuts, each tile merged in shared memory and the copies the operation keeps placed by a
//! look-back (`kernels/merge.cu`). A copy of `a` is kept by its rank among its equals there and
//! whether `b` holds more copies than that; a copy of `b` by its rank and how many `a` holds.
//! Equal means equal in `sort`'s order, which is bitwise equality. Keys of several components
//! run as one word (packed, or their joint dense ranks where they do not pack).

use super::{DeviceSeq, length};
use crate::backend::SetOp;
use crate::error::Result;
use crate::item::{Item, Key};

impl<T: Key> DeviceSeq<T> {
    /// The set operation `op` of `self` and `other`, with `values` (each side's) moved with
    /// the kept keys.
    fn set_op<V: Item>(
        &self,
        other: &Self,
        values: Option<(&DeviceSeq<V>, &DeviceSeq<V>)>,
        op: SetOp,
    ) -> Result<(Self, Option<DeviceSeq<V>>)> {
        let dev = self.device();
        if let ([a], [b]) = (self.sources(), other.sources()) {
            let pairs: Vec<_> = match values {
                Some((va, vb)) => va.sources().iter().zip(vb.sources()).collect(),
                None => Vec::new(),
            };
            let (keys, vals) = dev.backend().set_op(a, b, op, &pairs)?;
            let vals = values.map(|_| DeviceSeq::stored_columns(dev, vals));
            return Ok((Self::stored_columns(dev, vec![keys]), vals));
        }
        let (a, b) = self.joint_order(other)?;
        if Self::packs() {
            let (keys, vals) = a.set_op(&b, values, op)?;
            return Ok((Self::from_packed(&keys)?, vals));
        }
        // Dense ranks: the kept positions of `self.concat(other)`, then the keys and values
        // there.
        let na = self.len() as u64;
        let pa = DeviceSeq::<u64>::sequence(dev, self.len())?;
        let pb = DeviceSeq::<u64>::sequence(dev, other.len())?.map(move |i| i + na)?;
        let (_, at) =
            dev.backend()
                .set_op(a.source(), b.source(), op, &[(pa.source(), pb.source())])?;
        let at = DeviceSeq::<u64>::stored_columns(dev, at);
        let vals = values
            .map(|(va, vb)| va.concat(vb)?.gather_stored(&at))
            .transpose()?;
        Ok((self.concat(other)?.gather_stored(&at)?, vals))
    }

    /// [`set_op`](Self::set_op) of the keys alone.
    fn set_keys(&self, other: &Self, op: SetOp) -> Result<Self> {
        self.same_device(other)?;
        Ok(self.set_op::<u8>(other, None, op)?.0)
    }

    /// [`set_op`](Self::set_op) of keys carrying values, checked as every `_by_key` form is.
    fn set_pairs<V: Item>(
        &self,
        values: &DeviceSeq<V>,
        other: &Self,
        other_values: &DeviceSeq<V>,
        op: SetOp,
    ) -> Result<(Self, DeviceSeq<V>)> {
        length(self.len(), values.len())?;
        length(other.len(), other_values.len())?;
        self.same_device(values)?;
        self.same_device(other)?;
        other.same_device(other_values)?;
        let (keys, vals) = self.set_op(other, Some((values, other_values)), op)?;
        // (Values given come back: the empty stand-in is never taken.)
        Ok((keys, vals.unwrap_or_else(|| values.slice(..0))))
    }

    /// The union of two ascending sequences (Thrust's and C++'s `set_union`): an element `m`
    /// times in `self` and `n` times in `other` appears `max(m, n)` times, `self`'s copies
    /// first. Ascending as [`sort`](Self::sort) orders (floats by `total_cmp`); equal means
    /// equal in that order, which is bitwise. Unsorted inputs give an unspecified result, never
    /// a panic.
    ///
    /// Cost: one read of each input and one write of the result (on the GPU a merge-path pass,
    /// as [`merge`](Self::merge)'s, after a binary search for each tile's start); waits for
    /// the count. Keys of several components that do not pack into one `u64` are ranked
    /// first (a sort of both inputs) and gathered after.
    ///
    /// # Errors
    ///
    /// `Error::DeviceMismatch`; `Error::OutOfMemory`; `Error::Cuda`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let a = DeviceSeq::from_slice(&dev, &[1u32, 2, 2, 5])?;
    /// let b = DeviceSeq::from_slice(&dev, &[2u32, 3, 5, 5])?;
    /// assert_eq!(a.set_union(&b)?.to_vec()?, [1, 2, 2, 3, 5, 5]);
    /// assert_eq!(a.set_intersection(&b)?.to_vec()?, [2, 5]);
    /// assert_eq!(a.set_difference(&b)?.to_vec()?, [1, 2]);
    /// assert_eq!(a.set_symmetric_difference(&b)?.to_vec()?, [1, 2, 3, 5]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn set_union(&self, other: &Self) -> Result<Self> {
        self.set_keys(other, SetOp::Union)
    }

    /// The intersection of two ascending sequences (`set_intersection`): `min(m, n)` copies,
    /// the first ones of `self`. Orders and equality as for [`set_union`](Self::set_union).
    ///
    /// Cost: as [`set_union`](Self::set_union).
    ///
    /// # Errors
    ///
    /// As [`set_union`](Self::set_union).
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let a = DeviceSeq::from_slice(&dev, &[-1.0f32, 0.5, 0.5, 0.5])?;
    /// let b = DeviceSeq::from_slice(&dev, &[0.5f32, 0.5, 9.0])?;
    /// assert_eq!(a.set_intersection(&b)?.to_vec()?, [0.5, 0.5]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn set_intersection(&self, other: &Self) -> Result<Self> {
        self.set_keys(other, SetOp::Intersection)
    }

    /// The elements of `self` not in `other` (`set_difference`): `max(m - n, 0)` copies, the
    /// last ones of `self`. Orders and equality as for [`set_union`](Self::set_union).
    ///
    /// Cost: as [`set_intersection`](Self::set_intersection).
    ///
    /// # Errors
    ///
    /// As [`set_union`](Self::set_union).
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let a = DeviceSeq::from_slice(&dev, &[1i8, 1, 1, 4])?;
    /// let b = DeviceSeq::from_slice(&dev, &[1i8, 4])?;
    /// assert_eq!(a.set_difference(&b)?.to_vec()?, [1, 1]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn set_difference(&self, other: &Self) -> Result<Self> {
        self.set_keys(other, SetOp::Difference)
    }

    /// The elements in one sequence and not the other (`set_symmetric_difference`):
    /// `|m - n|` copies, the last ones of the side that has more. Orders and equality as for
    /// [`set_union`](Self::set_union).
    ///
    /// Cost: as [`set_union`](Self::set_union).
    ///
    /// # Errors
    ///
    /// As [`set_union`](Self::set_union).
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let a = DeviceSeq::from_slice(&dev, &[1u16, 2, 2, 2])?;
    /// let b = DeviceSeq::from_slice(&dev, &[2u16, 3])?;
    /// assert_eq!(a.set_symmetric_difference(&b)?.to_vec()?, [1, 2, 2, 3]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn set_symmetric_difference(&self, other: &Self) -> Result<Self> {
        self.set_keys(other, SetOp::SymmetricDifference)
    }

    /// [`set_union`](Self::set_union) of keys carrying values: `(keys, values)`, with the
    /// copies the standard keeps: all `m` of `self`'s, then the last `n - m` of `other`'s.
    ///
    /// # Errors
    ///
    /// `Error::LengthMismatch` where keys and their values differ in length;
    /// `Error::DeviceMismatch`; `Error::OutOfMemory`; `Error::Cuda`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let (ak, av) = (DeviceSeq::from_slice(&dev, &[1u32, 3])?, DeviceSeq::from_slice(&dev, &[10u8, 30])?);
    /// let (bk, bv) = (DeviceSeq::from_slice(&dev, &[3u32, 3, 4])?, DeviceSeq::from_slice(&dev, &[31u8, 32, 40])?);
    /// let (k, v) = ak.set_union_by_key(&av, &bk, &bv)?;
    /// assert_eq!((k.to_vec()?, v.to_vec()?), (vec![1, 3, 3, 4], vec![10, 30, 32, 40]));
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn set_union_by_key<V: Item>(
        &self,
        values: &DeviceSeq<V>,
        other: &Self,
        other_values: &DeviceSeq<V>,
    ) -> Result<(Self, DeviceSeq<V>)> {
        self.set_pairs(values, other, other_values, SetOp::Union)
    }

    /// [`set_intersection`](Self::set_intersection) of keys carrying values: the first
    /// `min(m, n)` of `self`'s copies, with their values.
    ///
    /// # Errors
    ///
    /// As [`set_union_by_key`](Self::set_union_by_key).
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let (ak, av) = (DeviceSeq::from_slice(&dev, &[3u32, 3, 4])?, DeviceSeq::from_slice(&dev, &[31i64, 32, 40])?);
    /// let bk = DeviceSeq::from_slice(&dev, &[1u32, 3])?;
    /// let bv = DeviceSeq::from_slice(&dev, &[10i64, 30])?;
    /// let (k, v) = ak.set_intersection_by_key(&av, &bk, &bv)?;
    /// assert_eq!((k.to_vec()?, v.to_vec()?), (vec![3], vec![31]));
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn set_intersection_by_key<V: Item>(
        &self,
        values: &DeviceSeq<V>,
        other: &Self,
        other_values: &DeviceSeq<V>,
    ) -> Result<(Self, DeviceSeq<V>)> {
        self.set_pairs(values, other, other_values, SetOp::Intersection)
    }

    /// [`set_difference`](Self::set_difference) of keys carrying values: the last `m - n` of
    /// `self`'s copies, with their values.
    ///
    /// # Errors
    ///
    /// As [`set_union_by_key`](Self::set_union_by_key).
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let (ak, av) = (DeviceSeq::from_slice(&dev, &[3u32, 3, 4])?, DeviceSeq::from_slice(&dev, &[31u8, 32, 40])?);
    /// let (bk, bv) = (DeviceSeq::from_slice(&dev, &[3u32])?, DeviceSeq::from_slice(&dev, &[0u8])?);
    /// let (k, v) = ak.set_difference_by_key(&av, &bk, &bv)?;
    /// assert_eq!((k.to_vec()?, v.to_vec()?), (vec![3, 4], vec![32, 40]));
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn set_difference_by_key<V: Item>(
        &self,
        values: &DeviceSeq<V>,
        other: &Self,
        other_values: &DeviceSeq<V>,
    ) -> Result<(Self, DeviceSeq<V>)> {
        self.set_pairs(values, other, other_values, SetOp::Difference)
    }

    /// [`set_symmetric_difference`](Self::set_symmetric_difference) of keys carrying values:
    /// the last `|m - n|` copies of the side that has more, with their values.
    ///
    /// # Errors
    ///
    /// As [`set_union_by_key`](Self::set_union_by_key).
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let (ak, av) = (DeviceSeq::from_slice(&dev, &[1u32, 3])?, DeviceSeq::from_slice(&dev, &[10u8, 30])?);
    /// let (bk, bv) = (DeviceSeq::from_slice(&dev, &[3u32, 3, 4])?, DeviceSeq::from_slice(&dev, &[31u8, 32, 40])?);
    /// let (k, v) = ak.set_symmetric_difference_by_key(&av, &bk, &bv)?;
    /// assert_eq!((k.to_vec()?, v.to_vec()?), (vec![1, 3, 4], vec![10, 32, 40]));
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn set_symmetric_difference_by_key<V: Item>(
        &self,
        values: &DeviceSeq<V>,
        other: &Self,
        other_values: &DeviceSeq<V>,
    ) -> Result<(Self, DeviceSeq<V>)> {
        self.set_pairs(values, other, other_values, SetOp::SymmetricDifference)
    }
}
