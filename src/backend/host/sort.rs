//! `sort` and `sort_pairs` on the host (and so `argsort`, the sort of positions by key), on
//! the same ordered bits as the GPU's radix sort (floats in the order of `total_cmp`). Values
//! move by the sorting permutation, as bytes, so that only the key type is generic.

use super::{CHUNK, HostSrc};
use crate::item::{Element, ScalarType};
use rayon::prelude::*;

/// Bits whose unsigned order is the element order: sign flipped for signed integers; for
/// floats all bits flipped when negative, else the sign bit set (`total_cmp`).
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
pub(crate) fn key<T: Element>(x: T, descending: bool) -> u64 {
    let k = ordered_bits(T::TYPE, x.to_bits());
    if descending { !k } else { k }
}

/// The keys sorted (equal keys are the same bits, so no order among them shows).
pub(crate) fn sort<T: Element>(s: &HostSrc<'_, T>, descending: bool) -> Vec<T> {
    let mut v = s.to_vec();
    v.par_sort_unstable_by_key(|x| key(*x, descending));
    v
}

/// The keys sorted stably, and the permutation that sorts them (`order[k]` is the position
/// of the k-th in the order).
pub(crate) fn sort_order<T: Element>(s: &HostSrc<'_, T>, descending: bool) -> (Vec<T>, Vec<usize>) {
    let keys = s.to_vec();
    let mut p: Vec<(u64, usize)> = keys
        .iter()
        .enumerate()
        .map(|(i, x)| (key(*x, descending), i))
        .collect();
    p.par_sort_unstable();
    let order: Vec<usize> = p.into_iter().map(|(_, i)| i).collect();
    let sorted = order
        .par_iter()
        .with_min_len(CHUNK)
        .map(|&i| keys[i])
        .collect();
    (sorted, order)
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
