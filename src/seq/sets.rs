//! Set operations over ascending sequences, with the multiset semantics of C++'s `std::set_*`:
//! `set_union`, `set_intersection`, `set_difference`, `set_symmetric_difference`, and their
//! `_by_key` forms carrying a value with each key.
//!
//! All four are built on one question asked of each element of one side: is it one of the
//! copies the other side matches? An element at position `p` of `a`, the `r`-th of its equals
//! there, is matched where `b` holds more than `r` copies of it: where `b[lo + r]` equals it,
//! `lo` being the first position of its equals in `b` (a `lower_bound`). The intersection keeps
//! `a`'s matched copies (the first `min(m, n)`), the difference its unmatched ones (the last
//! `m - n`); the union merges `a` with `b`'s copies unmatched by `a`, the symmetric difference
//! the two differences. Equal means equal in `sort`'s order, which is bitwise equality.

use super::order::all_equal;
use super::{DeviceSeq, length};
use crate::error::Result;
use crate::item::{Index, Item, Key};
use crate::op::Op;

impl<T: Key> DeviceSeq<T> {
    /// For each element, whether `other` matches it: whether `other` holds more copies of it
    /// than come before it among its equals here.
    fn matched_by(&self, other: &Self) -> Result<DeviceSeq<bool>> {
        if other.is_empty() {
            return DeviceSeq::filled(self.device(), false, self.len());
        }
        if (self.len() as u64 + other.len() as u64) < u32::MAX as u64 {
            self.matched_by_as::<u32>(other)
        } else {
            self.matched_by_as::<u64>(other)
        }
    }

    fn matched_by_as<I: Index>(&self, other: &Self) -> Result<DeviceSeq<bool>> {
        let (zero, one) = (I::from_u64(0), I::from_u64(1));
        // The rank of each element among its equals here: an exclusive count of its run.
        let rank = DeviceSeq::filled(self.device(), one, self.len())?.segmented_exclusive_scan(
            &self.head_flags()?,
            zero,
            Op::Add,
        )?;
        // `self` is ascending: its searches need no reordering.
        let first = other.search::<I>(self, false, true)?;
        let at = DeviceSeq::zip(&first, &rank)?.map(|(f, r)| f + r)?;
        // Reads past `other`'s end are clamped to its last element; `at < len` rules them out.
        let partner = other.gather_clamped(&at)?;
        let end = I::from_u64(other.len() as u64);
        let same = self.zip_map(&partner, |x, y| {
            all_equal(&T::order_words(x), &T::order_words(y))
        })?;
        DeviceSeq::zip(&at, &same)?.map(move |(at, same)| at.lt(end) & same)
    }

    /// Flags of the elements of `self` that `other` matches (`matched`), or of those it does
    /// not: the intersection's copies, or the difference's (`self`'s last `max(m - n, 0)`).
    fn kept(&self, other: &Self, matched: bool) -> Result<DeviceSeq<bool>> {
        let m = self.matched_by(other)?;
        if matched { Ok(m) } else { m.map(|f| !f) }
    }

    /// The keys and values that `keep` flags, compacted by flags stored once.
    fn compact_pairs<V: Item>(
        &self,
        values: &DeviceSeq<V>,
        keep: &DeviceSeq<bool>,
    ) -> Result<(Self, DeviceSeq<V>)> {
        let keep = keep.copy()?;
        Ok((self.compact(&keep)?, values.compact(&keep)?))
    }

    /// The union of two ascending sequences (Thrust's and C++'s `set_union`): an element `m`
    /// times in `self` and `n` times in `other` appears `max(m, n)` times, `self`'s copies
    /// first. Ascending as [`sort`](Self::sort) orders (floats by `total_cmp`); equal means
    /// equal in that order, which is bitwise. Unsorted inputs give an unspecified result, never
    /// a panic.
    ///
    /// Cost: `other`'s copies unmatched by `self` found (a segmented count of `other`'s runs,
    /// a `lower_bound` of `other` in `self`, and a compaction whose flags read `self` at the
    /// found positions), then one [`merge`](Self::merge); waits for the count.
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
        self.same_device(other)?;
        self.merge(&other.compact(&other.kept(self, false)?)?)
    }

    /// The intersection of two ascending sequences (`set_intersection`): `min(m, n)` copies,
    /// the first ones of `self`. Orders and equality as for [`set_union`](Self::set_union).
    ///
    /// Cost: a segmented count of `self`'s runs, a `lower_bound` of `self` in `other`, and a
    /// compaction whose flags read `other` at the found positions; waits for the count.
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
        self.same_device(other)?;
        self.compact(&self.kept(other, true)?)
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
        self.same_device(other)?;
        self.compact(&self.kept(other, false)?)
    }

    /// The elements in one sequence and not the other (`set_symmetric_difference`):
    /// `|m - n|` copies, the last ones of the side that has more. Orders and equality as for
    /// [`set_union`](Self::set_union).
    ///
    /// Cost: both differences, then one [`merge`](Self::merge).
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
        self.same_device(other)?;
        let mine = self.compact(&self.kept(other, false)?)?;
        mine.merge(&other.compact(&other.kept(self, false)?)?)
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
        by_key_inputs(self, values, other, other_values)?;
        let (rk, rv) = other.compact_pairs(other_values, &other.kept(self, false)?)?;
        self.merge_pairs(values, &rk, &rv)
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
        by_key_inputs(self, values, other, other_values)?;
        self.compact_pairs(values, &self.kept(other, true)?)
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
        by_key_inputs(self, values, other, other_values)?;
        self.compact_pairs(values, &self.kept(other, false)?)
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
        by_key_inputs(self, values, other, other_values)?;
        let (mk, mv) = self.compact_pairs(values, &self.kept(other, false)?)?;
        let (tk, tv) = other.compact_pairs(other_values, &other.kept(self, false)?)?;
        mk.merge_pairs(&mv, &tk, &tv)
    }
}

/// The checks of every `_by_key` set operation: each side's keys and values of one length, all
/// four on one device.
fn by_key_inputs<T: Key, V: Item>(
    keys: &DeviceSeq<T>,
    values: &DeviceSeq<V>,
    other: &DeviceSeq<T>,
    other_values: &DeviceSeq<V>,
) -> Result<()> {
    length(keys.len(), values.len())?;
    length(other.len(), other_values.len())?;
    keys.same_device(values)?;
    keys.same_device(other)?;
    other.same_device(other_values)
}
