//! Lazy views (`gather`, `step_by`, `reverse`, `shift`, `concat`, `adjacent_difference`)
//! against sequential oracles: of stored and lazy inputs, with lazy or stored indices, nested,
//! read by every kind of consumer, bitwise equal to the same steps stored one by one.

use crate::common::*;
use crate::{for_each_type, for_types};
use devseq::{DeviceSeq, Error, Op};

fn views<X: T>() {
    let mut r = Rng::new(std::any::type_name::<X>());
    for &n in small_sizes() {
        let what = format!("{} n={n}", std::any::type_name::<X>());
        let xs: Vec<X> = draw_vec(&mut r, n, Gen::Special);
        let stored = upload(&xs);
        // A lazy input: a map that passes its values through a select, bit for bit.
        let lazy = stored
            .zip_map(&stored, |a, b| devseq::Expr::select(a.eq(b), a, b))
            .unwrap();
        for (kind, s) in [("stored", &stored), ("lazy", &lazy)] {
            let w = format!("{kind} {what}");
            let get = |v: devseq::Result<DeviceSeq<X>>, name: &str| {
                let v = v.unwrap_or_else(|e| panic!("{name} {w}: {e}"));
                let got = v.to_vec().unwrap();
                // Stored one step at a time, the same bits.
                assert_bits(
                    &v.copy().unwrap().to_vec().unwrap(),
                    &got,
                    &format!("{name} copy {w}"),
                );
                got
            };
            if n >= 2 {
                assert!(!s.reverse().unwrap().is_stored(), "{w}: reverse is lazy");
                assert!(
                    !s.shift(1, xs[0]).unwrap().is_stored(),
                    "{w}: shift is lazy"
                );
            }
            let rev: Vec<X> = xs.iter().rev().copied().collect();
            assert_bits(&get(s.reverse(), "reverse"), &rev, &format!("reverse {w}"));
            for step in [1usize, 2, 3, 32, 1000] {
                let want: Vec<X> = xs.iter().step_by(step).copied().collect();
                assert_bits(
                    &get(s.step_by(step), "step_by"),
                    &want,
                    &format!("step_by({step}) {w}"),
                );
            }
            let fill = X::from_acc_f(7.0);
            for k in [0isize, 1, -1, 3, -33, n as isize, -(n as isize) - 1] {
                let want: Vec<X> = (0..n as isize)
                    .map(|i| {
                        if (0..n as isize).contains(&(i - k)) {
                            xs[(i - k) as usize]
                        } else {
                            fill
                        }
                    })
                    .collect();
                assert_bits(
                    &get(s.shift(k, fill), "shift"),
                    &want,
                    &format!("shift({k}) {w}"),
                );
            }
            let m = r.below(70) as usize;
            let ys: Vec<X> = draw_vec(&mut r, m, Gen::Special);
            let both: Vec<X> = xs.iter().chain(&ys).copied().collect();
            assert_bits(
                &get(s.concat(&upload(&ys)), "concat"),
                &both,
                &format!("concat {w}"),
            );
            let other: Vec<X> = ys.iter().chain(&xs).copied().collect();
            assert_bits(
                &get(upload(&ys).concat(s), "concat"),
                &other,
                &format!("concat' {w}"),
            );
            // Gathers by stored and by lazy indices.
            if n > 0 {
                let idx: Vec<u32> = (0..n + 3).map(|_| r.below(n as u64) as u32).collect();
                let want: Vec<X> = idx.iter().map(|&i| xs[i as usize]).collect();
                assert_bits(
                    &get(s.gather(&upload(&idx)), "gather"),
                    &want,
                    &format!("gather {w}"),
                );
                let lazy_idx = DeviceSeq::<u64>::sequence(&dev(), n)
                    .unwrap()
                    .map(move |i| (i * 7 + 3) % n as u64)
                    .unwrap();
                let want: Vec<X> = (0..n).map(|i| xs[(i * 7 + 3) % n]).collect();
                assert_bits(
                    &get(s.gather(&lazy_idx), "gather(lazy)"),
                    &want,
                    &format!("gather by lazy indices {w}"),
                );
                // Nested: the reverse of a gather of a slice, shifted.
                let sl = s.slice(n / 3..);
                let len = n - n / 3;
                if len > 0 {
                    let gi: Vec<u64> = (0..n).map(|_| r.below(len as u64)).collect();
                    let g: Vec<X> = gi.iter().map(|&i| xs[n / 3 + i as usize]).collect();
                    let mut want: Vec<X> = g.iter().rev().copied().collect();
                    want.insert(0, fill);
                    want.pop();
                    let v = sl
                        .gather(&upload(&gi))
                        .and_then(|g| g.reverse())
                        .and_then(|g| g.shift(1, fill));
                    assert_bits(&get(v, "nested"), &want, &format!("nested {w}"));
                }
                // A bad index: the lowest position's, nothing computed.
                let mut bad = idx.clone();
                let p = r.below(bad.len() as u64) as usize;
                bad[p] = n as u32 + r.below(5) as u32;
                let last = bad.len() - 1;
                bad[last] = u32::MAX;
                match s.gather(&upload(&bad)) {
                    Err(Error::IndexOutOfBounds { index, len }) => {
                        assert_eq!((index, len), (bad[p] as u64, n), "{w}");
                    }
                    other => panic!("gather of a bad index {w}: {other:?}"),
                }
            }
        }
    }
}
for_types!(lazy_views, views);

/// Consumers of every kind read views fused, with the answers of the stored steps.
fn consumers<X: T>() {
    let mut r = Rng::new(std::any::type_name::<X>());
    for &n in small_sizes() {
        let what = format!("{} n={n}", std::any::type_name::<X>());
        let xs: Vec<X> = draw_vec(&mut r, n, Gen::SumExact);
        let s = upload(&xs);
        let idx: Vec<u32> = (0..n).map(|_| r.below(n.max(1) as u64) as u32).collect();
        let views: Vec<(&str, DeviceSeq<X>)> = vec![
            ("reverse", s.reverse().unwrap()),
            ("shift", s.shift(2, X::from_acc_f(1.0)).unwrap()),
            (
                "concat",
                s.slice(n / 2..).concat(&s.slice(..n / 2)).unwrap(),
            ),
            (
                "gather",
                if n > 0 {
                    s.gather(&upload(&idx)).unwrap()
                } else {
                    s.clone()
                },
            ),
        ];
        for (name, v) in views {
            let c = v.copy().unwrap();
            let w = format!("{name} {what}");
            for op in ops::<X>() {
                assert_bits(
                    &[v.reduce(op).unwrap()],
                    &[c.reduce(op).unwrap()],
                    &format!("reduce {op:?} {w}"),
                );
            }
            assert_bits(
                &v.inclusive_scan(Op::Add).unwrap().to_vec().unwrap(),
                &c.inclusive_scan(Op::Add).unwrap().to_vec().unwrap(),
                &format!("scan {w}"),
            );
            assert_bits(
                &v.sort().unwrap().to_vec().unwrap(),
                &c.sort().unwrap().to_vec().unwrap(),
                &format!("sort {w}"),
            );
            let keep = v.map(|x| x.gt(X::from_acc_f(0.0))).unwrap();
            assert_bits(
                &v.compact(&keep).unwrap().to_vec().unwrap(),
                &c.compact(&keep.copy().unwrap()).unwrap().to_vec().unwrap(),
                &format!("compact {w}"),
            );
            assert_eq!(
                v.head_flags().unwrap().to_vec().unwrap(),
                c.head_flags().unwrap().to_vec().unwrap(),
                "head_flags {w}"
            );
            assert_bits(
                &v.zip_map(&c, |a, b| a.max(b)).unwrap().to_vec().unwrap(),
                &c.map(|a| a.max(a)).unwrap().to_vec().unwrap(),
                &format!("zip {w}"),
            );
        }
    }
}
for_each_type!(views_in_consumers, consumers, [i32, u8, u64, f32, f16, f64]);

#[test]
fn adjacent_differences() {
    let mut r = Rng::new("adjacent_difference");
    for &n in small_sizes() {
        let a: Vec<i32> = (0..n).map(|_| r.next() as i32).collect();
        let want: Vec<i32> = (0..n)
            .map(|i| {
                if i == 0 {
                    a[0]
                } else {
                    a[i].wrapping_sub(a[i - 1])
                }
            })
            .collect();
        let got = upload(&a).adjacent_difference().unwrap();
        assert!(!got.is_stored() || n == 0);
        assert_eq!(got.to_vec().unwrap(), want, "i32 n={n}");
        let b: Vec<u8> = (0..n).map(|_| r.next() as u8).collect();
        let want: Vec<u8> = (0..n)
            .map(|i| {
                if i == 0 {
                    b[0]
                } else {
                    b[i].wrapping_sub(b[i - 1])
                }
            })
            .collect();
        assert_eq!(
            upload(&b).adjacent_difference().unwrap().to_vec().unwrap(),
            want,
            "u8 n={n}"
        );
        let c: Vec<f32> = (0..n)
            .map(|_| (r.next() % 4096) as f32 * 0.25 - 512.0)
            .collect();
        let want: Vec<f32> = (0..n)
            .map(|i| if i == 0 { c[0] } else { c[i] - c[i - 1] })
            .collect();
        // Lazy input: a map, read at two rows a row.
        let lazy = upload(&c).map(|x| x * 1.0).unwrap();
        assert_bits(
            &lazy.adjacent_difference().unwrap().to_vec().unwrap(),
            &want,
            &format!("f32 n={n}"),
        );
        let h: Vec<devseq::f16> = c.iter().map(|&x| devseq::f16::from_f32(x)).collect();
        let want: Vec<devseq::f16> = (0..n)
            .map(|i| {
                if i == 0 {
                    h[0]
                } else {
                    devseq::f16::from_f32(h[i].to_f32() - h[i - 1].to_f32())
                }
            })
            .collect();
        assert_bits(
            &upload(&h).adjacent_difference().unwrap().to_vec().unwrap(),
            &want,
            &format!("f16 n={n}"),
        );
    }
}

#[test]
fn views_of_tuples_heads_and_random() {
    let d = dev();
    let n = 4099;
    let t = DeviceSeq::<u32>::sequence(&d, n)
        .unwrap()
        .map(|i| (i.cast::<u8>(), i.cast::<f64>() * 0.5))
        .unwrap();
    let want: Vec<(u8, f64)> = (0..n as u32)
        .rev()
        .step_by(2)
        .map(|i| (i as u8, i as f64 * 0.5))
        .collect();
    assert_eq!(
        t.reverse().unwrap().step_by(2).unwrap().to_vec().unwrap(),
        want
    );
    let idx = DeviceSeq::from_slice(&d, &[5u64, 0, 4098]).unwrap();
    assert_eq!(
        t.gather(&idx).unwrap().to_vec().unwrap(),
        [(5, 2.5), (0, 0.0), (2, 2049.0)]
    );
    // Random sequences and head flags are defined by their row: stored first, same values.
    let u = DeviceSeq::<f32>::random_uniform(&d, n, 9).unwrap();
    let uv = u.to_vec().unwrap();
    let rev: Vec<f32> = uv.iter().rev().copied().collect();
    assert_bits(
        &u.reverse().unwrap().to_vec().unwrap(),
        &rev,
        "reverse of random",
    );
    let keys = DeviceSeq::<u32>::sequence(&d, n)
        .unwrap()
        .map(|i| i / 3)
        .unwrap();
    let h = keys.head_flags().unwrap();
    let hv = h.to_vec().unwrap();
    assert_eq!(
        h.step_by(3).unwrap().to_vec().unwrap(),
        hv.iter().step_by(3).copied().collect::<Vec<_>>()
    );
    assert!(matches!(t.step_by(0), Err(Error::InvalidArgument(_))));
    assert!(matches!(
        upload(&[true]).adjacent_difference(),
        Err(Error::UnsupportedOp { .. })
    ));
    // Gathers from an empty sequence: only empty indices.
    let e = DeviceSeq::<f32>::from_slice(&d, &[]).unwrap();
    assert!(
        e.gather(&DeviceSeq::<u32>::from_slice(&d, &[]).unwrap())
            .unwrap()
            .is_empty()
    );
    assert!(matches!(
        e.gather(&idx),
        Err(Error::IndexOutOfBounds { index: 5, len: 0 })
    ));
}
