//! Expression graphs as CUDA C++: one `const` local a node, with the functions of
//! `kernels/prelude.cuh`, which have the semantics that the host interpreter (`eval.rs`) has.

use super::graph::{Bin, Cmp, Kind, Node, Un};
use crate::item::ScalarType;
use std::fmt::Write;

/// The C++ compute type of values of element type `ty`.
pub(crate) fn ctype(ty: ScalarType) -> &'static str {
    ty.compute_name()
}

/// Appends to `s` one line a node (`const C v3 = ...;`, indented by `indent`), the leaves
/// printed by `leaf`; returns the name of node `out`'s value. `magic` gives, for a division or
/// remainder node, the expression of its divisor's multiplier where the caller passes one
/// (`divisor_magic`), and the node divides by multiplication (`ds::div_by`, `ds::rem_by`).
pub(crate) fn print_nodes(
    s: &mut String,
    nodes: &[Node],
    out: u32,
    indent: &str,
    leaf: impl Fn(&Node) -> String,
    magic: impl Fn(usize) -> Option<String>,
) -> String {
    for (i, n) in nodes.iter().enumerate() {
        let c = ctype(n.ty);
        let v = |k: &u32| format!("v{k}");
        let e = match &n.kind {
            Kind::Arg(_)
            | Kind::Param(_)
            | Kind::Column(_)
            | Kind::Index
            | Kind::Head(..)
            | Kind::Random(..) => leaf(n),
            Kind::Unary(op, a) => {
                let f = match op {
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
                };
                format!("{f}({})", v(a))
            }
            Kind::Binary(op @ (Bin::Div | Bin::Rem), a, b) if magic(i).is_some() => {
                let f = if *op == Bin::Div { "div_by" } else { "rem_by" };
                let m = magic(i).unwrap_or_default();
                format!("ds::{f}<{c}>({}, {}, {m})", v(a), v(b))
            }
            Kind::Binary(op, a, b) => {
                let f = match op {
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
                };
                format!("{f}({}, {})", v(a), v(b))
            }
            Kind::Cmp(op, a, b) => {
                let o = match op {
                    Cmp::Eq => "==",
                    Cmp::Ne => "!=",
                    Cmp::Lt => "<",
                    Cmp::Le => "<=",
                    Cmp::Gt => ">",
                    Cmp::Ge => ">=",
                };
                format!("(u8)({} {o} {} ? 1 : 0)", v(a), v(b))
            }
            Kind::Select(cnd, a, b) => format!("({} != 0 ? {} : {})", v(cnd), v(a), v(b)),
            Kind::Bits(a) => {
                // A computed NaN is made canonical first (its sign is not specified).
                let o = &nodes[*a as usize];
                let x = if o.kind.is_leaf() {
                    v(a)
                } else {
                    format!("ds::canon({})", v(a))
                };
                match o.ty {
                    ScalarType::F16 => format!("ds::f16_bits({x})"),
                    ScalarType::BF16 => format!("ds::bf16_bits({x})"),
                    t => format!("ds::to_bits<{}>({x})", ctype(t)),
                }
            }
            Kind::Cast(a) => {
                let from = ctype(nodes[*a as usize].ty);
                let x = format!("ds::cast<{c}, {from}>({})", v(a));
                match n.ty {
                    ScalarType::F16 => format!("ds::round_f16({x})"),
                    ScalarType::BF16 => format!("ds::round_bf16({x})"),
                    _ => x,
                }
            }
        };
        let _ = writeln!(s, "{indent}const {c} v{i} = {e};");
    }
    format!("v{out}")
}

/// Division and remainder nodes of `nodes` whose divisor is a constant (a `Param` leaf) of
/// an unsigned type: the GPU divides by such a constant by multiplication, with a multiplier
/// that the host computes from the constant (`divisor_magic`) and passes after the
/// constants. Each as (node, the divisor's parameter).
pub(crate) fn constant_divisors(nodes: &[Node]) -> Vec<(usize, u32)> {
    use ScalarType::*;
    nodes
        .iter()
        .enumerate()
        .filter_map(|(i, n)| match n.kind {
            Kind::Binary(Bin::Div | Bin::Rem, _, b) if matches!(n.ty, U8 | U16 | U32 | U64) => {
                match nodes[b as usize].kind {
                    Kind::Param(p) => Some((i, p)),
                    _ => None,
                }
            }
            _ => None,
        })
        .collect()
}

/// The multiplier by which the GPU divides by the constant whose bits are `bits` (of an
/// unsigned type `ty`): m = ceil(2^64 / d) for 2 <= d < 2^32, so that a / d = (m * a) >> 64
/// for every a < 2^32 (Lemire, Kaser and Kurz, "Faster remainder by direct computation",
/// 2019: exact where 64 >= 32 + log2(d)); 0 where d is 0, 1 or beyond 32 bits, which divide
/// as before.
pub(crate) fn divisor_magic(ty: ScalarType, bits: u64) -> u64 {
    let d = bits & (u64::MAX >> (64 - 8 * ty.size()));
    if (2..1u64 << 32).contains(&d) {
        u64::MAX / d + 1
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Quotient and remainder as the expression semantics define them (by 0: 0 and `a`).
    fn oracle(a: u64, d: u64) -> (u64, u64) {
        (a.checked_div(d).unwrap_or(0), a.checked_rem(d).unwrap_or(a))
    }

    /// The GPU's `div_by` / `rem_by` (kernels/prelude.cuh), step for step.
    fn div_by(a: u64, d: u64, m: u64) -> (u64, u64) {
        if m != 0 && a >> 32 == 0 {
            let t = (m >> 32) * a + (((m & 0xffff_ffff) * a) >> 32);
            let q = t >> 32;
            (
                q,
                (a as u32).wrapping_sub((q as u32).wrapping_mul(d as u32)) as u64,
            )
        } else {
            oracle(a, d)
        }
    }

    #[test]
    fn constant_divisors_divide_exactly() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut ds: Vec<u64> = vec![0, 1, 2, 3, 5, 7, 10, 641, 65_535, 65_537, 6_700_417];
        for k in 1..33 {
            ds.extend([(1u64 << k) - 1, 1 << k, (1 << k) + 1]);
        }
        ds.extend((0..300).map(|_| next() >> (next() % 64)));
        for d in ds {
            let m = divisor_magic(ScalarType::U64, d);
            assert_eq!(m != 0, (2..1 << 32).contains(&d), "{d}");
            let mut xs: Vec<u64> = vec![
                0,
                1,
                u32::MAX as u64,
                u32::MAX as u64 - 1,
                1 << 32,
                u64::MAX,
            ];
            for k in [1u64, 2, 3, 1000, u32::MAX as u64 / d.max(1)] {
                let b = d.wrapping_mul(k);
                xs.extend([b.wrapping_sub(1), b, b.wrapping_add(1)]);
            }
            xs.extend((0..2000).map(|_| next() >> 32));
            for a in xs {
                assert_eq!(div_by(a, d, m), oracle(a, d), "{a} / {d}");
            }
        }
        // The constant's bits are those of its own type.
        assert_eq!(
            divisor_magic(ScalarType::U8, 0x1_03),
            divisor_magic(ScalarType::U64, 3)
        );
        assert_eq!(divisor_magic(ScalarType::U16, 0x1_0000), 0);
        assert_eq!(
            divisor_magic(ScalarType::U32, u32::MAX as u64),
            u64::MAX / 0xffff_ffff + 1
        );
    }
}
