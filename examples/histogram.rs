//! The histogram of a sample, two ways: `histogram`, and the composition of primitives
//! (bin index by map, sort, head flags, segmented reduce of ones, scatter into the bins).
//! Shows they agree, draws the bars in the terminal, and with `--svg FILE` writes them as
//! an SVG picture. Checked against a plain loop; exits non-zero where anything differs.
//!
//!     cargo run --release --example histogram [-- --svg hist.svg]

use devseq::{Device, DeviceSeq, Op};

const BINS: usize = 24;
const LO: f32 = -4.0;
const HI: f32 = 4.0;

/// Counts per bin from primitives: each value's bin (out of range: BINS), sorted, runs
/// counted by a segmented reduce, and the counts scattered to their bins.
fn composed(xs: &DeviceSeq<f32>) -> devseq::Result<DeviceSeq<u64>> {
    let dev = xs.device();
    let bins = xs.map(|x| {
        let inside = x.ge(LO) & x.lt(HI);
        let b = ((x - LO) / (HI - LO) * BINS as f32)
            .floor()
            .cast::<u32>()
            .min(BINS as u32 - 1);
        devseq::Expr::select(inside, b, BINS as u32)
    })?;
    let sorted = bins.sort()?;
    let heads = sorted.head_flags()?;
    let ones = DeviceSeq::filled(dev, 1u64, xs.len())?;
    let counts = ones.segmented_reduce(&heads, Op::Add)?;
    let which = sorted.compact(&heads)?;
    let zeros = DeviceSeq::filled(dev, 0u64, BINS + 1)?;
    let all = counts.scatter(&which, &zeros)?;
    Ok(all.slice(..BINS))
}

fn main() -> devseq::Result<()> {
    let dev = Device::auto()?;
    println!("device: {}", dev.name());
    // A bell-shaped sample: the sum of four uniforms, centred (Irwin-Hall).
    let n = 1 << 20;
    let mut s = 0x2545F4914F6CDD1Du64;
    let mut uniform = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 40) as f32 / (1u64 << 24) as f32
    };
    let sample: Vec<f32> = (0..n)
        .map(|_| (uniform() + uniform() + uniform() + uniform() - 2.0) * 2.5)
        .collect();
    let xs = DeviceSeq::from_slice(&dev, &sample)?;

    let direct = xs.histogram(BINS, LO, HI)?.to_vec()?;
    let via_sort = composed(&xs)?.to_vec()?;
    let mut want = vec![0u64; BINS];
    for &x in &sample {
        if (LO..HI).contains(&x) {
            let b = (((x - LO) / (HI - LO) * BINS as f32).floor() as usize).min(BINS - 1);
            want[b] += 1;
        }
    }

    let top = *want.iter().max().unwrap_or(&1) as f64;
    for (b, &c) in direct.iter().enumerate() {
        let lo = LO + (HI - LO) * b as f32 / BINS as f32;
        let bar = "#".repeat((c as f64 / top * 60.0).round() as usize);
        println!("{lo:6.2} {c:7} {bar}");
    }
    let args: Vec<String> = std::env::args().collect();
    if let Some(path) = args
        .iter()
        .position(|a| a == "--svg")
        .and_then(|i| args.get(i + 1))
    {
        std::fs::write(path, svg(&direct))
            .map_err(|e| devseq::Error::InvalidArgument(format!("writing {path}: {e}")))?;
        println!("wrote {path}");
    }
    if direct != want || via_sort != want {
        eprintln!("MISMATCH: histogram {direct:?}\ncomposed {via_sort:?}\nloop {want:?}");
        std::process::exit(1);
    }
    println!("ok: histogram, the sort-based composition and the plain loop agree");
    Ok(())
}

fn svg(counts: &[u64]) -> String {
    let (w, h) = (640.0, 320.0);
    let top = *counts.iter().max().unwrap_or(&1) as f64;
    let bw = w / counts.len() as f64;
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\">\n<rect width=\"{w}\" height=\"{h}\" fill=\"white\"/>\n"
    );
    for (i, &c) in counts.iter().enumerate() {
        let bh = c as f64 / top * (h - 20.0);
        out += &format!(
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"steelblue\"/>\n",
            i as f64 * bw + 1.0,
            h - bh,
            bw - 2.0,
            bh
        );
    }
    out + "</svg>\n"
}
