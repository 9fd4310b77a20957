//! A first-order linear recurrence, h[i] = a[i] * h[i-1] + b[i] from h[-1] = 0, as a parallel
//! scan. The loop looks inherently sequential, but each step is an affine map x -> a x + b, and
//! affine maps compose associatively:
//!
//!     (a1, b1) then (a2, b2)  =  x -> a2 (a1 x + b1) + b2  =  (a1 a2, a2 b1 + b2)
//!
//! So an inclusive scan of the pairs (a[i], b[i]) under that composition (left operand = the
//! earlier elements; the operator is not commutative) gives, at position i, the map from h[-1]
//! to h[i]; its `b` component applied to h[-1] = 0 is h[i]. This is the scan behind IIR filters,
//! exponential moving averages and the linear recurrent layers of state-space models.
//!
//! The inputs are the crate's counter-based random numbers, mapped lazily: a in [0.9, 1) (a
//! stable, slowly forgetting filter), b in [-1, 1). The result is checked against a sequential
//! f64 loop on the host (exits non-zero on a mismatch), and the scan is timed twice: on stored
//! inputs (the bandwidth figure) and on the lazy inputs, generated inside the scan's kernels.
//!
//!     cargo run --release --example linear_recurrence [-- --n N --seed N]
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
        seed: common::flag("--seed", 2024),
    }
}

type Affine = (Expr<f32>, Expr<f32>);

/// `p` then `q`: the affine map x -> q.a (p.a x + p.b) + q.b. `p` holds the earlier elements.
fn compose((a1, b1): Affine, (a2, b2): Affine) -> Affine {
    (a1 * a2, a2 * b1 + b2)
}

/// The coefficients: a[i] = 0.9 + 0.1 u and b[i] = 2 u' - 1 for two independent uniform
/// sequences (lazy: nothing is stored until something reads them). b is exact; a rounds to
/// 1.0 for the largest few u (still a stable recurrence: |h| grows at most by |b| there).
fn inputs(dev: &Device, n: usize, seed: u64) -> devseq::Result<(DeviceSeq<f32>, DeviceSeq<f32>)> {
    let a = DeviceSeq::<f32>::random_uniform(dev, n, seed)?.map(|u| u * 0.1 + 0.9)?;
    let b =
        DeviceSeq::<f32>::random_uniform(dev, n, seed.wrapping_add(1))?.map(|u| u * 2.0 - 1.0)?;
    Ok((a, b))
}

fn main() -> devseq::Result<()> {
    let dev = Device::auto()?;
    let Args { n, seed } = args(dev.is_cuda());
    println!("device: {}", dev.name());
    println!("h[i] = a[i] h[i-1] + b[i], n = {n}, a in [0.9, 1), b in [-1, 1), seed {seed}");

    let (a, b) = inputs(&dev, n, seed)?;
    let lazy = DeviceSeq::zip(&a, &b)?;
    // Stored inputs, so that the first timing measures the scan, not the random generator.
    let stored = lazy.copy()?;

    // Warm up: compiles the kernels (or loads them from the disk cache) on a GPU.
    let m = n.min(4096);
    stored.slice(..m).inclusive_scan_with(compose)?.to_vec()?;
    let (wa, wb) = inputs(&dev, m, seed)?;
    DeviceSeq::zip(&wa, &wb)?
        .inclusive_scan_with(compose)?
        .to_vec()?;
    dev.finish_compiling(); // their optimized form (the first is compiled quickly)

    let mut out = None;
    let ms = dev.time(|| {
        out = Some(stored.inclusive_scan_with(compose)?);
        Ok(())
    })?;
    let ms_lazy = dev.time(|| lazy.inclusive_scan_with(compose).map(|_| ()))?;
    // Component 0 is the product a[0] ... a[i] (the map's slope); component 1 is h[i].
    let (_, h) = out.expect("the scan ran").unzip();
    let h = h.to_vec()?;

    // The sequential loop, in f64, over the same f32 inputs (the lazy sequences give the same
    // bits every time they are read). s[i] = a[i] s[i-1] + |b[i]| is the recurrence over
    // |b|: h[i] is the sum of the terms b[j] a[j+1] ... a[i], and s[i] is the sum of their
    // magnitudes, so |h[i]| <= s[i], and s[i] is the scale that the rounding errors of any
    // order of evaluation are proportional to.
    let (av, bv) = (a.to_vec()?, b.to_vec()?);
    let (mut want, mut scale) = (0.0f64, 0.0f64);
    let mut max_err = 0.0f64;
    let mut max_ratio = 0.0f64;
    let mut worst = 0usize;
    for i in 0..n {
        want = av[i] as f64 * want + bv[i] as f64;
        scale = av[i] as f64 * scale + (bv[i] as f64).abs();
        let err = (h[i] as f64 - want).abs();
        max_err = max_err.max(err);
        let den = want.abs() + scale;
        let ratio = if den > 0.0 {
            err / den
        } else if err > 0.0 {
            f64::INFINITY
        } else {
            0.0
        };
        if ratio > max_ratio {
            max_ratio = ratio;
            worst = i;
        }
    }

    // Tolerance. The scan reassociates the recurrence: a chunk's composed map is applied to the
    // prefix of the chunks before it, instead of one step after another, so the f32 result
    // differs from the sequential order by rounding only. Every f32 operation rounds with
    // relative error at most u = 2^-24 (6e-8). The error committed at step j reaches h[i]
    // damped by a[j+1] ... a[i], and E[ln a] = -0.052 for a uniform in [0.9, 1): errors are
    // forgotten after some 20 steps (1/0.052), each step adding at most two roundings of
    // magnitude <= u (|h| + s). The composed slopes a[j] ... a[i] of a chunk carry a relative
    // error of at most (i - j) u, but multiply a factor that decays as e^(-0.052 (i - j)), so
    // they add at most max_k k e^(-0.052 k) u = 7.1 u. Together: |err| <= about
    // (2 * 20 + 8) u (|h| + s) = 48 u (|h| + s) = 2.9e-6 (|h| + s), with f64 rounding in the
    // reference negligible. We allow 1e-5: any real mismatch (a wrong operand order, a lost
    // chunk prefix) is an error of order |h| + s itself.
    let tol = 1e-5;
    let u = f32::EPSILON as f64 / 2.0;
    println!(
        "max |h - h_f64| = {max_err:.3e}; max |h - h_f64| / (|h_f64| + s) = {max_ratio:.3e} \
         ({:.1} u, at i = {worst}; tolerance {tol:.0e} = {:.0} u)",
        max_ratio / u,
        tol / u
    );

    // Bandwidth: a recurrence must at least read a[i] and b[i] and write h[i], 12 bytes per
    // element in f32; that is the figure below (as CUB's benchmarks count bytes). The scan
    // moves more: it also writes the slope column (4 bytes), and it reads its input twice
    // (the chunk totals, then the scan of each chunk from its prefix), 24 bytes per element.
    // On the lazy inputs it reads nothing and writes 8 bytes, but draws each random number
    // twice.
    let bytes = 12.0 * n as f64;
    println!(
        "scan of stored inputs: {ms:.3} ms, {:.3} GB/s effective (12 bytes/element: read a, b; write h)",
        if ms > 0.0 { bytes / ms / 1e6 } else { 0.0 }
    );
    println!(
        "scan of lazy inputs (random numbers drawn in the scan's kernels): {ms_lazy:.3} ms, \
         {:.1} M elements/s",
        if ms_lazy > 0.0 {
            n as f64 / ms_lazy / 1e3
        } else {
            0.0
        }
    );
    if n > 0 {
        println!(
            "h[0] = {}, h[{}] = {} (f64 loop: {want:.6})",
            h[0],
            n - 1,
            h[n - 1]
        );
    }

    if max_ratio > tol || h.iter().any(|v| !v.is_finite()) {
        eprintln!("MISMATCH: the scan differs from the sequential loop beyond rounding");
        std::process::exit(1);
    }
    println!("ok: the scan matches the sequential f64 loop within rounding");
    Ok(())
}
