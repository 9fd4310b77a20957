//! `sort`, `sort_pairs` and `argsort`.

use super::order::lex_less;
use super::{DeviceSeq, index_width, length};
use crate::backend::SortValues;
use crate::error::Result;
use crate::item::{Element, Exprs, Index, Item, Key};

impl<T: Key> DeviceSeq<T> {
    /// Ascending; floats in the order of `f32::total_cmp`
    /// (`-NaN < -inf < … < -0.0 < +0.0 < … < +inf < +NaN`).
    ///
    /// GPU: LSD radix sort, 8-bit digits, Onesweep style: one pass counts all digits, then one
    /// pass per digit ranks and scatters; a digit that is the same for every key is skipped.
    ///
    /// Cost: one read of the keys, then one read and one write per 8 key bits whose digit
    /// varies; temporaries of about twice the sequence.
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
    /// let v = [0.5f32, -0.0, f32::NAN, -3.0, 0.0, f32::NEG_INFINITY];
    /// let mut want = v.to_vec();
    /// want.sort_by(f32::total_cmp);
    /// let got = DeviceSeq::from_slice(&dev, &v)?.sort()?.to_vec()?;
    /// assert_eq!(got.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
    ///            want.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn sort(&self) -> Result<Self> {
        self.sort_keys(false)
    }
    /// Descending; floats in the reverse of the order of `f32::total_cmp`
    /// (`+NaN > +inf > … > +0.0 > -0.0 > … > -inf > -NaN`).
    ///
    /// GPU: the radix sort of [`sort`](Self::sort) on the complement of the keys' ordered
    /// bits (CUB's `SortKeysDescending` does the same), so it costs what `sort` costs.
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
    /// let v = [0.5f32, -0.0, 2.0, f32::NAN, 0.0, f32::NEG_INFINITY];
    /// let got = DeviceSeq::from_slice(&dev, &v)?.sort_descending()?.to_vec()?;
    /// let bits: Vec<u32> = got.iter().map(|x| x.to_bits()).collect();
    /// let want = [f32::NAN, 2.0, 0.5, 0.0, -0.0, f32::NEG_INFINITY];
    /// assert_eq!(bits, want.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn sort_descending(&self) -> Result<Self> {
        self.sort_keys(true)
    }

    fn sort_keys(&self, descending: bool) -> Result<Self> {
        if let [keys] = self.sources() {
            let (k, _) = self.device().backend().sort(keys, None, descending)?;
            return Ok(Self::stored_columns(self.device(), vec![k]));
        }
        if Self::packs() {
            let packed = self.order_keys()?.remove(0).sort_keys(descending)?;
            return Self::from_packed(&packed);
        }
        Ok(self.sorted_by_permutation::<u8>(None, descending)?.0)
    }

    /// The stable sort of `values` by these keys: both, in the same order.
    ///
    /// Cost: as [`sort`](Self::sort), moving the values with the keys.
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
    /// let keys = DeviceSeq::from_slice(&dev, &[3i8, -1, 3, 0])?;
    /// let vals = DeviceSeq::from_slice(&dev, &['a' as u8, b'b', b'c', b'd'])?;
    /// let (k, v) = keys.sort_pairs(&vals)?;
    /// assert_eq!(k.to_vec()?, [-1, 0, 3, 3]);
    /// assert_eq!(v.to_vec()?, [b'b', b'd', b'a', b'c']);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn sort_pairs<V: Item>(&self, values: &DeviceSeq<V>) -> Result<(Self, DeviceSeq<V>)> {
        self.sort_pairs_in(values, false)
    }

    /// The stable descending sort of `values` by these keys (the order of
    /// [`sort_descending`](Self::sort_descending); equal keys keep their values' order).
    ///
    /// Cost: as [`sort_pairs`](Self::sort_pairs).
    ///
    /// # Errors
    ///
    /// As [`sort_pairs`](Self::sort_pairs).
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let keys = DeviceSeq::from_slice(&dev, &[3i8, -1, 3, 0])?;
    /// let vals = DeviceSeq::from_slice(&dev, &[b'a', b'b', b'c', b'd'])?;
    /// let (k, v) = keys.sort_pairs_descending(&vals)?;
    /// assert_eq!(k.to_vec()?, [3, 3, 0, -1]);
    /// assert_eq!(v.to_vec()?, [b'a', b'c', b'd', b'b']);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn sort_pairs_descending<V: Item>(
        &self,
        values: &DeviceSeq<V>,
    ) -> Result<(Self, DeviceSeq<V>)> {
        self.sort_pairs_in(values, true)
    }

    pub(super) fn sort_pairs_in<V: Item>(
        &self,
        values: &DeviceSeq<V>,
        descending: bool,
    ) -> Result<(Self, DeviceSeq<V>)> {
        self.same_device(values)?;
        length(self.len(), values.len())?;
        let (b, dev, n) = (self.device().backend(), self.device(), self.len());
        let keys = match self.sources() {
            [keys] => keys,
            _ if Self::packs() => {
                let packed = self.order_keys()?.remove(0);
                let (k, v) = packed.sort_pairs_in(values, descending)?;
                return Ok((Self::from_packed(&k)?, v));
            }
            _ => {
                let (k, v) = self.sorted_by_permutation(Some(values), descending)?;
                let v = v.ok_or_else(|| crate::Error::Internal("no values were moved".into()))?;
                return Ok((k, v));
            }
        };
        if let [v] = values.sources() {
            let (k, v) = b.sort(keys, Some(SortValues { values: v }), descending)?;
            let v = v.ok_or_else(|| crate::Error::Internal("a sort returned no values".into()))?;
            return Ok((
                Self::stored_columns(dev, vec![k]),
                DeviceSeq::stored_columns(dev, vec![v]),
            ));
        }
        // A tuple's components move by the sorting permutation.
        let wide = n as u64 > u32::MAX as u64;
        let pos = if wide { u64::TYPE } else { u32::TYPE };
        let order = crate::source::Source::sequence(pos, n);
        let (k, perm) = b.sort(keys, Some(SortValues { values: &order }), descending)?;
        let perm = crate::source::Source::column(
            perm.ok_or_else(|| crate::Error::Internal("a sort returned no values".into()))?,
        );
        let cols = values
            .sources()
            .iter()
            .map(|v| b.gather(v, &perm))
            .collect::<Result<Vec<_>>>()?;
        Ok((
            Self::stored_columns(dev, vec![k]),
            DeviceSeq::stored_columns(dev, cols),
        ))
    }
    /// The stable permutation that sorts the sequence: `self.gather(&self.argsort()?)` is
    /// `self.sort()`.
    ///
    /// Cost: as [`sort_pairs`](Self::sort_pairs) (the positions are generated, not read).
    ///
    /// # Errors
    ///
    /// `Error::InvalidArgument` where `I` cannot index every element (`u32` indices for more
    /// than 2^32 elements); `Error::OutOfMemory`; `Error::Cuda`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[30u64, 10, 20, 10])?;
    /// assert_eq!(xs.argsort::<u32>()?.to_vec()?, [1, 3, 2, 0]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn argsort<I: Index>(&self) -> Result<DeviceSeq<I>> {
        index_width(I::TYPE.size(), self.len())?;
        let (_, positions) =
            self.sort_pairs(&DeviceSeq::<I>::sequence(self.device(), self.len())?)?;
        Ok(positions)
    }
}

impl<T: Key> DeviceSeq<T> {
    /// Whether the elements are ascending in the order [`sort`](Self::sort) uses (`total_cmp`
    /// for floats); `true` when there are fewer than two.
    ///
    /// Cost: one read (each element compared with the next in the same pass); waits for the
    /// result.
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
    /// assert!(DeviceSeq::from_slice(&dev, &[-2i32, -2, 5])?.is_sorted()?);
    /// assert!(!DeviceSeq::from_slice(&dev, &[0.0f32, -0.0])?.is_sorted()?); // total_cmp
    /// assert!(DeviceSeq::<u8>::sequence(&dev, 200)?.is_sorted()?);
    /// let xs = DeviceSeq::<f64>::random_uniform(&dev, 1000, 7)?;
    /// assert!(!xs.is_sorted()? && xs.sort()?.is_sorted()?);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn is_sorted(&self) -> Result<bool> {
        let n = self.len();
        if n < 2 {
            return Ok(true);
        }
        let (a, b) = (self.slice(..n - 1), self.slice(1..));
        let descents = a.zip_map(&b, |x, y| lex_less(&T::order_words(y), &T::order_words(x)))?;
        Ok(!descents.any()?)
    }
}

impl<T: Item> DeviceSeq<T> {
    /// The items ordered by the key `key` computes from each (an element or a tuple of them,
    /// in [`sort`](Self::sort)'s order), stably: a sort by a comparator is a sort by a key
    /// function (`|x| (x % 2, x)` puts the evens first, each part ascending).
    ///
    /// Cost: as [`sort_pairs`](Self::sort_pairs) of the keys and the items; the keys are
    /// computed inside the sort's first pass, not stored.
    ///
    /// # Errors
    ///
    /// As [`map`](Self::map) and [`sort_pairs`](Self::sort_pairs).
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[5u32, 2, 7, 4, 1, 2])?;
    /// // Evens first, then odds, each ascending.
    /// let got = xs.sort_by_key(|x| (x % 2, x))?;
    /// assert_eq!(got.to_vec()?, [2, 2, 4, 1, 5, 7]);
    /// // By square, stably (-2 stays before 2).
    /// let ys = DeviceSeq::from_slice(&dev, &[3i32, -2, 2, -1])?;
    /// assert_eq!(ys.sort_by_key(|y| y * y)?.to_vec()?, [-1, -2, 2, 3]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn sort_by_key<R: Exprs>(&self, key: impl Fn(T::Exprs) -> R) -> Result<Self>
    where
        R::Item: Key,
    {
        Ok(self.map(key)?.sort_pairs(self)?.1)
    }
}
