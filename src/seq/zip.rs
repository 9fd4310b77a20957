//! Tuple sequences: `zip`, `zip3`, `zip4` and `unzip`, in O(1) (a tuple sequence is one source a
//! component).

use super::{DeviceSeq, length};
use crate::error::Result;
use crate::item::{Element, Item};

impl<A: Element, B: Element> DeviceSeq<(A, B)> {
    /// The sequence of pairs `(a[i], b[i])`: O(1), no copy (the pairs' components are `a` and
    /// `b` themselves, stored or lazy).
    ///
    /// # Errors
    ///
    /// `Error::LengthMismatch`; `Error::DeviceMismatch`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let a = DeviceSeq::from_slice(&dev, &[1u8, 2, 3])?;
    /// let b = DeviceSeq::<f32>::sequence(&dev, 3)?;
    /// let ab = DeviceSeq::zip(&a, &b)?;
    /// assert_eq!(ab.to_vec()?, [(1, 0.0), (2, 1.0), (3, 2.0)]);
    /// let (a2, b2) = ab.unzip();
    /// assert_eq!((a2.to_vec()?, b2.len()), (vec![1, 2, 3], 3));
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn zip(a: &DeviceSeq<A>, b: &DeviceSeq<B>) -> Result<Self> {
        a.same_device(b)?;
        length(a.len(), b.len())?;
        let comps = vec![a.source().clone(), b.source().clone()];
        Ok(Self::from_sources(a.device(), comps))
    }

    /// The components: O(1), no copy.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let pairs = DeviceSeq::from_slice(&dev, &[(1u32, -1.5f32), (2, 0.5), (3, 4.0)])?;
    /// let (a, b) = pairs.unzip();
    /// assert_eq!(a.to_vec()?, [1, 2, 3]);
    /// assert_eq!(b.to_vec()?, [-1.5, 0.5, 4.0]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn unzip(&self) -> (DeviceSeq<A>, DeviceSeq<B>) {
        let (d, c) = (self.device(), self.sources());
        (
            DeviceSeq::from_source(d, c[0].clone()),
            DeviceSeq::from_source(d, c[1].clone()),
        )
    }
}

impl<A: Element, B: Element, C: Element> DeviceSeq<(A, B, C)> {
    /// The sequence of triples `(a[i], b[i], c[i])`: O(1), as [`zip`](DeviceSeq::zip).
    ///
    /// # Errors
    ///
    /// `Error::LengthMismatch`; `Error::DeviceMismatch`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let x = DeviceSeq::<u32>::sequence(&dev, 2)?;
    /// let t = DeviceSeq::zip3(&x, &x.map(|v| v * 10)?, &x.cast::<f64>()?)?;
    /// assert_eq!(t.to_vec()?, [(0, 0, 0.0), (1, 10, 1.0)]);
    /// let (_, tens, _) = t.unzip();
    /// assert_eq!(tens.to_vec()?, [0, 10]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn zip3(a: &DeviceSeq<A>, b: &DeviceSeq<B>, c: &DeviceSeq<C>) -> Result<Self> {
        a.same_device(b)?;
        a.same_device(c)?;
        length(a.len(), b.len())?;
        length(a.len(), c.len())?;
        let comps = vec![a.source().clone(), b.source().clone(), c.source().clone()];
        Ok(Self::from_sources(a.device(), comps))
    }

    /// The components: O(1), no copy.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let t = DeviceSeq::from_slice(&dev, &[(1u8, 10i64, 0.25f64), (2, -20, 8.0)])?;
    /// let (a, b, c) = t.unzip();
    /// assert_eq!(a.to_vec()?, [1, 2]);
    /// assert_eq!(b.to_vec()?, [10, -20]);
    /// assert_eq!(c.to_vec()?, [0.25, 8.0]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn unzip(&self) -> (DeviceSeq<A>, DeviceSeq<B>, DeviceSeq<C>) {
        let (d, s) = (self.device(), self.sources());
        (
            DeviceSeq::from_source(d, s[0].clone()),
            DeviceSeq::from_source(d, s[1].clone()),
            DeviceSeq::from_source(d, s[2].clone()),
        )
    }
}

impl<A: Element, B: Element, C: Element, D: Element> DeviceSeq<(A, B, C, D)> {
    /// The sequence of 4-tuples: O(1), as [`zip`](DeviceSeq::zip).
    ///
    /// # Errors
    ///
    /// `Error::LengthMismatch`; `Error::DeviceMismatch`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let x = DeviceSeq::<i16>::sequence(&dev, 2)?;
    /// let q = DeviceSeq::zip4(&x, &x, &x.map(|v| -v)?, &x.cast::<u8>()?)?;
    /// assert_eq!(q.to_vec()?, [(0, 0, 0, 0), (1, 1, -1, 1)]);
    /// assert_eq!(q.unzip().2.to_vec()?, [0, -1]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn zip4(
        a: &DeviceSeq<A>,
        b: &DeviceSeq<B>,
        c: &DeviceSeq<C>,
        d: &DeviceSeq<D>,
    ) -> Result<Self> {
        a.same_device(b)?;
        a.same_device(c)?;
        a.same_device(d)?;
        length(a.len(), b.len())?;
        length(a.len(), c.len())?;
        length(a.len(), d.len())?;
        let comps = vec![
            a.source().clone(),
            b.source().clone(),
            c.source().clone(),
            d.source().clone(),
        ];
        Ok(Self::from_sources(a.device(), comps))
    }

    /// The components: O(1), no copy.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let q = DeviceSeq::from_slice(&dev, &[(1u8, 2u16, 3u32, 4u64), (5, 6, 7, 8)])?;
    /// let (a, b, c, d) = q.unzip();
    /// assert_eq!((a.to_vec()?, b.to_vec()?), (vec![1, 5], vec![2, 6]));
    /// assert_eq!((c.to_vec()?, d.to_vec()?), (vec![3, 7], vec![4, 8]));
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn unzip(&self) -> (DeviceSeq<A>, DeviceSeq<B>, DeviceSeq<C>, DeviceSeq<D>) {
        let (dv, s) = (self.device(), self.sources());
        (
            DeviceSeq::from_source(dv, s[0].clone()),
            DeviceSeq::from_source(dv, s[1].clone()),
            DeviceSeq::from_source(dv, s[2].clone()),
            DeviceSeq::from_source(dv, s[3].clone()),
        )
    }
}

/// Sequences to zip into one sequence of tuples: a tuple of 2 to 8 `&DeviceSeq`s of elements
/// (for [`DeviceSeq::zip_all`]).
pub trait ZipSeqs: crate::item::sealed::Sealed {
    /// The item of the zipped sequence.
    type Item: Item;
    /// The zipped sequence, the sequences checked alike.
    #[doc(hidden)]
    fn zipped(&self) -> Result<DeviceSeq<Self::Item>>;
}

impl<T: Item> DeviceSeq<T> {
    /// The sequence of tuples `(a[i], b[i], …)` of 2 to 8 sequences of elements: O(1), no copy,
    /// as [`zip`](DeviceSeq::zip) (`zip_all((&a, &b))` is `zip(&a, &b)`).
    ///
    /// # Errors
    ///
    /// `Error::LengthMismatch`; `Error::DeviceMismatch`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq, Expr};
    /// let dev = Device::auto()?;
    /// let x = DeviceSeq::from_slice(&dev, &[1.5f64, -2.0, 4.0])?;
    /// let n = DeviceSeq::<u64>::sequence(&dev, 3)?;
    /// // Seven statistics of one pass: count, sum, sum of squares, min, max, first, last.
    /// let ones = n.map(|_| Expr::constant(1u64))?;
    /// let stats = DeviceSeq::zip_all((&ones, &x, &x.map(|v| v * v)?, &x, &x, &n, &n))?;
    /// let (count, sum, sq, lo, hi, _, _) = stats
    ///     .reduce_with(|a, b| (a.0 + b.0, a.1 + b.1, a.2 + b.2, a.3.min(b.3), a.4.max(b.4), a.5, b.6))?
    ///     .unwrap();
    /// assert_eq!((count, sum, sq, lo, hi), (3, 3.5, 22.25, -2.0, 4.0));
    /// assert_eq!(stats.unzip().6.to_vec()?, [0, 1, 2]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn zip_all<Z: ZipSeqs<Item = T>>(seqs: Z) -> Result<Self> {
        seqs.zipped()
    }
}

macro_rules! zip_seqs {
    ($(($A:ident $a:tt $(, $T:ident $k:tt)+))*) => {$(
        impl<$A: Element $(, $T: Element)+> crate::item::sealed::Sealed
            for (&DeviceSeq<$A>, $(&DeviceSeq<$T>,)+) {}
        impl<$A: Element $(, $T: Element)+> ZipSeqs for (&DeviceSeq<$A>, $(&DeviceSeq<$T>,)+) {
            type Item = ($A, $($T,)+);
            fn zipped(&self) -> Result<DeviceSeq<Self::Item>> {
                let first = self.$a;
                $(
                    first.same_device(self.$k)?;
                    length(first.len(), self.$k.len())?;
                )+
                let comps = vec![first.source().clone() $(, self.$k.source().clone())+];
                Ok(DeviceSeq::from_sources(first.device(), comps))
            }
        }
    )*};
}
zip_seqs! {
    (A 0, B 1)
    (A 0, B 1, C 2)
    (A 0, B 1, C 2, D 3)
    (A 0, B 1, C 2, D 3, E 4)
    (A 0, B 1, C 2, D 3, E 4, F 5)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7)
}

macro_rules! unzip_wide {
    ($(($($T:ident $k:tt),+))*) => {$(
        impl<$($T: Element),+> DeviceSeq<($($T,)+)> {
            /// The components: O(1), no copy.
            ///
            /// # Examples
            ///
            /// ```
            /// use devseq::{Device, DeviceSeq};
            /// let dev = Device::auto()?;
            /// let x = DeviceSeq::<u8>::sequence(&dev, 2)?;
            /// let wide = DeviceSeq::zip_all((&x, &x, &x, &x, &x, &x, &x, &x))?;
            /// assert_eq!(wide.unzip().7.to_vec()?, [0, 1]);
            /// # Ok::<(), devseq::Error>(())
            /// ```
            pub fn unzip(&self) -> ($(DeviceSeq<$T>,)+) {
                let (d, s) = (self.device(), self.sources());
                ($(DeviceSeq::from_source(d, s[$k].clone()),)+)
            }
        }
    )*};
}
unzip_wide! {
    (A 0, B 1, C 2, D 3, E 4)
    (A 0, B 1, C 2, D 3, E 4, F 5)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7)
}
