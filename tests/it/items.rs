//! Tuple items: sequences of `(A, B)`, `(A, B, C)` and `(A, B, C, D)`, stored a column a
//! component, through every operation that takes them, against plain loops; closures that
//! take and return tuples.

use crate::common::*;
use devseq::{DeviceSeq, Error, Op, bf16, f16};

fn triples(r: &mut Rng, n: usize) -> Vec<(u8, f32, i64)> {
    (0..n)
        .map(|_| {
            (
                r.next() as u8,
                (r.below(1000) as f32 - 500.0) / 8.0,
                r.next() as i64,
            )
        })
        .collect()
}

#[test]
fn round_trips_and_views() {
    let mut r = Rng::new("items");
    for &n in small_sizes() {
        let v = triples(&mut r, n);
        let s = DeviceSeq::from_slice(&dev(), &v).unwrap();
        assert!(s.is_stored());
        assert_eq!(s.len(), n);
        assert_eq!(s.to_vec().unwrap(), v);
        if n > 4 {
            assert_eq!(s.slice(2..n - 1).to_vec().unwrap(), v[2..n - 1]);
            assert_eq!(s.slice(3..).copy().unwrap().to_vec().unwrap(), v[3..]);
        }
        let (a, b, c) = s.unzip();
        assert_eq!(
            a.to_vec().unwrap(),
            v.iter().map(|t| t.0).collect::<Vec<_>>()
        );
        assert_eq!(
            b.to_vec().unwrap(),
            v.iter().map(|t| t.1).collect::<Vec<_>>()
        );
        assert_eq!(
            c.to_vec().unwrap(),
            v.iter().map(|t| t.2).collect::<Vec<_>>()
        );
        let z = DeviceSeq::zip3(&a, &b, &c).unwrap();
        assert_eq!(z.to_vec().unwrap(), v);
        let f = DeviceSeq::filled(&dev(), (7u16, f16::from_f32(1.5)), n).unwrap();
        assert!(!f.is_stored());
        assert_eq!(f.to_vec().unwrap(), vec![(7u16, f16::from_f32(1.5)); n]);
    }
}

#[test]
fn closures_take_and_return_tuples() {
    let mut r = Rng::new("item closures");
    for &n in small_sizes() {
        let v = triples(&mut r, n);
        let s = DeviceSeq::from_slice(&dev(), &v).unwrap();
        // A tuple in, a pair out.
        let m = s
            .map(|(a, b, c)| (b * 2.0 + 1.0, c ^ a.cast::<i64>()))
            .unwrap();
        let want: Vec<(f32, i64)> = v
            .iter()
            .map(|&(a, b, c)| (b * 2.0 + 1.0, c ^ a as i64))
            .collect();
        assert_eq!(m.to_vec().unwrap(), want);
        // A pair in, an element out; and an element in, a 4-tuple out.
        let e = m.map(|(x, y)| x.cast::<i64>() + y).unwrap();
        let want_e: Vec<i64> = want
            .iter()
            .map(|&(x, y)| (x as i64).wrapping_add(y))
            .collect();
        assert_eq!(e.to_vec().unwrap(), want_e);
        let q = e
            .map(|x| (x, x.cast::<u8>(), x.cast::<bf16>(), x.lt(0)))
            .unwrap();
        let want_q: Vec<(i64, u8, bf16, bool)> = want_e
            .iter()
            .map(|&x| (x, x as u8, bf16::from_f32(x as f32), x < 0))
            .collect();
        assert_eq!(q.to_vec().unwrap(), want_q);
        // zip_map of a tuple with an element.
        let idx = DeviceSeq::<u32>::sequence(&dev(), n).unwrap();
        let w = s
            .zip_map(&idx, |(a, _, c), i| (c + i.cast::<i64>(), a))
            .unwrap();
        let want_w: Vec<(i64, u8)> = v
            .iter()
            .enumerate()
            .map(|(i, &(a, _, c))| (c.wrapping_add(i as i64), a))
            .collect();
        assert_eq!(w.to_vec().unwrap(), want_w);
        // A lazy tuple used twice, and materialized.
        assert_eq!(w.copy().unwrap().to_vec().unwrap(), want_w);
    }
}

#[test]
fn gather_scatter_compact_sort_of_tuples() {
    let mut r = Rng::new("item movers");
    for &n in small_sizes() {
        let v: Vec<(f64, u16)> = (0..n).map(|_| (r.unit() - 0.5, r.next() as u16)).collect();
        let s = DeviceSeq::from_slice(&dev(), &v).unwrap();
        let idx: Vec<u32> = (0..n).map(|_| r.below(n.max(1) as u64) as u32).collect();
        let got = s.gather(&upload(&idx)).unwrap().to_vec().unwrap();
        assert_eq!(got, idx.iter().map(|&i| v[i as usize]).collect::<Vec<_>>());

        let perm: Vec<u32> = {
            let mut p: Vec<u32> = (0..n as u32).collect();
            for i in (1..n).rev() {
                p.swap(i, r.below(i as u64 + 1) as usize);
            }
            p
        };
        let base = DeviceSeq::filled(&dev(), (0.0f64, 0u16), n).unwrap();
        let sc = s.scatter(&upload(&perm), &base).unwrap().to_vec().unwrap();
        for (k, &p) in perm.iter().enumerate() {
            assert_eq!(sc[p as usize], v[k]);
        }

        let fl = flags(&mut r, n, 0.3);
        let kept = s.compact(&upload(&fl)).unwrap().to_vec().unwrap();
        let want: Vec<(f64, u16)> = v
            .iter()
            .zip(&fl)
            .filter(|(_, f)| **f != 0)
            .map(|(x, _)| *x)
            .collect();
        assert_eq!(kept, want);

        // Tuple values follow their keys, stably.
        let keys: Vec<u8> = (0..n).map(|_| r.below(7) as u8).collect();
        let (k, vs) = upload(&keys).sort_pairs(&s).unwrap();
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&i| keys[i]);
        assert_eq!(
            k.to_vec().unwrap(),
            order.iter().map(|&i| keys[i]).collect::<Vec<_>>()
        );
        assert_eq!(
            vs.to_vec().unwrap(),
            order.iter().map(|&i| v[i]).collect::<Vec<_>>()
        );
    }
}

#[test]
fn tuples_check_their_arguments() {
    let a = upload(&[1u32, 2, 3]);
    let b = upload(&[1.0f32, 2.0]);
    assert!(matches!(
        DeviceSeq::zip(&a, &b),
        Err(Error::LengthMismatch {
            expected: 3,
            actual: 2
        })
    ));
    let p = DeviceSeq::zip(&a, &a).unwrap();
    assert!(matches!(
        p.gather(&upload(&[0u32, 3])).and_then(|y| y.to_vec()),
        Err(Error::IndexOutOfBounds { index: 3, len: 3 })
    ));
    assert!(matches!(
        p.zip_map(&b, |(x, _), y| x.cast::<f32>() + y),
        Err(Error::LengthMismatch { .. })
    ));
    // The reductions of the Op forms need elements; a tuple's components reduce one by one.
    let (x, _) = p.unzip();
    assert_eq!(x.reduce(Op::Add).unwrap(), 6);
}

/// An item of eight components.
type Eight = (u8, f64, i16, u32, u64, f32, bool, i8);

/// Items of five to eight components: stored and read back, zipped and unzipped, mapped,
/// reduced and scanned by traced operators (the scan stores all eight components), moved
/// by gathers, compactions and sorts, and sorted as keys.
#[test]
fn items_of_up_to_eight_components() {
    let mut r = Rng::new("wide items");
    for &n in small_sizes() {
        let a: Vec<u8> = (0..n).map(|_| r.next() as u8 % 4).collect();
        let b: Vec<f64> = (0..n).map(|i| i as f64 * 0.5 - 3.0).collect();
        let c: Vec<i16> = (0..n).map(|_| r.next() as i16).collect();
        let d: Vec<u32> = (0..n as u32).collect();
        let (da, db, dc, dd) = (upload(&a), upload(&b), upload(&c), upload(&d));
        let e = dd.map(|x| x.cast::<u64>() * 3).unwrap();
        let f = db.map(|x| x.cast::<f32>()).unwrap();
        let g = dc.map(|x| x.lt(0)).unwrap();
        let h = da.cast::<i8>().unwrap();
        let eight = DeviceSeq::zip_all((&da, &db, &dc, &dd, &e, &f, &g, &h)).unwrap();
        let want: Vec<Eight> = (0..n)
            .map(|i| {
                (
                    a[i],
                    b[i],
                    c[i],
                    d[i],
                    d[i] as u64 * 3,
                    b[i] as f32,
                    c[i] < 0,
                    a[i] as i8,
                )
            })
            .collect();
        assert_eq!(eight.to_vec().unwrap(), want, "zip_all n={n}");
        let stored = DeviceSeq::from_slice(&dev(), &want).unwrap();
        assert_eq!(stored.to_vec().unwrap(), want, "from_slice n={n}");
        assert_eq!(eight.unzip().4.to_vec().unwrap(), e.to_vec().unwrap());
        let five = DeviceSeq::zip_all((&da, &db, &dc, &dd, &e)).unwrap();
        assert_eq!(five.unzip().2.to_vec().unwrap(), c);
        // A map that takes eight and returns seven.
        let seven = eight
            .map(|(a, b, c, d, e, f, g, h)| {
                (d, a, c.cast::<i32>() + h.cast::<i32>(), g, f * 2.0, b, e)
            })
            .unwrap();
        let want7: Vec<_> = want
            .iter()
            .map(|&(a, b, c, d, e, f, g, h)| (d, a, c as i32 + h as i32, g, f * 2.0, b, e))
            .collect();
        assert_eq!(seven.to_vec().unwrap(), want7, "map n={n}");
        // Summary statistics in one reduction: count, sum, min, max, sum of squares, and the
        // first and last positions.
        let stats = DeviceSeq::zip_all((
            &db.map(|_| devseq::Expr::constant(1u64)).unwrap(),
            &db,
            &db,
            &db,
            &db.map(|x| x * x).unwrap(),
            &dd,
            &dd,
        ))
        .unwrap();
        let got = stats
            .reduce_with(|x, y| {
                (
                    x.0 + y.0,
                    x.1 + y.1,
                    x.2.min(y.2),
                    x.3.max(y.3),
                    x.4 + y.4,
                    x.5,
                    y.6,
                )
            })
            .unwrap();
        let want_stats = (n > 0).then(|| {
            let sum: f64 = b.iter().sum();
            let sq: f64 = b.iter().map(|x| x * x).sum();
            (n as u64, sum, b[0], b[n - 1], sq, 0u32, n as u32 - 1)
        });
        assert_eq!(got, want_stats, "statistics n={n}");
        // A scan of eight components (every one stored).
        let scanned = eight
            .inclusive_scan_with(|x, y| {
                (
                    x.0.max(y.0),
                    x.1 + y.1,
                    x.2 ^ y.2,
                    y.3,
                    x.4 + y.4,
                    x.5.min(y.5),
                    x.6 | y.6,
                    x.7 + y.7,
                )
            })
            .unwrap()
            .to_vec()
            .unwrap();
        let mut acc: Option<Eight> = None;
        let want_scan: Vec<_> = want
            .iter()
            .map(|&y| {
                let v = match acc {
                    None => y,
                    Some(x) => (
                        x.0.max(y.0),
                        x.1 + y.1,
                        x.2 ^ y.2,
                        y.3,
                        x.4 + y.4,
                        x.5.min(y.5),
                        x.6 | y.6,
                        x.7.wrapping_add(y.7),
                    ),
                };
                acc = Some(v);
                v
            })
            .collect();
        assert_eq!(scanned, want_scan, "scan n={n}");
        // Moved by a gather (reversed), a compaction and a sort by the first component.
        let rev: Vec<u32> = (0..n as u32).rev().collect();
        let gathered = eight.gather(&upload(&rev)).unwrap().to_vec().unwrap();
        assert_eq!(
            gathered,
            want.iter().rev().copied().collect::<Vec<_>>(),
            "gather n={n}"
        );
        let kept = eight.compact(&g).unwrap().to_vec().unwrap();
        assert_eq!(
            kept,
            want.iter().filter(|t| t.6).copied().collect::<Vec<_>>(),
            "compact n={n}"
        );
        let (_, v) = da.sort_pairs(&eight).unwrap();
        let mut by_a = want.clone();
        by_a.sort_by_key(|t| t.0);
        assert_eq!(v.to_vec().unwrap(), by_a, "sort_pairs n={n}");
        // Eight u8 keys pack into one word; five f64 keys take five.
        let bytes =
            DeviceSeq::zip_all((&da, &da, &h.cast::<u8>().unwrap(), &da, &da, &da, &da, &da))
                .unwrap();
        let mut wb = bytes.to_vec().unwrap();
        wb.sort();
        assert_eq!(
            bytes.sort().unwrap().to_vec().unwrap(),
            wb,
            "u8 x 8 keys n={n}"
        );
        let wide = DeviceSeq::zip_all((
            &db,
            &da.cast::<f64>().unwrap(),
            &db,
            &dc.cast::<f64>().unwrap(),
            &db,
        ))
        .unwrap();
        let mut ww = wide.to_vec().unwrap();
        ww.sort_by(|x, y| {
            x.0.total_cmp(&y.0)
                .then(x.1.total_cmp(&y.1))
                .then(x.2.total_cmp(&y.2))
                .then(x.3.total_cmp(&y.3))
                .then(x.4.total_cmp(&y.4))
        });
        let (k, _) = wide.sort_pairs(&dd).unwrap();
        assert_eq!(k.to_vec().unwrap(), ww, "f64 x 5 keys n={n}");
    }
}
