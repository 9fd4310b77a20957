//! Reductions and scans by a combiner on the host: fixed chunks, each folded in order, their
//! totals folded in order, so float results do not depend on the number of threads.

use super::{CHUNK, HostSrc, column};
use crate::backend::ScanMode;
use crate::error::Result;
use crate::expr::combine::Combiner;
use crate::expr::eval::Val;
use crate::item::{Element, ScalarType};
use crate::source::{Column, Source};
use rayon::prelude::*;

/// Items `range` of the components `srcs`, as compute values: `out[j][i]` is component `j` of
/// item `i`.
fn read(srcs: &[Source], range: std::ops::Range<usize>) -> Result<Vec<Vec<Val>>> {
    srcs.iter()
        .map(|s| {
            with_type!(s.ty(), T => {
                let h = HostSrc::<T>::new(s)?;
                Ok(h.read(range.clone())
                    .iter()
                    .map(|x| Val::load(T::TYPE, Element::to_bits(*x)))
                    .collect())
            })
        })
        .collect()
}

/// Item `i` of components read by `read`, into `x`.
fn item_into(cols: &[Vec<Val>], i: usize, x: &mut Vec<Val>) {
    x.clear();
    x.extend(cols.iter().map(|c| c[i]));
}

/// `a ⊕ b` where either may be missing.
fn join(c: &Combiner, a: Option<Vec<Val>>, b: Vec<Val>, scratch: &mut [Val]) -> Vec<Val> {
    match a {
        Some(a) => c.apply(&a, &b, scratch, true),
        None => b,
    }
}

/// The totals of the first `chunks` chunks, in order.
fn totals(srcs: &[Source], c: &Combiner, chunks: usize) -> Result<Vec<Vec<Val>>> {
    let n = srcs[0].len;
    (0..chunks)
        .into_par_iter()
        .map(|ch| {
            let r = ch * CHUNK..n.min((ch + 1) * CHUNK);
            let cols = read(srcs, r.clone())?;
            let mut s = c.scratch();
            let (mut acc, mut x, mut next) = (Vec::new(), Vec::new(), Vec::new());
            item_into(&cols, 0, &mut acc);
            for i in 1..r.len() {
                item_into(&cols, i, &mut x);
                c.apply_into(&acc, &x, &mut s, true, &mut next);
                std::mem::swap(&mut acc, &mut next);
            }
            Ok(acc)
        })
        .collect()
}

pub(crate) fn reduce(srcs: &[Source], c: &Combiner) -> Result<Vec<u64>> {
    let mut s = c.scratch();
    let mut acc: Option<Vec<Val>> = None;
    for t in totals(srcs, c, srcs[0].len.div_ceil(CHUNK))? {
        acc = Some(join(c, acc, t, &mut s));
    }
    Ok(acc.unwrap_or_default().iter().map(|v| v.bits()).collect())
}

pub(crate) fn scan(srcs: &[Source], c: &Combiner, mode: &ScanMode) -> Result<Vec<Column>> {
    let n = srcs[0].len;
    let init = match mode {
        ScanMode::Exclusive(i) | ScanMode::SegmentedExclusive(i) => {
            crate::expr::combine::load_compute(&c.types, i)
        }
        ScanMode::Inclusive => Vec::new(),
    };
    // Each chunk's prefix: the combination of everything before it (and `init` for the
    // exclusive scan).
    let mut s = c.scratch();
    let mut prefixes = Vec::new();
    let mut acc = match mode {
        ScanMode::Exclusive(_) => Some(init.clone()),
        _ => None,
    };
    // The last chunk's total is no chunk's prefix: not folded (for inputs of one chunk, half the
    // combines).
    let n_chunks = n.div_ceil(CHUNK);
    for t in totals(srcs, c, n_chunks.saturating_sub(1))? {
        prefixes.push(acc.clone());
        acc = Some(join(c, acc, t, &mut s));
    }
    if n_chunks > 0 {
        prefixes.push(acc);
    }
    let k = c.stored;
    let head = |x: &[Val]| c.segmented && x[x.len() - 1].bits() != 0;
    let chunks: Vec<Vec<Vec<u64>>> = prefixes
        .into_par_iter()
        .enumerate()
        .map(|(ch, prefix)| {
            let r = ch * CHUNK..n.min((ch + 1) * CHUNK);
            let cols = read(srcs, r.clone())?;
            let mut s = c.scratch();
            let mut out = vec![Vec::with_capacity(r.len()); k];
            // `q` the combination of the items before this one (where `has`), `next` that of
            // the items up to this one.
            let (mut has, mut q) = (prefix.is_some(), prefix.unwrap_or_default());
            let (mut x, mut next) = (Vec::new(), Vec::new());
            for i in 0..r.len() {
                item_into(&cols, i, &mut x);
                if has {
                    c.apply_into(&q, &x, &mut s, true, &mut next);
                } else {
                    next.clone_from(&x);
                }
                let v: &[Val] = match mode {
                    ScanMode::Inclusive => &next,
                    ScanMode::Exclusive(_) if has => &q,
                    ScanMode::SegmentedExclusive(_) if has && !head(&x) => &q,
                    _ => &init,
                };
                for (j, o) in out.iter_mut().enumerate() {
                    o.push(v[j].store(c.types[j]));
                }
                std::mem::swap(&mut q, &mut next);
                has = true;
            }
            Ok(out)
        })
        .collect::<Result<_>>()?;
    (0..k)
        .map(|j| {
            let bits = chunks.iter().flat_map(|ch| ch[j].iter().copied());
            stored_column(c.types[j], bits)
        })
        .collect()
}

/// A column of type `ty` from stored bits.
fn stored_column(ty: ScalarType, bits: impl Iterator<Item = u64>) -> Result<Column> {
    with_type!(ty, T => column(bits.map(<T as Element>::from_bits).collect::<Vec<T>>()))
}
