//! `compact` on the host (and so `nonzero_indices`, a compaction of the positions).

use super::HostSrc;
use crate::item::Element;
use rayon::prelude::*;

/// The elements whose flag is nonzero, in order.
pub(crate) fn compact<T: Element>(s: &HostSrc<'_, T>, flags: &HostSrc<'_, u8>) -> Vec<T> {
    (0..s.chunks())
        .into_par_iter()
        .flat_map_iter(|c| {
            let (xs, fl) = (s.chunk(c), flags.chunk(c));
            xs.iter()
                .zip(fl.iter())
                .filter(|(_, f)| **f != 0)
                .map(|(x, _)| *x)
                .collect::<Vec<_>>()
        })
        .collect()
}
