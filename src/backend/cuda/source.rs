//! Sources on the GPU: the key that names a source's kernel type, its C++ struct, and the
//! argument words a launch passes for it.
//!
//! A stored column is `ds::Col<T, AVEC>` (kernels/block/source.cuh): one pointer. A lazy
//! source is a struct printed for its expression: a pointer for each column, a `u64` for each
//! constant, and `at`/`vec` that load the columns' elements and compute the expression. Its
//! argument words are the columns' addresses, then the constants, all 8 bytes each, as the
//! struct lays them out. An expression with more constants than the argument words hold keeps
//! them in device memory instead (`pp`, one word: a buffer written before the launch and
//! freed on the stream after it), so any closure runs, however long.

use super::mem::{Buffer, Memory, Ptr, column_ptr};
use crate::error::{Error, Result};
use crate::expr::cuda::{ctype, print_nodes};
use crate::expr::graph::{Graph, Kind};
use crate::item::ScalarType;
use crate::source::Source;
use std::fmt::Write;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// The expression of a lazy source, compared by content and hashed by the source's hash.
#[derive(Debug, Clone)]
pub(crate) struct ExprShape {
    hash: u64,
    graph: Arc<Graph>,
}

impl PartialEq for ExprShape {
    fn eq(&self, other: &Self) -> bool {
        self.hash == other.hash
            && (Arc::ptr_eq(&self.graph, &other.graph) || self.graph == other.graph)
    }
}
impl Eq for ExprShape {}
impl Hash for ExprShape {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.hash.hash(state)
    }
}

/// What names a source's C++ type in a kernel key: its element type, its expression (none
/// for a stored column), the vectors its columns are aligned for (0: none), whether its
/// constants are in device memory (too many for the argument words), and its shifted columns
/// (`shifted`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct SourceKey {
    pub ty: ScalarType,
    pub shape: Option<ExprShape>,
    pub avec: u32,
    pub spill: bool,
    pub shifted: Vec<Shift>,
}

/// Column `col` of a lazy source reads the stored elements of its earlier column `base`, `d`
/// rows further on (`xs.slice(..n - 1)` beside `xs.slice(1..)`): its vectors are `base`'s
/// shifted by `d`, the last `d` elements loaded one by one. So a neighbour one element off,
/// which no vector load could read aligned, does not cost the whole source its vector loads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Shift {
    pub col: u32,
    pub base: u32,
    pub d: u32,
}

/// The shifted columns of `src` read in vectors of `vec` elements: those whose elements lie
/// 1 to `vec - 1` rows past an earlier column's in the same storage (that column itself not
/// shifted).
fn shifted(src: &Source, vec: u32) -> Vec<Shift> {
    let mut out: Vec<Shift> = Vec::new();
    if src.as_column().is_some() {
        return out;
    }
    let by_row = read_by_row(&src.graph, src.columns.len());
    for (k, c) in src.columns.iter().enumerate() {
        if !by_row[k] {
            continue;
        }
        let base = src.columns[..k].iter().enumerate().find(|&(j, b)| {
            by_row[j]
                && !out.iter().any(|s| s.col == j as u32)
                && b.ty == c.ty
                && Arc::ptr_eq(&b.store, &c.store)
                && c.off > b.off
                && c.off - b.off < vec as usize
        });
        if let Some((j, b)) = base {
            out.push(Shift {
                col: k as u32,
                base: j as u32,
                d: (c.off - b.off) as u32,
            });
        }
    }
    out
}

impl SourceKey {
    /// Whether the source computes random numbers (`computes_random`).
    #[cfg(test)]
    pub fn computes_random(&self) -> bool {
        self.shape.as_ref().is_some_and(|s| has_random(&s.graph))
    }

    /// A stored column of `ty` aligned for vectors of `avec` elements (0: unaligned).
    pub fn plain(ty: ScalarType, avec: u32) -> SourceKey {
        SourceKey {
            ty,
            shape: None,
            avec,
            spill: false,
            shifted: Vec::new(),
        }
    }

    /// Whether this source's items are computed in registers by kernels that stage a tile
    /// (`computed`).
    #[cfg(test)]
    pub fn computed(&self) -> bool {
        self.shape
            .as_ref()
            .is_some_and(|s| !one_column(&s.graph, self.ty))
    }

    /// The key of `src` as if aligned for vectors of `avec` elements (for compile checks,
    /// whose sources have no memory).
    #[cfg(test)]
    pub fn assuming(src: &Source, avec: u32) -> SourceKey {
        SourceKey {
            ty: src.ty(),
            shape: src.as_column().is_none().then(|| ExprShape {
                hash: src.hash,
                graph: src.graph.clone(),
            }),
            avec,
            spill: spills(src),
            shifted: shifted(src, avec),
        }
    }
}

/// For each of a graph's `cols` columns, whether it is read at the row (a `Column` leaf), as
/// kernels' tile loads read; the others are read by index only (`At`).
fn read_by_row(g: &Graph, cols: usize) -> Vec<bool> {
    let mut by_row = vec![false; cols];
    for n in &g.nodes {
        if let Kind::Column(k) = n.kind {
            by_row[k as usize] = true;
        }
    }
    by_row
}

/// Whether a graph reads a column by index (a lazy gather or view).
fn gathers(g: &Graph) -> bool {
    g.nodes.iter().any(|n| matches!(n.kind, Kind::At(..)))
}

/// The most argument words a source may take (columns and constants together).
pub(crate) const MAX_WORDS: usize = 96;

/// A source's argument words (the kernel reads as many as its struct has).
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct SourceArgs {
    words: [u64; MAX_WORDS],
}

// SAFETY: plain words; the kernel reads the first `sizeof(S)` bytes, laid out by `args`.
unsafe impl cudarc::driver::DeviceRepr for SourceArgs {}

impl SourceArgs {
    /// The argument of a stored column (`SourceKey::plain`) whose element 0 is at `p`.
    pub fn plain(p: Ptr) -> SourceArgs {
        let mut words = [0u64; MAX_WORDS];
        words[0] = p.0;
        SourceArgs { words }
    }
}

/// The key of `src` read in vectors of `vec` elements.
pub(crate) fn key(src: &Source, vec: u32) -> Result<SourceKey> {
    let shifted = shifted(src, vec);
    let aligned = src
        .columns
        .iter()
        .enumerate()
        .try_fold(true, |ok, (k, c)| {
            if shifted.iter().any(|s| s.col == k as u32) {
                return Ok(ok);
            }
            let align = (vec as usize * c.ty.size()).min(16);
            Ok::<_, Error>(ok && column_ptr(c)?.aligned(align))
        })?;
    Ok(SourceKey {
        ty: src.ty(),
        shape: match src.as_column() {
            Some(_) => None,
            None => Some(ExprShape {
                hash: src.hash,
                graph: src.graph.clone(),
            }),
        },
        avec: if aligned { vec } else { 0 },
        spill: spills(src),
        // (Read one by one where unaligned: then the shifts change nothing.)
        shifted: if aligned { shifted } else { Vec::new() },
    })
}

/// Whether `src`'s constants go to device memory: its columns and constants together are more
/// than the argument words hold.
fn spills(src: &Source) -> bool {
    src.columns.len() + src.params.len() > MAX_WORDS
}

/// The argument words of `src`, and the buffer of its constants where they spill (to be
/// dropped once the launch is queued: it is freed on the stream, after the kernel).
pub(crate) fn args(mem: &Memory, src: &Source) -> Result<(SourceArgs, Option<Buffer>)> {
    let cols = src.columns.len();
    if cols >= MAX_WORDS {
        return Err(Error::InvalidArgument(format!(
            "an expression of {cols} columns is more than a kernel takes ({}); copy() a part \
             of it first",
            MAX_WORDS - 1
        )));
    }
    let mut words = [0u64; MAX_WORDS];
    for (w, c) in words.iter_mut().zip(&src.columns) {
        *w = column_ptr(c)?.0;
    }
    if !spills(src) {
        words[cols..cols + src.params.len()].copy_from_slice(&src.params);
        return Ok((SourceArgs { words }, None));
    }
    let bytes: Vec<u8> = src.params.iter().flat_map(|p| p.to_le_bytes()).collect();
    let buf = Buffer::new(mem, bytes.len())?;
    mem.write(&buf, &bytes)?;
    words[cols] = buf.ptr().0;
    Ok((SourceArgs { words }, Some(buf)))
}

/// Whether a lazy source of `ty` with expression `g` reads one column of elements as wide as
/// its own, each row computed from that row's element alone: kernels may stage that column and
/// compute the source from it (`ONE`, kernels/block/source.cuh).
fn one_column(g: &Graph, ty: ScalarType) -> bool {
    let mut cols = g.nodes.iter().filter_map(|n| match n.kind {
        Kind::Column(i) => Some((i, n.ty)),
        _ => None,
    });
    let first = cols.next();
    let heads = g.nodes.iter().any(|n| match n.kind {
        Kind::Head(c, _) => matches!(g.nodes[c as usize].kind, Kind::Column(_)),
        _ => false,
    });
    match first {
        Some((i, c)) => cols.all(|(j, _)| j == i) && !heads && !gathers(g) && c.size() == ty.size(),
        None => false,
    }
}

/// Whether `src` computes random numbers (a random leaf: Philox blocks, arithmetic rather
/// than memory).
pub(crate) fn computes_random(src: &Source) -> bool {
    has_random(&src.graph)
}

fn has_random(g: &Graph) -> bool {
    g.nodes.iter().any(|n| matches!(n.kind, Kind::Random(..)))
}

/// Whether kernels that stage a tile (the scans) compute `src`'s items in registers before
/// staging them: a lazy source not staged as its one column (see `one_column`).
pub(crate) fn computed(src: &Source) -> bool {
    src.as_column().is_none() && !one_column(&src.graph, src.ty())
}

/// The C++ type of source `k` of a kernel.
pub(crate) fn cpp_name(key: &SourceKey, k: usize) -> String {
    match key.shape {
        None => format!("ds::Col<{}, {}>", key.ty.cuda_name(), key.avec),
        Some(_) => format!("S{k}"),
    }
}

/// What a lazy source's expression reads: its columns (by type), which of them are read at
/// the row, its head-flag nodes, its random leaves, and how its constants are passed.
struct Leaves<'a> {
    g: &'a Graph,
    cols: Vec<ScalarType>,
    /// The columns read at the row (loaded by `at` and `vec` and passed to `f`); the others
    /// are read by index inside `f`.
    row_cols: Vec<(usize, ScalarType)>,
    /// Head-flag nodes: (their column node, its column, their first-row parameter).
    heads: Vec<(u32, u32, u32)>,
    /// Random leaves: (their node, its type).
    randoms: Vec<(usize, ScalarType)>,
    /// How many constants the expression reads.
    params: usize,
    /// Whether the constants are in device memory (`pp`) rather than members.
    spill: bool,
}

impl<'a> Leaves<'a> {
    fn of(g: &'a Graph, spill: bool) -> Leaves<'a> {
        let mut cols: Vec<ScalarType> = Vec::new();
        for n in &g.nodes {
            if let Kind::Column(i) | Kind::At(i, ..) = n.kind {
                if cols.len() <= i as usize {
                    cols.resize(i as usize + 1, n.ty);
                }
                cols[i as usize] = n.ty;
            }
        }
        let by_row = read_by_row(g, cols.len());
        let row_cols = cols
            .iter()
            .copied()
            .enumerate()
            .filter(|&(i, _)| by_row[i])
            .collect();
        let heads = g
            .nodes
            .iter()
            .filter_map(|n| match n.kind {
                Kind::Head(c, p) => match g.nodes[c as usize].kind {
                    Kind::Column(col) => Some((c, col, p)),
                    _ => None,
                },
                _ => None,
            })
            .collect();
        let randoms = g
            .nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| matches!(n.kind, Kind::Random(..)))
            .map(|(j, n)| (j, n.ty))
            .collect();
        let params = g
            .nodes
            .iter()
            .flat_map(|n| match n.kind {
                Kind::Param(k) | Kind::Head(_, k) | Kind::At(_, _, k) => vec![k as usize + 1],
                Kind::Random(_, sd, o) => vec![sd as usize + 1, o as usize + 1],
                _ => vec![],
            })
            .max()
            .unwrap_or(0);
        Leaves {
            g,
            cols,
            row_cols,
            heads,
            randoms,
            params,
            spill,
        }
    }

    /// Constant i: a member, or a word of the buffer.
    fn param(&self, i: u32) -> String {
        if self.spill {
            format!("ds::ld_param(pp + {i})")
        } else {
            format!("p{i}")
        }
    }

    /// A random leaf's element type, generator code, and seed and offset constants.
    fn random_call(&self, j: usize) -> (&'static str, u32, u32, u32) {
        match self.g.nodes[j].kind {
            Kind::Random(r, sd, o) => (self.g.nodes[j].ty.cuda_name(), r.code(), sd, o),
            _ => ("u32", 0, 0, 0),
        }
    }

    /// Whether column c has an element before row i where a head reads it (any head's: a head
    /// whose own first row i is flags 1 whatever it reads).
    fn has_before(&self, c: u32) -> String {
        let firsts: Vec<String> = self
            .heads
            .iter()
            .filter(|h| h.1 == c)
            .map(|&(_, _, p)| format!("i + {} > 0", self.param(p)))
            .collect();
        format!("({})", firsts.join(" || "))
    }
}

/// The struct of a lazy source `k` (nothing for a stored column).
///
/// `f` computes the expression from what its leaves read at the row: each column's element
/// (`a0`, ...), for each head-flag node the element before it in that node's column (`h0`,
/// ...), each random leaf's element (`r0`, ...); `at` and `vec` compute those and call it.
pub(crate) fn cpp_struct(key: &SourceKey, k: usize) -> String {
    let Some(shape) = &key.shape else {
        return String::new();
    };
    let g = &*shape.graph;
    let l = Leaves::of(g, key.spill);
    let t = key.ty.cuda_name();
    let mut s = String::new();
    let _ = writeln!(s, "struct S{k} {{");
    let _ = writeln!(s, "  typedef {t} T;");
    let _ = writeln!(s, "  static constexpr bool PLAIN = false;");
    let one = one_column(g, key.ty);
    let _ = writeln!(s, "  static constexpr bool ONE = {one};");
    if one {
        let _ = writeln!(s, "  typedef {} L;", l.cols[0].cuda_name());
    }
    let _ = writeln!(s, "  static constexpr bool READS = {};", !l.cols.is_empty());
    let _ = writeln!(s, "  static constexpr int AVEC = {};", key.avec);
    for (i, ty) in l.cols.iter().enumerate() {
        let _ = writeln!(s, "  const {}* __restrict__ c{i};", ty.cuda_name());
    }
    if key.spill {
        let _ = writeln!(s, "  const u64* __restrict__ pp;");
    } else {
        for i in 0..l.params {
            let _ = writeln!(s, "  u64 p{i};");
        }
    }
    print_element_fn(&mut s, &l);
    print_at(&mut s, &l);
    let body = vec_body(&l);
    print_vec(&mut s, &l, &key.shifted, &body);
    // A source of one column can be computed from that column's elements, read by the caller
    // (compaction computes flags from the values it staged): `vec_from` takes them and the
    // column's element before row i (`before(i)`, read where PREV).
    if l.cols.len() == 1 && !gathers(g) {
        let x = l.cols[0].cuda_name();
        let _ = writeln!(s, "  static constexpr bool PREV = {};", !l.heads.is_empty());
        if !l.heads.is_empty() {
            let _ = writeln!(
                s,
                "  DS_DEV {x} before(u64 i) const {{ return {} ? c0[i - 1] : c0[i]; }}",
                l.has_before(0)
            );
        }
        let _ = writeln!(
            s,
            "  template <int VEC>\n  DS_DEV void vec_from(u64 i, const {x} (&a0)[VEC], const {x} prev0, T (&v)[VEC]) const {{"
        );
        s.push_str(&body);
        let _ = writeln!(s, "  }}");
    }
    let _ = writeln!(s, "}};");
    s
}

/// The element function `f`, from what the leaves read at the row.
fn print_element_fn(s: &mut String, l: &Leaves) {
    let (g, cols, heads, randoms) = (l.g, &l.cols, &l.heads, &l.randoms);
    let mut args: Vec<String> = l
        .row_cols
        .iter()
        .map(|(i, ty)| format!("const {} a{i}", ty.cuda_name()))
        .collect();
    for (h, &(_, c, _)) in heads.iter().enumerate() {
        args.push(format!("const {} h{h}", cols[c as usize].cuda_name()));
    }
    for (q, &(_, ty)) in randoms.iter().enumerate() {
        args.push(format!("const {} r{q}", ctype(ty)));
    }
    args.push("const u64 row".into());
    // The element function: outlined in the quick form where its code is heavy.
    let inline = if g.heavy() { "DS_OUTLINE" } else { "DS_DEV" };
    let _ = writeln!(s, "  {inline} T f({}) const {{", args.join(", "));
    let out = print_nodes(s, &g.nodes, g.out, "    ", |n| match n.kind {
        Kind::Column(i) => format!("ds::to_c<{}>(a{i})", n.ty.cuda_name()),
        Kind::Param(i) => format!("ds::from_bits<{}>({})", ctype(n.ty), l.param(i)),
        Kind::Index => "row".into(),
        Kind::At(c, i, p) => format!(
            "ds::to_c<{}>(c{c}[ds::clamp_row(v{i}, {})])",
            n.ty.cuda_name(),
            l.param(p)
        ),
        Kind::Head(c, p) => {
            let h = heads.iter().position(|x| (x.0, x.2) == (c, p)).unwrap_or(0);
            let col = heads.get(h).map_or(0, |x| x.1);
            format!(
                "(u8)((row + {} == 0 || !ds::same_bits(a{col}, h{h})) ? 1 : 0)",
                l.param(p)
            )
        }
        Kind::Random(..) => {
            let q = randoms.iter().position(|x| g.nodes[x.0] == *n).unwrap_or(0);
            format!("r{q}")
        }
        _ => "0".into(),
    });
    // A computed result leaves as its type's one NaN where it is NaN (as on the host); a
    // value passed through, as the element it was read from.
    if g.out_is_computed() {
        let _ = writeln!(s, "    return ds::from_c<T>(ds::canon({out}));\n  }}");
    } else {
        let _ = writeln!(s, "    return ds::store_passed<T>({out});\n  }}");
    }
}

/// `at`: what the leaves read at row i, and `f` of it.
fn print_at(s: &mut String, l: &Leaves) {
    let mut at: Vec<String> = l.row_cols.iter().map(|(i, _)| format!("c{i}[i]")).collect();
    for &(_, c, _) in &l.heads {
        at.push(format!("({} ? c{c}[i - 1] : c{c}[i])", l.has_before(c)));
    }
    for &(j, _) in &l.randoms {
        let (ty, code, sd, o) = l.random_call(j);
        at.push(format!(
            "ds::random_at<{ty}, {code}>({}, i + {})",
            l.param(sd),
            l.param(o)
        ));
    }
    at.push("i".into());
    let _ = writeln!(
        s,
        "  DS_DEV T at(u64 i) const {{ return f({}); }}",
        at.join(", ")
    );
}

/// The body of `vec` and `vec_from` once the columns' elements are in `a0`, ...: the heads'
/// elements before them (`h0[0]` is `prev`), the random leaves', and `f` of each.
fn vec_body(l: &Leaves) -> String {
    let mut body = String::new();
    for (h, &(_, c, _)) in l.heads.iter().enumerate() {
        let x = l.cols[c as usize].cuda_name();
        let _ = writeln!(
            body,
            "      {x} h{h}[VEC];\n      h{h}[0] = prev{c};\n#pragma unroll\n      for (int j = 1; j < VEC; ++j) h{h}[j] = a{c}[j - 1];"
        );
    }
    for (q, &(j, ty)) in l.randoms.iter().enumerate() {
        let (name, code, sd, o) = l.random_call(j);
        let _ = writeln!(
            body,
            "      {} r{q}[VEC];\n      ds::random_vec<{name}, {code}, VEC>({}, i + {}, r{q});",
            ctype(ty),
            l.param(sd),
            l.param(o)
        );
    }
    let vals: Vec<String> = l
        .row_cols
        .iter()
        .map(|(i, _)| format!("a{i}[j]"))
        .chain((0..l.heads.len()).map(|h| format!("h{h}[j]")))
        .chain((0..l.randoms.len()).map(|q| format!("r{q}[j]")))
        .chain(["i + j".to_string()])
        .collect();
    let _ = writeln!(
        body,
        "#pragma unroll\n      for (int j = 0; j < VEC; ++j) v[j] = f({});",
        vals.join(", ")
    );
    body
}

/// `vec`: `VEC` items from row i, by vector loads of the columns read at the row where they
/// are aligned to it (a shifted column from its base's loads), else one `at` an item.
fn print_vec(s: &mut String, l: &Leaves, shifted: &[Shift], body: &str) {
    let _ = writeln!(
        s,
        "  template <int VEC> DS_DEV void vec(u64 i, T (&v)[VEC]) const {{"
    );
    let _ = writeln!(s, "    if constexpr (AVEC != 0 && AVEC % VEC == 0) {{");
    for &(i, ty) in &l.row_cols {
        let x = ty.cuda_name();
        match shifted.iter().find(|h| h.col == i as u32) {
            Some(&Shift { base, d, .. }) => {
                let _ = writeln!(
                    s,
                    "      {x} a{i}[VEC];\n#pragma unroll\n      for (int q = 0; q + {d} < VEC; ++q) a{i}[q] = a{base}[q + {d}];\n#pragma unroll\n      for (int q = VEC > {d} ? VEC - {d} : 0; q < VEC; ++q) a{i}[q] = c{i}[i + q];"
                );
            }
            None => {
                let _ = writeln!(
                    s,
                    "      {x} a{i}[VEC];\n      ds::load_vec<{x}, VEC>(c{i} + i, a{i});"
                );
            }
        }
    }
    let mut prevs: Vec<u32> = l.heads.iter().map(|h| h.1).collect();
    prevs.sort_unstable();
    prevs.dedup();
    for &c in &prevs {
        let x = l.cols[c as usize].cuda_name();
        let _ = writeln!(
            s,
            "      const {x} prev{c} = {} ? c{c}[i - 1] : a{c}[0];",
            l.has_before(c)
        );
    }
    s.push_str(body);
    let _ = writeln!(
        s,
        "    }} else {{\n#pragma unroll\n      for (int j = 0; j < VEC; ++j) v[j] = at(i + j);\n    }}\n  }}"
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::{Column, Storage};

    struct NoMemory;
    impl Storage for NoMemory {
        fn as_any(&self) -> &dyn std::any::Any {
            self
        }
    }

    #[test]
    fn neighbours_read_from_the_earlier_column() {
        let col = Source::column(Column::new(ScalarType::U32, Arc::new(NoMemory), 10));
        let t = crate::expr::trace(&[ScalarType::U32, ScalarType::U32], |a, id| {
            let (x, y) = (
                crate::Expr::<u32>::from_node(id, a[0]),
                crate::Expr::<u32>::from_node(id, a[1]),
            );
            y - x
        })
        .unwrap();
        let diff = Source::map(&[&col.slice(1, 8), &col.slice(2, 8)], &t, 8);
        let key = SourceKey::assuming(&diff, 4);
        assert_eq!(
            key.shifted,
            [Shift {
                col: 1,
                base: 0,
                d: 1
            }]
        );
        let s = cpp_struct(&key, 0);
        assert!(s.contains("a1[q] = a0[q + 1];"), "{s}");
        assert!(s.contains("a1[q] = c1[i + q];"), "{s}");
        // Four rows apart: a vector of its own (aligned or not, as the pointers say).
        let far = Source::map(&[&col.slice(0, 6), &col.slice(4, 6)], &t, 6);
        assert!(SourceKey::assuming(&far, 4).shifted.is_empty());
        // Two reads of the same rows are one column already; other storage is no neighbour.
        let other = Source::column(Column::new(ScalarType::U32, Arc::new(NoMemory), 10));
        let apart = Source::map(&[&col.slice(0, 8), &other.slice(1, 8)], &t, 8);
        assert!(SourceKey::assuming(&apart, 4).shifted.is_empty());
    }

    #[test]
    fn gathers_read_by_index_inside_the_element_function() {
        let vals = Source::column(Column::new(ScalarType::F32, Arc::new(NoMemory), 10));
        let idx = Source::column(Column::new(ScalarType::U32, Arc::new(NoMemory), 6));
        let g = vals.gathered(&idx);
        let key = SourceKey::assuming(&g, 4);
        let s = cpp_struct(&key, 0);
        println!("{s}");
        // The indices are loaded by row; the values read at them, clamped to their 10 rows.
        assert!(s.contains("const u32 a0, const u64 row"), "{s}");
        assert!(!s.contains("a1"), "{s}");
        assert!(s.contains("c1[ds::clamp_row("), "{s}");
        assert!(!s.contains("vec_from"), "{s}");
        assert_eq!(g.params, [10]);
        assert!(!one_column(&g.graph, ScalarType::F32));
    }

    #[test]
    fn head_flags_print_their_neighbour() {
        let col = Column::new(ScalarType::U32, Arc::new(NoMemory), 10);
        let heads = Source::head_flags(col).slice(3, 5);
        let s = cpp_struct(&SourceKey::assuming(&heads, 4), 1);
        println!("{s}");
        assert!(s.contains("const u32 h0"), "{s}");
        assert!(s.contains("((i + p0 > 0) ? c0[i - 1] : c0[i])"), "{s}");
        assert!(s.contains("ds::same_bits(a0, h0)"), "{s}");
        // One column: computable from the caller's elements of it, with the one before.
        assert!(s.contains("static constexpr bool PREV = true;"), "{s}");
        assert!(
            s.contains("before(u64 i) const { return (i + p0 > 0) ? c0[i - 1] : c0[i]; }"),
            "{s}"
        );
        assert!(
            s.contains("void vec_from(u64 i, const u32 (&a0)[VEC], const u32 prev0"),
            "{s}"
        );
        assert_eq!(heads.params, [3]);
    }

    #[test]
    fn computed_sources_are_those_not_staged_as_one_column() {
        let col = |ty| Source::column(Column::new(ty, Arc::new(NoMemory), 10));
        let f32s = col(ScalarType::F32);
        let x = |a: &[u32], id| crate::Expr::<f32>::from_node(id, a[0]);
        let t = crate::expr::trace(&[ScalarType::F32], |a, id| x(a, id) * 2.0).unwrap();
        let twice = Source::map(&[&f32s], &t, 10);
        let t = crate::expr::trace(&[ScalarType::F32], |a, id| x(a, id).lt(0.5f32).cast::<u8>())
            .unwrap();
        let below = Source::map(&[&f32s], &t, 10);
        // A stored column, and a map of one column as wide as its result: staged as the column.
        assert!(!computed(&f32s));
        assert!(!computed(&twice));
        let key = SourceKey::assuming(&twice, 4);
        assert!(!key.computed());
        assert!(cpp_struct(&key, 0).contains("ONE = true;"));
        // Narrower results, no column at all, two columns, head flags: computed.
        assert!(computed(&below));
        let key = SourceKey::assuming(&below, 16);
        assert!(key.computed());
        assert!(cpp_struct(&key, 0).contains("ONE = false;"));
        assert!(computed(&Source::sequence(ScalarType::U64, 10)));
        let t = crate::expr::trace(&[ScalarType::F32, ScalarType::F32], |a, id| {
            crate::Expr::<f32>::from_node(id, a[0]) + crate::Expr::<f32>::from_node(id, a[1])
        })
        .unwrap();
        let sum = Source::map(&[&f32s, &col(ScalarType::F32)], &t, 10);
        assert!(computed(&sum) && SourceKey::assuming(&sum, 4).computed());
        let heads = Source::head_flags(Column::new(ScalarType::U8, Arc::new(NoMemory), 10));
        assert!(computed(&heads));
    }
}
