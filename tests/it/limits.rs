//! Lengths and counts past what a sequence may hold: typed errors, never a panic or a wrapped
//! size (a lazy sequence may name more elements than any memory holds; its length is checked
//! when it is made, so that no size in bytes derived from it overflows).

use crate::common::*;
use devseq::{DeviceSeq, Error};

const MAX: usize = 1 << 56;

fn invalid<T: std::fmt::Debug>(r: devseq::Result<T>, what: &str) {
    assert!(matches!(r, Err(Error::InvalidArgument(_))), "{what}: {r:?}");
}

#[test]
fn lazy_lengths_past_the_longest_sequence() {
    let d = dev();
    for len in [MAX + 1, usize::MAX / 8 + 1, usize::MAX] {
        invalid(DeviceSeq::<u64>::sequence(&d, len), "sequence");
        invalid(DeviceSeq::<i8>::sequence(&d, len), "sequence i8");
        invalid(DeviceSeq::filled(&d, 1.5f64, len), "filled");
        invalid(DeviceSeq::filled(&d, (1u32, 2.0f32), len), "filled tuple");
        invalid(DeviceSeq::<u32>::random_bits(&d, len, 1), "random_bits u32");
        invalid(DeviceSeq::<u64>::random_bits(&d, len, 1), "random_bits u64");
        invalid(
            DeviceSeq::<f32>::random_uniform(&d, len, 1),
            "random_uniform",
        );
        invalid(DeviceSeq::<f64>::random_normal(&d, len, 1), "random_normal");
    }
}

#[test]
fn the_longest_lazy_sequence_reads_where_it_is_sliced() {
    let d = dev();
    let xs = DeviceSeq::<u64>::sequence(&d, MAX).unwrap();
    assert_eq!(xs.len(), MAX);
    let tail = xs.slice(MAX - 3..).to_vec().unwrap();
    assert_eq!(tail, [MAX as u64 - 3, MAX as u64 - 2, MAX as u64 - 1]);
    let r = DeviceSeq::<f32>::random_uniform(&d, MAX, 9).unwrap();
    let last = r.slice(MAX - 2..).to_vec().unwrap();
    assert!(last.iter().all(|&x| x > 0.0 && x <= 1.0), "{last:?}");
}

#[test]
fn histogram_bins_past_what_memory_holds() {
    let d = dev();
    let xs = DeviceSeq::<u32>::sequence(&d, 100).unwrap();
    invalid(xs.histogram(MAX + 1, 0, 100), "bins past 2^56");
    invalid(xs.histogram(usize::MAX, 0, 100), "bins usize::MAX");
    // 2^55 counters are 2^58 bytes: more than any machine's address space.
    let r = xs.histogram(1 << 55, 0, 100);
    assert!(matches!(r, Err(Error::OutOfMemory { .. })), "{r:?}");
    // The input is intact, and a histogram of many bins still counts exactly.
    let h = xs.histogram(100_000, 0, 100).unwrap().to_vec().unwrap();
    let mut want = vec![0u64; 100_000];
    for x in 0..100usize {
        want[x * 1000] += 1;
    }
    assert_eq!(h, want);
}

/// Results that no memory holds: `OutOfMemory` (or, on a GPU, `InvalidArgument` where a
/// primitive's own limit comes first), the process intact and the input still readable.
#[test]
fn results_past_what_memory_holds() {
    let d = dev();
    let n = 1usize << 55; // 2^58 bytes of u64: more than any address space
    let xs = DeviceSeq::<u64>::sequence(&d, n).unwrap();
    let oom = |r: devseq::Result<Vec<u64>>, what: &str| {
        assert!(matches!(r, Err(Error::OutOfMemory { .. })), "{what}: {r:?}")
    };
    oom(xs.copy().and_then(|c| c.to_vec()), "copy");
    oom(xs.to_vec(), "to_vec");
    oom(xs.map(|x| x * 2).and_then(|c| c.to_vec()), "map, read");
    let typed = |r: devseq::Result<()>, what: &str| {
        assert!(
            matches!(
                r,
                Err(Error::OutOfMemory { .. }) | Err(Error::InvalidArgument(_))
            ),
            "{what}: {r:?}"
        )
    };
    typed(xs.inclusive_scan(devseq::Op::Add).map(drop), "scan");
    typed(xs.sort().map(drop), "sort");
    // A gather is lazy (no memory of its own); stored, it needs n elements' worth.
    let picks = DeviceSeq::filled(&d, 3u64, n).unwrap();
    typed(
        xs.gather(&picks).and_then(|g| g.copy()).map(drop),
        "gather, stored",
    );
    typed(xs.merge(&xs).map(drop), "merge");
    assert_eq!(
        xs.slice(n - 2..).to_vec().unwrap(),
        [n as u64 - 2, n as u64 - 1]
    );
}
