//! `sort`, `sort_pairs` and `argsort` on the host, on the same ordered bits as the GPU's radix
//! sort (floats in the order of `total_cmp`).

use crate::element::{Element, Index, ScalarType};
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

fn key<T: Element>(x: T) -> u64 {
    ordered_bits(T::TYPE, x.to_bits())
}

pub(crate) fn sort<T: Element>(xs: &[T]) -> Vec<T> {
    let mut v = xs.to_vec();
    v.par_sort_unstable_by_key(|x| key(*x));
    v
}

/// Stable: values of equal keys keep their order.
pub(crate) fn sort_pairs<K: Element, V: Element>(keys: &[K], vals: &[V]) -> (Vec<K>, Vec<V>) {
    let mut p: Vec<(K, V)> = keys.iter().copied().zip(vals.iter().copied()).collect();
    p.par_sort_by_key(|(k, _)| key(*k));
    p.into_iter().unzip()
}

/// The stable sorting permutation.
pub(crate) fn argsort<T: Element, I: Index>(xs: &[T]) -> Vec<I> {
    let mut p: Vec<(u64, u64)> = xs
        .iter()
        .enumerate()
        .map(|(i, x)| (key(*x), i as u64))
        .collect();
    p.par_sort_unstable();
    p.into_iter().map(|(_, i)| I::from_u64(i)).collect()
}
