//! Reductions and scans by a combiner on the host: fixed chunks, their totals folded in order,
//! so float results do not depend on the number of threads. Within a chunk the items are cut
//! into runs of consecutive items (`cut`), combined side by side: each run folded, node by node
//! over all the runs at once (`Combiner::apply_block`, one typed loop a node instead of a walk
//! of the graph an item), the runs' totals folded in order, then each run scanned from its
//! prefix the same way. Items past the last whole run are combined one by one.

use super::{CHUNK, HostSrc, column};
use crate::backend::ScanMode;
use crate::error::Result;
use crate::expr::combiner::Combiner;
use crate::expr::eval::{Lane, Lanes, Val};
use crate::item::{Element, ScalarType};
use crate::source::{Column, Source};
use rayon::prelude::*;

/// Runs a chunk is cut into, at most: each walk of the combiner's nodes combines that many items
/// at once, and the runs' totals are then folded one by one (a walk each), so they stay few.
const RUNS: usize = 128;
/// Items a run holds, at least: each run costs two one-by-one combines (its total folded, its
/// prefix made), paid back over its items.
const RUN_MIN: usize = 8;

/// How `m` items are cut: `w` runs of `s` items, side by side, then the `m - w * s` items after
/// them one by one (none are runs where `m` is small).
fn cut(m: usize) -> (usize, usize) {
    let w = (m / RUN_MIN).min(RUNS);
    if w < 2 { (0, 0) } else { (w, m / w) }
}

/// Items `range` of the components `srcs`, as lanes of compute values (`cols[j]`: component j
/// of each item).
fn read(srcs: &[Source], range: std::ops::Range<usize>) -> Result<Vec<Lanes>> {
    srcs.iter()
        .map(|s| {
            with_type!(s.ty(), T => {
                let xs = HostSrc::<T>::new(s)?.read(range.clone());
                let mut l = Lanes::new(T::TYPE, xs.len());
                if let Some(v) = <<T as Element>::Compute as Lane>::lane_mut(&mut l) {
                    v.extend(xs.iter().map(|x| x.to_compute()));
                }
                Ok(l)
            })
        })
        .collect()
}

/// Items `start`, `start + step`, … (`count` of them) of `cols` into `x` (cleared first).
fn gather(cols: &[Lanes], start: usize, step: usize, count: usize, x: &mut [Lanes]) {
    for (l, c) in x.iter_mut().zip(cols) {
        l.clear();
        l.push_strided(c, start, step, count);
    }
}

/// Item `i` of `cols` into `x`.
fn item_into(cols: &[Lanes], i: usize, x: &mut Vec<Val>) {
    x.clear();
    x.extend(cols.iter().map(|c| c.get(i)));
}

/// Item `i` of `cols` set to `x`.
fn set_item(cols: &mut [Lanes], i: usize, x: &[Val]) {
    cols.iter_mut().zip(x).for_each(|(c, &v)| c.set(i, v));
}

/// One-by-one combination (`Combiner::apply_into`) with its buffers.
struct OneByOne<'c> {
    c: &'c Combiner,
    scratch: Vec<Val>,
    next: Vec<Val>,
}

impl<'c> OneByOne<'c> {
    fn new(c: &'c Combiner) -> Self {
        OneByOne {
            c,
            scratch: c.scratch(),
            next: Vec::new(),
        }
    }

    /// `acc = acc ⊕ x`, or `x` where `acc` is none yet.
    fn push(&mut self, acc: &mut Option<Vec<Val>>, x: &[Val]) {
        match acc {
            Some(a) => {
                self.c
                    .apply_into(a, x, &mut self.scratch, true, &mut self.next);
                std::mem::swap(a, &mut self.next);
            }
            None => *acc = Some(x.to_vec()),
        }
    }
}

/// The totals of `w` runs of `s` items of `cols` (run r: items `r * s ..`), folded side by side:
/// lanes of `w` items.
fn run_totals(c: &Combiner, cols: &[Lanes], w: usize, s: usize, lanes: &mut [Lanes]) -> Vec<Lanes> {
    let (mut acc, mut x, mut next) = (c.item_lanes(w), c.item_lanes(w), c.item_lanes(w));
    gather(cols, 0, s, w, &mut acc);
    for t in 1..s {
        gather(cols, t, s, w, &mut x);
        c.apply_block(&acc, &x, lanes, true, &mut next);
        std::mem::swap(&mut acc, &mut next);
    }
    acc
}

/// The totals of the first `chunks` chunks, in order.
fn totals(srcs: &[Source], c: &Combiner, chunks: usize) -> Result<Vec<Vec<Val>>> {
    let n = srcs[0].len;
    (0..chunks)
        .into_par_iter()
        .map(|ch| {
            let r = ch * CHUNK..n.min((ch + 1) * CHUNK);
            let m = r.len();
            let cols = read(srcs, r)?;
            let (w, s) = cut(m);
            let mut one = OneByOne::new(c);
            let (mut acc, mut x) = (None, Vec::new());
            if w > 0 {
                let t = run_totals(c, &cols, w, s, &mut c.block_lanes(w));
                for r in 0..w {
                    item_into(&t, r, &mut x);
                    one.push(&mut acc, &x);
                }
            }
            for i in w * s..m {
                item_into(&cols, i, &mut x);
                one.push(&mut acc, &x);
            }
            Ok(acc.unwrap_or_default())
        })
        .collect()
}

pub(crate) fn reduce(srcs: &[Source], c: &Combiner) -> Result<Vec<u64>> {
    let mut one = OneByOne::new(c);
    let mut acc: Option<Vec<Val>> = None;
    for t in totals(srcs, c, srcs[0].len.div_ceil(CHUNK))? {
        one.push(&mut acc, &t);
    }
    Ok(acc.unwrap_or_default().iter().map(|v| v.bits()).collect())
}

/// The inclusive scan of one chunk's items `cols` (`m` of them) after `prefix` (the combination
/// of every item before them, none before the first), or with `exclusive` the exclusive one
/// (every item's prefix; the caller sets where that is `init`). Items as lanes, as `cols`.
fn scan_chunk(
    c: &Combiner,
    cols: &[Lanes],
    m: usize,
    mut prefix: Option<Vec<Val>>,
    exclusive: bool,
) -> Vec<Lanes> {
    let mut out = c.item_lanes(m);
    gather(cols, 0, 1, m, &mut out);
    let (w, s) = cut(m);
    let mut one = OneByOne::new(c);
    let mut x = Vec::new();
    if w > 0 {
        let mut lanes = c.block_lanes(w);
        let t = run_totals(c, cols, w, s, &mut lanes);
        // Each run's prefix; where the chunk has none, the first run's holds its first item
        // (a stand-in: that run's first result is the item itself, set below).
        let first_alone = prefix.is_none();
        let mut pre = c.item_lanes(w);
        for r in 0..w {
            match &prefix {
                Some(p) => pre.iter_mut().zip(p).for_each(|(l, &v)| l.push(v)),
                None => pre
                    .iter_mut()
                    .zip(cols)
                    .for_each(|(l, col)| l.push(col.get(0))),
            }
            item_into(&t, r, &mut x);
            one.push(&mut prefix, &x);
        }
        let (mut xs, mut next) = (c.item_lanes(w), c.item_lanes(w));
        for step in 0..s {
            gather(cols, step, s, w, &mut xs);
            c.apply_block(&pre, &xs, &mut lanes, true, &mut next);
            if step == 0 && first_alone {
                for (l, col) in next.iter_mut().zip(cols) {
                    l.set(0, col.get(0));
                }
            }
            let written = if exclusive { &pre } else { &next };
            for (o, l) in out.iter_mut().zip(written) {
                o.set_strided(l, step, s);
            }
            std::mem::swap(&mut pre, &mut next);
        }
    }
    for i in w * s..m {
        item_into(cols, i, &mut x);
        // The exclusive output is the prefix before the item, the inclusive one after it.
        if exclusive && let Some(p) = &prefix {
            set_item(&mut out, i, p);
        }
        one.push(&mut prefix, &x);
        if !exclusive && let Some(p) = &prefix {
            set_item(&mut out, i, p);
        }
    }
    out
}

pub(crate) fn scan(srcs: &[Source], c: &Combiner, mode: &ScanMode) -> Result<Vec<Column>> {
    let n = srcs[0].len;
    let init = match mode {
        ScanMode::Exclusive(i) | ScanMode::SegmentedExclusive(i) => {
            crate::expr::combiner::load_compute(&c.types, i)
        }
        ScanMode::Inclusive => Vec::new(),
    };
    // Each chunk's prefix: the combination of everything before it (and `init` for the
    // exclusive scan).
    let mut one = OneByOne::new(c);
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
        one.push(&mut acc, &t);
    }
    if n_chunks > 0 {
        prefixes.push(acc);
    }
    let k = c.stored;
    let exclusive = !matches!(mode, ScanMode::Inclusive);
    let chunks: Vec<Vec<Lanes>> = prefixes
        .into_par_iter()
        .enumerate()
        .map(|(ch, prefix)| {
            let r = ch * CHUNK..n.min((ch + 1) * CHUNK);
            let m = r.len();
            let cols = read(srcs, r)?;
            let first = prefix.is_none();
            let mut out = scan_chunk(c, &cols, m, prefix, exclusive);
            // The exclusive scan's output is `init` where no item comes before (the first item
            // of a scan without a prefix) and, segmented, at each segment's head.
            if exclusive && first && m > 0 {
                set_item(&mut out, 0, &init);
            }
            if exclusive && c.segmented {
                let flags = &cols[cols.len() - 1];
                for i in (0..m).filter(|&i| flags.get(i).bits() != 0) {
                    set_item(&mut out, i, &init);
                }
            }
            out.truncate(k);
            Ok(out)
        })
        .collect::<Result<_>>()?;
    (0..k)
        .map(|j| stored_column(c.types[j], n, chunks.iter().map(|ch| &ch[j])))
        .collect()
}

/// The column of type `ty` (`n` elements) of lanes of its compute values, in order (rounded
/// where f16 or bf16 are stored).
fn stored_column<'a>(
    ty: ScalarType,
    n: usize,
    lanes: impl Iterator<Item = &'a Lanes>,
) -> Result<Column> {
    with_type!(ty, T => {
        let mut v: Vec<T> = Vec::with_capacity(n);
        for l in lanes {
            if let Some(l) = <<T as Element>::Compute as Lane>::lane(l) {
                v.extend(l.iter().map(|&x| T::from_compute(x)));
            }
        }
        column(v)
    })
}
