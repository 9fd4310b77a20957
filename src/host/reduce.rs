//! `reduce` on the host: fixed chunks combined in order, so float results do not depend on
//! the number of threads.

use super::CHUNK;
use crate::element::{Element, Num};
use crate::op::Op;
use rayon::prelude::*;

/// The combination of `xs` in compute type, seeded with the neutral element (exact).
pub(crate) fn reduce<T: Element>(xs: &[T], op: Op) -> T::Compute {
    let e = T::Compute::neutral(op);
    xs.par_chunks(CHUNK)
        .map(|c| {
            c.iter()
                .fold(e, |a, &x| T::Compute::combine(op, a, x.to_compute()))
        })
        .collect::<Vec<_>>()
        .into_iter()
        .fold(e, |a, b| T::Compute::combine(op, a, b))
}
