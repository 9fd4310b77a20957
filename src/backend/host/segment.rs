//! Segmented scans, `segmented_reduce` and `head_flags` on the host.

use super::scan::scan_with;
use super::{CHUNK, HostSrc};
use crate::backend::Init;
use crate::item::Element;
use crate::op::Op;
use rayon::prelude::*;

/// Whether element `i` starts a segment (element 0 always does), given its flag.
fn head(i: usize, flag: u8) -> bool {
    i == 0 || flag != 0
}

/// The segmented inclusive scan, or with `init` (compute bits) the exclusive one.
pub(crate) fn scan<T: Element>(
    s: &HostSrc<'_, T>,
    flags: &HostSrc<'_, u8>,
    op: Op,
    init: Init,
) -> Vec<T> {
    let e = op.neutral_of::<T::Compute>();
    let f = |a: (T::Compute, bool), b: (T::Compute, bool)| {
        if b.1 { b } else { (op.combine(a.0, b.0), a.1) }
    };
    let items = |c: usize| -> Vec<(T::Compute, bool)> {
        let (xs, fl) = (s.chunk(c), flags.chunk(c));
        xs.iter()
            .zip(fl.iter())
            .enumerate()
            .map(|(k, (x, &g))| (x.to_compute(), head(c * CHUNK + k, g)))
            .collect()
    };
    match init {
        None => scan_with(s.len(), items, f, (e, false), (e, false), true, |_, p| {
            T::from_compute(p.0)
        }),
        Some(bits) => {
            let init = T::from_compute_bits(bits);
            let c = init.to_compute();
            // The exclusive prefix restarts at a head: there the output is `init`.
            let heads: Vec<bool> = (0..flags.chunks())
                .into_par_iter()
                .flat_map_iter(|k| {
                    let fl = flags.chunk(k);
                    (0..fl.len())
                        .map(move |j| head(k * CHUNK + j, fl[j]))
                        .collect::<Vec<_>>()
                })
                .collect();
            scan_with(s.len(), items, f, (e, false), (e, false), false, |i, p| {
                if heads[i] {
                    init
                } else {
                    T::from_compute(op.combine(c, p.0))
                }
            })
        }
    }
}

/// The positions of segment heads.
fn heads(flags: &HostSrc<'_, u8>) -> Vec<usize> {
    (0..flags.chunks())
        .into_par_iter()
        .flat_map_iter(|c| {
            let fl = flags.chunk(c);
            (0..fl.len())
                .filter(|&k| head(c * CHUNK + k, fl[k]))
                .map(|k| c * CHUNK + k)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// One value per segment, each combined in order.
pub(crate) fn reduce<T: Element>(s: &HostSrc<'_, T>, flags: &HostSrc<'_, u8>, op: Op) -> Vec<T> {
    let h = heads(flags);
    (0..h.len())
        .into_par_iter()
        .with_min_len(super::min_items(h.len(), s.len()))
        .map(|k| {
            let end = h.get(k + 1).copied().unwrap_or(s.len());
            let xs = s.read(h[k]..end);
            let v = xs[1..]
                .iter()
                .fold(xs[0].to_compute(), |a, x| op.combine(a, x.to_compute()));
            T::from_compute(v)
        })
        .collect()
}

/// 1 where i == 0 or the bits of element i differ from those of element i-1.
pub(crate) fn head_flags<T: Element>(s: &HostSrc<'_, T>) -> Vec<bool> {
    let mut out = vec![false; s.len()];
    out.par_chunks_mut(CHUNK).enumerate().for_each(|(c, o)| {
        let start = c * CHUNK;
        let from = start.saturating_sub(1);
        let xs = s.read(from..start + o.len());
        for (k, slot) in o.iter_mut().enumerate() {
            let i = start + k;
            *slot = i == 0 || xs[i - from].to_bits() != xs[i - from - 1].to_bits();
        }
    });
    out
}
