//! `sort`, `sort_pairs` and `argsort`.

use super::{DeviceSeq, index_width, length};
use crate::backend::SortValues;
use crate::error::Result;
use crate::item::{Element, Index, Item};

impl<T: Element> DeviceSeq<T> {
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
        let (k, _) = self.device().backend().sort(self.source(), None, false)?;
        Ok(Self::stored(self.device(), k))
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
        let (k, _) = self.device().backend().sort(self.source(), None, true)?;
        Ok(Self::stored(self.device(), k))
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

    fn sort_pairs_in<V: Item>(
        &self,
        values: &DeviceSeq<V>,
        descending: bool,
    ) -> Result<(Self, DeviceSeq<V>)> {
        self.same_device(values)?;
        length(self.len(), values.len())?;
        let (b, dev, n) = (self.device().backend(), self.device(), self.len());
        if let [v] = values.sources() {
            let (k, v) = b.sort(self.source(), Some(SortValues { values: v }), descending)?;
            let v = v.ok_or_else(|| crate::Error::Internal("a sort returned no values".into()))?;
            return Ok((
                Self::stored(dev, k),
                DeviceSeq::stored_columns(dev, vec![v]),
            ));
        }
        // A tuple's components move by the sorting permutation.
        let wide = n as u64 > u32::MAX as u64;
        let pos = if wide { u64::TYPE } else { u32::TYPE };
        let order = crate::source::Source::sequence(pos, n);
        let (k, perm) = b.sort(
            self.source(),
            Some(SortValues { values: &order }),
            descending,
        )?;
        let perm = crate::source::Source::column(
            perm.ok_or_else(|| crate::Error::Internal("a sort returned no values".into()))?,
        );
        let cols = values
            .sources()
            .iter()
            .map(|v| b.gather(v, &perm))
            .collect::<Result<Vec<_>>>()?;
        Ok((Self::stored(dev, k), DeviceSeq::stored_columns(dev, cols)))
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

/// The bits of `x` whose unsigned order is the order `sort` uses (floats: `total_cmp`'s; signed
/// integers: the sign flipped), as the radix sort orders keys.
pub(crate) fn order_bits<T: Element>(x: crate::item::Expr<T>) -> crate::item::Expr<u64> {
    use crate::item::Expr;
    let bits = T::TYPE.bits();
    let sign = 1u64 << (bits - 1);
    let mask = if bits == 64 {
        !0u64
    } else {
        (1u64 << bits) - 1
    };
    let b = x.to_bits();
    if T::TYPE.is_float() {
        Expr::select((b & sign).ne(0u64), !b & mask, b | sign)
    } else if T::TYPE.is_signed_int() {
        b ^ sign
    } else {
        b
    }
}

impl<T: Element> DeviceSeq<T> {
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
        let descents = a.zip_map(&b, |x, y| order_bits(y).lt(order_bits(x)))?;
        Ok(!descents.any()?)
    }
}
