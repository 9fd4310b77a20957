//! Tests that measure the whole process, one at a time: what fused reads store (nothing of
//! their input's length: a lazy input is evaluated inside the kernel that reads it; the memory
//! in use back where it was once results are dropped) and how many kernels a loop builds (one
//! a shape, whatever the constants). A test binary of its own: the memory and kernel counters
//! are the process's, and any other test's work would show in them.

use devseq::{Device, DeviceSeq, Op};
use std::sync::{Mutex, MutexGuard, OnceLock};

fn dev() -> Device {
    static D: OnceLock<Device> = OnceLock::new();
    D.get_or_init(|| Device::auto().expect("Device::auto"))
        .clone()
}

/// One test at a time.
fn alone() -> MutexGuard<'static, ()> {
    static M: Mutex<()> = Mutex::new(());
    M.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs `f` and asserts that the peak memory grew by less than `bound` bytes while it ran and
/// that the memory in use is back where it was once its result is dropped.
fn allocates_less<R>(what: &str, bound: usize, f: impl Fn() -> R) {
    let d = dev();
    d.synchronize().unwrap();
    let before = d.memory_in_use();
    d.reset_peak_memory();
    let start = d.peak_memory_in_use();
    let out = f();
    let peak = d.peak_memory_in_use();
    drop(out);
    d.synchronize().unwrap();
    let after = d.memory_in_use();
    let growth = peak.saturating_sub(start);
    assert!(
        growth < bound,
        "{what}: the peak grew by {growth} bytes (bound {bound})"
    );
    assert_eq!(
        after, before,
        "{what}: memory still in use after the results dropped"
    );
}

const MIB: usize = 1 << 20;

#[test]
fn fused_reduce_stores_nothing() {
    let _alone = alone();
    let d = dev();
    let n = 1 << 20;
    let expected = DeviceSeq::<f32>::sequence(&d, n)
        .unwrap()
        .map(|x| x * x)
        .unwrap()
        .copy()
        .unwrap()
        .reduce(Op::Add)
        .unwrap();
    assert!(expected > 0.0);
    allocates_less("sequence.map(x * x).reduce", n, || {
        let got = DeviceSeq::<f32>::sequence(&d, n)
            .unwrap()
            .map(|x| x * x)
            .unwrap()
            .reduce(Op::Add)
            .unwrap();
        assert_eq!(got.to_bits(), expected.to_bits(), "lazy vs copy");
    });
}

#[test]
fn fused_histogram_stores_only_its_counts() {
    let _alone = alone();
    let d = dev();
    let n = 1 << 21;
    let bins = 1000;
    let input = || {
        DeviceSeq::<u32>::sequence(&d, n)
            .unwrap()
            .map(|i| ((i * 0x9E37_79B1u32) >> 12u32).cast::<f32>())
            .unwrap()
    };
    let want = input()
        .copy()
        .unwrap()
        .histogram(bins, 0.0, (1 << 20) as f32)
        .unwrap()
        .to_vec()
        .unwrap();
    assert_eq!(want.iter().sum::<u64>(), n as u64);
    allocates_less("histogram of a lazy input", bins * 8 + MIB, || {
        let h = input().histogram(bins, 0.0, (1 << 20) as f32).unwrap();
        assert_eq!(h.to_vec().unwrap(), want, "lazy vs copy");
        h
    });
}

#[test]
fn fused_segmented_reduce_stores_only_its_result() {
    let _alone = alone();
    let d = dev();
    // 2^23 values (32 MiB); the result is 512 KiB, in an output of 4 MiB.
    let n = 1 << 23;
    let values = || {
        DeviceSeq::<f32>::sequence(&d, n)
            .unwrap()
            .map(|x| x * 0.5f32 - 3.0f32)
            .unwrap()
    };
    let flags = || {
        DeviceSeq::<u32>::sequence(&d, n)
            .unwrap()
            .map(|i| (i % 64u32).eq(0))
            .unwrap()
    };
    let want = values()
        .copy()
        .unwrap()
        .segmented_reduce(&flags().copy().unwrap(), Op::Add)
        .unwrap()
        .to_vec()
        .unwrap();
    assert_eq!(want.len(), n / 64);
    allocates_less(
        "segmented_reduce of lazy values and flags",
        (n / 64 * 4).max(4 * MIB) + MIB,
        || {
            let s = values().segmented_reduce(&flags(), Op::Add).unwrap();
            let got: Vec<u32> = s.to_vec().unwrap().iter().map(|x| x.to_bits()).collect();
            let want: Vec<u32> = want.iter().map(|x| x.to_bits()).collect();
            assert_eq!(got, want, "lazy vs copy");
            s
        },
    );
}

/// Scans and gathers of lazy inputs store their output and nothing of the input's size.
#[test]
fn fused_scan_and_gather_store_only_their_output() {
    let _alone = alone();
    let d = dev();
    let n = 1 << 21;
    let values = || {
        DeviceSeq::<u32>::sequence(&d, n)
            .unwrap()
            .map(|i| i * 3u32 + 1u32)
            .unwrap()
    };
    let want = values()
        .copy()
        .unwrap()
        .inclusive_scan(Op::Add)
        .unwrap()
        .to_vec()
        .unwrap();
    allocates_less("inclusive_scan of a lazy input", n * 4 + MIB, || {
        let s = values().inclusive_scan(Op::Add).unwrap();
        assert_eq!(s.to_vec().unwrap(), want, "lazy vs copy");
        s
    });
    let idx = || {
        DeviceSeq::<u64>::sequence(&d, n / 4)
            .unwrap()
            .map(|i| (i * 7919u64) % (n as u64))
            .unwrap()
    };
    let want = values()
        .copy()
        .unwrap()
        .gather(&idx().copy().unwrap())
        .unwrap()
        .to_vec()
        .unwrap();
    allocates_less("gather of a lazy source at lazy indices", n + MIB, || {
        let s = values().gather(&idx()).unwrap();
        assert_eq!(s.to_vec().unwrap(), want, "lazy vs copy");
        s
    });
}

/// `scatter_into` a target that nothing else holds writes into its memory (no allocation of its
/// size, on a GPU and on the host, even with a lazy index sequence); into a target that a clone
/// shares, it makes the copy, and the clone keeps its elements.
#[test]
fn scatter_into_writes_in_place() {
    let _alone = alone();
    let d = dev();
    let n = 1 << 22;
    let vals = DeviceSeq::from_slice(&d, &[1.5f32; 1000]).unwrap();
    let idx = DeviceSeq::<u32>::sequence(&d, 1000)
        .unwrap()
        .map(|i| i * 4099u32)
        .unwrap();
    let out = std::cell::RefCell::new(DeviceSeq::filled(&d, 0f32, n).unwrap().copy().unwrap());
    allocates_less("scatter_into a target held alone", MIB, || {
        vals.scatter_into(&idx, &mut out.borrow_mut()).unwrap()
    });
    let mut out = out.into_inner();
    let got = out.to_vec().unwrap();
    assert_eq!(
        (got[0], got[1], got[4099], got[999 * 4099]),
        (1.5, 0.0, 1.5, 1.5)
    );
    assert_eq!(got.iter().filter(|&&x| x != 0.0).count(), 1000);

    let keep = out.clone();
    let twice = DeviceSeq::from_slice(&d, &[2.5f32; 1000]).unwrap();
    d.synchronize().unwrap();
    d.reset_peak_memory();
    let start = d.peak_memory_in_use();
    twice.scatter_into(&idx, &mut out).unwrap();
    let growth = d.peak_memory_in_use() - start;
    assert!(
        growth >= n * 4,
        "a shared target is copied: the peak grew by {growth} bytes"
    );
    assert_eq!(out.to_vec().unwrap()[4099], 2.5);
    assert_eq!(keep.to_vec().unwrap(), got, "the clone keeps its elements");
}

/// A gather's or scatter's result holds its indices (for the bounds check's error) only until
/// its first use: after it, dropping the indices gives their memory back.
#[test]
fn results_let_go_of_their_indices_once_used() {
    let _alone = alone();
    let d = dev();
    let xs = DeviceSeq::filled(&d, 1.5f32, 1000).unwrap().copy().unwrap();
    let n = 4 * MIB;
    for scatter in [false, true] {
        let idx = DeviceSeq::<u64>::sequence(&d, n)
            .unwrap()
            .map(|i| i % 1000u64)
            .unwrap()
            .copy()
            .unwrap();
        let vals = DeviceSeq::filled(&d, 2.5f32, n).unwrap();
        let ys = if scatter {
            vals.scatter(&idx, &xs).unwrap()
        } else {
            // (A gather is lazy and holds its indices; its stored copy does not.)
            xs.gather(&idx).unwrap().copy().unwrap()
        };
        assert!(ys.to_vec().unwrap().iter().all(|&y| y == 1.5 || y == 2.5));
        d.synchronize().unwrap();
        let with = d.memory_in_use();
        drop(idx);
        d.synchronize().unwrap();
        let without = d.memory_in_use();
        assert!(
            with - without >= n * 8,
            "scatter {scatter}: dropping the used result's indices gave back {} bytes, want {}",
            with - without,
            n * 8
        );
    }
}

#[test]
fn reductions_of_random_sequences_store_nothing() {
    let _alone = alone();
    let d = dev();
    let n = if d.is_cuda() { 1usize << 28 } else { 1 << 20 };
    let u = DeviceSeq::<f32>::random_uniform(&d, n, 5).unwrap();
    assert!(!u.is_stored());
    let before = d.memory_in_use();
    d.reset_peak_memory();
    let total = u.reduce(Op::Add).unwrap();
    let peak = d.peak_memory_in_use();
    assert!(
        peak < before + (1 << 20),
        "a reduction of {n} uniforms took {} bytes",
        peak - before
    );
    assert!(
        (total as f64 / n as f64 - 0.5).abs() < 0.01,
        "mean {}",
        total as f64 / n as f64
    );
}

/// Closures that differ only in their constants share one compiled kernel: the constants are
/// kernel parameters.
#[test]
fn distinct_constants_compile_once_per_shape() {
    let _alone = alone();
    let dev = dev();
    eprintln!("kernel cache test on {}", dev.name());
    let n = 10_000usize;
    let xs = DeviceSeq::<f32>::sequence(&dev, n).unwrap().copy().unwrap();

    // The shape of a lazy sequence does not depend on its constants, only on its expression.
    let a = xs.map(|x| x * 1.5 + 2.0).unwrap();
    let b = xs.map(|x| x * -7.0 + 0.25).unwrap();
    assert_eq!(a.shape_hash(), b.shape_hash());
    assert_ne!(
        xs.map(|x| x * 2.0).unwrap().shape_hash(),
        xs.map(|x| x + 2.0).unwrap().shape_hash()
    );
    // A view of a stored column is the same kind of leaf (another address).
    assert_eq!(
        xs.map(|x| x * 2.0).unwrap().shape_hash(),
        xs.slice(1..).map(|x| x * 2.0).unwrap().shape_hash()
    );
    assert_ne!(xs.shape_hash(), xs.map(|x| x * 2.0).unwrap().shape_hash());

    // 100 maps with 100 constants, each materialized, reduced and fused into a scan: the
    // first builds one kernel of each shape, the other 99 none.
    let mut built = Vec::new();
    for k in 0..100u32 {
        let before = devseq::kernels_built();
        let c = k as f32 * 0.5 - 3.0;
        let ys = xs.map(move |x| x * c + 1.0).unwrap();
        let v = ys.to_vec().unwrap();
        assert_eq!(v[7], 7.0 * c + 1.0, "k = {k}");
        let sum = ys.reduce(Op::Max).unwrap();
        assert_eq!(sum, v.iter().copied().fold(f32::NEG_INFINITY, f32::max));
        let scanned = ys.inclusive_scan(Op::Add).unwrap().to_vec().unwrap();
        assert_eq!(scanned[0], v[0]);
        built.push(devseq::kernels_built() - before);
    }
    eprintln!("kernels built by each of 100 map/reduce/scan rounds: {built:?}");
    if dev.is_cuda() {
        assert!(built[0] >= 1, "the first round builds its kernels");
        assert!(built[0] <= 3, "one kernel a shape: {}", built[0]);
    }
    assert!(
        built[1..].iter().all(|&b| b == 0),
        "rounds after the first built kernels: {built:?}"
    );
}

/// A pipeline through every primitive (lazy inputs included), reduced to checksums: what the
/// fault test runs with one allocation or one launch failing at a time.
fn every_primitive(
    xs: &DeviceSeq<u32>,
    fs: &DeviceSeq<f32>,
    idx: &DeviceSeq<u32>,
) -> devseq::Result<Vec<u64>> {
    let dev = xs.device();
    let n = xs.len();
    let sum = |s: &DeviceSeq<u32>| -> devseq::Result<u64> { s.cast::<u64>()?.reduce(Op::Add) };
    let mut out = Vec::new();
    let sq = xs.map(|x| x * 3 + 1)?;
    out.push(sq.reduce(Op::Add)? as u64);
    out.push(xs.fold(7, Op::Max)? as u64);
    out.push(fs.reduce(Op::Add)?.to_bits() as u64);
    out.push(sum(&sq.inclusive_scan(Op::Add)?)?);
    out.push(sum(&xs.exclusive_scan(1, Op::BitXor)?)?);
    let keys = xs.map(|x| x % 17)?.copy()?.sort()?;
    let flags = keys.head_flags()?;
    out.push(sum(&xs.segmented_inclusive_scan(&flags, Op::Add)?)?);
    out.push(sum(&xs.segmented_exclusive_scan(&flags, 0, Op::Add)?)?);
    out.push(sum(&xs.segmented_reduce(&flags, Op::Max)?)?);
    out.push(sum(&xs.compact(&flags)?)?);
    out.push(sum(&flags.nonzero_indices::<u32>()?)?);
    out.push(sum(&xs.gather(idx)?)?);
    let base = DeviceSeq::<u32>::filled(dev, 5, n / 2 + 1)?;
    let half = idx.map(|i| i / 2)?;
    // A permutation (argsort, rotated by one through a lazy map): no slot is written twice,
    // since which of several values lands in one slot is unspecified.
    let m = n as u32;
    let whole = DeviceSeq::<u32>::filled(dev, 5, n)?;
    out.push(sum(&xs.scatter(
        &xs.argsort::<u32>()?.map(move |i| (i + 1) % m)?,
        &whole,
    )?)?);
    out.push(sum(&xs.scatter_combine(&half, &base, Op::Add)?)?);
    let (k2, v2) = keys.sort_pairs(xs)?;
    out.push(sum(&k2)? ^ sum(&v2)?);
    out.push(sum(&xs.argsort::<u32>()?)?);
    out.push(xs.histogram(16, 0, 1 << 20)?.reduce(Op::Add)?);
    out.push(sum(&keys.dedup()?)?);
    let (rk, rl) = keys.run_lengths()?;
    out.push(sum(&rk)? + rl.reduce(Op::Add)?);
    let (bk, bv) = keys.reduce_by_key(xs, Op::Add)?;
    out.push(sum(&bk)? ^ sum(&bv)?);
    out.push(xs.reduce_with(|a, b| a.min(b))?.unwrap_or(0) as u64);
    out.push(fs.reduce_with(|a, b| a * 0.5 + b)?.unwrap_or(0.0).to_bits() as u64);
    out.push(
        fs.inclusive_scan_with(|a, b| a.max(b))?
            .reduce(Op::Add)?
            .to_bits() as u64,
    );
    out.push(fs.argmax()?.unwrap_or(0) as u64);
    out.push(sum(
        &xs.scatter_combine_with(&half, &base, |a, b| a * 3 + b)?
    )?);
    let r = DeviceSeq::<u32>::random_bits(dev, n, 9)?;
    out.push(sum(&r.gather(idx)?)?);
    out.push(xs.to_vec()?.iter().map(|&x| x as u64).sum());
    Ok(out)
}

/// Every allocation, then every kernel launch, of a pipeline through every primitive fails
/// in turn (k = 1, 2, ... until the pipeline succeeds): each failure is a typed error, the
/// inputs are unchanged, no memory leaks, and the device goes on working.
#[test]
fn every_allocation_and_launch_may_fail() {
    let _alone = alone();
    let d = dev();
    let n = 3001usize;
    let xv: Vec<u32> = (0..n as u32)
        .map(|i| i.wrapping_mul(2_654_435_761) >> 12)
        .collect();
    let fv: Vec<f32> = xv
        .iter()
        .map(|&x| (x % 1000) as f32 * 0.25 - 50.0)
        .collect();
    let iv: Vec<u32> = (0..n as u32).map(|i| (i * 7919) % n as u32).collect();
    let xs = DeviceSeq::from_slice(&d, &xv).unwrap();
    let fs = DeviceSeq::from_slice(&d, &fv).unwrap();
    let idx = DeviceSeq::from_slice(&d, &iv).unwrap();
    let want = every_primitive(&xs, &fs, &idx).unwrap();
    d.synchronize().unwrap();
    let base = d.memory_in_use();
    type Arm = fn(u64);
    type Fired = fn() -> bool;
    let kinds: [(&str, Arm, Fired); 2] = [
        (
            "allocation",
            devseq::testing::fail_nth_allocation,
            devseq::testing::allocation_fault_fired,
        ),
        (
            "launch",
            devseq::testing::fail_nth_launch,
            devseq::testing::launch_fault_fired,
        ),
    ];
    for (what, arm, fired) in kinds {
        let mut k = 1u64;
        loop {
            arm(k);
            let got = every_primitive(&xs, &fs, &idx);
            let hit = fired();
            arm(0);
            match got {
                Ok(v) => {
                    assert!(
                        !hit,
                        "{what} {k}: the fault fired but the pipeline succeeded"
                    );
                    assert_eq!(v, want, "{what} {k}: a wrong result after no fault");
                    break;
                }
                Err(e) => {
                    assert!(hit, "{what} {k}: failed without the fault: {e}");
                    match (what, &e) {
                        ("allocation", devseq::Error::OutOfMemory { .. }) => {}
                        ("launch", devseq::Error::Cuda(m)) if m.contains("injected") => {}
                        _ => panic!("{what} {k}: not the injected error: {e:?}"),
                    }
                }
            }
            d.synchronize().unwrap();
            assert_eq!(d.memory_in_use(), base, "{what} {k}: memory leaked");
            assert_eq!(xs.to_vec().unwrap(), xv, "{what} {k}: input changed");
            assert_eq!(fs.to_vec().unwrap(), fv, "{what} {k}: input changed");
            assert_eq!(idx.to_vec().unwrap(), iv, "{what} {k}: input changed");
            assert_eq!(
                xs.map(|x| x ^ 1).unwrap().reduce(Op::BitXor).unwrap(),
                xv.iter().fold(0, |a, &x| a ^ x ^ 1),
                "{what} {k}: the device stopped working"
            );
            k += 1;
            assert!(k < 10_000, "{what}: no end to the faults");
        }
        eprintln!(
            "{what} faults: the pipeline succeeded after {} failures",
            k - 1
        );
        if what == "allocation" || d.is_cuda() {
            assert!(k > 20, "{what}: only {} points of failure", k - 1);
        }
    }
}

/// What a child process of the cache tests runs (`DEVSEQ_TEST_CHILD` says which), ignored in
/// ordinary runs: 16 threads that build the same kernels and one kernel shape each, checking
/// every result against the host backend bitwise.
#[test]
#[ignore = "run by the cache tests in child processes"]
fn child_process_entry() {
    let Ok(role) = std::env::var("DEVSEQ_TEST_CHILD") else {
        panic!("run only as a child of the cache tests");
    };
    let d = Device::auto().unwrap();
    if role == "user" {
        return users_kernel(&d);
    }
    if role == "tiers" {
        return both_tiers(&d);
    }
    if let Some(ms) = role.strip_prefix("exit:") {
        return exit_while_compiling(&d, ms.parse().ok());
    }
    if let Some(ms) = role.strip_prefix("helpers:") {
        return exit_during_helper_compiles(ms.parse().unwrap());
    }
    let threads = if role == "stress" { 16 } else { 1 };
    let h = Device::host();
    let xv: Vec<f32> = (0..20_000)
        .map(|i| (i % 977) as f32 * 0.125 - 60.0)
        .collect();
    std::thread::scope(|s| {
        for t in 0..threads {
            let (d, h, xv) = (&d, &h, &xv);
            s.spawn(move || {
                // The shared kernels, then a shape of this thread's own: t + 1 steps.
                let run = |dev: &Device| -> (f32, Vec<f32>) {
                    let xs = DeviceSeq::from_slice(dev, xv).unwrap();
                    let shared = xs.map(|x| x * 2.0 + 1.0).unwrap().reduce(Op::Add).unwrap();
                    let own = xs
                        .map(move |x| (0..=t).fold(x, |y, k| y * 0.5 + k as f32))
                        .unwrap()
                        .inclusive_scan(Op::Max)
                        .unwrap()
                        .to_vec()
                        .unwrap();
                    (shared, own)
                };
                let (a, b) = (run(d), run(h));
                assert_eq!(a.0.to_bits(), b.0.to_bits(), "thread {t}: shared kernel");
                assert!(
                    a.1.iter()
                        .zip(&b.1)
                        .all(|(x, y)| x.to_bits() == y.to_bits()),
                    "thread {t}: own kernel"
                );
            });
        }
    });
}

/// A user's kernel through `Device::compile` (and so the disk cache), run on a sequence.
fn users_kernel(d: &Device) {
    use devseq::cudarc::driver::{LaunchConfig, PushKernelArg};
    let Some(stream) = d.cuda_stream() else {
        return;
    };
    let src = r#"
extern "C" __global__ void square_plus(u32* x, u32 c, u64 n) {
  const u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * x[i] + c;
}"#;
    let k = d.compile("square_plus", src).unwrap();
    let n = 10_000usize;
    let xs = DeviceSeq::<u32>::sequence(d, n).unwrap().copy().unwrap();
    let (p, c, n64) = (xs.device_ptr().unwrap(), 3u32, n as u64);
    let mut launch = stream.launch_builder(&k);
    launch.arg(&p).arg(&c).arg(&n64);
    // SAFETY: `square_plus` takes (u32*, u32, u64): the address of a stored u32 sequence of
    // `n` elements that lives past the launch (queued on devseq's stream, before the read
    // below), then a u32 and a u64.
    unsafe { launch.launch(LaunchConfig::for_num_elems(n as u32)) }.unwrap();
    let got = xs.to_vec().unwrap();
    for (i, &g) in got.iter().enumerate() {
        let i = i as u32;
        assert_eq!(g, i.wrapping_mul(i) + 3, "x[{i}]");
    }
}

/// Float results whose bits depend on the order of every combination (sums, scans and
/// segmented scans of floats, a float sort), lazy inputs included, as bits.
fn float_pipelines(d: &Device) -> Vec<u64> {
    let n = 300_001;
    let xs = DeviceSeq::<u32>::sequence(d, n)
        .unwrap()
        .map(|i| ((i * 2_654_435_761u32) >> 8u32).cast::<f32>() * 0.001 - 8000.0)
        .unwrap();
    let flags = DeviceSeq::<u32>::sequence(d, n)
        .unwrap()
        .map(|i| ((i % 1000).eq(0)).cast::<u8>())
        .unwrap()
        .copy()
        .unwrap();
    let mut bits = vec![xs.reduce(Op::Add).unwrap().to_bits() as u64];
    let scans = [
        xs.inclusive_scan(Op::Add).unwrap(),
        xs.segmented_inclusive_scan(&flags, Op::Add).unwrap(),
        xs.sort().unwrap(),
    ];
    for s in scans {
        bits.extend(s.to_vec().unwrap().iter().map(|x| x.to_bits() as u64));
    }
    // Long irregular segments (a head about every 7919 elements): tiles without a head take
    // their prefix from the look-back (the quick form's one window), some after a tile with a head
    // in its last elements; an exact (integer) scan, whose quick form reads nothing back.
    let sparse = DeviceSeq::<u32>::sequence(d, n)
        .unwrap()
        .map(|i| ((i * 2_654_435_761u32) % 7919u32).eq(0).cast::<u8>())
        .unwrap()
        .copy()
        .unwrap();
    let ints = DeviceSeq::<u32>::sequence(d, n)
        .unwrap()
        .map(|i| i * 2_654_435_761u32)
        .unwrap();
    let more = [
        xs.segmented_inclusive_scan(&sparse, Op::Add).unwrap(),
        xs.segmented_reduce(&sparse, Op::Add).unwrap(),
        xs.compact(&flags).unwrap(),
    ];
    for s in more {
        bits.extend(s.to_vec().unwrap().iter().map(|x| x.to_bits() as u64));
    }
    let exact = ints.segmented_inclusive_scan(&sparse, Op::Add).unwrap();
    bits.extend(exact.to_vec().unwrap().iter().map(|&x| x as u64));
    let wide = xs.cast::<f64>().unwrap().map(|x| x * x).unwrap();
    bits.push(wide.reduce(Op::Add).unwrap().to_bits());
    bits.extend(
        wide.inclusive_scan(Op::Add)
            .unwrap()
            .to_vec()
            .unwrap()
            .iter()
            .map(|x| x.to_bits()),
    );
    bits
}

/// Runs the float pipelines with the kernels as first compiled (the quick form, on a cold
/// cache), then again once the optimized form has replaced them: the same bits. Then queues
/// more quick compiles and exits while their optimized forms are being compiled (which must
/// not crash the exit).
fn both_tiers(d: &Device) {
    let first = float_pipelines(d);
    d.finish_compiling();
    let optimized = float_pipelines(d);
    assert!(first == optimized, "the quick and optimized kernels differ");
    let xs = DeviceSeq::<f64>::sequence(d, 1000).unwrap();
    for k in 0..4u32 {
        let ys = xs
            .map(move |x| (0..=k).fold(x, |y, j| y * 0.5 + j as f64))
            .unwrap();
        ys.exclusive_scan(1.0, Op::Max).unwrap().to_vec().unwrap();
    }
}

/// Runs a scan and a reduction of a map (their quick forms, from the disk cache where it holds
/// them; their optimized forms queued for the background threads), waits `ms` milliseconds
/// and exits the process, while those compiles run: the first NVRTC compiles of a process whose
/// quick forms all came from disk. With no `ms` (the child that fills the cache), returns.
fn exit_while_compiling(d: &Device, ms: Option<u64>) {
    let xs = DeviceSeq::<f64>::sequence(d, 1000).unwrap();
    let scan = xs.inclusive_scan(Op::Add).unwrap().to_vec().unwrap();
    assert_eq!(scan[999], 499_500.0);
    let sum = xs.map(|x| x * 0.5 + 1.0).unwrap().reduce(Op::Max).unwrap();
    assert_eq!(sum, 500.5);
    if let Some(ms) = ms {
        std::thread::sleep(std::time::Duration::from_millis(ms));
        std::process::exit(0);
    }
}

/// Compiles a scan's quick form with NVRTC in this process, queues the optimized forms of every
/// type's large sums for the compile helpers, and exits `ms` milliseconds later, wherever those
/// compiles are (needs NVRTC, not a GPU).
fn exit_during_helper_compiles(ms: u64) {
    let _queue = devseq::testing::compile_scans_in_background("sm_90").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(ms));
    std::process::exit(0);
}

/// The compile helpers alive now that were started by one of `parents` (found by their
/// environment, which names the parent).
fn helpers_of(parents: &[u32]) -> Vec<u32> {
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    procs
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let env = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
            env.split(|&b| b == 0).any(|var| {
                let var = String::from_utf8_lossy(var);
                var.strip_prefix("DEVSEQ_COMPILE_HELPER=devseq-compile-helper ")
                    .and_then(|p| p.parse::<u32>().ok())
                    .is_some_and(|p| parents.contains(&p))
            })
        })
        .collect()
}

/// Processes that exit at random moments of their background compiles (a scan's quick form
/// compiled in the process, the optimized forms of 24 scans in compile helpers) all exit cleanly
/// and in time, and their helpers end soon after: `DEVSEQ_EXIT_CHILDREN` children (1000 unless
/// set), two at a time, each exiting after a delay drawn from 0 to 1.5 s (the seed printed;
/// `DEVSEQ_TEST_SEED` repeats it). Needs NVRTC, not a GPU (docs/jit.md).
#[test]
#[ignore = "needs the NVRTC library; run with --ignored"]
fn exiting_during_background_compiles_never_crashes() {
    let _alone = alone();
    let count: usize = std::env::var("DEVSEQ_EXIT_CHILDREN")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    let seed: u64 = std::env::var("DEVSEQ_TEST_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| std::process::id() as u64);
    eprintln!("exit test: {count} children, seed {seed}");
    let mut state = seed;
    let mut delay = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) % 1500
    };
    let exe = std::env::current_exe().unwrap();
    let spawn = |ms: u64| {
        std::process::Command::new(&exe)
            .args(["--ignored", "--exact", "child_process_entry", "--nocapture"])
            .env("DEVSEQ_TEST_CHILD", format!("helpers:{ms}"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let mut parents = Vec::new();
    let (mut done, mut running) = (0, Vec::new());
    while done < count {
        while running.len() < 2 && parents.len() < count {
            let ms = delay();
            let child = spawn(ms);
            parents.push(child.id());
            running.push((child, ms, std::time::Instant::now()));
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
        let mut k = 0;
        while k < running.len() {
            let (child, ms, t0) = &mut running[k];
            match child.try_wait().unwrap() {
                Some(status) => {
                    let mut err = String::new();
                    use std::io::Read;
                    let _ = child.stderr.take().unwrap().read_to_string(&mut err);
                    assert!(
                        status.success(),
                        "child {} exiting after {ms} ms: {status}\n{err}",
                        parents.len()
                    );
                    running.swap_remove(k);
                    done += 1;
                }
                None if t0.elapsed() > std::time::Duration::from_secs(60) => {
                    let _ = child.kill();
                    panic!("a child exiting after {ms} ms still runs after 60 s");
                }
                None => k += 1,
            }
        }
    }
    // Every helper ends once its compile is done (the slowest takes a few seconds).
    let t0 = std::time::Instant::now();
    loop {
        let left = helpers_of(&parents);
        if left.is_empty() {
            break;
        }
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(60),
            "helpers still running 60 s after their parents exited: {left:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    eprintln!("exit test: {count} children exited cleanly; no helper left");
}

/// Runs `n` children of this test binary at once against the cache directory `dir`; returns
/// their standard error.
fn children(role: &str, n: usize, dir: &std::path::Path) -> Vec<String> {
    let exe = std::env::current_exe().unwrap();
    let kids: Vec<_> = (0..n)
        .map(|_| {
            std::process::Command::new(&exe)
                .args(["--ignored", "--exact", "child_process_entry", "--nocapture"])
                .env("DEVSEQ_TEST_CHILD", role)
                .env("DEVSEQ_CACHE_DIR", dir)
                .env("DEVSEQ_LOG", "1")
                // The tiers' child compiles each kernel quickly first, then optimized in the
                // background; the others build the optimized form at once, so that their
                // cache entries are written before they exit.
                .env(
                    "DEVSEQ_JIT",
                    match role {
                        "tiers" => "tiered",
                        "exit:seed" => "quick",
                        r if r.starts_with("exit:") => "tiered",
                        _ => "optimized",
                    },
                )
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    kids.into_iter()
        .enumerate()
        .map(|(i, k)| {
            let out = k.wait_with_output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr).into_owned();
            assert!(
                out.status.success(),
                "child {i} ({role}) failed ({}): {}\n{err}",
                out.status,
                String::from_utf8_lossy(&out.stdout)
            );
            err
        })
        .collect()
}

/// A fresh, private cache directory for one test.
fn cold_cache(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("devseq-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut b = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
    b.create(&dir).unwrap();
    dir
}

/// 8 processes of 16 threads each build the same kernels and 16 shapes of their own against
/// one cold cache directory at once: every result is right and every entry left verifies.
#[test]
fn many_processes_share_one_cold_cache() {
    let _alone = alone();
    let dir = cold_cache("stress");
    children("stress", 8, &dir);
    let (ok, bad) = devseq::testing::verify_cache_dir(&dir).unwrap();
    assert!(bad.is_empty(), "entries that do not verify: {bad:?}");
    eprintln!("{ok} cache entries, all verified");
    if dev().is_cuda() {
        // The shared map-reduce and 16 map-scan shapes at least.
        assert!(ok >= 17, "only {ok} entries");
    } else {
        assert_eq!(ok, 0, "the host backend compiles nothing");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A process that exits while its first NVRTC compiles run in the background (its quick
/// forms all from the disk cache) exits cleanly: NVRTC registers exit handlers during a
/// process's first compiles, which would tear its state down under a compile still running
/// were they registered after devseq's exit hook (which waits for the compiles). Each child
/// gets a copy of a cache that holds only quick forms, and exits after 0 to 400 ms (on an H100
/// and an H200, those exiting after 40 to 120 ms crashed before the hook was kept last); then
/// children on empty caches (quick forms compiled first, in the foreground) do the same.
#[test]
fn exiting_during_the_first_background_compiles_is_clean() {
    let _alone = alone();
    let seed = cold_cache("exit-seed");
    children("exit:seed", 1, &seed);
    for ms in [0, 20, 40, 50, 60, 70, 80, 90, 100, 120, 150, 200, 300, 400] {
        let dir = cold_cache("exit");
        for e in std::fs::read_dir(&seed).unwrap() {
            let e = e.unwrap();
            std::fs::copy(e.path(), dir.join(e.file_name())).unwrap();
        }
        children(&format!("exit:{ms}"), 1, &dir);
        let _ = std::fs::remove_dir_all(&dir);
    }
    let _ = std::fs::remove_dir_all(&seed);
    for ms in [0, 40, 80, 150, 300] {
        let dir = cold_cache("exit-cold");
        children(&format!("exit:{ms}"), 1, &dir);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// One byte flipped at several offsets of real cache entries: the next process does not use
/// the entry, compiles the kernel again, rewrites the entry and gets the right results.
#[test]
fn flipped_cache_bytes_are_recompiled() {
    let _alone = alone();
    let dir = cold_cache("flip");
    children("flip", 1, &dir);
    let entries: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    if !dev().is_cuda() {
        assert!(entries.is_empty(), "the host backend compiles nothing");
        eprintln!("no cache entries on the host backend: the flips need a GPU");
        return;
    }
    assert!(!entries.is_empty());
    let len = std::fs::metadata(&entries[0]).unwrap().len() as usize;
    for off in [0, 3, 4, 20, 40, 44, len / 2, len - 33, len - 1] {
        let before = std::fs::read(&entries[0]).unwrap();
        let mut bad = before.clone();
        bad[off] ^= 0x10;
        std::fs::write(&entries[0], &bad).unwrap();
        let log = children("flip", 1, &dir).concat();
        assert!(
            log.contains("not used (checksum mismatch); compiling again"),
            "offset {off}: the flipped entry was not noticed:\n{log}"
        );
        let after = std::fs::read(&entries[0]).unwrap();
        assert_ne!(after, bad, "offset {off}: the entry was not rewritten");
        let (_, left) = devseq::testing::verify_cache_dir(&dir).unwrap();
        assert!(left.is_empty(), "offset {off}: {left:?}");
        if after != before {
            eprintln!("offset {off}: NVRTC wrote a different image the second time");
        }
    }
    let (_, bad) = devseq::testing::verify_cache_dir(&dir).unwrap();
    assert!(bad.is_empty(), "{bad:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// On a cold cache, kernels are first compiled in their quick form and then optimized in the
/// background; both forms give the same bits (`both_tiers`), a process may exit while
/// optimized forms are being compiled, and the next process loads the optimized forms from
/// the disk cache.
#[test]
fn quick_and_optimized_kernels_give_the_same_bits() {
    let _alone = alone();
    let dir = cold_cache("tiers");
    let first = children("tiers", 1, &dir).concat();
    if !dev().is_cuda() {
        eprintln!("the host backend compiles nothing: the tiers need a GPU");
        return;
    }
    let compiled = |log: &str, form: &str| {
        log.lines()
            .filter(|l| l.contains("compiled by NVRTC") && l.contains(form))
            .count()
    };
    let quick = compiled(&first, "(Quick)");
    // Optimized by a compile helper (or in the foreground where none runs).
    let optimized = first
        .lines()
        .filter(|l| l.contains("(Optimized") && l.contains("compiled by"))
        .count();
    // The float pipelines' kernels (at least 6, all optimized before their second run),
    // and the 4 scans of the exit (whose optimized forms may not be done).
    assert!(
        quick >= 10,
        "the cold process compiles quick forms first:\n{first}"
    );
    assert!(
        optimized + 4 >= quick && optimized <= quick,
        "each quick form is optimized later:\n{first}"
    );
    let second = children("tiers", 1, &dir).concat();
    assert_eq!(
        compiled(&second, "(Quick)"),
        0,
        "the second process compiles no quick form:\n{second}"
    );
    assert!(
        second.contains("loaded from the disk cache") && second.contains("(Optimized)"),
        "the second process loads the optimized forms:\n{second}"
    );
    let (_, bad) = devseq::testing::verify_cache_dir(&dir).unwrap();
    assert!(bad.is_empty(), "{bad:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A user's kernel compiled by one process is loaded from the disk cache by the next.
#[test]
fn users_kernels_hit_the_disk_cache() {
    let _alone = alone();
    let dir = cold_cache("user");
    let first = children("user", 1, &dir).concat();
    let second = children("user", 1, &dir).concat();
    if dev().is_cuda() {
        assert!(
            first.contains("square_plus: compiled by NVRTC"),
            "the first process compiles:\n{first}"
        );
        assert!(
            second.contains("square_plus: loaded from the disk cache"),
            "the second process loads:\n{second}"
        );
        let (ok, bad) = devseq::testing::verify_cache_dir(&dir).unwrap();
        assert!(ok >= 1 && bad.is_empty(), "{ok} entries, bad {bad:?}");
    } else {
        eprintln!("no user kernels on the host backend: the cache hit needs a GPU");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A cudarc slice taken in by `from_cuda_slice` counts as devseq's memory while a sequence
/// uses it, and is freed (and no longer counted) when the last one is dropped.
#[test]
fn adopted_slices_are_counted_and_freed() {
    let _alone = alone();
    let d = dev();
    let Some(stream) = d.cuda_stream() else {
        eprintln!("no cudarc slices on the host backend");
        return;
    };
    let before = d.memory_in_use();
    let v: Vec<u64> = (0..100_000).collect();
    let xs = DeviceSeq::from_cuda_slice(&d, stream.clone_htod(&v).unwrap()).unwrap();
    assert_eq!(
        d.memory_in_use(),
        before + 8 * v.len(),
        "counted while in use"
    );
    let view = xs.slice(10..20);
    drop(xs);
    assert_eq!(view.to_vec().unwrap(), v[10..20], "a view keeps it alive");
    drop(view);
    assert_eq!(d.memory_in_use(), before, "freed with the last sequence");
}

/// Asking for more memory than the GPU has is `Error::OutOfMemory`, and the device works on.
/// Here, not among the other error tests: the free memory checked at the end is the
/// process's, and other tests' allocations would show in it.
#[test]
fn reused_buffers_hold_only_what_each_call_writes() {
    // Dropped buffers of up to 128 MiB are kept and handed to the next request of their size
    // class: every result must still be exactly what its own call wrote, never a leftover of
    // an earlier one, at sizes on both sides of the class edges and of the largest kept buffer
    // (elements of 4 bytes: 128 elements fill the smallest class, 2^25 the largest).
    let _one = alone();
    let d = dev();
    d.synchronize().unwrap();
    let before = d.memory_in_use();
    let lens = [
        1usize,
        127,
        128,
        129,
        1000,
        1024,
        1025,
        (1 << 18) - 1,
        1 << 18,
        (1 << 18) + 1,
        (1 << 23) - 1,
        1 << 23,
        (1 << 23) + 1,
        (1 << 25) - 1,
        1 << 25,
        (1 << 25) + 1,
    ];
    for round in 0..3u32 {
        for &n in lens.iter().chain(lens.iter().rev()) {
            let xs = DeviceSeq::<u32>::sequence(&d, n)
                .unwrap()
                .map(move |i| i * 3u32 + round)
                .unwrap()
                .copy()
                .unwrap();
            let want: Vec<u32> = (0..n as u32).map(|i| i * 3 + round).collect();
            assert_eq!(xs.to_vec().unwrap(), want, "copy of {n} in round {round}");
            // A scan's temporaries (look-back words, partials) come from the kept buffers too.
            let scan: Vec<u32> = want
                .iter()
                .scan(0u32, |a, &x| {
                    *a = a.wrapping_add(x);
                    Some(*a)
                })
                .collect();
            let got = xs.inclusive_scan(Op::Add).unwrap().to_vec().unwrap();
            assert_eq!(got, scan, "scan of {n} in round {round}");
        }
    }
    d.synchronize().unwrap();
    assert_eq!(d.memory_in_use(), before, "kept buffers are not in use");
}

#[test]
fn out_of_memory_is_an_error() {
    let _one = alone();
    let d = dev();
    if !d.is_cuda() {
        eprintln!("out_of_memory_is_an_error: skipped on the host (no fixed memory to exhaust)");
        return;
    }
    if std::env::var_os("DEVSEQ_TEST_SMALL").is_some_and(|v| !v.is_empty() && v != "0") {
        // Under compute-sanitizer the deliberate failed allocation is itself reported as an API
        // error, and the tool's own device memory makes the free-memory check meaningless.
        eprintln!("out_of_memory_is_an_error: skipped with DEVSEQ_TEST_SMALL (sanitizer runs)");
        return;
    }
    let (total, _) = d.memory().unwrap();
    let n = total * 2;
    // `filled` is lazy (no memory); storing it allocates.
    let lazy = DeviceSeq::<u8>::filled(&d, 1, n).unwrap();
    match lazy.copy() {
        Err(devseq::Error::OutOfMemory { bytes }) => assert_eq!(bytes, n),
        other => panic!("allocating {n} bytes: {other:?}"),
    }
    // The device still works, and the temporaries of a failed call are gone.
    let xs = DeviceSeq::<u32>::sequence(&d, 1 << 20).unwrap();
    assert_eq!(
        xs.reduce(Op::Add).unwrap(),
        ((1u64 << 20) * ((1 << 20) - 1) / 2) as u32
    );
    let (_, free) = d.memory().unwrap();
    assert!(
        free > total / 4,
        "free {free} of {total} after a failed allocation"
    );
}

/// `trim_memory` and `set_kept_memory_limit` give kept memory back. On a GPU: a 256 MiB result,
/// dropped, stays in the driver's pool (the device's free memory lower by about its size) until
/// `trim_memory`, after which the free memory is back; with a limit of 0 the next such result
/// goes back at the next synchronization. On the host, where nothing is kept, the calls succeed
/// and the memory in use is back where it was once the results drop.
#[test]
fn kept_memory_goes_back() {
    let _alone = alone();
    let d = dev();
    let big = || {
        DeviceSeq::<u32>::filled(&d, 7, 64 << 20)
            .unwrap()
            .copy()
            .unwrap()
    };
    d.synchronize().unwrap();
    d.trim_memory().unwrap();
    let in_use = d.memory_in_use();
    let free = || d.memory().unwrap().1;
    let (before, mib) = (free(), 1usize << 20);
    drop(big());
    d.synchronize().unwrap();
    let kept = free();
    d.trim_memory().unwrap();
    let trimmed = free();
    assert_eq!(d.memory_in_use(), in_use);
    if d.is_cuda() {
        assert!(
            kept + 200 * mib < before,
            "the pool kept nothing: {before} -> {kept}"
        );
        assert!(
            trimmed + 16 * mib > before,
            "not given back: {before} -> {trimmed}"
        );
        d.set_kept_memory_limit(0);
        drop(big());
        d.synchronize().unwrap();
        assert!(free() + 16 * mib > before, "kept with a limit of 0");
        d.set_kept_memory_limit(1 << 30);
    } else {
        d.set_kept_memory_limit(0);
        drop(big());
        assert_eq!(d.memory_in_use(), in_use);
    }
}

/// A lazy gather read by a reduction: one pass, nothing of the gather's length stored.
#[test]
fn a_gather_read_by_a_reduction_stores_nothing_of_its_length() {
    let _alone = alone();
    let d = dev();
    let n = 1 << 20;
    let xs = DeviceSeq::<f32>::sequence(&d, n).unwrap().copy().unwrap();
    let idx = DeviceSeq::<u32>::sequence(&d, n)
        .unwrap()
        .map(|i| (i * 7919) % (1 << 20))
        .unwrap()
        .copy()
        .unwrap();
    let want = xs
        .gather(&idx)
        .unwrap()
        .copy()
        .unwrap()
        .reduce(Op::Add)
        .unwrap();
    d.synchronize().unwrap();
    d.reset_peak_memory();
    let before = d.peak_memory_in_use();
    let got = xs.gather(&idx).unwrap().reduce(Op::Add).unwrap();
    assert_eq!(got.to_bits(), want.to_bits());
    assert!(
        d.peak_memory_in_use() < before + n,
        "{} then {}",
        before,
        d.peak_memory_in_use()
    );
}
