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
