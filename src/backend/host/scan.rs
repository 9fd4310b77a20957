//! Scans on the host, and the chunked scan that the segment operations share: chunk
//! aggregates in parallel, their prefixes in order, then each chunk from its prefix.

use super::{CHUNK, HostSrc};
use crate::backend::Init;
use crate::item::Element;
use crate::op::Op;
use rayon::prelude::*;

/// For each i, `emit(i, prefix)` where prefix combines `first` and items `0..i` (exclusive)
/// or `0..=i` (inclusive) by `f`; `neutral` must combine exactly. `items(c)` gives the items
/// of chunk `c` (elements `c * CHUNK ..`), and is called twice a chunk.
pub(crate) fn scan_with<V, O>(
    n: usize,
    items: impl Fn(usize) -> Vec<V> + Sync,
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
        .map(|c| items(c).into_iter().fold(neutral, &f))
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
            for (k, (slot, x)) in o.iter_mut().zip(items(c)).enumerate() {
                let i = c * CHUNK + k;
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

/// The inclusive scan, or with `init` (compute bits) the exclusive one.
pub(crate) fn scan<T: Element>(s: &HostSrc<'_, T>, op: Op, init: Init) -> Vec<T> {
    let e = op.neutral_of::<T::Compute>();
    let first = init.map_or(e, |b| T::from_compute_bits(b).to_compute());
    scan_with(
        s.len(),
        |c| s.chunk(c).iter().map(|x| x.to_compute()).collect(),
        |a, b| op.combine(a, b),
        e,
        first,
        init.is_none(),
        |_, p| T::from_compute(p),
    )
}
