use crate::common::*;
use crate::for_types;
use devseq::{DeviceSeq, Error, Index};

fn perm(r: &mut Rng, n: usize) -> Vec<u64> {
    let mut p: Vec<u64> = (0..n as u64).collect();
    for i in (1..n).rev() {
        p.swap(i, r.below(i as u64 + 1) as usize);
    }
    p
}

fn index_sets(r: &mut Rng, n: usize, len: usize) -> Vec<(&'static str, Vec<u64>)> {
    let mut v = vec![
        ("random", (0..n).map(|_| r.below(len as u64)).collect()),
        ("all equal", vec![r.below(len as u64); n]),
        (
            "reversed",
            (0..n as u64)
                .map(|i| (len as u64 - 1) - i % len as u64)
                .collect(),
        ),
    ];
    if n == len {
        v.push(("permutation", perm(r, n)));
    }
    v
}

fn gather_scatter<X: T>() {
    let mut r = Rng::new(std::any::type_name::<X>());
    for &n in sizes() {
        let len = n.max(1);
        let src: Vec<X> = draw_vec(&mut r, len, Gen::Special);
        let s = upload(&src);
        for (what, idx) in index_sets(&mut r, n, len) {
            check::<X, u32>(&s, &src, &idx, what);
            check::<X, u64>(&s, &src, &idx, what);
        }
    }
}
for_types!(gather_scatter_types, gather_scatter);

pub fn check<X: T, I: Index + TryFrom<u64>>(s: &DeviceSeq<X>, src: &[X], idx: &[u64], what: &str)
where
    <I as TryFrom<u64>>::Error: std::fmt::Debug,
{
    let ix: Vec<I> = idx.iter().map(|&i| I::try_from(i).unwrap()).collect();
    let is = upload(&ix);
    let got = s.gather(&is).unwrap().to_vec().unwrap();
    let want: Vec<X> = idx.iter().map(|&i| src[i as usize]).collect();
    assert_bits(&got, &want, &format!("gather {what} n={}", idx.len()));
    // scatter: vals[i] lands at idx[i]; with repeats, one of the values for each slot does.
    let vals: Vec<X> = (0..idx.len()).map(|i| X::from_index(i)).collect();
    let base: Vec<X> = src.to_vec();
    let got = upload(&vals)
        .scatter(&is, &upload(&base))
        .unwrap()
        .to_vec()
        .unwrap();
    let candidates = Candidates::new(base.len(), idx, |i| vals[i].to_bits());
    for k in 0..base.len() {
        let c = candidates.of(k);
        let ok = if c.is_empty() {
            got[k].to_bits() == base[k].to_bits()
        } else {
            c.contains(&got[k].to_bits())
        };
        assert!(ok, "scatter {what}: slot {k} holds {:?}", got[k]);
    }
}

/// The values sent to each slot, in one array (slot `k`'s from `start[k]` to `start[k + 1]`):
/// a scatter with repeated indices may land any of them.
struct Candidates {
    start: Vec<usize>,
    bits: Vec<u64>,
}

impl Candidates {
    fn new(slots: usize, idx: &[u64], value: impl Fn(usize) -> u64) -> Candidates {
        let mut start = vec![0usize; slots + 1];
        for &k in idx {
            start[k as usize + 1] += 1;
        }
        for k in 0..slots {
            start[k + 1] += start[k];
        }
        let mut next = start.clone();
        let mut bits = vec![0u64; idx.len()];
        for (i, &k) in idx.iter().enumerate() {
            bits[next[k as usize]] = value(i);
            next[k as usize] += 1;
        }
        Candidates { start, bits }
    }

    fn of(&self, k: usize) -> &[u64] {
        &self.bits[self.start[k]..self.start[k + 1]]
    }
}

/// An index out of range at the first, a middle and the last position: the error names it
/// and the inputs are intact (`scatter_into`'s target as `target_after_bad_index` says).
#[test]
fn out_of_range_indices() {
    for &n in &[1usize, 33, 4097, 100_000] {
        let src: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let s = upload(&src);
        for pos in [0, n / 2, n - 1] {
            let mut idx: Vec<u32> = (0..n as u32).collect();
            idx[pos] = n as u32 + 5;
            if pos + 1 < n {
                idx[n - 1] = u32::MAX;
            }
            let is = upload(&idx);
            // The error comes from the call or from the first use of its result.
            match s.gather(&is).and_then(|y| y.to_vec()) {
                Err(Error::IndexOutOfBounds { index, len }) => {
                    assert_eq!((index, len), ((n + 5) as u64, n), "gather n={n} pos={pos}")
                }
                other => panic!("gather n={n} pos={pos}: {other:?}"),
            }
            let base = upload(&vec![0f32; n]);
            match s.scatter(&is, &base).and_then(|y| y.to_vec()) {
                Err(Error::IndexOutOfBounds { index, len }) => {
                    assert_eq!((index, len), ((n + 5) as u64, n), "scatter n={n} pos={pos}")
                }
                other => panic!("scatter n={n} pos={pos}: {other:?}"),
            }
            let zeros = vec![0f32; n];
            let mut out = upload(&zeros);
            let r = s.scatter_into(&is, &mut out).and_then(|()| out.to_vec());
            target_after_bad_index(
                r,
                &out,
                &zeros,
                ((n + 5) as u64, n),
                &format!("n={n} {pos}"),
            );
            assert_eq!(s.to_vec().unwrap(), src);
            assert_eq!(is.to_vec().unwrap(), idx);
            assert_eq!(base.to_vec().unwrap(), zeros);
        }
    }
}

#[test]
fn gather_from_an_empty_sequence_fails_for_any_index() {
    let s = upload::<u8>(&[]);
    assert!(matches!(
        s.gather(&upload(&[0u32])).and_then(|y| y.to_vec()),
        Err(Error::IndexOutOfBounds { index: 0, len: 0 })
    ));
    assert_eq!(s.gather(&upload::<u32>(&[])).unwrap().len(), 0);
}

/// Targets larger than the L2 cache (64 MiB and more), where the GPU scatter partitions
/// far-apart writes by the top bits of their indices before writing (a permutation, a
/// transpose, random indices with repeats) and writes near ones directly (reversed): each
/// against the sequential oracle; an index out of range still names the first bad position's
/// index and leaves the inputs intact.
#[test]
fn scatter_into_targets_beyond_the_cache() {
    if small() {
        eprintln!("scatter_into_targets_beyond_the_cache: skipped with DEVSEQ_TEST_SMALL");
        return;
    }
    big_scatter::<f32, u32>((1 << 24) + 3);
    big_scatter::<f32, u64>((1 << 24) + 3);
    big_scatter::<f64, u32>((1 << 23) + 1);
}

fn big_scatter<X: T, I: Index + TryFrom<u64>>(len: usize)
where
    <I as TryFrom<u64>>::Error: std::fmt::Debug,
{
    let what = std::any::type_name::<(X, I)>();
    let mut r = Rng::new(what);
    let base: Vec<X> = draw_vec(&mut r, len, Gen::Special);
    let db = upload(&base);
    let cols = 4096;
    let rows = len / cols;
    let sets: Vec<(&str, Vec<u64>)> = vec![
        ("permutation", perm(&mut r, len)),
        (
            "transpose",
            (0..(rows * cols) as u64)
                .map(|i| (i % cols as u64) * rows as u64 + i / cols as u64)
                .collect(),
        ),
        ("reversed", (0..len as u64).rev().collect()),
        (
            "random, repeated",
            (0..len / 2).map(|_| r.below(len as u64)).collect(),
        ),
    ];
    for (set, idx) in sets {
        let ix: Vec<I> = idx.iter().map(|&i| I::try_from(i).unwrap()).collect();
        // Values that depend on the slot alone where indices repeat (any of them may land),
        // on the position otherwise.
        let repeats = set.starts_with("random");
        let val = |i: usize, k: u64| X::from_index(if repeats { k as usize * 7 + 3 } else { i });
        let vals: Vec<X> = idx.iter().enumerate().map(|(i, &k)| val(i, k)).collect();
        let mut want = base.clone();
        for (i, &k) in idx.iter().enumerate() {
            want[k as usize] = vals[i];
        }
        let got = upload(&vals)
            .scatter(&upload(&ix), &db)
            .unwrap()
            .to_vec()
            .unwrap();
        assert_bits(&got, &want, &format!("scatter {what} {set} len={len}"));
        // The same writes into a target nothing else shares (in place on a GPU).
        let mut out = upload(&base);
        upload(&vals).scatter_into(&upload(&ix), &mut out).unwrap();
        assert_bits(
            &out.to_vec().unwrap(),
            &want,
            &format!("scatter_into {what} {set}"),
        );
    }
    // Out of range in the middle and at the end of a permutation: the middle one is named.
    let mut idx: Vec<u64> = perm(&mut r, len);
    idx[len / 2] = len as u64 + 5;
    idx[len - 1] = u32::MAX as u64;
    let ix: Vec<I> = idx.iter().map(|&i| I::try_from(i).unwrap()).collect();
    let dix = upload(&ix);
    let vals = upload(&vec![X::from_index(1); len]);
    match vals.scatter(&dix, &db).and_then(|y| y.to_vec()) {
        Err(Error::IndexOutOfBounds { index, len: l }) => {
            assert_eq!((index, l), (len as u64 + 5, len), "scatter {what}")
        }
        other => panic!("scatter {what}: {other:?}"),
    }
    assert_bits(&db.to_vec().unwrap(), &base, "base intact");
    assert_eq!(dix.to_vec().unwrap(), ix, "indices intact");
    let mut out = upload(&base);
    let r = vals
        .scatter_into(&dix, &mut out)
        .and_then(|()| out.to_vec());
    target_after_bad_index(r, &out, &base, (len as u64 + 5, len), what);
    assert_eq!(
        dix.to_vec().unwrap(),
        ix,
        "indices intact after scatter_into"
    );
}

/// `Err(IndexOutOfBounds { index: 7, len: 3 })`.
fn is_oob<R: std::fmt::Debug>(r: devseq::Result<R>, what: &str) {
    assert!(
        matches!(r, Err(Error::IndexOutOfBounds { index: 7, len: 3 })),
        "{what}: want IndexOutOfBounds {{ index: 7, len: 3 }}, got {r:?}"
    );
}

/// A bad index's error reaches every use of the result, however late: a GPU gather or scatter
/// does not wait for its kernel, so the error may come from the call or from the first use, and
/// then from every later one; `dev.synchronize()` is not disturbed by a result not used yet;
/// the inputs stay intact.
#[test]
fn bounds_errors_reach_every_use() {
    let d = dev();
    let xs = upload(&[1.0f32, 2.0, 3.0]);
    let bad = upload(&[0u32, 7, 1]);
    let base = upload(&[0.5f32, 0.5, 0.5]);
    for what in ["gather", "scatter"] {
        let r = match what {
            "gather" => xs.gather(&bad),
            _ => xs.scatter(&bad, &base),
        };
        let Ok(ys) = r else {
            is_oob(r, what);
            continue;
        };
        is_oob(ys.to_vec(), &format!("{what}: to_vec"));
        is_oob(ys.to_vec(), &format!("{what}: to_vec again"));
        is_oob(ys.reduce(devseq::Op::Add), &format!("{what}: reduce"));
        is_oob(
            ys.map(|y| y + 1.0).and_then(|z| z.to_vec()),
            &format!("{what}: a map of it"),
        );
        is_oob(ys.copy(), &format!("{what}: copy"));
        is_oob(ys.sort().and_then(|z| z.to_vec()), &format!("{what}: sort"));
        is_oob(
            xs.gather(&ys.cast::<u32>().unwrap())
                .and_then(|z| z.to_vec()),
            &format!("{what}: its cast as indices"),
        );
        d.synchronize().unwrap();
    }
    // Not used before the synchronization: the result keeps its error for its first use.
    if let Ok(ys) = xs.gather(&bad) {
        d.synchronize().unwrap();
        is_oob(ys.to_vec(), "to_vec after synchronize");
    }
    assert_eq!(xs.to_vec().unwrap(), [1.0, 2.0, 3.0]);
    assert_eq!(bad.to_vec().unwrap(), [0, 7, 1]);
    assert_eq!(base.to_vec().unwrap(), [0.5, 0.5, 0.5]);
}

/// Many results with and without bad indices, some kept, most dropped unused (more than the
/// 512 mailboxes a pool chunk holds, so that dropped ones are cleaned and lent again): every
/// kept one gives its own answer, and the calls after them are not disturbed.
#[test]
fn bounds_checks_left_unread() {
    let d = dev();
    let xs = upload(&[1.0f32, 2.0, 3.0]);
    let bad = upload(&[0u32, 7, 1]);
    let good = upload(&[2u32, 0, 1]);
    let base = upload(&[0.5f32, 0.5, 0.5]);
    let mut kept = Vec::new();
    for k in 0..1300 {
        let (g, s) = if k % 3 == 0 {
            (xs.gather(&bad), xs.scatter(&bad, &base))
        } else {
            (xs.gather(&good), xs.scatter(&good, &base))
        };
        if k % 50 < 2 {
            kept.push((k % 3 == 0, g, s));
        }
    }
    for (bad_one, g, s) in kept {
        let (g, s) = (g.and_then(|y| y.to_vec()), s.and_then(|y| y.to_vec()));
        if bad_one {
            is_oob(g, "kept gather");
            is_oob(s, "kept scatter");
        } else {
            assert_eq!(g.unwrap(), [3.0, 1.0, 2.0]);
            assert_eq!(s.unwrap(), [2.0, 3.0, 1.0]);
        }
    }
    d.synchronize().unwrap();
    for _ in 0..600 {
        let _ = xs.gather(&bad);
    }
    assert_eq!(xs.gather(&good).unwrap().to_vec().unwrap(), [3.0, 1.0, 2.0]);
    assert_eq!(
        xs.scatter(&good, &base).unwrap().to_vec().unwrap(),
        [2.0, 3.0, 1.0]
    );
    d.synchronize().unwrap();
}

/// Targets on both sides of the size up to which the GPU copies the base and scatters in one
/// launch (1 MiB): stored and lazy bases, fewer values than slots and more (repeats), an index
/// out of range named, the inputs intact.
fn scatter_around_one_launch<X: T>() {
    let mut r = Rng::new(&format!("scatter base {}", std::any::type_name::<X>()));
    let edge = (1 << 20) / std::mem::size_of::<X>();
    let lens: Vec<usize> = if small() {
        vec![1, 33, 4097]
    } else {
        vec![1, 33, 4097, edge, edge + 1]
    };
    for len in lens {
        let base: Vec<X> = draw_vec(&mut r, len, Gen::Special);
        let db = upload(&base);
        let fill = X::from_index(9);
        for n in [len / 3 + 1, 3 * len] {
            let idx: Vec<u32> = (0..n).map(|_| r.below(len as u64) as u32).collect();
            // The value of a slot alone, so that any of its repeats may land.
            let vals: Vec<X> = idx
                .iter()
                .map(|&k| X::from_index(k as usize * 7 + 3))
                .collect();
            let (dv, di) = (upload(&vals), upload(&idx));
            for (what, b, want_base) in [
                ("stored", db.clone(), base.clone()),
                (
                    "filled",
                    DeviceSeq::filled(&dev(), fill, len).unwrap(),
                    vec![fill; len],
                ),
            ] {
                let mut want = want_base;
                for (i, &k) in idx.iter().enumerate() {
                    want[k as usize] = vals[i];
                }
                let got = dv.scatter(&di, &b).unwrap().to_vec().unwrap();
                assert_bits(&got, &want, &format!("scatter {what} base n={n} len={len}"));
            }
            let mut bad = idx.clone();
            bad[n / 2] = len as u32 + 2;
            if n > 2 {
                bad[n - 1] = u32::MAX;
            }
            match dv.scatter(&upload(&bad), &db).and_then(|y| y.to_vec()) {
                Err(Error::IndexOutOfBounds { index, len: l }) => {
                    assert_eq!(
                        (index, l),
                        (len as u64 + 2, len),
                        "bad index n={n} len={len}"
                    )
                }
                other => panic!("bad index n={n} len={len}: {other:?}"),
            }
            assert_bits(&db.to_vec().unwrap(), &base, "base intact");
            assert_bits(&dv.to_vec().unwrap(), &vals, "values intact");
        }
    }
}

#[test]
fn scatter_around_one_launch_f32() {
    scatter_around_one_launch::<f32>()
}
#[test]
fn scatter_around_one_launch_f64() {
    scatter_around_one_launch::<f64>()
}
#[test]
fn scatter_around_one_launch_u8() {
    scatter_around_one_launch::<u8>()
}

/// `scatter_into` against the sequential oracle at the edge sizes, with u32 and u64 indices: into
/// a stored target nothing else shares (written in place on a GPU), into one that a clone and a
/// slice share (which keep their elements), into a lazy one, and twice into the same target
/// (the second write over the first, each with its pending bounds check on a GPU).
fn scatter_into_targets<X: T>() {
    let mut r = Rng::new(&format!("scatter_into {}", std::any::type_name::<X>()));
    for &n in sizes() {
        let len = n.max(1);
        let base: Vec<X> = draw_vec(&mut r, len, Gen::Special);
        for (what, idx) in index_sets(&mut r, n, len) {
            // Values that depend on the slot alone, so that any repeat may land.
            let vals = |m: usize| -> Vec<X> {
                idx.iter()
                    .map(|&k| X::from_index(k as usize * m + 3))
                    .collect()
            };
            let (v1, v2) = (vals(7), vals(5));
            let write = |from: &[X], vs: &[X]| {
                let mut w = from.to_vec();
                for (i, &k) in idx.iter().enumerate() {
                    w[k as usize] = vs[i];
                }
                w
            };
            let (want1, want2) = (write(&base, &v1), write(&write(&base, &v1), &v2));
            let i32s: Vec<u32> = idx.iter().map(|&k| k as u32).collect();
            let (d1, d2) = (upload(&v1), upload(&v2));
            for (iw, di) in [
                ("u32", upload(&i32s).cast::<u64>().unwrap()),
                ("u64", upload(&idx)),
            ] {
                let ctx = format!("{what} n={n} {iw}");
                let mut alone = upload(&base);
                d1.scatter_into(&di, &mut alone).unwrap();
                assert_bits(&alone.to_vec().unwrap(), &want1, &format!("alone {ctx}"));
                d2.scatter_into(&di, &mut alone).unwrap();
                assert_bits(&alone.to_vec().unwrap(), &want2, &format!("twice {ctx}"));

                let mut shared = upload(&base);
                let (clone, part) = (shared.clone(), shared.slice(len / 2..));
                d1.scatter_into(&di, &mut shared).unwrap();
                assert_bits(&shared.to_vec().unwrap(), &want1, &format!("shared {ctx}"));
                assert_bits(
                    &clone.to_vec().unwrap(),
                    &base,
                    &format!("clone kept {ctx}"),
                );
                assert_bits(
                    &part.to_vec().unwrap(),
                    &base[len / 2..],
                    &format!("slice {ctx}"),
                );

                let fill = X::from_index(11);
                let mut lazy = DeviceSeq::filled(&dev(), fill, len).unwrap();
                d1.scatter_into(&di, &mut lazy).unwrap();
                let want = write(&vec![fill; len], &v1);
                assert_bits(&lazy.to_vec().unwrap(), &want, &format!("lazy {ctx}"));
            }
            // The u32 indices themselves (not a cast) into a target alone.
            let mut alone = upload(&base);
            d1.scatter_into(&upload(&i32s), &mut alone).unwrap();
            assert_bits(
                &alone.to_vec().unwrap(),
                &want1,
                &format!("u32 {what} n={n}"),
            );
        }
    }
}
for_types!(scatter_into_types, scatter_into_targets);

/// After `scatter_into` with a bad index (`r`: the call, then the target's first use): the
/// error names `want` (index, target length); on a GPU, which writes into a target nothing else
/// shares, every later use of the target returns it too; on the host, whose call reports it,
/// the target keeps its elements `base`.
fn target_after_bad_index<X: T>(
    r: devseq::Result<Vec<X>>,
    out: &DeviceSeq<X>,
    base: &[X],
    want: (u64, usize),
    what: &str,
) {
    let oob = |r: devseq::Result<Vec<X>>, k: &str| match r {
        Err(Error::IndexOutOfBounds { index, len }) => {
            assert_eq!((index, len), want, "scatter_into {what}: {k}")
        }
        other => panic!("scatter_into {what}: {k}: {other:?}"),
    };
    oob(r, "the call or first use");
    if dev().is_cuda() {
        oob(out.to_vec(), "a later use");
        oob(out.copy().and_then(|c| c.to_vec()), "a copy");
    } else {
        assert_bits(
            &out.to_vec().unwrap(),
            base,
            &format!("{what}: target kept"),
        );
    }
}

/// `scatter_into`'s errors beside a bad index (`out_of_range_indices`): lengths that do not
/// match leave the target as it was; a target that held an error keeps it.
#[test]
fn scatter_into_errors() {
    for &n in &[1usize, 33, 4097, 100_000] {
        let s = upload(&(0..n).map(|i| i as f32).collect::<Vec<_>>());
        let base = vec![0.5f32; n];
        let mut out = upload(&base);
        let short = upload(&vec![0u32; n + 1]);
        assert!(matches!(
            s.scatter_into(&short, &mut out),
            Err(Error::LengthMismatch { .. })
        ));
        assert_eq!(out.to_vec().unwrap(), base, "n={n}: target intact");
    }
    // A target that holds an error (a gather's bad index) keeps it through a scatter into it.
    let xs = upload(&[1.0f32, 2.0, 3.0]);
    if let Ok(mut held) = xs.gather(&upload(&[0u32, 7, 1])) {
        let r = xs.scatter_into(&upload(&[2u32, 1, 0]), &mut held);
        is_oob(
            r.and_then(|()| held.to_vec()),
            "scatter_into a target holding an error",
        );
    }
}

/// Many writes into one target that is never read in between (more than the checks a GPU buffer
/// holds unread, 64): the target ends as the writes in order make it; a bad index early among
/// them stays the target's error on a GPU (whose writes went into it), while on the host its
/// call returned the error and the later writes apply.
#[test]
fn scatter_into_many_times() {
    let len = 1000usize;
    let mut out = upload(&vec![0u32; len]);
    let mut want = vec![0u32; len];
    for round in 0..200u32 {
        let idx: Vec<u32> = (0..10)
            .map(|j| (round * 37 + j * 101) % len as u32)
            .collect();
        let vals: Vec<u32> = idx.iter().map(|&k| k * 1000 + round).collect();
        upload(&vals).scatter_into(&upload(&idx), &mut out).unwrap();
        for (i, &k) in idx.iter().enumerate() {
            want[k as usize] = vals[i];
        }
    }
    assert_eq!(out.to_vec().unwrap(), want, "200 writes");
    let mut out = upload(&[0u32; 3]);
    let r = upload(&[5u32]).scatter_into(&upload(&[7u32]), &mut out);
    for round in 0..150u32 {
        upload(&[round])
            .scatter_into(&upload(&[round % 3]), &mut out)
            .unwrap();
    }
    if dev().is_cuda() {
        is_oob(
            r.and_then(|()| out.to_vec()),
            "an early bad index, 150 writes after",
        );
    } else {
        is_oob(r, "the bad call");
        assert_eq!(out.to_vec().unwrap(), [147, 148, 149]);
    }
}

/// `scatter_into` one target many times before it is read, with bad indices in some of the
/// writes (the GPU's writes share one bounds check, which notes the index itself): the error
/// names the first bad write's first bad index (by position, not by value), from stored and
/// lazy indices, u32 and u64, and the length of the target that write saw (a slice of the
/// target taken between the writes); the calls that come before a bad one apply.
#[test]
fn scatter_into_errors_across_writes() {
    let d = dev();
    let first_error = |results: Vec<devseq::Result<()>>, out: &DeviceSeq<u32>, what: &str| {
        let r = results
            .into_iter()
            .find(|r| r.is_err())
            .unwrap_or_else(|| out.to_vec().map(drop));
        match r {
            Err(Error::IndexOutOfBounds { index, len }) => (index, len),
            other => panic!("{what}: {other:?}"),
        }
    };
    for n in [1usize, 33, 4097, 100_000] {
        let len = n + 10;
        let vals = upload(&(0..n as u32).collect::<Vec<_>>());
        // Good, then bad at positions n / 2 (index len + 7) and n - 1 (index len), then a bad
        // write whose bad index is smaller but later.
        let good: Vec<u32> = (0..n as u32).collect();
        let mut bad = good.clone();
        bad[n - 1] = len as u32;
        bad[n / 2] = len as u32 + 7;
        let later = vec![len as u32 + 1; n];
        for lazy in [false, true] {
            let what = format!("n={n} lazy={lazy}");
            let ix = |v: &[u32]| {
                let s = upload(v);
                if lazy {
                    s.map(|k| k + 0u32).unwrap()
                } else {
                    s
                }
            };
            let mut out = upload(&vec![0u32; len]);
            let mut rs = Vec::new();
            for w in [&good, &good, &bad, &good, &later] {
                rs.push(vals.scatter_into(&ix(w), &mut out));
            }
            assert_eq!(
                first_error(rs, &out, &what),
                (len as u64 + 7, len),
                "{what}"
            );
            // u64 indices, the bad write first.
            let mut out = upload(&vec![0u32; len]);
            let wide: Vec<u64> = (bad.iter().zip(&good))
                .map(|(&b, &g)| {
                    if b == g {
                        g as u64
                    } else {
                        b as u64 + (1 << 33)
                    }
                })
                .collect();
            let rs = vec![
                vals.scatter_into(&upload(&wide), &mut out),
                vals.scatter_into(&ix(&good), &mut out),
            ];
            assert_eq!(
                first_error(rs, &out, &what),
                ((1 << 33) + len as u64 + 7, len),
                "{what} u64"
            );
        }
        // Every index of the first write bad (every thread takes the check's lock): the
        // first position's.
        let mut out = upload(&vec![0u32; len]);
        let all: Vec<u32> = (0..n as u32).map(|i| len as u32 + 3 * i + 1).collect();
        let rs = vec![
            vals.scatter_into(&upload(&all), &mut out),
            vals.scatter_into(&upload(&later), &mut out),
        ];
        assert_eq!(
            first_error(rs, &out, "all bad"),
            (len as u64 + 1, len),
            "n={n} all bad"
        );
        // A write into a slice of the target, the target itself let go: the slice's length.
        let mut out = upload(&vec![0u32; len]);
        vals.scatter_into(&upload(&good), &mut out).unwrap();
        let mut part = out.slice(3..n + 3);
        drop(out);
        let mut idx = good.clone();
        idx[n - 1] = n as u32;
        let rs = vec![vals.scatter_into(&upload(&idx), &mut part)];
        assert_eq!(
            first_error(rs, &part, "a slice"),
            (n as u64, n),
            "n={n} a slice"
        );
        // Good writes after a read: the target reads as the writes make it.
        let mut out = upload(&vec![0u32; len]);
        for round in 0..3u32 {
            let v = upload(&vec![round; n]);
            v.scatter_into(&upload(&good), &mut out).unwrap();
            let mut want = vec![round; n];
            want.extend(std::iter::repeat_n(0, 10));
            assert_eq!(out.to_vec().unwrap(), want, "n={n} round {round}");
        }
    }
    let _ = d;
}
