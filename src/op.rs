//! `Op`: the binary operators of reductions and scans.

use crate::error::{Error, Result};
use crate::item::{Element, Num, ScalarType};

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
/// `Err(Error::UnsupportedOp { .. })`. On `bool`, `Min` and `BitAnd` are and, `Max` and `BitOr`
/// or, `BitXor` xor; `Add` and `Mul` are `Err(Error::UnsupportedOp { .. })` (count the trues
/// with `count()`).
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
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq, Op};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[6u8, 3, 5])?;
    /// let all: Vec<u8> = Op::ALL.iter().map(|&op| xs.reduce(op)).collect::<Result<_, _>>()?;
    /// assert_eq!(all, [14, 90, 3, 6, 0, 7, 0]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
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
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq, Error, Op};
    /// let dev = Device::auto()?;
    /// assert_eq!(Op::ALL.iter().filter(|op| op.is_bitwise()).count(), 3);
    /// let xs = DeviceSeq::from_slice(&dev, &[1.0f32, 2.0])?;
    /// for op in Op::ALL {
    ///     let r = xs.reduce(op);
    ///     assert_eq!(op.is_bitwise(), matches!(r, Err(Error::UnsupportedOp { .. })));
    /// }
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn is_bitwise(self) -> bool {
        matches!(self, Op::BitAnd | Op::BitOr | Op::BitXor)
    }

    /// The operator's identity for `T` (the value `reduce` returns for an empty sequence).
    ///
    /// # Errors
    ///
    /// `Error::UnsupportedOp` for a bitwise operator on a float type.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq, Error, Op};
    /// assert_eq!(Op::Add.identity::<i32>()?, 0);
    /// assert_eq!(Op::Mul.identity::<f64>()?, 1.0);
    /// assert_eq!(Op::Max.identity::<f32>()?, f32::NEG_INFINITY);
    /// assert_eq!(Op::BitAnd.identity::<u16>()?, 0xffff);
    /// assert!(matches!(Op::BitOr.identity::<f32>(), Err(Error::UnsupportedOp { .. })));
    /// let empty = DeviceSeq::<u64>::from_slice(&Device::auto()?, &[])?;
    /// assert_eq!(empty.reduce(Op::Min)?, Op::Min.identity::<u64>()?);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn identity<T: Element>(self) -> Result<T> {
        self.check::<T>()?;
        Ok(T::from_compute(self.identity_of::<T::Compute>()))
    }

    /// The API's identity of the operator in compute type `C`.
    pub(crate) fn identity_of<C: Num>(self) -> C {
        match self {
            Op::Add | Op::BitOr | Op::BitXor => C::zero(),
            Op::Mul => C::one(),
            Op::Min => C::highest(),
            Op::Max => C::lowest(),
            Op::BitAnd => C::ones(),
        }
    }

    /// An element `e` with `combine(e, x) == combine(x, e) == x` bit for bit (`-0.0` for
    /// float `Add`, NaN for float `Min`/`Max`, which ignore NaN operands): it seeds
    /// accumulators without changing any result.
    pub(crate) fn neutral_of<C: Num>(self) -> C {
        match self {
            Op::Add if C::FLOAT => C::neg_zero(),
            Op::Min | Op::Max if C::FLOAT => C::nan(),
            _ => self.identity_of::<C>(),
        }
    }

    /// `a op b` in compute type `C` (callers have checked that the operator applies).
    #[inline]
    pub(crate) fn combine<C: Num>(self, a: C, b: C) -> C {
        match self {
            Op::Add => a.add(b),
            Op::Mul => a.mul(b),
            Op::Min => a.min_of(b),
            Op::Max => a.max_of(b),
            Op::BitAnd => a.and(b),
            Op::BitOr => a.or(b),
            Op::BitXor => a.xor(b),
        }
    }

    /// `Err(UnsupportedOp)` where the operator does not apply to `T`.
    pub(crate) fn check<T: Element>(self) -> Result<()> {
        check_op(self, T::TYPE)
    }

    /// Whether the operator applies to elements of type `ty` (the bitwise ones to integers and
    /// `bool` only, `Add` and `Mul` to all but `bool`).
    pub(crate) fn applies_to(self, ty: ScalarType) -> bool {
        match ty {
            ScalarType::Bool => !matches!(self, Op::Add | Op::Mul),
            t => !(self.is_bitwise() && t.is_float()),
        }
    }
}

/// `Err(UnsupportedOp)` where `op` does not apply to elements of type `ty`.
pub(crate) fn check_op(op: Op, ty: ScalarType) -> Result<()> {
    if !op.applies_to(ty) {
        return Err(Error::UnsupportedOp { op, ty: ty.name() });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neutral_elements_are_exact() {
        for op in [Op::Add, Op::Mul, Op::Min, Op::Max] {
            for x in [0.0f32, -0.0, 1.5, -3.25, f32::INFINITY, f32::NEG_INFINITY] {
                let e = op.neutral_of::<f32>();
                assert_eq!(op.combine(e, x).to_bits(), x.to_bits(), "{op:?} {x}");
                assert_eq!(op.combine(x, e).to_bits(), x.to_bits(), "{op:?} {x}");
            }
        }
        assert!(Op::Min.combine(f32::NAN, f32::NAN).is_nan());
        assert_eq!(Op::Min.combine(f32::NAN, 2.0), 2.0);
        assert_eq!(Op::Max.combine(2.0, f32::NAN), 2.0);
        assert_eq!(Op::BitAnd.identity_of::<u8>(), 0xff);
    }
}
