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
    let n = 1 << 21;
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
        n / 64 * 4 + MIB,
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
