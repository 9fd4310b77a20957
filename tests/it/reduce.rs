use crate::common::*;
use crate::for_types;

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
