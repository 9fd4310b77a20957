//! Device selection and basic sequence handling.

use crate::common::*;
use devseq::{Device, DeviceSeq};

#[test]
fn names_and_kinds() {
    let d = dev();
    assert!(!d.name().is_empty());
    assert!(Device::host().name().starts_with("host ("));
    assert!(!Device::host().is_cuda());
    d.synchronize().unwrap();
    if std::env::var("DEVSEQ_DEVICE").is_ok_and(|v| v.starts_with("cuda")) {
        assert!(d.is_cuda(), "DEVSEQ_DEVICE=cuda must give a GPU");
    }
}

#[test]
fn cuda_without_a_gpu_is_an_error_not_a_panic() {
    // On a machine without CUDA this is NoCuda; with a GPU, an ordinal past the last one is.
    match Device::cuda(1000) {
        Err(devseq::Error::NoCuda(_)) => {}
        other => panic!("Device::cuda(1000): {other:?}"),
    }
}

#[test]
fn slices_are_views() {
    let xs: Vec<i32> = (0..100).collect();
    let s = upload(&xs);
    assert_eq!(s.slice(..).to_vec().unwrap(), xs);
    assert_eq!(s.slice(10..20).slice(5..).to_vec().unwrap(), xs[15..20]);
    assert_eq!(s.slice(..=3).to_vec().unwrap(), xs[..=3]);
    assert!(s.slice(50..50).is_empty());
    assert_eq!(s.clone().len(), 100);
}

#[test]
#[should_panic(expected = "out of range")]
fn slice_past_the_end_panics() {
    let s = upload(&[1u8, 2, 3]);
    let _ = s.slice(1..4);
}

#[test]
fn empty_sequences() {
    let e = DeviceSeq::<f32>::from_slice(&dev(), &[]).unwrap();
    assert!(e.is_empty());
    assert_eq!(e.to_vec().unwrap(), Vec::<f32>::new());
    assert_eq!(e.reduce(devseq::Op::Min).unwrap(), f32::INFINITY);
    assert_eq!(e.inclusive_scan(devseq::Op::Add).unwrap().len(), 0);
    assert_eq!(e.sort().unwrap().len(), 0);
    assert_eq!(
        e.histogram(3, 0.0, 1.0).unwrap().to_vec().unwrap(),
        [0, 0, 0]
    );
}
