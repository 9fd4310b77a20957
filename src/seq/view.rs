//! Lazy views: `gather` by indices (stored or lazy), `step_by`, `reverse`, `shift`, `concat`,
//! `adjacent_difference`. Each is one lazy source (`source/view.rs`) that fuses into whatever
//! reads it, as `map` does; `copy()` stores one.

use super::DeviceSeq;
use crate::error::{Error, Result};
use crate::item::{Element, Expr, Index, Item};
use crate::op::Op;
use crate::source::Source;

impl<T: Item> DeviceSeq<T> {
    /// This sequence's sources, stored first where a view cannot read them at other rows
    /// (head flags and random sequences are defined by the row they stand at).
    fn readable_at_rows(&self) -> Result<Self> {
        if self.sources().iter().all(Source::readable_at_rows) {
            Ok(self.clone())
        } else {
            self.copy()
        }
    }

    fn view(&self, f: impl Fn(&Source) -> Source) -> Result<Self> {
        let src = self.readable_at_rows()?;
        let comps = src.sources().iter().map(f).collect();
        Ok(Self::from_sources(self.device(), comps))
    }

    /// `out[i] = self[indices[i]]`; `out.len() == indices.len()`. Lazy (Thrust's
    /// `permutation_iterator`): nothing is read until a consumer reads the result, inside the
    /// consumer's kernel, so `xs.gather(&idx)?.reduce(Op::Add)` is one pass over the indices
    /// and the elements they pick; `indices` may be lazy too. `copy()` stores the result.
    ///
    /// The indices are checked here, before the result exists: a reduction of them (one read
    /// of a stored sequence of indices, or one evaluation of a lazy one), waiting for its
    /// result.
    ///
    /// Cost: that check; then, where the result is read, one read of the indices and one
    /// random read per index, in the reader's pass.
    ///
    /// # Errors
    ///
    /// `Error::IndexOutOfBounds { index, len }` for the index at the lowest position that is
    /// not below `self.len()` (nothing is computed); `Error::DeviceMismatch`;
    /// `Error::OutOfMemory`; `Error::Cuda`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq, Error, Op};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[1.5f32, 2.5, 3.5])?;
    /// let idx = DeviceSeq::from_slice(&dev, &[2u32, 0, 2])?;
    /// let picked = xs.gather(&idx)?;
    /// assert!(!picked.is_stored());
    /// assert_eq!(picked.to_vec()?, [3.5, 1.5, 3.5]);
    /// assert_eq!(picked.reduce(Op::Add)?, 8.5); // one pass, nothing stored
    /// let bad = DeviceSeq::from_slice(&dev, &[0u64, 3, 7])?;
    /// assert!(matches!(xs.gather(&bad), Err(Error::IndexOutOfBounds { index: 3, len: 3 })));
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn gather<I: Index>(&self, indices: &DeviceSeq<I>) -> Result<Self> {
        self.same_device(indices)?;
        check_indices(indices, self.len())?;
        if indices.is_empty() {
            return Self::empty(self.device());
        }
        let rows = indices.source().clone();
        self.view(|s| s.gathered(&rows))
    }

    /// An empty stored sequence.
    fn empty(dev: &crate::Device) -> Result<Self> {
        let comps = T::TYPES
            .iter()
            .map(|&ty| Source::constant(ty, 0, 0))
            .collect();
        Ok(Self::from_sources(dev, comps))
    }

    /// Elements `0, step, 2 step, …` (Thrust's strided range); lazy.
    ///
    /// # Errors
    ///
    /// `Error::InvalidArgument` for a step of 0; `Error::OutOfMemory` and `Error::Cuda` where
    /// a sequence of head flags or random numbers is stored first.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::<u32>::sequence(&dev, 10)?;
    /// assert_eq!(xs.step_by(3)?.to_vec()?, [0, 3, 6, 9]);
    /// assert_eq!(xs.slice(1..).step_by(4)?.to_vec()?, [1, 5, 9]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn step_by(&self, step: usize) -> Result<Self> {
        if step == 0 {
            return Err(Error::InvalidArgument("step_by(0)".into()));
        }
        self.view(|s| s.strided(step))
    }

    /// The elements in reverse order; lazy.
    ///
    /// # Errors
    ///
    /// As [`step_by`](Self::step_by), bar the step.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[(1u8, 'a' as u32), (2, 'b' as u32), (3, 'c' as u32)])?;
    /// assert_eq!(xs.reverse()?.to_vec()?, [(3, 'c' as u32), (2, 'b' as u32), (1, 'a' as u32)]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn reverse(&self) -> Result<Self> {
        self.view(Source::reversed)
    }

    /// `self`'s elements, then `other`'s; lazy (each element read from the one it comes from).
    ///
    /// # Errors
    ///
    /// `Error::DeviceMismatch`; as [`step_by`](Self::step_by), bar the step.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let a = DeviceSeq::from_slice(&dev, &[1i16, 2])?;
    /// let b = DeviceSeq::<i16>::sequence(&dev, 3)?.map(|x| x * 10)?;
    /// assert_eq!(a.concat(&b)?.to_vec()?, [1, 2, 0, 10, 20]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn concat(&self, other: &DeviceSeq<T>) -> Result<Self> {
        self.same_device(other)?;
        super::lazy_len(self.len().saturating_add(other.len()))?;
        let (a, b) = (self.readable_at_rows()?, other.readable_at_rows()?);
        let comps = a
            .sources()
            .iter()
            .zip(b.sources())
            .map(|(x, y)| x.concat(y))
            .collect();
        Ok(Self::from_sources(self.device(), comps))
    }
}

impl<T: Element> DeviceSeq<T> {
    /// The same length, `out[i] = self[i - k]` where `0 <= i - k < len`, else `fill`; lazy.
    /// A stencil reads its neighbours through shifts: `x.zip_map(&x.shift(1, 0.0)?, ...)`.
    ///
    /// # Errors
    ///
    /// As [`step_by`](Self::step_by), bar the step.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[1.0f32, 2.0, 4.0, 8.0])?;
    /// assert_eq!(xs.shift(1, 0.0)?.to_vec()?, [0.0, 1.0, 2.0, 4.0]);
    /// assert_eq!(xs.shift(-2, -1.0)?.to_vec()?, [4.0, 8.0, -1.0, -1.0]);
    /// // A three-point stencil in one pass:
    /// let (l, r) = (xs.shift(1, 0.0)?, xs.shift(-1, 0.0)?);
    /// let s = xs.zip_map(&l, |x, l| x * 2.0 + l)?.zip_map(&r, |a, r| a + r)?;
    /// assert_eq!(s.to_vec()?, [4.0, 9.0, 18.0, 20.0]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn shift(&self, k: isize, fill: T) -> Result<Self> {
        let fill = fill.compute_bits();
        self.view(|s| s.shifted_by(k, fill))
    }

    /// `out[0] = self[0]`, `out[i] = self[i] - self[i - 1]` (Thrust's `adjacent_difference`),
    /// wrapping for integers; lazy.
    ///
    /// # Errors
    ///
    /// `Error::UnsupportedOp` for `bool`; as [`step_by`](Self::step_by), bar the step.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[3i32, 4, 9, 1])?;
    /// assert_eq!(xs.adjacent_difference()?.to_vec()?, [3, 1, 5, -8]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn adjacent_difference(&self) -> Result<Self> {
        if T::TYPE == crate::item::ScalarType::Bool {
            return Err(Error::UnsupportedOp {
                op: Op::Add,
                ty: T::TYPE.name(),
            });
        }
        let before = self.shift(1, T::default())?;
        let at = DeviceSeq::<u64>::sequence(self.device(), self.len())?;
        self.zip_map(&before, |x, p| (x, p))?
            .zip_map(&at, |(x, p), i| Expr::select(i.eq(0u64), x, x - p))
    }
}

/// Checks that every index is below `len`: one reduction, and where it fails the lowest
/// position of an index that is not.
fn check_indices<I: Index>(indices: &DeviceSeq<I>, len: usize) -> Result<()> {
    if indices.is_empty() {
        return Ok(());
    }
    // One index for all (`filled`): no pass.
    let max = match indices.source().as_constant() {
        Some(bits) => bits,
        None => indices.reduce(Op::Max)?.to_u64(),
    };
    if max < len as u64 {
        return Ok(());
    }
    let n = len as u64;
    let bad = indices
        .map(|i| i.cast::<u64>().ge(n))?
        .nonzero_indices::<u64>()?
        .first()?
        .unwrap_or(0);
    Err(Error::IndexOutOfBounds {
        index: indices.get(bad as usize)?.to_u64(),
        len,
    })
}
