//! `merge`, `merge_pairs` and the set operations on the host: merge path over parallel chunks
//! of the output. Each chunk finds where the merge crosses its first output (a binary search
//! along a diagonal) and merges sequentially from there; keys compare by the ordered bits of
//! the GPU's (floats in the order of `total_cmp`). A set operation walks its chunk of the
//! merge as the GPU's threads do (`kernels/merge.cu`, `ds_set_op`).

use super::sort::key;
use super::{CHUNK, HostSrc};
use crate::backend::SetOp;
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

/// The kept keys of the set operation `op` of the keys `a` and `b` (each read once), and where
/// each comes from, as for `merge`.
pub(crate) fn set_op<T: Element>(
    a: &HostSrc<'_, T>,
    b: &HostSrc<'_, T>,
    op: SetOp,
) -> (Vec<T>, Vec<u64>) {
    let (a, b) = (a.read(0..a.len()), b.read(0..b.len()));
    let (ka, kb) = (ordered(&a), ordered(&b));
    let (na, nb) = (a.len(), b.len());
    let chunks: Vec<Vec<u64>> = (0..(na + nb).div_ceil(CHUNK))
        .into_par_iter()
        .map(|c| {
            let (d, end) = (c * CHUNK, ((c + 1) * CHUNK).min(na + nb));
            let (mut i, mut j) = cut(&ka, &kb, d);
            // Where the run of the current key starts in `a` and in `b` (for the chunk's first
            // key, searched for; unsorted inputs: any positions, read in bounds).
            let mut run = None;
            let (mut ra, mut rb) = (0, 0);
            let mut kept = Vec::new();
            for _ in d..end {
                let take_a = j >= nb || (i < na && ka[i] <= kb[j]);
                let k = if take_a { ka[i] } else { kb[j] };
                if run != Some(k) {
                    (ra, rb) = match run {
                        None => (
                            ka.partition_point(|&x| x < k),
                            kb.partition_point(|&x| x < k),
                        ),
                        Some(_) => (i, j),
                    };
                    run = Some(k);
                }
                if take_a {
                    let at = rb.wrapping_add(i.wrapping_sub(ra));
                    if op.keeps_a(at < nb && kb[at] == k) {
                        kept.push(i as u64);
                    }
                    i += 1;
                } else {
                    if op.keeps_b(j.wrapping_sub(rb) >= i.wrapping_sub(ra)) {
                        kept.push((na + j) as u64);
                    }
                    j += 1;
                }
            }
            kept
        })
        .collect();
    // Unsorted inputs, whose chunks may overlap, may keep more than the operation can.
    let mut from = chunks.concat();
    from.truncate(op.room(na, nb));
    (pick(&a, &b, &from), from)
}

/// The keys' ordered bits.
fn ordered<T: Element>(v: &[T]) -> Vec<u64> {
    v.par_iter()
        .with_min_len(CHUNK)
        .map(|&x| key(x, false))
        .collect()
}

/// Where the merge of the ordered keys `ka` and `kb` crosses output `d`: the positions in
/// each reached by then (ties: `ka` first).
fn cut(ka: &[u64], kb: &[u64], d: usize) -> (usize, usize) {
    let (mut lo, mut hi) = (d.saturating_sub(kb.len()), d.min(ka.len()));
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if ka[mid] <= kb[d - 1 - mid] {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    (lo, d - lo)
}

fn origins<T: Element>(a: &[T], b: &[T]) -> Vec<u64> {
    let (na, nb) = (a.len(), b.len());
    let (ka, kb) = (ordered(a), ordered(b));
    let mut out = vec![0u64; na + nb];
    out.par_chunks_mut(CHUNK).enumerate().for_each(|(c, o)| {
        let (mut i, mut j) = cut(&ka, &kb, c * CHUNK);
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
