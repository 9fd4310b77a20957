//! Property tests (proptest): random lengths and contents, shrinking to a minimal failing
//! input. `DEVSEQ_PROPTEST_CASES` sets the number of cases (default 24, kept small for CI).

use crate::common::*;
use crate::for_types;
use devseq::{Device, DeviceSeq, Expr, Op};
use proptest::prelude::*;

fn config() -> ProptestConfig {
    let cases = std::env::var("DEVSEQ_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(24);
    ProptestConfig::with_cases(cases)
}

/// A random integer expression over one input.
#[derive(Debug, Clone)]
enum E {
    X,
    K(i32),
    Add(Box<E>, Box<E>),
    Sub(Box<E>, Box<E>),
    Mul(Box<E>, Box<E>),
    Div(Box<E>, Box<E>),
    Rem(Box<E>, Box<E>),
    Xor(Box<E>, Box<E>),
    Shr(Box<E>, u32),
    Min(Box<E>, Box<E>),
    Sel(Box<E>, Box<E>, Box<E>),
    ViaF64(Box<E>),
}

fn expr() -> impl Strategy<Value = E> {
    let leaf = prop_oneof![Just(E::X), any::<i32>().prop_map(E::K)];
    leaf.prop_recursive(5, 40, 3, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| E::Add(a.into(), b.into())),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| E::Sub(a.into(), b.into())),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| E::Mul(a.into(), b.into())),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| E::Div(a.into(), b.into())),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| E::Rem(a.into(), b.into())),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| E::Xor(a.into(), b.into())),
            (inner.clone(), 0u32..70).prop_map(|(a, s)| E::Shr(a.into(), s)),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| E::Min(a.into(), b.into())),
            (inner.clone(), inner.clone(), inner.clone()).prop_map(|(c, a, b)| E::Sel(
                c.into(),
                a.into(),
                b.into()
            )),
            inner.clone().prop_map(|a| E::ViaF64(a.into())),
        ]
    })
}

fn build(e: &E, x: Expr<i32>) -> Expr<i32> {
    match e {
        E::X => x,
        E::K(k) => Expr::constant(*k),
        E::Add(a, b) => build(a, x) + build(b, x),
        E::Sub(a, b) => build(a, x) - build(b, x),
        E::Mul(a, b) => build(a, x) * build(b, x),
        E::Div(a, b) => build(a, x) / build(b, x),
        E::Rem(a, b) => build(a, x) % build(b, x),
        E::Xor(a, b) => build(a, x) ^ build(b, x),
        E::Shr(a, s) => build(a, x) >> *s,
        E::Min(a, b) => build(a, x).min(build(b, x)),
        E::Sel(c, a, b) => Expr::select(build(c, x).gt(0), build(a, x), build(b, x)),
        E::ViaF64(a) => (build(a, x).cast::<f64>() * 0.5).cast::<i32>(),
    }
}

fn eval(e: &E, x: i32) -> i32 {
    match e {
        E::X => x,
        E::K(k) => *k,
        E::Add(a, b) => eval(a, x).wrapping_add(eval(b, x)),
        E::Sub(a, b) => eval(a, x).wrapping_sub(eval(b, x)),
        E::Mul(a, b) => eval(a, x).wrapping_mul(eval(b, x)),
        E::Div(a, b) => {
            let (p, q) = (eval(a, x), eval(b, x));
            if q == 0 { 0 } else { p.wrapping_div(q) }
        }
        E::Rem(a, b) => {
            let (p, q) = (eval(a, x), eval(b, x));
            if q == 0 { p } else { p.wrapping_rem(q) }
        }
        E::Xor(a, b) => eval(a, x) ^ eval(b, x),
        E::Shr(a, s) => eval(a, x).wrapping_shr(*s),
        E::Min(a, b) => eval(a, x).min(eval(b, x)),
        E::Sel(c, a, b) => {
            if eval(c, x) > 0 {
                eval(a, x)
            } else {
                eval(b, x)
            }
        }
        E::ViaF64(a) => (eval(a, x) as f64 * 0.5) as i32,
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn random_integer_expressions(e in expr(), xs in prop::collection::vec(any::<i32>(), 0..3000)) {
        let got = upload(&xs).map(|x| build(&e, x)).unwrap().to_vec().unwrap();
        let want: Vec<i32> = xs.iter().map(|&x| eval(&e, x)).collect();
        prop_assert_eq!(&got, &want);
        if dev().is_cuda() {
            let host = DeviceSeq::from_slice(&Device::host(), &xs).unwrap();
            prop_assert_eq!(host.map(|x| build(&e, x)).unwrap().to_vec().unwrap(), want);
        }
    }

    #[test]
    fn scan_matches_the_loop(xs in prop::collection::vec(any::<i64>(), 0..20_000)) {
        let got = upload(&xs).inclusive_scan(Op::Add).unwrap().to_vec().unwrap();
        let want: Vec<i64> = xs.iter().scan(0i64, |s, x| { *s = s.wrapping_add(*x); Some(*s) }).collect();
        prop_assert_eq!(got, want);
    }

    #[test]
    fn sort_of_any_float_bits(bits in prop::collection::vec(any::<u32>(), 0..20_000)) {
        let xs: Vec<f32> = bits.iter().map(|&b| f32::from_bits(b)).collect();
        let mut want = xs.clone();
        want.sort_by(f32::total_cmp);
        let got = upload(&xs).sort().unwrap().to_vec().unwrap();
        prop_assert_eq!(got.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), want.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
    }

    #[test]
    fn segmented_reduce_matches_the_loop(
        pairs in prop::collection::vec((any::<u16>(), prop::bool::weighted(0.05)), 0..20_000)
    ) {
        let xs: Vec<u16> = pairs.iter().map(|p| p.0).collect();
        let f: Vec<u8> = pairs.iter().map(|p| p.1 as u8).collect();
        let got = upload(&xs).segmented_reduce(&upload(&f), Op::Max).unwrap().to_vec().unwrap();
        let mut want: Vec<u16> = Vec::new();
        for (i, (&x, &h)) in xs.iter().zip(&f).enumerate() {
            if i == 0 || h != 0 { want.push(x) } else { let l = want.len() - 1; want[l] = want[l].max(x) }
        }
        prop_assert_eq!(got, want);
    }

    #[test]
    fn compact_matches_filter(pairs in prop::collection::vec((any::<i8>(), any::<bool>()), 0..20_000)) {
        let xs: Vec<i8> = pairs.iter().map(|p| p.0).collect();
        let f: Vec<u8> = pairs.iter().map(|p| p.1 as u8).collect();
        let got = upload(&xs).compact(&upload(&f)).unwrap().to_vec().unwrap();
        let want: Vec<i8> = pairs.iter().filter(|p| p.1).map(|p| p.0).collect();
        prop_assert_eq!(got, want);
    }
}

/// A random float expression over one input, from the operations the API docs promise exact.
#[derive(Debug, Clone)]
enum F {
    X,
    K(f32),
    Add(Box<F>, Box<F>),
    Sub(Box<F>, Box<F>),
    Mul(Box<F>, Box<F>),
    Div(Box<F>, Box<F>),
    Min(Box<F>, Box<F>),
    Max(Box<F>, Box<F>),
    Neg(Box<F>),
    Abs(Box<F>),
    Sqrt(Box<F>),
    Floor(Box<F>),
    Ceil(Box<F>),
    Round(Box<F>),
    /// `select(a < b, c, d)`.
    Sel(Box<F>, Box<F>, Box<F>, Box<F>),
    /// Through `i32` (saturating, NaN to 0) and back.
    ViaI32(Box<F>),
    /// Through `f16` and back.
    ViaF16(Box<F>),
}

/// Floats with the specials mixed in: any bit pattern (NaNs, subnormals), +-0, +-inf, and
/// small whole and half numbers.
fn float() -> impl Strategy<Value = f32> {
    prop_oneof![
        any::<u32>().prop_map(f32::from_bits),
        prop::sample::select(vec![
            0.0f32,
            -0.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            1e-40,
            -1e-45
        ]),
        (-64i32..64).prop_map(|k| k as f32 * 0.5),
    ]
}

fn fexpr() -> impl Strategy<Value = F> {
    let leaf = prop_oneof![Just(F::X), float().prop_map(F::K)];
    leaf.prop_recursive(5, 40, 4, |inner| {
        let b = |f: fn(Box<F>, Box<F>) -> F| {
            (inner.clone(), inner.clone()).prop_map(move |(a, c)| f(a.into(), c.into()))
        };
        let u = |f: fn(Box<F>) -> F| inner.clone().prop_map(move |a| f(a.into()));
        prop_oneof![
            b(F::Add),
            b(F::Sub),
            b(F::Mul),
            b(F::Div),
            b(F::Min),
            b(F::Max),
            u(F::Neg),
            u(F::Abs),
            u(F::Sqrt),
            u(F::Floor),
            u(F::Ceil),
            u(F::Round),
            u(F::ViaI32),
            u(F::ViaF16),
            (inner.clone(), inner.clone(), inner.clone(), inner.clone())
                .prop_map(|(a, b, c, d)| F::Sel(a.into(), b.into(), c.into(), d.into())),
        ]
    })
}

fn fbuild(e: &F, x: Expr<f32>) -> Expr<f32> {
    let g = |a: &F| fbuild(a, x);
    match e {
        F::X => x,
        F::K(k) => Expr::constant(*k),
        F::Add(a, b) => g(a) + g(b),
        F::Sub(a, b) => g(a) - g(b),
        F::Mul(a, b) => g(a) * g(b),
        F::Div(a, b) => g(a) / g(b),
        F::Min(a, b) => g(a).min(g(b)),
        F::Max(a, b) => g(a).max(g(b)),
        F::Neg(a) => -g(a),
        F::Abs(a) => g(a).abs(),
        F::Sqrt(a) => g(a).sqrt(),
        F::Floor(a) => g(a).floor(),
        F::Ceil(a) => g(a).ceil(),
        F::Round(a) => g(a).round(),
        F::Sel(a, b, c, d) => Expr::select(g(a).lt(g(b)), g(c), g(d)),
        F::ViaI32(a) => g(a).cast::<i32>().cast::<f32>(),
        F::ViaF16(a) => g(a).cast::<devseq::f16>().cast::<f32>(),
    }
}

fn feval(e: &F, x: f32) -> f32 {
    let g = |a: &F| feval(a, x);
    match e {
        F::X => x,
        F::K(k) => *k,
        F::Add(a, b) => g(a) + g(b),
        F::Sub(a, b) => g(a) - g(b),
        F::Mul(a, b) => g(a) * g(b),
        F::Div(a, b) => g(a) / g(b),
        F::Min(a, b) => fmin(g(a).into(), g(b).into()) as f32,
        F::Max(a, b) => fmax(g(a).into(), g(b).into()) as f32,
        F::Neg(a) => -g(a),
        F::Abs(a) => g(a).abs(),
        F::Sqrt(a) => g(a).sqrt(),
        F::Floor(a) => g(a).floor(),
        F::Ceil(a) => g(a).ceil(),
        F::Round(a) => g(a).round(),
        F::Sel(a, b, c, d) => {
            if g(a) < g(b) {
                g(c)
            } else {
                g(d)
            }
        }
        F::ViaI32(a) => g(a) as i32 as f32,
        F::ViaF16(a) => devseq::f16::from_f32(g(a)).to_f32(),
    }
}

/// Equal bits, or both NaN (NaN payloads are not promised).
fn same_f32(a: &[f32], b: &[f32]) -> Option<usize> {
    (0..a.len()).find(|&i| !(a[i].to_bits() == b[i].to_bits() || (a[i].is_nan() && b[i].is_nan())))
}

proptest! {
    #![proptest_config(config())]

    /// Random float expressions from the exact operations: the device agrees with the oracle
    /// (and with the host backend) bit for bit, signed zeros included.
    #[test]
    fn random_float_expressions(e in fexpr(), xs in prop::collection::vec(float(), 0..3000)) {
        let got = upload(&xs).map(|x| fbuild(&e, x)).unwrap().to_vec().unwrap();
        let want: Vec<f32> = xs.iter().map(|&x| feval(&e, x)).collect();
        prop_assert_eq!(got.len(), want.len());
        if let Some(i) = same_f32(&got, &want) {
            prop_assert!(false, "x = {:e}: got {:e}, want {:e}", xs[i], got[i], want[i]);
        }
        if dev().is_cuda() {
            let host = DeviceSeq::from_slice(&Device::host(), &xs).unwrap();
            let h = host.map(|x| fbuild(&e, x)).unwrap().to_vec().unwrap();
            prop_assert_eq!(same_f32(&h, &want), None);
        }
    }
}

/// One random case for every primitive on one element type: per element a seed for its value
/// and a byte for its flag; the operator, the flag density, the index pattern and histogram
/// shape. Lengths run to `DEVSEQ_PROPTEST_MAX_LEN` (default 2^20), mostly short.
#[derive(Debug, Clone)]
struct Case {
    cells: Vec<(u64, u8)>,
    op: usize,
    density: u16,
    pattern: u8,
    slots: u32,
    bins: usize,
}

fn max_len() -> usize {
    std::env::var("DEVSEQ_PROPTEST_MAX_LEN")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1 << 20)
}

fn case() -> impl Strategy<Value = Case> {
    let len = prop_oneof![4 => 0..=40usize, 3 => 0..=20_000usize, 1 => 0..=max_len()];
    let cells = len.prop_flat_map(|n| prop::collection::vec(any::<(u64, u8)>(), n));
    (
        cells,
        0..Op::ALL.len(),
        0u16..=256,
        0u8..4,
        1u32..5000,
        1usize..3000,
    )
        .prop_map(|(cells, op, density, pattern, slots, bins)| Case {
            cells,
            op,
            density,
            pattern,
            slots,
            bins,
        })
}

/// Every primitive of one element type against the oracles of the other test files.
fn every_primitive<X: T>() {
    let mut runner = proptest::test_runner::TestRunner::new(config());
    let ops = ops::<X>();
    runner
        .run(&case(), |c| {
            check_case::<X>(&c, ops[c.op % ops.len()]);
            Ok(())
        })
        .unwrap();
}
for_types!(every_primitive_types, every_primitive);

fn check_case<X: T>(c: &Case, op: Op) {
    let n = c.cells.len();
    let what = format!("{op:?} n={n}");
    let xs: Vec<X> = c
        .cells
        .iter()
        .map(|p| X::draw(&mut crate::common::Rng::seeded(p.0), gen_for(op)))
        .collect();
    let sp: Vec<X> = c
        .cells
        .iter()
        .map(|p| X::draw(&mut crate::common::Rng::seeded(!p.0), Gen::Special))
        .collect();
    let f: Vec<u8> = c
        .cells
        .iter()
        .map(|p| {
            if (p.1 as u16) < c.density {
                (p.0 >> 56) as u8 | 1
            } else {
                0
            }
        })
        .collect();
    let (s, fs) = (upload(&xs), upload(&f));

    // Reductions and scans.
    let all = X::from_acc(
        xs.iter()
            .fold(X::identity(op), |a, x| X::op(op, a, x.acc())),
    );
    assert!(X::same(s.reduce(op).unwrap(), all), "reduce {what}");
    let init = sp
        .first()
        .copied()
        .filter(|_| !X::FLOAT)
        .unwrap_or(X::from_acc_f(1.0));
    assert!(
        X::same(
            s.fold(init, op).unwrap(),
            X::from_acc(X::op(op, init.acc(), all.acc()))
        ),
        "fold {what}"
    );
    assert_same(
        &s.inclusive_scan(op).unwrap().to_vec().unwrap(),
        &crate::scan::inclusive_oracle(&xs, op),
        &format!("inclusive {what}"),
    );
    assert_same(
        &s.exclusive_scan(init, op).unwrap().to_vec().unwrap(),
        &crate::scan::exclusive_oracle(&xs, init, op),
        &format!("exclusive {what}"),
    );

    // Segments and compaction.
    let what = format!("{what} density {}/256", c.density);
    crate::segment::check_segmented(&s, &fs, &xs, &f, init, op, &what);
    let kept: Vec<X> = sp
        .iter()
        .zip(&f)
        .filter(|p| *p.1 != 0)
        .map(|p| *p.0)
        .collect();
    let ss = upload(&sp);
    assert_bits(
        &ss.compact(&fs).unwrap().to_vec().unwrap(),
        &kept,
        &format!("compact {what}"),
    );
    let nz: Vec<u32> = (0..n as u32).filter(|&i| f[i as usize] != 0).collect();
    assert_eq!(
        fs.nonzero_indices::<u32>().unwrap().to_vec().unwrap(),
        nz,
        "nonzero_indices {what}"
    );
    let heads: Vec<bool> = (0..n)
        .map(|i| i == 0 || sp[i].to_bits() != sp[i - 1].to_bits())
        .collect();
    assert_eq!(
        ss.head_flags().unwrap().to_vec().unwrap(),
        heads,
        "head_flags {what}"
    );

    // Gather, scatter and scatter_combine, with indices in one of four patterns.
    let len = n.max(1) as u64;
    let idx: Vec<u64> = c
        .cells
        .iter()
        .enumerate()
        .map(|(i, p)| match c.pattern {
            0 => p.0 % len,
            1 => (p.0 % 8).min(len - 1),
            2 => (len - 1) - i as u64 % len,
            _ => (i as u64 + p.0 % 3).min(len - 1),
        })
        .collect();
    let src = if n == 0 {
        vec![X::from_acc_f(1.0)]
    } else {
        sp.clone()
    };
    crate::gather::check::<X, u32>(
        &upload(&src),
        &src,
        &idx,
        &format!("pattern {} {what}", c.pattern),
    );
    let slots = c.slots as usize;
    let cidx: Vec<u32> = idx.iter().map(|&i| (i % slots as u64) as u32).collect();
    let base: Vec<X> = (0..slots)
        .map(|k| X::draw(&mut crate::common::Rng::seeded(k as u64), gen_for(op)))
        .collect();
    assert_same(
        &s.scatter_combine(&upload(&cidx), &upload(&base), op)
            .unwrap()
            .to_vec()
            .unwrap(),
        &crate::combine::oracle(&xs, &cidx, &base, op),
        &format!("scatter_combine {slots} slots {what}"),
    );

    // Sorting: keys with the specials, stable pairs, argsort.
    let (order, sorted) = stable_order(&sp);
    assert_bits(
        &ss.sort().unwrap().to_vec().unwrap(),
        &sorted,
        &format!("sort {what}"),
    );
    let (k, v) = ss
        .sort_pairs(&upload(&(0..n as u32).collect::<Vec<_>>()))
        .unwrap();
    assert_bits(
        &k.to_vec().unwrap(),
        &sorted,
        &format!("sort_pairs keys {what}"),
    );
    assert_eq!(v.to_vec().unwrap(), order, "sort_pairs values {what}");
    assert_eq!(
        ss.argsort::<u32>().unwrap().to_vec().unwrap(),
        order,
        "argsort {what}"
    );

    // Histogram over a range from the data (or a fixed one), in c.bins bins.
    let (lo, hi) = match (sorted.first(), sorted.get(n / 2)) {
        (Some(&a), Some(&b)) if a.f() < b.f() => (a, b),
        _ => (X::from_acc_f(0.0), X::from_acc_f(100.0)),
    };
    let mut want = vec![0u64; c.bins];
    for &x in &sp {
        if let Some(b) = crate::histogram::bin(x, c.bins, lo, hi) {
            want[b] += 1;
        }
    }
    assert_eq!(
        ss.histogram(c.bins, lo, hi).unwrap().to_vec().unwrap(),
        want,
        "histogram [{lo:?}, {hi:?}) {what}"
    );
}
