//! `map`, `zip_map` and `cast` against plain loops: integers exactly (wrapping), floats
//! exactly for the operations the API docs say agree, within a few ulp for the transcendental ones.

use crate::common::*;
use devseq::{DeviceSeq, Error, Expr, bf16, f16};

fn check<X: T>(got: devseq::Result<DeviceSeq<X>>, want: Vec<X>, what: &str) {
    let got = got
        .unwrap_or_else(|e| panic!("{what}: {e}"))
        .to_vec()
        .unwrap();
    assert_same(&got, &want, what);
}

fn n_list() -> Vec<usize> {
    vec![0, 1, 31, 32, 33, 1023, 1025, 65_537, big(1_000_003)]
}

macro_rules! int_tests {
    ($($t:ident),*) => {$(
        mod $t {
            use super::*;
            fn inputs(r: &mut Rng, n: usize) -> (Vec<$t>, Vec<$t>) {
                let edge = [0 as $t, 1, (0 as $t).wrapping_sub(1), <$t>::MIN, <$t>::MAX, 2, 7];
                let pick = |r: &mut Rng| -> $t {
                    if r.below(4) == 0 { edge[r.below(edge.len() as u64) as usize] } else { r.next() as $t }
                };
                ((0..n).map(|_| pick(r)).collect(), (0..n).map(|_| pick(r)).collect())
            }
            #[test]
            fn division_by_constants() {
                // Division by constants at the edges of the GPU's 32-bit path (both operands
                // below 2^32) and of each type, by zero included.
                let mut r = Rng::new(concat!(stringify!($t), " by constants"));
                let divisors: Vec<$t> = [
                    0u64, 1, 2, 3, 7, 10, 255, 256, 641, 65_535, 65_537, (1 << 31) - 1, 1 << 31,
                    u32::MAX as u64, 1 << 32, (1 << 32) + 1, u64::MAX,
                ]
                .iter()
                .map(|&d| d as $t)
                .collect();
                for n in [0, 1, 33, 1025, big(100_003)] {
                    let xs: Vec<$t> = (0..n)
                        .map(|i| match r.below(4) {
                            0 => r.next() as $t,
                            1 => r.next() as u32 as $t,
                            2 => divisors[i % divisors.len()].wrapping_mul(r.below(9) as $t).wrapping_sub(r.below(3) as $t),
                            _ => [<$t>::MAX, <$t>::MIN, u32::MAX as $t, (u32::MAX - 1) as $t][r.below(4) as usize],
                        })
                        .collect();
                    let a = upload(&xs);
                    for &c in &divisors {
                        let q: Vec<$t> = xs.iter().map(|&x| if c == 0 { 0 } else { x.wrapping_div(c) }).collect();
                        let m: Vec<$t> = xs.iter().map(|&x| if c == 0 { x } else { x.wrapping_rem(c) }).collect();
                        check(a.map(move |x| x / c), q, &format!("x / {c}"));
                        check(a.map(move |x| x % c), m, &format!("x % {c}"));
                    }
                }
            }
            #[test]
            fn arithmetic() {
                let mut r = Rng::new(stringify!($t));
                for n in n_list() {
                    let (xs, ys) = inputs(&mut r, n);
                    let (a, b) = (upload(&xs), upload(&ys));
                    let z = |f: fn($t, $t) -> $t| -> Vec<$t> { xs.iter().zip(&ys).map(|(x, y)| f(*x, *y)).collect() };
                    check(a.zip_map(&b, |x, y| x + y), z(|x, y| x.wrapping_add(y)), "add");
                    check(a.zip_map(&b, |x, y| x - y), z(|x, y| x.wrapping_sub(y)), "sub");
                    check(a.zip_map(&b, |x, y| x * y), z(|x, y| x.wrapping_mul(y)), "mul");
                    check(a.zip_map(&b, |x, y| x / y), z(|x, y| if y == 0 { 0 } else { x.wrapping_div(y) }), "div");
                    check(a.zip_map(&b, |x, y| x % y), z(|x, y| if y == 0 { x } else { x.wrapping_rem(y) }), "rem");
                    check(a.zip_map(&b, |x, y| x & y), z(|x, y| x & y), "and");
                    check(a.zip_map(&b, |x, y| x | y), z(|x, y| x | y), "or");
                    check(a.zip_map(&b, |x, y| x ^ !y), z(|x, y| x ^ !y), "xor not");
                    check(a.zip_map(&b, |x, y| x.min(y) - x.max(y)), z(|x, y| x.min(y).wrapping_sub(x.max(y))), "min max");
                    check(a.map(|x| -x), xs.iter().map(|x| x.wrapping_neg()).collect(), "neg");
                    check(a.map(|x| x * 2 + 1), xs.iter().map(|x| x.wrapping_mul(2).wrapping_add(1)).collect(), "x*2+1");
                    check(a.map(|x| 7 - x), xs.iter().map(|x| (7 as $t).wrapping_sub(*x)).collect(), "7-x");
                    check(
                        a.zip_map(&b, |x, y| Expr::select(x.gt(y), x - y, y * 3)),
                        z(|x, y| if x > y { x.wrapping_sub(y) } else { y.wrapping_mul(3) }),
                        "select",
                    );
                    let cmp: Vec<u8> = xs.iter().zip(&ys).map(|(x, y)| (x < y) as u8 + 2 * (x == y) as u8 + 4 * (x >= y) as u8).collect();
                    check(a.zip_map(&b, |x, y| x.lt(y).cast::<u8>() + x.eq(y).cast::<u8>() * 2 + x.ge(y).cast::<u8>() * 4), cmp, "comparisons");
                    let ne: Vec<u8> = xs.iter().zip(&ys).map(|(x, y)| (x != y) as u8 + 2 * (x <= y) as u8 + 4 * (x > y) as u8).collect();
                    check(a.zip_map(&b, |x, y| x.ne(y).cast::<u8>() + x.le(y).cast::<u8>() * 2 + x.gt(y).cast::<u8>() * 4), ne, "comparisons 2");
                    let sh: Vec<u32> = (0..n).map(|_| r.below(200) as u32).collect();
                    let s = upload(&sh);
                    let zs = |f: fn($t, u32) -> $t| -> Vec<$t> { xs.iter().zip(&sh).map(|(x, s)| f(*x, *s)).collect() };
                    check(a.zip_map(&s, |x, s| x << s), zs(|x, s| x.wrapping_shl(s)), "shl");
                    check(a.zip_map(&s, |x, s| x >> s), zs(|x, s| x.wrapping_shr(s)), "shr");
                    check(a.map(|x| (x >> 3u32) ^ (x << 5u32)), xs.iter().map(|x| x.wrapping_shr(3) ^ x.wrapping_shl(5)).collect(), "shift consts");
                }
            }
        }
    )*};
}
int_tests!(i8, i16, i32, i64, u8, u16, u32, u64);

/// Float maps: `$c` is the compute type, `$to`/`$from` convert.
macro_rules! float_tests {
    ($($m:ident $t:ident: $c:ty, $to:expr, $from:expr);*) => {$(
        mod $m {
            use super::*;
            type X = $t;
            fn to(x: X) -> $c { let f: fn(X) -> $c = $to; f(x) }
            fn from(c: $c) -> X { let f: fn($c) -> X = $from; f(c) }
            fn k(v: f64) -> X { from(v as $c) }
            #[test]
            fn exact_operations() {
                let mut r = Rng::new(stringify!($t));
                for n in n_list() {
                    let xs: Vec<X> = draw_vec(&mut r, n, Gen::Special);
                    let ys: Vec<X> = draw_vec(&mut r, n, Gen::Special);
                    let (a, b) = (upload(&xs), upload(&ys));
                    let z = |f: fn($c, $c) -> $c| -> Vec<X> { xs.iter().zip(&ys).map(|(x, y)| from(f(to(*x), to(*y)))).collect() };
                    let m = |f: fn($c) -> $c| -> Vec<X> { xs.iter().map(|x| from(f(to(*x)))).collect() };
                    check(a.zip_map(&b, |x, y| x + y), z(|x, y| x + y), "add");
                    check(a.zip_map(&b, |x, y| x - y), z(|x, y| x - y), "sub");
                    check(a.zip_map(&b, |x, y| x * y), z(|x, y| x * y), "mul");
                    check(a.zip_map(&b, |x, y| x / y), z(|x, y| x / y), "div");
                    check(a.zip_map(&b, |x, y| (x * y + x) / (y - x)), z(|x, y| (x * y + x) / (y - x)), "no fma");
                    check(a.zip_map(&b, |x, y| x.min(y)), z(|x, y| if x.is_nan() { y } else if y.is_nan() { x } else { x.min(y) }), "min");
                    check(a.zip_map(&b, |x, y| x.max(y)), z(|x, y| if x.is_nan() { y } else if y.is_nan() { x } else { x.max(y) }), "max");
                    check(a.map(|x| -x), m(|x| -x), "neg");
                    check(a.map(|x| x * k(2.0) + k(1.0)), m(|x| x * 2.0 + 1.0), "x*2+1");
                    check(a.map(|x| x.abs().sqrt()), m(|x| x.abs().sqrt()), "sqrt abs");
                    check(a.map(|x| x.floor() + x.ceil() * k(3.0)), m(|x| x.floor() + x.ceil() * 3.0), "floor ceil");
                    check(a.map(|x| x.round()), m(|x| x.round()), "round");
                    let two = from(2.0 as $c);
                    check(a.map(|x| two - x), m(|x| 2.0 - x), "2-x");
                    check(
                        a.zip_map(&b, |x, y| Expr::select(x.lt(y), x, y * k(0.5))),
                        z(|x, y| if x < y { x } else { y * 0.5 }),
                        "select",
                    );
                    let cmp: Vec<u8> = xs.iter().zip(&ys).map(|(x, y)| {
                        let (x, y) = (to(*x), to(*y));
                        (x < y) as u8 + 2 * (x == y) as u8 + 4 * (x >= y) as u8 + 8 * (x != y) as u8 + 16 * (x <= y) as u8 + 32 * (x > y) as u8
                    }).collect();
                    check(a.zip_map(&b, |x, y| x.lt(y).cast::<u8>() + x.eq(y).cast::<u8>() * 2 + x.ge(y).cast::<u8>() * 4 + x.ne(y).cast::<u8>() * 8 + x.le(y).cast::<u8>() * 16 + x.gt(y).cast::<u8>() * 32), cmp, "comparisons");
                }
            }
            #[test]
            fn transcendental_within_ulps() {
                let mut r = Rng::new(stringify!($t));
                let xs: Vec<X> = (0..100_000).map(|_| k((r.unit() - 0.5) * 20.0)).collect();
                let a = upload(&xs);
                let eps = (<$c>::EPSILON as f64).max(if std::mem::size_of::<X>() == 2 { 1.0 / 128.0 } else { 0.0 });
                let close = |got: Vec<X>, f: fn($c) -> $c, what: &str| {
                    for (x, g) in xs.iter().zip(&got) {
                        let w = from(f(to(*x)));
                        let (g, w) = (g.f(), w.f());
                        let tol = 4.0 * eps * w.abs().max(1e-3);
                        assert!((g - w).abs() <= tol || (g.is_nan() && w.is_nan()) || g == w, "{what}({x:?}): got {g}, want {w}");
                    }
                };
                close(a.map(|x| x.exp()).unwrap().to_vec().unwrap(), |x| x.exp(), "exp");
                close(a.map(|x| (x.abs() + k(1.0)).ln()).unwrap().to_vec().unwrap(), |x| (x.abs() + 1.0).ln(), "ln");
                close(a.map(|x| x.sin()).unwrap().to_vec().unwrap(), |x| x.sin(), "sin");
                close(a.map(|x| x.cos()).unwrap().to_vec().unwrap(), |x| x.cos(), "cos");
                close(a.map(|x| x.tanh()).unwrap().to_vec().unwrap(), |x| x.tanh(), "tanh");
                close(a.map(|x| x.abs().powf(k(1.5))).unwrap().to_vec().unwrap(), |x| x.abs().powf(1.5), "powf");
            }
        }
    )*};
}
float_tests! {
    float_f32 f32: f32, |x| x, |c| c;
    float_f64 f64: f64, |x| x, |c| c;
    float_f16 f16: f32, |x| x.to_f32(), |c| f16::from_f32(c);
    float_bf16 bf16: f32, |x| x.to_f32(), |c| bf16::from_f32(c)
}

/// f16/bf16 intermediates stay in f32 until stored or cast.
#[test]
fn half_intermediates_are_f32() {
    let xs = [f16::from_f32(1.0), f16::from_f32(2048.0)];
    let a = upload(&xs);
    // 2048 + 1 - 2048 in f32 is 1; rounding the sum to f16 first would give 0.
    let (one, big) = (f16::from_f32(1.0), f16::from_f32(2048.0));
    let got = a.map(|x| (x + one) - big).unwrap().to_vec().unwrap();
    assert_eq!(got[1].to_f32(), 1.0);
    let got = a
        .map(|x| (x + one).cast::<f16>() - big)
        .unwrap()
        .to_vec()
        .unwrap();
    assert_eq!(got[1].to_f32(), 0.0);
}

// ---- casts: every pair, against Rust's `as` (f16/bf16 through f32) ----------------------

#[derive(Clone, Copy)]
enum Src {
    Int(i128),
    F32(f32),
    F64(f64),
}

trait Cast: T {
    fn src(self) -> Src;
    fn from_src(s: Src) -> Self;
}

macro_rules! cast_int {
    ($($t:ty),*) => {$(
        impl Cast for $t {
            fn src(self) -> Src { Src::Int(self as i128) }
            fn from_src(s: Src) -> Self {
                match s { Src::Int(i) => i as $t, Src::F32(x) => x as $t, Src::F64(x) => x as $t }
            }
        }
    )*};
}
cast_int!(i8, i16, i32, i64, u8, u16, u32, u64);
impl Cast for f32 {
    fn src(self) -> Src {
        Src::F32(self)
    }
    fn from_src(s: Src) -> Self {
        match s {
            Src::Int(i) => i as f32,
            Src::F32(x) => x,
            Src::F64(x) => x as f32,
        }
    }
}
impl Cast for f64 {
    fn src(self) -> Src {
        Src::F64(self)
    }
    fn from_src(s: Src) -> Self {
        match s {
            Src::Int(i) => i as f64,
            Src::F32(x) => x as f64,
            Src::F64(x) => x,
        }
    }
}
impl Cast for f16 {
    fn src(self) -> Src {
        Src::F32(self.to_f32())
    }
    fn from_src(s: Src) -> Self {
        f16::from_f32(f32::from_src(s))
    }
}
impl Cast for bf16 {
    fn src(self) -> Src {
        Src::F32(self.to_f32())
    }
    fn from_src(s: Src) -> Self {
        bf16::from_f32(f32::from_src(s))
    }
}

fn edge_values<A: Cast>() -> Vec<A> {
    let ints: [i128; 18] = [
        0,
        1,
        -1,
        2,
        127,
        128,
        -129,
        255,
        256,
        32767,
        65535,
        65536,
        (1 << 31) - 1,
        1 << 31,
        (1 << 32) + 3,
        i64::MAX as i128,
        i64::MIN as i128,
        u64::MAX as i128,
    ];
    let floats: [f64; 17] = [
        0.5,
        -0.5,
        1.5,
        -1.5,
        2.5,
        0.49999997,
        1e20,
        -1e20,
        3e38,
        1e300,
        -1e300,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        -0.0,
        2.0e-40,
        4294967295.7,
    ];
    let mut v: Vec<A> = ints.iter().map(|&i| A::from_src(Src::Int(i))).collect();
    v.extend(floats.iter().map(|&x| A::from_src(Src::F64(x))));
    let mut r = Rng::new("cast values");
    v.extend((0..200).map(|_| A::from_bits(r.next())));
    v
}

fn cast_pair<A: Cast, B: Cast>() {
    let xs: Vec<A> = edge_values();
    let want: Vec<B> = xs.iter().map(|x| B::from_src(x.src())).collect();
    let what = format!(
        "cast {} -> {}",
        std::any::type_name::<A>(),
        std::any::type_name::<B>()
    );
    check(upload(&xs).cast::<B>(), want.clone(), &what);
    // The same through an expression.
    check(upload(&xs).map(|x| x.cast::<B>()), want, &what);
}

macro_rules! cast_rows {
    ($($a:ident),*) => {$(
        #[test]
        fn $a() {
            cast_pair::<$a, i8>(); cast_pair::<$a, i16>(); cast_pair::<$a, i32>(); cast_pair::<$a, i64>();
            cast_pair::<$a, u8>(); cast_pair::<$a, u16>(); cast_pair::<$a, u32>(); cast_pair::<$a, u64>();
            cast_pair::<$a, f16>(); cast_pair::<$a, bf16>(); cast_pair::<$a, f32>(); cast_pair::<$a, f64>();
        }
    )*};
}
mod casts {
    use super::*;
    cast_rows!(i8, i16, i32, i64, u8, u16, u32, u64, f16, bf16, f32, f64);
}

#[test]
fn generators() {
    for n in n_list() {
        let s = DeviceSeq::<f16>::sequence(&dev(), n)
            .unwrap()
            .to_vec()
            .unwrap();
        let want: Vec<f16> = (0..n).map(|i| f16::from_f32(i as f32)).collect();
        assert_bits(&s, &want, "sequence f16");
        let s = DeviceSeq::<i8>::sequence(&dev(), n)
            .unwrap()
            .to_vec()
            .unwrap();
        assert_eq!(s, (0..n).map(|i| i as i8).collect::<Vec<_>>());
        let s = DeviceSeq::<u64>::sequence(&dev(), n)
            .unwrap()
            .to_vec()
            .unwrap();
        assert_eq!(s, (0..n as u64).collect::<Vec<_>>());
        for v in [f64::NAN, -0.0, 1.25] {
            let s = DeviceSeq::filled(&dev(), v, n).unwrap().to_vec().unwrap();
            assert_bits(&s, &vec![v; n], "filled f64");
        }
        let s = DeviceSeq::filled(&dev(), bf16::from_f32(-3.0), n)
            .unwrap()
            .to_vec()
            .unwrap();
        assert_bits(&s, &vec![bf16::from_f32(-3.0); n], "filled bf16");
        let s = DeviceSeq::filled(&dev(), 0xa5u8, n)
            .unwrap()
            .to_vec()
            .unwrap();
        assert_eq!(s, vec![0xa5u8; n]);
    }
}

#[test]
fn map_of_views_and_copies() {
    let xs: Vec<u16> = (0..10_000).collect();
    let a = upload(&xs);
    let v = a.slice(3..9_001);
    check(
        v.map(|x| x + 1),
        xs[3..9_001].iter().map(|x| x + 1).collect(),
        "view map",
    );
    check(v.map(|x| x), xs[3..9_001].to_vec(), "identity map");
    let w = a.slice(1..9_999);
    check(
        v.zip_map(&w.slice(..8_998), |x, y| x ^ y),
        xs[3..9_001]
            .iter()
            .zip(&xs[1..8_999])
            .map(|(x, y)| x ^ y)
            .collect(),
        "views zip",
    );
    assert_eq!(v.copy().unwrap().to_vec().unwrap(), xs[3..9_001]);
}

#[test]
fn expr_from_another_closure_is_an_error() {
    let a = upload(&[1i32, 2, 3]);
    let stolen = std::cell::Cell::new(None);
    a.map(|x| {
        stolen.set(Some(x));
        x
    })
    .unwrap();
    let s = stolen.get().unwrap();
    assert!(matches!(a.map(|x| x + s), Err(Error::InvalidArgument(_))));
    assert!(matches!(a.map(|_| s), Err(Error::InvalidArgument(_))));
}

/// A long chain of operations compiles and computes the same as the loop.
#[test]
fn long_expression_chains() {
    let xs: Vec<i64> = (0..5000).collect();
    let a = upload(&xs);
    let got = a.map(|x| {
        let mut y = x;
        for k in 0..200i64 {
            y = (y * 3 + k) % 1_000_003;
        }
        y
    });
    let want: Vec<i64> = xs
        .iter()
        .map(|&x| {
            let mut y = x;
            for k in 0..200 {
                y = (y * 3 + k) % 1_000_003;
            }
            y
        })
        .collect();
    check(got, want, "long chain");
    // Unsigned, each divisor a constant of its own (in device memory here: far more than
    // the argument words hold).
    let xs: Vec<u64> = (0..5000).map(|i| i * 7919).collect();
    let got = upload(&xs).map(|x| {
        let mut y = x;
        for k in 0..200u64 {
            y = (y * 3 + k) % (1_000_003 + k);
        }
        y / 3
    });
    let want: Vec<u64> = xs
        .iter()
        .map(|&x| (0..200).fold(x, |y, k| (y * 3 + k) % (1_000_003 + k)) / 3)
        .collect();
    check(got, want, "long unsigned chain");
}

/// Of two equal floats `min` and `max` give the first, signed zeros included, as the host
/// does: NVRTC once compiled `min` to an instruction that prefers -0.0 (found by the property
/// test on an H100). Bitwise comparison, with the oracle of common.rs.
#[test]
fn float_min_max_keep_the_first_of_equal_zeros() {
    let xs = [0.0f32, -0.0, 0.0, -0.0, 1.0, f32::NAN, f32::NAN, -2.0];
    let ys = [-0.0f32, 0.0, 0.0, -0.0, f32::NAN, -1.0, f32::NAN, -2.0];
    let (a, b) = (upload(&xs), upload(&ys));
    let bits = |v: Vec<f32>| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    let pairs = || xs.iter().zip(&ys).map(|(&x, &y)| (x as f64, y as f64));
    let got = |s: devseq::Result<DeviceSeq<f32>>| bits(s.unwrap().to_vec().unwrap());
    let min: Vec<f32> = pairs().map(|(x, y)| fmin(x, y) as f32).collect();
    let max: Vec<f32> = pairs().map(|(x, y)| fmax(x, y) as f32).collect();
    assert_eq!(got(a.zip_map(&b, |x, y| x.min(y))), bits(min), "min");
    assert_eq!(got(a.zip_map(&b, |x, y| x.max(y))), bits(max), "max");
    // Against a constant, where the compiler knows one operand.
    let min0: Vec<f32> = ys.iter().map(|&y| fmin(0.0, y as f64) as f32).collect();
    let max0: Vec<f32> = ys.iter().map(|&y| fmax(-0.0, y as f64) as f32).collect();
    assert_eq!(
        got(b.map(|y| Expr::constant(0.0f32).min(y))),
        bits(min0),
        "0 min y"
    );
    assert_eq!(
        got(b.map(|y| Expr::constant(-0.0f32).max(y))),
        bits(max0),
        "-0 max y"
    );
    let xd: Vec<f64> = xs.iter().map(|&x| x as f64).collect();
    let yd: Vec<f64> = ys.iter().map(|&y| y as f64).collect();
    let (ad, bd) = (upload(&xd), upload(&yd));
    let dbits = |v: Vec<f64>| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    let mind: Vec<f64> = pairs().map(|(x, y)| fmin(x, y)).collect();
    let maxd: Vec<f64> = pairs().map(|(x, y)| fmax(x, y)).collect();
    assert_eq!(
        dbits(ad.zip_map(&bd, |x, y| x.min(y)).unwrap().to_vec().unwrap()),
        dbits(mind),
        "f64 min"
    );
    assert_eq!(
        dbits(ad.zip_map(&bd, |x, y| x.max(y)).unwrap().to_vec().unwrap()),
        dbits(maxd),
        "f64 max"
    );
}

/// A NaN that `select` passes through keeps its bits (payload and sign), as a NaN read from
/// memory does, in the value and in `bits()`; one that arithmetic computes is the canonical
/// NaN. f32 and f64, across several tiles, a stored result and a fused one (a reduction).
#[test]
fn select_passes_nan_bits_through() {
    let mut r = Rng::new("select nan bits");
    let n = 70_001;
    let nan32 = |r: &mut Rng| f32::from_bits(0x7f80_0001 | (r.next() as u32 & 0x803f_ffff));
    let xs: Vec<f32> = (0..n)
        .map(|i| if i % 3 == 0 { nan32(&mut r) } else { i as f32 })
        .collect();
    let ys: Vec<f32> = (0..n)
        .map(|i| {
            if i % 5 == 0 {
                nan32(&mut r)
            } else {
                -(i as f32)
            }
        })
        .collect();
    let (a, b) = (upload(&xs), upload(&ys));
    // Where x is NaN, y (maybe a NaN with a payload), else x.
    let pick = |x: f32, y: f32| if x.is_nan() { y } else { x };
    let want: Vec<u32> = xs
        .iter()
        .zip(&ys)
        .map(|(&x, &y)| pick(x, y).to_bits())
        .collect();
    let sel = a.zip_map(&b, |x, y| Expr::select(x.ne(x), y, x)).unwrap();
    let got: Vec<u32> = sel.to_vec().unwrap().iter().map(|v| v.to_bits()).collect();
    assert_eq!(first_diff(&got, &want), None, "select of f32 leaves");
    let bits = a
        .zip_map(&b, |x, y| Expr::select(x.ne(x), y, x).to_bits())
        .unwrap();
    let got: Vec<u64> = bits.to_vec().unwrap();
    let want64: Vec<u64> = want.iter().map(|&w| w as u64).collect();
    assert_eq!(
        first_diff(&got, &want64),
        None,
        "bits of a select of f32 leaves"
    );
    // Fused into a reduction of the bits (the lazy `bits` read again): the same sum.
    let sum = bits.reduce(devseq::Op::Add).unwrap();
    assert_eq!(
        sum,
        want64.iter().fold(0u64, |s, &w| s.wrapping_add(w)),
        "fused bits"
    );
    // A select with a computed branch is computed: every NaN it gives is the canonical one,
    // the one that passes y through included.
    let add = a
        .zip_map(&b, |x, y| Expr::select(x.ne(x), x + 0.0f32, y))
        .unwrap();
    let got: Vec<u32> = add.to_vec().unwrap().iter().map(|v| v.to_bits()).collect();
    let want: Vec<u32> = xs
        .iter()
        .zip(&ys)
        .map(|(&x, &y)| {
            if x.is_nan() || y.is_nan() {
                f32::NAN.to_bits()
            } else {
                y.to_bits()
            }
        })
        .collect();
    assert_eq!(
        first_diff(&got, &want),
        None,
        "select with a computed branch"
    );
    // f64.
    let xd: Vec<f64> = xs
        .iter()
        .map(|&x| {
            if x.is_nan() {
                f64::from_bits(0xfff0_0000_0000_0000 | x.to_bits() as u64)
            } else {
                x as f64
            }
        })
        .collect();
    let yd: Vec<f64> = ys.iter().map(|&y| y as f64 * 0.5).collect();
    let (ad, bd) = (upload(&xd), upload(&yd));
    let got: Vec<u64> = ad
        .zip_map(&bd, |x, y| Expr::select(x.gt(y), y, x))
        .unwrap()
        .to_vec()
        .unwrap()
        .iter()
        .map(|v| v.to_bits())
        .collect();
    let want: Vec<u64> = xd
        .iter()
        .zip(&yd)
        .map(|(&x, &y)| if x > y { y } else { x }.to_bits())
        .collect();
    assert_eq!(first_diff(&got, &want), None, "select of f64 leaves");
}

/// f16 and bf16: a `select` between stored values keeps their NaN bits however it is read:
/// stored whole, sliced, mapped again, through `to_bits` fused or after a copy (the 16-bit
/// result needs no rounding, so none is added where a lazy sequence is read).
fn select_passes_half<X: T>() {
    let mut r = Rng::new("select nan bits half");
    let n = 5000;
    let quiet = X::from_bits(X::from_acc_f(f64::NAN).to_bits());
    let nan = |r: &mut Rng| X::from_bits(quiet.to_bits() | (r.next() & 0x3f) | (r.below(2) << 15));
    let xs: Vec<X> = (0..n)
        .map(|i| {
            if i % 3 == 0 {
                nan(&mut r)
            } else {
                X::from_acc_f(i as f64)
            }
        })
        .collect();
    let ys: Vec<X> = (0..n)
        .map(|i| {
            if i % 5 == 0 {
                nan(&mut r)
            } else {
                X::from_acc_f(-(i as f64))
            }
        })
        .collect();
    let (a, b) = (upload(&xs), upload(&ys));
    let want: Vec<u64> = xs
        .iter()
        .zip(&ys)
        .map(|(&x, &y)| {
            if x.f().is_nan() {
                y.to_bits()
            } else {
                x.to_bits()
            }
        })
        .collect();
    let sel = a.zip_map(&b, |x, y| Expr::select(x.ne(x), y, x)).unwrap();
    let bits = |s: &DeviceSeq<X>| -> Vec<u64> {
        s.to_vec().unwrap().iter().map(|v| v.to_bits()).collect()
    };
    let name = std::any::type_name::<X>();
    assert_eq!(first_diff(&bits(&sel), &want), None, "{name}: whole");
    assert_eq!(
        first_diff(&bits(&sel.slice(1..)), &want[1..]),
        None,
        "{name}: slice"
    );
    assert_eq!(
        first_diff(&bits(&sel.map(|v| v).unwrap()), &want),
        None,
        "{name}: map"
    );
    let fused = sel.map(|v| v.to_bits()).unwrap().to_vec().unwrap();
    assert_eq!(first_diff(&fused, &want), None, "{name}: to_bits fused");
    let stored = sel
        .copy()
        .unwrap()
        .map(|v| v.to_bits())
        .unwrap()
        .to_vec()
        .unwrap();
    assert_eq!(
        first_diff(&stored, &want),
        None,
        "{name}: to_bits of a copy"
    );
}
crate::for_each_type!(select_passes_nan_bits_half, select_passes_half, [f16, bf16]);

/// A chain of selects, each reading the one before twice (a graph whose paths double at every
/// step): whether a value passes through is found in one pass over the nodes, so forty steps
/// take no longer than one, on 2^20 elements.
#[test]
fn select_chains_stay_linear() {
    let n = 1 << 20;
    let xs: Vec<f32> = (0..n)
        .map(|i| {
            if i % 7 == 0 {
                f32::from_bits(0x7fc0_0001)
            } else {
                i as f32
            }
        })
        .collect();
    let got = upload(&xs)
        .map(|x| {
            let mut v = x;
            for k in 0..40 {
                v = Expr::select(v.gt(k as f32), v, v);
            }
            v.to_bits()
        })
        .unwrap()
        .to_vec()
        .unwrap();
    let want: Vec<u64> = xs.iter().map(|x| x.to_bits() as u64).collect();
    assert_eq!(first_diff(&got, &want), None);
}

/// The first position where two vectors differ, with both values.
fn first_diff<V: PartialEq + Copy + std::fmt::Debug>(
    got: &[V],
    want: &[V],
) -> Option<(usize, V, V)> {
    got.iter()
        .zip(want)
        .position(|(g, w)| g != w)
        .map(|i| (i, got[i], want[i]))
}

/// `copy` of stored sequences and of their slices, every type: whole 16-byte vectors and the
/// bytes around them (a slice at each offset 0..=17 elements, so both aligned starts, copied
/// by a kernel, and unaligned ones, copied by the driver), at the sizes of `sizes()` and
/// lengths whose bytes are no multiple of 4.
fn copies<X: T>() {
    let mut r = Rng::new("copies");
    let mut lens: Vec<usize> = sizes().to_vec();
    lens.extend([3, 5, 7, 15, 17, 2045, 65_533]);
    for &n in &lens {
        let xs: Vec<X> = draw_vec(&mut r, n + 17, Gen::Any);
        let a = upload(&xs);
        for off in 0..=17 {
            let got = a.slice(off..off + n).copy().unwrap();
            assert!(got.is_stored());
            assert_same(
                &got.to_vec().unwrap(),
                &xs[off..off + n],
                &format!("n={n} at {off}"),
            );
            if off == 0 {
                let again = got.copy().unwrap().to_vec().unwrap();
                assert_same(&again, &xs[..n], &format!("n={n}, a copy's copy"));
            }
        }
    }
}
crate::for_types!(copies_of_slices, copies);

/// Copies on both sides of the size where the driver's copy takes over from the kernel's
/// (128 MiB): 4-byte words and 2-byte elements whose bytes are no multiple of 4, exactly at
/// the threshold and past it, each compared with its input.
#[test]
fn copies_on_both_sides_of_the_driver_threshold() {
    let mib128 = 128usize << 20;
    for n in [mib128 / 4, mib128 / 4 + 1] {
        let xs: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(0x9E37_79B9)).collect();
        let got = upload(&xs).copy().unwrap().to_vec().unwrap();
        assert!(got == xs, "u32, n={n}");
    }
    for n in [mib128 / 2 - 1, mib128 / 2 + 1] {
        let xs: Vec<u16> = (0..n as u32)
            .map(|i| (i.wrapping_mul(0x9E37_79B9) >> 16) as u16)
            .collect();
        let got = upload(&xs).copy().unwrap().to_vec().unwrap();
        assert!(got == xs, "u16, n={n}");
    }
}
