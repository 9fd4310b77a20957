//! Sharded primitives (`ShardedSeq`) on a group of one device and a group of two, each line
//! timed end to end (the call, then every device of the group synchronized; median of several
//! runs after a warm-up) and printed in the format of benches/primitives.rs, with the speedup
//! of the two-device group over the one-device group in a last column:
//!
//!     NAME n=2^K  MS ms  GELEM Gelem/s  GBPS GB/s  SPEEDUP x
//!
//! NAME is the primitive's name in benches/primitives.rs with `@1` or `@2` for the group size;
//! `inclusive_scan_i32` times the scan as it returns (shards after the first carry a lazy
//! fix-up that their reader fuses), `inclusive_scan_stored_i32` with every shard stored.
//! Devices are those `Device::auto()` gives: two GPUs (GPU 0 and GPU 1, NCCL between them)
//! where there are two, else two clones of the one GPU (which measures the cost of sharding,
//! not a second GPU: the header says so); two host devices on the host. Sizes: 2^28 and 2^30
//! on GPUs, 2^20 and 2^22 on the host; `DEVSEQ_BENCH_LG=24,26` picks others. Inputs are the
//! ones benches/primitives.rs uses (its `hash` mixer of the element index), generated on each
//! shard's device and stored. Arguments other than `--bench` are substrings that select
//! primitives by name.
//!
//! As ranks (a launcher's variables set, one process a GPU: `torchrun --nproc-per-node=gpu
//! --no-python target/release/deps/sharded-*`, or the loop of docs/guide.md), the group is the
//! launcher's: rank 0 times `@1` on its own device alone, then every rank times the group
//! (`@R`, R its shard count) and rank 0 prints the lines.

use devseq::{Device, DeviceGroup, DeviceSeq, Op, Result, ShardedSeq};
use std::time::Instant;

mod common;
use common::{hash, small_int, unit_float};

/// The inputs over one group: element positions, hashed keys, floats in [0, 1), small ints.
struct Inputs {
    idx: ShardedSeq<u32>,
    keys: ShardedSeq<u32>,
    f: ShardedSeq<f32>,
    ints: ShardedSeq<i32>,
}

fn inputs(group: &DeviceGroup, n: usize) -> Result<Inputs> {
    let k = group.len();
    let share = |s: usize| n / k + usize::from(s < n % k);
    let mut start: usize = (0..group.first_shard()).map(share).sum();
    let mut idx = Vec::with_capacity(group.devices().len());
    for (i, d) in group.devices().iter().enumerate() {
        let len = share(group.first_shard() + i);
        let first = start as u32;
        idx.push(
            DeviceSeq::<u32>::sequence(d, len)?
                .map(move |j| j + first)?
                .copy()?,
        );
        start += len;
    }
    let idx = ShardedSeq::from_local(group, idx)?;
    let keys = copy(&idx.map(hash)?)?;
    let f = copy(&keys.map(unit_float)?)?;
    let ints = copy(&keys.map(small_int)?)?;
    Ok(Inputs { idx, keys, f, ints })
}

/// A stored copy of every shard.
fn copy<T: devseq::Item>(s: &ShardedSeq<T>) -> Result<ShardedSeq<T>> {
    let shards = s
        .shards()
        .iter()
        .map(|x| x.copy())
        .collect::<Result<Vec<_>>>()?;
    ShardedSeq::from_local(s.group(), shards)
}

struct Bench {
    reps: usize,
    filter: Vec<String>,
}

impl Bench {
    fn selected(&self, name: &str) -> bool {
        self.filter.is_empty() || self.filter.iter().any(|s| name.contains(s.as_str()))
    }

    /// The median milliseconds of `f` on `group`, end to end: the call, then every device
    /// of the group synchronized.
    fn time(&self, group: &DeviceGroup, f: &dyn Fn() -> Result<()>) -> Result<f64> {
        let once = || -> Result<f64> {
            let t = Instant::now();
            f()?;
            for d in group.devices() {
                d.synchronize()?;
            }
            Ok(t.elapsed().as_secs_f64() * 1e3)
        };
        once()?; // warm-up: compiles and caches the kernels, fills the memory pools
        for d in group.devices() {
            d.finish_compiling();
        }
        let mut t: Vec<f64> = (0..self.reps).map(|_| once()).collect::<Result<_>>()?;
        t.sort_by(f64::total_cmp);
        Ok(t[t.len() / 2])
    }
}

fn line(name: &str, k: usize, lg: u32, ms: f64, bytes_per_elem: f64, speedup: f64) {
    let n = (1u64 << lg) as f64;
    println!(
        "{:<30} n=2^{:<2} {:10.4} ms {:9.2} Gelem/s {:8.1} GB/s {:6.2} x",
        format!("{name}@{k}"),
        lg,
        ms,
        n / ms / 1e6,
        n * bytes_per_elem / ms / 1e6,
        speedup
    );
}

/// One primitive over the inputs of a group.
type Case = (&'static str, f64, fn(&Inputs) -> Result<()>);

fn cases() -> Vec<Case> {
    vec![
        ("reduce_add_f32", 4.0, |x| x.f.reduce(Op::Add).map(drop)),
        // The scan as returned: later shards carry a lazy fix-up that their reader fuses.
        ("inclusive_scan_i32", 8.0, |x| {
            x.ints.inclusive_scan(Op::Add).map(drop)
        }),
        // The same with every shard stored (the fix-up as a pass of its own).
        ("inclusive_scan_stored_i32", 8.0, |x| {
            let s = x.ints.inclusive_scan(Op::Add)?;
            for shard in s.shards().iter().filter(|s| !s.is_stored()) {
                shard.copy()?;
            }
            Ok(())
        }),
        ("histogram_u32", 4.0, |x| {
            x.keys.map(|k| k & 255u32)?.histogram(256, 0, 256).map(drop)
        }),
        ("sort_u32", 8.0, |x| x.keys.sort().map(drop)),
        ("sort_pairs_u32", 16.0, |x| {
            x.keys.sort_pairs(&x.idx).map(drop)
        }),
    ]
}

/// Times every selected case on `group` at 2^`lg` (`base`: the `@1` times, which this run
/// records where `k == 1`), printing where `print`.
fn run(
    b: &Bench,
    group: &DeviceGroup,
    lg: u32,
    base: &mut std::collections::HashMap<&'static str, f64>,
    print: bool,
) -> Result<()> {
    let k = group.len();
    let x = inputs(group, 1usize << lg)?;
    for (name, bytes, f) in cases() {
        if !b.selected(name) {
            continue;
        }
        let ms = b.time(group, &|| f(&x))?;
        if k == 1 {
            base.insert(name, ms);
        }
        let speedup = base.get(name).map_or(f64::NAN, |m| m / ms);
        if print {
            line(name, k, lg, ms, bytes, speedup);
        }
    }
    Ok(())
}

fn main() -> Result<()> {
    let launched = ["RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID"]
        .iter()
        .any(|v| std::env::var_os(v).is_some());
    let ranks = if launched {
        Some(DeviceGroup::from_env()?)
    } else {
        None
    };
    let dev = match &ranks {
        Some(g) => g.devices()[0].clone(),
        None => Device::auto()?,
    };
    let (filter, lgs) = common::args(if dev.is_cuda() { &[28, 30] } else { &[20, 22] });
    let reps = if dev.is_cuda() { 7 } else { 5 };
    let b = Bench { reps, filter };
    let one = DeviceGroup::new(std::slice::from_ref(&dev))?;
    if let Some(group) = ranks {
        let lead = group.rank() == 0;
        if lead {
            println!(
                "# devseq {} sharded as {} ranks: @1 = {:?} alone, @{} = the group",
                env!("CARGO_PKG_VERSION"),
                group.ranks(),
                one,
                group.len()
            );
        }
        for lg in lgs {
            let mut base = std::collections::HashMap::new();
            if lead {
                run(&b, &one, lg, &mut base, true)?;
            }
            run(&b, &group, lg, &mut base, lead)?;
        }
        return Ok(());
    }
    let second = if dev.is_cuda() {
        Device::cuda(1).ok()
    } else {
        None
    };
    let two = match &second {
        Some(d) => DeviceGroup::new(&[dev.clone(), d.clone()])?,
        None => DeviceGroup::new(&[dev.clone(), dev.clone()])?,
    };
    println!(
        "# devseq {} sharded: @1 = {:?}, @2 = {:?}, NCCL {}",
        env!("CARGO_PKG_VERSION"),
        one,
        two,
        two.nccl_version().unwrap_or_else(|| "not used".into())
    );
    if dev.is_cuda() && second.is_none() {
        println!("# one GPU: @2 is two shards on it (no NCCL): its speedup is sharding's cost");
    }
    for lg in lgs {
        // One group's inputs at a time, so that both fit where one GPU holds them.
        let mut base = std::collections::HashMap::new();
        for group in [&one, &two] {
            run(&b, group, lg, &mut base, true)?;
        }
    }
    Ok(())
}
