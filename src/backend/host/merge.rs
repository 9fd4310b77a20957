//! `merge` and `merge_pairs` on the host: merge path over parallel chunks of the output. Each
//! chunk finds where the merge crosses its first output (a binary search along a diagonal)
//! and merges sequentially from there; keys compare by the ordered bits of the GPU's (floats
//! in the order of `total_cmp`).

use super::sort::key;
use super::{CHUNK, HostSrc};
use crate::item::Element;
use rayon::prelude::*;

/// The stable merge of the keys `a` and `b` (each read once), and where each output comes
/// from: `i` for `a[i]`, `a.len() + j` for `b[j]`; on ties `a` first.
pub(crate) fn merge<T: Element>(a: &HostSrc<'_, T>, b: &HostSrc<'_, T>) -> (Vec<T>, Vec<u64>) {
    let (a, b) = (a.read(0..a.len()), b.read(0..b.len()));
    let from = origins(&a, &b);
    (pick(&a, &b, &from), from)
}

/// The values `a` and `b` (each read once) at the positions `from` of `merge`.
pub(crate) fn values<V: Element>(a: &HostSrc<'_, V>, b: &HostSrc<'_, V>, from: &[u64]) -> Vec<V> {
    pick(&a.read(0..a.len()), &b.read(0..b.len()), from)
}

fn origins<T: Element>(a: &[T], b: &[T]) -> Vec<u64> {
    let (na, nb) = (a.len(), b.len());
    let keys = |v: &[T]| -> Vec<u64> {
        v.par_iter()
            .with_min_len(CHUNK)
            .map(|&x| key(x, false))
            .collect()
    };
    let (ka, kb) = (keys(a), keys(b));
    let mut out = vec![0u64; na + nb];
    out.par_chunks_mut(CHUNK).enumerate().for_each(|(c, o)| {
        let d = c * CHUNK;
        let (mut lo, mut hi) = (d.saturating_sub(nb), d.min(na));
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if ka[mid] <= kb[d - 1 - mid] {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let (mut i, mut j) = (lo, d - lo);
        for slot in o {
            if j >= nb || (i < na && ka[i] <= kb[j]) {
                *slot = i as u64;
                i += 1;
            } else {
                *slot = (na + j) as u64;
                j += 1;
            }
        }
    });
    out
}

/// The elements of `a` followed by `b` at the positions `from`.
fn pick<V: Element>(a: &[V], b: &[V], from: &[u64]) -> Vec<V> {
    let na = a.len() as u64;
    from.par_iter()
        .with_min_len(CHUNK)
        .map(|&f| {
            if f < na {
                a[f as usize]
            } else {
                b[(f - na) as usize]
            }
        })
        .collect()
}
