//! `inclusive_scan` and `exclusive_scan`.

use super::DeviceSeq;
use crate::error::Result;
use crate::item::Element;
use crate::op::Op;

impl<T: Element> DeviceSeq<T> {
    /// `out[i] = self[0] op … op self[i]`.
    ///
    /// Deterministic, floats included: a single pass (each element read and written once)
    /// whose look-back combines tile aggregates in a fixed order (docs/algorithms.md).
    /// `f16`/`bf16` accumulate in `f32` and round each output once.
    ///
    /// Cost: one read and one write of the sequence.
    ///
    /// # Errors
    ///
    /// `Error::UnsupportedOp` for a bitwise `op` on a float type; `Error::OutOfMemory`;
    /// `Error::Cuda`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq, Op};
    /// let dev = Device::auto()?;
    /// let v = [3i32, -1, 4, -1, 5];
    /// let xs = DeviceSeq::from_slice(&dev, &v)?;
    /// let want: Vec<i32> = v.iter().scan(0, |s, x| { *s += x; Some(*s) }).collect();
    /// assert_eq!(xs.inclusive_scan(Op::Add)?.to_vec()?, want);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn inclusive_scan(&self, op: Op) -> Result<Self> {
        op.check::<T>()?;
        let col = self.device().backend().scan(self.source(), op, None)?;
        Ok(Self::stored(self.device(), col))
    }
    /// `out[0] = init`, `out[i] = init op self[0] op … op self[i-1]`.
    ///
    /// Deterministic as [`inclusive_scan`](Self::inclusive_scan).
    ///
    /// Cost: one read and one write of the sequence.
    ///
    /// # Errors
    ///
    /// As [`inclusive_scan`](Self::inclusive_scan).
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq, Op};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[5u32, 1, 7, 2])?;
    /// assert_eq!(xs.exclusive_scan(100, Op::Min)?.to_vec()?, [100, 5, 1, 1]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn exclusive_scan(&self, init: T, op: Op) -> Result<Self> {
        op.check::<T>()?;
        let init = Some(init.compute_bits());
        let col = self.device().backend().scan(self.source(), op, init)?;
        Ok(Self::stored(self.device(), col))
    }
}
