//! `lower_bound` and `upper_bound` on the host: a binary search per needle on the ordered
//! bits of the GPU's (floats in the order of `total_cmp`), needles in parallel chunks.

use super::sort::key;
use super::{CHUNK, HostSrc};
use crate::item::{Element, Index};
use rayon::prelude::*;

/// For each needle, the first position of `hay` whose key is `>=` it (`>` where `upper`).
/// A lazy `hay` that the searches would read more often than it has elements (about
/// `log2(len)` reads a needle) is evaluated once, block by block, and its keys searched.
pub(crate) fn search<T: Element, I: Index>(
    hay: &HostSrc<'_, T>,
    needles: &HostSrc<'_, T>,
    upper: bool,
) -> Vec<I> {
    let n = hay.len();
    let probes = needles
        .len()
        .saturating_mul(usize::BITS as usize - n.leading_zeros() as usize);
    if hay.is_lazy() && probes >= n {
        let keys: Vec<u64> = hay
            .to_vec()
            .par_iter()
            .with_min_len(CHUNK)
            .map(|&x| key(x, false))
            .collect();
        return search_by(needles, n, upper, || |i| keys[i]);
    }
    search_by(needles, n, upper, || {
        let mut h = hay.eval();
        move |i| key(h.at(i), false)
    })
}

/// The searches of `search` in a haystack of `n` keys, `key_at()` making each thread's reader
/// of the key at a position.
fn search_by<T: Element, I: Index, K: FnMut(usize) -> u64>(
    needles: &HostSrc<'_, T>,
    n: usize,
    upper: bool,
    key_at: impl Fn() -> K + Sync,
) -> Vec<I> {
    let mut out = vec![I::default(); needles.len()];
    out.par_chunks_mut(CHUNK).enumerate().for_each(|(c, o)| {
        let mut k_at = key_at();
        for (slot, &q) in o.iter_mut().zip(needles.chunk(c).iter()) {
            let q = key(q, false);
            let (mut a, mut b) = (0usize, n);
            while a < b {
                let mid = a + (b - a) / 2;
                let k = k_at(mid);
                if if upper { k <= q } else { k < q } {
                    a = mid + 1;
                } else {
                    b = mid;
                }
            }
            *slot = I::from_u64(a as u64);
        }
    });
    out
}
