//! `lower_bound` and `upper_bound` on the host: a binary search per needle on the ordered
//! bits of the GPU's (floats in the order of `total_cmp`), needles in parallel chunks.

use super::sort::key;
use super::{CHUNK, HostSrc};
use crate::item::{Element, Index};
use rayon::prelude::*;

/// For each needle, the first position of `hay` whose key is `>=` it (`>` where `upper`).
pub(crate) fn search<T: Element, I: Index>(
    hay: &HostSrc<'_, T>,
    needles: &HostSrc<'_, T>,
    upper: bool,
) -> Vec<I> {
    let n = hay.len();
    // About log2(n) reads of the haystack a needle.
    let reads = needles
        .len()
        .saturating_mul((usize::BITS - n.leading_zeros()) as usize);
    let hay = hay.access(reads);
    let mut out = vec![I::default(); needles.len()];
    out.par_chunks_mut(CHUNK).enumerate().for_each(|(c, o)| {
        let mut h = hay.reader();
        for (slot, &q) in o.iter_mut().zip(needles.chunk(c).iter()) {
            let q = key(q, false);
            let (mut a, mut b) = (0usize, n);
            while a < b {
                let mid = a + (b - a) / 2;
                let k = key(h.at(mid), false);
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
