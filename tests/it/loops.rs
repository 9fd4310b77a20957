//! `Expr::fold_range`: loops inside element functions against the same loops written in Rust,
//! through every way a lazy sequence is read (stored, reduced, scanned, searched, gathered,
//! sorted), with counts that are constants, that vary by element, and that are zero.

use crate::common::*;
use devseq::{DeviceSeq, Expr, Op};

/// The state of the test loop after `count` iterations from element `i`: a wrapping LCG, a
/// sum of f32 halvings, a count of odd draws, and the parity of the draws' top bits.
fn host_loop(i: u32, count: u32) -> (u32, f32, u64, bool) {
    let (mut x, mut f, mut odd, mut par) = (i ^ 0x9e37_79b9, 1.0f32 + i as f32, 0u64, false);
    for k in 0..count {
        x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223 ^ k);
        f = f * 0.5 + (x >> 28) as f32;
        odd += (x & 1) as u64;
        par ^= x >> 31 == 1;
    }
    (x, f, odd, par)
}

/// `host_loop` traced: the same steps on `Expr`s.
fn traced_loop(i: Expr<u32>, count: Expr<u32>) -> (Expr<u32>, Expr<f32>, Expr<u64>, Expr<bool>) {
    let init = (
        i ^ 0x9e37_79b9u32,
        i.cast::<f32>() + 1.0,
        Expr::constant(0u64),
        Expr::constant(false),
    );
    Expr::fold_range(count, init, |k, (x, f, odd, par)| {
        let x = x * 1_664_525u32 + (k ^ 1_013_904_223u32);
        let f = f * 0.5 + (x >> 28u32).cast::<f32>();
        (
            x,
            f,
            odd + (x & 1).cast::<u64>(),
            par ^ (x >> 31u32).eq(1u32),
        )
    })
}

fn bits(t: (u32, f32, u64, bool)) -> (u32, u32, u64, bool) {
    (t.0, t.1.to_bits(), t.2, t.3)
}

#[test]
fn loops_match_their_rust_form() {
    for &n in sizes() {
        let idx = DeviceSeq::<u32>::sequence(&dev(), n).unwrap();
        for counts in ["constant", "by element", "zero"] {
            let count = move |i: u32| match counts {
                "constant" => 37,
                "by element" => i % 11,
                _ => 0,
            };
            let got = idx
                .map(|i| {
                    let c = match counts {
                        "constant" => Expr::constant(37u32),
                        "by element" => i % 11,
                        _ => Expr::constant(0u32),
                    };
                    traced_loop(i, c)
                })
                .unwrap()
                .to_vec()
                .unwrap();
            let want: Vec<_> = (0..n as u32).map(|i| host_loop(i, count(i))).collect();
            assert_eq!(
                got.into_iter().map(bits).collect::<Vec<_>>(),
                want.into_iter().map(bits).collect::<Vec<_>>(),
                "{counts} n={n}"
            );
        }
    }
}

#[test]
fn loops_fuse_into_their_readers() {
    let n = big(300_001);
    let idx = DeviceSeq::<u32>::sequence(&dev(), n).unwrap();
    let lazy = idx.map(|i| traced_loop(i, i % 5 + 3).0).unwrap();
    let want: Vec<u32> = (0..n as u32).map(|i| host_loop(i, i % 5 + 3).0).collect();
    // Reduced and scanned.
    let sum = want.iter().fold(0u32, |a, &x| a.wrapping_add(x));
    assert_eq!(lazy.reduce(Op::Add).unwrap(), sum);
    let mut acc = 0u32;
    let scan: Vec<u32> = want
        .iter()
        .map(|&x| {
            acc ^= x;
            acc
        })
        .collect();
    assert_eq!(
        lazy.inclusive_scan(Op::BitXor).unwrap().to_vec().unwrap(),
        scan
    );
    // Sorted, and searched (read at random rows).
    let mut sorted = want.clone();
    sorted.sort();
    assert_eq!(lazy.sort().unwrap().to_vec().unwrap(), sorted);
    let hay = DeviceSeq::from_slice(&dev(), &sorted).unwrap();
    let hay_lazy = idx.map(|i| i * 3).unwrap(); // ascending
    let needles: Vec<u32> = (0..n as u32)
        .map(|i| host_loop(i, 2).0 % (3 * n as u32))
        .collect();
    let lazy_needles = idx
        .map(|i| traced_loop(i, Expr::constant(2u32)).0 % (3 * n as u32))
        .unwrap();
    let want_lb: Vec<u32> = needles
        .iter()
        .map(|&x| x.div_ceil(3).min(n as u32))
        .collect();
    assert_eq!(
        hay_lazy
            .lower_bound::<u32>(&lazy_needles)
            .unwrap()
            .to_vec()
            .unwrap(),
        want_lb
    );
    // As gather indices.
    let at = idx.map(|i| traced_loop(i, i % 3).0 % n as u32).unwrap();
    let want_g: Vec<u32> = (0..n as u32)
        .map(|i| sorted[(host_loop(i, i % 3).0 % n as u32) as usize])
        .collect();
    assert_eq!(hay.gather(&at).unwrap().to_vec().unwrap(), want_g);
    // A loop whose state is read by a search's haystack, at random rows.
    let steps = idx
        .map(|i| Expr::fold_range(i % 4, i * 8, |_, x| x + 1))
        .unwrap();
    let probe = DeviceSeq::from_slice(&dev(), &[0u32, 9, 8 * (n as u32 - 1) + 3]).unwrap();
    let want: Vec<u32> = [0u32, 9, 8 * (n as u32 - 1) + 3]
        .iter()
        .map(|&p| {
            (0..n as u32)
                .map(|i| i * 8 + i % 4)
                .filter(|&h| h < p)
                .count() as u32
        })
        .collect();
    assert_eq!(
        steps.lower_bound::<u32>(&probe).unwrap().to_vec().unwrap(),
        want
    );
}

#[test]
fn loops_nest_and_repeat() {
    let n = 4099;
    let idx = DeviceSeq::<u32>::sequence(&dev(), n).unwrap();
    let got = idx
        .map(|i| {
            // Two loops of the same shape and the same start, one after the other: each its
            // own; and a value computed in a body and again after the loop.
            let a = Expr::fold_range(i % 3, i, |_, x| x * 3 + 1);
            let b = Expr::fold_range(i % 3, i, |_, x| x * 3 + 1);
            let inv = Expr::fold_range(2u32, i, |_, x| x + (i * 7));
            let after = i * 7;
            // A loop inside a loop: sum over k < i % 6 of (sum over j < k of j + i).
            let nested = Expr::fold_range(i % 6, Expr::constant(0u64), |k, s| {
                let inner = Expr::fold_range(k, Expr::constant(0u64), |j, t| {
                    t + j.cast::<u64>() + i.cast::<u64>()
                });
                s + inner
            });
            (a + b, inv + after, nested)
        })
        .unwrap()
        .to_vec()
        .unwrap();
    for (i, &(ab, inv, nested)) in got.iter().enumerate() {
        let i = i as u32;
        let mut a = i;
        for _ in 0..i % 3 {
            a = a.wrapping_mul(3).wrapping_add(1);
        }
        let want_inv = i
            .wrapping_add(i.wrapping_mul(7))
            .wrapping_add(i.wrapping_mul(7))
            .wrapping_add(i.wrapping_mul(7));
        let mut s = 0u64;
        for k in 0..i % 6 {
            for j in 0..k {
                s += j as u64 + i as u64;
            }
        }
        assert_eq!(
            (ab, inv, nested),
            (a.wrapping_add(a), want_inv, s),
            "at {i}"
        );
    }
}

#[test]
fn monte_carlo_pi_as_the_peer_counts_it() {
    // Thread t: x from a hash of t, 2 x 16 Park-Miller draws, the points inside the circle.
    let threads = 5000u32;
    let idx = DeviceSeq::<u32>::sequence(&dev(), threads as usize).unwrap();
    let hits = idx
        .map(|t| {
            let x0 = ((t * 2_654_435_761u32) ^ 12_345u32).cast::<u64>() % 2_147_483_647u64;
            let x0 = Expr::select(x0.eq(0u64), Expr::constant(1u64), x0);
            let (_, hits) = Expr::fold_range(16u32, (x0, Expr::constant(0u32)), |_, (x, h)| {
                let x = x * 48_271u64 % 2_147_483_647u64;
                let u = x.cast::<u32>().cast::<f32>() * (1.0 / 2_147_483_648.0);
                let x = x * 48_271u64 % 2_147_483_647u64;
                let v = x.cast::<u32>().cast::<f32>() * (1.0 / 2_147_483_648.0);
                (x, h + (u * u + v * v).le(1.0).cast::<u32>())
            });
            hits.cast::<u64>()
        })
        .unwrap()
        .reduce(Op::Add)
        .unwrap();
    let mut want = 0u64;
    for t in 0..threads {
        let mut x = (t.wrapping_mul(2_654_435_761) ^ 12_345) as u64 % 2_147_483_647;
        if x == 0 {
            x = 1;
        }
        for _ in 0..16 {
            x = x * 48_271 % 2_147_483_647;
            let u = x as u32 as f32 * (1.0 / 2_147_483_648.0);
            x = x * 48_271 % 2_147_483_647;
            let v = x as u32 as f32 * (1.0 / 2_147_483_648.0);
            want += (u * u + v * v <= 1.0) as u64;
        }
    }
    assert_eq!(hits, want);
    let pi = 4.0 * hits as f64 / (threads as f64 * 16.0);
    assert!((pi - std::f64::consts::PI).abs() < 0.02, "pi ~ {pi}");
}

#[test]
fn loops_refuse_values_of_other_closures() {
    let xs = DeviceSeq::<u32>::sequence(&dev(), 10).unwrap();
    let leaked = std::cell::Cell::new(None);
    xs.map(|x| {
        leaked.set(Some(x));
        x
    })
    .unwrap();
    let stale = leaked.get().unwrap();
    let r = xs.map(|x| Expr::fold_range(3u32, x, |_, _| stale));
    assert!(matches!(r, Err(devseq::Error::InvalidArgument(_))), "{r:?}");
}

/// `q ^ r.rotate_left(7)` over `count` LCG draws from `x`, dividing each by `d` with the API's
/// semantics (by 0: quotient 0, remainder the dividend).
fn host_divisions(mut x: u64, d: u64, count: u32) -> u64 {
    let mut acc = 0u64;
    for _ in 0..count {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let (q, r) = (x.checked_div(d).unwrap_or(0), x.checked_rem(d).unwrap_or(x));
        acc = acc.wrapping_add(q ^ r.rotate_left(7));
        acc ^= (x >> 40) / (d | 1);
    }
    acc
}

fn traced_divisions(x: Expr<u64>, d: Expr<u64>, count: u32) -> Expr<u64> {
    let (_, acc) = Expr::fold_range(count, (x, Expr::constant(0u64)), |_, (x, acc)| {
        let x = x * 6_364_136_223_846_793_005u64 + 1_442_695_040_888_963_407u64;
        let (q, r) = (x / d, x % d);
        let acc = acc + (q ^ ((r << 7u32) | (r >> 57u32)));
        (x, acc ^ ((x >> 40u32) / (d | 1u64)))
    });
    acc
}

/// Divisions inside loops by divisors the loops do not change (a constant, or a value of the
/// element from outside the loop) take a reciprocal made before the loop on the GPU: every
/// divisor class (0, 1, powers of two, around 2^31, 2^32 and 2^63, the largest) gives the exact
/// quotients and remainders.
#[test]
fn divisions_in_loops_by_what_the_loop_does_not_change() {
    let divisors: Vec<u64> = vec![
        0,
        1,
        2,
        3,
        7,
        10,
        (1 << 31) - 1,
        1 << 31,
        (1 << 31) + 1,
        (1 << 32) - 1,
        1 << 32,
        (1 << 32) + 1,
        0x9e37_79b9_7f4a_7c15,
        1 << 63,
        (1 << 63) + 1,
        u64::MAX - 1,
        u64::MAX,
    ];
    let n = 4097;
    let idx = DeviceSeq::<u64>::sequence(&dev(), n).unwrap();
    // By a constant.
    for &d in &divisors {
        let got = idx
            .map(move |i| traced_divisions(i * 0x2545_f491_4f6c_dd1du64, Expr::constant(d), 40))
            .unwrap();
        let want: Vec<u64> = (0..n as u64)
            .map(|i| host_divisions(i.wrapping_mul(0x2545_f491_4f6c_dd1d), d, 40))
            .collect();
        assert_eq!(got.to_vec().unwrap(), want, "divisor {d:#x}");
    }
    // By each element's own divisor, read before the loop.
    let per: Vec<u64> = (0..n)
        .map(|i| divisors[i % divisors.len()] ^ (i as u64 >> 4))
        .collect();
    let got = idx
        .zip_map(&upload(&per), |i, d| {
            traced_divisions(i * 0x2545_f491_4f6c_dd1du64, d, 40)
        })
        .unwrap();
    let want: Vec<u64> = (0..n)
        .map(|i| host_divisions((i as u64).wrapping_mul(0x2545_f491_4f6c_dd1d), per[i], 40))
        .collect();
    assert_eq!(got.to_vec().unwrap(), want, "per element");
    // 32-bit values.
    for d in [
        0u32,
        1,
        3,
        1000,
        (1 << 31) - 1,
        1 << 31,
        (1 << 31) + 5,
        u32::MAX,
    ] {
        let s = DeviceSeq::<u32>::sequence(&dev(), n).unwrap();
        let got = s
            .map(move |i| {
                Expr::fold_range(33u32, i * 2_654_435_761u32, |k, x| {
                    let x = x * 1_664_525u32 + 1_013_904_223u32;
                    x ^ (x / Expr::constant(d)) ^ ((x % Expr::constant(d)) + k)
                })
            })
            .unwrap();
        let want: Vec<u32> = (0..n as u32)
            .map(|i| {
                let mut x = i.wrapping_mul(2_654_435_761);
                for k in 0..33u32 {
                    x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                    let (q, r) = (x.checked_div(d).unwrap_or(0), x.checked_rem(d).unwrap_or(x));
                    x = x ^ q ^ r.wrapping_add(k);
                }
                x
            })
            .collect();
        assert_eq!(got.to_vec().unwrap(), want, "u32 divisor {d:#x}");
    }
}
