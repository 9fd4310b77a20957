use crate::common::*;
use crate::for_types;

pub fn inclusive_oracle<X: T>(xs: &[X], op: devseq::Op) -> Vec<X> {
    let mut out = Vec::with_capacity(xs.len());
    let mut acc: Option<X::Acc> = None;
    for x in xs {
        let a = match acc {
            None => x.acc(),
            Some(p) => X::op(op, p, x.acc()),
        };
        acc = Some(a);
        out.push(X::from_acc(a));
    }
    out
}

pub fn exclusive_oracle<X: T>(xs: &[X], init: X, op: devseq::Op) -> Vec<X> {
    let mut out = Vec::with_capacity(xs.len());
    let mut acc = init.acc();
    for x in xs {
        out.push(X::from_acc(acc));
        acc = X::op(op, acc, x.acc());
    }
    out
}

/// The inclusive scan and the exclusive scan from `init` of `s`, whose elements are `xs`,
/// against the oracles.
fn check_scans<X: T>(s: &devseq::DeviceSeq<X>, xs: &[X], op: devseq::Op, init: X, what: &str) {
    let got = s.inclusive_scan(op).unwrap().to_vec().unwrap();
    assert_same(
        &got,
        &inclusive_oracle(xs, op),
        &format!("inclusive {what}"),
    );
    let got = s.exclusive_scan(init, op).unwrap().to_vec().unwrap();
    assert_same(
        &got,
        &exclusive_oracle(xs, init, op),
        &format!("exclusive {what} init {init:?}"),
    );
}

fn scans<X: T>() {
    let mut r = Rng::new(std::any::type_name::<X>());
    for op in ops::<X>() {
        for &n in sizes() {
            let xs: Vec<X> = draw_vec(&mut r, n, gen_for(op));
            let init = X::draw(&mut r, gen_for(op));
            check_scans(&upload(&xs), &xs, op, init, &format!("{op:?} n={n}"));
        }
    }
}
for_types!(scan, scans);

/// Scans of views that start at odd offsets (the unaligned kernel path).
fn unaligned_views<X: T>() {
    let mut r = Rng::new("views");
    let xs: Vec<X> = draw_vec(&mut r, 70_001, Gen::SumExact);
    let s = upload(&xs);
    for start in [1usize, 3, 7] {
        let v = s.slice(start..);
        let got = v.inclusive_scan(devseq::Op::Add).unwrap().to_vec().unwrap();
        assert_same(
            &got,
            &inclusive_oracle(&xs[start..], devseq::Op::Add),
            &format!("view from {start}"),
        );
        let got = v.reduce(devseq::Op::Add).unwrap();
        let want = X::from_acc(
            xs[start..]
                .iter()
                .fold(X::identity(devseq::Op::Add), |a, x| {
                    X::op(devseq::Op::Add, a, x.acc())
                }),
        );
        assert!(X::same(got, want), "reduce of view from {start}");
    }
}
for_types!(scan_views, unaligned_views);

/// Scans on both sides of the sizes where the GPU's scan changes its tiles (512 KB of elements:
/// tiles of 2 rounds below, 8 above; 8 MB: 8 below, 16 above), and a partial tile past each.
fn tile_thresholds<X: T>() {
    let mut r = Rng::new("tile thresholds");
    let size = std::mem::size_of::<X>();
    for bytes in [512usize << 10, 8 << 20] {
        let at = bytes / size;
        for n in [at - 1, at, at + 1, at + 4097] {
            let n = big(n);
            for (op, exclusive) in [(devseq::Op::Add, false), (devseq::Op::Max, true)] {
                let xs: Vec<X> = draw_vec(&mut r, n, gen_for(op));
                let s = upload(&xs);
                let what = format!("{op:?} exclusive {exclusive} n={n}");
                if exclusive {
                    let init = X::draw(&mut r, gen_for(op));
                    let got = s.exclusive_scan(init, op).unwrap().to_vec().unwrap();
                    assert_same(&got, &exclusive_oracle(&xs, init, op), &what);
                } else {
                    let got = s.inclusive_scan(op).unwrap().to_vec().unwrap();
                    assert_same(&got, &inclusive_oracle(&xs, op), &what);
                }
            }
        }
    }
}
for_types!(scan_tile_thresholds, tile_thresholds);

/// Scans of a computed 8-byte input (a stored column plus the positions: a lazy source the GPU
/// computes in registers before it stages the tile, with instances of its own, tuning/mod.rs
/// `scan_min_blocks`) on both sides of 8 MB, where the tiles grow from 8 rounds to 16
/// (`scan_rounds_for`, `SCAN_MID`: n > 1,048,576), and a partial tile past that. Every
/// operator (floats: those whose sequential oracle is exact here: sums of quarters and whole
/// numbers, minima and maxima), inclusive and exclusive, against the oracle on the elements
/// computed on the host.
fn computed_past_mid<X: T>() {
    let mut r = Rng::new(&format!("computed scan {}", std::any::type_name::<X>()));
    let at = (8usize << 20) / std::mem::size_of::<X>();
    for n in [at, at + 1, at + 4097] {
        let n = big(n);
        let positions = devseq::DeviceSeq::<X>::sequence(&dev(), n).unwrap();
        for op in ops::<X>() {
            if X::FLOAT && op == devseq::Op::Mul {
                continue;
            }
            let xs: Vec<X> = draw_vec(&mut r, n, gen_for(op));
            let lazy = upload(&xs).zip_map(&positions, |x, i| x + i).unwrap();
            assert!(!lazy.is_stored());
            let add =
                |i: usize| X::from_acc(X::op(devseq::Op::Add, xs[i].acc(), X::from_index(i).acc()));
            let ys: Vec<X> = (0..n).map(add).collect();
            let init = X::draw(&mut r, gen_for(op));
            check_scans(&lazy, &ys, op, init, &format!("{op:?} n={n}"));
        }
    }
}
crate::for_each_type!(scan_computed_past_mid, computed_past_mid, [i64, u64, f64]);
