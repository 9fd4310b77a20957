//! Scans on the host, and the chunked scan that the segment operations share: chunk
//! aggregates in parallel, their prefixes in order, then each chunk from its prefix.

use super::CHUNK;
use crate::element::{Element, Num};
use crate::op::Op;
use rayon::prelude::*;

/// For each i, `emit(i, prefix)` where prefix combines `first` and items `0..i` (exclusive)
/// or `0..=i` (inclusive) by `f`; `neutral` must combine exactly.
pub(crate) fn scan_with<V, O>(
    n: usize,
    item: impl Fn(usize) -> V + Sync,
    f: impl Fn(V, V) -> V + Sync,
    neutral: V,
    first: V,
    inclusive: bool,
    emit: impl Fn(usize, V) -> O + Sync,
) -> Vec<O>
where
    V: Copy + Send + Sync,
    O: Copy + Default + Send,
{
    let chunks = n.div_ceil(CHUNK);
    let aggregates: Vec<V> = (0..chunks)
        .into_par_iter()
        .map(|c| (c * CHUNK..n.min((c + 1) * CHUNK)).fold(neutral, |a, i| f(a, item(i))))
        .collect();
    let mut prefixes = Vec::with_capacity(chunks);
    let mut p = first;
    for a in aggregates {
        prefixes.push(p);
        p = f(p, a);
    }
    let mut out = vec![O::default(); n];
    out.par_chunks_mut(CHUNK)
        .zip(prefixes)
        .enumerate()
        .for_each(|(c, (o, mut p))| {
            for (k, slot) in o.iter_mut().enumerate() {
                let i = c * CHUNK + k;
                let x = item(i);
                if inclusive {
                    p = f(p, x);
                    *slot = emit(i, p);
                } else {
                    *slot = emit(i, p);
                    p = f(p, x);
                }
            }
        });
    out
}

/// The inclusive scan, or with `init` the exclusive one.
pub(crate) fn scan<T: Element>(xs: &[T], op: Op, init: Option<T>) -> Vec<T> {
    let e = T::Compute::neutral(op);
    scan_with(
        xs.len(),
        |i| xs[i].to_compute(),
        |a, b| T::Compute::combine(op, a, b),
        e,
        init.map_or(e, |v| v.to_compute()),
        init.is_none(),
        |_, p| T::from_compute(p),
    )
}
