//! Every error path of API.md, with the inputs checked intact afterwards.

use crate::common::*;
use devseq::{Device, DeviceSeq, Error, Op};

#[test]
fn unsupported_ops_on_floats() {
    let xs = upload(&[1.0f32, 2.0]);
    let fl = upload(&[1u8, 0]);
    for op in [Op::BitAnd, Op::BitOr, Op::BitXor] {
        let e = |r: devseq::Result<()>| {
            assert!(
                matches!(r, Err(Error::UnsupportedOp { ty: "f32", .. })),
                "{op:?}"
            )
        };
        e(xs.reduce(op).map(|_| ()));
        e(xs.reduce_to_seq(op).map(|_| ()));
        e(xs.fold(1.0, op).map(|_| ()));
        e(xs.inclusive_scan(op).map(|_| ()));
        e(xs.exclusive_scan(0.0, op).map(|_| ()));
        e(xs.segmented_inclusive_scan(&fl, op).map(|_| ()));
        e(xs.segmented_exclusive_scan(&fl, 0.0, op).map(|_| ()));
        e(xs.segmented_reduce(&fl, op).map(|_| ()));
        e(xs.scatter_combine(&upload(&[0u32, 1]), &xs, op).map(|_| ()));
        assert!(matches!(
            op.identity::<f64>(),
            Err(Error::UnsupportedOp { ty: "f64", .. })
        ));
    }
    assert_eq!(xs.to_vec().unwrap(), [1.0, 2.0]);
}

#[test]
fn length_mismatches() {
    let a = upload(&[1i32, 2, 3]);
    let b = upload(&[1i32, 2]);
    let f = upload(&[1u8, 0]);
    let lm = |r: devseq::Result<()>, what: &str| {
        assert!(
            matches!(
                r,
                Err(Error::LengthMismatch {
                    expected: 3,
                    actual: 2
                })
            ),
            "{what}: {r:?}"
        )
    };
    lm(a.zip_map(&b, |x, y| x + y).map(|_| ()), "zip_map");
    lm(
        a.segmented_inclusive_scan(&f, Op::Add).map(|_| ()),
        "seg incl",
    );
    lm(
        a.segmented_exclusive_scan(&f, 0, Op::Add).map(|_| ()),
        "seg excl",
    );
    lm(a.segmented_reduce(&f, Op::Add).map(|_| ()), "seg reduce");
    lm(a.compact(&f).map(|_| ()), "compact");
    lm(a.scatter(&upload(&[0u32, 1]), &a).map(|_| ()), "scatter");
    lm(
        a.scatter_combine(&upload(&[0u32, 1]), &a, Op::Add)
            .map(|_| ()),
        "scatter_combine",
    );
    lm(a.sort_pairs(&b).map(|_| ()), "sort_pairs");
    assert_eq!(a.to_vec().unwrap(), [1, 2, 3]);
    assert_eq!(b.to_vec().unwrap(), [1, 2]);
}

#[test]
fn device_mismatches() {
    let d = dev();
    // Another device: the host if the tests run on a GPU, else (on the host) a GPU if any.
    let other = if d.is_cuda() {
        Some(Device::host())
    } else {
        Device::cuda(0).ok()
    };
    let Some(other) = other else {
        eprintln!("device_mismatches: only one device here; checking host/host sameness only");
        assert!(Device::host().same(&Device::host()));
        return;
    };
    let a = upload(&[1u32, 2]);
    let b = DeviceSeq::from_slice(&other, &[1u32, 2]).unwrap();
    let f = DeviceSeq::from_slice(&other, &[1u8, 0]).unwrap();
    let dm = |r: devseq::Result<()>, what: &str| {
        assert!(matches!(r, Err(Error::DeviceMismatch)), "{what}: {r:?}")
    };
    dm(a.zip_map(&b, |x, y| x + y).map(|_| ()), "zip_map");
    dm(a.segmented_inclusive_scan(&f, Op::Add).map(|_| ()), "seg");
    dm(a.compact(&f).map(|_| ()), "compact");
    dm(a.gather(&b).map(|_| ()), "gather");
    dm(a.scatter(&b, &a).map(|_| ()), "scatter");
    dm(
        a.scatter(&upload(&[0u32, 1]), &b).map(|_| ()),
        "scatter base",
    );
    dm(
        a.scatter_combine(&b, &a, Op::Add).map(|_| ()),
        "scatter_combine",
    );
    dm(a.sort_pairs(&b).map(|_| ()), "sort_pairs");
    assert_eq!(a.to_vec().unwrap(), [1, 2]);
    assert_eq!(b.to_vec().unwrap(), [1, 2]);
}

#[test]
fn argsort_index_width() {
    // u32 indices for more elements than they address are refused before any work; this
    // needs 2^32 + 1 elements, so only the u8 case runs where memory allows (see large.rs).
    let a = upload(&[3u8, 1, 2]);
    assert_eq!(a.argsort::<u32>().unwrap().to_vec().unwrap(), [1, 2, 0]);
}

#[test]
fn auto_device_from_the_environment() {
    // DEVSEQ_DEVICE is read by Device::auto; an unknown value is an error, never a panic.
    // (The variable is process-wide, so this test only parses the current one.)
    let d = Device::auto().unwrap();
    assert_eq!(d.is_cuda(), dev().is_cuda());
}
