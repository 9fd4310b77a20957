//! `bool` as an element: comparisons, logical operators, counting, flags of `bool` beside flags
//! of `u8`, `is_sorted`, `from_bits`; each against a sequential oracle.

use crate::common::*;
use crate::for_types;
use devseq::{DeviceSeq, Error, Expr, Op};

fn bools(r: &mut Rng, n: usize, p: f64) -> Vec<bool> {
    (0..n).map(|_| r.unit() < p).collect()
}

#[test]
fn round_trip_and_reductions() {
    let mut r = Rng::new("bool round trip");
    for &n in sizes() {
        for p in [0.0, 0.01, 0.5, 1.0] {
            let xs = bools(&mut r, n, p);
            let s = upload(&xs);
            assert_eq!(s.to_vec().unwrap(), xs, "to_vec n={n} p={p}");
            let mut out = vec![false; n];
            s.to_vec_into(&mut out).unwrap();
            assert_eq!(out, xs, "to_vec_into n={n}");
            let trues = xs.iter().filter(|&&b| b).count() as u64;
            assert_eq!(s.count().unwrap(), trues, "count n={n} p={p}");
            assert_eq!(s.any().unwrap(), trues > 0, "any n={n} p={p}");
            assert_eq!(s.all().unwrap(), trues == n as u64, "all n={n} p={p}");
            let xor = xs.iter().fold(false, |a, &b| a ^ b);
            assert_eq!(s.reduce(Op::BitXor).unwrap(), xor, "xor n={n}");
            assert_eq!(s.reduce(Op::BitAnd).unwrap(), trues == n as u64);
            assert_eq!(s.reduce(Op::BitOr).unwrap(), trues > 0);
            // Scans of bools: a running or, and a running and.
            let mut acc = false;
            let want: Vec<bool> = xs
                .iter()
                .map(|&b| {
                    acc |= b;
                    acc
                })
                .collect();
            assert_eq!(
                s.inclusive_scan(Op::Max).unwrap().to_vec().unwrap(),
                want,
                "or-scan n={n}"
            );
            // Logical not of a lazy sequence, counted without a store.
            let not = s.map(|b| !b).unwrap();
            assert_eq!(not.count().unwrap(), n as u64 - trues, "count of !b n={n}");
        }
    }
}

#[test]
fn counts_do_not_wrap_at_256() {
    let n = 1000;
    let s = DeviceSeq::<u32>::sequence(&dev(), n).unwrap();
    assert_eq!(s.count_if(|i| i.ge(100u32)).unwrap(), 900);
    assert_eq!(s.count_if(|i| !i.lt(1000u32)).unwrap(), 0);
    let t = s.zip_map(&s, |a, b| (a, b.cast::<f32>())).unwrap();
    assert_eq!(
        t.count_if(|(a, b)| a.lt(300u32) & b.ge(100.0f32)).unwrap(),
        200
    );
}

#[test]
fn add_and_mul_of_bools_are_refused() {
    let s = upload(&[true, false, true]);
    for op in [Op::Add, Op::Mul] {
        assert!(
            matches!(s.reduce(op), Err(Error::UnsupportedOp { .. })),
            "{op:?}"
        );
        assert!(matches!(
            s.inclusive_scan(op),
            Err(Error::UnsupportedOp { .. })
        ));
    }
    assert!(matches!(s.map(|b| b + b), Err(Error::InvalidArgument(_))));
    assert!(matches!(s.map(|b| -b), Err(Error::InvalidArgument(_))));
    // The input is intact.
    assert_eq!(s.to_vec().unwrap(), [true, false, true]);
}

fn comparisons<X: T>() {
    let mut r = Rng::new(std::any::type_name::<X>());
    for &n in small_sizes() {
        let xs: Vec<X> = draw_vec(&mut r, n, Gen::Special);
        let ys: Vec<X> = (0..n)
            .map(|i| {
                if r.below(4) == 0 {
                    xs[i]
                } else {
                    X::draw(&mut r, Gen::Special)
                }
            })
            .collect();
        let (a, b) = (upload(&xs), upload(&ys));
        let f = |i: usize| (xs[i].f(), ys[i].f());
        let lt: Vec<bool> = (0..n).map(|i| f(i).0 < f(i).1).collect();
        let ge: Vec<bool> = (0..n).map(|i| f(i).0 >= f(i).1).collect();
        let eq: Vec<bool> = (0..n).map(|i| f(i).0 == f(i).1).collect();
        let what = format!("{} n={n}", std::any::type_name::<X>());
        let got = |m: devseq::Result<DeviceSeq<bool>>| m.unwrap().to_vec().unwrap();
        assert_eq!(got(a.zip_map(&b, |x, y| x.lt(y))), lt, "lt {what}");
        assert_eq!(got(a.zip_map(&b, |x, y| x.ge(y))), ge, "ge {what}");
        // `!` is logical: `!(x < y)` is true where either is NaN, unlike `x >= y`.
        let not_lt: Vec<bool> = lt.iter().map(|b| !b).collect();
        assert_eq!(got(a.zip_map(&b, |x, y| !x.lt(y))), not_lt, "!lt {what}");
        let mixed: Vec<bool> = (0..n).map(|i| (lt[i] & !eq[i]) | (ge[i] ^ eq[i])).collect();
        assert_eq!(
            got(a.zip_map(&b, |x, y| (x.lt(y) & !x.eq(y)) | (x.ge(y) ^ x.eq(y)))),
            mixed,
            "& | ^ {what}"
        );
        let n_lt = lt.iter().filter(|&&b| b).count() as u64;
        assert_eq!(
            a.zip_map(&b, |x, y| x.lt(y)).unwrap().count().unwrap(),
            n_lt,
            "count {what}"
        );
        // select on a bool and on a u8 that is nonzero but not 1.
        let sel: Vec<X> = (0..n).map(|i| if lt[i] { xs[i] } else { ys[i] }).collect();
        assert_same(
            &a.zip_map(&b, |x, y| Expr::select(x.lt(y), x, y))
                .unwrap()
                .to_vec()
                .unwrap(),
            &sel,
            &format!("select(bool) {what}"),
        );
        assert_same(
            &a.zip_map(&b, |x, y| Expr::select(x.lt(y).cast::<u8>() * 7u8, x, y))
                .unwrap()
                .to_vec()
                .unwrap(),
            &sel,
            &format!("select(u8) {what}"),
        );
        // A cast to bool is `!= 0`; from bool, 0 or 1.
        let nz: Vec<bool> = xs.iter().map(|x| x.f() != 0.0).collect();
        assert_eq!(got(a.map(|x| x.cast::<bool>())), nz, "cast::<bool> {what}");
        let back: Vec<X> = nz.iter().map(|&b| X::from_acc_f(b as u8 as f64)).collect();
        assert_same(
            &upload(&nz)
                .map(|b| b.cast::<X>())
                .unwrap()
                .to_vec()
                .unwrap(),
            &back,
            &format!("cast from bool {what}"),
        );
    }
}
for_types!(comparisons_are_bools, comparisons);

/// Flags of `bool` and of `u8` (any nonzero value true) give the same answers.
fn flags_of_both_kinds<X: T>() {
    let mut r = Rng::new(std::any::type_name::<X>());
    for &n in small_sizes() {
        let xs: Vec<X> = draw_vec(&mut r, n, Gen::SumExact);
        let f8 = flags(&mut r, n, 0.2);
        let fb: Vec<bool> = f8.iter().map(|&f| f != 0).collect();
        let (s, u, b) = (upload(&xs), upload(&f8), upload(&fb));
        let what = format!("{} n={n}", std::any::type_name::<X>());
        let bits = |m: devseq::Result<DeviceSeq<X>>| m.unwrap().to_vec().unwrap();
        assert_bits(
            &bits(s.segmented_inclusive_scan(&b, Op::Add)),
            &bits(s.segmented_inclusive_scan(&u, Op::Add)),
            &format!("segmented_inclusive_scan {what}"),
        );
        assert_bits(
            &bits(s.segmented_reduce(&b, Op::Max)),
            &bits(s.segmented_reduce(&u, Op::Max)),
            &format!("segmented_reduce {what}"),
        );
        // Oracles for compact and nonzero_indices.
        let kept: Vec<X> = (0..n).filter(|&i| fb[i]).map(|i| xs[i]).collect();
        assert_bits(
            &bits(s.compact(&b)),
            &kept,
            &format!("compact(bool) {what}"),
        );
        assert_bits(&bits(s.compact(&u)), &kept, &format!("compact(u8) {what}"));
        let idx: Vec<u32> = (0..n as u32).filter(|&i| fb[i as usize]).collect();
        assert_eq!(
            b.nonzero_indices::<u32>().unwrap().to_vec().unwrap(),
            idx,
            "{what}"
        );
        // Lazy bool flags (a comparison) are fused, with the same answer.
        let lazy = s.map(|x| x.gt(X::from_acc_f(0.0))).unwrap();
        let pos: Vec<X> = xs.iter().copied().filter(|x| x.f() > 0.0).collect();
        assert_bits(
            &bits(s.compact(&lazy)),
            &pos,
            &format!("compact(lazy) {what}"),
        );
        // Head flags are bools, and segment what they head.
        let heads = s.head_flags().unwrap();
        assert_bits(
            &bits(s.compact(&heads)),
            &s.dedup().unwrap().to_vec().unwrap(),
            &format!("compact(head_flags) {what}"),
        );
    }
}
for_types!(bool_and_u8_flags, flags_of_both_kinds);

#[test]
fn bool_keys_and_values() {
    let mut r = Rng::new("bool keys");
    for &n in small_sizes() {
        let ks = bools(&mut r, n, 0.3);
        let vs: Vec<u32> = (0..n).map(|_| r.below(1000) as u32).collect();
        let s = upload(&ks);
        let mut sorted = ks.clone();
        sorted.sort();
        assert_eq!(s.sort().unwrap().to_vec().unwrap(), sorted, "sort n={n}");
        let mut desc = sorted.clone();
        desc.reverse();
        assert_eq!(
            s.sort_descending().unwrap().to_vec().unwrap(),
            desc,
            "sort_descending n={n}"
        );
        let (order, _) = stable_order(&ks.iter().map(|&b| b as u8).collect::<Vec<u8>>());
        assert_eq!(
            s.argsort::<u32>().unwrap().to_vec().unwrap(),
            order,
            "argsort n={n}"
        );
        let (sk, sv) = s.sort_pairs(&upload(&vs)).unwrap();
        assert_eq!(sk.to_vec().unwrap(), sorted);
        let want_v: Vec<u32> = order.iter().map(|&i| vs[i as usize]).collect();
        assert_eq!(sv.to_vec().unwrap(), want_v, "sort_pairs values n={n}");
        assert!(sk.is_sorted().unwrap());
        // Runs of equal bools, reduced by key.
        let (rk, rv) = s.reduce_by_key(&upload(&vs), Op::Add).unwrap();
        let (mut wk, mut wv) = (Vec::new(), Vec::<u32>::new());
        for i in 0..n {
            if i == 0 || ks[i] != ks[i - 1] {
                wk.push(ks[i]);
                wv.push(0);
            }
            *wv.last_mut().unwrap() += vs[i];
        }
        assert_eq!(rk.to_vec().unwrap(), wk, "reduce_by_key keys n={n}");
        assert_eq!(rv.to_vec().unwrap(), wv, "reduce_by_key values n={n}");
        // Gather and scatter move bools as bytes of 0 and 1.
        if n > 0 {
            let idx: Vec<u32> = (0..n).map(|_| r.below(n as u64) as u32).collect();
            let want: Vec<bool> = idx.iter().map(|&i| ks[i as usize]).collect();
            assert_eq!(
                s.gather(&upload(&idx)).unwrap().to_vec().unwrap(),
                want,
                "gather n={n}"
            );
        }
    }
}

fn is_sorted_matches_sort<X: T>() {
    let mut r = Rng::new(std::any::type_name::<X>());
    for &n in small_sizes() {
        let xs: Vec<X> = draw_vec(&mut r, n, Gen::Special);
        let s = upload(&xs);
        let sorted = s.sort().unwrap();
        let sv = sorted.to_vec().unwrap();
        // Distinct bits sort to distinct places, so a sequence is sorted iff it equals its sort.
        let oracle = xs.iter().zip(&sv).all(|(a, b)| a.to_bits() == b.to_bits());
        let what = format!("{} n={n}", std::any::type_name::<X>());
        assert_eq!(s.is_sorted().unwrap(), oracle, "is_sorted {what}");
        assert!(sorted.is_sorted().unwrap(), "is_sorted(sort) {what}");
        // One descent anywhere is seen.
        if n >= 2 {
            let i = r.below(n as u64 - 1) as usize;
            if sv[i].to_bits() != sv[i + 1].to_bits() {
                let mut sw = sv.clone();
                sw.swap(i, i + 1);
                assert!(!upload(&sw).is_sorted().unwrap(), "a swap at {i} {what}");
            }
        }
    }
}
for_types!(is_sorted, is_sorted_matches_sort);

#[test]
fn from_bits_inverts_to_bits() {
    let mut r = Rng::new("from_bits");
    let n = 4099;
    let xf: Vec<f32> = (0..n).map(|_| f32::from_bits(r.next() as u32)).collect();
    let s = upload(&xf);
    let back = s
        .map(|x| Expr::<f32>::from_bits(x.to_bits()))
        .unwrap()
        .to_vec()
        .unwrap();
    assert_bits(&back, &xf, "f32 (NaN payloads included)");
    let xd: Vec<f64> = (0..n).map(|_| f64::from_bits(r.next())).collect();
    let back = upload(&xd)
        .map(|x| Expr::<f64>::from_bits(x.to_bits()))
        .unwrap();
    assert_bits(&back.to_vec().unwrap(), &xd, "f64");
    let xh: Vec<devseq::f16> = (0..n)
        .map(|_| devseq::f16::from_bits(r.next() as u16))
        .collect();
    let back = upload(&xh)
        .map(|x| Expr::<devseq::f16>::from_bits(x.to_bits()))
        .unwrap();
    assert_bits(
        &back.to_vec().unwrap(),
        &xh,
        "f16 (signaling NaNs included)",
    );
    // From a narrower unsigned type, and the low bits of a wider one.
    let u: Vec<u16> = (0..n).map(|_| r.next() as u16).collect();
    let got = upload(&u).map(Expr::<devseq::bf16>::from_bits).unwrap();
    let want: Vec<devseq::bf16> = u.iter().map(|&b| devseq::bf16::from_bits(b)).collect();
    assert_bits(&got.to_vec().unwrap(), &want, "bf16 from u16");
    let w: Vec<u64> = (0..n).map(|_| r.next()).collect();
    let got = upload(&w).map(Expr::<i8>::from_bits).unwrap();
    let want: Vec<i8> = w.iter().map(|&b| b as u8 as i8).collect();
    assert_eq!(got.to_vec().unwrap(), want, "i8 from the low bits of u64");
    let got = upload(&w).map(Expr::<f32>::from_bits).unwrap();
    let want: Vec<f32> = w.iter().map(|&b| f32::from_bits(b as u32)).collect();
    assert_bits(
        &got.to_vec().unwrap(),
        &want,
        "f32 from the low bits of u64",
    );
}
