//! `histogram`.

use super::DeviceSeq;
use crate::error::{Error, Result};
use crate::item::Element;

impl<T: Element> DeviceSeq<T> {
    /// Counts of `bins` equal-width bins over `[lo, hi)`; values outside (and NaN) are not
    /// counted.
    ///
    /// Bins: for integers `(x - lo) * bins / (hi - lo)`, computed exactly (no overflow); for
    /// floats `floor((x - lo) / (hi - lo) * bins)` in `f64` for `f64` input and `f32`
    /// otherwise, each operation rounded (no fused multiply-add), clamped to `bins - 1`. Host
    /// and GPU agree exactly.
    ///
    /// Cost: one read of the sequence; GPU: per-block counters in shared memory merged once
    /// (counters straight in device memory beyond 8192 bins).
    ///
    /// # Errors
    ///
    /// `Error::InvalidArgument` where `bins == 0`, `bins > 2^56` or `!(lo < hi)`;
    /// `Error::OutOfMemory` (the counts, on either backend); `Error::Cuda`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[0.1f32, 0.5, 0.55, 0.99, 1.0, -0.2])?;
    /// assert_eq!(xs.histogram(4, 0.0, 1.0)?.to_vec()?, [1, 0, 2, 1]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn histogram(&self, bins: usize, lo: T, hi: T) -> Result<DeviceSeq<u64>> {
        histogram_args(bins, lo, hi)?;
        let b = self.device().backend();
        let col = b.histogram(self.source(), bins, lo.compute_bits(), hi.compute_bits())?;
        Ok(DeviceSeq::stored(self.device(), col))
    }
}

/// `InvalidArgument` unless there are bins (at most as many as a sequence's elements) and
/// `lo < hi` (a histogram's arguments).
pub(crate) fn histogram_args<T: Element>(bins: usize, lo: T, hi: T) -> Result<()> {
    if bins == 0 {
        return Err(Error::InvalidArgument("histogram with 0 bins".into()));
    }
    super::lazy_len(bins)?;
    if lo.to_compute().partial_cmp(&hi.to_compute()) != Some(std::cmp::Ordering::Less) {
        return Err(Error::InvalidArgument(format!(
            "histogram range [{lo:?}, {hi:?}) is empty"
        )));
    }
    Ok(())
}
