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
    // (slot, position) pairs sorted: the values of a slot in ascending order of position.
    let mut order: Vec<(u64, usize)> = (0..idx.chunks())
        .into_par_iter()
        .flat_map_iter(|c| {
            let ix = idx.chunk(c);
            let start = c * super::CHUNK;
            (0..ix.len())
                .map(|k| (ix[k].to_u64(), start + k))
                .collect::<Vec<_>>()
        })
        .collect();
    order.par_sort_unstable();
    let starts: Vec<usize> = (0..order.len())
        .into_par_iter()
        .with_min_len(CHUNK)
        .filter(|&k| k == 0 || order[k].0 != order[k - 1].0)
        .collect();
    let mut out = base.to_vec();
    let runs: Vec<(usize, T)> = (0..starts.len())
        .into_par_iter()
        .with_min_len(super::min_items(starts.len(), order.len()))
        .map_init(
            || vals.eval(),
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
