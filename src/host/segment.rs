//! Segmented scans, `segmented_reduce` and `head_flags` on the host.

use super::CHUNK;
use super::scan::scan_with;
use crate::element::{Element, Num};
use crate::op::Op;
use rayon::prelude::*;

/// Whether element i starts a segment (element 0 always does).
fn head(flags: &[u8], i: usize) -> bool {
    i == 0 || flags[i] != 0
}

/// The segmented inclusive scan, or with `init` the exclusive one.
pub(crate) fn scan<T: Element>(xs: &[T], flags: &[u8], op: Op, init: Option<T>) -> Vec<T> {
    let e = T::Compute::neutral(op);
    let f = |a: (T::Compute, bool), b: (T::Compute, bool)| {
        if b.1 {
            b
        } else {
            (T::Compute::combine(op, a.0, b.0), a.1)
        }
    };
    match init {
        None => scan_with(
            xs.len(),
            |i| (xs[i].to_compute(), head(flags, i)),
            f,
            (e, false),
            (e, false),
            true,
            |_, p| T::from_compute(p.0),
        ),
        Some(init) => {
            let c = init.to_compute();
            scan_with(
                xs.len(),
                |i| (xs[i].to_compute(), head(flags, i)),
                f,
                (e, false),
                (e, false),
                false,
                |i, p| {
                    if head(flags, i) {
                        init
                    } else {
                        T::from_compute(T::Compute::combine(op, c, p.0))
                    }
                },
            )
        }
    }
}

/// The positions of segment heads.
fn heads(flags: &[u8]) -> Vec<usize> {
    (0..flags.len())
        .into_par_iter()
        .filter(|&i| head(flags, i))
        .collect()
}

/// One value per segment, each combined in order.
pub(crate) fn reduce<T: Element>(xs: &[T], flags: &[u8], op: Op) -> Vec<T> {
    let h = heads(flags);
    (0..h.len())
        .into_par_iter()
        .map(|s| {
            let end = h.get(s + 1).copied().unwrap_or(xs.len());
            let v = xs[h[s] + 1..end]
                .iter()
                .fold(xs[h[s]].to_compute(), |a, x| {
                    T::Compute::combine(op, a, x.to_compute())
                });
            T::from_compute(v)
        })
        .collect()
}

/// 1 where i == 0 or the bits of xs[i] differ from those of xs[i-1].
pub(crate) fn head_flags<T: Element>(xs: &[T]) -> Vec<u8> {
    let mut out = vec![0u8; xs.len()];
    out.par_chunks_mut(CHUNK).enumerate().for_each(|(c, o)| {
        for (k, slot) in o.iter_mut().enumerate() {
            let i = c * CHUNK + k;
            *slot = (i == 0 || xs[i].to_bits() != xs[i - 1].to_bits()) as u8;
        }
    });
    out
}
