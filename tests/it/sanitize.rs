//! Every kernel family once, on small inputs, checked against plain loops: quick enough to
//! run under compute-sanitizer's racecheck, which is too slow for the whole suite
//! (`compute-sanitizer --tool racecheck tests/it sanitize::`).

use crate::common::*;
use crate::search::{SET_OPS, SetOp, set_call, set_call_by_key, set_oracle_by};
use crate::segment::{LAZY_ROOM, check_lazy_segments};
use devseq::{DeviceSeq, Op};

#[test]
fn every_kernel_family_once() {
    let mut r = Rng::new("sanitize");
    let n = 20_011; // several tiles of every single-pass kernel, and a partial last one
    let xs: Vec<i32> = (0..n).map(|_| r.below(1000) as i32 - 500).collect();
    let fl = flags(&mut r, n, 0.01);
    let s = upload(&xs);
    let f = upload(&fl);
    let d = dev();

    let m = s.map(|x| x * 3 + 1).unwrap().to_vec().unwrap();
    assert_eq!(m, xs.iter().map(|x| x * 3 + 1).collect::<Vec<_>>());
    let z = s
        .zip_map(&s.slice(..), |x, y| x - y)
        .unwrap()
        .to_vec()
        .unwrap();
    assert!(z.iter().all(|&v| v == 0));
    let fs = s.cast::<f32>().unwrap();
    let fm = fs.map(|x| x * 0.5 + 1.0).unwrap().to_vec().unwrap();
    assert_eq!(
        fm,
        xs.iter().map(|&x| x as f32 * 0.5 + 1.0).collect::<Vec<_>>()
    );
    assert_eq!(
        DeviceSeq::<u64>::sequence(&d, n).unwrap().to_vec().unwrap()[n - 1],
        n as u64 - 1
    );
    assert_eq!(
        DeviceSeq::filled(&d, 7u64, n).unwrap().to_vec().unwrap()[n / 2],
        7
    );

    assert_eq!(s.reduce(Op::Add).unwrap(), xs.iter().sum::<i32>());
    let inc = s.inclusive_scan(Op::Add).unwrap().to_vec().unwrap();
    assert_eq!(inc[n - 1], xs.iter().sum::<i32>());
    let exc = s.exclusive_scan(5, Op::Max).unwrap().to_vec().unwrap();
    assert_eq!(exc[n - 1], xs[..n - 1].iter().fold(5, |a, &b| a.max(b)));
    let seg = s
        .segmented_inclusive_scan(&f, Op::Add)
        .unwrap()
        .to_vec()
        .unwrap();
    let segx = s
        .segmented_exclusive_scan(&f, 0, Op::Add)
        .unwrap()
        .to_vec()
        .unwrap();
    let red = s.segmented_reduce(&f, Op::Add).unwrap().to_vec().unwrap();
    let mut acc = 0;
    let mut sums = Vec::new();
    for i in 0..n {
        if i == 0 || fl[i] != 0 {
            if i > 0 {
                sums.push(acc);
            }
            acc = 0;
        }
        assert_eq!(segx[i], acc, "segmented exclusive at {i}");
        acc += xs[i];
        assert_eq!(seg[i], acc, "segmented inclusive at {i}");
    }
    sums.push(acc);
    assert_eq!(red, sums);
    let kept = s.compact(&f).unwrap().to_vec().unwrap();
    assert_eq!(
        kept,
        xs.iter()
            .zip(&fl)
            .filter(|(_, f)| **f != 0)
            .map(|(x, _)| *x)
            .collect::<Vec<_>>()
    );
    assert_eq!(
        f.nonzero_indices::<u32>().unwrap().len(),
        fl.iter().filter(|&&v| v != 0).count()
    );
    let heads = s.sort().unwrap().head_flags().unwrap().to_vec().unwrap();
    let mut sorted = xs.clone();
    sorted.sort();
    let mut uniq = sorted.clone();
    uniq.dedup();
    assert_eq!(heads.iter().filter(|&&h| h).count(), uniq.len());
    // Compaction with flags computed from its own staged values (head flags, a comparison).
    assert_eq!(s.sort().unwrap().dedup().unwrap().to_vec().unwrap(), uniq);
    let neg = s
        .compact(&s.map(|x| x.lt(0)).unwrap())
        .unwrap()
        .to_vec()
        .unwrap();
    assert_eq!(
        neg,
        xs.iter().copied().filter(|&x| x < 0).collect::<Vec<_>>()
    );

    let idx: Vec<u32> = (0..n).map(|_| r.below(n as u64) as u32).collect();
    let is = upload(&idx);
    let g = s.gather(&is).unwrap().to_vec().unwrap();
    assert_eq!(g, idx.iter().map(|&i| xs[i as usize]).collect::<Vec<_>>());
    let perm: Vec<u32> = s.argsort::<u32>().unwrap().to_vec().unwrap();
    let sc = s.scatter(&upload(&perm), &s).unwrap().to_vec().unwrap();
    for (k, &p) in perm.iter().enumerate() {
        assert_eq!(sc[p as usize], xs[k]);
    }
    // The same in place, into a target nothing else holds, twice (one check for both).
    let mut into = upload(&vec![0i32; n]);
    s.scatter_into(&upload(&perm), &mut into).unwrap();
    s.scatter_into(&upload(&perm), &mut into).unwrap();
    assert_eq!(into.to_vec().unwrap(), sc);
    // Then every index bad, twice: every thread notes one and takes the check's lock.
    let far: Vec<u32> = (0..n as u32).map(|i| n as u32 + i).collect();
    let r1 = s.scatter_into(&upload(&far), &mut into);
    let r2 = s.scatter_into(&upload(&far), &mut into);
    match r1.and(r2).and_then(|()| into.to_vec()) {
        Err(devseq::Error::IndexOutOfBounds { index, len }) => {
            assert_eq!((index, len), (n as u64, n))
        }
        other => panic!("scatter_into, every index bad: {other:?}"),
    }
    let (k2, v2) = s.sort_pairs(&is).unwrap();
    assert_eq!(k2.to_vec().unwrap(), sorted);
    assert_eq!(v2.len(), n);
    let slots = 97usize;
    let small: Vec<u32> = idx.iter().map(|&i| i % slots as u32).collect();
    let comb = s
        .scatter_combine(&upload(&small), &upload(&vec![0i32; slots]), Op::Add)
        .unwrap();
    let mut want = vec![0i32; slots];
    for (x, &k) in xs.iter().zip(&small) {
        want[k as usize] += x;
    }
    assert_eq!(comb.to_vec().unwrap(), want);
    let h = s.histogram(50, -500, 500).unwrap().to_vec().unwrap();
    assert_eq!(h.iter().sum::<u64>(), n as u64);
    let hf = fs.sort().unwrap().to_vec().unwrap();
    assert!(hf.windows(2).all(|w| w[0] <= w[1]));

    // Sorts of one tile (one block, every pass in shared memory): pairs, descending; and a
    // scatter_combine of one tile, sorted and combined in one block (which copies its base),
    // with good indices and with one out of range.
    let m = 3001;
    let (k1, v1) = s.slice(..m).sort_pairs(&is.slice(..m)).unwrap();
    let mut pairs: Vec<(i32, u32)> = xs[..m].iter().copied().zip(idx[..m].to_vec()).collect();
    pairs.sort_by_key(|p| p.0);
    assert_eq!(
        k1.to_vec().unwrap(),
        pairs.iter().map(|p| p.0).collect::<Vec<_>>()
    );
    assert_eq!(
        v1.to_vec().unwrap(),
        pairs.iter().map(|p| p.1).collect::<Vec<_>>()
    );
    let mut desc = xs[..m].to_vec();
    desc.sort_by(|a, b| b.cmp(a));
    assert_eq!(
        s.slice(..m).sort_descending().unwrap().to_vec().unwrap(),
        desc
    );
    let comb = s
        .slice(..m)
        .scatter_combine(&upload(&small[..m]), &upload(&vec![0i32; slots]), Op::Add)
        .unwrap();
    let mut want = vec![0i32; slots];
    for (x, &k) in xs[..m].iter().zip(&small[..m]) {
        want[k as usize] += x;
    }
    assert_eq!(comb.to_vec().unwrap(), want);
    let mut bad = small[..m].to_vec();
    bad[m / 2] = slots as u32;
    match s
        .slice(..m)
        .scatter_combine(&upload(&bad), &upload(&vec![0i32; slots]), Op::Add)
        .and_then(|c| c.to_vec())
    {
        Err(devseq::Error::IndexOutOfBounds { index, len }) => {
            assert_eq!((index, len), (slots as u64, slots))
        }
        other => panic!("scatter_combine of one tile, an index bad: {other:?}"),
    }
}

/// The larger tiles of the scans and segmented kernels: small inputs (the two tests above) take
/// tiles of 2 rounds; scans from 512 KB of elements 8 rounds, from 8 MB 16; the segmented scans
/// and reductions of 4- and 8-byte values from 2 MB 8.
#[test]
fn scan_tiles_of_every_size() {
    let mut r = Rng::new("sanitize scan tiles");
    let xs: Vec<i32> = (0..131_073).map(|_| r.below(1000) as i32 - 500).collect();
    let got = upload(&xs)
        .inclusive_scan(Op::Add)
        .unwrap()
        .to_vec()
        .unwrap();
    let mut acc = 0;
    for (i, x) in xs.iter().enumerate() {
        acc += x;
        assert_eq!(got[i], acc, "8 rounds at {i}");
    }
    let n = 524_289;
    let zs: Vec<i32> = (0..n).map(|_| r.below(1000) as i32 - 500).collect();
    let keys: Vec<u32> = (0..n as u32).map(|i| i / 3000).collect();
    let heads: Vec<u8> = (0..n).map(|i| (i % 3000 == 0) as u8).collect();
    let (zd, hd) = (upload(&zs), upload(&heads));
    let seg = zd
        .segmented_inclusive_scan(&hd, Op::Add)
        .unwrap()
        .to_vec()
        .unwrap();
    let red = zd.segmented_reduce(&hd, Op::Add).unwrap().to_vec().unwrap();
    let (_, byk) = upload(&keys).reduce_by_key(&zd, Op::Add).unwrap();
    let byk = byk.to_vec().unwrap();
    let (mut acc, mut sums) = (0, Vec::new());
    for i in 0..n {
        if i % 3000 == 0 && i > 0 {
            sums.push(acc);
            acc = 0;
        }
        acc += zs[i];
        assert_eq!(seg[i], acc, "segmented scan, 8 rounds, at {i}");
    }
    sums.push(acc);
    assert_eq!(red, sums, "segmented reduce, 8 rounds");
    assert_eq!(byk, sums, "reduce_by_key, 8 rounds");
    let ys: Vec<i64> = (0..1_048_577).map(|_| r.below(1000) as i64 - 500).collect();
    let got = upload(&ys)
        .exclusive_scan(7, Op::Add)
        .unwrap()
        .to_vec()
        .unwrap();
    let mut acc = 7;
    for (i, y) in ys.iter().enumerate() {
        assert_eq!(got[i], acc, "16 rounds at {i}");
        acc += y;
    }
}

/// The paths that read lazy sources, once each: staged into shared memory (scan), read back
/// before a tile (segmented scan's lazy flags), computed in rounds (compaction), at random
/// places (gather), in a sort's first pass, and through a fused reduction.
#[test]
fn lazy_sources_once() {
    let mut r = Rng::new("sanitize lazy");
    let n = 20_011;
    let xs: Vec<i32> = (0..n).map(|_| r.below(1000) as i32 - 500).collect();
    let s = upload(&xs);
    let d = dev();
    let lazy = s.map(|x| x * 3 + 1).unwrap();
    let want: Vec<i32> = xs.iter().map(|x| x * 3 + 1).collect();

    let inc = lazy.inclusive_scan(Op::Add).unwrap().to_vec().unwrap();
    assert_eq!(inc[n - 1], want.iter().sum::<i32>());
    let flags = DeviceSeq::<u32>::sequence(&d, n)
        .unwrap()
        .map(|i| (i % 997).eq(0))
        .unwrap();
    let seg = lazy
        .segmented_inclusive_scan(&flags, Op::Add)
        .unwrap()
        .to_vec()
        .unwrap();
    let mut acc = 0;
    for i in 0..n {
        if i % 997 == 0 {
            acc = 0;
        }
        acc += want[i];
        assert_eq!(seg[i], acc, "segmented scan of lazy inputs at {i}");
    }
    let kept = lazy
        .compact(&lazy.map(|x| x.gt(0)).unwrap())
        .unwrap()
        .to_vec()
        .unwrap();
    assert_eq!(
        kept,
        want.iter().copied().filter(|&x| x > 0).collect::<Vec<_>>()
    );
    let idx = DeviceSeq::<u32>::sequence(&d, n)
        .unwrap()
        .map(|i| (i * 7919) % n as u32)
        .unwrap();
    let g = lazy.gather(&idx).unwrap().to_vec().unwrap();
    assert_eq!(g[5], want[(5 * 7919) % n]);
    let sorted = lazy.sort().unwrap().to_vec().unwrap();
    let mut w = want.clone();
    w.sort();
    assert_eq!(sorted, w);
    assert_eq!(lazy.reduce(Op::Max).unwrap(), *want.iter().max().unwrap());
}

/// The custom-operator kernels once each: the chunk totals with their last-block fold (reduce)
/// and their prefixes (scan), and the three scan modes, on a non-commutative pair operator, and
/// the reduction of a commutative operator (which folds in any order) on a wider item, over
/// more chunks than one block folds at a time.
#[test]
fn custom_operators_once() {
    let n = 300_001usize;
    let mut r = Rng::new("sanitize custom");
    let xs: Vec<(u32, u32)> = (0..n)
        .map(|_| (r.next() as u32 | 1, r.next() as u32))
        .collect();
    let s = DeviceSeq::from_slice(&dev(), &xs).unwrap();
    // Affine maps x -> a x + b composed in order (wrapping).
    let f =
        |(a1, b1): (devseq::Expr<u32>, devseq::Expr<u32>),
         (a2, b2): (devseq::Expr<u32>, devseq::Expr<u32>)| { (a1 * a2, b1 * a2 + b2) };
    let h = |(a1, b1): (u32, u32), (a2, b2): (u32, u32)| {
        (a1.wrapping_mul(a2), b1.wrapping_mul(a2).wrapping_add(b2))
    };
    let mut want = Vec::with_capacity(n);
    let mut acc = xs[0];
    want.push(acc);
    for &x in &xs[1..] {
        acc = h(acc, x);
        want.push(acc);
    }
    assert_eq!(s.reduce_with(f).unwrap(), Some(acc));
    assert_eq!(s.inclusive_scan_with(f).unwrap().to_vec().unwrap(), want);
    let ex = s.exclusive_scan_with((1, 0), f).unwrap().to_vec().unwrap();
    assert_eq!(ex[0], (1, 0));
    assert_eq!(&ex[1..], &want[..n - 1]);
    let flags: Vec<u8> = (0..n).map(|i| (i % 1000 == 7) as u8).collect();
    let seg = s
        .segmented_exclusive_scan_with(&upload(&flags), (1, 0), f)
        .unwrap()
        .to_vec()
        .unwrap();
    let mut q = (1u32, 0u32);
    for i in 0..n {
        if i == 0 || flags[i] != 0 {
            q = (1, 0);
        }
        assert_eq!(seg[i], q, "segmented exclusive at {i}");
        q = h(q, xs[i]);
    }
    // A commutative combiner (component-wise built-in operations): the reduction that folds
    // in any order; its scan, the same kernels as above.
    type W = devseq::Expr<u64>;
    let wide: Vec<(u64, u64, u64)> = xs
        .iter()
        .map(|&(a, b)| (a as u64, b as u64, (a ^ b) as u64 * 3))
        .collect();
    let w = DeviceSeq::from_slice(&dev(), &wide).unwrap();
    let g = |(a, b, c): (W, W, W), (d, e, f): (W, W, W)| (a + d, b ^ e, c.max(f));
    let gh = |(a, b, c): (u64, u64, u64), (d, e, f): (u64, u64, u64)| {
        (a.wrapping_add(d), b ^ e, c.max(f))
    };
    let mut acc = wide[0];
    let mut want = vec![acc];
    for &x in &wide[1..] {
        acc = gh(acc, x);
        want.push(acc);
    }
    assert_eq!(w.reduce_with(g).unwrap(), Some(acc));
    assert_eq!(w.inclusive_scan_with(g).unwrap().to_vec().unwrap(), want);
}

/// The search kernel (both bounds, both position types), merges, the set operations,
/// sort_descending and what top_k composes (searches, scatters, fused histograms of lazy bits, compaction, sort).
#[test]
fn searching_once() {
    let mut r = Rng::new("sanitize-search");
    let n = 9_001;
    let mut hay: Vec<u32> = (0..n).map(|_| r.below(5000) as u32).collect();
    hay.sort();
    let needles: Vec<u32> = (0..n / 2).map(|_| r.below(5200) as u32).collect();
    let (h, q) = (upload(&hay), upload(&needles));
    let lb = h.lower_bound::<u32>(&q).unwrap().to_vec().unwrap();
    let ub = h.upper_bound::<u64>(&q).unwrap().to_vec().unwrap();
    for (i, &x) in needles.iter().enumerate() {
        assert_eq!(lb[i] as usize, hay.partition_point(|&y| y < x));
        assert_eq!(ub[i] as usize, hay.partition_point(|&y| y <= x));
    }
    let mut sq = needles.clone();
    sq.sort();
    let merged = h.merge(&upload(&sq)).unwrap().to_vec().unwrap();
    let mut want = [hay.clone(), sq.clone()].concat();
    want.sort();
    assert_eq!(merged, want);
    // merge_pairs with a tuple value (one launch a component, keys with the first).
    let av: Vec<(u32, f64)> = (0..n as u32).map(|i| (i, i as f64 * 0.5)).collect();
    let bv: Vec<(u32, f64)> = (0..sq.len() as u32)
        .map(|j| (n as u32 + j, -(j as f64)))
        .collect();
    let (mk, mv) = h
        .merge_pairs(
            &DeviceSeq::from_slice(&dev(), &av).unwrap(),
            &upload(&sq),
            &DeviceSeq::from_slice(&dev(), &bv).unwrap(),
        )
        .unwrap();
    let mut pairs: Vec<(u32, u32, usize)> =
        hay.iter().enumerate().map(|(i, &k)| (k, 0, i)).collect();
    pairs.extend(sq.iter().enumerate().map(|(j, &k)| (k, 1, j)));
    pairs.sort();
    assert_eq!(
        mk.to_vec().unwrap(),
        pairs.iter().map(|p| p.0).collect::<Vec<_>>()
    );
    let want_v: Vec<(u32, f64)> = pairs
        .iter()
        .map(|&(_, side, i)| if side == 0 { av[i] } else { bv[i] })
        .collect();
    assert_eq!(mv.to_vec().unwrap(), want_v);
    // The set operations (one pass over merge path each, two tiles; keys with duplicates), and
    // one with a tuple value (a launch a component).
    let sqs = upload(&sq);
    for op in SET_OPS {
        let (wk, _) = set_oracle_by(op, &hay, &sq, u32::cmp);
        assert_eq!(set_call(op, &h, &sqs).to_vec().unwrap(), wk, "{op:?}");
    }
    let (wk, wf) = set_oracle_by(SetOp::Symmetric, &hay, &sq, u32::cmp);
    let (sk, sv) = set_call_by_key(
        SetOp::Symmetric,
        &h,
        &DeviceSeq::from_slice(&dev(), &av).unwrap(),
        &sqs,
        &DeviceSeq::from_slice(&dev(), &bv).unwrap(),
    );
    assert_eq!(sk.to_vec().unwrap(), wk);
    let want_v: Vec<(u32, f64)> = wf
        .iter()
        .map(|&f| {
            if f < n as u32 {
                av[f as usize]
            } else {
                bv[f as usize - n]
            }
        })
        .collect();
    assert_eq!(sv.to_vec().unwrap(), want_v);
    let xs: Vec<f32> = (0..n)
        .map(|_| r.below(100_000) as f32 * 0.01 - 500.0)
        .collect();
    let f = upload(&xs);
    let mut desc = xs.clone();
    desc.sort_by(|a, b| b.total_cmp(a));
    let got = f.sort_descending().unwrap().to_vec().unwrap();
    assert_eq!(got, desc);
    let (top, _) = f.top_k::<u32>(100).unwrap();
    assert_eq!(top.to_vec().unwrap(), desc[..100]);
}

/// `segmented_reduce` of a lazy sequence with more segments than its first output holds
/// (4 MiB: 2^19 8-byte values) though its first 2^19 flags promised few: the first pass writes
/// only those that fit, the second all.
#[test]
fn segments_past_the_first_output_once() {
    check_lazy_segments(
        &dev(),
        "past the first output",
        2 * LAZY_ROOM,
        1000,
        1,
        Op::Add,
    );
}

/// Narrow integers (combined as 32-bit values in scans, reductions and segmented scans) and
/// columns read at an odd offset (staged element by element: 4- and 8-byte elements by
/// asynchronous copies, narrower ones through registers a round at a time).
#[test]
fn narrow_and_unaligned_once() {
    let mut r = Rng::new("sanitize narrow");
    let n = 20_011;
    let xs: Vec<i16> = (0..n).map(|_| r.below(60_000) as i16).collect();
    let fl = flags(&mut r, n, 0.01);
    let s = upload(&xs);
    let f = upload(&fl);
    assert_eq!(s.reduce(Op::Min).unwrap(), *xs.iter().min().unwrap());
    let mut acc = i16::MIN;
    let want: Vec<i16> = xs
        .iter()
        .map(|&x| {
            acc = acc.max(x);
            acc
        })
        .collect();
    assert_eq!(s.inclusive_scan(Op::Max).unwrap().to_vec().unwrap(), want);
    let seg = s
        .segmented_inclusive_scan(&f, Op::Min)
        .unwrap()
        .to_vec()
        .unwrap();
    let mut acc = 0i16;
    for i in 0..n {
        acc = if i == 0 || fl[i] != 0 {
            xs[i]
        } else {
            acc.min(xs[i])
        };
        assert_eq!(seg[i], acc, "segmented min at {i}");
    }
    // Odd offsets: the scans stage what they read.
    let ws: Vec<i32> = xs.iter().map(|&x| x as i32).collect();
    let w = upload(&ws);
    let tail = w
        .slice(1..)
        .inclusive_scan(Op::Add)
        .unwrap()
        .to_vec()
        .unwrap();
    assert_eq!(tail[n - 2], ws[1..].iter().sum::<i32>());
    let bytes: Vec<u8> = xs.iter().map(|&x| x as u8).collect();
    let b = upload(&bytes);
    let mut acc = 0u8;
    let want: Vec<u8> = bytes[3..]
        .iter()
        .map(|&x| {
            acc = acc.max(x);
            acc
        })
        .collect();
    assert_eq!(
        b.slice(3..)
            .inclusive_scan(Op::Max)
            .unwrap()
            .to_vec()
            .unwrap(),
        want
    );
}
