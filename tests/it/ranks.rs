//! Groups of several processes (`DeviceGroup::from_env`, `join`, `join_devices`): every sharded
//! operation against sequential oracles and against one process holding all the shards (bit
//! for bit), in groups of 1 to 4 processes spawned from this test binary (host devices, TCP on
//! loopback), one with two shards a process, and in ranks that are threads of this process;
//! and the failures: a rank that never arrives, one that exits, ranks out of step.
//!
//! A spawned rank is this binary run again with `--exact ranks::rank_process --ignored` and
//! the launcher's variables set; `rank_process` runs the scenario `DEVSEQ_TEST_RANK_SCENARIO`
//! names, and its exit status says whether it held.

use crate::common::*;
use devseq::{Device, DeviceGroup, Element, Error, Op, ShardedSeq};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const SCENARIO: &str = "DEVSEQ_TEST_RANK_SCENARIO";
/// The launchers' variables, removed from what a spawned rank inherits.
const LAUNCH_VARS: [&str; 11] = [
    "RANK",
    "WORLD_SIZE",
    "LOCAL_RANK",
    "MASTER_ADDR",
    "MASTER_PORT",
    "OMPI_COMM_WORLD_RANK",
    "OMPI_COMM_WORLD_SIZE",
    "OMPI_COMM_WORLD_LOCAL_RANK",
    "SLURM_PROCID",
    "SLURM_NTASKS",
    "SLURM_LOCALID",
];

/// The global shard lengths of `n` elements over `k` shards: sharded.rs's layouts (even, all
/// in the first, all in the last, skewed with empty shards between), the even one spelt out.
fn layouts(n: usize, k: usize) -> Vec<Vec<usize>> {
    crate::sharded::layouts(n, k)
        .into_iter()
        .map(|l| l.unwrap_or_else(|| (0..k).map(|i| n / k + usize::from(i < n % k)).collect()))
        .collect()
}

/// `data` over `g` with the global shard `lens`: each process uploads its own shards
/// (`from_local`).
fn local<X: Element>(g: &DeviceGroup, data: &[X], lens: &[usize], first: usize) -> ShardedSeq<X> {
    let mut start: usize = lens[..first].iter().sum();
    let shards = g
        .devices()
        .iter()
        .zip(&lens[first..])
        .map(|(d, &l)| {
            start += l;
            devseq::DeviceSeq::from_slice(d, &data[start - l..start]).expect("from_slice")
        })
        .collect();
    ShardedSeq::from_local(g, shards).expect("from_local")
}

/// The same over `one`, a group of one process with as many shards.
fn whole<X: Element>(one: &DeviceGroup, data: &[X], lens: &[usize]) -> ShardedSeq<X> {
    local(one, data, lens, 0)
}

/// The index of this process's first shard in `g`: every process's device count, learnt
/// from a sharded sequence of one element a device.
fn first_shard(g: &DeviceGroup) -> usize {
    let mine = vec![g.rank() as u32; g.devices().len()];
    let shards = g
        .devices()
        .iter()
        .zip(&mine)
        .map(|(d, r)| devseq::DeviceSeq::from_slice(d, &[*r]).unwrap())
        .collect();
    let owners = ShardedSeq::from_local(g, shards).unwrap().to_vec().unwrap();
    assert_eq!(owners.len(), g.len());
    owners.iter().position(|&r| r == g.rank() as u32).unwrap()
}

/// Every sharded operation over `g` (this process's part of a group of several), against
/// sequential oracles (integers) and against `one` holding every shard (bit for bit).
fn everything<X: T>(g: &DeviceGroup, first: usize, seed: u64, sizes: &[usize]) {
    let one = DeviceGroup::new(&vec![Device::host(); g.len()]).unwrap();
    let mut r = Rng::seeded(seed ^ X::TYPE as u64);
    for &n in sizes {
        for (dist, data) in [
            ("random", draw_vec::<X>(&mut r, n, Gen::Finite)),
            ("few", {
                let few = draw_vec::<X>(&mut r, 3, Gen::Finite);
                (0..n).map(|_| few[r.below(3) as usize]).collect()
            }),
        ] {
            for lens in layouts(n, g.len()) {
                let what = format!("{} n={n} {dist} {lens:?}", X::TYPE.name());
                let xs = local(g, &data, &lens, first);
                let ws = whole(&one, &data, &lens);
                assert_eq!(xs.len(), n, "{what}");
                assert_bits(&xs.to_vec().unwrap(), &data, &format!("{what}: to_vec"));
                for op in [Op::Add, Op::Max] {
                    let got = xs.reduce(op).unwrap();
                    let want = ws.reduce(op).unwrap();
                    assert_eq!(got.to_bits(), want.to_bits(), "{what}: reduce {op:?}");
                    let got = xs.inclusive_scan(op).unwrap().to_vec().unwrap();
                    let want = ws.inclusive_scan(op).unwrap().to_vec().unwrap();
                    assert_bits(&got, &want, &format!("{what}: inclusive_scan {op:?}"));
                }
                let init = X::from_bits(3);
                let got = xs.exclusive_scan(init, Op::Add).unwrap().to_vec().unwrap();
                let want = ws.exclusive_scan(init, Op::Add).unwrap().to_vec().unwrap();
                assert_bits(&got, &want, &format!("{what}: exclusive_scan"));
                // Sorts: the stable order, shard lengths as one process cuts them.
                let (order, sorted) = stable_order(&data);
                let s = xs.sort().unwrap();
                assert_bits(&s.to_vec().unwrap(), &sorted, &format!("{what}: sort"));
                let sl: Vec<usize> = s.local_shards().iter().map(|x| x.len()).collect();
                let wl: Vec<usize> = ws
                    .sort()
                    .unwrap()
                    .shards()
                    .iter()
                    .map(|x| x.len())
                    .collect();
                assert_eq!(
                    sl,
                    wl[first..first + sl.len()],
                    "{what}: sorted shard lengths"
                );
                let pos: Vec<u32> = (0..n as u32).collect();
                let (k, v) = xs.sort_pairs(&local(g, &pos, &lens, first)).unwrap();
                assert_bits(
                    &k.to_vec().unwrap(),
                    &sorted,
                    &format!("{what}: sort_pairs keys"),
                );
                assert_eq!(v.to_vec().unwrap(), order, "{what}: sort_pairs values");
                // Lazy maps over the shards, read by a collective.
                let m = xs.zip_map(&xs, |a, b| a.max(b)).unwrap();
                assert_bits(&m.to_vec().unwrap(), &data, &format!("{what}: zip_map"));
                // The group-by, the gather and the top k, as one process makes them.
                let vals: Vec<u64> = (0..n as u64).map(|i| i * i).collect();
                let (gk, gv) = xs
                    .group_by_key(&local(g, &vals, &lens, first), Op::Add)
                    .unwrap();
                let (wk, wv) = ws
                    .group_by_key(&whole(&one, &vals, &lens), Op::Add)
                    .unwrap();
                assert_bits(&gk.to_vec().unwrap(), &wk.to_vec().unwrap(), &what);
                assert_eq!(
                    gv.to_vec().unwrap(),
                    wv.to_vec().unwrap(),
                    "{what}: group_by_key"
                );
                let idx: Vec<u64> = (0..n as u64).map(|i| (i * 7919 + 3) % n as u64).collect();
                let got = xs.gather(&local(g, &idx, &lens, first)).unwrap();
                let want: Vec<X> = idx.iter().map(|&i| data[i as usize]).collect();
                assert_bits(&got.to_vec().unwrap(), &want, &format!("{what}: gather"));
                let k = n.min(40);
                let (top, at) = xs.top_k::<u32>(k).unwrap();
                if g.rank() == 0 {
                    let (wt, wa) = ws.top_k::<u32>(k).unwrap();
                    assert_bits(&top.to_vec().unwrap(), &wt.to_vec().unwrap(), &what);
                    assert_eq!(at.to_vec().unwrap(), wa.to_vec().unwrap(), "{what}: top_k");
                } else {
                    assert!(top.is_empty() && at.is_empty(), "{what}: top_k off rank 0");
                }
            }
        }
    }
}

/// Integer oracles: sums, scans and histograms of `u32` written plainly.
fn integers(g: &DeviceGroup, first: usize, seed: u64, sizes: &[usize]) {
    let mut r = Rng::seeded(seed);
    for &n in sizes {
        let data: Vec<u32> = (0..n).map(|_| r.next() as u32).collect();
        for lens in layouts(n, g.len()) {
            let xs = local(g, &data, &lens, first);
            let sum = data.iter().fold(0u32, |a, &b| a.wrapping_add(b));
            assert_eq!(xs.reduce(Op::Add).unwrap(), sum, "n={n} {lens:?}");
            let mut acc = 0u32;
            let scan: Vec<u32> = data
                .iter()
                .map(|&x| {
                    acc = acc.wrapping_add(x);
                    acc
                })
                .collect();
            assert_eq!(xs.inclusive_scan(Op::Add).unwrap().to_vec().unwrap(), scan);
            let mut want = vec![0u64; 7];
            for &x in &data {
                if x < 7_000_000 {
                    want[(x / 1_000_000) as usize] += 1;
                }
            }
            let h = xs.histogram(7, 0, 7_000_000).unwrap();
            assert!(h.device().same(&g.devices()[0]));
            assert_eq!(h.to_vec().unwrap(), want, "histogram n={n} {lens:?}");
            // Group-by: each distinct key once, ascending, with the sum of its values.
            let keys: Vec<u32> = data.iter().map(|x| x % 97).collect();
            let vals: Vec<u64> = data.iter().map(|&x| u64::from(x >> 7)).collect();
            let mut want = std::collections::BTreeMap::<u32, u64>::new();
            for (k, v) in keys.iter().zip(&vals) {
                *want.entry(*k).or_default() += v;
            }
            let (gk, gv) = local(g, &keys, &lens, first)
                .group_by_key(&local(g, &vals, &lens, first), Op::Add)
                .unwrap();
            assert_eq!(gk.len(), want.len());
            assert_eq!(
                gk.to_vec().unwrap(),
                want.keys().copied().collect::<Vec<_>>()
            );
            assert_eq!(
                gv.to_vec().unwrap(),
                want.values().copied().collect::<Vec<_>>()
            );
            // Gather by global position, sharded as the indices; an index past the end is an
            // error on every rank.
            let m = n / 2 + 3;
            let idx: Vec<u32> = (0..m).map(|_| r.below(n.max(1) as u64) as u32).collect();
            for il in layouts(m, g.len()) {
                let at = local(g, &idx, &il, first);
                if n == 0 {
                    assert!(matches!(
                        xs.gather(&at),
                        Err(Error::IndexOutOfBounds { .. })
                    ));
                    continue;
                }
                let got = xs.gather(&at).unwrap();
                let want: Vec<u32> = idx.iter().map(|&i| data[i as usize]).collect();
                assert_eq!(got.to_vec().unwrap(), want, "gather n={n} {lens:?} {il:?}");
                let mine: Vec<usize> = got.local_shards().iter().map(|s| s.len()).collect();
                assert_eq!(mine, il[first..first + mine.len()]);
            }
            let mut bad = idx.clone();
            bad[m - 1] = n as u32;
            let e = xs.gather(&local(g, &bad, &layouts(m, g.len())[0], first));
            assert!(
                matches!(e, Err(Error::IndexOutOfBounds { index, len }) if index == n as u64 && len == n),
                "{e:?}"
            );
            // The k largest, ties by ascending position, on rank 0.
            let mut order: Vec<usize> = (0..n).collect();
            order.sort_by(|&a, &b| data[b].cmp(&data[a]).then(a.cmp(&b)));
            for k in [0, n.min(1), n.min(100), n] {
                let (top, at) = xs.top_k::<u64>(k).unwrap();
                if g.rank() == 0 {
                    let want: Vec<u32> = order[..k].iter().map(|&i| data[i]).collect();
                    let want_at: Vec<u64> = order[..k].iter().map(|&i| i as u64).collect();
                    assert_eq!(top.to_vec().unwrap(), want, "top_k {k} of {n} {lens:?}");
                    assert_eq!(at.to_vec().unwrap(), want_at);
                    assert!(top.device().same(&g.devices()[0]));
                } else {
                    assert!(top.is_empty() && at.is_empty());
                }
            }
            assert!(matches!(
                xs.top_k::<u32>(n + 1),
                Err(Error::InvalidArgument(_))
            ));
        }
    }
}

/// What one rank checks in a healthy group: every operation and element kind at edge sizes;
/// where `all`, more sizes and types (the ranks that are threads of this process, which the
/// spawned groups share the code paths with).
fn all_operations(g: &DeviceGroup, seed: u64, all: bool) {
    let first = first_shard(g);
    if all {
        integers(g, first, seed, &[0, 1, 31, 2049, 65_537]);
        let sizes = [0, 1, 5, 33, 1000, 4097, 30_011];
        everything::<u32>(g, first, seed, &sizes);
        everything::<i64>(g, first, seed, &sizes);
        everything::<f32>(g, first, seed, &sizes);
        everything::<u8>(g, first, seed, &sizes);
    } else {
        integers(g, first, seed, &[0, 1, 2049]);
        everything::<u32>(g, first, seed, &[0, 1, 33, 4097]);
        everything::<f64>(g, first, seed, &[5, 1000]);
    }
}

fn var(k: &str) -> usize {
    std::env::var(k).unwrap().parse().unwrap()
}

fn expect_group_error<X: std::fmt::Debug>(r: devseq::Result<X>, what: &str) -> String {
    match r {
        Err(Error::Group(m)) => m,
        other => panic!("{what}: expected Err(Group), got {other:?}"),
    }
}

/// A spawned rank's entry: the scenario `DEVSEQ_TEST_RANK_SCENARIO` names (run only by the
/// tests below, as a child process).
#[test]
#[ignore = "a rank of the process-group tests, which spawn it"]
fn rank_process() {
    let scenario = std::env::var(SCENARIO).expect("run by the process-group tests");
    let seed = 0x5eed_0000 + 17;
    let started = Instant::now();
    match scenario.as_str() {
        "operations" => {
            let g = match std::env::var("DEVSEQ_TEST_SHARDS_PER_RANK") {
                Ok(k) => DeviceGroup::join_devices(
                    var("RANK"),
                    var("WORLD_SIZE"),
                    &format!("127.0.0.1:{}", var("MASTER_PORT")),
                    &vec![Device::host(); k.parse().unwrap()],
                )
                .unwrap(),
                Err(_) => DeviceGroup::from_env().unwrap(),
            };
            all_operations(&g, seed, false);
        }
        "missing" => {
            let m = expect_group_error(DeviceGroup::from_env(), "a rank never arrives");
            assert!(started.elapsed() < Duration::from_secs(10), "{m}");
        }
        "exits" => {
            let g = DeviceGroup::from_env().unwrap();
            if g.rank() + 1 == g.ranks() {
                std::process::exit(7);
            }
            let xs = ShardedSeq::from_slice(&g, &[1u64, 2, 3, 4, 5]).unwrap();
            let m = expect_group_error(xs.reduce(Op::Add), "a rank exited");
            assert!(started.elapsed() < Duration::from_secs(20), "{m}");
            expect_group_error(xs.to_vec(), "after a rank exited");
        }
        "out_of_step" => {
            let g = DeviceGroup::from_env().unwrap();
            let xs = ShardedSeq::from_slice(&g, &[1u64, 2, 3]).unwrap();
            let m = if g.rank() == 0 {
                expect_group_error(xs.reduce(Op::Add), "ranks out of step")
            } else {
                expect_group_error(xs.sort().map(|_| ()), "ranks out of step")
            };
            assert!(
                m.contains("different operations") || m.contains("left"),
                "{m}"
            );
        }
        other => panic!("no scenario {other}"),
    }
}

/// A free port on loopback.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Spawns `ranks` of `of` processes (`ranks` may be fewer, for a group that never fills),
/// each with the launcher `vars(rank)` sets and `scenario`; waits for them all, killing every
/// one at `limit`. Each one's exit code and output.
fn spawn(
    ranks: usize,
    scenario: &str,
    vars: impl Fn(usize) -> Vec<(String, String)>,
    limit: Duration,
) -> Vec<(Option<i32>, String)> {
    let exe = std::env::current_exe().unwrap();
    let dir = std::env::temp_dir().join(format!(
        "devseq-ranks-{}-{scenario}-{}",
        std::process::id(),
        free_port()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let mut children: Vec<(Child, std::path::PathBuf)> = (0..ranks)
        .map(|rank| {
            let log = dir.join(format!("rank{rank}.log"));
            let out = std::fs::File::create(&log).unwrap();
            let mut c = Command::new(&exe);
            c.args([
                "--ignored",
                "--exact",
                "ranks::rank_process",
                "--nocapture",
                "--test-threads=1",
            ]);
            for v in LAUNCH_VARS {
                c.env_remove(v);
            }
            c.env(SCENARIO, scenario)
                .env("DEVSEQ_DEVICE", "cpu")
                .envs(vars(rank))
                .stdin(Stdio::null())
                .stdout(out.try_clone().unwrap())
                .stderr(out);
            (c.spawn().expect("spawn a rank"), log)
        })
        .collect();
    let deadline = Instant::now() + limit;
    let mut codes: Vec<Option<Option<i32>>> = vec![None; ranks];
    while codes.iter().any(Option::is_none) {
        for (i, (c, _)) in children.iter_mut().enumerate() {
            if codes[i].is_none()
                && let Some(status) = c.try_wait().unwrap()
            {
                codes[i] = Some(status.code());
            }
        }
        if Instant::now() > deadline {
            for (c, _) in &mut children {
                let _ = c.kill();
                let _ = c.wait();
            }
            let logs: Vec<String> = children
                .iter()
                .map(|(_, l)| std::fs::read_to_string(l).unwrap_or_default())
                .collect();
            panic!(
                "{scenario}: ranks still running after {limit:?}:\n{}",
                logs.join("\n---\n")
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let out = children
        .iter()
        .zip(codes)
        .map(|((_, l), code)| {
            (
                code.flatten(),
                std::fs::read_to_string(l).unwrap_or_default(),
            )
        })
        .collect();
    let _ = std::fs::remove_dir_all(&dir);
    out
}

/// torchrun's variables for `rank` of `ranks` meeting on `port`.
fn torchrun(rank: usize, ranks: usize, port: u16) -> Vec<(String, String)> {
    [
        ("RANK", rank.to_string()),
        ("WORLD_SIZE", ranks.to_string()),
        ("LOCAL_RANK", rank.to_string()),
        ("MASTER_ADDR", "127.0.0.1".into()),
        ("MASTER_PORT", port.to_string()),
        ("DEVSEQ_GROUP_TIMEOUT", "60".into()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

/// Every rank exited 0 having run its scenario (not a filter that matched no test).
fn all_succeeded(outs: &[(Option<i32>, String)], what: &str) {
    for (rank, (code, log)) in outs.iter().enumerate() {
        assert_eq!(*code, Some(0), "{what}: rank {rank} failed:\n{log}");
        assert!(
            log.contains("1 passed"),
            "{what}: rank {rank} ran no scenario:\n{log}"
        );
    }
}

#[test]
fn groups_of_one_to_four_processes_run_every_sharded_operation() {
    for ranks in 1..=4 {
        let port = free_port();
        let outs = spawn(
            ranks,
            "operations",
            |r| torchrun(r, ranks, port),
            Duration::from_secs(120),
        );
        all_succeeded(&outs, &format!("{ranks} processes"));
    }
}

#[test]
fn processes_of_several_shards_and_every_launcher() {
    // Two processes of two host shards each.
    let port = free_port();
    let outs = spawn(
        2,
        "operations",
        |r| {
            let mut v = torchrun(r, 2, port);
            v.push(("DEVSEQ_TEST_SHARDS_PER_RANK".into(), "2".into()));
            v
        },
        Duration::from_secs(120),
    );
    all_succeeded(&outs, "two processes of two shards");
    // Open MPI's and Slurm's variables, with the rendezvous beside them.
    for (rank_var, size_var, local_var) in [
        (
            "OMPI_COMM_WORLD_RANK",
            "OMPI_COMM_WORLD_SIZE",
            "OMPI_COMM_WORLD_LOCAL_RANK",
        ),
        ("SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"),
    ] {
        let port = free_port();
        let outs = spawn(
            3,
            "operations",
            |r| {
                [
                    (rank_var, r.to_string()),
                    (size_var, "3".into()),
                    (local_var, r.to_string()),
                    ("MASTER_ADDR", "localhost".into()),
                    ("MASTER_PORT", port.to_string()),
                ]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect()
            },
            Duration::from_secs(120),
        );
        all_succeeded(&outs, rank_var);
    }
}

#[test]
fn ranks_that_are_threads_of_one_process() {
    // Three ranks of one, two and one shards, each a thread with its own group.
    let port = free_port();
    let rendezvous = format!("127.0.0.1:{port}");
    std::thread::scope(|s| {
        let ranks: Vec<_> = [1usize, 2, 1]
            .into_iter()
            .enumerate()
            .map(|(rank, shards)| {
                let rendezvous = &rendezvous;
                s.spawn(move || {
                    let g = DeviceGroup::join_devices(
                        rank,
                        3,
                        rendezvous,
                        &vec![Device::host(); shards],
                    )
                    .unwrap();
                    assert_eq!((g.rank(), g.ranks(), g.len()), (rank, 3, 4));
                    all_operations(&g, 99, true);
                })
            })
            .collect();
        for r in ranks {
            r.join().unwrap();
        }
    });
}

#[test]
fn a_rank_that_never_arrives_fails_the_others_within_the_timeout() {
    let port = free_port();
    let started = Instant::now();
    let outs = spawn(
        2,
        "missing",
        |r| {
            let mut v = torchrun(r, 3, port);
            v.retain(|(k, _)| k != "DEVSEQ_GROUP_TIMEOUT");
            v.push(("DEVSEQ_GROUP_TIMEOUT".into(), "2".into()));
            v
        },
        Duration::from_secs(30),
    );
    all_succeeded(&outs, "a missing rank");
    assert!(started.elapsed() < Duration::from_secs(25));
}

#[test]
fn a_rank_that_exits_fails_the_others_at_once() {
    let port = free_port();
    let outs = spawn(
        3,
        "exits",
        |r| torchrun(r, 3, port),
        Duration::from_secs(40),
    );
    assert_eq!(outs[2].0, Some(7), "the rank that exits:\n{}", outs[2].1);
    all_succeeded(&outs[..2], "the ranks left behind");
}

#[test]
fn ranks_that_call_different_operations_fail() {
    let port = free_port();
    let outs = spawn(
        2,
        "out_of_step",
        |r| torchrun(r, 2, port),
        Duration::from_secs(40),
    );
    all_succeeded(&outs, "ranks out of step");
}

#[test]
fn bad_joins_are_errors() {
    let host = Device::host();
    assert!(matches!(
        DeviceGroup::join(2, 2, "127.0.0.1:1", &host),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        DeviceGroup::join(1, 2, "no-port-here", &host),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        DeviceGroup::join_devices(0, 1, "127.0.0.1:1", &[]),
        Err(Error::InvalidArgument(_))
    ));
}

#[test]
fn groups_of_one_process_gather_group_and_rank() {
    // The device under test's groups (GPUs, or clones of one, on a GPU machine).
    for k in 1..=3 {
        integers(
            &crate::sharded::group(k),
            0,
            7 + k as u64,
            &[0, 1, 31, 2049, 65_537],
        );
    }
}
