//! Sharded sequences (`DeviceGroup`, `ShardedSeq`) against sequential oracles written here, on
//! groups of 1, 2 and 3 devices of the kind `dev()` is: host devices in CI; on a GPU machine
//! GPU 0 (`dev()`) and GPUs 1.. where there are enough (NCCL between them), else clones of the
//! one GPU (`DEVSEQ_TEST_GROUP=clones` asks for clones also where there are more GPUs).
//!
//! Every operation runs over even shards (`from_slice`) and uneven ones (`from_shards`: all in
//! the first or the last shard, a skewed split), with lengths not divisible by the shard count
//! and fewer elements than shards; sorts over random, duplicate, all-equal and skewed keys.

use crate::common::*;
use crate::for_each_type;
use crate::histogram::bin;
use crate::scan::{exclusive_oracle, inclusive_oracle};
use devseq::{Device, DeviceGroup, DeviceSeq, Element, Error, Op, ShardedSeq};
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// The group sizes under test.
const GROUPS: [usize; 3] = [1, 2, 3];

/// A group of `k` devices of `dev()`'s kind (made once a process: NCCL's setup is slow).
pub fn group(k: usize) -> DeviceGroup {
    static GROUPS: OnceLock<Mutex<HashMap<usize, DeviceGroup>>> = OnceLock::new();
    let mut made = GROUPS.get_or_init(Default::default).lock().unwrap();
    made.entry(k).or_insert_with(|| make_group(k)).clone()
}

fn make_group(k: usize) -> DeviceGroup {
    let d = dev();
    let clones = std::env::var("DEVSEQ_TEST_GROUP").is_ok_and(|v| v == "clones");
    let devices: Vec<Device> = if !d.is_cuda() || clones || k == 1 {
        vec![d; k]
    } else {
        match (1..k)
            .map(|i| Device::cuda(i).ok())
            .collect::<Option<Vec<_>>>()
        {
            Some(more) => std::iter::once(d).chain(more).collect(),
            None => vec![d; k],
        }
    };
    let g = DeviceGroup::new(&devices).expect("DeviceGroup::new");
    eprintln!(
        "sharded tests: a group of {k}: {g:?}, NCCL {:?}",
        g.nccl_version()
    );
    assert_eq!(g.len(), k);
    g
}

/// Lengths: empty, fewer than the shards, not divisible by 2 or 3, a tile edge, large.
fn lens() -> Vec<usize> {
    vec![0, 1, 2, 3, 5, 31, 1000, 4097, 65_537, big(300_007)]
}

/// Shard lengths for `n` elements over `k` shards: the even split (`None`: `from_slice`),
/// all in the first shard, all in the last, and a skewed split.
pub fn layouts(n: usize, k: usize) -> Vec<Option<Vec<usize>>> {
    let mut v = vec![None];
    if k > 1 {
        let mut first = vec![0; k];
        first[0] = n;
        let mut last = vec![0; k];
        last[k - 1] = n;
        let mut skew = vec![0; k];
        skew[0] = n / 10;
        skew[k - 1] = n - n / 10;
        if k > 2 {
            skew[1] = skew[k - 1] / 7;
            skew[k - 1] -= skew[1];
        }
        v.extend([Some(first), Some(last), Some(skew)]);
    }
    v
}

/// `data` over `g`: `from_slice`, or `from_shards` with the given shard lengths.
fn shard<X: Element>(g: &DeviceGroup, data: &[X], layout: &Option<Vec<usize>>) -> ShardedSeq<X> {
    match layout {
        None => {
            let s = ShardedSeq::from_slice(g, data).unwrap();
            let k = g.len();
            let want: Vec<usize> = (0..k)
                .map(|i| data.len() / k + usize::from(i < data.len() % k))
                .collect();
            let got: Vec<usize> = s.shards().iter().map(|s| s.len()).collect();
            assert_eq!(got, want, "from_slice shard lengths");
            s
        }
        Some(lens) => {
            let mut start = 0;
            let shards = lens
                .iter()
                .zip(g.devices())
                .map(|(&len, d)| {
                    start += len;
                    DeviceSeq::from_slice(d, &data[start - len..start]).unwrap()
                })
                .collect();
            ShardedSeq::from_shards(g, shards).unwrap()
        }
    }
}

/// A group of `k` (2 or 3) devices whose exchanges copy through host memory (made once a
/// process). On a GPU machine, mixes that `DeviceGroup::new` makes so: `[GPU, host]`, and
/// `[host, GPU, GPU 0 through a second Device]` (another stream); on the host, host devices
/// made to copy every piece (`with_copies`), so that CI runs the copies too.
pub fn mixed(k: usize) -> DeviceGroup {
    static MIXED: OnceLock<Mutex<HashMap<usize, DeviceGroup>>> = OnceLock::new();
    let mut made = MIXED.get_or_init(Default::default).lock().unwrap();
    made.entry(k)
        .or_insert_with(|| {
            let d = dev();
            let g = if d.is_cuda() {
                let host = Device::host();
                let devices = match k {
                    2 => vec![d, host],
                    _ => vec![host, d, Device::cuda(0).expect("a second Device of GPU 0")],
                };
                DeviceGroup::new(&devices).expect("a mixed DeviceGroup")
            } else {
                DeviceGroup::with_copies(&vec![d; k]).expect("DeviceGroup::with_copies")
            };
            eprintln!("sharded tests: a mixed group of {k}: {g:?}");
            assert_eq!(g.len(), k);
            assert_eq!(g.nccl_version(), None, "a mixed group needs no NCCL");
            g
        })
        .clone()
}

/// Every (group, length, layout) combination, with a label for messages: groups of 1, 2 and
/// 3 devices of `dev()`'s kind, and mixed groups of 2 and 3.
fn cases() -> Vec<(DeviceGroup, usize, Option<Vec<usize>>, String)> {
    let groups = GROUPS
        .iter()
        .map(|&k| (group(k), format!("k={k}")))
        .chain([2, 3].map(|k| (mixed(k), format!("mixed k={k}"))));
    let mut v = Vec::new();
    for (g, name) in groups {
        for n in lens() {
            for layout in layouts(n, g.len()) {
                let label = format!("{name} n={n} layout={layout:?}");
                v.push((g.clone(), n, layout, label));
            }
        }
    }
    v
}

/// Making and reading, and the lazy maps.
fn basics<X: T>() {
    let mut r = Rng::new(std::any::type_name::<X>());
    for (g, n, layout, label) in cases() {
        let xs: Vec<X> = draw_vec(&mut r, n, Gen::Any);
        let ys: Vec<X> = draw_vec(&mut r, n, Gen::Any);
        let a = shard(&g, &xs, &layout);
        let b = shard(&g, &ys, &layout);
        assert_eq!(a.len(), n, "{label}");
        assert_eq!(a.shards().len(), g.len());
        for (s, d) in a.shards().iter().zip(g.devices()) {
            assert!(s.device().same(d), "{label}: shard on its device");
        }
        assert_same(&a.to_vec().unwrap(), &xs, &format!("to_vec {label}"));
        let m = a.map(|x| x.max(X::from_acc_f(1.0))).unwrap();
        assert!(m.shards().iter().all(|s| !s.is_stored()), "map is lazy");
        let want: Vec<X> = xs
            .iter()
            .map(|&x| X::from_acc(X::op(Op::Max, x.acc(), X::from_acc_f(1.0).acc())))
            .collect();
        assert_same(&m.to_vec().unwrap(), &want, &format!("map {label}"));
        let z = a.zip_map(&b, |x, y| x.min(y)).unwrap();
        let want: Vec<X> = xs
            .iter()
            .zip(&ys)
            .map(|(&x, &y)| X::from_acc(X::op(Op::Min, x.acc(), y.acc())))
            .collect();
        assert_same(&z.to_vec().unwrap(), &want, &format!("zip_map {label}"));
        let lens_a: Vec<usize> = a.shards().iter().map(|s| s.len()).collect();
        let lens_z: Vec<usize> = z.shards().iter().map(|s| s.len()).collect();
        assert_eq!(lens_a, lens_z, "zip_map keeps the shard lengths");
        // Tuples and a map to another type.
        let t = a.zip_map(&b, |x, y| (x, y.eq(x))).unwrap();
        let want: Vec<(X, bool)> = xs
            .iter()
            .zip(&ys)
            .map(|(&x, &y)| (x, X::same(x, y) && !x.f().is_nan()))
            .collect();
        let got = t.to_vec().unwrap();
        assert_eq!(got.len(), n);
        for i in 0..n {
            assert!(
                X::same(got[i].0, want[i].0) && got[i].1 == want[i].1,
                "{label}: tuple at {i}"
            );
        }
    }
}
for_each_type!(sharded_basics, basics, [u8, i32, u32, u64, f16, f32, f64]);

/// Reductions of every operator with exact data (any combination order gives the oracle's
/// bits), twice: the same bits.
fn reductions<X: T>() {
    let mut r = Rng::new(std::any::type_name::<X>());
    for (g, n, layout, label) in cases() {
        for op in ops::<X>() {
            let xs: Vec<X> = draw_vec(&mut r, n, gen_for(op));
            let s = shard(&g, &xs, &layout);
            let want = X::from_acc(
                xs.iter()
                    .fold(X::identity(op), |a, x| X::op(op, a, x.acc())),
            );
            let got = s.reduce(op).unwrap();
            assert!(
                X::same(got, want),
                "reduce {op:?} {label}: got {got:?}, want {want:?}"
            );
            assert_eq!(
                s.reduce(op).unwrap().to_bits(),
                got.to_bits(),
                "deterministic"
            );
            if n > 0 && g.len() == 1 {
                // One shard: one device's reduction, bit for bit.
                let one = DeviceSeq::from_slice(&g.devices()[0], &xs).unwrap();
                assert_eq!(one.reduce(op).unwrap().to_bits(), got.to_bits());
            }
        }
    }
}
for_each_type!(sharded_reduce, reductions, [i8, i32, u32, u64, f32, f64]);

/// Scans of every operator with exact data; the shard lengths stay.
fn scans<X: T>() {
    let mut r = Rng::new(std::any::type_name::<X>());
    for (g, n, layout, label) in cases() {
        for op in ops::<X>() {
            let xs: Vec<X> = draw_vec(&mut r, n, gen_for(op));
            let s = shard(&g, &xs, &layout);
            let lens: Vec<usize> = s.shards().iter().map(|s| s.len()).collect();
            let inc = s.inclusive_scan(op).unwrap();
            assert_same(
                &inc.to_vec().unwrap(),
                &inclusive_oracle(&xs, op),
                &format!("inclusive {op:?} {label}"),
            );
            let init = X::draw(&mut r, gen_for(op));
            let exc = s.exclusive_scan(init, op).unwrap();
            assert_same(
                &exc.to_vec().unwrap(),
                &exclusive_oracle(&xs, init, op),
                &format!("exclusive {op:?} {label}"),
            );
            for out in [&inc, &exc] {
                let got: Vec<usize> = out.shards().iter().map(|s| s.len()).collect();
                assert_eq!(got, lens, "scans keep the shard lengths");
                for (o, d) in out.shards().iter().zip(g.devices()) {
                    assert!(o.device().same(d));
                }
            }
        }
    }
}
for_each_type!(sharded_scan, scans, [i8, i32, u32, u64, f32, f64]);

/// Sums and scans of ordinary random floats: close to the f64 oracle, and the same bits on
/// every run for a given group. A reduction is a tree, so its error stays within a small
/// multiple of eps times the sum of magnitudes; a scan may add a long run in order (the host
/// backend does, per chunk), so its position `i` is held to the bound that holds for any
/// order, `i` eps times the magnitudes so far (Higham, *Accuracy and Stability of Numerical
/// Algorithms*, 4.2). The tight check of the scans is on dyadic inputs instead: multiples of
/// 2^-6 in [-1/2, 1/2), whose partial sums, in any order, stay below 2^18 in magnitude and so
/// are exact in f32; there every group must give the oracle's bits.
#[test]
fn sharded_float_sums_are_close_and_deterministic() {
    let mut r = Rng::new("sharded float sums");
    for k in GROUPS {
        let g = group(k);
        for n in [1000usize, 4097, big(300_007)] {
            let xs: Vec<f32> = (0..n).map(|_| r.unit() as f32 - 0.25).collect();
            let s = ShardedSeq::from_slice(&g, &xs).unwrap();
            let abs: f64 = xs.iter().map(|&x| (x as f64).abs()).sum();
            let bound = abs * f32::EPSILON as f64 * 64.0;
            let exact: f64 = xs.iter().map(|&x| x as f64).sum();
            let got = s.reduce(Op::Add).unwrap();
            assert!(
                (got as f64 - exact).abs() <= bound,
                "k={k} n={n}: {got} vs {exact}"
            );
            assert_eq!(
                s.reduce(Op::Add).unwrap().to_bits(),
                got.to_bits(),
                "reduce twice"
            );
            let inc = s.inclusive_scan(Op::Add).unwrap().to_vec().unwrap();
            let (mut acc, mut mag) = (0f64, 0f64);
            for (i, (&x, &y)) in xs.iter().zip(&inc).enumerate() {
                acc += x as f64;
                mag += (x as f64).abs();
                let any_order = mag * f32::EPSILON as f64 * (i + 1) as f64;
                assert!(
                    (y as f64 - acc).abs() <= any_order,
                    "k={k} n={n} at {i}: {y} vs {acc}"
                );
            }
            let again = s.inclusive_scan(Op::Add).unwrap().to_vec().unwrap();
            assert_bits(&again, &inc, "inclusive scan twice");
            let exc = s.exclusive_scan(1.5, Op::Add).unwrap().to_vec().unwrap();
            let again = s.exclusive_scan(1.5, Op::Add).unwrap().to_vec().unwrap();
            assert_bits(&again, &exc, "exclusive scan twice");
            let xd: Vec<f64> = xs.iter().map(|&x| x as f64).collect();
            let sd = ShardedSeq::from_slice(&g, &xd).unwrap();
            let a = sd.reduce(Op::Add).unwrap();
            assert!((a - exact).abs() <= abs * f64::EPSILON * 64.0);
            assert_eq!(sd.reduce(Op::Add).unwrap().to_bits(), a.to_bits());

            let dy: Vec<f32> = (0..n)
                .map(|_| (r.next() % 64) as f32 / 64.0 - 0.5)
                .collect();
            let sy = ShardedSeq::from_slice(&g, &dy).unwrap();
            let (mut inc_o, mut exc_o, mut acc) = (Vec::new(), Vec::new(), 0f32);
            for &x in &dy {
                exc_o.push(acc + 1.5);
                acc += x;
                inc_o.push(acc);
            }
            let inc = sy.inclusive_scan(Op::Add).unwrap().to_vec().unwrap();
            assert_bits(&inc, &inc_o, "dyadic inclusive scan");
            let exc = sy.exclusive_scan(1.5, Op::Add).unwrap().to_vec().unwrap();
            assert_bits(&exc, &exc_o, "dyadic exclusive scan");
            assert_eq!(sy.reduce(Op::Add).unwrap().to_bits(), acc.to_bits());
        }
    }
}

/// Histograms over every layout, on the group's first device, equal to the oracle.
fn histograms<X: T>() {
    let mut r = Rng::new(std::any::type_name::<X>());
    for (g, n, layout, label) in cases() {
        let xs: Vec<X> = if X::FLOAT {
            draw_vec(&mut r, n, Gen::Special)
        } else {
            (0..n).map(|_| X::from_bits(r.next() % 19)).collect()
        };
        let s = shard(&g, &xs, &layout);
        let (lo, hi) = (X::from_acc_f(-3.0), X::from_acc_f(13.0));
        let (lo, hi) = if lo.f() < hi.f() {
            (lo, hi)
        } else {
            (X::from_acc_f(0.0), hi)
        };
        for bins in [1usize, 7, 300] {
            let got = s.histogram(bins, lo, hi).unwrap();
            assert!(got.device().same(&g.devices()[0]), "on the first device");
            let mut want = vec![0u64; bins];
            for &x in &xs {
                if let Some(b) = bin(x, bins, lo, hi) {
                    want[b] += 1;
                }
            }
            assert_eq!(got.to_vec().unwrap(), want, "histogram {bins} {label}");
        }
    }
}
for_each_type!(sharded_histogram, histograms, [i8, i32, u32, u64, f32, f64]);

/// How sort keys are drawn.
#[derive(Debug, Clone, Copy)]
enum Keys {
    /// Anything (floats with NaN, +-0, +-inf, subnormals).
    Random,
    /// Few distinct values.
    Duplicates,
    /// All equal.
    AllEqual,
    /// Nine in ten equal, the rest random.
    Skewed,
    /// Already sorted, descending.
    Descending,
}

fn keys<X: T>(r: &mut Rng, n: usize, how: Keys) -> Vec<X> {
    let any = |r: &mut Rng| X::draw(r, if X::FLOAT { Gen::Special } else { Gen::Any });
    let common = any(r);
    let few: Vec<X> = (0..5).map(|_| any(r)).collect();
    let mut v: Vec<X> = (0..n)
        .map(|_| match how {
            Keys::Random | Keys::Descending => any(r),
            Keys::Duplicates => few[r.below(5) as usize],
            Keys::AllEqual => common,
            Keys::Skewed => {
                if r.below(10) == 0 {
                    any(r)
                } else {
                    common
                }
            }
        })
        .collect();
    if let Keys::Descending = how {
        v.sort_by(|a, b| b.total(a));
    }
    v
}

/// `sort` and `sort_pairs` (values: the input positions, and a tuple) against a stable sort
/// in the `total_cmp` order: the same keys bit for bit, values in input order among equal
/// keys, shards globally ordered, each on its device, of lengths near the even split.
fn sorts<X: T>() {
    let mut r = Rng::new(std::any::type_name::<X>());
    for (g, n, layout, label) in cases() {
        for how in [
            Keys::Random,
            Keys::Duplicates,
            Keys::AllEqual,
            Keys::Skewed,
            Keys::Descending,
        ] {
            let label = format!("{label} keys={how:?}");
            let xs: Vec<X> = keys(&mut r, n, how);
            let pos: Vec<u32> = (0..n as u32).collect();
            let s = shard(&g, &xs, &layout);
            let p = shard(&g, &pos, &layout);
            let mut want: Vec<(X, u32)> = xs.iter().copied().zip(pos.iter().copied()).collect();
            want.sort_by(|a, b| a.0.total(&b.0)); // stable
            let want_keys: Vec<X> = want.iter().map(|w| w.0).collect();
            let want_pos: Vec<u32> = want.iter().map(|w| w.1).collect();

            let sorted = s.sort().unwrap();
            check_sharding(&g, &sorted, &label);
            assert_bits(
                &sorted.to_vec().unwrap(),
                &want_keys,
                &format!("sort {label}"),
            );

            let (k, v) = s.sort_pairs(&p).unwrap();
            check_sharding(&g, &k, &label);
            let lk: Vec<usize> = k.shards().iter().map(|s| s.len()).collect();
            let lv: Vec<usize> = v.shards().iter().map(|s| s.len()).collect();
            assert_eq!(lk, lv, "values sharded as keys, {label}");
            assert_bits(
                &k.to_vec().unwrap(),
                &want_keys,
                &format!("sort_pairs keys {label}"),
            );
            assert_eq!(
                v.to_vec().unwrap(),
                want_pos,
                "sort_pairs is stable, {label}"
            );

            // Tuple values move with their keys.
            if n <= 5000 {
                let t = p.zip_map(&s, |i, x| (i * 3u32, x)).unwrap();
                let (k2, v2) = s.sort_pairs(&t).unwrap();
                assert_bits(
                    &k2.to_vec().unwrap(),
                    &want_keys,
                    &format!("tuple keys {label}"),
                );
                let got = v2.to_vec().unwrap();
                for (i, (a, b)) in got.iter().enumerate() {
                    assert_eq!(*a, want_pos[i] * 3, "tuple values {label} at {i}");
                    assert_eq!(b.to_bits(), want_keys[i].to_bits(), "{label} at {i}");
                }
            }
            // The inputs are unchanged.
            assert_bits(&s.to_vec().unwrap(), &xs, "input");
        }
    }
}
for_each_type!(sharded_sort, sorts, [u8, i32, u32, u64, f16, f32, f64]);

/// The output of a sort: one shard a device, on it; shards in order (the last of each `<=`
/// the first of the next, `total_cmp`); lengths within the splitters' bound of the even
/// split, whatever the keys.
fn check_sharding<X: T>(g: &DeviceGroup, s: &ShardedSeq<X>, label: &str) {
    let k = g.len();
    assert_eq!(s.shards().len(), k);
    let n = s.len();
    let mut prev: Option<X> = None;
    for (i, (shard, d)) in s.shards().iter().zip(g.devices()).enumerate() {
        assert!(shard.device().same(d), "{label}: shard {i} on its device");
        let v = shard.to_vec().unwrap();
        if let (Some(p), Some(f)) = (prev, v.first()) {
            assert!(
                p.total(f).is_le(),
                "{label}: shard {i} starts below its predecessor"
            );
        }
        if let Some(&l) = v.last() {
            prev = Some(l);
        }
        // 1024 samples a shard: consecutive candidates are at most about n / 1024 + 2k apart.
        let even = n as f64 / k as f64;
        let slack = n as f64 / 1024.0 + 2.0 * k as f64 + 2.0;
        assert!(
            (v.len() as f64 - even).abs() <= slack,
            "{label}: shard {i} has {} of {n} elements (even {even:.1}, slack {slack:.1})",
            v.len()
        );
    }
}

/// One shard is one device's sort, and a one-device group needs no NCCL.
#[test]
fn a_group_of_one_is_one_device() {
    let g = group(1);
    assert_eq!(g.nccl_version(), None);
    let mut r = Rng::new("group of one");
    let xs: Vec<f32> = draw_vec(&mut r, 10_007, Gen::Special);
    let s = ShardedSeq::from_slice(&g, &xs).unwrap();
    let one = DeviceSeq::from_slice(&g.devices()[0], &xs).unwrap();
    assert_bits(
        &s.sort().unwrap().to_vec().unwrap(),
        &one.sort().unwrap().to_vec().unwrap(),
        "sort",
    );
    let ys: Vec<f32> = (0..10_007).map(|_| r.unit() as f32).collect();
    let s = ShardedSeq::from_slice(&g, &ys).unwrap();
    let one = DeviceSeq::from_slice(&g.devices()[0], &ys).unwrap();
    assert_eq!(
        s.reduce(Op::Add).unwrap().to_bits(),
        one.reduce(Op::Add).unwrap().to_bits()
    );
    assert_bits(
        &s.inclusive_scan(Op::Add).unwrap().to_vec().unwrap(),
        &one.inclusive_scan(Op::Add).unwrap().to_vec().unwrap(),
        "inclusive scan",
    );
}

/// Bad input is a typed error, and the inputs stay as they were.
#[test]
fn sharded_bad_inputs() {
    assert!(matches!(
        DeviceGroup::new(&[]),
        Err(Error::InvalidArgument(_))
    ));
    let g2 = group(2);
    let g3 = group(3);
    let data: Vec<u32> = (0..10).collect();
    let a = ShardedSeq::from_slice(&g2, &data).unwrap();
    let d0 = g2.devices()[0].clone();
    let one = DeviceSeq::from_slice(&d0, &data).unwrap();
    assert!(matches!(
        ShardedSeq::from_shards(&g2, vec![one.clone()]),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        ShardedSeq::from_shards(&g2, vec![one.clone(), one.clone(), one.clone()]),
        Err(Error::InvalidArgument(_))
    ));
    // Same total, other shard lengths: LengthMismatch (zip_map and sort_pairs).
    let b = ShardedSeq::from_shards(
        &g2,
        vec![
            one.slice(..3),
            DeviceSeq::from_slice(&g2.devices()[1], &data[3..]).unwrap(),
        ],
    )
    .unwrap();
    assert!(matches!(
        a.zip_map(&b, |x, y| x + y),
        Err(Error::LengthMismatch {
            expected: 5,
            actual: 3
        })
    ));
    assert!(matches!(
        a.sort_pairs(&b),
        Err(Error::LengthMismatch { .. })
    ));
    // Other totals: LengthMismatch; another shard count: DeviceMismatch.
    let c = ShardedSeq::from_slice(&g2, &data[..9]).unwrap();
    assert!(matches!(
        a.zip_map(&c, |x, y| x + y),
        Err(Error::LengthMismatch {
            expected: 10,
            actual: 9
        })
    ));
    let e = ShardedSeq::from_slice(&g3, &data).unwrap();
    assert!(matches!(
        a.zip_map(&e, |x, y| x + y),
        Err(Error::DeviceMismatch)
    ));
    assert!(matches!(a.sort_pairs(&e), Err(Error::DeviceMismatch)));
    // Histogram arguments and operators.
    assert!(matches!(
        a.histogram(0, 0, 10),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        a.histogram(4, 10, 10),
        Err(Error::InvalidArgument(_))
    ));
    let f = ShardedSeq::from_slice(&g2, &[1.0f32, 2.0, 3.0]).unwrap();
    assert!(matches!(
        f.reduce(Op::BitXor),
        Err(Error::UnsupportedOp { .. })
    ));
    assert!(matches!(
        f.inclusive_scan(Op::BitOr),
        Err(Error::UnsupportedOp { .. })
    ));
    assert!(matches!(
        f.exclusive_scan(0.0, Op::BitAnd),
        Err(Error::UnsupportedOp { .. })
    ));
    assert!(matches!(
        f.histogram(3, 2.0, 1.0),
        Err(Error::InvalidArgument(_))
    ));
    // Inputs intact.
    assert_eq!(a.to_vec().unwrap(), data);
    assert_eq!(b.to_vec().unwrap(), data);
    assert_eq!(f.to_vec().unwrap(), [1.0, 2.0, 3.0]);
}

/// The kinds of group `DeviceGroup::new` makes: of no devices none; clones of one device
/// (no NCCL); mixes of the host and GPU 0, one GPU through two `Device`s, and clones beside
/// other devices (copies through the host, no NCCL; `mixed` runs every operation over the first
/// two, here a sort and a histogram run over the last); a shard on another device than its
/// group's is refused. On the host, where only host devices exist, the copies run in
/// `with_copies` groups (`mixed`) and `cuda_all` must fail; that the GPU mixes were not made is
/// said, not passed over.
#[test]
fn sharded_group_kinds() {
    let d = dev();
    assert!(matches!(
        DeviceGroup::with_copies(&[]),
        Err(Error::InvalidArgument(_))
    ));
    let Ok(gpu) = Device::cuda(0) else {
        assert!(matches!(DeviceGroup::cuda_all(), Err(Error::NoCuda(_))));
        assert!(!d.is_cuda());
        eprintln!("sharded_group_kinds: no GPU here; the mixes of the host and a GPU need one");
        return;
    };
    let host = Device::host();
    let clones = DeviceGroup::new(&[gpu.clone(), gpu.clone()]).unwrap();
    assert_eq!(
        clones.nccl_version(),
        None,
        "clones of one GPU need no NCCL"
    );
    let other_stream = Device::cuda(0).unwrap();
    for devices in [
        vec![gpu.clone(), host.clone()],
        vec![gpu.clone(), other_stream.clone()],
        vec![gpu.clone(), host.clone(), gpu.clone(), other_stream.clone()],
    ] {
        let g = DeviceGroup::new(&devices).unwrap();
        assert_eq!(g.nccl_version(), None, "{g:?}: copies, not NCCL");
        assert_eq!(g.len(), devices.len());
        let mut r = Rng::new("group kinds");
        let xs: Vec<u32> = (0..100_003).map(|_| r.next() as u32 % 1000).collect();
        let s = ShardedSeq::from_slice(&g, &xs).unwrap();
        let mut want = xs.clone();
        want.sort();
        let sorted = s.sort().unwrap();
        check_sharding(&g, &sorted, &format!("{g:?}"));
        assert_eq!(sorted.to_vec().unwrap(), want, "{g:?}: sort");
        let mut counts = vec![0u64; 10];
        for &x in &xs {
            counts[x as usize / 100] += 1;
        }
        let h = s.histogram(10, 0, 1000).unwrap();
        assert!(h.device().same(&devices[0]), "{g:?}: on the first device");
        assert_eq!(h.to_vec().unwrap(), counts, "{g:?}: histogram");
    }
    let on_host = DeviceSeq::from_slice(&host, &[1u32, 2]).unwrap();
    let on_gpu = DeviceSeq::from_slice(&gpu, &[3u32]).unwrap();
    assert!(matches!(
        ShardedSeq::from_shards(&clones, vec![on_gpu.clone(), on_host.clone()]),
        Err(Error::DeviceMismatch)
    ));
    let mix = DeviceGroup::new(&[gpu.clone(), host.clone()]).unwrap();
    assert!(matches!(
        ShardedSeq::from_shards(&mix, vec![on_host.clone(), on_gpu.clone()]),
        Err(Error::DeviceMismatch)
    ));
    let two_streams = DeviceGroup::new(&[gpu.clone(), other_stream.clone()]).unwrap();
    assert!(matches!(
        ShardedSeq::from_shards(&two_streams, vec![on_gpu.clone(), on_gpu.clone()]),
        Err(Error::DeviceMismatch)
    ));
    match DeviceGroup::cuda_all() {
        Ok(all) => {
            assert!(all.devices().iter().all(|d| d.is_cuda()));
            assert_eq!(all.nccl_version().is_some(), all.len() > 1);
        }
        // Several GPUs and no NCCL: the error names the library.
        Err(Error::NoCuda(m)) => assert!(m.contains("libnccl.so.2"), "{m}"),
        Err(e) => panic!("cuda_all: {e}"),
    }
    assert_eq!(on_host.to_vec().unwrap(), [1, 2]);
    assert_eq!(on_gpu.to_vec().unwrap(), [3]);
}

/// Many shards on a small input, and from several threads at once (the group is shared).
#[test]
fn sharded_from_several_threads() {
    let g = group(3);
    std::thread::scope(|s| {
        for t in 0..4u32 {
            let g = g.clone();
            s.spawn(move || {
                let data: Vec<u32> = (0..20_000u32)
                    .map(|i| i.wrapping_mul(2654435761) ^ t)
                    .collect();
                let xs = ShardedSeq::from_slice(&g, &data).unwrap();
                let mut want = data.clone();
                want.sort();
                assert_eq!(xs.sort().unwrap().to_vec().unwrap(), want);
                assert_eq!(
                    xs.reduce(Op::BitXor).unwrap(),
                    data.iter().fold(0, |a, b| a ^ b)
                );
            });
        }
    });
}
