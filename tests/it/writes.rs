//! Reading and writing elements and ranges (`get`, `first`, `last`, `set`, `write_at`,
//! `fill_range`, `scatter_if`) against sequential oracles: in place, copy-on-write where the
//! memory is shared, and bad inputs that write nothing.

use crate::common::*;
use crate::for_types;
use devseq::{DeviceSeq, Error};

fn writes<X: T>() {
    let mut r = Rng::new(std::any::type_name::<X>());
    for &n in small_sizes() {
        let what = format!("{} n={n}", std::any::type_name::<X>());
        let xs: Vec<X> = draw_vec(&mut r, n, Gen::Special);
        let mut s = upload(&xs);
        let mut want = xs.clone();
        // get, first, last, of a stored and of a lazy sequence.
        assert_eq!(
            s.first().unwrap().map(|x| x.to_bits()),
            xs.first().map(|x| x.to_bits())
        );
        assert_eq!(
            s.last().unwrap().map(|x| x.to_bits()),
            xs.last().map(|x| x.to_bits())
        );
        assert!(
            matches!(s.get(n), Err(Error::IndexOutOfBounds { .. })),
            "{what}"
        );
        if n > 0 {
            let i = r.below(n as u64) as usize;
            assert_eq!(s.get(i).unwrap().to_bits(), xs[i].to_bits(), "get {what}");
            let lazy = s.map(|x| x.max(X::from_acc_f(0.0))).unwrap();
            let g = lazy.get(i).unwrap();
            assert_same(
                &[g],
                &[X::from_acc(X::op(
                    devseq::Op::Max,
                    xs[i].acc(),
                    X::from_acc_f(0.0).acc(),
                ))],
                &what,
            );
        }
        // A clone keeps its elements through every write.
        let before = s.clone();
        if n > 0 {
            let i = r.below(n as u64) as usize;
            let v = X::draw(&mut r, Gen::Special);
            s.set(i, v).unwrap();
            want[i] = v;
        }
        let v = X::draw(&mut r, Gen::Special);
        let (a, b) = (
            r.below(n as u64 + 1) as usize,
            r.below(n as u64 + 1) as usize,
        );
        let (a, b) = (a.min(b), a.max(b));
        s.fill_range(a..b, v).unwrap();
        want[a..b].iter_mut().for_each(|w| *w = v);
        let m = r.below(n as u64 + 1) as usize;
        let off = r.below((n - m) as u64 + 1) as usize;
        let src: Vec<X> = draw_vec(&mut r, m, Gen::Special);
        s.write_at(off, &upload(&src)).unwrap();
        want[off..off + m].copy_from_slice(&src);
        assert_bits(&s.to_vec().unwrap(), &want, &format!("writes {what}"));
        assert_bits(&before.to_vec().unwrap(), &xs, &format!("the clone {what}"));
        // Now nothing shares it: in place, and a lazy source computed as it is written.
        let ramp = DeviceSeq::<u32>::sequence(&dev(), m)
            .unwrap()
            .map(|i| (i % 100).cast::<X>())
            .unwrap();
        s.write_at(off, &ramp).unwrap();
        for k in 0..m {
            want[off + k] = X::from_acc_f((k % 100) as f64);
        }
        assert_bits(
            &s.to_vec().unwrap(),
            &want,
            &format!("write_at of a lazy source {what}"),
        );
        // Bad inputs: errors, nothing written.
        assert!(matches!(
            s.write_at(n - m + 1, &upload(&src)),
            Err(Error::InvalidArgument(_))
        ));
        assert!(matches!(
            s.fill_range(0..n + 1, v),
            Err(Error::InvalidArgument(_))
        ));
        assert!(matches!(s.set(n, v), Err(Error::IndexOutOfBounds { .. })));
        assert_bits(
            &s.to_vec().unwrap(),
            &want,
            &format!("after bad writes {what}"),
        );
    }
}
for_types!(get_set_fill_write, writes);

fn scatter_if_oracle<X: T>() {
    let mut r = Rng::new(std::any::type_name::<X>());
    for &n in small_sizes() {
        let what = format!("{} n={n}", std::any::type_name::<X>());
        let len = n + 5;
        let vals: Vec<X> = draw_vec(&mut r, n, Gen::Special);
        // Distinct targets for the chosen ones (a permutation's prefix); the others out of range.
        let mut perm: Vec<u32> = (0..len as u32).collect();
        for i in (1..len).rev() {
            perm.swap(i, r.below(i as u64 + 1) as usize);
        }
        let f8 = flags(&mut r, n, 0.4);
        let idx: Vec<u32> = (0..n)
            .map(|i| if f8[i] != 0 { perm[i] } else { u32::MAX })
            .collect();
        let base: Vec<X> = draw_vec(&mut r, len, Gen::Special);
        let mut want = base.clone();
        for i in 0..n {
            if f8[i] != 0 {
                want[idx[i] as usize] = vals[i];
            }
        }
        let (v, ix) = (upload(&vals), upload(&idx));
        let mut out = upload(&base);
        v.scatter_if(&ix, &upload(&f8), &mut out).unwrap();
        assert_bits(
            &out.to_vec().unwrap(),
            &want,
            &format!("scatter_if(u8) {what}"),
        );
        let fb: Vec<bool> = f8.iter().map(|&f| f != 0).collect();
        let mut out = upload(&base);
        v.scatter_if(&ix, &upload(&fb), &mut out).unwrap();
        assert_bits(
            &out.to_vec().unwrap(),
            &want,
            &format!("scatter_if(bool) {what}"),
        );
        // A chosen index out of range: an error, `out` intact on the host.
        if n > 0 {
            let all = vec![true; n];
            let mut out = upload(&base);
            let got = v
                .scatter_if(&ix, &upload(&all), &mut out)
                .and_then(|_| out.to_vec().map(|_| ()));
            assert!(
                matches!(got, Err(Error::IndexOutOfBounds { .. })) || fb.iter().all(|&b| b),
                "{what}: {got:?}"
            );
        }
        let short = upload(&vec![true; n + 1]);
        let mut out = upload(&base);
        assert!(matches!(
            v.scatter_if(&ix, &short, &mut out),
            Err(Error::LengthMismatch { .. })
        ));
        assert_bits(&out.to_vec().unwrap(), &base, &what);
    }
}
for_types!(scatter_if, scatter_if_oracle);

#[test]
fn tuple_items_are_written_whole() {
    let n = 1000;
    let mut s = DeviceSeq::from_slice(&dev(), &vec![(0u8, 0.0f64, 0i16); n]).unwrap();
    s.set(3, (1, 2.5, -3)).unwrap();
    s.fill_range(10..20, (7, 1.0, 7)).unwrap();
    let src = DeviceSeq::<u32>::sequence(&dev(), 5)
        .unwrap()
        .map(|i| (i.cast::<u8>(), i.cast::<f64>() * 0.5, -(i.cast::<i16>())))
        .unwrap();
    s.write_at(n - 5, &src).unwrap();
    let got = s.to_vec().unwrap();
    let mut want = vec![(0u8, 0.0f64, 0i16); n];
    want[3] = (1, 2.5, -3);
    want[10..20].iter_mut().for_each(|w| *w = (7, 1.0, 7));
    for k in 0..5 {
        want[n - 5 + k] = (k as u8, k as f64 * 0.5, -(k as i16));
    }
    assert_eq!(got, want);
    assert_eq!(s.get(3).unwrap(), (1, 2.5, -3));
    assert_eq!(s.last().unwrap(), Some((4, 2.0, -4)));
}
