use crate::common::*;
use crate::for_types;
use devseq::{Error, Op};

pub fn oracle<X: T>(xs: &[X], idx: &[u32], base: &[X], op: Op) -> Vec<X> {
    let mut acc: Vec<Option<X::Acc>> = vec![None; base.len()];
    for (x, &k) in xs.iter().zip(idx) {
        let a = &mut acc[k as usize];
        *a = Some(match *a {
            None => x.acc(),
            Some(p) => X::op(op, p, x.acc()),
        });
    }
    acc.iter()
        .zip(base)
        .map(|(a, b)| match a {
            None => *b,
            Some(v) => X::from_acc(X::op(op, *v, b.acc())),
        })
        .collect()
}

fn combines<X: T>() {
    let mut r = Rng::new(std::any::type_name::<X>());
    for op in ops::<X>() {
        for &n in small_sizes().iter().chain(&[big(1_000_003)]) {
            for slots in [1usize, 16, (n / 16).max(1)] {
                let xs: Vec<X> = draw_vec(&mut r, n, gen_for(op));
                let idx: Vec<u32> = (0..n).map(|_| r.below(slots as u64) as u32).collect();
                let base: Vec<X> = draw_vec(&mut r, slots + 3, gen_for(op));
                let got = upload(&xs)
                    .scatter_combine(&upload(&idx), &upload(&base), op)
                    .unwrap()
                    .to_vec()
                    .unwrap();
                assert_same(
                    &got,
                    &oracle(&xs, &idx, &base, op),
                    &format!("scatter_combine {op:?} n={n} slots={slots}"),
                );
            }
        }
    }
}
for_types!(scatter_combine, combines);

/// u64 indices, into a large base.
#[test]
fn u64_indices() {
    let mut r = Rng::new("combine u64");
    let n = 200_001;
    let len = 3_000_000usize;
    let xs: Vec<i64> = (0..n).map(|_| r.next() as i64).collect();
    let idx: Vec<u64> = (0..n).map(|_| r.below(len as u64)).collect();
    let base: Vec<i64> = vec![7; len];
    let got = upload(&xs)
        .scatter_combine(&upload(&idx), &upload(&base), Op::Add)
        .unwrap()
        .to_vec()
        .unwrap();
    let mut want = base.clone();
    for (x, &k) in xs.iter().zip(&idx) {
        want[k as usize] = want[k as usize].wrapping_add(*x);
    }
    assert_eq!(got, want);
}

#[test]
fn out_of_range_index_writes_nothing() {
    let xs = upload(&[1.0f32, 2.0, 3.0]);
    let base = upload(&[0.0f32; 4]);
    for bad in [vec![0u32, 4, 1], vec![9u32, 0, 0], vec![1u32, 2, 400]] {
        let want = *bad.iter().find(|&&k| k >= 4).unwrap() as u64;
        // From the call or from the first use of its result (the GPU's call does not wait).
        match xs
            .scatter_combine(&upload(&bad), &base, Op::Add)
            .and_then(|y| y.to_vec())
        {
            Err(Error::IndexOutOfBounds { index, len: 4 }) => assert_eq!(index, want),
            other => panic!("{bad:?}: {other:?}"),
        }
    }
    assert_eq!(base.to_vec().unwrap(), [0.0; 4]);
    let empty = upload::<f32>(&[]);
    assert!(matches!(
        xs.scatter_combine(&upload(&[0u32, 0, 0]), &empty, Op::Add),
        Err(Error::IndexOutOfBounds { index: 0, len: 0 })
    ));
}

/// A few values into bases of lengths on both sides of what a one-tile GPU combine copies
/// itself (8 rounds of its block of 256: 2048 elements), stored and lazy, with values of one
/// tile (2048 to 4096 of them, by type) and of more: against the oracle; the untouched slots
/// keep the base.
fn small_combines_into_bases<X: T>() {
    let mut r = Rng::new(&format!("combine bases {}", std::any::type_name::<X>()));
    for len in [
        1usize, 1023, 1024, 1025, 2047, 2048, 2049, 4095, 4096, 4097, 9000,
    ] {
        for n in [1usize, 100, 3000, 9000] {
            let xs: Vec<X> = draw_vec(&mut r, n, gen_for(Op::Max));
            let idx: Vec<u32> = (0..n).map(|_| r.below(len as u64) as u32).collect();
            let base: Vec<X> = draw_vec(&mut r, len, gen_for(Op::Max));
            let what = format!("n={n} len={len}");
            let got = upload(&xs)
                .scatter_combine(&upload(&idx), &upload(&base), Op::Max)
                .unwrap()
                .to_vec()
                .unwrap();
            assert_same(&got, &oracle(&xs, &idx, &base, Op::Max), &what);
            // A lazy base: a map of the stored one.
            let lazy = upload(&base).map(|x| x).unwrap();
            let got = upload(&xs)
                .scatter_combine(&upload(&idx), &lazy, Op::Max)
                .unwrap()
                .to_vec()
                .unwrap();
            assert_same(
                &got,
                &oracle(&xs, &idx, &base, Op::Max),
                &format!("{what} lazy"),
            );
        }
    }
}
for_types!(small_combines, small_combines_into_bases);
