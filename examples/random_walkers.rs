//! Random walkers: `--walkers` walkers take `--steps` steps each, every step uniform in
//! [-1, 1), and we look at where they end. The classic first GPU exercise (each thread keeps
//! its walker's generator state in registers), written as a devseq pipeline: a lazy random
//! sequence of walkers x steps elements, reduced per walker by a segmented reduce whose head
//! flags are lazy too, so the 3.3e9 steps of the default size are never stored.
//!
//! Checks the variance of the final positions against the theory (steps / 3) within sampling
//! error, draws their histogram in the terminal (and with `--svg FILE` as a picture), and
//! prints the time next to the hand-written versions' on their hardware.
//!
//!     cargo run --release --example random_walkers [-- --walkers N --steps N --seed N --svg FILE]
//!
//! Without a GPU the default size is smaller (2^10 walkers x 5000 steps).

mod common;

use devseq::{Device, DeviceSeq, Op};

struct Args {
    walkers: usize,
    steps: usize,
    seed: u64,
    svg: Option<String>,
}

fn args(gpu: bool) -> Args {
    Args {
        walkers: common::flag("--walkers", if gpu { 1 << 16 } else { 1 << 10 }),
        steps: common::flag("--steps", if gpu { 50_000 } else { 5_000 }),
        seed: common::flag("--seed", 12345),
        svg: common::value("--svg"),
    }
}

/// The final position of every walker: the sum of its steps.
fn walk(dev: &Device, walkers: usize, steps: usize, seed: u64) -> devseq::Result<DeviceSeq<f32>> {
    let n = walkers * steps;
    let s = steps as u64;
    // Step k of walker w is element w * steps + k of one random sequence.
    let step = DeviceSeq::<f32>::random_uniform(dev, n, seed)?.map(|u| u * 2.0 - 1.0)?;
    let first = DeviceSeq::<u64>::sequence(dev, n)?.map(move |i| (i % s).eq(0))?;
    step.segmented_reduce(&first, Op::Add)
}

fn bars(hist: &[u64], lo: f64, width: f64) {
    let top = *hist.iter().max().unwrap_or(&1) as f64;
    for (k, &c) in hist.iter().enumerate() {
        let x = lo + width * k as f64;
        let n = (c as f64 / top * 60.0).round() as usize;
        println!("{:>8.1} {:>7} {}", x, c, "#".repeat(n));
    }
}

fn svg(path: &str, hist: &[u64], lo: f64, width: f64, sigma: f64) -> std::io::Result<()> {
    let (w, h) = (800.0, 400.0);
    let top = *hist.iter().max().unwrap_or(&1) as f64;
    let bw = w / hist.len() as f64;
    let total: u64 = hist.iter().sum();
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{}\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
        h + 40.0
    );
    for (k, &c) in hist.iter().enumerate() {
        let bh = c as f64 / top * h;
        s += &format!(
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"steelblue\"/>\n",
            k as f64 * bw,
            h - bh,
            bw * 0.9,
            bh
        );
    }
    // The normal density the central limit theorem predicts, scaled to the bars.
    let mut path_d = String::new();
    for i in 0..=200 {
        let x = lo + (hist.len() as f64 * width) * i as f64 / 200.0;
        let dens =
            (-(x * x) / (2.0 * sigma * sigma)).exp() / (sigma * (std::f64::consts::TAU).sqrt());
        let y = h - dens * total as f64 * width / top * h;
        path_d += &format!(
            "{}{:.1},{:.1} ",
            if i == 0 { "M" } else { "L" },
            i as f64 * w / 200.0,
            y
        );
    }
    s += &format!("<path d=\"{path_d}\" fill=\"none\" stroke=\"crimson\" stroke-width=\"2\"/>\n");
    s += &format!(
        "<text x=\"10\" y=\"{}\" font-family=\"sans-serif\" font-size=\"14\">final positions of \
         {total} walkers; red: normal density of variance steps/3</text>\n</svg>\n",
        h + 28.0
    );
    std::fs::write(path, s)
}

fn main() -> devseq::Result<()> {
    let dev = Device::auto()?;
    let a = args(dev.is_cuda());
    println!("device: {}", dev.name());
    println!(
        "{} walkers x {} steps = {:.3e} steps, each uniform in [-1, 1)",
        a.walkers,
        a.steps,
        (a.walkers * a.steps) as f64
    );
    // Warm up (compiles the kernels), then time the pipeline. The warm-up's 2^21 steps pass
    // the 4 MiB that a lazy segmented reduction's output first holds, so it takes the same
    // path as the timed run (with the count of its first flags) and compiles the same kernels.
    walk(&dev, 2, 1 << 20, a.seed)?.to_vec()?;
    dev.finish_compiling(); // their optimized form (the first is compiled quickly)
    let mut pos = None;
    let ms = dev.time(|| {
        pos = Some(walk(&dev, a.walkers, a.steps, a.seed)?);
        Ok(())
    })?;
    let pos = pos.expect("walk ran");
    let x = pos.to_vec()?;

    // Theory: each step has variance 1/3, so a walker's final position has variance steps / 3.
    // The sample variance of W walkers has a standard error of about var * sqrt(2 / W).
    let w = x.len() as f64;
    let var_theory = a.steps as f64 / 3.0;
    let mean = x.iter().map(|&v| v as f64).sum::<f64>() / w;
    let var = x.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / (w - 1.0);
    let se = var_theory * (2.0 / w).sqrt();
    println!(
        "mean {mean:.3} (theory 0); variance {var:.1} (theory steps/3 = {var_theory:.1}, \
         standard error {se:.1})"
    );
    let sigma = var_theory.sqrt();
    let (bins, lo, hi) = (32usize, -4.0 * sigma, 4.0 * sigma);
    let hist = pos.histogram(bins, lo as f32, hi as f32)?.to_vec()?;
    bars(&hist, lo, (hi - lo) / bins as f64);
    if let Some(p) = &a.svg {
        svg(p, &hist, lo, (hi - lo) / bins as f64, sigma).expect("write the SVG");
        println!("wrote {p}");
    }

    println!(
        "\n{:.2} ms of device time ({:.3} G steps/s) on {}\n\
         for comparison, 2^16 walkers x 50 000 steps by hand (the exercise's own figures):\n\
         \x20 one x86 core                      34 s\n\
         \x20 first CUDA kernel                 3.7 s\n\
         \x20 seeds in shared memory            0.7 s\n\
         \x20 seeds in registers                0.5 s (13 GFlop/s)",
        ms,
        (a.walkers * a.steps) as f64 / ms / 1e6,
        dev.name()
    );

    let ok = (var - var_theory).abs() < 5.0 * se && mean.abs() < 5.0 * sigma / w.sqrt();
    if !ok {
        eprintln!("the variance or mean is outside five standard errors of the theory");
        std::process::exit(1);
    }
    println!("variance within sampling error: ok");
    Ok(())
}
