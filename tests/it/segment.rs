use crate::common::*;
use crate::for_types;
use devseq::{Device, DeviceSeq, Expr, Op};

const DENSITIES: &[f64] = &[0.0, 0.001, 0.1, 0.5, 0.9, 1.0];

fn head(f: &[u8], i: usize) -> bool {
    i == 0 || f[i] != 0
}

pub fn seg_incl<X: T>(xs: &[X], f: &[u8], op: Op) -> Vec<X> {
    let mut out = Vec::new();
    let mut acc = X::identity(op);
    for i in 0..xs.len() {
        acc = if head(f, i) {
            xs[i].acc()
        } else {
            X::op(op, acc, xs[i].acc())
        };
        out.push(X::from_acc(acc));
    }
    out
}

pub fn seg_excl<X: T>(xs: &[X], f: &[u8], init: X, op: Op) -> Vec<X> {
    let mut out = Vec::new();
    let mut acc = init.acc();
    for i in 0..xs.len() {
        if head(f, i) {
            acc = init.acc();
        }
        out.push(X::from_acc(acc));
        acc = X::op(op, acc, xs[i].acc());
    }
    out
}

pub fn seg_reduce<X: T>(xs: &[X], f: &[u8], op: Op) -> Vec<X> {
    let mut out: Vec<X::Acc> = Vec::new();
    for i in 0..xs.len() {
        if head(f, i) {
            out.push(xs[i].acc());
        } else {
            let last = out.len() - 1;
            out[last] = X::op(op, out[last], xs[i].acc());
        }
    }
    out.into_iter().map(X::from_acc).collect()
}

/// The segmented inclusive and exclusive scans and the segmented reduce of `s` by the flags
/// `fs` against the oracles on their host copies `xs` and `f`.
pub fn check_segmented<X: T>(
    s: &DeviceSeq<X>,
    fs: &DeviceSeq<u8>,
    xs: &[X],
    f: &[u8],
    init: X,
    op: Op,
    what: &str,
) {
    let got = s
        .segmented_inclusive_scan(fs, op)
        .unwrap()
        .to_vec()
        .unwrap();
    assert_same(&got, &seg_incl(xs, f, op), &format!("seg incl {what}"));
    let got = s
        .segmented_exclusive_scan(fs, init, op)
        .unwrap()
        .to_vec()
        .unwrap();
    assert_same(
        &got,
        &seg_excl(xs, f, init, op),
        &format!("seg excl {what} init {init:?}"),
    );
    let got = s.segmented_reduce(fs, op).unwrap().to_vec().unwrap();
    assert_same(&got, &seg_reduce(xs, f, op), &format!("seg reduce {what}"));
}

fn segments<X: T>() {
    let mut r = Rng::new(std::any::type_name::<X>());
    for op in ops::<X>() {
        for &p in DENSITIES {
            let sizes: &[usize] = if p == 0.1 { sizes() } else { small_sizes() };
            for &n in sizes {
                let xs: Vec<X> = draw_vec(&mut r, n, gen_for(op));
                let f = flags(&mut r, n, p);
                let (s, fs) = (upload(&xs), upload(&f));
                let init = X::draw(&mut r, gen_for(op));
                let what = format!("{op:?} density {p} n={n}");
                check_segmented(&s, &fs, &xs, &f, init, op, &what);
            }
        }
    }
}
for_types!(segmented, segments);

/// Segments of lengths around the GPU's edges (tiles of 4096 to 8192 elements; a tile reads
/// back the 1024 elements before it for the head of its first segment), heads at a fixed
/// spacing in three phases, so that heads fall on, just inside and just outside those edges;
/// on views at odd offsets too (values and flags not aligned). The segmented reduce the same
/// way: its segments end just before those heads, on and around the edges.
fn segment_lengths<X: T>() {
    let mut r = Rng::new("segment lengths");
    let n = big(100_003);
    let ops: Vec<Op> = ops::<X>()
        .into_iter()
        .filter(|&o| o == Op::Max || (o == Op::Add && !X::FLOAT))
        .collect();
    for op in ops {
        let xs: Vec<X> = draw_vec(&mut r, n + 3, gen_for(op));
        let s = upload(&xs);
        for len in [1000, 1023, 1024, 1025, 2048, 4097, 8191, 8192, 8193, 70_000] {
            for phase in [0, 1, len - 1] {
                let f: Vec<u8> = (0..n + 3).map(|i| ((i + phase) % len == 0) as u8).collect();
                let fs = upload(&f);
                let what = format!("{op:?} len {len} phase {phase}");
                let got = s.slice(..n).segmented_inclusive_scan(&fs.slice(..n), op);
                let want = seg_incl(&xs[..n], &f[..n], op);
                assert_same(&got.unwrap().to_vec().unwrap(), &want, &what);
                let got = s.slice(..n).segmented_reduce(&fs.slice(..n), op);
                let want = seg_reduce(&xs[..n], &f[..n], op);
                assert_same(
                    &got.unwrap().to_vec().unwrap(),
                    &want,
                    &format!("reduce {what}"),
                );
                let got = s.slice(1..n + 1).segmented_reduce(&fs.slice(3..), op);
                let want = seg_reduce(&xs[1..n + 1], &f[3..], op);
                assert_same(
                    &got.unwrap().to_vec().unwrap(),
                    &want,
                    &format!("reduce of views {what}"),
                );
                let init = X::draw(&mut r, gen_for(op));
                let got = s
                    .slice(..n)
                    .segmented_exclusive_scan(&fs.slice(..n), init, op);
                let want = seg_excl(&xs[..n], &f[..n], init, op);
                assert_same(
                    &got.unwrap().to_vec().unwrap(),
                    &want,
                    &format!("excl {what}"),
                );
                let got = s
                    .slice(1..n + 1)
                    .segmented_inclusive_scan(&fs.slice(3..), op);
                let want = seg_incl(&xs[1..n + 1], &f[3..], op);
                assert_same(
                    &got.unwrap().to_vec().unwrap(),
                    &want,
                    &format!("views {what}"),
                );
            }
        }
    }
}
for_types!(segment_edges, segment_lengths);

fn heads_and_compaction<X: T>() {
    let mut r = Rng::new(std::any::type_name::<X>());
    for &n in sizes() {
        // Runs of equal values: draw from a few.
        let pool: Vec<X> = draw_vec(&mut r, 3, Gen::Special);
        let xs: Vec<X> = (0..n).map(|_| pool[r.below(3) as usize]).collect();
        let got = upload(&xs).head_flags().unwrap().to_vec().unwrap();
        let want: Vec<bool> = (0..n)
            .map(|i| i == 0 || xs[i].to_bits() != xs[i - 1].to_bits())
            .collect();
        assert_eq!(got, want, "head_flags n={n}");
        for &p in DENSITIES {
            let f = flags(&mut r, n, p);
            let got = upload(&xs).compact(&upload(&f)).unwrap().to_vec().unwrap();
            let want: Vec<X> = xs
                .iter()
                .zip(&f)
                .filter(|(_, f)| **f != 0)
                .map(|(x, _)| *x)
                .collect();
            assert_bits(&got, &want, &format!("compact density {p} n={n}"));
        }
    }
}
for_types!(heads, heads_and_compaction);

#[test]
fn nonzero_indices() {
    let mut r = Rng::new("nonzero");
    for &n in sizes() {
        for &p in DENSITIES {
            let f = flags(&mut r, n, p);
            let want: Vec<u64> = (0..n as u64).filter(|&i| f[i as usize] != 0).collect();
            let fs = upload(&f);
            assert_eq!(fs.nonzero_indices::<u64>().unwrap().to_vec().unwrap(), want);
            let w32: Vec<u32> = want.iter().map(|&i| i as u32).collect();
            assert_eq!(fs.nonzero_indices::<u32>().unwrap().to_vec().unwrap(), w32);
        }
    }
}

/// Compaction of a view at an odd offset, with flags at another.
#[test]
fn compact_of_views() {
    let mut r = Rng::new("compact views");
    let xs: Vec<u32> = (0..100_003).map(|_| r.next() as u32).collect();
    let f = flags(&mut r, 100_010, 0.5);
    let got = upload(&xs)
        .slice(3..)
        .compact(&upload(&f).slice(7..100_007))
        .unwrap()
        .to_vec()
        .unwrap();
    let want: Vec<u32> = xs[3..]
        .iter()
        .zip(&f[7..100_007])
        .filter(|(_, f)| **f != 0)
        .map(|(x, _)| *x)
        .collect();
    assert_eq!(got, want);
}

/// The room of a lazy input's first `segmented_reduce` output, in 8-byte values (4 MiB).
pub const LAZY_ROOM: usize = (4 << 20) / 8;

/// Checks `segmented_reduce` by `op` of `n` lazy f64 values `(i % 1000) * 0.5` (sums of halves
/// are exact, so any order of combining gives the oracle's bits) with lazy heads every `before`
/// elements below `LAZY_ROOM` and every `after` elements from there, against `seg_reduce` over
/// the same formulas.
pub fn check_lazy_segments(d: &Device, what: &str, n: usize, before: u64, after: u64, op: Op) {
    let room = LAZY_ROOM as u64;
    let i = DeviceSeq::<u64>::sequence(d, n).unwrap();
    let xs = i.map(|i| (i % 1000).cast::<f64>() * 0.5).unwrap();
    let fs = i
        .map(move |i| Expr::select(i.lt(room), (i % before).eq(0), (i % after).eq(0)))
        .unwrap();
    assert!(!xs.is_stored() && !fs.is_stored());
    let xv: Vec<f64> = (0..n as u64).map(|k| (k % 1000) as f64 * 0.5).collect();
    let fv: Vec<u8> = (0..n as u64)
        .map(|k| k.is_multiple_of(if k < room { before } else { after }) as u8)
        .collect();
    let want = seg_reduce(&xv, &fv, op);
    let got = xs.segmented_reduce(&fs, op).unwrap().to_vec().unwrap();
    assert_eq!(got.len(), want.len(), "{what} {op:?} n={n}: segments");
    let bad = got
        .iter()
        .zip(&want)
        .position(|(g, w)| g.to_bits() != w.to_bits());
    assert!(bad.is_none(), "{what} {op:?} n={n}: segment {bad:?}");
}

/// `segmented_reduce` of lazy sequences whose worst case (a segment an element) passes the
/// 4 MiB room of their first output (8-byte values: 2^19 segments). Heads every `before`
/// elements in the first room-full (the sample that decides whether to count first), every
/// `after` elements past it: dense from the start (counted first), sparse then dense with as
/// many segments as fit, one more, many more (a second pass), and fewer and far fewer.
#[test]
fn lazy_segments_past_the_first_output() {
    let d = dev();
    let room = LAZY_ROOM;
    let sparse = room.div_ceil(1000); // heads at multiples of 1000 below `room`
    let cases: [(&str, usize, u64, u64); 7] = [
        ("dense, as many as fit", 2 * room, 2, 2),
        ("dense, one more", 2 * room + 1, 2, 2),
        ("as many as fit", 2 * room - sparse, 1000, 1),
        ("one more", 2 * room - sparse + 1, 1000, 1),
        ("many more", 3 * room, 1000, 1),
        ("fewer", 3 * room, 1000, 4),
        ("far fewer", room + 3, 1000, 1000),
    ];
    for (what, n, before, after) in cases {
        let n = if small() { n.min(70_001) } else { n };
        for op in [Op::Add, Op::Max] {
            check_lazy_segments(&d, what, n, before, after, op);
        }
    }
}

/// The segmented scans and reductions on both sides of the size where the GPU's tiles of 4-
/// and 8-byte values grow (2 MB of values: tiles of 2 rounds below, 8 above), a partial tile
/// past it, heads at spacings around those tiles; and `reduce_by_key` of the same values over
/// keys in runs of those lengths.
fn tile_thresholds<X: T>() {
    let mut r = Rng::new("segment tile thresholds");
    let at = (2usize << 20) / std::mem::size_of::<X>();
    let op = if X::FLOAT { Op::Max } else { Op::Add };
    for n in [at - 1, at, at + 1, at + 8193] {
        let n = big(n);
        let xs: Vec<X> = draw_vec(&mut r, n, gen_for(op));
        let s = upload(&xs);
        for len in [1024, 2047, 8192] {
            let f: Vec<u8> = (0..n).map(|i| ((i + 3) % len == 0) as u8).collect();
            let init = X::draw(&mut r, gen_for(op));
            let what = format!("{op:?} n={n} heads every {len}");
            check_segmented(&s, &upload(&f), &xs, &f, init, op, &what);
            let keys: Vec<u32> = (0..n).map(|i| ((i + 3) / len) as u32).collect();
            let (k, v) = upload(&keys).reduce_by_key(&s, op).unwrap();
            let mut want = keys.clone();
            want.dedup();
            assert_eq!(k.to_vec().unwrap(), want, "reduce_by_key keys {what}");
            assert_same(
                &v.to_vec().unwrap(),
                &seg_reduce(&xs, &f, op),
                &format!("reduce_by_key {what}"),
            );
        }
    }
}
crate::for_each_type!(
    segment_tile_thresholds,
    tile_thresholds,
    [i32, i64, u32, u64, f32, f64]
);
