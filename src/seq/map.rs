//! `map`, `zip_map` and `cast`: lazy sequences over traced closures, one source for each
//! component of the result.

use super::{DeviceSeq, length};
use crate::error::Result;
use crate::expr::{self, Traced};
use crate::item::{Element, Exprs, Item};
use crate::source::Source;

/// The sequence of the traced closure's result over `inputs` (every component of every
/// argument, in order).
fn mapped<R: Item>(
    dev: &crate::device::Device,
    inputs: &[&Source],
    t: &Traced,
    len: usize,
) -> DeviceSeq<R> {
    let comps = (0..t.outs.len())
        .map(|k| Source::map_out(inputs, t, k, len))
        .collect();
    DeviceSeq::from_sources(dev, comps)
}

impl<T: Item> DeviceSeq<T> {
    /// `out[i] = f(self[i])`.
    ///
    /// `f` is called once, on the host, with an [`Expr`](crate::Expr) standing for the element (for a tuple
    /// item, a tuple of them: `|(a, b)| ...`); what it returns (an `Expr`, or a tuple of them,
    /// which makes a sequence of tuples) is compiled for the device (NVRTC, cached in memory and
    /// on disk) or interpreted by the host backend, with the semantics [`Expr`](crate::Expr) describes.
    ///
    /// The result is lazy: nothing runs until an operation reads it, and that operation
    /// evaluates `f` inside its own kernel (`xs.map(|x| x * x)?.reduce(Op::Add)` reads `xs`
    /// once and stores nothing). Constants of the closure are kernel parameters, so closures
    /// that differ only in their constants share one compiled kernel.
    ///
    /// Cost: none until read; then one read of the input where it is read.
    ///
    /// # Errors
    ///
    /// `Error::InvalidArgument` where the closure uses an `Expr` from another closure. A
    /// compile error is reported by the operation that first reads the result.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[1.5f32, -2.0, 4.0])?;
    /// let ys = xs.map(|x| (x * 2.0 + 1.0).max(0.0))?;
    /// let want: Vec<f32> = [1.5f32, -2.0, 4.0].iter().map(|x| (x * 2.0 + 1.0).max(0.0)).collect();
    /// assert_eq!(ys.to_vec()?, want);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn map<R: Exprs>(&self, f: impl Fn(T::Exprs) -> R) -> Result<DeviceSeq<R::Item>> {
        let t = expr::trace(T::TYPES, |a, id| f(T::Exprs::from_nodes(id, a)))?;
        let inputs: Vec<&Source> = self.sources().iter().collect();
        Ok(mapped(self.device(), &inputs, &t, self.len()))
    }
    /// `out[i] = f(self[i], other[i])`.
    ///
    /// Lazy, as [`map`](Self::map).
    ///
    /// # Errors
    ///
    /// `Error::LengthMismatch` where the lengths differ; `Error::DeviceMismatch`; as
    /// [`map`](Self::map).
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq, Expr};
    /// let dev = Device::auto()?;
    /// let a = DeviceSeq::from_slice(&dev, &[1i32, 5, 3])?;
    /// let b = DeviceSeq::from_slice(&dev, &[4u8, 2, 3])?;
    /// let c = a.zip_map(&b, |x, y| x - y.cast::<i32>())?;
    /// assert_eq!(c.to_vec()?, [-3, 3, 0]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn zip_map<U: Item, R: Exprs>(
        &self,
        other: &DeviceSeq<U>,
        f: impl Fn(T::Exprs, U::Exprs) -> R,
    ) -> Result<DeviceSeq<R::Item>> {
        self.same_device(other)?;
        length(self.len(), other.len())?;
        let n = T::TYPES.len();
        let types: Vec<_> = T::TYPES.iter().chain(U::TYPES).copied().collect();
        let t = expr::trace(&types, |a, id| {
            f(
                T::Exprs::from_nodes(id, &a[..n]),
                U::Exprs::from_nodes(id, &a[n..]),
            )
        })?;
        let inputs: Vec<&Source> = self.sources().iter().chain(other.sources()).collect();
        Ok(mapped(self.device(), &inputs, &t, self.len()))
    }
}

impl<T: Element> DeviceSeq<T> {
    /// Element-wise conversion with Rust's `as` semantics (float to integer saturates, NaN
    /// gives 0; to `f16`/`bf16` through `f32`).
    ///
    /// Lazy, as [`map`](Self::map).
    ///
    /// # Errors
    ///
    /// As [`map`](Self::map).
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[-1.5f64, 300.7, f64::NAN])?;
    /// assert_eq!(xs.cast::<u8>()?.to_vec()?, [0, 255, 0]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn cast<U: Element>(&self) -> Result<DeviceSeq<U>> {
        self.map(|x| x.cast::<U>())
    }
}
