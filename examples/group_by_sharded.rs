//! A distributed group-by: `--n` sales (a customer and an amount in cents each) sharded over
//! the group, the total of every customer by `ShardedSeq::group_by_key` (the keys partitioned
//! among the shards by one all-to-all exchange), the five best customers by `top_k`, and a
//! check against a plain loop over the same sales on every rank.
//!
//! The group: every GPU of this host (two host devices where there is none), or the processes
//! a launcher starts (one a GPU; `DEVSEQ_DEVICE=cpu` for host devices):
//!
//!     cargo run --release --example group_by_sharded [-- --n N --customers C]
//!     cargo build --release --example group_by_sharded
//!     for r in 0 1 2; do RANK=$r WORLD_SIZE=3 LOCAL_RANK=$r MASTER_ADDR=127.0.0.1 \
//!       MASTER_PORT=29500 DEVSEQ_DEVICE=cpu target/release/examples/group_by_sharded & done; wait
//!
//! Exits non-zero where the check fails.

mod common;

use devseq::{DeviceSeq, Expr, Op, ShardedSeq};

/// A 64-bit mixer (splitmix64's finalizer).
fn mix(x: Expr<u64>) -> Expr<u64> {
    let x = (x ^ (x >> 30u32)) * 0xbf58476d1ce4e5b9u64;
    let x = (x ^ (x >> 27u32)) * 0x94d049bb133111ebu64;
    x ^ (x >> 31u32)
}

/// The same on the host, for the check.
fn mix_host(x: u64) -> u64 {
    let x = (x ^ (x >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
    let x = (x ^ (x >> 27)).wrapping_mul(0x94d049bb133111eb);
    x ^ (x >> 31)
}

fn main() -> devseq::Result<()> {
    let group = common::group()?;
    let n: usize = common::flag("--n", 1 << 22);
    let customers: u64 = common::flag("--customers", 100_000);
    if customers == 0 {
        eprintln!("--customers must be at least 1");
        std::process::exit(2);
    }
    // Sale `i`: customer `mix(i) % customers`, amount `mix(i + n) % 10000` cents; each process
    // makes its own shards of the even split, on their devices (lazily, inside the first read).
    let g = group.len();
    let share = |k: usize| n / g + usize::from(k < n % g);
    let first = group.first_shard();
    let mut start: usize = (0..first).map(share).sum();
    let (mut who, mut cents) = (Vec::new(), Vec::new());
    for (i, d) in group.devices().iter().enumerate() {
        let (len, at, n64) = (share(first + i), start as u64, n as u64);
        let pos = DeviceSeq::<u64>::sequence(d, len)?;
        who.push(pos.map(move |p| (mix(p + at) % customers).cast::<u32>())?);
        cents.push(pos.map(move |p| mix(p + at + n64) % 10_000u64)?);
        start += len;
    }
    let who = ShardedSeq::from_local(&group, who)?;
    let cents = ShardedSeq::from_local(&group, cents)?;

    let t = std::time::Instant::now();
    let (keys, totals) = who.group_by_key(&cents, Op::Add)?;
    let secs = t.elapsed().as_secs_f64();
    let (best, at) = totals.top_k::<u64>(5.min(totals.len()))?;
    let keys_all = keys.to_vec()?;
    let totals_all = totals.to_vec()?;
    if group.rank() == 0 {
        println!(
            "{n} sales of {} customers over {g} shards ({} processes): grouped in {secs:.3} s",
            keys_all.len(),
            group.ranks()
        );
        for (total, p) in best.to_vec()?.into_iter().zip(at.to_vec()?) {
            println!(
                "  customer {:>8}: {:>10.2}",
                keys_all[p as usize],
                total as f64 / 100.0
            );
        }
    }

    // The check: the same sales summed by a plain loop.
    let mut want = std::collections::BTreeMap::<u32, u64>::new();
    for i in 0..n as u64 {
        let c = (mix_host(i) % customers) as u32;
        *want.entry(c).or_default() += mix_host(i + n as u64) % 10_000;
    }
    let ok = keys_all.iter().copied().eq(want.keys().copied())
        && totals_all.iter().copied().eq(want.values().copied());
    println!(
        "rank {}: group-by {}",
        group.rank(),
        if ok { "ok" } else { "WRONG" }
    );
    if !ok {
        std::process::exit(1);
    }
    Ok(())
}
