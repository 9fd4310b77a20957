//! `scatter_combine` on the host: values grouped by slot in ascending order of position,
//! combined in that order, then with the base value.

use super::gather::check;
use super::{CHUNK, HostSrc};
use crate::error::Result;
use crate::item::{Element, Index};
use crate::op::Op;
use rayon::prelude::*;

pub(crate) fn scatter_combine<T: Element, I: Index>(
    vals: &HostSrc<'_, T>,
    idx: &HostSrc<'_, I>,
    base: &HostSrc<'_, T>,
    op: Op,
) -> Result<Vec<T>> {
    check(idx, base.len())?;
    // (slot, position) pairs sorted: the values of a slot in ascending order of position (the
    // radix sort is stable).
    let slots: Vec<u64> = (0..idx.chunks())
        .into_par_iter()
        .flat_map_iter(|c| idx.chunk(c).iter().map(|i| i.to_u64()).collect::<Vec<_>>())
        .collect();
    let order: Vec<(u64, usize)> = super::sort::radix_order(&slots)
        .into_iter()
        .map(|i| (slots[i], i))
        .collect();
    let starts: Vec<usize> = (0..order.len())
        .into_par_iter()
        .with_min_len(CHUNK)
        .filter(|&k| k == 0 || order[k].0 != order[k - 1].0)
        .collect();
    let mut out = base.to_vec();
    let vals = vals.access(vals.len());
    let runs: Vec<(usize, T)> = (0..starts.len())
        .into_par_iter()
        .with_min_len(super::min_items(starts.len(), order.len()))
        .map_init(
            || vals.reader(),
            |e, r| {
                let end = starts.get(r + 1).copied().unwrap_or(order.len());
                let slot = order[starts[r]].0 as usize;
                let first = e.at(order[starts[r]].1).to_compute();
                let v = (starts[r] + 1..end)
                    .fold(first, |a, k| op.combine(a, e.at(order[k].1).to_compute()));
                (slot, T::from_compute(op.combine(v, out[slot].to_compute())))
            },
        )
        .collect();
    for (slot, v) in runs {
        out[slot] = v;
    }
    Ok(out)
}
