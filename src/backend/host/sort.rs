//! `sort` and `sort_pairs` on the host (and so `argsort`, the sort of positions by key), on
//! the same ordered bits as the GPU's radix sort (floats in the order of `total_cmp`). Values
//! move by the sorting permutation, as bytes, so that only the key type is generic.

use super::{CHUNK, HostSrc};
use crate::item::{Element, ScalarType};
use rayon::prelude::*;

/// Bits whose unsigned order is the element order: sign flipped for signed integers; for
/// floats all bits flipped when negative, else the sign bit set (`total_cmp`).
#[inline]
pub(crate) fn ordered_bits(ty: ScalarType, b: u64) -> u64 {
    let bits = ty.bits();
    let sign = 1u64 << (bits - 1);
    let mask = if bits == 64 { !0 } else { (1u64 << bits) - 1 };
    if ty.is_float() {
        if b & sign != 0 { !b & mask } else { b | sign }
    } else if ty.is_signed_int() {
        b ^ sign
    } else {
        b
    }
}

/// The sort key of `x`: its ordered bits, complemented for a descending sort (as the GPU's).
#[inline]
pub(crate) fn key<T: Element>(x: T, descending: bool) -> u64 {
    let k = ordered_bits(T::TYPE, x.to_bits());
    if descending { !k } else { k }
}

/// The keys sorted (equal keys are the same bits, so no order among them shows).
pub(crate) fn sort<T: Element>(s: &HostSrc<'_, T>, descending: bool) -> Vec<T> {
    sort_order(s, descending).0
}

/// The keys sorted stably, and the permutation that sorts them (`order[k]` is the position
/// of the k-th in the order).
pub(crate) fn sort_order<T: Element>(s: &HostSrc<'_, T>, descending: bool) -> (Vec<T>, Vec<usize>) {
    let keys = s.to_vec();
    let ordered: Vec<u64> = keys
        .par_iter()
        .with_min_len(CHUNK)
        .map(|x| key(*x, descending))
        .collect();
    let order = radix_order(&ordered);
    let sorted = order
        .par_iter()
        .with_min_len(CHUNK)
        .map(|&i| keys[i])
        .collect();
    (sorted, order)
}

/// The stable permutation that sorts `keys` (`order[k]` is the position of the k-th): a
/// least-significant-digit radix sort of 8-bit digits, each pass a count (in parallel) and a
/// stable scatter, skipping the digits that every key shares.
pub(crate) fn radix_order(keys: &[u64]) -> Vec<usize> {
    let n = keys.len();
    // Bits that differ between some keys: only their digits need a pass.
    let (and, or) = keys
        .par_iter()
        .with_min_len(CHUNK)
        .fold(|| (!0u64, 0u64), |(a, o), &k| (a & k, o | k))
        .reduce(|| (!0u64, 0u64), |x, y| (x.0 & y.0, x.1 | y.1));
    let varying = and ^ or;
    let mut order: Vec<usize> = (0..n).collect();
    let mut cur: Vec<u64> = keys.to_vec();
    let (mut next_order, mut next) = (vec![0usize; n], vec![0u64; n]);
    for shift in (0..64).step_by(8) {
        if (varying >> shift) & 0xff == 0 {
            continue;
        }
        let digit = |k: u64| ((k >> shift) & 0xff) as usize;
        let counts = cur
            .par_chunks(CHUNK)
            .fold(
                || [0usize; 256],
                |mut c, ks| {
                    for &k in ks {
                        c[digit(k)] += 1;
                    }
                    c
                },
            )
            .reduce(
                || [0usize; 256],
                |mut a, b| {
                    a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
                    a
                },
            );
        let mut at = [0usize; 256];
        let mut sum = 0;
        for (d, c) in counts.iter().enumerate() {
            at[d] = sum;
            sum += c;
        }
        for (&k, &i) in cur.iter().zip(&order) {
            let d = digit(k);
            next[at[d]] = k;
            next_order[at[d]] = i;
            at[d] += 1;
        }
        std::mem::swap(&mut cur, &mut next);
        std::mem::swap(&mut order, &mut next_order);
    }
    order
}

/// The elements of `bytes` (of `size` bytes each) in the order `order`.
pub(crate) fn permute_bytes(bytes: &[u8], size: usize, order: &[usize]) -> Vec<u8> {
    let mut out = vec![0u8; order.len() * size];
    out.par_chunks_mut(size)
        .zip(order.par_iter())
        .with_min_len(CHUNK)
        .for_each(|(o, &i)| o.copy_from_slice(&bytes[i * size..(i + 1) * size]));
    out
}
