//! Property tests (proptest): random lengths and contents, shrinking to a minimal failing
//! input. `DEVSEQ_PROPTEST_CASES` sets the number of cases (default 24, kept small for CI).

use crate::common::*;
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
