//! `gather` and `scatter` on the host, bounds-checked before anything is written.

use super::{CHUNK, HostSrc};
use crate::error::{Error, Result};
use crate::item::{Element, Index};
use rayon::prelude::*;

/// `Err(IndexOutOfBounds)` for the index at the lowest position that is `>= len`.
pub(crate) fn check<I: Index>(idx: &HostSrc<'_, I>, len: usize) -> Result<()> {
    let bad = (0..idx.chunks()).into_par_iter().find_map_first(|c| {
        idx.chunk(c)
            .iter()
            .find(|i| i.to_u64() >= len as u64)
            .map(|i| i.to_u64())
    });
    match bad {
        Some(index) => Err(Error::IndexOutOfBounds { index, len }),
        None => Ok(()),
    }
}

/// `out[i] = src[idx[i]]`.
pub(crate) fn gather<T: Element, I: Index>(
    src: &HostSrc<'_, T>,
    idx: &HostSrc<'_, I>,
) -> Result<Vec<T>> {
    check(idx, src.len())?;
    let src = src.access(idx.len());
    let mut out = vec![T::default(); idx.len()];
    out.par_chunks_mut(CHUNK).enumerate().for_each(|(c, o)| {
        let mut r = src.reader();
        for (slot, i) in o.iter_mut().zip(idx.chunk(c).iter()) {
            *slot = r.at(i.to_u64() as usize);
        }
    });
    Ok(out)
}

/// `base` with `out[idx[i]] = vals[i]` (where indices repeat, the last value lands).
pub(crate) fn scatter<T: Element, I: Index>(
    vals: &HostSrc<'_, T>,
    idx: &HostSrc<'_, I>,
    base: &HostSrc<'_, T>,
) -> Result<Vec<T>> {
    check(idx, base.len())?;
    let mut out = base.to_vec();
    write(vals, idx, &mut out);
    Ok(out)
}

/// `out[idx[i]] = vals[i]` into `out` itself (where indices repeat, the last value lands),
/// bounds-checked before anything is written.
pub(crate) fn scatter_in_place<T: Element, I: Index>(
    vals: &HostSrc<'_, T>,
    idx: &HostSrc<'_, I>,
    out: &mut [T],
) -> Result<()> {
    check(idx, out.len())?;
    write(vals, idx, out);
    Ok(())
}

/// The writes of a scatter whose indices are checked.
fn write<T: Element, I: Index>(vals: &HostSrc<'_, T>, idx: &HostSrc<'_, I>, out: &mut [T]) {
    for c in 0..vals.chunks() {
        for (x, i) in vals.chunk(c).iter().zip(idx.chunk(c).iter()) {
            out[i.to_u64() as usize] = *x;
        }
    }
}
