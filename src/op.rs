//! `Op`: the binary operators of reductions and scans.

use crate::element::{Element, Num, ScalarType};
use crate::error::{Error, Result};

/// A binary, associative operator for `reduce`, `fold`, the scans, `segmented_reduce` and
/// `scatter_combine`.
///
/// | op | identity |
/// | --- | --- |
/// | `Add` | 0 |
/// | `Mul` | 1 |
/// | `Min` | the type's largest value (`+inf` for floats) |
/// | `Max` | the type's smallest value (`-inf` for floats) |
/// | `BitAnd` | all ones |
/// | `BitOr`, `BitXor` | 0 |
///
/// Integer `Add` and `Mul` wrap. Float `Min`/`Max` ignore a NaN operand unless both are NaN
/// (as `f32::min`/`f32::max`). The bitwise ops on a float type are
/// `Err(Error::UnsupportedOp { .. })`.
///
/// # Examples
///
/// ```
/// use devseq::{Device, DeviceSeq, Op};
/// let dev = Device::auto()?;
/// let xs = DeviceSeq::from_slice(&dev, &[3u8, 5, 6])?;
/// assert_eq!(xs.reduce(Op::BitXor)?, 3 ^ 5 ^ 6);
/// assert_eq!(Op::Min.identity::<i16>()?, i16::MAX);
/// # Ok::<(), devseq::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    /// `a + b` (wrapping for integers).
    Add,
    /// `a * b` (wrapping for integers).
    Mul,
    /// The smaller of `a` and `b`.
    Min,
    /// The larger of `a` and `b`.
    Max,
    /// `a & b` (integers only).
    BitAnd,
    /// `a | b` (integers only).
    BitOr,
    /// `a ^ b` (integers only).
    BitXor,
}

impl Op {
    /// All seven operators, in declaration order.
    pub const ALL: [Op; 7] = [
        Op::Add,
        Op::Mul,
        Op::Min,
        Op::Max,
        Op::BitAnd,
        Op::BitOr,
        Op::BitXor,
    ];

    /// Whether this is one of the bitwise operators, which apply to integer types only.
    pub fn is_bitwise(self) -> bool {
        matches!(self, Op::BitAnd | Op::BitOr | Op::BitXor)
    }

    /// The operator's identity for `T` (the value `reduce` returns for an empty sequence).
    ///
    /// # Errors
    ///
    /// `Error::UnsupportedOp` for a bitwise operator on a float type.
    pub fn identity<T: Element>(self) -> Result<T> {
        self.check::<T>()?;
        Ok(T::from_compute(<T::Compute as Num>::identity(self)))
    }

    /// `Err(UnsupportedOp)` where the operator does not apply to `T`.
    pub(crate) fn check<T: Element>(self) -> Result<()> {
        check_op(self, T::TYPE)
    }
}

/// `Err(UnsupportedOp)` where `op` does not apply to elements of type `ty`.
pub(crate) fn check_op(op: Op, ty: ScalarType) -> Result<()> {
    if op.is_bitwise() && ty.is_float() {
        return Err(Error::UnsupportedOp { op, ty: ty.name() });
    }
    Ok(())
}
