//! `Source`: what a primitive reads. Every sequence is one: a stored sequence is the trivial
//! source (one stored column), a lazy one an expression graph over leaves (stored columns, the
//! row number, constants) that the consumer evaluates inside its own kernel, element by
//! element, in the same pass.
//!
//! Two rules make fusion invisible: a value is rounded to its stored type exactly where a
//! materialized sequence would have been stored (the output of every `map` whose type is
//! `f16`/`bf16`), and a graph holds no constant values (they are parameters beside it), so a
//! consumer's kernel is compiled once per *shape* of source, whatever the constants are.

use crate::error::{Error, Result};
use crate::expr::Traced;
use crate::expr::graph::{Bin, Builder, Graph, Kind, Node, stored_exactly};
use crate::item::ScalarType;
use crate::random::Rand;
use std::any::Any;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, OnceLock};

/// Memory a backend keeps a column's elements in (the host's vectors, a GPU buffer).
pub(crate) trait Storage: Any + Send + Sync {
    /// For the backend that made it, to find its own type again.
    fn as_any(&self) -> &dyn Any;
}

/// A stored column: `len` elements of type `ty` starting at element `off` of `store`.
#[derive(Clone)]
pub(crate) struct Column {
    pub ty: ScalarType,
    pub store: Arc<dyn Storage>,
    pub off: usize,
    pub len: usize,
}

impl Column {
    /// A column over the whole of `store`.
    pub fn new(ty: ScalarType, store: Arc<dyn Storage>, len: usize) -> Column {
        Column {
            ty,
            store,
            off: 0,
            len,
        }
    }

    /// Whether both read the same elements from row 0 on.
    fn same_start(&self, other: &Column) -> bool {
        self.ty == other.ty && self.off == other.off && Arc::ptr_eq(&self.store, &other.store)
    }

    /// Rows `start..start + len` of this column.
    fn rows(&self, start: usize, len: usize) -> Column {
        Column {
            ty: self.ty,
            store: self.store.clone(),
            off: self.off + start,
            len,
        }
    }

    /// The backend's storage behind the column.
    pub fn storage<S: Storage>(&self) -> Result<&S> {
        self.store
            .as_any()
            .downcast_ref::<S>()
            .ok_or_else(|| Error::Internal("a column of another backend".into()))
    }
}

/// A source: element `i` (of `len`) is the value of `graph` at row `i`, its `Column(k)` leaves
/// reading `columns[k]` at that row, its `Param(k)` leaves being `params[k]`.
///
/// Canonical: columns and parameters are numbered in the order the graph first uses them and
/// the graph has no unused node, so two sources of one shape have equal graphs (and `hash`).
#[derive(Clone)]
pub(crate) struct Source {
    pub graph: Arc<Graph>,
    /// Hash of `graph`: the source's shape, for kernel keys.
    pub hash: u64,
    pub columns: Vec<Column>,
    pub params: Vec<u64>,
    pub len: usize,
}

impl std::fmt::Debug for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Source({} nodes, {} columns, {} params, len {})",
            self.graph.nodes.len(),
            self.columns.len(),
            self.params.len(),
            self.len
        )
    }
}

/// Whether the leaves of `g` number `cols` columns and `params` constants in order of first use,
/// each used: what `from_parts` would renumber them to.
fn leaves_in_order(g: &Graph, cols: usize, params: usize) -> bool {
    // A number stays where it is the next unused one or one used before (`u32::MAX` else).
    let keep = |seen: &mut u32, k: u32| {
        if k == *seen {
            *seen += 1;
        }
        if k < *seen { k } else { u32::MAX }
    };
    let (mut c, mut p) = (0u32, 0u32);
    let same = g
        .nodes
        .iter()
        .all(|n| n.remap_leaves(|k| keep(&mut c, k), |k| keep(&mut p, k)) == *n);
    same && c as usize == cols && p as usize == params
}

/// The hash of a graph, which kernel keys use for the source's shape.
fn shape_hash(g: &Graph) -> u64 {
    let mut h = crate::hash::FastHasher::default();
    g.hash(&mut h);
    h.finish()
}

mod view;

fn leaf(ty: ScalarType, kind: Kind) -> Node {
    Node { ty, kind }
}

/// The rows at which `Source::import` reads a source: its own, `s` rows further on, or those
/// that a `u64` node of the importing graph gives (a view's).
#[derive(Clone, Copy)]
enum Row {
    Shifted(usize),
    At(u32),
}

impl Source {
    fn from_parts(b: Builder, out: u32, cols: Vec<Column>, params: Vec<u64>, len: usize) -> Self {
        let g = b.finish(out);
        // Columns read by row hold the source's rows; those read by index (`At`) keep theirs.
        let mut indexed = vec![false; cols.len()];
        for n in &g.nodes {
            if let Kind::At(k, ..) = n.kind {
                indexed[k as usize] = true;
            }
        }
        let rows = |k: usize, c: &Column| {
            if indexed[k] {
                c.clone()
            } else {
                c.rows(0, len)
            }
        };
        if leaves_in_order(&g, cols.len(), params.len()) {
            // Nothing to renumber (a map of one stored sequence, for one): keep the parts.
            let columns = cols.iter().enumerate().map(|(k, c)| rows(k, c)).collect();
            return Source {
                hash: shape_hash(&g),
                graph: Arc::new(g),
                columns,
                params,
                len,
            };
        }
        // Renumber leaves in order of first use, keeping only those the graph uses.
        let (mut col_map, mut par_map) = (vec![u32::MAX; cols.len()], vec![u32::MAX; params.len()]);
        let (mut columns, mut ps) = (Vec::new(), Vec::new());
        let mut column = |k: u32| {
            if col_map[k as usize] == u32::MAX {
                col_map[k as usize] = columns.len() as u32;
                columns.push(rows(k as usize, &cols[k as usize]));
            }
            col_map[k as usize]
        };
        let mut param = |k: u32| {
            if par_map[k as usize] == u32::MAX {
                par_map[k as usize] = ps.len() as u32;
                ps.push(params[k as usize]);
            }
            par_map[k as usize]
        };
        let nodes: Vec<Node> = g
            .nodes
            .iter()
            .map(|n| n.remap_leaves(&mut column, &mut param))
            .collect();
        let graph = Graph { nodes, out: g.out };
        Source {
            hash: shape_hash(&graph),
            graph: Arc::new(graph),
            columns,
            params: ps,
            len,
        }
    }

    fn single(node: Node, cols: Vec<Column>, params: Vec<u64>, len: usize) -> Self {
        let mut b = Builder::default();
        let out = b.add(node);
        Self::from_parts(b, out, cols, params, len)
    }

    /// A stored column as a source. Every stored sequence is one, so the one-node graphs of
    /// the twelve types are made once and shared.
    pub fn column(col: Column) -> Self {
        static GRAPHS: OnceLock<Vec<(Arc<Graph>, u64)>> = OnceLock::new();
        let graphs = GRAPHS.get_or_init(|| {
            ScalarType::ALL
                .iter()
                .map(|&ty| {
                    let g = Graph {
                        nodes: vec![leaf(ty, Kind::Column(0))],
                        out: 0,
                    };
                    let h = shape_hash(&g);
                    (Arc::new(g), h)
                })
                .collect()
        });
        let (graph, hash) = graphs[col.ty as usize].clone();
        Source {
            graph,
            hash,
            len: col.len,
            columns: vec![col],
            params: Vec::new(),
        }
    }

    /// `len` copies of the value whose compute bits are `bits`.
    pub fn constant(ty: ScalarType, bits: u64, len: usize) -> Self {
        Self::single(leaf(ty, Kind::Param(0)), vec![], vec![bits], len)
    }

    /// The head flags of a stored column: 1 where an element's bits differ from those of the
    /// element before it, and at the first.
    pub fn head_flags(col: Column) -> Self {
        let (len, ty) = (col.len, col.ty);
        let mut b = Builder::default();
        let c = b.add(leaf(ty, Kind::Column(0)));
        let out = b.add(leaf(ScalarType::U8, Kind::Head(c, 0)));
        Self::from_parts(b, out, vec![col], vec![0], len)
    }

    /// `len` elements of the random sequence of kind `r` and type `ty` with `seed`.
    pub fn random(r: Rand, ty: ScalarType, seed: u64, len: usize) -> Self {
        Self::single(leaf(ty, Kind::Random(r, 0, 1)), vec![], vec![seed, 0], len)
    }

    /// `0, 1, …, len - 1` as `ty` (`as` conversions: wrapping, or rounded for floats).
    pub fn sequence(ty: ScalarType, len: usize) -> Self {
        let mut b = Builder::default();
        let i = b.add(leaf(ScalarType::U64, Kind::Index));
        let out = if ty == ScalarType::U64 {
            i
        } else {
            b.add(leaf(ty, Kind::Cast(i)))
        };
        Self::from_parts(b, out, vec![], vec![], len)
    }

    /// The same values as elements of `ty`: the result node retyped, for values that are the
    /// same bits in both types (a head flag or a comparison, 0 or 1, as a `u8` or a `bool`).
    pub fn retyped(&self, ty: ScalarType) -> Self {
        let mut graph = (*self.graph).clone();
        graph.nodes[graph.out as usize].ty = ty;
        Source {
            hash: shape_hash(&graph),
            graph: Arc::new(graph),
            columns: self.columns.clone(),
            params: self.params.clone(),
            len: self.len,
        }
    }

    /// Flags of `bool`s as the `u8` flags the backends take (nonzero is true): a comparison or
    /// a head flag retyped, the `u8` a cast to `bool` was made from, else the cast to `u8`.
    pub fn flags_u8(&self) -> Result<Self> {
        if self.ty() == ScalarType::U8 {
            return Ok(self.clone());
        }
        let out = self.graph.nodes[self.graph.out as usize];
        match out.kind {
            Kind::Head(..) | Kind::Cmp(..) => return Ok(self.retyped(ScalarType::U8)),
            Kind::Cast(a) if self.graph.nodes[a as usize].ty == ScalarType::U8 => {
                let mut b = Builder::default();
                for n in &self.graph.nodes[..=a as usize] {
                    b.add(*n);
                }
                return Ok(Self::from_parts(
                    b,
                    a,
                    self.columns.clone(),
                    self.params.clone(),
                    self.len,
                ));
            }
            _ => {}
        }
        let t = crate::expr::trace(&[self.ty()], |a, id| {
            crate::item::Expr::<bool>::from_node(id, a[0]).cast::<u8>()
        })?;
        Ok(Self::map(&[self], &t, self.len))
    }

    /// The element type.
    pub fn ty(&self) -> ScalarType {
        self.graph.out_type()
    }

    /// The column, where the source is one stored column (a stored sequence).
    pub fn as_column(&self) -> Option<&Column> {
        match self.graph.nodes.as_slice() {
            [
                Node {
                    kind: Kind::Column(0),
                    ..
                },
            ] => self.columns.first(),
            _ => None,
        }
    }

    /// The storage (of a backend's type `S`) of the stored column this source is, and the
    /// column's rows in it (offset, length), where nothing else holds that storage: no other
    /// sequence, slice or lazy sequence would see writes into it (in-place writes).
    pub fn sole_storage_mut<S: Storage>(&mut self) -> Option<(&mut S, usize, usize)> {
        self.as_column()?;
        let col = self.columns.first_mut()?;
        let store: &mut dyn Any = Arc::get_mut(&mut col.store)?;
        Some((store.downcast_mut::<S>()?, col.off, col.len))
    }

    /// Whether the only column this source reads is `col`, from the same row (so that its
    /// elements can be computed from `col`'s elements at the same rows).
    pub fn reads_only(&self, col: &Column) -> bool {
        matches!(self.columns.as_slice(), [c] if c.same_start(col))
    }

    /// Whether the source compares elements with the ones before them (head flags of runs).
    pub fn reads_neighbours(&self) -> bool {
        self.graph
            .nodes
            .iter()
            .any(|n| matches!(n.kind, Kind::Head(..)))
    }

    /// The value's compute bits, where every element is that one value.
    pub fn as_constant(&self) -> Option<u64> {
        match self.graph.nodes.as_slice() {
            [
                Node {
                    kind: Kind::Param(0),
                    ..
                },
            ] => self.params.first().copied(),
            _ => None,
        }
    }

    /// Copies this source's nodes into `b` (its leaves appended to `cols` and `params`, read
    /// at the rows `row` says) and returns its value's node, rounded where a stored sequence
    /// of its type would be.
    fn import(
        &self,
        b: &mut Builder,
        cols: &mut Vec<Column>,
        params: &mut Vec<u64>,
        row: Row,
    ) -> u32 {
        // Head flags and random leaves move with a slice; a source read at computed rows has
        // none (`readable_at_rows`).
        let shift = match row {
            Row::Shifted(s) => s,
            Row::At(_) => 0,
        };
        let mut map: Vec<u32> = Vec::with_capacity(self.graph.nodes.len());
        let column = |c: Column, cols: &mut Vec<Column>| {
            let at = match cols.iter().position(|x| x.same_start(&c) && x.len == c.len) {
                Some(p) => p,
                None => {
                    cols.push(c);
                    cols.len() - 1
                }
            };
            at as u32
        };
        for n in &self.graph.nodes {
            let new = match n.kind {
                Kind::Column(k) => match row {
                    Row::Shifted(s) => {
                        let c = self.columns[k as usize].rows(s, self.len.saturating_sub(s));
                        let at = column(c, cols);
                        b.add(leaf(n.ty, Kind::Column(at)))
                    }
                    // Read by index: the whole column, clamped to this source's rows.
                    Row::At(r) => {
                        let at = column(self.columns[k as usize].clone(), cols);
                        params.push(self.len as u64);
                        let p = params.len() as u32 - 1;
                        b.add(leaf(n.ty, Kind::At(at, r, p)))
                    }
                },
                // An indexed read: of the whole column, at the row its operand gives.
                Kind::At(k, i, p) => {
                    let at = column(self.columns[k as usize].clone(), cols);
                    params.push(self.params[p as usize]);
                    let p = params.len() as u32 - 1;
                    b.add(leaf(n.ty, Kind::At(at, map[i as usize], p)))
                }
                Kind::Random(r, sd, o) => {
                    // The element the first row reads moves with the slice.
                    params.push(self.params[sd as usize]);
                    params.push(self.params[o as usize] + shift as u64);
                    let o = params.len() as u32 - 1;
                    b.add(leaf(n.ty, Kind::Random(r, o - 1, o)))
                }
                Kind::Head(c, p) => {
                    // The first row of the flags' sequence moves with the slice.
                    params.push(self.params[p as usize] + shift as u64);
                    let p = params.len() as u32 - 1;
                    b.add(leaf(n.ty, Kind::Head(map[c as usize], p)))
                }
                Kind::Param(k) => {
                    params.push(self.params[k as usize]);
                    b.add(leaf(n.ty, Kind::Param(params.len() as u32 - 1)))
                }
                Kind::Index => match row {
                    Row::At(r) => r,
                    Row::Shifted(0) => b.add(*n),
                    Row::Shifted(s) => {
                        let i = b.add(*n);
                        params.push(s as u64);
                        let s = b.add(leaf(ScalarType::U64, Kind::Param(params.len() as u32 - 1)));
                        b.add(leaf(ScalarType::U64, Kind::Binary(Bin::Add, i, s)))
                    }
                },
                _ => b.add(n.remap(|o| map[o as usize])),
            };
            map.push(new);
        }
        let out = map[self.graph.out as usize];
        let n = self.graph.nodes[self.graph.out as usize];
        let exact = stored_exactly(&self.graph.nodes, self.graph.out);
        if matches!(n.ty, ScalarType::F16 | ScalarType::BF16) && !exact {
            b.add(leaf(n.ty, Kind::Cast(out)))
        } else {
            out
        }
    }

    /// Elements `start..start + len` (callers check the range).
    pub fn slice(&self, start: usize, len: usize) -> Self {
        if start == 0 && len == self.len {
            return self.clone();
        }
        let (mut b, mut cols, mut params) = (Builder::default(), Vec::new(), Vec::new());
        let out = self.import(&mut b, &mut cols, &mut params, Row::Shifted(start));
        Self::from_parts(b, out, cols, params, len)
    }

    /// The source of `t` applied element-wise to `inputs` (one a traced argument; callers check
    /// that they have `len` elements each).
    pub fn map(inputs: &[&Source], t: &Traced, len: usize) -> Self {
        Self::map_out(inputs, t, 0, len)
    }

    /// As `map`, for component `out` of the closure's result.
    pub fn map_out(inputs: &[&Source], t: &Traced, out: usize, len: usize) -> Self {
        let (mut b, mut cols, mut params) = (Builder::default(), Vec::new(), Vec::new());
        let args: Vec<u32> = inputs
            .iter()
            .map(|s| s.import(&mut b, &mut cols, &mut params, Row::Shifted(0)))
            .collect();
        let mut map: Vec<u32> = Vec::with_capacity(t.nodes.len());
        for n in &t.nodes {
            let new = match n.kind {
                Kind::Arg(k) => args[k as usize],
                Kind::Param(k) => {
                    params.push(t.params[k as usize]);
                    b.add(leaf(n.ty, Kind::Param(params.len() as u32 - 1)))
                }
                _ => b.add(n.remap(|o| map[o as usize])),
            };
            map.push(new);
        }
        Self::from_parts(b, map[t.outs[out] as usize], cols, params, len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::trace;
    use crate::item::Expr;

    struct Dummy;
    impl Storage for Dummy {
        fn as_any(&self) -> &dyn Any {
            self
        }
    }

    fn col(ty: ScalarType, len: usize) -> Column {
        Column::new(ty, Arc::new(Dummy), len)
    }

    fn scale(k: f32) -> Traced {
        trace(&[ScalarType::F32], |a, id| {
            Expr::<f32>::from_node(id, a[0]) * k + 2.0
        })
        .unwrap()
    }

    #[test]
    fn maps_of_one_shape_share_a_hash() {
        let c = Source::column(col(ScalarType::F32, 10));
        let a = Source::map(&[&c], &scale(1.0), 10);
        let b = Source::map(&[&c], &scale(5.0), 10);
        assert_eq!(a.hash, b.hash);
        assert_eq!(a.graph, b.graph);
        assert_ne!(a.params, b.params);
        assert!(c.as_column().is_some() && a.as_column().is_none());
    }

    /// A stored column's shared graph is the one the general path builds.
    #[test]
    fn columns_share_the_general_graph() {
        for ty in ScalarType::ALL {
            let a = Source::column(col(ty, 7));
            let b = Source::single(leaf(ty, Kind::Column(0)), vec![col(ty, 7)], vec![], 7);
            assert_eq!(
                (a.graph.as_ref(), a.hash, a.len),
                (b.graph.as_ref(), b.hash, b.len)
            );
            assert!(a.as_column().is_some() && a.params.is_empty());
        }
    }

    #[test]
    fn slices_move_the_leaves() {
        let s = Source::sequence(ScalarType::U32, 100);
        let t = s.slice(10, 5);
        assert_eq!(t.len, 5);
        assert_eq!(t.params, [10]);
        let c = Source::column(col(ScalarType::I8, 100)).slice(3, 4);
        assert_eq!((c.columns[0].off, c.columns[0].len), (3, 4));
        assert!(c.as_column().is_some());
    }

    #[test]
    fn shared_columns_are_read_once() {
        let c = Source::column(col(ScalarType::I32, 10));
        let t = trace(&[ScalarType::I32, ScalarType::I32], |a, id| {
            Expr::<i32>::from_node(id, a[0]) + Expr::<i32>::from_node(id, a[1])
        })
        .unwrap();
        let z = Source::map(&[&c, &c], &t, 10);
        assert_eq!(z.columns.len(), 1);
        let w = Source::map(&[&c, &c.slice(1, 9)], &t, 9);
        assert_eq!(w.columns.len(), 2);
    }

    #[test]
    fn half_results_are_rounded_where_stored() {
        let c = Source::column(col(ScalarType::F16, 4));
        let t = trace(&[ScalarType::F16], |a, id| {
            Expr::<half::f16>::from_node(id, a[0]) + half::f16::ONE
        })
        .unwrap();
        let once = Source::map(&[&c], &t, 4);
        let twice = Source::map(&[&once], &t, 4);
        // column, param, add, round (cast), param, add
        assert!(matches!(twice.graph.nodes[3].kind, Kind::Cast(2)));
    }
}
