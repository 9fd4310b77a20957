use crate::common::*;
use crate::for_types;

/// Keys in several distributions.
fn distributions<X: T>(r: &mut Rng, n: usize) -> Vec<(&'static str, Vec<X>)> {
    let uniform: Vec<X> = (0..n).map(|_| X::from_bits(r.next())).collect();
    let mut sorted = uniform.clone();
    sorted.sort_by(total);
    let reversed: Vec<X> = sorted.iter().rev().copied().collect();
    let pool: Vec<X> = draw_vec(r, 5, Gen::Any);
    let few: Vec<X> = (0..n).map(|_| pool[r.below(5) as usize]).collect();
    let special: Vec<X> = draw_vec(r, n, Gen::Special);
    vec![
        ("uniform bits", uniform),
        ("all equal", vec![pool[0]; n]),
        ("sorted", sorted),
        ("reversed", reversed),
        ("few distinct", few),
        ("special", special),
    ]
}

fn total<X: T>(a: &X, b: &X) -> std::cmp::Ordering {
    a.total(b)
}

fn sorts<X: T>() {
    let mut r = Rng::new(std::any::type_name::<X>());
    for &n in sizes() {
        for (what, keys) in distributions::<X>(&mut r, n) {
            let ks = upload(&keys);
            let (want_v, want) = stable_order(&keys);
            assert_bits(
                &ks.sort().unwrap().to_vec().unwrap(),
                &want,
                &format!("sort {what} n={n}"),
            );
            // Stable pairs: values are the positions.
            let vals: Vec<u32> = (0..n as u32).collect();
            let (k, v) = ks.sort_pairs(&upload(&vals)).unwrap();
            assert_bits(
                &k.to_vec().unwrap(),
                &want,
                &format!("sort_pairs keys {what} n={n}"),
            );
            assert_eq!(
                v.to_vec().unwrap(),
                want_v,
                "sort_pairs values {what} n={n}"
            );
            // Stable descending pairs: equal keys keep their positions' order.
            let mut down: Vec<u32> = (0..n as u32).collect();
            down.sort_by(|&a, &b| keys[b as usize].total(&keys[a as usize]));
            let (k, v) = ks.sort_pairs_descending(&upload(&vals)).unwrap();
            let want_down: Vec<X> = down.iter().map(|&i| keys[i as usize]).collect();
            assert_bits(
                &k.to_vec().unwrap(),
                &want_down,
                &format!("sort_pairs_descending keys {what} n={n}"),
            );
            assert_eq!(
                v.to_vec().unwrap(),
                down,
                "sort_pairs_descending values {what} n={n}"
            );
            assert_eq!(
                ks.argsort::<u32>().unwrap().to_vec().unwrap(),
                want_v,
                "argsort {what}"
            );
            let w64: Vec<u64> = want_v.iter().map(|&i| i as u64).collect();
            assert_eq!(
                ks.argsort::<u64>().unwrap().to_vec().unwrap(),
                w64,
                "argsort64 {what}"
            );
        }
    }
}
for_types!(sort, sorts);

/// Sizes past the point where the digit passes switch from small tiles (a few million keys
/// and fewer) to large ones, and the small tiles' boundaries (12 keys a thread x 384), for
/// 4- and 8-byte keys with and without values, stable.
fn sorts_across_tile_sizes<X: T>() {
    let mut r = Rng::new(&format!("tile sizes {}", std::any::type_name::<X>()));
    let mut ns = vec![4607, 4608, 4609, 9215, 9217];
    if !small() {
        ns.extend([(1 << 22) + 1, 3_000_017]);
    }
    for n in ns {
        // Few distinct keys: the stability of the values is visible.
        let pool: Vec<X> = draw_vec(&mut r, 300, Gen::Any);
        let keys: Vec<X> = (0..n).map(|_| pool[r.below(300) as usize]).collect();
        let ks = upload(&keys);
        let (order, want) = stable_order(&keys);
        assert_bits(
            &ks.sort().unwrap().to_vec().unwrap(),
            &want,
            &format!("sort n={n}"),
        );
        let (k, v) = ks
            .sort_pairs(&devseq::DeviceSeq::<u32>::sequence(&dev(), n).unwrap())
            .unwrap();
        assert_bits(
            &k.to_vec().unwrap(),
            &want,
            &format!("sort_pairs keys n={n}"),
        );
        assert_eq!(v.to_vec().unwrap(), order, "sort_pairs values n={n}");
        let mut desc = want.clone();
        desc.reverse();
        assert_bits(
            &ks.sort_descending().unwrap().to_vec().unwrap(),
            &desc,
            &format!("sort_descending n={n}"),
        );
    }
}

#[test]
fn tile_sizes_u32() {
    sorts_across_tile_sizes::<u32>()
}
#[test]
fn tile_sizes_f64() {
    sorts_across_tile_sizes::<f64>()
}
#[test]
fn tile_sizes_i64() {
    sorts_across_tile_sizes::<i64>()
}

/// Values of every width travel with their keys, in a sort of one block (one tile) and in the
/// digit passes.
#[test]
fn sort_pairs_value_types() {
    for n in [3001, 70_001] {
        pairs_of_value_types(n);
    }
}

fn pairs_of_value_types(n: usize) {
    let mut r = Rng::new("pairs");
    let keys: Vec<u32> = (0..n).map(|_| r.below(1000) as u32).collect();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&i| keys[i]);
    let v8: Vec<u8> = (0..n).map(|i| i as u8).collect();
    let v16: Vec<devseq::f16> = (0..n).map(|i| devseq::f16::from_bits(i as u16)).collect();
    let v64: Vec<f64> = (0..n).map(|i| i as f64 * 0.5).collect();
    let ks = upload(&keys);
    let (_, a) = ks.sort_pairs(&upload(&v8)).unwrap();
    assert_eq!(
        a.to_vec().unwrap(),
        order.iter().map(|&i| v8[i]).collect::<Vec<_>>()
    );
    let (_, b) = ks.sort_pairs(&upload(&v16)).unwrap();
    assert_bits(
        &b.to_vec().unwrap(),
        &order.iter().map(|&i| v16[i]).collect::<Vec<_>>(),
        "f16 values",
    );
    let (_, c) = ks.sort_pairs(&upload(&v64)).unwrap();
    assert_eq!(
        c.to_vec().unwrap(),
        order.iter().map(|&i| v64[i]).collect::<Vec<_>>()
    );
}

/// The order of special floats, spelled out.
#[test]
fn float_total_order() {
    let v = [
        1.0f32,
        -0.0,
        f32::NAN,
        -f32::NAN,
        0.0,
        f32::NEG_INFINITY,
        f32::INFINITY,
        -1.0,
        1e-45,
        -1e-45,
    ];
    let got = upload(&v).sort().unwrap().to_vec().unwrap();
    let want = [
        -f32::NAN,
        f32::NEG_INFINITY,
        -1.0,
        -1e-45,
        -0.0,
        0.0,
        1e-45,
        1.0,
        f32::INFINITY,
        f32::NAN,
    ];
    assert_bits(&got, &want, "total order");
}

/// 8-byte keys with a stored column of 8-byte values (16-byte items: 20 a thread, one block
/// a multiprocessor, tuning/mod.rs `sort`), on both sides of the switch from small tiles (12
/// keys a thread x 384) to large ones (20 x 384 = 7680), which takes tiles >= 2 x 132
/// multiprocessors (an H200's; `sort_for`): 263 large tiles (2,019,840 keys) and one key
/// more; also the one-block sort's edge (4608 keys). Few distinct keys, so the values show stability; each value is its
/// position's own (distinct bits), checked with the keys against the stable sort.
fn pairs16<K: T, V: T>(value: fn(usize) -> V) {
    let mut r = Rng::new(&format!(
        "pairs16 {} {}",
        std::any::type_name::<K>(),
        std::any::type_name::<V>()
    ));
    let large = 263 * 7680;
    let mut ns = vec![4608, 4609];
    if !small() {
        ns.extend([large, large + 1]);
    }
    for n in ns {
        let pool: Vec<K> = draw_vec(&mut r, 300, Gen::Any);
        let keys: Vec<K> = (0..n).map(|_| pool[r.below(300) as usize]).collect();
        let vals: Vec<V> = (0..n).map(value).collect();
        let (vs, ks) = (upload(&vals), upload(&keys));
        assert!(vs.is_stored());
        let (order, want) = stable_order(&keys);
        let (k, v) = ks.sort_pairs(&vs).unwrap();
        assert_bits(&k.to_vec().unwrap(), &want, &format!("keys n={n}"));
        let want_v: Vec<V> = order.iter().map(|&i| vals[i as usize]).collect();
        assert_bits(&v.to_vec().unwrap(), &want_v, &format!("values n={n}"));
        assert_bits(
            &vs.to_vec().unwrap(),
            &vals,
            &format!("values intact n={n}"),
        );
    }
}

/// A position's value with all 64 bits in use (splitmix64 of it).
fn spread(i: usize) -> u64 {
    Rng::seeded(i as u64).next()
}

#[test]
fn pairs16_u64_keys_f64_values() {
    // Finite doubles of distinct bits (a NaN's payload is not what is checked here).
    pairs16::<u64, f64>(|i| f64::from_bits(spread(i) & !(1 << 62)))
}
#[test]
fn pairs16_i64_keys_u64_values() {
    pairs16::<i64, u64>(spread)
}
#[test]
fn pairs16_f64_keys_i64_values() {
    pairs16::<f64, i64>(|i| spread(i) as i64)
}
