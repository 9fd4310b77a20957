//! Count, mean, variance (population and sample), min and max of a large f32 sequence with
//! one custom reduction: the mean and variance by Welford's algorithm in its parallel form (Chan,
//! Golub and LeVeque, 1979), which merges two partial summaries
//!
//!     (na, ma, M2a) + (nb, mb, M2b):  n = na + nb,  d = mb - ma,
//!                                     mean = ma + d nb / n,  M2 = M2a + M2b + d^2 na nb / n
//!
//! (M2 is the sum of squared deviations from the mean). Unlike the textbook one-pass formula
//! sum(x^2) - n mean^2, it does not lose the variance to cancellation when the mean is large
//! against the spread, and unlike the two-pass formula it reads the data once.
//!
//! The summary of a stretch of elements is one item, (n, mean, M2, range), reduced by one
//! `reduce_with` in one pass over the data. Items are tuples of at most four elements, so the
//! minimum and the maximum share the fourth component: a u64 whose high half is the order key
//! of the smallest f32 so far and whose low half that of the largest (`Expr::to_bits` gives an
//! f32's bits; flipping them as a radix sort does makes unsigned order the float order).
//!
//! The input is x = 3 + 2 z for standard normal z from the crate's counter-based generator
//! (mean 3, standard deviation 2). The results are compared with a two-pass f64 computation on
//! the host (exits non-zero on a mismatch).
//!
//!     cargo run --release --example stats [-- --n N --seed N]
//!
//! The default size is 2^24 on a GPU and 2^20 on the host.

mod common;

use devseq::{Device, DeviceSeq, Expr};

struct Args {
    n: usize,
    seed: u64,
}

fn args(gpu: bool) -> Args {
    Args {
        n: common::flag("--n", if gpu { 1 << 24 } else { 1 << 20 }),
        seed: common::flag("--seed", 7),
    }
}

/// A partial summary: (count, mean, M2) in f64, and the packed keys of the min and the max.
type Summary = (Expr<f64>, Expr<f64>, Expr<f64>, Expr<u64>);

const LOW: u64 = 0xffff_ffff;

/// Chan et al.'s merge of two summaries (`a` of the earlier elements; the merge is symmetric
/// anyway, up to rounding), and the min and max of the keys. Associative up to rounding, with
/// (0, 0, 0, LOW << 32) as its identity: the weight nb / n is taken as 0 when both are empty,
/// so the closure never divides 0 by 0 (every element is mapped to n = 1 and `reduce_with`
/// needs no identity, so this cannot happen here, but it keeps the operator total, for
/// `fold_with` or a segmented reduction say).
fn merge((na, ma, qa, ra): Summary, (nb, mb, qb, rb): Summary) -> Summary {
    let n = na + nb;
    let w = Expr::select(n.gt(0.0), nb / n, 0.0);
    let d = mb - ma;
    let lo = (ra >> 32).min(rb >> 32);
    let hi = (ra & LOW).max(rb & LOW);
    (n, ma + d * w, qa + qb + d * d * na * w, (lo << 32) | hi)
}

/// Each element as the summary of itself. The key of an f32 is its bits with the sign bit
/// flipped where it is clear and all bits flipped where it is set: keys compare as unsigned
/// integers in the order of `f32::total_cmp` (-0.0 below +0.0; a NaN would be the largest or,
/// with its sign set, the smallest, where `Op::Max`/`Op::Min` would skip it: this input has
/// none).
fn summary(x: Expr<f32>) -> Summary {
    let b = x.to_bits();
    let key = b ^ Expr::select((b >> 31).eq(1), LOW, 0x8000_0000);
    (
        Expr::constant(1.0),
        x.cast::<f64>(),
        Expr::constant(0.0),
        (key << 32) | key,
    )
}

/// The f32 whose key is `key` (the inverse of the flip in `summary`).
fn from_key(key: u64) -> f32 {
    let k = key as u32;
    f32::from_bits(if k & 0x8000_0000 != 0 {
        k ^ 0x8000_0000
    } else {
        !k
    })
}

#[derive(Debug, Clone, Copy)]
struct Stats {
    n: f64,
    mean: f64,
    m2: f64,
    min: f32,
    max: f32,
}

/// The one reduction over `xs`.
fn stats(xs: &DeviceSeq<f32>) -> devseq::Result<Option<Stats>> {
    let r = xs.map(summary)?.reduce_with(merge)?;
    Ok(r.map(|(n, mean, m2, range)| Stats {
        n,
        mean,
        m2,
        min: from_key(range >> 32),
        max: from_key(range & LOW),
    }))
}

/// |got - want| / |want| (or |got| where want is 0).
fn rel(got: f64, want: f64) -> f64 {
    let d = (got - want).abs();
    if want == 0.0 { d } else { d / want.abs() }
}

fn main() -> devseq::Result<()> {
    let dev = Device::auto()?;
    let Args { n, seed } = args(dev.is_cuda());
    println!("device: {}", dev.name());
    println!("x = 3 + 2 z, z standard normal; n = {n}, seed {seed}");
    if n < 2 {
        eprintln!("--n must be at least 2 (the sample variance divides by n - 1)");
        std::process::exit(2);
    }

    // Lazy: nothing is stored; the reduction draws the numbers in its kernel.
    let lazy = DeviceSeq::<f32>::random_normal(&dev, n, seed)?.map(|z| z * 2.0 + 3.0)?;
    let stored = lazy.copy()?;

    // Warm up (compiles the kernels on a GPU), then time both inputs.
    stats(&stored.slice(..n.min(4096)))?;
    stats(&lazy.slice(..n.min(4096)))?;
    dev.finish_compiling(); // their optimized form (the first is compiled quickly)
    let mut got = None;
    let ms = dev.time(|| {
        got = stats(&stored)?;
        Ok(())
    })?;
    let ms_lazy = dev.time(|| stats(&lazy).map(|_| ()))?;
    let g = got.expect("n >= 2 elements, so the reduction has a result");

    // Two passes in f64 on the host, over the same f32 values.
    let xs = lazy.to_vec()?;
    let hn = xs.len() as f64;
    let hmean = xs.iter().map(|&x| x as f64).sum::<f64>() / hn;
    let hm2 = xs.iter().map(|&x| (x as f64 - hmean).powi(2)).sum::<f64>();
    let hmin = xs.iter().copied().fold(f32::INFINITY, f32::min);
    let hmax = xs.iter().copied().fold(f32::NEG_INFINITY, f32::max);

    // Tolerance. Both sides compute in f64 (u = 2^-53 = 1.1e-16) from the same f32 values, so
    // they differ by rounding only. The host's sequential sums have a worst-case relative error
    // of (n - 1) u times sum|x| / |sum x| (about 1.1 for this input) for the mean, and (n - 1) u
    // for M2 (a sum of non-negative terms; the mean's error enters it only squared). Chan,
    // Golub and LeVeque bound the relative error of the merged M2 by about n u k, where
    // k = sqrt(1 + mean^2 / variance) = 1.8 here is the condition number (log2(n) u k where
    // the merges form a balanced tree). So 4 n u bounds the difference: 4.7e-10 at n = 2^20
    // and 7.5e-9 at 2^24 (typical differences are ~sqrt(n) u, far smaller), while a wrong
    // merge (a missing d^2 term, swapped weights) is an error of order 1. Count, min and max
    // must be exact.
    let u = f64::EPSILON / 2.0;
    let tol = (4.0 * hn * u).max(1e-13);
    let rows = [
        ("mean", g.mean, hmean),
        ("variance (population)", g.m2 / g.n, hm2 / hn),
        ("variance (sample)", g.m2 / (g.n - 1.0), hm2 / (hn - 1.0)),
        (
            "standard deviation (sample)",
            (g.m2 / (g.n - 1.0)).sqrt(),
            (hm2 / (hn - 1.0)).sqrt(),
        ),
    ];
    println!(
        "{:<28} {:>22} {:>22} {:>10}",
        "", "device (merge)", "host (two-pass)", "rel. diff"
    );
    println!("{:<28} {:>22} {:>22} {:>10}", "count", g.n, hn, "");
    let mut ok = g.n == hn && g.min == hmin && g.max == hmax;
    for (name, d, h) in rows {
        let r = rel(d, h);
        ok &= r <= tol;
        println!("{name:<28} {d:>22.15} {h:>22.15} {r:>10.2e}");
    }
    println!("{:<28} {:>22} {:>22}", "min", g.min, hmin);
    println!("{:<28} {:>22} {:>22}", "max", g.max, hmax);
    println!("tolerance on the relative differences: {tol:.2e} (4 n u)");
    // Sampling error, for orientation only: the sample mean's standard error is 2 / sqrt(n).
    println!(
        "(the distribution's mean 3, variance 4; the sample mean's standard error {:.1e})",
        2.0 / hn.sqrt()
    );

    // Bytes: the reduction reads the stored f32 input once, 4 bytes per element, and writes
    // nothing of that size.
    println!(
        "stored input: {ms:.3} ms, {:.3} GB/s (one pass, 4 bytes/element)",
        if ms > 0.0 { 4.0 * hn / ms / 1e6 } else { 0.0 }
    );
    println!(
        "lazy input (numbers drawn in the reduction's kernel, nothing read): {ms_lazy:.3} ms, \
         {:.1} M elements/s",
        if ms_lazy > 0.0 {
            hn / ms_lazy / 1e3
        } else {
            0.0
        }
    );

    if !ok {
        eprintln!("MISMATCH: the device's statistics differ from the host's beyond rounding");
        std::process::exit(1);
    }
    println!("ok: the merged statistics match the two-pass f64 computation");
    Ok(())
}
