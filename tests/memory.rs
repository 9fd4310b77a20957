//! What fused reads store: nothing of their input's length (a lazy input is evaluated inside
//! the kernel that reads it), and the memory in use back where it was once results are dropped.
//! A test binary of its own, its tests one at a time: the memory counters are the device's, and
//! any other test's allocations would show in them.

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
