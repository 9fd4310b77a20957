//! Runs of equal consecutive elements: `head_flags` (lazy for stored sequences, with slices of
//! both the flags and the sequence), `dedup`, `run_lengths`, `reduce_by_key`, `group_by_key`,
//! against plain loops over the bits.

use crate::common::*;
use crate::for_types;
use devseq::{DeviceSeq, Element, Op};

/// `n` values in runs of 1 to 8 equal ones, drawn from a small pool (floats: NaNs, signed
/// zeros and infinities among them), so that runs of equal values also meet.
fn runs_of<X: T>(r: &mut Rng, n: usize) -> Vec<X> {
    let pool: Vec<X> = draw_vec(r, 6, Gen::Special);
    let mut v = Vec::with_capacity(n);
    while v.len() < n {
        let x = pool[r.below(pool.len() as u64) as usize];
        let len = 1 + r.below(8) as usize;
        v.extend(std::iter::repeat_n(x, len.min(n - v.len())));
    }
    v
}

fn head_oracle<X: Element>(xs: &[X]) -> Vec<bool> {
    (0..xs.len())
        .map(|i| i == 0 || xs[i].to_bits() != xs[i - 1].to_bits())
        .collect()
}

fn dedup_oracle<X: Element>(xs: &[X]) -> Vec<X> {
    let h = head_oracle(xs);
    xs.iter()
        .zip(&h)
        .filter(|(_, h)| **h)
        .map(|(x, _)| *x)
        .collect()
}

fn lengths_oracle<X: Element>(xs: &[X]) -> Vec<u64> {
    let mut out: Vec<u64> = Vec::new();
    for (i, h) in head_oracle(xs).into_iter().enumerate() {
        if i == 0 || h {
            out.push(0);
        }
        *out.last_mut().unwrap() += 1;
    }
    out
}

fn runs<X: T>() {
    let mut r = Rng::new(std::any::type_name::<X>());
    for &n in sizes() {
        let xs: Vec<X> = runs_of(&mut r, n);
        let s = upload(&xs);
        let flags = s.head_flags().unwrap();
        assert!(
            !flags.is_stored(),
            "head flags of a stored sequence are lazy"
        );
        assert_eq!(
            flags.to_vec().unwrap(),
            head_oracle(&xs),
            "head_flags n={n}"
        );
        assert_bits(
            &s.dedup().unwrap().to_vec().unwrap(),
            &dedup_oracle(&xs),
            "dedup",
        );
        let (elems, lens) = s.run_lengths().unwrap();
        assert_bits(
            &elems.to_vec().unwrap(),
            &dedup_oracle(&xs),
            "run_lengths: elements",
        );
        assert_eq!(
            lens.to_vec().unwrap(),
            lengths_oracle(&xs),
            "run_lengths n={n}"
        );

        // Slices of the flags keep the flag of their first element (it compares with the one
        // before); flags of a slice start a run at their first element.
        if n > 7 {
            let tail = flags.slice(5..).to_vec().unwrap();
            assert_eq!(tail, head_oracle(&xs)[5..], "head_flags().slice(5..) n={n}");
            let of_slice = s.slice(5..).head_flags().unwrap().to_vec().unwrap();
            assert_eq!(
                of_slice,
                head_oracle(&xs[5..]),
                "slice(5..).head_flags() n={n}"
            );
            assert_bits(
                &s.slice(5..).dedup().unwrap().to_vec().unwrap(),
                &dedup_oracle(&xs[5..]),
                "slice(5..).dedup()",
            );
            let idx = flags
                .slice(3..)
                .nonzero_indices::<u32>()
                .unwrap()
                .to_vec()
                .unwrap();
            let want: Vec<u32> = head_oracle(&xs)[3..]
                .iter()
                .enumerate()
                .filter(|(_, h)| **h)
                .map(|(i, _)| i as u32)
                .collect();
            assert_eq!(idx, want, "head_flags().slice(3..).nonzero_indices() n={n}");
        }

        // reduce_by_key: values whose sums are exact in any order, and an integer column.
        let vals: Vec<X> = draw_vec(&mut r, n, Gen::SumExact);
        let (k, v) = s.reduce_by_key(&upload(&vals), Op::Add).unwrap();
        assert_bits(
            &k.to_vec().unwrap(),
            &dedup_oracle(&xs),
            "reduce_by_key: keys",
        );
        let mut want: Vec<X::Acc> = Vec::new();
        for (i, h) in head_oracle(&xs).into_iter().enumerate() {
            if h {
                want.push(X::identity(Op::Add));
            }
            let last = want.last_mut().unwrap();
            *last = X::op(Op::Add, *last, vals[i].acc());
        }
        let want: Vec<X> = want.into_iter().map(X::from_acc).collect();
        assert_same(
            &v.to_vec().unwrap(),
            &want,
            &format!("reduce_by_key Add n={n}"),
        );
        let ones = DeviceSeq::filled(&dev(), 1u32, n).unwrap();
        let (_, counts) = s.reduce_by_key(&ones, Op::Add).unwrap();
        let lens: Vec<u32> = lengths_oracle(&xs).into_iter().map(|l| l as u32).collect();
        assert_eq!(counts.to_vec().unwrap(), lens, "reduce_by_key counts n={n}");
    }
}
for_types!(runs, runs);

/// Lazy keys: their head flags are computed and stored, with the same result.
#[test]
fn runs_of_lazy_keys() {
    let d = dev();
    for &n in small_sizes() {
        let keys = DeviceSeq::<u32>::sequence(&d, n)
            .unwrap()
            .map(|i| i / 3)
            .unwrap();
        let host: Vec<u32> = (0..n as u32).map(|i| i / 3).collect();
        assert!(keys.head_flags().unwrap().is_stored());
        assert_eq!(keys.dedup().unwrap().to_vec().unwrap(), dedup_oracle(&host));
        let vals = DeviceSeq::<f32>::sequence(&d, n).unwrap();
        let (k, v) = keys.reduce_by_key(&vals, Op::Max).unwrap();
        assert_eq!(k.to_vec().unwrap(), dedup_oracle(&host));
        let want: Vec<f32> = (0..host.len().div_ceil(3))
            .map(|s| ((3 * s + 2).min(n - 1)) as f32)
            .collect();
        assert_eq!(v.to_vec().unwrap(), want, "n={n}");
    }
}

#[test]
fn reduce_by_key_checks_its_arguments() {
    let keys = upload(&[1u8, 1, 2]);
    let vals = upload(&[1.0f32, 2.0]);
    assert!(matches!(
        keys.reduce_by_key(&vals, Op::Add),
        Err(devseq::Error::LengthMismatch {
            expected: 3,
            actual: 2
        })
    ));
    assert!(matches!(
        keys.reduce_by_key(&upload(&[1.0f32, 2.0, 3.0]), Op::BitAnd),
        Err(devseq::Error::UnsupportedOp { .. })
    ));
}

/// Compaction whose flags read only the values' own column (copy_if's comparison, dedup's head
/// flags, head flags sliced with the values, two heads of one column from different first
/// rows): the GPU computes those flags from the values it staged, reading the column once.
/// Also the near misses that must not: flags over the column one row further on.
fn own_flags<X: T + PartialOrd>() {
    let mut r = Rng::new(std::any::type_name::<X>());
    for &n in sizes() {
        let xs: Vec<X> = runs_of(&mut r, n);
        let s = upload(&xs);
        let keep = |f: &dyn Fn(usize) -> bool, from: usize| -> Vec<X> {
            (from..n).filter(|&i| f(i)).map(|i| xs[i]).collect()
        };
        let pivot = if n == 0 {
            X::default()
        } else {
            xs[r.below(n as u64) as usize]
        };
        let below = s.map(|x| x.lt(pivot)).unwrap();
        assert_bits(
            &s.compact(&below).unwrap().to_vec().unwrap(),
            &keep(&|i| xs[i] < pivot, 0),
            &format!("compact(x < pivot) n={n}"),
        );
        let heads = head_oracle(&xs);
        assert_bits(
            &s.compact(&s.head_flags().unwrap())
                .unwrap()
                .to_vec()
                .unwrap(),
            &keep(&|i| heads[i], 0),
            &format!("compact(head_flags) n={n}"),
        );
        if n < 6 {
            continue;
        }
        // The flags' first row compares with the element before the slice.
        let tail = s.slice(5..);
        let flags = s.head_flags().unwrap().slice(5..);
        assert_bits(
            &tail.compact(&flags).unwrap().to_vec().unwrap(),
            &keep(&|i| heads[i], 5),
            &format!("slice(5..).compact(head_flags().slice(5..)) n={n}"),
        );
        // Two heads of one column: one starts a run at row 0, the other compares.
        let either = flags
            .zip_map(&tail.head_flags().unwrap(), |a, b| a | b)
            .unwrap();
        assert_bits(
            &tail.compact(&either).unwrap().to_vec().unwrap(),
            &keep(&|i| i == 5 || heads[i], 5),
            &format!("compact(two heads) n={n}"),
        );
        // Flags of the next element: another start, not the values' own rows.
        let next = s.slice(1..).map(|x| x.lt(pivot)).unwrap();
        assert_bits(
            &s.slice(..n - 1).compact(&next).unwrap().to_vec().unwrap(),
            &keep(&|i| i + 1 < n && xs[i + 1] < pivot, 0),
            &format!("compact(next < pivot) n={n}"),
        );
    }
}
for_types!(own_flags, own_flags);

/// Compaction with flags computed from the values' own column (`xs.compact(&xs.map(|x|
/// x.lt(c)))`) on both sides of the GPU's switch to blocks of 512 threads: those tiles (512
/// threads x `register_tile`'s rounds x 16 bytes: 8192 8-byte, 16384 1- to 4-byte elements) must
/// give every multiprocessor four (4 x 132 on an H200: tuning/mod.rs `compact`,
/// `compact_min_blocks`; cuda/compact.rs `compact`), so 527 tiles take blocks of 256 and 527
/// tiles and one element take 512. Two pivots: about half kept (the result keeps the buffer of
/// `n`) and about 1 in 64 (fewer than n/16: moved to a buffer of their own size). Against the
/// filter, bitwise.
fn own_flags_large_blocks<X: T + PartialOrd>() {
    let mut r = Rng::new(&format!("compact 512 {}", std::any::type_name::<X>()));
    let tile = if std::mem::size_of::<X>() == 8 {
        8192
    } else {
        16384
    };
    let at = 527 * tile;
    for n in [at, at + 1] {
        let n = big(n);
        let xs: Vec<X> = draw_vec(&mut r, n, Gen::Any);
        let s = upload(&xs);
        let mut sample: Vec<X> = (0..1001).map(|_| xs[r.below(n as u64) as usize]).collect();
        sample.sort_by(|a, b| a.total(b));
        for pivot in [sample[500], sample[15]] {
            let below = s.map(|x| x.lt(pivot)).unwrap();
            let want: Vec<X> = xs.iter().copied().filter(|x| *x < pivot).collect();
            assert_bits(
                &s.compact(&below).unwrap().to_vec().unwrap(),
                &want,
                &format!("compact(x < {pivot:?}) n={n}, {} kept", want.len()),
            );
        }
    }
}
crate::for_each_type!(
    compact_own_flags_512,
    own_flags_large_blocks,
    [u8, i16, u32, f32, i64, f64]
);

/// `group_by_key` (and `_with`, values of a tuple) against a stable sort of (key, position)
/// and a fold of each run of equal bits, in position order.
fn group_by<X: T>() {
    let mut r = Rng::new(&format!("group_by {}", std::any::type_name::<X>()));
    for &n in small_sizes().iter().chain(&[big(300_001)]) {
        let mut keys: Vec<X> = runs_of(&mut r, n);
        // Scattered: equal keys far apart as well as next to each other.
        for i in (1..n).rev() {
            keys.swap(i, r.below(i as u64 + 1) as usize);
        }
        let vals: Vec<u32> = (0..n).map(|_| r.below(1 << 20) as u32).collect();
        let (order, sorted) = stable_order(&keys);
        let (mut wk, mut wsum, mut wmax, mut wfirst) = (vec![], vec![], vec![], vec![]);
        for (i, &p) in order.iter().enumerate() {
            let v = vals[p as usize];
            if i == 0 || sorted[i].to_bits() != sorted[i - 1].to_bits() {
                wk.push(sorted[i]);
                wsum.push(v);
                wmax.push(v);
                wfirst.push((p, v));
            } else {
                let last = wk.len() - 1;
                wsum[last] = wsum[last].wrapping_add(v);
                wmax[last] = wmax[last].max(v);
            }
        }
        let (ks, vs) = (upload(&keys), upload(&vals));
        let (k, v) = ks.group_by_key(&vs, Op::Add).unwrap();
        assert_bits(
            &k.to_vec().unwrap(),
            &wk,
            &format!("group_by_key keys n={n}"),
        );
        assert_eq!(v.to_vec().unwrap(), wsum, "group_by_key Add n={n}");
        let (_, v) = ks.group_by_key(&vs, Op::Max).unwrap();
        assert_eq!(v.to_vec().unwrap(), wmax, "group_by_key Max n={n}");
        // A traced operator that keeps the first (position, value) of each key: the values
        // of a key are combined in position order.
        let pos = DeviceSeq::<u32>::sequence(&dev(), n).unwrap();
        let pairs = DeviceSeq::zip(&pos, &vs).unwrap();
        let (k, v) = ks.group_by_key_with(&pairs, |a, _b| a).unwrap();
        assert_bits(
            &k.to_vec().unwrap(),
            &wk,
            &format!("group_by_key_with keys n={n}"),
        );
        assert_eq!(v.to_vec().unwrap(), wfirst, "group_by_key_with n={n}");
    }
    let ks = upload(&[X::from_bits(1)]);
    let bad = upload(&[1u32, 2]);
    assert!(matches!(
        ks.group_by_key(&bad, Op::Add),
        Err(devseq::Error::LengthMismatch { .. })
    ));
}
for_types!(group_by_key, group_by);
