//! The host's interpreter of expression graphs: a graph evaluated element by element, with
//! the semantics that the C++ printed from the same graph has on the GPU (`cuda.rs`).

use super::graph::{Bin, Cmp, Kind, Node, Un};
use crate::item::{ScalarType, float_max, float_min};
use half::{bf16, f16};

/// A value in its compute type (f16 and bf16 values are `F32`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Val {
    I8(i8),
    I16(i16),
    I32(i32),
    I64(i64),
    U8(u8),
    U16(u16),
    U32(u32),
    U64(u64),
    F32(f32),
    F64(f64),
}

impl Val {
    /// The value of compute type `ty.compute()` whose bits are `bits`.
    pub fn from_compute_bits(ty: ScalarType, bits: u64) -> Val {
        use ScalarType::*;
        match ty.compute() {
            I8 => Val::I8(bits as i8),
            I16 => Val::I16(bits as i16),
            I32 => Val::I32(bits as i32),
            I64 => Val::I64(bits as i64),
            U8 => Val::U8(bits as u8),
            U16 => Val::U16(bits as u16),
            U32 => Val::U32(bits as u32),
            U64 => Val::U64(bits),
            F64 => Val::F64(f64::from_bits(bits)),
            _ => Val::F32(f32::from_bits(bits as u32)),
        }
    }

    /// A stored element of type `ty` (bits) as a compute value.
    pub fn load(ty: ScalarType, bits: u64) -> Val {
        match ty {
            ScalarType::F16 | ScalarType::BF16 => {
                Val::F32(f32::from_bits(ty.compute_from_stored(bits) as u32))
            }
            t => Val::from_compute_bits(t, bits),
        }
    }

    /// The stored bits of this value as an element of type `ty` (rounded for f16/bf16).
    pub fn store(self, ty: ScalarType) -> u64 {
        match (ty, self) {
            (ScalarType::F16, Val::F32(x)) => f16::from_f32(x).to_bits() as u64,
            (ScalarType::BF16, Val::F32(x)) => bf16::from_f32(x).to_bits() as u64,
            (_, v) => v.bits(),
        }
    }

    pub fn bits(self) -> u64 {
        match self {
            Val::I8(x) => x as u8 as u64,
            Val::I16(x) => x as u16 as u64,
            Val::I32(x) => x as u32 as u64,
            Val::I64(x) => x as u64,
            Val::U8(x) => x as u64,
            Val::U16(x) => x as u64,
            Val::U32(x) => x as u64,
            Val::U64(x) => x,
            Val::F32(x) => x.to_bits() as u64,
            Val::F64(x) => x.to_bits(),
        }
    }

    fn truthy(self) -> bool {
        self.bits() != 0
    }
}

macro_rules! int_arms {
    ($a:expr, $b:expr, |$x:ident, $y:ident| $e:expr) => {
        match ($a, $b) {
            (Val::I8($x), Val::I8($y)) => Val::I8($e),
            (Val::I16($x), Val::I16($y)) => Val::I16($e),
            (Val::I32($x), Val::I32($y)) => Val::I32($e),
            (Val::I64($x), Val::I64($y)) => Val::I64($e),
            (Val::U8($x), Val::U8($y)) => Val::U8($e),
            (Val::U16($x), Val::U16($y)) => Val::U16($e),
            (Val::U32($x), Val::U32($y)) => Val::U32($e),
            (Val::U64($x), Val::U64($y)) => Val::U64($e),
            (a, _) => a,
        }
    };
}

macro_rules! all_arms {
    ($a:expr, $b:expr, |$x:ident, $y:ident| $int:expr, $flt:expr) => {
        match ($a, $b) {
            (Val::F32($x), Val::F32($y)) => Val::F32($flt),
            (Val::F64($x), Val::F64($y)) => Val::F64($flt),
            (a, b) => int_arms!(a, b, |$x, $y| $int),
        }
    };
}

macro_rules! cmp_arms {
    ($a:expr, $b:expr, |$x:ident, $y:ident| $e:expr) => {
        match ($a, $b) {
            (Val::I8($x), Val::I8($y)) => $e,
            (Val::I16($x), Val::I16($y)) => $e,
            (Val::I32($x), Val::I32($y)) => $e,
            (Val::I64($x), Val::I64($y)) => $e,
            (Val::U8($x), Val::U8($y)) => $e,
            (Val::U16($x), Val::U16($y)) => $e,
            (Val::U32($x), Val::U32($y)) => $e,
            (Val::U64($x), Val::U64($y)) => $e,
            (Val::F32($x), Val::F32($y)) => $e,
            (Val::F64($x), Val::F64($y)) => $e,
            _ => false,
        }
    };
}

macro_rules! float_fn {
    ($a:expr, |$x:ident| $e:expr) => {
        match $a {
            Val::F32($x) => Val::F32($e),
            Val::F64($x) => Val::F64($e),
            v => v,
        }
    };
}

fn shift_amount(v: Val) -> u32 {
    match v {
        Val::U32(s) => s,
        v => v.bits() as u32,
    }
}

fn unary(op: Un, a: Val) -> Val {
    match op {
        Un::Neg => match a {
            Val::F32(x) => Val::F32(-x),
            Val::F64(x) => Val::F64(-x),
            a => int_arms!(a, a, |x, _y| x.wrapping_neg()),
        },
        Un::Not => int_arms!(a, a, |x, _y| !x),
        Un::Abs => float_fn!(a, |x| x.abs()),
        Un::Sqrt => float_fn!(a, |x| x.sqrt()),
        Un::Exp => float_fn!(a, |x| x.exp()),
        Un::Ln => float_fn!(a, |x| x.ln()),
        Un::Sin => float_fn!(a, |x| x.sin()),
        Un::Cos => float_fn!(a, |x| x.cos()),
        Un::Tanh => float_fn!(a, |x| x.tanh()),
        Un::Floor => float_fn!(a, |x| x.floor()),
        Un::Ceil => float_fn!(a, |x| x.ceil()),
        Un::Round => float_fn!(a, |x| x.round()),
    }
}

fn binary(op: Bin, a: Val, b: Val) -> Val {
    match op {
        Bin::Add => all_arms!(a, b, |x, y| x.wrapping_add(y), x + y),
        Bin::Sub => all_arms!(a, b, |x, y| x.wrapping_sub(y), x - y),
        Bin::Mul => all_arms!(a, b, |x, y| x.wrapping_mul(y), x * y),
        Bin::Div => all_arms!(
            a,
            b,
            |x, y| if y == 0 { 0 } else { x.wrapping_div(y) },
            x / y
        ),
        Bin::Rem => int_arms!(a, b, |x, y| if y == 0 { x } else { x.wrapping_rem(y) }),
        Bin::And => int_arms!(a, b, |x, y| x & y),
        Bin::Or => int_arms!(a, b, |x, y| x | y),
        Bin::Xor => int_arms!(a, b, |x, y| x ^ y),
        Bin::Shl => {
            let s = shift_amount(b);
            int_arms!(a, a, |x, _y| x.wrapping_shl(s))
        }
        Bin::Shr => {
            let s = shift_amount(b);
            int_arms!(a, a, |x, _y| x.wrapping_shr(s))
        }
        Bin::Min => all_arms!(a, b, |x, y| if y < x { y } else { x }, float_min(x, y)),
        Bin::Max => all_arms!(a, b, |x, y| if y > x { y } else { x }, float_max(x, y)),
        Bin::Pow => match (a, b) {
            (Val::F32(x), Val::F32(y)) => Val::F32(x.powf(y)),
            (Val::F64(x), Val::F64(y)) => Val::F64(x.powf(y)),
            (a, _) => a,
        },
    }
}

fn compare(op: Cmp, a: Val, b: Val) -> Val {
    let r = match op {
        Cmp::Eq => cmp_arms!(a, b, |x, y| x == y),
        Cmp::Ne => cmp_arms!(a, b, |x, y| x != y),
        Cmp::Lt => cmp_arms!(a, b, |x, y| x < y),
        Cmp::Le => cmp_arms!(a, b, |x, y| x <= y),
        Cmp::Gt => cmp_arms!(a, b, |x, y| x > y),
        Cmp::Ge => cmp_arms!(a, b, |x, y| x >= y),
    };
    Val::U8(r as u8)
}

macro_rules! cast_to {
    ($v:expr, $t:ty) => {
        match $v {
            Val::I8(x) => x as $t,
            Val::I16(x) => x as $t,
            Val::I32(x) => x as $t,
            Val::I64(x) => x as $t,
            Val::U8(x) => x as $t,
            Val::U16(x) => x as $t,
            Val::U32(x) => x as $t,
            Val::U64(x) => x as $t,
            Val::F32(x) => x as $t,
            Val::F64(x) => x as $t,
        }
    };
}

/// Rust's `as` from `v` to element type `to` (to f16/bf16 through f32, then rounded).
pub(crate) fn cast(v: Val, to: ScalarType) -> Val {
    use ScalarType::*;
    match to {
        I8 => Val::I8(cast_to!(v, i8)),
        I16 => Val::I16(cast_to!(v, i16)),
        I32 => Val::I32(cast_to!(v, i32)),
        I64 => Val::I64(cast_to!(v, i64)),
        U8 => Val::U8(cast_to!(v, u8)),
        U16 => Val::U16(cast_to!(v, u16)),
        U32 => Val::U32(cast_to!(v, u32)),
        U64 => Val::U64(cast_to!(v, u64)),
        F32 => Val::F32(cast_to!(v, f32)),
        F64 => Val::F64(cast_to!(v, f64)),
        F16 => Val::F32(f16::from_f32(cast_to!(v, f32)).to_f32()),
        BF16 => Val::F32(bf16::from_f32(cast_to!(v, f32)).to_f32()),
    }
}

/// A computed value as it leaves an expression: a NaN of any sign or payload becomes the one
/// NaN of its type (`f32::NAN`, `f64::NAN`), as on the GPU (`ds::canon`), since the sign of a
/// NaN result depends on how the arithmetic was arranged.
pub(crate) fn canonical(v: Val) -> Val {
    match v {
        Val::F32(x) if x.is_nan() => Val::F32(f32::NAN),
        Val::F64(x) if x.is_nan() => Val::F64(f64::NAN),
        v => v,
    }
}

/// Evaluates `nodes` for one element and returns node `out`; `leaf` gives the value of every
/// leaf node (`Arg`, `Param`, `Column`, `Index`); `vals` is scratch of the nodes' length.
#[inline]
pub(crate) fn eval(
    nodes: &[Node],
    out: u32,
    vals: &mut [Val],
    mut leaf: impl FnMut(&Node) -> Val,
) -> Val {
    for (i, n) in nodes.iter().enumerate() {
        let v = |k: &u32| vals[*k as usize];
        vals[i] = match &n.kind {
            Kind::Arg(_)
            | Kind::Param(_)
            | Kind::Column(_)
            | Kind::Index
            | Kind::Head(..)
            | Kind::Random(..) => leaf(n),
            Kind::Unary(op, a) => unary(*op, v(a)),
            Kind::Binary(op, a, b) => binary(*op, v(a), v(b)),
            Kind::Cmp(op, a, b) => compare(*op, v(a), v(b)),
            Kind::Select(c, a, b) => {
                if v(c).truthy() {
                    v(a)
                } else {
                    v(b)
                }
            }
            Kind::Cast(a) => cast(v(a), n.ty),
            Kind::Bits(a) => {
                // A computed NaN is made canonical first (its sign is not specified).
                let o = &nodes[*a as usize];
                let x = if o.kind.is_leaf() {
                    v(a)
                } else {
                    canonical(v(a))
                };
                Val::U64(o.ty.bits_from_compute(x.bits()))
            }
        };
    }
    vals[out as usize]
}
