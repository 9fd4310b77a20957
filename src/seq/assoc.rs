//! Custom associative operators: the `_with` methods, over any item, and `argmin`/`argmax`.
//!
//! A two-argument closure is traced once into a combiner (`expr/combiner.rs`). A closure that
//! is one built-in operation on one element (`|a, b| a + b`) runs on the `Op` kernels, with
//! their bits; any other runs on the combiner kernels: a reduction over fixed contiguous
//! chunks, and a scan that reduces the chunks, scans their totals, then scans each chunk from
//! its prefix (docs/algorithms.md). The left operand always holds the earlier elements.

use super::{DeviceSeq, length};
use crate::backend::ScanMode;
use crate::error::{Error, Result};
use crate::expr::Traced;
use crate::expr::combiner::Combiner;
use crate::item::ordered;
use crate::item::{Element, Expr, Flag, Index, Item, Key};
use crate::op::{Op, check_op};
use crate::source::Source;

/// An item's components as compute bits.
fn compute_bits<T: Item>(x: &T) -> Vec<u64> {
    let b = x.item_bits();
    T::TYPES
        .iter()
        .enumerate()
        .map(|(k, t)| t.compute_from_stored(b[k]))
        .collect()
}

/// The item whose components have these compute bits (rounded to f16/bf16 where stored so).
fn from_compute_bits<T: Item>(bits: &[u64]) -> T {
    let stored: Vec<u64> = T::TYPES
        .iter()
        .zip(bits)
        .map(|(t, &b)| t.stored_from_compute(b))
        .collect();
    T::from_item_bits(&stored)
}

/// The built-in operator of `c`, where it has one that applies to its element type.
fn builtin(c: &Combiner) -> Option<Op> {
    let op = c.builtin()?;
    check_op(op, c.types[0]).ok().map(|_| op)
}

/// The flags with element 0 a head whatever its flag (lazy).
fn forced_heads(flags: &DeviceSeq<u8>) -> Result<DeviceSeq<u8>> {
    let at = DeviceSeq::<u64>::sequence(flags.device(), flags.len())?;
    flags.zip_map(&at, |f, i| Expr::select(i.eq(0u64), 1u8, f))
}

impl<T: Item> DeviceSeq<T> {
    /// The `f`-combination of all items, in order (the left operand holds the earlier ones);
    /// `None` when empty.
    ///
    /// `f` must be associative (up to float rounding); it need not be commutative. It is
    /// traced once, like a [`map`](Self::map) closure, and compiled for the device.
    /// Deterministic: the grouping depends only on the length and the device.
    ///
    /// Cost: one read of the sequence (a lazy one evaluated in the same pass); waits for the
    /// result.
    ///
    /// # Errors
    ///
    /// `Error::InvalidArgument` where the closure returns an `Expr` of another closure;
    /// `Error::Compile`; `Error::OutOfMemory`; `Error::Cuda`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// // The sum and the sum of squares in one pass, from one column.
    /// let xs = DeviceSeq::from_slice(&dev, &[1.0f32, 2.0, 3.0])?;
    /// let s = xs.map(|x| (x, x * x))?.reduce_with(|(a, a2), (b, b2)| (a + b, a2 + b2))?;
    /// assert_eq!(s, Some((6.0, 14.0)));
    /// // Composition of affine maps x -> m x + c is not commutative: the order is kept.
    /// let maps = DeviceSeq::from_slice(&dev, &[(2i64, 1i64), (3, 0), (1, 5)])?;
    /// let all = maps.reduce_with(|(m1, c1), (m2, c2)| (m1 * m2, c1 * m2 + c2))?;
    /// assert_eq!(all, Some((6, 8))); // x -> ((2x + 1) * 3) + 5
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn reduce_with(&self, f: impl Fn(T::Exprs, T::Exprs) -> T::Exprs) -> Result<Option<T>> {
        let c = Combiner::trace::<T>(f)?;
        if self.is_empty() {
            return Ok(None);
        }
        let b = self.device().backend();
        if let Some(op) = builtin(&c) {
            return Ok(Some(T::from_item_bits(
                &[b.reduce(&self.sources()[0], op)?],
            )));
        }
        Ok(Some(from_compute_bits(&b.reduce_with(self.sources(), &c)?)))
    }

    /// `f(init, r)` where `r` is [`reduce_with`](Self::reduce_with)'s result; `init` when
    /// empty.
    ///
    /// # Errors
    ///
    /// As [`reduce_with`](Self::reduce_with).
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[3u32, 4])?;
    /// assert_eq!(xs.fold_with(10, |a, b| a * 2 + b)?, (10 * 2 + 3 * 2 + 4));
    /// assert_eq!(xs.slice(0..0).fold_with(10, |a, b| a * 2 + b)?, 10);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn fold_with(&self, init: T, f: impl Fn(T::Exprs, T::Exprs) -> T::Exprs) -> Result<T> {
        let c = Combiner::trace::<T>(&f)?;
        let Some(r) = self.reduce_with(&f)? else {
            return Ok(init);
        };
        let load = |x: &T| crate::expr::combiner::load_item(T::TYPES, &x.item_bits());
        // A built-in operator combines as `fold` does (a NaN result as the arithmetic gives it).
        let canon = builtin(&c).is_none();
        let v = c.apply(&load(&init), &load(&r), &mut c.scratch(), canon);
        let bits = crate::expr::combiner::store_item(T::TYPES, &v);
        Ok(T::from_item_bits(&bits))
    }

    /// `out[i] = self[0] f self[1] f … f self[i]`, for any associative `f` (see
    /// [`reduce_with`](Self::reduce_with)).
    ///
    /// Cost: two reads of the sequence (chunk totals, then the scan of each chunk from its
    /// prefix) and one write; a built-in operator (`|a, b| a + b`) runs the single-pass
    /// [`inclusive_scan`](Self::inclusive_scan) kernels instead.
    ///
    /// # Errors
    ///
    /// As [`reduce_with`](Self::reduce_with).
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// // h[i] = a[i] h[i-1] + b[i] from h[-1] = 0: a scan of affine maps (a, b).
    /// let ab = DeviceSeq::from_slice(&dev, &[(2.0f32, 1.0f32), (0.5, 2.0), (3.0, -1.0)])?;
    /// let h = ab.inclusive_scan_with(|(a1, b1), (a2, b2)| (a1 * a2, b1 * a2 + b2))?;
    /// let (_, h) = h.unzip();
    /// assert_eq!(h.to_vec()?, [1.0, 2.5, 6.5]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn inclusive_scan_with(&self, f: impl Fn(T::Exprs, T::Exprs) -> T::Exprs) -> Result<Self> {
        let c = Combiner::trace::<T>(f)?;
        if self.is_empty() {
            return self.copy();
        }
        let b = self.device().backend();
        if let Some(op) = builtin(&c) {
            let col = b.scan(&self.sources()[0], op, None)?;
            return Ok(Self::stored_columns(self.device(), vec![col]));
        }
        let cols = b.scan_with(self.sources(), &c, &ScanMode::Inclusive)?;
        Ok(Self::stored_columns(self.device(), cols))
    }

    /// `out[0] = init`, `out[i] = init f self[0] f … f self[i-1]`.
    ///
    /// Cost: as [`inclusive_scan_with`](Self::inclusive_scan_with).
    ///
    /// # Errors
    ///
    /// As [`reduce_with`](Self::reduce_with).
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq, Expr};
    /// let dev = Device::auto()?;
    /// // Fill forward: the last nonzero value before each position (associative, not
    /// // commutative).
    /// let xs = DeviceSeq::from_slice(&dev, &[0u64, 4, 0, 5])?;
    /// let ys = xs.exclusive_scan_with(7, |a, b| Expr::select(b.ne(0), b, a))?;
    /// assert_eq!(ys.to_vec()?, [7, 7, 4, 4]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn exclusive_scan_with(
        &self,
        init: T,
        f: impl Fn(T::Exprs, T::Exprs) -> T::Exprs,
    ) -> Result<Self> {
        let c = Combiner::trace::<T>(f)?;
        if self.is_empty() {
            return self.copy();
        }
        let b = self.device().backend();
        let init = compute_bits(&init);
        if let Some(op) = builtin(&c) {
            let col = b.scan(&self.sources()[0], op, Some(init[0]))?;
            return Ok(Self::stored_columns(self.device(), vec![col]));
        }
        let cols = b.scan_with(self.sources(), &c, &ScanMode::Exclusive(init))?;
        Ok(Self::stored_columns(self.device(), cols))
    }

    fn segment_check(&self, flags: &DeviceSeq<u8>) -> Result<()> {
        self.same_device(flags)?;
        length(self.len(), flags.len())
    }

    /// The components and the flags, as the items of a segmented combiner.
    fn with_flags(&self, flags: &DeviceSeq<u8>) -> Vec<Source> {
        let mut s = self.sources().to_vec();
        s.push(flags.source().clone());
        s
    }

    /// An inclusive scan by `f` that restarts at every segment head (a nonzero flag; element
    /// 0 always starts a segment).
    ///
    /// Cost: as [`inclusive_scan_with`](Self::inclusive_scan_with), the flags read with the
    /// items.
    ///
    /// # Errors
    ///
    /// `Error::LengthMismatch` where `flags` has another length; `Error::DeviceMismatch`; as
    /// [`reduce_with`](Self::reduce_with).
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq, Expr};
    /// let dev = Device::auto()?;
    /// // Fill forward within each segment.
    /// let xs = DeviceSeq::from_slice(&dev, &[4u32, 0, 0, 7, 0])?;
    /// let flags = DeviceSeq::from_slice(&dev, &[1u8, 0, 1, 0, 0])?;
    /// let ys = xs.segmented_inclusive_scan_with(&flags, |a, b| Expr::select(b.ne(0), b, a))?;
    /// assert_eq!(ys.to_vec()?, [4, 4, 0, 7, 7]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn segmented_inclusive_scan_with<F: Flag>(
        &self,
        flags: &DeviceSeq<F>,
        f: impl Fn(T::Exprs, T::Exprs) -> T::Exprs,
    ) -> Result<Self> {
        let c = Combiner::trace::<T>(f)?;
        let flags = &flags.flags_u8()?;
        self.segment_check(flags)?;
        if self.is_empty() {
            return self.copy();
        }
        let b = self.device().backend();
        if let Some(op) = builtin(&c) {
            let col = b.segmented_scan(&self.sources()[0], flags.source(), op, None)?;
            return Ok(Self::stored_columns(self.device(), vec![col]));
        }
        let seg = c.segmented();
        let cols = b.scan_with(&self.with_flags(flags), &seg, &ScanMode::Inclusive)?;
        Ok(Self::stored_columns(self.device(), cols))
    }

    /// An exclusive scan by `f` that restarts, with `init`, at every segment head.
    ///
    /// Cost: as [`segmented_inclusive_scan_with`](Self::segmented_inclusive_scan_with).
    ///
    /// # Errors
    ///
    /// As [`segmented_inclusive_scan_with`](Self::segmented_inclusive_scan_with).
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq, Expr};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[1u32, 0, 3, 0])?;
    /// let flags = DeviceSeq::from_slice(&dev, &[0u8, 0, 1, 0])?;
    /// let ys = xs.segmented_exclusive_scan_with(&flags, 5, |a, b| Expr::select(b.ne(0), b, a))?;
    /// assert_eq!(ys.to_vec()?, [5, 1, 5, 3]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn segmented_exclusive_scan_with<F: Flag>(
        &self,
        flags: &DeviceSeq<F>,
        init: T,
        f: impl Fn(T::Exprs, T::Exprs) -> T::Exprs,
    ) -> Result<Self> {
        let c = Combiner::trace::<T>(f)?;
        let flags = &flags.flags_u8()?;
        self.segment_check(flags)?;
        if self.is_empty() {
            return self.copy();
        }
        let b = self.device().backend();
        let init = compute_bits(&init);
        if let Some(op) = builtin(&c) {
            let col = b.segmented_scan(&self.sources()[0], flags.source(), op, Some(init[0]))?;
            return Ok(Self::stored_columns(self.device(), vec![col]));
        }
        // Each segment's first item combined with `init` first (lazily, in the scan's read):
        // then the exclusive prefix of a non-head is `init f` its segment's items before it.
        // Element 0 is a head whatever its flag.
        let flags = &forced_heads(flags)?;
        let t = c.head_transform(Some(&init));
        let mut init = init;
        init.push(1);
        self.head_scan(
            &self.with_flags(flags),
            &t,
            &c,
            &ScanMode::SegmentedExclusive(init),
        )
    }

    /// One item per segment, in order: the `f`-combination of each segment's items.
    ///
    /// Cost: the segmented inclusive scan, the positions of the heads (a compaction), and a
    /// gather of each segment's last item.
    ///
    /// # Errors
    ///
    /// As [`segmented_inclusive_scan_with`](Self::segmented_inclusive_scan_with).
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq, Expr};
    /// let dev = Device::auto()?;
    /// // The last nonzero value of each segment.
    /// let xs = DeviceSeq::from_slice(&dev, &[4u32, 0, 0, 7, 0])?;
    /// let flags = DeviceSeq::from_slice(&dev, &[1u8, 0, 1, 0, 0])?;
    /// let ys = xs.segmented_reduce_with(&flags, |a, b| Expr::select(b.ne(0), b, a))?;
    /// assert_eq!(ys.to_vec()?, [4, 7]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn segmented_reduce_with<F: Flag>(
        &self,
        flags: &DeviceSeq<F>,
        f: impl Fn(T::Exprs, T::Exprs) -> T::Exprs,
    ) -> Result<Self> {
        let c = Combiner::trace::<T>(&f)?;
        let flags = &flags.flags_u8()?;
        self.segment_check(flags)?;
        if self.is_empty() {
            return self.copy();
        }
        if let Some(op) = builtin(&c) {
            let b = self.device().backend();
            let col = b.segmented_reduce(&self.sources()[0], flags.source(), op, None)?;
            return Ok(Self::stored_columns(self.device(), vec![col]));
        }
        self.segmented_inclusive_scan_with(flags, &f)?
            .segment_lasts(flags)
    }

    /// The last item of each segment (a nonzero flag starts one; element 0 always does).
    fn segment_lasts<F: Flag>(&self, flags: &DeviceSeq<F>) -> Result<Self> {
        // The heads' positions, and each segment's last position: the next head's minus one,
        // or the last element's.
        let dev = self.device();
        let n = self.len() as u64;
        let heads = forced_heads(&flags.flags_u8()?)?.nonzero_indices::<u64>()?;
        let m = heads.len() as u64;
        let next = heads.gather_stored(
            &DeviceSeq::<u64>::sequence(dev, heads.len())?.map(|j| (j + 1).min(m - 1))?,
        )?;
        let ends = next.zip_map(&DeviceSeq::<u64>::sequence(dev, heads.len())?, |h, j| {
            Expr::select(j.eq(m - 1), n - 1, h - 1)
        })?;
        self.gather_stored(&ends)
    }

    /// The segmented inclusive scan by `c` of the items whose segments' first items are
    /// combined with a left operand first by `head` (`Combiner::head_transform`), read from
    /// `inputs` (the items' components, the flags, then any of `head`'s own).
    fn head_scan(
        &self,
        inputs: &[Source],
        head: &Traced,
        c: &Combiner,
        mode: &ScanMode,
    ) -> Result<Self> {
        let refs: Vec<&Source> = inputs.iter().collect();
        let mut srcs: Vec<Source> = (0..T::TYPES.len())
            .map(|k| Source::map_out(&refs, head, k, self.len()))
            .collect();
        srcs.push(inputs[T::TYPES.len()].clone());
        let cols = self
            .device()
            .backend()
            .scan_with(&srcs, &c.segmented(), mode)?;
        Ok(Self::stored_columns(self.device(), cols))
    }

    /// `base` with the items sent to each slot combined into it: `out[j] = f(base[j], v1 f v2
    /// f …)` over the items `self[i]` with `indices[i] == j`, in ascending order of `i`;
    /// slots that receive nothing keep `base[j]`.
    ///
    /// Deterministic, floats included (a stable sort of the indices, a segmented scan of each
    /// run whose first value is combined with its base item, no atomics); f16/bf16 results are
    /// rounded once.
    ///
    /// Cost: a sort of (index, position) pairs, gathers of the values and of the base by the
    /// sorted indices, the segmented scan, the runs' last items, and a scatter.
    ///
    /// # Errors
    ///
    /// `Error::LengthMismatch`; `Error::IndexOutOfBounds` (nothing written);
    /// `Error::DeviceMismatch`; as [`reduce_with`](Self::reduce_with).
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq, Expr};
    /// let dev = Device::auto()?;
    /// // The last nonzero value sent to each slot, else the base value.
    /// let vals = DeviceSeq::from_slice(&dev, &[1u32, 2, 0])?;
    /// let idx = DeviceSeq::from_slice(&dev, &[1u32, 0, 1])?;
    /// let base = DeviceSeq::from_slice(&dev, &[9u32, 8, 7])?;
    /// let out = vals.scatter_combine_with(&idx, &base, |a, b| Expr::select(b.ne(0), b, a))?;
    /// assert_eq!(out.to_vec()?, [2, 1, 7]); // 9 f 2; 8 f (1 f 0)
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn scatter_combine_with<I: Index>(
        &self,
        indices: &DeviceSeq<I>,
        base: &DeviceSeq<T>,
        f: impl Fn(T::Exprs, T::Exprs) -> T::Exprs,
    ) -> Result<Self> {
        let c = Combiner::trace::<T>(&f)?;
        self.same_device(indices)?;
        self.same_device(base)?;
        length(self.len(), indices.len())?;
        if let Some(op) = builtin(&c) {
            let b = self.device().backend();
            let col =
                b.scatter_combine(&self.sources()[0], indices.source(), &base.sources()[0], op)?;
            return Ok(Self::stored_columns(self.device(), vec![col]));
        }
        if self.is_empty() {
            return base.copy();
        }
        // The first index out of range, by position (as `scatter_combine` reports).
        let len = base.len() as u64;
        let bad = indices.map(move |i| i.cast::<u64>().ge(len))?;
        if let Some(p) = bad.argmax()? {
            let index = indices.slice(p..p + 1).to_vec()?[0].to_u64();
            if index >= len {
                return Err(Error::IndexOutOfBounds {
                    index,
                    len: base.len(),
                });
            }
        }
        // The values in slot order (stable: each slot's in input order), each slot's first
        // combined with the slot's base item on its left, unrounded, as the segmented scan
        // reads it; each segment's last item is `base f x0 f x1 …`, rounded once.
        let order = DeviceSeq::<u64>::sequence(self.device(), self.len())?;
        let (sorted, perm) = indices.sort_pairs(&order)?;
        let heads = sorted.head_flags()?.flags_u8()?;
        let mut inputs = self.gather_stored(&perm)?.with_flags(&heads);
        inputs.extend_from_slice(base.gather_stored(&sorted)?.sources());
        let t = c.head_transform(None);
        self.head_scan(&inputs, &t, &c, &ScanMode::Inclusive)?
            .segment_lasts(&heads)?
            .scatter(&sorted.compact(&heads)?, base)
    }
}

impl<K: Key> DeviceSeq<K> {
    /// For each run of equal consecutive keys (bitwise for floats): its key, and the
    /// `f`-combination of its values in order, for values of any item type.
    ///
    /// # Errors
    ///
    /// `Error::LengthMismatch`; `Error::DeviceMismatch`; as
    /// [`reduce_with`](DeviceSeq::reduce_with).
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let keys = DeviceSeq::from_slice(&dev, &[4u8, 4, 1])?;
    /// let vals = DeviceSeq::from_slice(&dev, &[(1.0f32, 1u32), (3.0, 1), (5.0, 1)])?;
    /// let (k, v) = keys.reduce_by_key_with(&vals, |(s, n), (t, m)| (s + t, n + m))?;
    /// assert_eq!(k.to_vec()?, [4, 1]);
    /// assert_eq!(v.to_vec()?, [(4.0, 2), (5.0, 1)]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn reduce_by_key_with<V: Item>(
        &self,
        values: &DeviceSeq<V>,
        f: impl Fn(V::Exprs, V::Exprs) -> V::Exprs,
    ) -> Result<(Self, DeviceSeq<V>)> {
        Combiner::trace::<V>(&f)?;
        self.same_device(values)?;
        length(self.len(), values.len())?;
        let heads = self.head_flags()?;
        Ok((
            self.compact(&heads)?,
            values.segmented_reduce_with(&heads, f)?,
        ))
    }
}

impl<K: Element> DeviceSeq<K> {
    /// The first position of the largest element (by `>`: `-0.0 == +0.0`); NaNs are ignored
    /// unless all elements are NaN (then `Some(0)`); `None` when empty.
    ///
    /// Cost: one read of the sequence (a reduction of (element, position) pairs, the
    /// positions computed, not read).
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
    /// let xs = DeviceSeq::from_slice(&dev, &[f32::NAN, 3.0, -1.0, 3.0])?;
    /// assert_eq!(xs.argmax()?, Some(1));
    /// assert_eq!(xs.argmin()?, Some(2));
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn argmax(&self) -> Result<Option<usize>> {
        self.arg_extreme(true)
    }

    /// The first position of the smallest element; otherwise as [`argmax`](Self::argmax).
    ///
    /// # Errors
    ///
    /// As [`argmax`](Self::argmax).
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[2i16, -7, 5, -7])?;
    /// assert_eq!(xs.argmin()?, Some(1));
    /// assert_eq!(xs.slice(0..0).argmin()?, None);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn argmin(&self) -> Result<Option<usize>> {
        self.arg_extreme(false)
    }

    fn arg_extreme(&self, largest: bool) -> Result<Option<usize>> {
        let (ty, n) = (K::TYPE, self.len());
        if n == 0 {
            return Ok(None);
        }
        if ty.size() <= 4 && (n as u64) <= 1u64 << 32 {
            // One built-in reduction of 64-bit words: the element's ordered bits (both zeros
            // alike, NaNs the worst) above its position (inverted for the largest), so that
            // the best word is the best element at its first position. The key is computed in
            // 32-bit words and widened once (in 64-bit words throughout, the arithmetic, not
            // the memory, set argmax's pace).
            let (w, low) = (ty.bits(), 0xffff_ffffu64);
            let (sign, all) = ((1u64 << (w - 1)) as u32, ((1u64 << w) - 1) as u32);
            let at = DeviceSeq::<u64>::sequence(self.device(), n)?;
            let word = self.zip_map(&at, move |x, i| {
                let b = x.to_bits().cast::<u32>();
                let key = if ty.is_float() {
                    // The ordered bits 0 and `all` belong to NaNs only.
                    let zero = (b & (all ^ sign)).eq(0u32);
                    let key = ordered(ty, Expr::select(zero, 0u32, b), |v| v as u32);
                    Expr::select(x.ne(x), if largest { 0 } else { all }, key)
                } else {
                    ordered(ty, b, |v| v as u32)
                };
                let key = key.cast::<u64>() << 32u32;
                if largest { key | (low - i) } else { key | i }
            })?;
            let best = word.reduce(if largest { Op::Max } else { Op::Min })? & low;
            return Ok(Some(if largest { low - best } else { best } as usize));
        }
        let at = DeviceSeq::<u64>::sequence(self.device(), n)?;
        let pairs = DeviceSeq::zip(self, &at)?;
        let r = pairs.reduce_with(|(a, i), (b, j)| {
            // The later element wins where it is better, or where the earlier is NaN and it is
            // not: the first best non-NaN, or position 0 when all are NaN.
            let better = if largest { b.gt(a) } else { b.lt(a) };
            let take = Expr::select(a.ne(a), b.eq(b), better);
            (Expr::select(take, b, a), Expr::select(take, j, i))
        })?;
        Ok(r.map(|(_, i)| i as usize))
    }
}
