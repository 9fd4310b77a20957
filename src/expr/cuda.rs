//! Expression graphs as CUDA C++: one `const` local a node, with the functions of
//! `kernels/prelude.cuh`, which have the semantics that the host interpreter (`eval.rs`) has.

use super::graph::{Bin, Cmp, Kind, Node, Un, loop_nexts};
use crate::item::ScalarType;
use std::fmt::Write;

/// The C++ compute type of values of element type `ty`.
pub(crate) fn ctype(ty: ScalarType) -> &'static str {
    ty.compute_name()
}

/// Appends to `s` one line a node (`const C v3 = ...;`, indented by `indent`), the leaves
/// printed by `leaf`; returns the name of node `out`'s value.
pub(crate) fn print_nodes(
    s: &mut String,
    nodes: &[Node],
    out: u32,
    indent: &str,
    leaf: impl Fn(&Node) -> String,
) -> String {
    let mut depth = 0;
    let invariant = invariant_divisors(nodes);
    for (i, n) in nodes.iter().enumerate() {
        let pad = "    ".repeat(depth);
        // A loop: its state in locals, its body in a `for`, the next state assigned at its end.
        match &n.kind {
            Kind::LoopVar(a) => {
                let _ = writeln!(s, "{indent}{pad}{} v{i} = v{a};", ctype(n.ty));
            }
            Kind::LoopIndex(count) => {
                print_divisors(
                    s,
                    nodes,
                    &invariant,
                    i as u32,
                    &format!("{indent}{pad}"),
                    &leaf,
                );
                let _ = writeln!(
                    s,
                    "{indent}{pad}for (u32 v{i} = 0; v{i} < v{count}; ++v{i}) {{"
                );
                depth += 1;
            }
            Kind::LoopEnd(_) => {
                for k in loop_nexts(nodes, i) {
                    if let Kind::LoopNext(var, _) = nodes[k].kind {
                        let _ = writeln!(s, "{indent}{pad}v{var} = v{k};");
                    }
                }
                depth -= 1;
                let _ = writeln!(s, "{indent}{}}}", "    ".repeat(depth));
            }
            _ => {
                // A division by a divisor the loop around it does not change: that loop's index.
                let by_invariant = invariant
                    .iter()
                    .find(|&&(_, k)| k == i as u32)
                    .map(|&((l, _), _)| l);
                let e = node_expr(nodes, n, by_invariant, &leaf);
                let _ = writeln!(s, "{indent}{pad}const {} v{i} = {e};", ctype(n.ty));
            }
        }
    }
    format!("v{out}")
}

/// Before the loop whose index is node `l`: the reciprocals of the divisors its body divides
/// by, made once.
fn print_divisors(
    s: &mut String,
    nodes: &[Node],
    invariant: &[((u32, u32), u32)],
    l: u32,
    pad: &str,
    leaf: &impl Fn(&Node) -> String,
) {
    let mut made: Vec<u32> = Vec::new();
    for &((_, b), _) in invariant.iter().filter(|&&((m, _), _)| m == l) {
        if made.contains(&b) {
            continue;
        }
        made.push(b);
        let d = &nodes[b as usize];
        let t = ctype(d.ty);
        let x = match d.kind {
            // A constant of the body, read where it is needed.
            Kind::Param(_) if b >= l => leaf(d),
            _ => format!("v{b}"),
        };
        let _ = writeln!(
            s,
            "{pad}const ds::Divider<{t}> dv{b}_{l} = ds::divider<{t}>({x});"
        );
    }
}

/// The C++ expression of node `n` (not a loop's own node) over the locals of its operands;
/// `by_invariant` is the loop whose divisor's reciprocal a division uses.
fn node_expr(
    nodes: &[Node],
    n: &Node,
    by_invariant: Option<u32>,
    leaf: &impl Fn(&Node) -> String,
) -> String {
    let c = ctype(n.ty);
    let v = |k: &u32| format!("v{k}");
    match &n.kind {
        Kind::Arg(_)
        | Kind::Param(_)
        | Kind::Column(_)
        | Kind::At(..)
        | Kind::Index
        | Kind::Head(..)
        | Kind::Random(..) => leaf(n),
        // Not of a `bool` (a `u8` of 0 or 1) is logical.
        Kind::Unary(Un::Not, a) if n.ty == ScalarType::Bool => format!("(u8)({} ^ 1)", v(a)),
        Kind::Unary(op, a) => format!("{}({})", unary_fn(*op, c), v(a)),
        Kind::Binary(op @ (Bin::Div | Bin::Rem), a, b) if by_invariant.is_some() => {
            let l = by_invariant.unwrap_or_default();
            let f = if *op == Bin::Div { "div_by" } else { "rem_by" };
            format!("ds::{f}<{c}>({}, dv{b}_{l})", v(a))
        }
        Kind::Binary(op, a, b) => format!("{}({}, {})", binary_fn(*op, c), v(a), v(b)),
        Kind::Cmp(op, a, b) => format!("(u8)({} {} {} ? 1 : 0)", v(a), cmp_op(*op), v(b)),
        Kind::Select(cnd, a, b) => format!("({} != 0 ? {} : {})", v(cnd), v(a), v(b)),
        Kind::Canon(a) => format!("ds::canon({})", v(a)),
        Kind::Bits(a) => {
            // (Tracing made a computed operand canonical first: `Kind::Bits`.)
            let x = v(a);
            match nodes[*a as usize].ty {
                ScalarType::F16 => format!("ds::f16_bits({x})"),
                ScalarType::BF16 => format!("ds::bf16_bits({x})"),
                t => format!("ds::to_bits<{}>({x})", ctype(t)),
            }
        }
        // To `bool`: nonzero is true (IEEE for floats: -0.0 is zero, NaN is not).
        Kind::Cast(a) if n.ty == ScalarType::Bool => format!("(u8)({} != 0 ? 1 : 0)", v(a)),
        Kind::Cast(a) => {
            let from = ctype(nodes[*a as usize].ty);
            let x = format!("ds::cast<{c}, {from}>({})", v(a));
            match n.ty {
                ScalarType::F16 => format!("ds::round_f16({x})"),
                ScalarType::BF16 => format!("ds::round_bf16({x})"),
                _ => x,
            }
        }
        Kind::LoopNext(_, a) | Kind::LoopOut(a, _) => v(a),
        Kind::LoopVar(_) | Kind::LoopIndex(_) | Kind::LoopEnd(_) => unreachable!(),
        Kind::FromBits(a) => {
            let x = v(a);
            let bits = n.ty.bits();
            let low = if bits == 64 {
                format!("(u64){x}")
            } else {
                format!("((u64){x} & 0x{:x}ull)", (1u64 << bits) - 1)
            };
            match n.ty {
                ScalarType::Bool => format!("(u8)({low} != 0 ? 1 : 0)"),
                t => format!("ds::from_stored<{}>({low})", t.cuda_name()),
            }
        }
    }
}

/// The prelude's function of a unary operator on compute type `c`.
fn unary_fn(op: Un, c: &str) -> String {
    match op {
        Un::Neg => format!("ds::neg<{c}>"),
        Un::Not => format!("ds::bit_not<{c}>"),
        Un::Abs => "ds::fabs_".into(),
        Un::Sqrt => "ds::sqrt_".into(),
        Un::Exp => "ds::exp_".into(),
        Un::Ln => "ds::ln_".into(),
        Un::Sin => "ds::sin_".into(),
        Un::Cos => "ds::cos_".into(),
        Un::Tanh => "ds::tanh_".into(),
        Un::Floor => "ds::floor_".into(),
        Un::Ceil => "ds::ceil_".into(),
        Un::Round => "ds::round_".into(),
    }
}

/// The prelude's function of a binary operator on compute type `c`.
fn binary_fn(op: Bin, c: &str) -> String {
    match op {
        Bin::Add => format!("ds::add<{c}>"),
        Bin::Sub => format!("ds::sub<{c}>"),
        Bin::Mul => format!("ds::mul<{c}>"),
        Bin::Div => format!("ds::div<{c}>"),
        Bin::Rem => format!("ds::rem<{c}>"),
        Bin::And => format!("ds::bit_and<{c}>"),
        Bin::Or => format!("ds::bit_or<{c}>"),
        Bin::Xor => format!("ds::bit_xor<{c}>"),
        Bin::Shl => format!("ds::shl<{c}>"),
        Bin::Shr => format!("ds::shr<{c}>"),
        Bin::Min => format!("ds::min_<{c}>"),
        Bin::Max => format!("ds::max_<{c}>"),
        Bin::Pow => "ds::pow_".into(),
    }
}

/// The C++ comparison operator.
fn cmp_op(op: Cmp) -> &'static str {
    match op {
        Cmp::Eq => "==",
        Cmp::Ne => "!=",
        Cmp::Lt => "<",
        Cmp::Le => "<=",
        Cmp::Gt => ">",
        Cmp::Ge => ">=",
    }
}

/// The divisions of `u32` and `u64` values inside a loop's body by a divisor the loop does not
/// change (defined before the loop's state, or a constant): `((loop, divisor), node)`, the loop its
/// `LoopIndex`, for `print_nodes` to make each divisor's reciprocal once before the loop.
fn invariant_divisors(nodes: &[Node]) -> Vec<((u32, u32), u32)> {
    let mut out = Vec::new();
    // The innermost open loop's index and the first node of its state.
    let mut open: Vec<(u32, u32)> = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
        match n.kind {
            Kind::LoopIndex(_) => {
                let mut start = i;
                while start > 0 && matches!(nodes[start - 1].kind, Kind::LoopVar(_)) {
                    start -= 1;
                }
                open.push((i as u32, start as u32));
            }
            Kind::LoopEnd(_) => {
                open.pop();
            }
            Kind::Binary(Bin::Div | Bin::Rem, _, b)
                if matches!(n.ty, ScalarType::U32 | ScalarType::U64) =>
            {
                if let Some(&(l, start)) = open.last()
                    && (b < start || matches!(nodes[b as usize].kind, Kind::Param(_)))
                {
                    out.push(((l, b), i as u32));
                }
            }
            _ => {}
        }
    }
    out
}
