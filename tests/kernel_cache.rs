//! Closures that differ only in their constants share one compiled kernel: the constants are
//! kernel parameters. A test binary of its own, so that no other test builds kernels while
//! this one counts them.

use devseq::{Device, DeviceSeq, Op};

#[test]
fn distinct_constants_compile_once_per_shape() {
    let dev = Device::auto().expect("Device::auto");
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
