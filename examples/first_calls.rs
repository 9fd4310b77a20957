//! First calls: how long a fresh process waits for the first result of each kernel family,
//! with an empty kernel cache (every kernel compiled by NVRTC, in its quick form) and with the
//! disk cache that the cold runs filled.
//!
//! Each sample is a child process (this program run again with `--family NAME`): it opens the
//! device, uploads its input (not timed), then times the family's first call up to its result
//! on the host. The parent runs `--runs` cold children a family (each with a new, empty
//! `DEVSEQ_CACHE_DIR`) and as many warm ones (sharing one directory that a first child filled),
//! and prints the median and the 90th percentile of each.
//!
//!     cargo run --release --example first_calls [-- --runs 10]
//!
//! On the host backend there is nothing to compile; the lines then show the host's first calls.

mod common;

use devseq::{Device, DeviceSeq, Op};
use std::process::Command;
use std::time::Instant;

/// The families, one first call each, over 2^20 elements.
const FAMILIES: [&str; 12] = [
    "map",
    "reduce",
    "scan",
    "segmented_scan",
    "gather",
    "scatter",
    "sort",
    "sort_pairs",
    "histogram",
    "compact",
    "search",
    "merge",
];

/// One family's first call, from `input` (uploaded), to its result on the host.
fn first_call(dev: &Device, family: &str) -> devseq::Result<f64> {
    let n = 1usize << 20;
    let keys: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2654435761)).collect();
    let xs = DeviceSeq::from_slice(dev, &keys)?;
    let perm = DeviceSeq::from_slice(dev, &keys.iter().map(|k| k % n as u32).collect::<Vec<_>>())?;
    let sorted = DeviceSeq::<u32>::sequence(dev, n)?.copy()?;
    dev.synchronize()?;
    let t = Instant::now();
    match family {
        "map" => drop(xs.map(|x| x * 3u32 + 1u32)?.copy()?.to_vec()?),
        "reduce" => drop(xs.reduce(Op::Add)?),
        "scan" => drop(xs.inclusive_scan(Op::Add)?.to_vec()?),
        "segmented_scan" => {
            let heads = xs.map(|x| (x & 15u32).eq(0u32))?;
            drop(xs.segmented_inclusive_scan(&heads, Op::Add)?.to_vec()?)
        }
        "gather" => drop(xs.gather(&perm)?.copy()?.to_vec()?),
        "scatter" => drop(xs.scatter(&perm, &xs)?.to_vec()?),
        "sort" => drop(xs.sort()?.to_vec()?),
        "sort_pairs" => drop(xs.sort_pairs(&perm)?.0.to_vec()?),
        "histogram" => drop(xs.histogram(256, 0, u32::MAX)?.to_vec()?),
        "compact" => drop(xs.compact(&xs.map(|x| x.lt(1u32 << 31))?)?.to_vec()?),
        "search" => drop(sorted.lower_bound::<u32>(&xs)?.to_vec()?),
        "merge" => drop(sorted.merge(&sorted)?.to_vec()?),
        other => {
            eprintln!("no family {other}");
            std::process::exit(2);
        }
    }
    Ok(t.elapsed().as_secs_f64() * 1e3)
}

/// The median and the 90th percentile of `t`.
fn spread(mut t: Vec<f64>) -> (f64, f64) {
    t.sort_by(f64::total_cmp);
    let at = |q: f64| t[((t.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.9))
}

/// One child's milliseconds for `family` with the cache in `dir`.
fn child(family: &str, dir: &std::path::Path) -> f64 {
    let out = Command::new(std::env::current_exe().expect("this program"))
        .args(["--family", family])
        .env("DEVSEQ_CACHE_DIR", dir)
        .output()
        .expect("run a child");
    let text = String::from_utf8_lossy(&out.stdout);
    text.trim().parse().unwrap_or_else(|_| {
        eprintln!(
            "{family}: the child said {text:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::process::exit(1)
    })
}

fn main() -> devseq::Result<()> {
    if let Some(family) = common::value("--family") {
        let dev = Device::auto()?;
        println!("{:.3}", first_call(&dev, &family)?);
        return Ok(());
    }
    let runs: usize = common::flag("--runs", 5).max(1);
    let dev = Device::auto()?;
    println!(
        "first calls on {} ({runs} children a line), milliseconds",
        dev.name()
    );
    println!(
        "{:<16} {:>10} {:>10} {:>10} {:>10}",
        "family", "cold p50", "cold p90", "warm p50", "warm p90"
    );
    let root = std::env::temp_dir().join(format!("devseq-first-calls-{}", std::process::id()));
    for family in FAMILIES {
        let cold: Vec<f64> = (0..runs)
            .map(|i| child(family, &root.join(format!("{family}-cold-{i}"))))
            .collect();
        let warm_dir = root.join(format!("{family}-warm"));
        child(family, &warm_dir); // fills the disk cache
        let warm: Vec<f64> = (0..runs).map(|_| child(family, &warm_dir)).collect();
        let ((c50, c90), (w50, w90)) = (spread(cold), spread(warm));
        println!("{family:<16} {c50:>10.1} {c90:>10.1} {w50:>10.2} {w90:>10.2}");
    }
    let _ = std::fs::remove_dir_all(&root);
    Ok(())
}
