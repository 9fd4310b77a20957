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
