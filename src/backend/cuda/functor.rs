//! The functor `ds_F` that a combiner (a traced or built-in operator) becomes in the kernels of
//! `kernels/assoc.cu`: its value type, its combination as the expression printer writes it
//! (`expr::cuda::print_nodes`), and the reads, stages and stores of its components.

use crate::expr::combiner::{CombinerShape, canon_of};
use crate::expr::cuda::{ctype, print_nodes};
use crate::expr::graph::Kind;
use std::fmt::Write;

/// The functor `ds_F` of a combiner (see `kernels/assoc.cu` for what it provides).
pub(crate) fn cpp_functor(c: &CombinerShape) -> String {
    let k = c.types.len();
    let mut s = String::from("struct ds_F {\n  struct V {");
    for j in 0..k {
        let _ = write!(s, " {} c{j};", ctype(c.types[j]));
    }
    let _ = writeln!(s, " }};");
    let _ = writeln!(s, "  static constexpr int K = {k};");
    let _ = writeln!(s, "  static constexpr int NP = {};", c.params);
    let _ = writeln!(s, "  u64 p[{}];", c.params.max(1));
    let computed = print_combination(&mut s, c);
    let _ = writeln!(s, "  static DS_DEV V canon(const V& v) {{\n    V r = v;");
    for j in 0..k {
        if computed && c.types[j].is_float() {
            let _ = writeln!(s, "    r.c{j} = ds::canon(r.c{j});");
        }
    }
    let _ = writeln!(s, "    return r;\n  }}");
    let head = if c.segmented {
        format!("x.c{} != 0", k - 1)
    } else {
        "false".into()
    };
    let _ = writeln!(
        s,
        "  static DS_DEV bool head(const V& x) {{ return {head}; }}"
    );
    let (tparams, args) = component_sources(k);
    print_reads(&mut s, k, &tparams, &args);
    print_tile(&mut s, c, &tparams, &args);
    print_words(&mut s, c);
    let _ = writeln!(s, "}};");
    s
}

/// `template <class S0, ...>` parameters and `const S0& s0, ...` arguments: one source a
/// component.
fn component_sources(k: usize) -> (String, String) {
    let tparams: Vec<String> = (0..k).map(|j| format!("class S{j}")).collect();
    let args: Vec<String> = (0..k).map(|j| format!("const S{j}& s{j}")).collect();
    (tparams.join(", "), args.join(", "))
}

/// `operator()` and `raw`, the combination as the expression printer writes it; returns
/// whether every float component is computed (then `canon` makes them canonical).
fn print_combination(s: &mut String, c: &CombinerShape) -> bool {
    let k = c.types.len();
    // Whether every float component of a combination is computed (none passed through,
    // `graph::passes`: an operand, a constant, or a `Select` among such values): then `raw`,
    // the combination with no NaN made canonical, and `canon` of its result give the bits of
    // `operator()` (see kernels/assoc.cu).
    // Not where the operator reads an operand's bits (`Bits`), which `raw`'s NaNs would
    // change.
    let canon_out = canon_of(&c.nodes, &c.outs);
    let computed = c
        .outs
        .iter()
        .zip(&canon_out)
        .all(|(&o, &k)| !c.nodes[o as usize].ty.is_float() || k)
        && !c.nodes.iter().any(|n| matches!(n.kind, Kind::Bits(_)));
    // (Where a component is passed through, `raw` is `operator()`: printed once.)
    let bodies: &[(&str, bool)] = if computed {
        &[("operator()", true), ("raw", false)]
    } else {
        &[("operator()", true)]
    };
    for &(name, canon) in bodies {
        let _ = writeln!(s, "  DS_DEV V {name}(const V& a, const V& b) const {{");
        print_nodes(s, &c.nodes, c.outs[0], "    ", |n| match n.kind {
            Kind::Arg(j) if (j as usize) < k => format!("a.c{j}"),
            Kind::Arg(j) => format!("b.c{}", j as usize - k),
            Kind::Param(i) => format!("ds::from_bits<{}>(p[{i}])", ctype(n.ty)),
            _ => "0".into(),
        });
        let _ = writeln!(s, "    V r;");
        for (j, &o) in c.outs.iter().enumerate() {
            if canon && c.nodes[o as usize].ty.is_float() && canon_out[j] {
                let _ = writeln!(s, "    r.c{j} = ds::canon(v{o});");
            } else {
                let _ = writeln!(s, "    r.c{j} = v{o};");
            }
        }
        let _ = writeln!(s, "    return r;\n  }}");
    }
    if !computed {
        let _ = writeln!(
            s,
            "  DS_DEV V raw(const V& a, const V& b) const {{ return (*this)(a, b); }}"
        );
    }
    computed
}

/// `at` and `vec`: an item, or `N` items, read from the component sources.
fn print_reads(s: &mut String, k: usize, tparams: &str, args: &str) {
    let _ = writeln!(
        s,
        "  template <{tparams}> static DS_DEV V at(u64 i, {args}) {{\n    V v;"
    );
    for j in 0..k {
        let _ = writeln!(s, "    v.c{j} = ds::to_c<typename S{j}::T>(s{j}.at(i));");
    }
    let _ = writeln!(s, "    return v;\n  }}");
    // `vec`: component j from its source, or (bit j of OWN) from component 0's elements.
    let _ = writeln!(
        s,
        "  template <int N, u32 OWN = 0, {tparams}> static DS_DEV void vec(u64 i, V (&v)[N], {args}) {{"
    );
    for j in 0..k {
        let load = format!("s{j}.template vec<N>(i, t{j});");
        let line = if j == 0 {
            load
        } else {
            format!(
                "if constexpr ((OWN >> {j} & 1) != 0) s{j}.template vec_from<N>(i, t0, t0[0], t{j}); else {load}"
            )
        };
        let _ = writeln!(s, "    typename S{j}::T t{j}[N];\n    {line}");
    }
    for j in 0..k {
        let _ = writeln!(
            s,
            "#pragma unroll\n    for (int q = 0; q < N; ++q) v[q].c{j} = ds::to_c<typename S{j}::T>(t{j}[q]);"
        );
    }
    let _ = writeln!(s, "  }}");
}

/// The single-pass scan's tile in shared memory: `stage`, `stage_wait`, `staged` and
/// `store_round`, column j at TILE x (bytes of the columns before it), in the staging layout
/// of block/load.cuh.
fn print_tile(s: &mut String, c: &CombinerShape, tparams: &str, args: &str) {
    let st = |j: usize| c.types[j].cuda_name();
    let offsets: Vec<usize> = (0..c.types.len())
        .scan(0, |o, j| {
            let at = *o;
            *o += c.types[j].size();
            Some(at)
        })
        .collect();
    // The head of a function over the staged tile, `params` before the component sources.
    let tile_fn = |s: &mut String, name: &str, params: &str| {
        let _ = writeln!(
            s,
            "  template <int BLOCK, int R, int VEC, {tparams}> static DS_DEV void {name}({params}, {args}) {{\n    constexpr u64 TILE = (u64)BLOCK * R * VEC;"
        );
    };
    tile_fn(s, "stage", "u64 n, u64 tb, unsigned char* m");
    for (j, o) in offsets.iter().enumerate() {
        let _ = writeln!(
            s,
            "    static_assert(sizeof(typename S{j}::T) == sizeof({t}), \"column {j}\");\n    ds::src_stage<BLOCK, R, VEC>(s{j}, n, tb, ({t}*)(m + TILE * {o}), {t}{{}});",
            t = st(j),
        );
    }
    let _ = writeln!(s, "  }}");
    // Waits for the copies; components staged as their one column are computed in place.
    tile_fn(s, "stage_wait", "u64 tb, unsigned char* m");
    for (j, o) in offsets.iter().enumerate() {
        let _ = writeln!(
            s,
            "    ds::src_stage_wait<BLOCK, R, VEC>(s{j}, tb, (typename S{j}::T*)(m + TILE * {o}));"
        );
    }
    let _ = writeln!(s, "  }}");
    let _ = writeln!(
        s,
        "  template <int BLOCK, int VEC> static DS_DEV void staged(const unsigned char* m, u64 tile, int r, V (&v)[VEC]) {{"
    );
    for (j, o) in offsets.iter().enumerate() {
        let _ = writeln!(
            s,
            "    {{ {t} t[VEC]; ds::staged_round<BLOCK, VEC>((const {t}*)(m + tile * {o}), r, t);\n#pragma unroll\n      for (int q = 0; q < VEC; ++q) v[q].c{j} = ds::to_c<{t}>(t[q]); }}",
            t = st(j),
        );
    }
    let _ = writeln!(s, "  }}");
    let _ = writeln!(
        s,
        "  template <int BLOCK, int VEC, bool WHOLE = false> static DS_DEV void store_round(const AssocParams& p, u64 n, u64 tb, int r, const V (&v)[VEC]) {{"
    );
    // WHOLE: the round's items are all before n (no bounds to test).
    for j in 0..c.stored {
        let _ = writeln!(
            s,
            "    {{ {t} t[VEC];\n#pragma unroll\n      for (int q = 0; q < VEC; ++q) t[q] = ds::from_c<{t}>(v[q].c{j});\n      if constexpr (WHOLE) ds::store_vec<{t}, VEC>(({t}*)p.out{j} + tb + ((u64)r * BLOCK + threadIdx.x) * VEC, t);\n      else ds::store_round<BLOCK, VEC, true>(({t}*)p.out{j}, n, tb, r, t); }}",
            t = st(j)
        );
    }
    let _ = writeln!(s, "  }}");
}

/// `from_words` and `to_words`: an item as look-back words, a component a word.
fn print_words(s: &mut String, c: &CombinerShape) {
    let k = c.types.len();
    let ct = |j: usize| ctype(c.types[j]);
    let _ = writeln!(s, "  static DS_DEV V from_words(const u64* w) {{\n    V v;");
    for j in 0..k {
        let _ = writeln!(s, "    v.c{j} = ds::from_bits<{}>(w[{j}]);", ct(j));
    }
    let _ = writeln!(s, "    return v;\n  }}");
    let _ = writeln!(s, "  static DS_DEV void to_words(const V& v, u64* w) {{");
    for j in 0..k {
        let _ = writeln!(s, "    w[{j}] = ds::to_bits<{}>(v.c{j});", ct(j));
    }
    let _ = writeln!(s, "  }}");
}
