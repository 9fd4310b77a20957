use crate::common::*;
use crate::for_types;
use devseq::Op;

fn reduce_all<X: T>() {
    let mut r = Rng::new(std::any::type_name::<X>());
    for op in ops::<X>() {
        for &n in sizes() {
            let xs: Vec<X> = draw_vec(&mut r, n, gen_for(op));
            let s = upload(&xs);
            let want = X::from_acc(
                xs.iter()
                    .fold(X::identity(op), |a, x| X::op(op, a, x.acc())),
            );
            let got = s.reduce(op).unwrap();
            assert!(
                X::same(got, want),
                "reduce {op:?} n={n}: got {got:?}, want {want:?}"
            );
            let on_device = s.reduce_to_seq(op).unwrap().to_vec().unwrap();
            assert_same(&on_device, &[want], "reduce_to_seq");
            let init = X::draw(&mut r, gen_for(op));
            let want_fold = X::from_acc(X::op(op, init.acc(), want.acc()));
            let got_fold = s.fold(init, op).unwrap();
            assert!(
                X::same(got_fold, want_fold),
                "fold {op:?} n={n}: got {got_fold:?}, want {want_fold:?}"
            );
        }
    }
}
for_types!(reduce, reduce_all);

/// Sums of ordinary random floats, against an f64 sum, within the rounding error of any
/// summation order (n * eps * sum |x|).
#[test]
fn float_sums_of_random_data_are_close() {
    let mut r = Rng::new("float sums");
    for n in [1000usize, big(1_000_003)] {
        let xs: Vec<f32> = (0..n).map(|_| r.unit() as f32 - 0.25).collect();
        let exact: f64 = xs.iter().map(|&x| x as f64).sum();
        let abs: f64 = xs.iter().map(|&x| (x as f64).abs()).sum();
        let got = upload(&xs).reduce(devseq::Op::Add).unwrap() as f64;
        let bound = abs * f32::EPSILON as f64 * 64.0;
        assert!(
            (got - exact).abs() <= bound,
            "n={n}: got {got}, exact {exact}, bound {bound}"
        );
    }
}

/// Reductions past one wave of blocks, where a block of the GPU's reduction takes more than
/// one tile in its grid-stride loop: tiles of 256 threads x 4 rounds x 16 bytes (2048 8-byte
/// or 4096 4-byte elements) and a grid of 132 multiprocessors x 8 blocks (an H200's; 1056
/// blocks), so from 8-byte n > 2,162,688 and 4-byte n > 4,325,376 (tuning/mod.rs `REDUCE`,
/// `reduce_min_blocks`; cuda/reduce.rs `reduce_into`). Sizes: one element past the wave (the
/// last block's second tile holds one element) and 37 tiles and 5 elements past it. Every
/// operator, `reduce`, `reduce_to_seq` and `fold`, against the sequential fold (exact draws:
/// float sums of quarters; products of +-1 and a few 2s and 0.5s).
fn past_one_wave<X: T>() {
    let mut r = Rng::new(&format!("reduce wave {}", std::any::type_name::<X>()));
    let tile = 4 * 256 * 16 / std::mem::size_of::<X>();
    let wave = 132 * 8 * tile;
    for n in [wave + 1, wave + 37 * tile + 5] {
        let n = big(n);
        for op in ops::<X>() {
            let mut xs: Vec<X> = draw_vec(&mut r, n, gen_for(op));
            if X::FLOAT && op == Op::Mul {
                // Signs only, and a 2 and a 0.5 in turn every 100,000: the partial products of
                // any grouping stay within f32's exponents (random 2s and 0.5s could drift past
                // 2^127 in a prefix at these lengths).
                for (i, x) in xs.iter_mut().enumerate() {
                    let sign = if x.f() < 0.0 { -1.0 } else { 1.0 };
                    let m = match i % 100_000 {
                        0 => 2.0,
                        50_000 => 0.5,
                        _ => 1.0,
                    };
                    *x = X::from_acc_f(sign * m);
                }
            }
            let s = upload(&xs);
            let acc = xs
                .iter()
                .fold(X::identity(op), |a, x| X::op(op, a, x.acc()));
            let want = X::from_acc(acc);
            let what = format!("{op:?} n={n}");
            let got = s.reduce(op).unwrap();
            assert!(
                X::same(got, want),
                "reduce {what}: got {got:?}, want {want:?}"
            );
            let on_device = s.reduce_to_seq(op).unwrap().to_vec().unwrap();
            assert_same(&on_device, &[want], &format!("reduce_to_seq {what}"));
            let init = X::draw(&mut r, gen_for(op));
            let want_fold = X::from_acc(X::op(op, init.acc(), acc));
            let got_fold = s.fold(init, op).unwrap();
            assert!(
                X::same(got_fold, want_fold),
                "fold {what}: got {got_fold:?}, want {want_fold:?}"
            );
        }
    }
}
crate::for_each_type!(
    reduce_past_one_wave,
    past_one_wave,
    [i32, u32, f32, i64, u64, f64]
);
