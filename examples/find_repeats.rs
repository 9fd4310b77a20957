//! Given a sequence, the indices i where a[i] == a[i+1], composed from devseq primitives:
//! neighbours compared through two views of the same storage (no copy), then compaction of
//! the positions whose comparison holds.
//!
//!     cargo run --release --example find_repeats [-- --len N --seed S]
//!
//! The input is sorted random values, so runs of repeats are common. The answer is checked
//! against a plain loop; the example exits non-zero where they differ.

use devseq::{Device, DeviceSeq};
use std::time::Instant;

fn arg(name: &str, default: u64) -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The positions i with a[i] == a[i+1].
fn find_repeats(a: &DeviceSeq<u32>) -> devseq::Result<DeviceSeq<u32>> {
    let n = a.len();
    if n < 2 {
        return DeviceSeq::from_slice(a.device(), &[]);
    }
    let equal = a.slice(..n - 1).zip_map(&a.slice(1..), |x, y| x.eq(y))?;
    equal.nonzero_indices::<u32>()
}

fn main() -> devseq::Result<()> {
    let n = arg("--len", 10_000_000) as usize;
    let mut seed = arg("--seed", 42);
    let dev = Device::auto()?;
    println!("device: {}, length {n}, seed {seed}", dev.name());

    // Sorted random values below n / 2: about half the neighbours repeat.
    let mut data: Vec<u32> = (0..n)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % (n as u64 / 2 + 1)) as u32
        })
        .collect();
    data.sort_unstable();
    let a = DeviceSeq::from_slice(&dev, &data)?;

    find_repeats(&a)?; // warm-up: compiles the kernels
    dev.finish_compiling(); // their optimized form (the first is compiled quickly)
    dev.synchronize()?;
    let t = Instant::now();
    let idx = find_repeats(&a)?;
    dev.synchronize()?;
    let took = t.elapsed();
    let got = idx.to_vec()?;

    let want: Vec<u32> = (0..n.saturating_sub(1))
        .filter(|&i| data[i] == data[i + 1])
        .map(|i| i as u32)
        .collect();
    println!(
        "{} repeats; first: {:?}; {:.3} ms",
        got.len(),
        &got[..got.len().min(8)],
        took.as_secs_f64() * 1e3
    );
    if got != want {
        eprintln!("MISMATCH: the plain loop finds {} repeats", want.len());
        std::process::exit(1);
    }
    println!("ok: matches the plain loop");
    Ok(())
}
