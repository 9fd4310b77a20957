//! Sorts `--n` 32-bit keys sharded over every GPU of the host (two host devices where there is
//! no GPU), or over the processes a launcher starts, checks the result, and reports the keys
//! sorted a second.
//!
//! The keys are a 64-bit mix of their position, generated on each shard's device inside the
//! sort's first read (a lazy sequence: no memory for the input). The check:
//!
//! - global order: no shard holds a key below its predecessor (one fused pass a shard), and the
//!   last key of each shard is at most the first of the next;
//! - the multiset: the count, and two order-independent fingerprints (the wrapping sums of two
//!   64-bit mixes of every key) of the sorted shards equal those of the input.
//!
//! The default size on two or more GPUs is more keys than one of them can sort: one GPU's
//! radix sort of n keys holds about 12 bytes a key (the sorted keys and its temporaries),
//! more than the GPU has at n = memory / 8, while each of g GPUs holds about 12 n / g bytes
//! of it plus the exchange's receive buffer. On one GPU the default is 2^28, on the host 2^22.
//!
//!     cargo run --release --example sharded_sort [-- --n N]
//!
//! As ranks, one process a GPU (or, with `DEVSEQ_DEVICE=cpu`, a host device each), e.g. two
//! processes on this host:
//!
//!     cargo build --release --example sharded_sort
//!     for r in 0 1; do RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r MASTER_ADDR=127.0.0.1 \
//!       MASTER_PORT=29500 target/release/examples/sharded_sort & done; wait
//!
//! or `torchrun --nproc-per-node=2 --no-python target/release/examples/sharded_sort`.
//!
//! Exits non-zero where a check fails.

mod common;

use devseq::{Device, DeviceSeq, Expr, Op, ShardedSeq};
use std::time::Instant;

/// A 64-bit mixer (splitmix64's finalizer).
fn mix(x: Expr<u64>) -> Expr<u64> {
    let x = (x ^ (x >> 30u32)) * 0xbf58476d1ce4e5b9u64;
    let x = (x ^ (x >> 27u32)) * 0x94d049bb133111ebu64;
    x ^ (x >> 31u32)
}

/// The keys of positions `start..start + len`: the high half of the mixed position.
fn keys(dev: &Device, start: u64, len: usize) -> devseq::Result<DeviceSeq<u32>> {
    DeviceSeq::<u64>::sequence(dev, len)?.map(move |i| (mix(i + start) >> 32u32).cast::<u32>())
}

/// Two fingerprints of the multiset of keys: wrapping sums of two mixes of each key.
fn fingerprints(s: &ShardedSeq<u32>) -> devseq::Result<(u64, u64)> {
    let a = s.map(|k| mix(k.cast::<u64>()))?.reduce(Op::Add)?;
    let b = s
        .map(|k| mix(k.cast::<u64>() ^ 0x5bd1e9955bd1e995u64))?
        .reduce(Op::Add)?;
    Ok((a, b))
}

/// Whether the sharded keys are in order, within and across shards (of every process).
fn in_order(s: &ShardedSeq<u32>) -> devseq::Result<bool> {
    // Each shard: whether it is in order, and its first and last keys (where it has any).
    let mut ends = Vec::new();
    for shard in s.local_shards() {
        let n = shard.len();
        let mut e = vec![0u64; 3];
        if n > 0 {
            let descents = shard
                .slice(..n - 1)
                .zip_map(&shard.slice(1..), |a, b| a.gt(b).cast::<u64>())?
                .reduce(Op::Add)?;
            let first = shard.slice(..1).to_vec()?[0] as u64;
            let last = shard.slice(n - 1..).to_vec()?[0] as u64;
            e = vec![1 + u64::from(descents != 0), first, last];
        }
        ends.push(DeviceSeq::from_slice(shard.device(), &e)?);
    }
    // Every shard's, on every rank.
    let ends = ShardedSeq::from_local(s.group(), ends)?.to_vec()?;
    let mut last: Option<u64> = None;
    for e in ends.chunks(3) {
        match e[0] {
            0 => continue,
            2 => return Ok(false),
            _ if last.is_some_and(|l| l > e[1]) => return Ok(false),
            _ => last = Some(e[2]),
        }
    }
    Ok(true)
}

fn main() -> devseq::Result<()> {
    let group = common::group()?;
    let dev = group.devices()[0].clone();
    let default = if !dev.is_cuda() {
        1 << 22
    } else if group.len() == 1 {
        1 << 28
    } else {
        let (total, _) = dev.memory()?;
        (total / 8) >> 20 << 20
    };
    let n: usize = common::flag("--n", default);
    println!(
        "rank {} of {}: sorting {n} u32 keys ({:.1} GB) on {:?} (NCCL {})",
        group.rank(),
        group.ranks(),
        n as f64 * 4e-9,
        group,
        group.nccl_version().unwrap_or_else(|| "not used".into())
    );
    // This process's shards of the even split: shard `first + i` of the group.
    let g = group.len();
    let share = |k: usize| n / g + usize::from(k < n % g);
    let first = group.first_shard();
    let mut start: usize = (0..first).map(share).sum();
    let mut shards = Vec::with_capacity(group.devices().len());
    for (i, d) in group.devices().iter().enumerate() {
        let len = share(first + i);
        shards.push(keys(d, start as u64, len)?);
        start += len;
    }
    let input = ShardedSeq::from_local(&group, shards)?;
    let want = fingerprints(&input)?;

    let t = Instant::now();
    let sorted = input.sort()?;
    for d in group.devices() {
        d.synchronize()?;
    }
    let secs = t.elapsed().as_secs_f64();
    let lens: Vec<usize> = sorted.local_shards().iter().map(|s| s.len()).collect();
    println!(
        "sorted in {:.3} s: {:.3} Gkeys/s; this process's output shards {lens:?}",
        secs,
        n as f64 / secs * 1e-9
    );

    let ordered = in_order(&sorted)?;
    let same = sorted.len() == n && fingerprints(&sorted)? == want;
    println!(
        "global order: {}; multiset of keys: {}",
        if ordered { "ok" } else { "WRONG" },
        if same { "ok" } else { "WRONG" }
    );
    if !(ordered && same) {
        std::process::exit(1);
    }
    Ok(())
}
