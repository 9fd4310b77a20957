//! Tuple keys: every ordered operation over tuples of elements (sorts, searches, merges, runs,
//! set operations, `is_sorted`, `sort_by_key`) against sequential oracles that order tuples
//! lexicographically, each component in `sort`'s order, for tuples that pack into one 64-bit
//! word and for wider ones.

use crate::common::*;
use crate::search::{SET_OPS, merge_oracle_by, set_call, set_call_by_key, set_oracle_by};
use devseq::{DeviceSeq, Element, Key, Op};
use std::cmp::Ordering;

/// A component of a test tuple: drawn, ordered and compared bit for bit.
trait C: Element + std::fmt::Debug {
    fn from_raw(raw: u64) -> Self;
    fn special(r: &mut Rng) -> Self;
    fn order(&self, other: &Self) -> Ordering;
}
impl<X: T> C for X {
    fn from_raw(raw: u64) -> Self {
        X::from_bits(raw)
    }
    fn special(r: &mut Rng) -> Self {
        X::draw(r, Gen::Special)
    }
    fn order(&self, other: &Self) -> Ordering {
        self.total(other)
    }
}
impl C for bool {
    fn from_raw(raw: u64) -> Self {
        raw & 1 == 1
    }
    fn special(r: &mut Rng) -> Self {
        r.below(2) == 1
    }
    fn order(&self, other: &Self) -> Ordering {
        self.cmp(other)
    }
}

/// How a component is drawn.
#[derive(Clone, Copy, Debug)]
enum Draw {
    /// Any bits.
    Uniform,
    /// One of three values (many ties, so later components decide).
    Few,
    /// Extremes, signed zeros, NaNs, infinities.
    Special,
}

/// A test tuple: its lexicographic order and its bits.
trait Tup: Key + std::fmt::Debug {
    fn draw(r: &mut Rng, d: Draw, pool: &[u64; 3]) -> Self;
    fn order(&self, other: &Self) -> Ordering;
    fn bits(&self) -> Vec<u64>;
}

macro_rules! tups {
    ($(($($X:ident $k:tt),+))*) => {$(
        impl<$($X: C),+> Tup for ($($X,)+) {
            fn draw(r: &mut Rng, d: Draw, pool: &[u64; 3]) -> Self {
                ($(match d {
                    Draw::Uniform => $X::from_raw(r.next()),
                    Draw::Few => $X::from_raw(pool[r.below(3) as usize].rotate_left($k * 8)),
                    Draw::Special => $X::special(r),
                },)+)
            }
            fn order(&self, other: &Self) -> Ordering {
                Ordering::Equal $(.then_with(|| self.$k.order(&other.$k)))+
            }
            fn bits(&self) -> Vec<u64> {
                vec![$(self.$k.to_bits()),+]
            }
        }
    )*};
}
tups! {
    (A 0, B 1)
    (A 0, B 1, C2 2)
    (A 0, B 1, C2 2, D 3)
}

fn assert_tuples<K: Tup>(got: &[K], want: &[K], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(g.bits(), w.bits(), "{what}: at {i}: got {g:?}, want {w:?}");
    }
}

fn up<K: Tup>(xs: &[K]) -> DeviceSeq<K> {
    DeviceSeq::from_slice(&dev(), xs).unwrap()
}

/// Keys in several distributions.
fn distributions<K: Tup>(r: &mut Rng, n: usize) -> Vec<(&'static str, Vec<K>)> {
    let pool = [r.next(), r.next(), r.next()];
    let uniform: Vec<K> = (0..n).map(|_| K::draw(r, Draw::Uniform, &pool)).collect();
    let few: Vec<K> = (0..n).map(|_| K::draw(r, Draw::Few, &pool)).collect();
    let special: Vec<K> = (0..n).map(|_| K::draw(r, Draw::Special, &pool)).collect();
    let mut sorted = few.clone();
    sorted.sort_by(K::order);
    let mut reversed = sorted.clone();
    reversed.reverse();
    let one = K::draw(r, Draw::Few, &pool);
    vec![
        ("uniform", uniform),
        ("few", few),
        ("special", special),
        ("sorted", sorted),
        ("reversed", reversed),
        ("all equal", vec![one; n]),
    ]
}

fn stable_positions<K: Tup>(keys: &[K], descending: bool) -> Vec<u32> {
    let mut order: Vec<u32> = (0..keys.len() as u32).collect();
    order.sort_by(|&a, &b| {
        let o = keys[a as usize].order(&keys[b as usize]);
        if descending { o.reverse() } else { o }
    });
    order
}

fn at<K: Copy>(keys: &[K], order: &[u32]) -> Vec<K> {
    order.iter().map(|&i| keys[i as usize]).collect()
}

/// Sorts, argsort, sort_pairs (both directions) and is_sorted.
fn sorts<K: Tup>() {
    let mut r = Rng::new(std::any::type_name::<K>());
    let mut sizes = small_sizes().to_vec();
    sizes.push(big(100_003));
    for &n in &sizes {
        // The large size in two distributions (uniform and many ties), the rest in all.
        let mut dists = distributions::<K>(&mut r, n);
        if n > 65_537 {
            dists.truncate(2);
        }
        for (what, keys) in dists {
            let what = format!("{what} n={n}");
            let ks = up(&keys);
            let pos: Vec<u32> = (0..n as u32).collect();
            for descending in [false, true] {
                let order = stable_positions(&keys, descending);
                let want = at(&keys, &order);
                let sorted = if descending {
                    ks.sort_descending()
                } else {
                    ks.sort()
                }
                .unwrap();
                assert_tuples(&sorted.to_vec().unwrap(), &want, &format!("sort {what}"));
                assert!(sorted.is_stored(), "sort stores {what}");
                let (k, v) = if descending {
                    ks.sort_pairs_descending(&upload(&pos))
                } else {
                    ks.sort_pairs(&upload(&pos))
                }
                .unwrap();
                assert_tuples(&k.to_vec().unwrap(), &want, &format!("sort_pairs {what}"));
                assert_eq!(v.to_vec().unwrap(), order, "sort_pairs values {what}");
            }
            let order = stable_positions(&keys, false);
            assert_eq!(
                ks.argsort::<u32>().unwrap().to_vec().unwrap(),
                order,
                "argsort {what}"
            );
            // Tuple values move with tuple keys.
            let tv: Vec<(u32, u8)> = pos.iter().map(|&p| (p, p as u8)).collect();
            let (_, v) = ks
                .sort_pairs(&DeviceSeq::from_slice(&dev(), &tv).unwrap())
                .unwrap();
            assert_eq!(v.to_vec().unwrap(), at(&tv, &order), "tuple values {what}");
            let want_sorted = keys
                .windows(2)
                .all(|w| w[0].order(&w[1]) != Ordering::Greater);
            assert_eq!(ks.is_sorted().unwrap(), want_sorted, "is_sorted {what}");
            assert!(
                ks.sort().unwrap().is_sorted().unwrap(),
                "sorted is_sorted {what}"
            );
        }
    }
}

/// head_flags, dedup, run_lengths, reduce_by_key, group_by_key.
fn runs<K: Tup>() {
    let mut r = Rng::new(std::any::type_name::<K>());
    for &n in small_sizes() {
        for (what, keys) in distributions::<K>(&mut r, n) {
            let what = format!("{what} n={n}");
            let ks = up(&keys);
            let heads: Vec<bool> = (0..n)
                .map(|i| i == 0 || keys[i].bits() != keys[i - 1].bits())
                .collect();
            assert_eq!(
                ks.head_flags().unwrap().to_vec().unwrap(),
                heads,
                "head_flags {what}"
            );
            let firsts: Vec<K> = (0..n).filter(|&i| heads[i]).map(|i| keys[i]).collect();
            assert_tuples(
                &ks.dedup().unwrap().to_vec().unwrap(),
                &firsts,
                &format!("dedup {what}"),
            );
            let mut lengths: Vec<u64> = Vec::new();
            for &h in &heads {
                if h {
                    lengths.push(0);
                }
                *lengths.last_mut().unwrap() += 1;
            }
            let (k, l) = ks.run_lengths().unwrap();
            assert_tuples(
                &k.to_vec().unwrap(),
                &firsts,
                &format!("run_lengths keys {what}"),
            );
            assert_eq!(l.to_vec().unwrap(), lengths, "run_lengths {what}");
            // reduce_by_key of the positions by max: each run's last position.
            let pos: Vec<u32> = (0..n as u32).collect();
            let (k, m) = ks.reduce_by_key(&upload(&pos), Op::Max).unwrap();
            assert_tuples(
                &k.to_vec().unwrap(),
                &firsts,
                &format!("reduce_by_key keys {what}"),
            );
            let lasts: Vec<u32> = (0..n)
                .filter(|&i| i + 1 == n || heads[i + 1])
                .map(|i| i as u32)
                .collect();
            assert_eq!(m.to_vec().unwrap(), lasts, "reduce_by_key {what}");
            // group_by_key: the distinct keys ascending, with their counts.
            let mut sorted = keys.clone();
            sorted.sort_by(K::order);
            let mut groups: Vec<(K, u64)> = Vec::new();
            for x in sorted {
                match groups.last_mut() {
                    Some((k, c)) if k.bits() == x.bits() => *c += 1,
                    _ => groups.push((x, 1)),
                }
            }
            let ones = DeviceSeq::filled(&dev(), 1u64, n).unwrap();
            let (k, c) = ks.group_by_key(&ones, Op::Add).unwrap();
            let (wk, wc): (Vec<K>, Vec<u64>) = groups.into_iter().unzip();
            assert_tuples(
                &k.to_vec().unwrap(),
                &wk,
                &format!("group_by_key keys {what}"),
            );
            assert_eq!(c.to_vec().unwrap(), wc, "group_by_key counts {what}");
        }
    }
}

/// Two ascending sides drawn alike (so they share keys), of lengths `na` and `nb`.
fn sorted_sides<K: Tup>(r: &mut Rng, na: usize, nb: usize, d: Draw) -> (Vec<K>, Vec<K>) {
    let pool = [r.next(), r.next(), r.next()];
    let mut a: Vec<K> = (0..na).map(|_| K::draw(r, d, &pool)).collect();
    let mut b: Vec<K> = (0..nb).map(|_| K::draw(r, d, &pool)).collect();
    a.sort_by(K::order);
    b.sort_by(K::order);
    (a, b)
}

/// lower_bound, upper_bound, merge, merge_pairs and the set operations.
fn searches<K: Tup>() {
    let mut r = Rng::new(std::any::type_name::<K>());
    let mut pairs: Vec<(usize, usize)> = small_sizes().iter().map(|&n| (n, n / 3 + 1)).collect();
    pairs.extend([(0, 0), (0, 5), (5, 0), (big(100_001), big(70_001))]);
    for (na, nb) in pairs {
        let draws: &[Draw] = if na > 65_537 {
            &[Draw::Few]
        } else {
            &[Draw::Few, Draw::Special, Draw::Uniform]
        };
        for &d in draws {
            let what = format!("{d:?} {na}+{nb}");
            let (a, b) = sorted_sides::<K>(&mut r, na, nb, d);
            let (da, db) = (up(&a), up(&b));
            // Searches of b's keys in a.
            let lower: Vec<u32> = b
                .iter()
                .map(|x| a.partition_point(|y| y.order(x) == Ordering::Less) as u32)
                .collect();
            let upper: Vec<u32> = b
                .iter()
                .map(|x| a.partition_point(|y| y.order(x) != Ordering::Greater) as u32)
                .collect();
            assert_eq!(
                da.lower_bound::<u32>(&db).unwrap().to_vec().unwrap(),
                lower,
                "lower_bound {what}"
            );
            assert_eq!(
                da.upper_bound::<u32>(&db).unwrap().to_vec().unwrap(),
                upper,
                "upper_bound {what}"
            );
            // Needles in no order.
            let mut shuffled = b.clone();
            shuffled.reverse();
            let want: Vec<u32> = shuffled
                .iter()
                .map(|x| a.partition_point(|y| y.order(x) == Ordering::Less) as u32)
                .collect();
            assert_eq!(
                da.lower_bound::<u32>(&up(&shuffled))
                    .unwrap()
                    .to_vec()
                    .unwrap(),
                want,
                "lower_bound unordered {what}"
            );
            // Merges.
            let (wk, wv) = merge_oracle_by(&a, &b, K::order);
            assert_tuples(
                &da.merge(&db).unwrap().to_vec().unwrap(),
                &wk,
                &format!("merge {what}"),
            );
            let av = upload(&(0..na as u32).collect::<Vec<_>>());
            let bv = upload(&(na as u32..(na + nb) as u32).collect::<Vec<_>>());
            let (k, v) = da.merge_pairs(&av, &db, &bv).unwrap();
            assert_tuples(
                &k.to_vec().unwrap(),
                &wk,
                &format!("merge_pairs keys {what}"),
            );
            assert_eq!(v.to_vec().unwrap(), wv, "merge_pairs values {what}");
            // Set operations, and which copies they keep.
            for op in SET_OPS {
                let (wk, wv) = set_oracle_by(op, &a, &b, K::order);
                let what = format!("{op:?} {what}");
                assert_tuples(&set_call(op, &da, &db).to_vec().unwrap(), &wk, &what);
                let (k, v) = set_call_by_key(op, &da, &av, &db, &bv);
                assert_tuples(&k.to_vec().unwrap(), &wk, &format!("{what} by key"));
                assert_eq!(v.to_vec().unwrap(), wv, "{what} by key: values");
            }
        }
    }
}

/// The tuple shapes: packing into one word, with bools, halves and signed components, and
/// wider than a word (two and three words).
macro_rules! tuple_tests {
    ($($name:ident: $K:ty;)*) => {$(
        mod $name {
            #[allow(unused_imports)]
            use devseq::{bf16, f16};
            #[test]
            fn sorts() { super::sorts::<$K>() }
            #[test]
            fn runs() { super::runs::<$K>() }
            #[test]
            fn searches() { super::searches::<$K>() }
        }
    )*};
}
tuple_tests! {
    u32_u32: (u32, u32);
    i8_f32: (i8, f32);
    bool_u16_i8: (bool, u16, i8);
    f16_bf16_u8_i16: (f16, bf16, u8, i16);
    u64_u8: (u64, u8);
    f64_i32_u64: (f64, i32, u64);
    i16_f64: (i16, f64);
}

#[test]
fn sort_by_key_orders_by_a_traced_key() {
    let mut r = Rng::new("sort_by_key");
    for &n in small_sizes() {
        let xs: Vec<i32> = (0..n).map(|_| r.next() as i32 % 1000).collect();
        let d = upload(&xs);
        // Evens first, then odds, each ascending (a comparator written as a key).
        let got = d
            .sort_by_key(|x| ((x & 1).ne(0), x))
            .unwrap()
            .to_vec()
            .unwrap();
        let mut want = xs.clone();
        want.sort_by_key(|&x| (x & 1 != 0, x));
        assert_eq!(got, want, "parity n={n}");
        // A key of one component, stably: equal squares keep their order.
        let got = d.sort_by_key(|x| x * x).unwrap().to_vec().unwrap();
        let mut want = xs.clone();
        want.sort_by_key(|&x| x * x);
        assert_eq!(got, want, "square n={n}");
        // Items that are tuples, by a tuple key descending in one part.
        let ys: Vec<(f32, u16)> = xs
            .iter()
            .map(|&x| (x as f32 * 0.25, (x as u16) % 7))
            .collect();
        let dy = DeviceSeq::from_slice(&dev(), &ys).unwrap();
        let got = dy.sort_by_key(|(f, m)| (m, -f)).unwrap().to_vec().unwrap();
        let mut want = ys.clone();
        want.sort_by(|a, b| a.1.cmp(&b.1).then(b.0.total_cmp(&a.0)));
        assert_eq!(
            got.iter().map(|t| (t.0.to_bits(), t.1)).collect::<Vec<_>>(),
            want.iter()
                .map(|t| (t.0.to_bits(), t.1))
                .collect::<Vec<_>>(),
            "tuple key n={n}"
        );
    }
}

#[test]
fn tuple_sorts_of_lazy_and_sliced_inputs() {
    let n = 40_001;
    let s = DeviceSeq::<u32>::sequence(&dev(), n).unwrap();
    // A lazy tuple: (i % 7, a hash of i), and a slice of a stored one.
    let lazy = s.map(|i| (i % 7, i * 2_654_435_761u32)).unwrap();
    let host: Vec<(u32, u32)> = (0..n as u32)
        .map(|i| (i % 7, i.wrapping_mul(2_654_435_761)))
        .collect();
    let mut want = host.clone();
    want.sort();
    assert_eq!(lazy.sort().unwrap().to_vec().unwrap(), want);
    assert_eq!(lazy.dedup().unwrap().len(), n);
    let stored = lazy.copy().unwrap().slice(100..30_000);
    let mut want = host[100..30_000].to_vec();
    want.sort();
    assert_eq!(stored.sort().unwrap().to_vec().unwrap(), want);
    let heads = lazy
        .map(|(a, _)| (a.lt(3u32), a))
        .unwrap()
        .head_flags()
        .unwrap();
    assert_eq!(heads.count().unwrap(), n as u64);
}
