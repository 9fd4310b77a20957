//! `gather` and `scatter` on the host, bounds-checked before anything is written.

use crate::element::Index;
use crate::error::{Error, Result};
use rayon::prelude::*;

/// `Err(IndexOutOfBounds)` for the index at the lowest position that is `>= len`.
pub(crate) fn check<I: Index>(idx: &[I], len: usize) -> Result<()> {
    match idx.par_iter().position_first(|i| i.to_u64() >= len as u64) {
        Some(p) => Err(Error::IndexOutOfBounds {
            index: idx[p].to_u64(),
            len,
        }),
        None => Ok(()),
    }
}

/// `out[i] = xs[idx[i]]`.
pub(crate) fn gather<T: Copy + Send + Sync, I: Index>(xs: &[T], idx: &[I]) -> Result<Vec<T>> {
    check(idx, xs.len())?;
    Ok(idx.par_iter().map(|i| xs[i.to_u64() as usize]).collect())
}

/// `base` with `out[idx[i]] = xs[i]` (where indices repeat, the last value lands).
pub(crate) fn scatter<T: Copy, I: Index>(xs: &[T], idx: &[I], base: &[T]) -> Result<Vec<T>> {
    check(idx, base.len())?;
    let mut out = base.to_vec();
    for (x, i) in xs.iter().zip(idx) {
        out[i.to_u64() as usize] = *x;
    }
    Ok(out)
}
