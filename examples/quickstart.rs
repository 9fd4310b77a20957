//! A small pipeline: generate, map, reduce and scan; prints the device it ran on and the cost
//! of compiling a kernel (the first evaluation of a map) against running a cached one, and
//! checks its results against plain loops (exits non-zero if they differ). `sequence` and
//! `map` are lazy: `copy()` evaluates them, and the reductions below evaluate them again inside
//! their own kernels.
//!
//!     cargo run --release --example quickstart

use devseq::{Device, DeviceSeq, Op};
use std::time::Instant;

fn main() -> devseq::Result<()> {
    let dev = Device::auto()?;
    println!("device: {}", dev.name());

    let n = 1 << 20;
    let xs = DeviceSeq::<f32>::sequence(&dev, n)?;

    // The first map evaluated compiles its kernel (or loads it from the disk cache); later
    // ones reuse it.
    let t = Instant::now();
    let ys = xs.map(|x| (x * 0.5).floor() * 2.0 + 1.0)?.copy()?;
    dev.synchronize()?;
    let first = t.elapsed();
    let small = DeviceSeq::<f32>::sequence(&dev, 1 << 10)?;
    dev.synchronize()?;
    let t = Instant::now();
    let reps = 1000;
    for _ in 0..reps {
        small.map(|x| (x * 0.5).floor() * 2.0 + 1.0)?.copy()?;
    }
    dev.synchronize()?;
    let cached = t.elapsed() / reps;
    println!(
        "first map (compile or disk cache): {:.1} ms; cached map of 2^10 elements: {:.1} us on the host",
        first.as_secs_f64() * 1e3,
        cached.as_secs_f64() * 1e6
    );

    let total = ys.reduce(Op::Add)?;
    let largest = ys.reduce(Op::Max)?;
    let prefix = ys.cast::<i64>()?.inclusive_scan(Op::Add)?;
    let last = prefix.slice(n - 1..).to_vec()?[0];

    // The same with plain loops.
    let host: Vec<f32> = (0..n)
        .map(|i| (i as f32 * 0.5).floor() * 2.0 + 1.0)
        .collect();
    let want_total: f64 = host.iter().map(|&v| v as f64).sum();
    let want_last: i64 = host.iter().map(|&v| v as i64).sum();
    let want_max = host.iter().cloned().fold(f32::MIN, f32::max);
    println!("sum {total}, max {largest}, last prefix {last}");
    // An f32 sum of a million values carries rounding error of the order 1e-5 relative.
    let ok = (total as f64 - want_total).abs() <= want_total * 1e-4
        && largest == want_max
        && last == want_last
        && ys.to_vec()? == host;
    if !ok {
        eprintln!("MISMATCH: want sum {want_total}, max {want_max}, last prefix {want_last}");
        std::process::exit(1);
    }
    println!("ok: results match the plain loops");
    Ok(())
}
