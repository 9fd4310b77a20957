//! `compact` and `nonzero_indices` on the host.

use rayon::prelude::*;

/// The elements whose flag is nonzero, in order.
pub(crate) fn compact<T: Copy + Send + Sync>(xs: &[T], flags: &[u8]) -> Vec<T> {
    xs.par_iter()
        .zip(flags.par_iter())
        .filter(|(_, f)| **f != 0)
        .map(|(x, _)| *x)
        .collect()
}

/// The positions whose flag is nonzero, in order.
pub(crate) fn nonzero_indices(flags: &[u8]) -> Vec<u64> {
    (0..flags.len() as u64)
        .into_par_iter()
        .filter(|&i| flags[i as usize] != 0)
        .collect()
}
