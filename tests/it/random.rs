//! Random sequences against a Philox4x32-10 written here (checked against Random123's known
//! answers), bit for bit; their statistics within sampling error; their laziness.

use crate::common::*;
use devseq::{Device, DeviceSeq, Op, bf16, f16};

/// Philox4x32-10 (Salmon et al., SC 2011), written plainly.
fn philox(ctr: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    let (mut c, mut k) = (ctr, key);
    for round in 0..10 {
        if round > 0 {
            k[0] = k[0].wrapping_add(0x9E37_79B9);
            k[1] = k[1].wrapping_add(0xBB67_AE85);
        }
        let a = 0xD251_1F53u64 * c[0] as u64;
        let b = 0xCD9E_8D57u64 * c[2] as u64;
        c = [
            ((b >> 32) as u32) ^ c[1] ^ k[0],
            b as u32,
            ((a >> 32) as u32) ^ c[3] ^ k[1],
            a as u32,
        ];
    }
    c
}

fn words(seed: u64, counter: u64) -> [u32; 4] {
    philox(
        [counter as u32, (counter >> 32) as u32, 0, 0],
        [seed as u32, (seed >> 32) as u32],
    )
}

fn bits32(seed: u64, i: u64) -> u32 {
    words(seed, i / 4)[(i % 4) as usize]
}

fn bits64(seed: u64, i: u64) -> u64 {
    let w = words(seed, i / 2);
    let k = 2 * (i % 2) as usize;
    w[k] as u64 | (w[k + 1] as u64) << 32
}

#[test]
fn philox_known_answers() {
    // Random123's kat_vectors for philox4x32 with 10 rounds.
    assert_eq!(
        philox([0; 4], [0; 2]),
        [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]
    );
    assert_eq!(
        philox([u32::MAX; 4], [u32::MAX; 2]),
        [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd]
    );
    assert_eq!(
        philox(
            [0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344],
            [0xa4093822, 0x299f31d0]
        ),
        [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1]
    );
    // The first four words of the sequence of seed 0 are the first known answer.
    let r = DeviceSeq::<u32>::random_bits(&dev(), 4, 0).unwrap();
    assert_eq!(
        r.to_vec().unwrap(),
        [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]
    );
}

fn lengths() -> Vec<usize> {
    vec![0, 1, 3, 4, 5, 31, 33, 1023, 4097, 65537, big(1_000_003)]
}

#[test]
fn bits_and_uniforms_are_exact() {
    let d = dev();
    for (s, &n) in lengths().iter().enumerate() {
        let seed = 0x1234_5678_9abc_def0u64.wrapping_mul(s as u64 + 1);
        let w32 = check_bits_and_uniforms32(&d, n, seed);
        let w64 = check_bits_and_uniforms64(&d, n, seed);
        let h: Vec<f16> = w32
            .iter()
            .map(|&w| f16::from_f32((w >> 21) as f32 / 2048.0))
            .collect();
        let b: Vec<bf16> = w32
            .iter()
            .map(|&w| bf16::from_f32((w >> 24) as f32 / 256.0))
            .collect();
        assert_bits(
            &DeviceSeq::<f16>::random_uniform(&d, n, seed)
                .unwrap()
                .to_vec()
                .unwrap(),
            &h,
            "f16 uniform",
        );
        assert_bits(
            &DeviceSeq::<bf16>::random_uniform(&d, n, seed)
                .unwrap()
                .to_vec()
                .unwrap(),
            &b,
            "bf16 uniform",
        );
        // Slices at odd offsets read the same elements; consumers fuse them.
        if n > 10 {
            let u = DeviceSeq::<u32>::random_bits(&d, n, seed).unwrap();
            assert_eq!(u.slice(3..n - 2).to_vec().unwrap(), w32[3..n - 2]);
            let sum = w32.iter().fold(0u32, |a, &x| a.wrapping_add(x));
            assert_eq!(u.reduce(Op::Add).unwrap(), sum);
            assert_eq!(
                u.slice(5..).reduce(Op::Max).unwrap(),
                *w32[5..].iter().max().unwrap()
            );
            let mut sorted = w32.clone();
            sorted.sort();
            assert_eq!(u.sort().unwrap().to_vec().unwrap(), sorted);
            let v = DeviceSeq::<u64>::random_bits(&d, n, seed).unwrap();
            assert_eq!(v.slice(1..).to_vec().unwrap(), w64[1..]);
        }
    }
}

/// u32 bits and f32 uniforms of `n` elements against the sequential Philox above; the bits.
fn check_bits_and_uniforms32(d: &Device, n: usize, seed: u64) -> Vec<u32> {
    let w32: Vec<u32> = (0..n as u64).map(|i| bits32(seed, i)).collect();
    let got = DeviceSeq::<u32>::random_bits(d, n, seed).unwrap();
    assert_eq!(got.to_vec().unwrap(), w32, "u32 bits, n = {n}");
    let f: Vec<f32> = w32
        .iter()
        .map(|&w| (w >> 8) as f32 * (1.0 / 16_777_216.0))
        .collect();
    let got = DeviceSeq::<f32>::random_uniform(d, n, seed).unwrap();
    assert_bits(&got.to_vec().unwrap(), &f, "f32 uniform");
    w32
}

/// u64 bits and f64 uniforms of `n` elements against the sequential Philox above; the bits.
fn check_bits_and_uniforms64(d: &Device, n: usize, seed: u64) -> Vec<u64> {
    let w64: Vec<u64> = (0..n as u64).map(|i| bits64(seed, i)).collect();
    let got = DeviceSeq::<u64>::random_bits(d, n, seed).unwrap();
    assert_eq!(got.to_vec().unwrap(), w64, "u64 bits, n = {n}");
    let g: Vec<f64> = w64
        .iter()
        .map(|&w| (w >> 11) as f64 * (1.0 / 9_007_199_254_740_992.0))
        .collect();
    let got = DeviceSeq::<f64>::random_uniform(d, n, seed).unwrap();
    assert_bits(&got.to_vec().unwrap(), &g, "f64 uniform");
    w64
}

/// Fills of random numbers whose output passes 16 MB take wider tiles on the GPU
/// (`tuning::map_random`): lengths at the threshold and one element past it, for 4- and 8-byte
/// elements.
#[test]
fn fills_on_both_sides_of_the_wide_tile_threshold() {
    let d = dev();
    const MB16: usize = 16 << 20;
    let seed = 0x0dd_5eed_u64;
    for n in [big(MB16 / 4), big(MB16 / 4 + 1)] {
        check_bits_and_uniforms32(&d, n, seed);
    }
    for n in [big(MB16 / 8), big(MB16 / 8 + 1)] {
        check_bits_and_uniforms64(&d, n, seed);
    }
}

/// Box–Muller written plainly, for the element `i` (f32 arithmetic for the narrow types).
fn normal32(seed: u64, i: u64, shift: u32, scale: f32) -> f32 {
    let j = i / 2;
    let u = |k: u64| (bits32(seed, k) >> shift) as f32 * scale;
    let (u1, u2) = (1.0 - u(2 * j), u(2 * j + 1));
    let r = (-2.0 * u1.ln()).sqrt();
    let a = u2 * std::f32::consts::TAU;
    r * if i % 2 == 1 { a.sin() } else { a.cos() }
}

fn normal64(seed: u64, i: u64) -> f64 {
    let j = i / 2;
    let u = |k: u64| (bits64(seed, k) >> 11) as f64 * (1.0 / 9_007_199_254_740_992.0);
    let (u1, u2) = (1.0 - u(2 * j), u(2 * j + 1));
    let r = (-2.0 * u1.ln()).sqrt();
    let a = u2 * std::f64::consts::TAU;
    r * if i % 2 == 1 { a.sin() } else { a.cos() }
}

/// Within `ulps` units in the last place of `want` (or `abs` near zero).
fn close(got: f64, want: f64, rel: f64, abs: f64) -> bool {
    (got - want).abs() <= rel * want.abs() + abs
}

#[test]
fn normals_follow_box_muller() {
    let d = dev();
    for &n in &[0usize, 1, 2, 3, 7, 1025, 65537] {
        let seed = 99 + n as u64;
        let f = DeviceSeq::<f32>::random_normal(&d, n, seed)
            .unwrap()
            .to_vec()
            .unwrap();
        let g = DeviceSeq::<f64>::random_normal(&d, n, seed)
            .unwrap()
            .to_vec()
            .unwrap();
        let h = DeviceSeq::<f16>::random_normal(&d, n, seed)
            .unwrap()
            .to_vec()
            .unwrap();
        let b = DeviceSeq::<bf16>::random_normal(&d, n, seed)
            .unwrap()
            .to_vec()
            .unwrap();
        for i in 0..n {
            let w = normal32(seed, i as u64, 8, 1.0 / 16_777_216.0) as f64;
            assert!(
                close(f[i] as f64, w, 4e-6, 1e-6),
                "f32 normal {i}: {} vs {w}",
                f[i]
            );
            let w = normal64(seed, i as u64);
            assert!(
                close(g[i], w, 1e-14, 1e-15),
                "f64 normal {i}: {} vs {w}",
                g[i]
            );
            let w = normal32(seed, i as u64, 21, 1.0 / 2048.0) as f64;
            assert!(
                close(h[i].to_f64(), w, 1e-3, 1e-4),
                "f16 normal {i}: {} vs {w}",
                h[i]
            );
            let w = normal32(seed, i as u64, 24, 1.0 / 256.0) as f64;
            assert!(
                close(b[i].to_f64(), w, 8e-3, 1e-3),
                "bf16 normal {i}: {} vs {w}",
                b[i]
            );
        }
    }
}

#[test]
fn statistics_within_sampling_error() {
    let d = dev();
    let n = 1usize << 20;
    let nf = n as f64;
    // Uniform: mean 1/2, variance 1/12; five standard errors.
    let u = DeviceSeq::<f64>::random_uniform(&d, n, 2024).unwrap();
    let mean = u.reduce(Op::Add).unwrap() / nf;
    let var = u
        .map(|x| (x - 0.5) * (x - 0.5))
        .unwrap()
        .reduce(Op::Add)
        .unwrap()
        / nf;
    assert!(
        (mean - 0.5).abs() < 5.0 * (1.0 / 12.0 / nf).sqrt(),
        "uniform mean {mean}"
    );
    assert!(
        (var - 1.0 / 12.0).abs() < 5.0 * (1.0 / 180.0 / nf).sqrt(),
        "uniform var {var}"
    );
    // Equal bins of the f32 uniforms: each count within five standard deviations.
    let bins = 16;
    let h = DeviceSeq::<f32>::random_uniform(&d, n, 7)
        .unwrap()
        .histogram(bins, 0.0, 1.0)
        .unwrap()
        .to_vec()
        .unwrap();
    let p = 1.0 / bins as f64;
    let sd = (nf * p * (1.0 - p)).sqrt();
    for (k, &c) in h.iter().enumerate() {
        assert!((c as f64 - nf * p).abs() < 5.0 * sd, "bin {k}: {c}");
    }
    // Normal: mean 0, variance 1, fourth moment 3.
    let z = DeviceSeq::<f64>::random_normal(&d, n, 31).unwrap();
    let m1 = z.reduce(Op::Add).unwrap() / nf;
    let m2 = z.map(|x| x * x).unwrap().reduce(Op::Add).unwrap() / nf;
    let m4 = z.map(|x| x * x * x * x).unwrap().reduce(Op::Add).unwrap() / nf;
    assert!(m1.abs() < 5.0 / nf.sqrt(), "normal mean {m1}");
    assert!(
        (m2 - 1.0).abs() < 5.0 * (2.0 / nf).sqrt(),
        "normal variance {m2}"
    );
    assert!(
        (m4 - 3.0).abs() < 5.0 * (96.0 / nf).sqrt(),
        "normal fourth moment {m4}"
    );
    // Different seeds, different sequences; the same seed, the same.
    let a = DeviceSeq::<u32>::random_bits(&d, 64, 1)
        .unwrap()
        .to_vec()
        .unwrap();
    let b = DeviceSeq::<u32>::random_bits(&d, 64, 2)
        .unwrap()
        .to_vec()
        .unwrap();
    assert_ne!(a, b);
    assert_eq!(
        a,
        DeviceSeq::<u32>::random_bits(&d, 64, 1)
            .unwrap()
            .to_vec()
            .unwrap()
    );
}

/// The random walkers example's pipeline at a small size: per-walker sums of a lazy random
/// sequence over lazy head flags, against a loop over the same steps.
#[test]
fn random_walkers_pipeline() {
    let d = dev();
    let (walkers, steps, seed) = (300usize, 1001usize, 9u64);
    let n = walkers * steps;
    let s = steps as u64;
    let step = DeviceSeq::<f32>::random_uniform(&d, n, seed)
        .unwrap()
        .map(|u| u * 2.0 - 1.0)
        .unwrap();
    let first = DeviceSeq::<u64>::sequence(&d, n)
        .unwrap()
        .map(move |i| (i % s).eq(0))
        .unwrap();
    let pos = step
        .segmented_reduce(&first, Op::Add)
        .unwrap()
        .to_vec()
        .unwrap();
    assert_eq!(pos.len(), walkers);
    for (w, &p) in pos.iter().enumerate() {
        let want: f64 = (0..steps)
            .map(|k| {
                let u = (bits32(seed, (w * steps + k) as u64) >> 8) as f32 / 16_777_216.0;
                (u * 2.0 - 1.0) as f64
            })
            .sum();
        assert!((p as f64 - want).abs() < 1e-3, "walker {w}: {p} vs {want}");
    }
    let var = pos.iter().map(|&p| (p as f64).powi(2)).sum::<f64>() / walkers as f64;
    let theory = steps as f64 / 3.0;
    assert!(
        (var - theory).abs() < 5.0 * theory * (2.0 / walkers as f64).sqrt(),
        "variance {var} vs {theory}"
    );
}
