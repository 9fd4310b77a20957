//! Searching, merging and selecting: `lower_bound`, `upper_bound`, `merge`, `merge_pairs`,
//! `top_k`. Orders are ascending, and for floats the `total_cmp` order of `sort`.

use super::{DeviceSeq, index_width, length};
use crate::backend::SortValues;
use crate::error::{Error, Result};
use crate::item::ordered;
use crate::item::{Element, Expr, Index, Item, Key};

/// Bits of a digit of `top_k`'s radix selection (a histogram of 2048 bins).
const DIGIT: u32 = 11;

/// Candidates at or below which `top_k` stops refining and sorts them.
const SELECT_CANDIDATES: u64 = 1 << 16;

/// Lengths from which `top_k` first tries a threshold from a sample (for `k <= len / 64`).
const SAMPLE_FROM: usize = 1 << 20;

/// Keys in `top_k`'s sample.
const SAMPLE: usize = 1 << 16;

/// Candidates above the sampled threshold that `top_k` sorts; beyond (many equal keys), or
/// below `k` (an unlucky sample), it selects by radix instead.
const SAMPLE_CANDIDATES: usize = 1 << 20;

/// A key that very likely at least `k` of `key`'s elements reach: of `SAMPLE` evenly spaced
/// keys, sorted on the device, the one at rank `e + 4 sqrt(e) + 4` from the top, where
/// `e = k SAMPLE / len` is the rank the k-th largest is expected at (about `len / SAMPLE`
/// elements to a sample key).
fn sampled_threshold(key: &DeviceSeq<u64>, k: usize) -> Result<u64> {
    let n = key.len() as u64;
    let step = n / SAMPLE as u64;
    let at = DeviceSeq::<u64>::sequence(key.device(), SAMPLE)?.map(move |j| j * step + step / 2)?;
    let sample = key.gather_stored(&at)?.sort()?;
    let expect = k as f64 * SAMPLE as f64 / n as f64;
    let rank = ((expect + 4.0 * expect.sqrt()).ceil() as usize + 4).min(SAMPLE);
    Ok(sample.slice(SAMPLE - rank..SAMPLE - rank + 1).to_vec()?[0])
}

impl<T: Key> DeviceSeq<T> {
    /// For each needle, the first position `p` with `self[p] >= needle`
    /// (`partition_point(|x| x < needle)`) in a sequence sorted ascending (floats in the
    /// `total_cmp` order of [`sort`](Self::sort)). An unsorted sequence gives unspecified
    /// positions in `0..=len`, never a panic.
    ///
    /// GPU: one binary search per needle whose top levels (2048 evenly spaced keys of the
    /// sequence) each block keeps in shared memory. Where the sequence is larger than the L2
    /// cache and there are at least 2^18 needles, the needles are first sorted with their
    /// positions and each answer written back to its needle's position: the searches of
    /// neighbouring sorted needles share their paths, so the caches serve most reads.
    ///
    /// # Errors
    ///
    /// `Error::InvalidArgument` for `u32` positions of a sequence longer than `u32::MAX`;
    /// `Error::DeviceMismatch`; `Error::OutOfMemory`; `Error::Cuda`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let sorted = DeviceSeq::from_slice(&dev, &[1u32, 3, 3, 7])?;
    /// let needles = DeviceSeq::from_slice(&dev, &[0u32, 3, 4, 9])?;
    /// assert_eq!(sorted.lower_bound::<u32>(&needles)?.to_vec()?, [0, 1, 3, 4]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn lower_bound<I: Index>(&self, needles: &DeviceSeq<T>) -> Result<DeviceSeq<I>> {
        self.search(needles, false, false)
    }

    /// For each needle, the first position `p` with `self[p] > needle`
    /// (`partition_point(|x| x <= needle)`); otherwise as [`lower_bound`](Self::lower_bound).
    ///
    /// # Errors
    ///
    /// As [`lower_bound`](Self::lower_bound).
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let sorted = DeviceSeq::from_slice(&dev, &[-0.0f32, 0.0, 2.0])?;
    /// let needles = DeviceSeq::from_slice(&dev, &[-0.0f32, 0.0, f32::NAN])?;
    /// assert_eq!(sorted.upper_bound::<u64>(&needles)?.to_vec()?, [1, 2, 3]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn upper_bound<I: Index>(&self, needles: &DeviceSeq<T>) -> Result<DeviceSeq<I>> {
        self.search(needles, true, false)
    }

    /// `lower_bound` (`upper_bound` where `upper`) of needles known ascending by the caller
    /// (`ascending`): on a GPU they are then searched in their own order, never sorted first.
    pub(super) fn search<I: Index>(
        &self,
        needles: &DeviceSeq<T>,
        upper: bool,
        ascending: bool,
    ) -> Result<DeviceSeq<I>> {
        self.same_device(needles)?;
        // Positions run to `len` itself: as indices of `len + 1` elements.
        index_width(I::TYPE.size(), self.len() + 1)?;
        if let ([hay], [needles]) = (self.sources(), needles.sources()) {
            let b = self.device().backend();
            let col = b.search(hay, needles, upper, I::TYPE, ascending)?;
            return Ok(DeviceSeq::stored(self.device(), col));
        }
        let (hay, needles) = self.joint_order(needles)?;
        hay.search(&needles, upper, ascending)
    }

    /// The stable merge of two ascending sequences (floats in the `total_cmp` order): on ties
    /// the elements of `self` come first. Inputs that are not sorted give an unspecified
    /// result of the right length, never a panic.
    ///
    /// GPU: merge path (Green, McColl and Bader 2012). A binary search along a diagonal of
    /// the merge finds how many of each tile's outputs come from `self`; each tile is then
    /// merged in shared memory and stored coalesced: one read of each input, one write.
    ///
    /// # Errors
    ///
    /// `Error::DeviceMismatch`; `Error::OutOfMemory`; `Error::Cuda`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let a = DeviceSeq::from_slice(&dev, &[1i32, 4, 4, 9])?;
    /// let b = DeviceSeq::from_slice(&dev, &[0i32, 4, 10])?;
    /// assert_eq!(a.merge(&b)?.to_vec()?, [0, 1, 4, 4, 4, 9, 10]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn merge(&self, other: &DeviceSeq<T>) -> Result<Self> {
        self.same_device(other)?;
        if let ([a], [b]) = (self.sources(), other.sources()) {
            let (keys, _) = self.device().backend().merge(a, b, &[])?;
            return Ok(Self::stored_columns(self.device(), vec![keys]));
        }
        if Self::packs() {
            let (a, b) = self.joint_order(other)?;
            return Self::from_packed(&a.merge(&b)?);
        }
        self.concat(other)?
            .gather_stored(&self.merge_positions(other)?)
    }

    /// As [`merge`](Self::merge), carrying a value with each key: `(keys, values)` merged
    /// with the same stable order (ties: `self`'s first).
    ///
    /// # Errors
    ///
    /// `Error::LengthMismatch` where a key sequence and its values differ in length;
    /// `Error::DeviceMismatch`; `Error::OutOfMemory`; `Error::Cuda`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let (ak, av) = (DeviceSeq::from_slice(&dev, &[1u8, 5])?, DeviceSeq::from_slice(&dev, &['a', 'b'].map(|c| c as u32))?);
    /// let (bk, bv) = (DeviceSeq::from_slice(&dev, &[5u8])?, DeviceSeq::from_slice(&dev, &['c' as u32])?);
    /// let (k, v) = ak.merge_pairs(&av, &bk, &bv)?;
    /// assert_eq!(k.to_vec()?, [1, 5, 5]);
    /// assert_eq!(v.to_vec()?, ['a', 'b', 'c'].map(|c| c as u32));
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn merge_pairs<V: Item>(
        &self,
        values: &DeviceSeq<V>,
        other: &DeviceSeq<T>,
        other_values: &DeviceSeq<V>,
    ) -> Result<(Self, DeviceSeq<V>)> {
        length(self.len(), values.len())?;
        length(other.len(), other_values.len())?;
        self.same_device(values)?;
        other.same_device(other_values)?;
        self.same_device(other)?;
        if let ([a], [b]) = (self.sources(), other.sources()) {
            let pairs: Vec<_> = values
                .sources()
                .iter()
                .zip(other_values.sources())
                .collect();
            let (keys, vals) = self.device().backend().merge(a, b, &pairs)?;
            return Ok((
                Self::stored_columns(self.device(), vec![keys]),
                DeviceSeq::stored_columns(self.device(), vals),
            ));
        }
        if Self::packs() {
            let (a, b) = self.joint_order(other)?;
            let (keys, vals) = a.merge_pairs(values, &b, other_values)?;
            return Ok((Self::from_packed(&keys)?, vals));
        }
        let at = self.merge_positions(other)?;
        Ok((
            self.concat(other)?.gather_stored(&at)?,
            values.concat(other_values)?.gather_stored(&at)?,
        ))
    }

    /// The positions in `self.concat(other)` that the stable merge of the two takes, in order
    /// (for keys that do not pack into one word).
    fn merge_positions(&self, other: &Self) -> Result<DeviceSeq<u64>> {
        let (a, b) = self.joint_order(other)?;
        let dev = self.device();
        let na = self.len() as u64;
        let pa = DeviceSeq::<u64>::sequence(dev, self.len())?;
        let pb = DeviceSeq::<u64>::sequence(dev, other.len())?.map(move |i| i + na)?;
        Ok(a.merge_pairs(&pa, &b, &pb)?.1)
    }
}

impl<T: Element> DeviceSeq<T> {
    /// The `k` largest elements in descending order (floats in the `total_cmp` order, so
    /// `+NaN` first), with their positions; equal elements by ascending position.
    ///
    /// No full sort. From 2^20 elements with `k <= len / 64`: a threshold from a sorted
    /// sample of 2^16 evenly spaced elements that very likely `k` to a few `k` (plus a few
    /// `len / 2^16`) elements reach; one fused pass compacts their positions, and those are
    /// sorted descending and cut to `k`. Otherwise, or where the threshold lets fewer than
    /// `k` or more than 2^20 elements through: radix selection on the elements' ordered bits,
    /// 11 bits at a time from the top, a histogram of the next digit among the elements that
    /// still tie with the k-th largest (one fused pass each, no memory of the sequence's
    /// length), until at most 65536 candidates besides the certain ones remain; those are
    /// compacted with their positions, sorted and cut the same way. Either way the result is
    /// exact and the same on every run.
    ///
    /// # Errors
    ///
    /// `Error::InvalidArgument` for `k > len`, or `u32` positions of more than 2^32
    /// elements; `Error::OutOfMemory`; `Error::Cuda`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[3.0f32, 9.0, -1.0, 9.0, 5.0])?;
    /// let (top, at) = xs.top_k::<u32>(3)?;
    /// assert_eq!(top.to_vec()?, [9.0, 9.0, 5.0]);
    /// assert_eq!(at.to_vec()?, [1, 3, 4]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn top_k<I: Index>(&self, k: usize) -> Result<(Self, DeviceSeq<I>)> {
        let n = self.len();
        if k > n {
            return Err(Error::InvalidArgument(format!(
                "top_k of {k} from {n} elements"
            )));
        }
        index_width(I::TYPE.size(), n)?;
        let dev = self.device();
        if k == 0 {
            return Ok((
                DeviceSeq::from_slice(dev, &[])?,
                DeviceSeq::from_slice(dev, &[])?,
            ));
        }
        let ty = T::TYPE;
        let w = ty.bits();
        let key = self.map(move |x| ordered(ty, x.to_bits(), |v| v))?;
        if n >= SAMPLE_FROM && (k as u64) * 64 <= n as u64 {
            let t = sampled_threshold(&key, k)?;
            let at = key.map(move |q| q.ge(t))?.nonzero_indices::<I>()?;
            if at.len() >= k && at.len() <= SAMPLE_CANDIDATES {
                return self.top_of(&at, k);
            }
        }
        // The top `known` bits of the k-th largest key are `prefix`; `need` of the keys that
        // share them are among the k (the keys above them are all in).
        let (mut prefix, mut known, mut need) = (0u64, 0u32, k as u64);
        // Keys that share the prefix but are not among the k.
        let mut spare = 0u64;
        while known < w {
            let d = DIGIT.min(w - known);
            let shift = w - known - d;
            let bins = 1u64 << d;
            let hist = key
                .map(move |q| {
                    let digit = (q >> shift) & (bins - 1);
                    let digit = if known == 0 {
                        digit
                    } else {
                        Expr::select((q >> (shift + d)).eq(prefix), digit, bins)
                    };
                    digit.cast::<u32>()
                })?
                .histogram(bins as usize, 0, bins as u32)?
                .to_vec()?;
            let mut above = 0u64;
            let mut digit = 0;
            for (dg, &c) in hist.iter().enumerate().rev() {
                if above + c >= need {
                    digit = dg as u64;
                    break;
                }
                above += c;
            }
            let bucket = hist[digit as usize];
            need -= above;
            prefix = (prefix << d) | digit;
            known += d;
            spare = bucket - need;
            if spare <= SELECT_CANDIDATES {
                break;
            }
        }
        let shift = w - known;
        let flags = if spare > SELECT_CANDIDATES {
            // Many keys equal the k-th largest: the first `need` of them by position.
            let t = prefix;
            let eq = key.map(move |q| q.eq(t))?.nonzero_indices::<u64>()?;
            let last = eq.slice(need as usize - 1..need as usize).to_vec()?[0];
            let at = DeviceSeq::<u64>::sequence(dev, n)?;
            key.zip_map(&at, move |q, i| q.gt(t) | (q.eq(t) & i.le(last)))?
        } else {
            // The keys whose top `known` bits are at least `prefix`.
            key.map(move |q| (q >> shift).ge(prefix))?
        };
        self.top_of(&flags.nonzero_indices::<I>()?, k)
    }

    /// The `k` largest of the elements at the ascending positions `at` (which hold the `k`
    /// largest of the sequence), descending, ties by position, with their positions.
    fn top_of<I: Index>(&self, at: &DeviceSeq<I>, k: usize) -> Result<(Self, DeviceSeq<I>)> {
        let dev = self.device();
        let vals = self.gather_stored(at)?;
        let b = dev.backend();
        let (sk, sp) = b.sort(
            vals.source(),
            Some(SortValues {
                values: at.source(),
            }),
            true,
        )?;
        let sp = sp.ok_or_else(|| Error::Internal("a sort returned no values".into()))?;
        let top = DeviceSeq::<T>::stored(dev, sk).slice(..k).copy()?;
        let pos = DeviceSeq::<I>::stored(dev, sp).slice(..k).copy()?;
        Ok((top, pos))
    }
}
