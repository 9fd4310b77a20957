//! `scatter_combine` on the host: values grouped by slot in ascending order of position,
//! combined in that order, then with the base value.

use super::gather::check;
use crate::element::{Element, Index, Num};
use crate::error::Result;
use crate::op::Op;
use rayon::prelude::*;

pub(crate) fn scatter_combine<T: Element, I: Index>(
    xs: &[T],
    idx: &[I],
    base: &[T],
    op: Op,
) -> Result<Vec<T>> {
    check(idx, base.len())?;
    let mut order: Vec<usize> = (0..xs.len()).collect();
    order.par_sort_by_key(|&i| idx[i].to_u64());
    let runs = combine_runs(&order, idx, xs, base, op);
    let mut out = base.to_vec();
    for (slot, v) in runs {
        out[slot] = v;
    }
    Ok(out)
}

/// For each run of equal indices in `order` (positions sorted stably by index): the slot and
/// `x_first op … op x_last op base[slot]`.
fn combine_runs<T: Element, I: Index>(
    order: &[usize],
    idx: &[I],
    xs: &[T],
    base: &[T],
    op: Op,
) -> Vec<(usize, T)> {
    let at = |k: usize| order[k];
    let starts: Vec<usize> = (0..order.len())
        .into_par_iter()
        .filter(|&k| k == 0 || idx[at(k)].to_u64() != idx[at(k - 1)].to_u64())
        .collect();
    (0..starts.len())
        .into_par_iter()
        .map(|r| {
            let end = starts.get(r + 1).copied().unwrap_or(order.len());
            let slot = idx[at(starts[r])].to_u64() as usize;
            let v = (starts[r] + 1..end).fold(xs[at(starts[r])].to_compute(), |a, k| {
                T::Compute::combine(op, a, xs[at(k)].to_compute())
            });
            let v = T::Compute::combine(op, v, base[slot].to_compute());
            (slot, T::from_compute(v))
        })
        .collect()
}
