//! Past 2^32 elements (64-bit sizes end to end): a u8 sequence of 2^32 + 7 elements reduces,
//! scans, compacts and sorts correctly, checked at the ends and at sampled positions. GPU only
//! (it needs about 20 GB of device memory); on the host it is skipped with a printed reason.

use crate::common::*;
use devseq::{DeviceSeq, Op};

const N: usize = (1 << 32) + 7;

/// Element i is i mod 251 (so no power-of-two period hides an indexing error).
fn value(i: usize) -> u8 {
    (i % 251) as u8
}

#[test]
fn beyond_u32_sizes() {
    let d = dev();
    if !d.is_cuda() {
        eprintln!("beyond_u32_sizes: skipped on the host (runs with DEVSEQ_DEVICE=cuda)");
        return;
    }
    if small() {
        eprintln!("beyond_u32_sizes: skipped with DEVSEQ_TEST_SMALL (sanitizer runs)");
        return;
    }
    let xs = DeviceSeq::<u64>::sequence(&d, 1).unwrap(); // warm the context
    drop(xs);
    let xs = DeviceSeq::<u8>::sequence(&d, N)
        .unwrap()
        .map(|x| x)
        .unwrap();
    // sequence::<u8> wraps mod 256; recompute mod 251 from a u64 index instead.
    let idx = DeviceSeq::<u64>::sequence(&d, N).unwrap();
    let xs = {
        drop(xs);
        idx.map(|i| (i % 251).cast::<u8>()).unwrap()
    };
    drop(idx);
    let samples: Vec<usize> = vec![0, 1, 250, 251, (1 << 32) - 1, 1 << 32, N - 2, N - 1];
    let check_at = |s: &DeviceSeq<u8>, want: &dyn Fn(usize) -> u8, what: &str| {
        for &i in &samples {
            let got = s.slice(i..i + 1).to_vec().unwrap()[0];
            assert_eq!(got, want(i), "{what} at {i}");
        }
    };
    check_at(&xs, &value, "input");
    // Sum mod 256: full periods of 251 contribute 251*250/2 each.
    let periods = N / 251;
    let rest = N % 251;
    let total: u64 = periods as u64 * (251 * 250 / 2) + (0..rest as u64).sum::<u64>();
    assert_eq!(xs.reduce(Op::Add).unwrap(), total as u8, "reduce");
    assert_eq!(xs.reduce(Op::Max).unwrap(), 250, "reduce max");
    let sc = xs.inclusive_scan(Op::Max).unwrap();
    check_at(&sc, &|i| if i >= 250 { 250 } else { i as u8 }, "scan max");
    drop(sc);
    let flags = xs.map(|x| x.eq(0)).unwrap();
    let kept = flags.nonzero_indices::<u64>().unwrap();
    assert_eq!(kept.len(), N.div_ceil(251), "compact count");
    let last = kept.slice(kept.len() - 1..).to_vec().unwrap()[0];
    assert_eq!(last as usize, (N - 1) / 251 * 251, "last kept index");
    drop((flags, kept));
    let sorted = xs.sort().unwrap();
    // Count of value v: periods + (v < rest).
    let start = |v: usize| v * periods + v.min(rest);
    check_at(
        &sorted,
        &|i| (0..251).rev().find(|&v| start(v) <= i).unwrap() as u8,
        "sort",
    );
}
