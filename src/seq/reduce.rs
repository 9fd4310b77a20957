//! `reduce`, `reduce_to_seq` and `fold`.

use super::DeviceSeq;
use crate::error::Result;
use crate::item::Element;
use crate::op::Op;

impl<T: Element> DeviceSeq<T> {
    /// The `op`-combination of all elements; the identity of `op` when empty.
    ///
    /// Integers wrap; `f16`/`bf16` accumulate in `f32` and round once. Deterministic: the
    /// combination order depends only on the length and the device, so float sums are the
    /// same on every run (on the GPU: a fixed grid, a fixed tree per block, then the blocks
    /// in order).
    ///
    /// Cost: one read of the sequence (a lazy one evaluated in the same pass); waits for the
    /// result.
    ///
    /// # Errors
    ///
    /// `Error::UnsupportedOp` for a bitwise `op` on a float type; `Error::Cuda`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq, Op};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[200u8, 100, 7])?;
    /// assert_eq!(xs.reduce(Op::Add)?, [200u8, 100, 7].iter().fold(0u8, |a, b| a.wrapping_add(*b)));
    /// assert_eq!(xs.reduce(Op::Max)?, 200);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn reduce(&self, op: Op) -> Result<T> {
        op.check::<T>()?;
        if self.is_empty() {
            return op.identity::<T>();
        }
        Ok(T::from_bits(
            self.device().backend().reduce(self.source(), op)?,
        ))
    }
    /// As [`reduce`](Self::reduce), with the result left on the device as a one-element
    /// sequence (no waiting): for pipelines that use it there, and for timing the reduction
    /// alone.
    ///
    /// # Errors
    ///
    /// As [`reduce`](Self::reduce); `Error::OutOfMemory`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq, Op};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[1.0f64, 2.0, 4.0])?;
    /// assert_eq!(xs.reduce_to_seq(Op::Add)?.to_vec()?, [7.0]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn reduce_to_seq(&self, op: Op) -> Result<Self> {
        op.check::<T>()?;
        if self.is_empty() {
            return DeviceSeq::from_slice(self.device(), &[op.identity::<T>()?]);
        }
        let col = self
            .device()
            .backend()
            .reduce_to_column(self.source(), op)?;
        Ok(Self::stored(self.device(), col))
    }
    /// `op(init, self.reduce(op))`.
    ///
    /// # Errors
    ///
    /// As [`reduce`](Self::reduce).
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq, Op};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[2i32, 3, 4])?;
    /// assert_eq!(xs.fold(10, Op::Mul)?, 10 * 2 * 3 * 4);
    /// assert_eq!(xs.slice(0..0).fold(5, Op::Min)?, 5);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn fold(&self, init: T, op: Op) -> Result<T> {
        let r = self.reduce(op)?;
        Ok(T::from_compute(
            op.combine(init.to_compute(), r.to_compute()),
        ))
    }
}

impl DeviceSeq<bool> {
    /// The number of `true`s.
    ///
    /// Cost: one read (a lazy sequence, such as a comparison, evaluated in the same pass);
    /// waits for the result. Counts past 2^32 are exact (a `u64` sum).
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
    /// let xs = DeviceSeq::<u32>::sequence(&dev, 1000)?;
    /// assert_eq!(xs.map(|x| x.lt(300))?.count()?, 300);
    /// assert_eq!(DeviceSeq::<bool>::filled(&dev, true, 0)?.count()?, 0);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn count(&self) -> Result<u64> {
        self.map(|b| b.cast::<u64>())?.reduce(Op::Add)
    }

    /// Whether any element is `true` (`false` when empty).
    ///
    /// Cost: one read; waits for the result.
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
    /// let xs = DeviceSeq::from_slice(&dev, &[3i32, -1, 8])?;
    /// assert!(xs.map(|x| x.lt(0))?.any()?);
    /// assert!(!xs.map(|x| x.gt(10))?.any()?);
    /// assert!(!DeviceSeq::<bool>::from_slice(&dev, &[])?.any()?);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn any(&self) -> Result<bool> {
        self.reduce(Op::Max)
    }

    /// Whether every element is `true` (`true` when empty).
    ///
    /// Cost: one read; waits for the result.
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
    /// let xs = DeviceSeq::from_slice(&dev, &[3i32, -1, 8])?;
    /// assert!(xs.map(|x| x.ne(0))?.all()?);
    /// assert!(!xs.map(|x| x.gt(0))?.all()?);
    /// assert!(DeviceSeq::<bool>::from_slice(&dev, &[])?.all()?);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn all(&self) -> Result<bool> {
        self.reduce(Op::Min)
    }
}

impl<T: crate::item::Item> DeviceSeq<T> {
    /// The number of items for which `pred` is true, in one pass (the predicate evaluated
    /// inside the reduction's kernel, nothing stored): Thrust's `count_if`.
    ///
    /// # Errors
    ///
    /// As [`map`](Self::map) for the closure; `Error::Cuda`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let pts = DeviceSeq::from_slice(&dev, &[(0.5f32, 0.5f32), (0.9, 0.9), (0.1, 0.2)])?;
    /// assert_eq!(pts.count_if(|(x, y)| (x * x + y * y).le(1.0))?, 2);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn count_if(&self, pred: impl Fn(T::Exprs) -> crate::item::Expr<bool>) -> Result<u64> {
        self.map(pred)?.count()
    }
}
