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
