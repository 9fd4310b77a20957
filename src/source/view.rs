//! Views: sources whose row `i` reads another source at a row computed from `i` (a gather by
//! indices, stored or lazy; the reversed, strided, shifted and concatenated views). The other
//! source's graph is copied with its `Index` leaf replaced by the computed row and its columns
//! read by `Kind::At` (an indexed read, clamped inside the column), so a view is one lazy
//! source that fuses into whatever reads it, as a `map` does.

use super::{Builder, Column, Row, Source, leaf};
use crate::expr::graph::{Bin, Cmp, Kind};
use crate::item::ScalarType;

/// A graph being built from parts of sources: the builder, and the columns and constants its
/// leaves number.
#[derive(Default)]
struct Parts {
    b: Builder,
    cols: Vec<Column>,
    params: Vec<u64>,
}

impl Parts {
    fn node(&mut self, ty: ScalarType, kind: Kind) -> u32 {
        self.b.add(leaf(ty, kind))
    }

    /// A constant of type `ty` with compute bits `bits`.
    fn constant(&mut self, ty: ScalarType, bits: u64) -> u32 {
        self.params.push(bits);
        self.node(ty, Kind::Param(self.params.len() as u32 - 1))
    }

    /// The row number (a `u64`).
    fn index(&mut self) -> u32 {
        self.node(ScalarType::U64, Kind::Index)
    }

    /// `a op k` for a `u64` node and constant.
    fn op(&mut self, op: Bin, a: u32, k: u64) -> u32 {
        let k = self.constant(ScalarType::U64, k);
        self.node(ScalarType::U64, Kind::Binary(op, a, k))
    }

    /// `src`'s value at row `row` (a `u64` node; a row past `src`'s end reads its last
    /// element: callers check the rows they let users see), rounded where a stored sequence of
    /// its type would be. `src` is `readable_at_rows`.
    fn read(&mut self, src: &Source, row: u32) -> u32 {
        src.import(&mut self.b, &mut self.cols, &mut self.params, Row::At(row))
    }

    fn finish(self, out: u32, len: usize) -> Source {
        Source::from_parts(self.b, out, self.cols, self.params, len)
    }
}

impl Source {
    /// Whether this source can be read at rows other than its own: it has no head flags or
    /// random leaves, which are defined by the row they stand at (such a source is stored
    /// first).
    pub fn readable_at_rows(&self) -> bool {
        !self
            .graph
            .nodes
            .iter()
            .any(|n| matches!(n.kind, Kind::Head(..) | Kind::Random(..)))
    }

    /// `self[rows[i]]` for every row of `rows` (of an unsigned integer type); `self` is
    /// `readable_at_rows` and not empty, and the caller has checked that every row is below
    /// `self.len` (a row that is not reads the last element).
    pub fn gathered(&self, rows: &Source) -> Source {
        let mut p = Parts::default();
        let r = p.import_rows(rows);
        let out = p.read(self, r);
        p.finish(out, rows.len)
    }

    /// The elements in reverse order (`self` `readable_at_rows`).
    pub fn reversed(&self) -> Source {
        if self.len < 2 {
            return self.clone();
        }
        let mut p = Parts::default();
        let i = p.index();
        let last = p.constant(ScalarType::U64, self.len as u64 - 1);
        let r = p.node(ScalarType::U64, Kind::Binary(Bin::Sub, last, i));
        let out = p.read(self, r);
        p.finish(out, self.len)
    }

    /// Elements `0, step, 2 step, …` (`step > 0`; `self` `readable_at_rows`).
    pub fn strided(&self, step: usize) -> Source {
        if step == 1 || self.len == 0 {
            return self.clone();
        }
        let mut p = Parts::default();
        let i = p.index();
        let r = p.op(Bin::Mul, i, step as u64);
        let out = p.read(self, r);
        p.finish(out, self.len.div_ceil(step))
    }

    /// `out[i] = self[i - k]` where `0 <= i - k < len`, else the constant of compute bits
    /// `fill` (`self` `readable_at_rows`).
    pub fn shifted_by(&self, k: isize, fill: u64) -> Source {
        if k == 0 {
            return self.clone();
        }
        let ty = self.ty();
        if self.len == 0 || k.unsigned_abs() >= self.len {
            return Source::constant(ty, fill, self.len);
        }
        let mut p = Parts::default();
        let i = p.index();
        // i - k, wrapping: below 0 it is past every row.
        let r = p.op(Bin::Sub, i, k as i64 as u64);
        let n = p.constant(ScalarType::U64, self.len as u64);
        let inside = p.node(ScalarType::Bool, Kind::Cmp(Cmp::Lt, r, n));
        let x = p.read(self, r);
        let f = p.constant(ty, fill);
        let out = p.node(ty, Kind::Select(inside, x, f));
        p.finish(out, self.len)
    }

    /// `self`'s elements, then `other`'s (both `readable_at_rows`, of one type).
    pub fn concat(&self, other: &Source) -> Source {
        if other.len == 0 {
            return self.clone();
        }
        if self.len == 0 {
            return other.clone();
        }
        let mut p = Parts::default();
        let i = p.index();
        let na = p.constant(ScalarType::U64, self.len as u64);
        let first = p.node(ScalarType::Bool, Kind::Cmp(Cmp::Lt, i, na));
        let a = p.read(self, i);
        let j = p.node(ScalarType::U64, Kind::Binary(Bin::Sub, i, na));
        let b = p.read(other, j);
        let out = p.node(self.ty(), Kind::Select(first, a, b));
        p.finish(out, self.len + other.len)
    }
}

impl Parts {
    /// The rows a source of unsigned integers gives, as a `u64` node.
    fn import_rows(&mut self, rows: &Source) -> u32 {
        let r = rows.import(
            &mut self.b,
            &mut self.cols,
            &mut self.params,
            Row::Shifted(0),
        );
        if rows.ty() == ScalarType::U64 {
            r
        } else {
            self.node(ScalarType::U64, Kind::Cast(r))
        }
    }
}
