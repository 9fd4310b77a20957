//! `reduce` on the host: fixed chunks combined in order, so float results do not depend on
//! the number of threads.

use super::HostSrc;
use crate::item::Element;
use crate::op::Op;
use rayon::prelude::*;

/// The combination of the elements in compute type, seeded with the neutral element (exact).
pub(crate) fn reduce<T: Element>(s: &HostSrc<'_, T>, op: Op) -> T::Compute {
    let e = op.neutral_of::<T::Compute>();
    // The chunks' results combined in order, a bounded number held at a time (a lazy source
    // may be longer than any memory's worth of chunk results).
    const HELD: usize = 1 << 16;
    let chunks = s.chunks();
    (0..chunks).step_by(HELD).fold(e, |acc, from| {
        (from..chunks.min(from + HELD))
            .into_par_iter()
            .map(|c| {
                s.chunk(c)
                    .iter()
                    .fold(e, |a, &x| op.combine(a, x.to_compute()))
            })
            .collect::<Vec<_>>()
            .into_iter()
            .fold(acc, |a, b| op.combine(a, b))
    })
}
