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

/// The pairs a GPU scatter_combine sorts and combines in one launch: one tile of the runs'
/// kernel (256 threads x rounds x 16 bytes: 4096 values of 1 or 2 bytes, 3072 of 4, 2048 of
/// 8), and one more.
fn one_tile<X: T>() -> usize {
    match std::mem::size_of::<X>() {
        1 | 2 => 4096,
        4 => 3072,
        _ => 2048,
    }
}

/// Every operator, inputs on both sides of one tile (`one_tile`), into one slot, a few, about
/// one a value and many; u32 and u64 indices, stored and lazy indices and values; against the
/// oracle.
fn one_launch_combines<X: T>() {
    let mut r = Rng::new(&format!("one launch {}", std::any::type_name::<X>()));
    let tile = one_tile::<X>();
    for n in [1usize, 2, 33, 257, tile - 1, tile, tile + 1] {
        for slots in [1usize, 7, n, 70_000] {
            for op in ops::<X>() {
                let xs: Vec<X> = draw_vec(&mut r, n, gen_for(op));
                let idx: Vec<u32> = (0..n).map(|_| r.below(slots as u64) as u32).collect();
                let base: Vec<X> = draw_vec(&mut r, slots, gen_for(op));
                let want = oracle(&xs, &idx, &base, op);
                let what = format!("{op:?} n={n} slots={slots}");
                let (vals, ids, b) = (upload(&xs), upload(&idx), upload(&base));
                let got = vals.scatter_combine(&ids, &b, op).unwrap();
                assert_same(&got.to_vec().unwrap(), &want, &what);
                let wide: Vec<u64> = idx.iter().map(|&i| i as u64).collect();
                let got = vals.scatter_combine(&upload(&wide), &b, op).unwrap();
                assert_same(&got.to_vec().unwrap(), &want, &format!("{what} u64"));
                let lazy_ids = ids.map(|i| i).unwrap();
                let lazy_vals = vals.map(|x| x).unwrap();
                let got = lazy_vals.scatter_combine(&lazy_ids, &b, op).unwrap();
                assert_same(&got.to_vec().unwrap(), &want, &format!("{what} lazy"));
            }
        }
    }
}
for_types!(one_launch, one_launch_combines);

/// An index out of range among values of one tile (`one_tile`: the one-launch kernel,
/// `ds_combine_tile`, sorts and checks them itself) and of several (the runs' kernel,
/// `ds_combine_runs`, reads the sort's error word): the first bad index by position is
/// reported, with u32 and u64 indices, and neither the values nor the base change.
fn bad_index_across_tiles<X: T>() {
    let mut r = Rng::new(&format!("bad index {}", std::any::type_name::<X>()));
    let tile = one_tile::<X>();
    let len = 1000usize;
    for n in [1, 5, tile - 1, tile, tile + 1, 5 * tile + 3, big(70_001)] {
        for bad_at in [0, n / 2, n - 1] {
            let xs: Vec<X> = (0..n).map(X::from_index).collect();
            let mut idx: Vec<u64> = (0..n).map(|_| r.below(len as u64)).collect();
            idx[bad_at] = len as u64 + 5;
            if bad_at + 1 < n {
                // A later bad index, far out (not reported: the first by position is).
                idx[n - 1] = u64::MAX;
            }
            let base: Vec<X> = draw_vec(&mut r, len, Gen::Any);
            let (vals, b) = (upload(&xs), upload(&base));
            let what = format!("n={n} bad at {bad_at}");
            for op in [Op::Add, Op::Max] {
                match vals
                    .scatter_combine(&upload(&idx), &b, op)
                    .and_then(|y| y.to_vec())
                {
                    Err(Error::IndexOutOfBounds { index, len: l }) => {
                        assert_eq!((index, l), (idx[bad_at], len), "{op:?} {what}")
                    }
                    other => panic!("{op:?} {what}: {other:?}"),
                }
            }
            let narrow: Vec<u32> = idx.iter().map(|&i| i.min(u32::MAX as u64) as u32).collect();
            match vals
                .scatter_combine(&upload(&narrow), &b, Op::Add)
                .and_then(|y| y.to_vec())
            {
                Err(Error::IndexOutOfBounds { index, len: l }) => {
                    assert_eq!((index, l), (narrow[bad_at] as u64, len), "u32 {what}")
                }
                other => panic!("u32 {what}: {other:?}"),
            }
            assert_bits(
                &vals.to_vec().unwrap(),
                &xs,
                &format!("values intact {what}"),
            );
            assert_bits(&b.to_vec().unwrap(), &base, &format!("base intact {what}"));
        }
    }
}
crate::for_each_type!(
    bad_index_tiles,
    bad_index_across_tiles,
    [f32, i64, f64, u8, f16]
);
