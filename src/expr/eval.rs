//! The host's interpreter of expression graphs, with the semantics that the C++ printed from
//! the same graph has on the GPU (`cuda.rs`): a graph evaluated for one element (`eval`), or
//! for a block of elements node by node in typed loops (`eval_block`), both through the same
//! per-element operations (`apply`).

use super::graph::{Bin, Cmp, Kind, Node, Un, loop_end, loop_nexts};
use crate::item::{ScalarType, float_max, float_min};
use half::{bf16, f16};

/// `Val` (one value of a compute type), `Lanes` (a block of values of one) and the `Lane`
/// trait of each type, from one list of the compute types (f16 and bf16 compute in f32).
macro_rules! compute_types {
    ($($V:ident($t:ty)),*) => {
        /// A value in its compute type (f16 and bf16 values are `F32`).
        #[derive(Debug, Clone, Copy, PartialEq)]
        pub(crate) enum Val {
            $($V($t),)*
        }

        /// One node's values over a block of elements, in its compute type: a typed vector,
        /// so that `eval_block` runs one monomorphic loop a node where the operands' types
        /// allow.
        pub(crate) enum Lanes {
            $($V(Vec<$t>),)*
        }

        $(impl Lane for $t {
            #[inline(always)]
            fn val(self) -> Val {
                Val::$V(self)
            }
            #[inline(always)]
            fn of(v: Val) -> Self {
                match v {
                    Val::$V(x) => x,
                    _ => {
                        debug_assert!(false, "a value of another type than its lane's");
                        Self::default()
                    }
                }
            }
            fn lane(l: &Lanes) -> Option<&Vec<Self>> {
                match l {
                    Lanes::$V(v) => Some(v),
                    _ => None,
                }
            }
            fn lane_mut(l: &mut Lanes) -> Option<&mut Vec<Self>> {
                match l {
                    Lanes::$V(v) => Some(v),
                    _ => None,
                }
            }
        })*

        impl Lanes {
            /// An empty lane for values of compute type `ty.compute()`, room for `len`.
            pub fn new(ty: ScalarType, len: usize) -> Lanes {
                match ty.compute() {
                    $(ScalarType::$V => Lanes::$V(Vec::with_capacity(len)),)*
                    // f16 and bf16 compute in f32.
                    _ => Lanes::F32(Vec::with_capacity(len)),
                }
            }

            pub fn clear(&mut self) {
                match self {
                    $(Lanes::$V(v) => v.clear(),)*
                }
            }

            /// The number of values.
            pub fn len(&self) -> usize {
                match self {
                    $(Lanes::$V(v) => v.len(),)*
                }
            }

            /// Appends values `start`, `start + step`, … of `src` (`count` of them), a lane of
            /// this one's type.
            pub fn push_strided(&mut self, src: &Lanes, start: usize, step: usize, count: usize) {
                match (self, src) {
                    $((Lanes::$V(d), Lanes::$V(s)) => {
                        if step == 1 {
                            d.extend_from_slice(&s[start..start + count]);
                        } else {
                            d.extend((0..count).map(|k| s[start + k * step]));
                        }
                    })*
                    _ => debug_assert!(false, "lanes of two types"),
                }
            }

            /// Sets values `start`, `start + step`, … to those of `src` in order, a lane of this
            /// one's type (this one long enough).
            pub fn set_strided(&mut self, src: &Lanes, start: usize, step: usize) {
                match (self, src) {
                    $((Lanes::$V(d), Lanes::$V(s)) => {
                        for (k, &x) in s.iter().enumerate() {
                            d[start + k * step] = x;
                        }
                    })*
                    _ => debug_assert!(false, "lanes of two types"),
                }
            }

            /// Sets value `j` to `v`, a value of the lane's type.
            #[inline]
            pub fn set(&mut self, j: usize, v: Val) {
                match (self, v) {
                    $((Lanes::$V(d), Val::$V(x)) => d[j] = x,)*
                    _ => debug_assert!(false, "a value of another type than its lane's"),
                }
            }

            /// Value `j`.
            #[inline]
            pub fn get(&self, j: usize) -> Val {
                match self {
                    $(Lanes::$V(v) => Val::$V(v[j]),)*
                }
            }

            /// Appends `v`, a value of the lane's type (a graph's nodes have the types their
            /// values have).
            #[inline]
            pub fn push(&mut self, v: Val) {
                match (self, v) {
                    $((Lanes::$V(l), Val::$V(x)) => l.push(x),)*
                    (l, _) => {
                        // Never (a node's values have its type); a zero keeps the lane's length.
                        debug_assert!(false, "a value of another type than its lane's");
                        match l {
                            $(Lanes::$V(l) => l.push(<$t>::default()),)*
                        }
                    }
                }
            }
        }
    };
}

compute_types!(
    I8(i8),
    I16(i16),
    I32(i32),
    I64(i64),
    U8(u8),
    U16(u16),
    U32(u32),
    U64(u64),
    F32(f32),
    F64(f64)
);

impl Lanes {
    /// Each float NaN made the canonical one (as `canonical` does a value).
    pub fn canonicalize(&mut self) {
        match self {
            Lanes::F32(v) => v
                .iter_mut()
                .filter(|x| x.is_nan())
                .for_each(|x| *x = f32::NAN),
            Lanes::F64(v) => v
                .iter_mut()
                .filter(|x| x.is_nan())
                .for_each(|x| *x = f64::NAN),
            _ => {}
        }
    }
}

impl Val {
    /// The value of compute type `ty.compute()` whose bits are `bits`.
    #[inline]
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
    #[inline]
    pub fn load(ty: ScalarType, bits: u64) -> Val {
        match ty {
            ScalarType::F16 | ScalarType::BF16 => {
                Val::F32(f32::from_bits(ty.compute_from_stored(bits) as u32))
            }
            t => Val::from_compute_bits(t, bits),
        }
    }

    /// The stored bits of this value as an element of type `ty` (rounded for f16/bf16).
    #[inline]
    pub fn store(self, ty: ScalarType) -> u64 {
        match (ty, self) {
            (ScalarType::F16, Val::F32(x)) => f16::from_f32(x).to_bits() as u64,
            (ScalarType::BF16, Val::F32(x)) => bf16::from_f32(x).to_bits() as u64,
            (_, v) => v.bits(),
        }
    }

    #[inline]
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

    /// `self != 0` (floats: IEEE, so that `-0.0` is zero and NaN is not): a cast to `bool`.
    fn nonzero(self) -> bool {
        match self {
            Val::F32(x) => x != 0.0,
            Val::F64(x) => x != 0.0,
            v => v.bits() != 0,
        }
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

#[inline]
fn shift_amount(v: Val) -> u32 {
    match v {
        Val::U32(s) => s,
        v => v.bits() as u32,
    }
}

#[inline(always)]
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

#[inline(always)]
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

#[inline(always)]
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
#[inline(always)]
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
        Bool => Val::U8(v.nonzero() as u8),
    }
}

/// A computed value as it leaves an expression: a NaN of any sign or payload becomes the one
/// NaN of its type (`f32::NAN`, `f64::NAN`), as on the GPU (`ds::canon`), since the sign of a
/// NaN result depends on how the arithmetic was arranged.
#[inline]
pub(crate) fn canonical(v: Val) -> Val {
    match v {
        Val::F32(x) if x.is_nan() => Val::F32(f32::NAN),
        Val::F64(x) if x.is_nan() => Val::F64(f64::NAN),
        v => v,
    }
}

/// The value of non-leaf node `n` from its operands' values (`v(k)`: node k's value).
#[inline(always)]
fn apply(nodes: &[Node], n: &Node, v: impl Fn(u32) -> Val) -> Val {
    match n.kind {
        // Not of a `bool` (a `u8` of 0 or 1) is logical.
        Kind::Unary(Un::Not, a) if n.ty == ScalarType::Bool => Val::U8(!v(a).truthy() as u8),
        Kind::Unary(op, a) => unary(op, v(a)),
        Kind::Binary(op, a, b) => binary(op, v(a), v(b)),
        Kind::Cmp(op, a, b) => compare(op, v(a), v(b)),
        Kind::Select(c, a, b) => {
            if v(c).truthy() {
                v(a)
            } else {
                v(b)
            }
        }
        Kind::Cast(a) => cast(v(a), n.ty),
        // (Tracing made a computed operand canonical first: `Kind::Bits`.)
        Kind::Bits(a) => Val::U64(nodes[a as usize].ty.bits_from_compute(v(a).bits())),
        Kind::FromBits(a) => {
            let bits = n.ty.bits();
            let mask = if bits == 64 { !0 } else { (1u64 << bits) - 1 };
            match n.ty {
                // A `bool` is 0 or 1: nonzero low bits are true.
                ScalarType::Bool => Val::U8((v(a).bits() & mask != 0) as u8),
                t => Val::load(t, v(a).bits() & mask),
            }
        }
        Kind::Canon(a) => canonical(v(a)),
        // A loop's values move as `eval` and `eval_block` run it.
        Kind::LoopVar(a) | Kind::LoopNext(_, a) | Kind::LoopOut(a, _) => v(a),
        Kind::LoopIndex(_) | Kind::LoopEnd(_) => Val::U32(0),
        // Leaves have no operands: their values come from the caller.
        Kind::Arg(_)
        | Kind::Param(_)
        | Kind::Column(_)
        | Kind::At(..)
        | Kind::Index
        | Kind::Head(..)
        | Kind::Random(..) => Val::U8(0),
    }
}

/// Whether node `n`'s value comes from the caller rather than from operands.
fn reads(n: &Node) -> bool {
    matches!(
        n.kind,
        Kind::Arg(_)
            | Kind::Param(_)
            | Kind::Column(_)
            | Kind::At(..)
            | Kind::Index
            | Kind::Head(..)
            | Kind::Random(..)
    )
}

/// Evaluates `nodes` for one element and returns node `out`; `leaf` gives the value of every
/// leaf node (`Arg`, `Param`, `Column`, `At`, `Index`, `Head`, `Random`) from the node and the
/// values of the nodes before it (an `At` reads its row there); `vals` is scratch of the nodes'
/// length.
#[inline]
pub(crate) fn eval(
    nodes: &[Node],
    out: u32,
    vals: &mut [Val],
    mut leaf: impl FnMut(&Node, &[Val]) -> Val,
) -> Val {
    let mut i = 0;
    while i < nodes.len() {
        let n = &nodes[i];
        match n.kind {
            Kind::LoopIndex(count) if vals[count as usize].bits() == 0 => {
                i = loop_end(nodes, i as u32) + 1;
                continue;
            }
            Kind::LoopEnd(index) => {
                for k in loop_nexts(nodes, i) {
                    if let Kind::LoopNext(var, _) = nodes[k].kind {
                        vals[var as usize] = vals[k];
                    }
                }
                let Kind::LoopIndex(count) = nodes[index as usize].kind else {
                    unreachable!("a loop ends at its index")
                };
                let next = vals[index as usize].bits() + 1;
                if next < vals[count as usize].bits() {
                    vals[index as usize] = Val::U32(next as u32);
                    i = index as usize + 1;
                    continue;
                }
            }
            _ => {}
        }
        vals[i] = if reads(n) {
            leaf(n, &vals[..i])
        } else {
            apply(nodes, n, |k| vals[k as usize])
        };
        i += 1;
    }
    vals[out as usize]
}

/// An element type of a lane: its `Lanes` variant and `Val` variant.
pub(crate) trait Lane: Copy + Default + bytemuck::Pod {
    fn val(self) -> Val;
    /// The value of a `Val` of this type (the default for another: never, as the operations
    /// that typed loops run keep their operands' type).
    fn of(v: Val) -> Self;
    fn lane(l: &Lanes) -> Option<&Vec<Self>>;
    fn lane_mut(l: &mut Lanes) -> Option<&mut Vec<Self>>;
}

/// `$f::<T>(args)` with `T` the element type of lane `$l` (after the generic arguments `$g`
/// where given: `$f::<$g, T>(args)`).
macro_rules! by_lane {
    ($l:expr, $f:ident $args:tt) => {
        by_lane!($l, $f<> $args)
    };
    ($l:expr, $f:ident<$($g:ty),*> $args:tt) => {
        match $l {
            Lanes::I8(_) => $f::<$($g,)* i8> $args,
            Lanes::I16(_) => $f::<$($g,)* i16> $args,
            Lanes::I32(_) => $f::<$($g,)* i32> $args,
            Lanes::I64(_) => $f::<$($g,)* i64> $args,
            Lanes::U8(_) => $f::<$($g,)* u8> $args,
            Lanes::U16(_) => $f::<$($g,)* u16> $args,
            Lanes::U32(_) => $f::<$($g,)* u32> $args,
            Lanes::U64(_) => $f::<$($g,)* u64> $args,
            Lanes::F32(_) => $f::<$($g,)* f32> $args,
            Lanes::F64(_) => $f::<$($g,)* f64> $args,
        }
    };
}
pub(crate) use by_lane;

/// Appends `n` copies of `v` (a value of type `T`) to a lane of type `T`.
pub(crate) fn fill_lane<T: Lane>(l: &mut Lanes, v: Val, n: usize) {
    if let Some(l) = T::lane_mut(l) {
        l.extend(std::iter::repeat_n(T::of(v), n));
    }
}

/// `f` of each value of a lane of type `T`.
pub(crate) fn each_in_lane<T: Lane>(l: &Lanes, f: impl FnMut(Val)) {
    if let Some(l) = T::lane(l) {
        l.iter().map(|&x| x.val()).for_each(f);
    }
}

/// Appends to a lane of type `T` the elements of type `T` whose bytes are `bytes` (in the
/// host's order, as host columns hold them).
pub(crate) fn extend_le<T: Lane>(l: &mut Lanes, bytes: &[u8]) {
    if let Some(l) = T::lane_mut(l) {
        let size = std::mem::size_of::<T>();
        l.extend(
            bytes
                .chunks_exact(size)
                .map(bytemuck::pod_read_unaligned::<T>),
        );
    }
}

/// `o = op(a)` over lanes of type `T`; false where the lanes are not all of it.
fn unary_lanes<T: Lane>(op: Un, a: &Lanes, o: &mut Lanes) -> bool {
    let (Some(a), Some(o)) = (T::lane(a), T::lane_mut(o)) else {
        return false;
    };
    o.extend(a.iter().map(|&x| T::of(unary(op, x.val()))));
    true
}

/// `o = op(a, b)` over lanes of type `T` (`b` of `u32` for the shifts).
fn binary_lanes<T: Lane>(op: Bin, a: &Lanes, b: &Lanes, o: &mut Lanes) -> bool {
    let (Some(a), Some(o)) = (T::lane(a), T::lane_mut(o)) else {
        return false;
    };
    if matches!(op, Bin::Shl | Bin::Shr) {
        let Some(s) = u32::lane(b) else { return false };
        o.extend(
            a.iter()
                .zip(s)
                .map(|(&x, &s)| T::of(binary(op, x.val(), Val::U32(s)))),
        );
    } else {
        let Some(b) = T::lane(b) else { return false };
        o.extend(
            a.iter()
                .zip(b)
                .map(|(&x, &y)| T::of(binary(op, x.val(), y.val()))),
        );
    }
    true
}

/// `o = (a op b) as u8` over operand lanes of type `T`.
fn compare_lanes<T: Lane>(op: Cmp, a: &Lanes, b: &Lanes, o: &mut Lanes) -> bool {
    let (Some(a), Some(b), Some(o)) = (T::lane(a), T::lane(b), u8::lane_mut(o)) else {
        return false;
    };
    o.extend(
        a.iter()
            .zip(b)
            .map(|(&x, &y)| u8::of(compare(op, x.val(), y.val()))),
    );
    true
}

/// `o = c != 0 ? a : b` over lanes of type `T` and a `u8` condition (a comparison's).
fn select_lanes<T: Lane>(c: &Lanes, a: &Lanes, b: &Lanes, o: &mut Lanes) -> bool {
    let (Some(c), Some(a), Some(b), Some(o)) =
        (u8::lane(c), T::lane(a), T::lane(b), T::lane_mut(o))
    else {
        return false;
    };
    o.extend(
        c.iter()
            .zip(a.iter().zip(b))
            .map(|(&c, (&x, &y))| if c != 0 { x } else { y }),
    );
    true
}

/// `o = a as to` over a lane of type `A` into one of type `R` (`to`'s compute type).
fn cast_lanes<A: Lane, R: Lane>(a: &Lanes, o: &mut Lanes, to: ScalarType) -> bool {
    let (Some(a), Some(o)) = (A::lane(a), R::lane_mut(o)) else {
        return false;
    };
    o.extend(a.iter().map(|&x| R::of(cast(x.val(), to))));
    true
}

/// `cast_lanes` from a lane of type `A`, by the type of `o`.
fn cast_from<A: Lane>(a: &Lanes, o: &mut Lanes, to: ScalarType) -> bool {
    by_lane!(&*o, cast_lanes<A>(a, o, to))
}

/// Evaluates `nodes` for a block of `len` elements at once, node by node, into `lanes` (one
/// per node, of its type: `Lanes::new`), each then holding that node's `len` values: the
/// values `eval` gives element by element, with one typed loop a node instead of a walk of the
/// graph an element. `leaf(n, done, lane)` appends leaf node `n`'s `len` values to its (empty)
/// lane, `done` the lanes of the nodes before it (an `At` reads its rows there).
pub(crate) fn eval_block(
    nodes: &[Node],
    len: usize,
    lanes: &mut [Lanes],
    mut leaf: impl FnMut(&Node, &[Lanes], &mut Lanes),
) {
    let mut i = 0;
    while i < nodes.len() {
        let n = &nodes[i];
        let (done, rest) = lanes.split_at_mut(i);
        let lane = &mut rest[0];
        lane.clear();
        i += 1;
        // A loop runs all elements' iterations together: iteration `k` while any element has
        // more than `k`; an element's state takes the next only in its own iterations.
        match n.kind {
            Kind::LoopIndex(count) => {
                let most = (0..len).map(|j| done[count as usize].get(j).bits()).max();
                if most.unwrap_or(0) == 0 {
                    i = loop_end(nodes, i as u32 - 1) + 1;
                } else {
                    fill_lane::<u32>(lane, Val::U32(0), len);
                }
                continue;
            }
            Kind::LoopEnd(index) => {
                let Kind::LoopIndex(count) = nodes[index as usize].kind else {
                    unreachable!("a loop ends at its index")
                };
                let k = done[index as usize].get(0).bits();
                for m in loop_nexts(nodes, i - 1) {
                    if let Kind::LoopNext(var, _) = nodes[m].kind {
                        for j in 0..len {
                            if k < done[count as usize].get(j).bits() {
                                let v = done[m].get(j);
                                done[var as usize].set(j, v);
                            }
                        }
                    }
                }
                let most = (0..len).map(|j| done[count as usize].get(j).bits()).max();
                if k + 1 < most.unwrap_or(0) {
                    let at = &mut done[index as usize];
                    at.clear();
                    fill_lane::<u32>(at, Val::U32(k as u32 + 1), len);
                    i = index as usize + 1;
                }
                continue;
            }
            _ => {}
        }
        if reads(n) {
            leaf(n, done, lane);
            continue;
        }
        let l = |k: u32| &done[k as usize];
        // The same functions as `eval`'s (`apply`), in loops typed by the operands' lanes
        // (`Bits` and conditions other than a comparison's take the per-element path).
        let typed = match n.kind {
            Kind::Unary(op, a) if n.ty != ScalarType::Bool => {
                by_lane!(l(a), unary_lanes(op, l(a), lane))
            }
            Kind::Binary(op, a, b) => by_lane!(l(a), binary_lanes(op, l(a), l(b), lane)),
            Kind::Cmp(op, a, b) => by_lane!(l(a), compare_lanes(op, l(a), l(b), lane)),
            Kind::Select(c, a, b) => by_lane!(l(a), select_lanes(l(c), l(a), l(b), lane)),
            Kind::Cast(a) => by_lane!(l(a), cast_from(l(a), lane, n.ty)),
            Kind::Canon(a) => {
                lane.push_strided(l(a), 0, 1, len);
                lane.canonicalize();
                true
            }
            Kind::LoopVar(a) | Kind::LoopNext(_, a) | Kind::LoopOut(a, _) => {
                lane.push_strided(l(a), 0, 1, len);
                true
            }
            _ => false,
        };
        if !typed {
            for j in 0..len {
                lane.push(apply(nodes, n, |k| done[k as usize].get(j)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The compute types: those of `Val` and `Lanes`.
    fn compute_types() -> impl Iterator<Item = ScalarType> {
        ScalarType::ALL.into_iter().filter(|t| t.compute() == *t)
    }

    /// Bits of value `k` of a sequence that starts with edge values (zeros, extremes, NaNs of
    /// both signs and other payloads, infinities, subnormals, shift amounts past the width)
    /// and goes on with hashed bits.
    fn value(ty: ScalarType, k: u64) -> Val {
        let edges: [u64; 12] = match ty {
            ScalarType::F32 => [
                0,
                1 << 31,
                0x7fc0_0000,
                0xffc0_0001,
                0x7f80_0000,
                0xff80_0000,
                1,
                0x3f80_0000,
                0xbf80_0000,
                0x7f7f_ffff,
                0x4049_0fdb,
                0x0080_0000,
            ],
            ScalarType::F64 => [
                0,
                1 << 63,
                0x7ff8 << 48,
                0xfff8_0000_0000_0001,
                0x7ff << 52,
                0xfff << 52,
                1,
                0x3ff << 52,
                0xbff << 52,
                0x7fef_ffff_ffff_ffff,
                0x4009_21fb_5444_2d18,
                1 << 52,
            ],
            _ => [
                0,
                1,
                2,
                7,
                31,
                32,
                63,
                64,
                65,
                u64::MAX,
                u64::MAX >> 1,
                1u64 << (ty.bits() - 1),
            ],
        };
        let bits = match edges.get(k as usize) {
            Some(&b) => b,
            None => {
                let mut z = k.wrapping_mul(0x9e37_79b9_7f4a_7c15);
                z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                z ^ (z >> 31)
            }
        };
        Val::from_compute_bits(ty, bits)
    }

    /// Every operation of the interpreter on every compute type, over operands `Arg(0)`,
    /// `Arg(1)` (the type) and `Arg(2)` (a `u32`, the shifts' amount).
    fn graph(ty: ScalarType) -> Vec<Node> {
        let node = |ty, kind| Node { ty, kind };
        let mut n = vec![
            node(ty, Kind::Arg(0)),
            node(ty, Kind::Arg(1)),
            node(ScalarType::U32, Kind::Arg(2)),
        ];
        use Bin::*;
        use Un::*;
        for op in [
            Neg, Not, Abs, Sqrt, Exp, Ln, Sin, Cos, Tanh, Floor, Ceil, Round,
        ] {
            n.push(node(ty, Kind::Unary(op, 0)));
        }
        for op in [Add, Sub, Mul, Div, Rem, And, Or, Xor, Min, Max, Pow] {
            n.push(node(ty, Kind::Binary(op, 0, 1)));
        }
        for op in [Shl, Shr] {
            n.push(node(ty, Kind::Binary(op, 0, 2)));
        }
        for op in [Cmp::Eq, Cmp::Ne, Cmp::Lt, Cmp::Le, Cmp::Gt, Cmp::Ge] {
            n.push(node(ScalarType::U8, Kind::Cmp(op, 0, 1)));
        }
        let c = n.len() as u32 - 3; // a comparison: `a < b`
        n.push(node(ty, Kind::Select(c, 0, 1)));
        for to in ScalarType::ALL {
            n.push(node(to, Kind::Cast(0)));
        }
        let sum = n
            .iter()
            .position(|x| x.kind == Kind::Binary(Add, 0, 1))
            .unwrap() as u32;
        n.push(node(ScalarType::U64, Kind::Bits(0)));
        n.push(node(ScalarType::U64, Kind::Bits(sum)));
        n
    }

    #[test]
    fn blocks_give_the_values_of_single_elements() {
        let len = 300;
        for ty in compute_types() {
            let nodes = graph(ty);
            let arg = |k: u8, j: usize| match k {
                0 => value(ty, j as u64),
                1 => value(ty, (j as u64 * 7 + 3) % len as u64),
                _ => Val::U32((j % 70) as u32),
            };
            let mut lanes: Vec<Lanes> = nodes.iter().map(|n| Lanes::new(n.ty, len)).collect();
            eval_block(&nodes, len, &mut lanes, |n, _, lane| {
                let Kind::Arg(k) = n.kind else { unreachable!() };
                (0..len).for_each(|j| lane.push(arg(k, j)))
            });
            let mut vals = vec![Val::U8(0); nodes.len()];
            for j in 0..len {
                eval(&nodes, 0, &mut vals, |n, _| {
                    let Kind::Arg(k) = n.kind else { unreachable!() };
                    arg(k, j)
                });
                for (i, v) in vals.iter().enumerate() {
                    let b = lanes[i].get(j);
                    assert_eq!(
                        (v.bits(), std::mem::discriminant(v)),
                        (b.bits(), std::mem::discriminant(&b)),
                        "{ty:?} node {i} ({:?}) element {j}",
                        nodes[i]
                    );
                }
            }
        }
    }
}
