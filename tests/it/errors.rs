//! Every error path of the API docs, with the inputs checked intact afterwards.

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

/// Every call that takes a second sequence refuses one from another device with
/// `DeviceMismatch` before any work, the inputs intact. Where the tests run on a GPU: against
/// the host and against a second stream of the same GPU (`Device::cuda(0)` again); on the host
/// against a GPU where one is usable. On a host without a GPU there is no second device (every
/// `Device::host()` is the same one), and only that sameness is checked.
#[test]
fn device_mismatches() {
    let d = dev();
    let others: Vec<Device> = if d.is_cuda() {
        vec![
            Device::host(),
            Device::cuda(0).expect("a second stream of GPU 0"),
        ]
    } else {
        Device::cuda(0).into_iter().collect()
    };
    if others.is_empty() {
        eprintln!("device_mismatches: only one device here; checking host/host sameness only");
        assert!(Device::host().same(&Device::host()));
        return;
    }
    for other in others {
        assert!(!d.same(&other), "{} vs {}", d.name(), other.name());
        mismatches_against(&other);
    }
}

/// The `DeviceMismatch` checks of `device_mismatches`, the sequences of `dev()` against those of
/// `other`.
fn mismatches_against(other: &Device) {
    let a = upload(&[1u32, 2]);
    let b = DeviceSeq::from_slice(other, &[1u32, 2]).unwrap();
    let f = DeviceSeq::from_slice(other, &[1u8, 0]).unwrap();
    let here_f = upload(&[1u8, 0]);
    let name = other.name();
    let dm = |r: devseq::Result<()>, what: &str| {
        assert!(
            matches!(r, Err(Error::DeviceMismatch)),
            "{what} (other: {name}): {r:?}"
        )
    };
    dm(a.zip_map(&b, |x, y| x + y).map(|_| ()), "zip_map");
    dm(DeviceSeq::zip(&a, &b).map(|_| ()), "zip");
    dm(DeviceSeq::zip(&b, &a).map(|_| ()), "zip, other first");
    dm(a.segmented_inclusive_scan(&f, Op::Add).map(|_| ()), "seg");
    dm(
        a.segmented_exclusive_scan(&f, 0, Op::Add).map(|_| ()),
        "seg excl",
    );
    dm(a.segmented_reduce(&f, Op::Add).map(|_| ()), "seg reduce");
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
    // scatter_into: indices of another device, and a target of another device (untouched).
    let mut out = upload(&[7u32, 7, 7]);
    dm(a.scatter_into(&b, &mut out), "scatter_into indices");
    let mut far = DeviceSeq::from_slice(other, &[7u32, 7, 7]).unwrap();
    dm(
        a.scatter_into(&upload(&[0u32, 1]), &mut far),
        "scatter_into target",
    );
    assert_eq!(out.to_vec().unwrap(), [7, 7, 7]);
    assert_eq!(far.to_vec().unwrap(), [7, 7, 7]);
    dm(a.reduce_by_key(&b, Op::Add).map(|_| ()), "reduce_by_key");
    dm(a.lower_bound::<u32>(&b).map(|_| ()), "lower_bound");
    dm(a.upper_bound::<u64>(&b).map(|_| ()), "upper_bound");
    dm(a.merge(&b).map(|_| ()), "merge");
    dm(a.merge_pairs(&b, &a, &a).map(|_| ()), "merge_pairs values");
    dm(a.merge_pairs(&a, &b, &b).map(|_| ()), "merge_pairs other");
    // The `_with` forms.
    dm(
        a.segmented_reduce_with(&f, |x, y| x + y).map(|_| ()),
        "segmented_reduce_with",
    );
    dm(
        a.segmented_inclusive_scan_with(&f, |x, y| x.max(y))
            .map(|_| ()),
        "segmented_inclusive_scan_with",
    );
    dm(
        a.scatter_combine_with(&upload(&[0u32, 1]), &b, |x, y| x ^ y)
            .map(|_| ()),
        "scatter_combine_with base",
    );
    dm(
        a.reduce_by_key_with(&b, |x, y| x + y).map(|_| ()),
        "reduce_by_key_with",
    );
    // The same calls with everything on one device still work.
    assert_eq!(
        a.segmented_reduce_with(&here_f, |x, y| x + y)
            .unwrap()
            .to_vec()
            .unwrap(),
        [3]
    );
    assert_eq!(a.to_vec().unwrap(), [1, 2]);
    assert_eq!(b.to_vec().unwrap(), [1, 2]);
    assert_eq!(f.to_vec().unwrap(), [1, 0]);
}

/// u32 indices for more elements than they address (2^32 + 1) are `InvalidArgument`, refused
/// before any work: lazy sequences of 8-, 2- and 4-byte elements (bad_inputs.rs
/// `u32_indices_past_2_pow_32_elements` has u8 and f32, and `nonzero_indices`); u64 indices
/// are not refused for them (not run: they would sort 2^32 elements), and u32 indices of a
/// short sequence work.
#[test]
fn argsort_index_width() {
    let d = dev();
    let n = (1usize << 32) + 1;
    let refused = |r: devseq::Result<()>, what: &str| {
        assert!(matches!(r, Err(Error::InvalidArgument(_))), "{what}: {r:?}")
    };
    let t = std::time::Instant::now();
    let s64 = DeviceSeq::<u64>::sequence(&d, n).unwrap();
    refused(s64.argsort::<u32>().map(|_| ()), "argsort::<u32> of u64");
    let s16 = DeviceSeq::<i16>::sequence(&d, n).unwrap();
    refused(s16.argsort::<u32>().map(|_| ()), "argsort::<u32> of i16");
    let f64s = DeviceSeq::<f64>::filled(&d, -0.5, n).unwrap();
    refused(f64s.argsort::<u32>().map(|_| ()), "argsort::<u32> of f64");
    let mapped = s64.map(|x| (x / 8).cast::<u32>()).unwrap();
    refused(
        mapped.argsort::<u32>().map(|_| ()),
        "argsort::<u32> of a map",
    );
    let elapsed = t.elapsed();
    assert!(
        elapsed < std::time::Duration::from_secs(60),
        "the refusals took {elapsed:?}: work was done before the check"
    );
    assert_eq!(s64.len(), n);
    assert_eq!(
        s64.slice(n - 2..).to_vec().unwrap(),
        [(1 << 32) - 1, 1 << 32]
    );
    assert_eq!(mapped.slice(n - 1..).to_vec().unwrap(), [1 << 29]);
    let a = upload(&[3u8, 1, 2]);
    assert_eq!(a.argsort::<u32>().unwrap().to_vec().unwrap(), [1, 2, 0]);
}

/// `Device::auto` reads `DEVSEQ_DEVICE`: `cpu`/`host` (any case, spaces trimmed) is the host;
/// an unknown value or a malformed ordinal is `InvalidArgument` (never a panic); a GPU that is
/// not there is `NoCuda` (never a silent fallback to the host); `cuda` is GPU 0 where there is
/// one. The variable is process-wide (and `dev()` has read it here), so each value is tried in
/// a child process of this test binary, which runs `auto_device_child`.
#[test]
fn auto_device_from_the_environment() {
    let gpu = Device::cuda(0).is_ok();
    let cases = [
        ("cpu", "host"),
        (" HoSt ", "host"),
        ("nonsense", "InvalidArgument"),
        ("cuda:x", "InvalidArgument"),
        ("cuda:-1", "InvalidArgument"),
        ("cuda:4096", "NoCuda"),
        ("cuda", if gpu { "cuda" } else { "NoCuda" }),
    ];
    let exe = std::env::current_exe().unwrap();
    for (value, want) in cases {
        let out = std::process::Command::new(&exe)
            .args([
                "--ignored",
                "--exact",
                "errors::auto_device_child",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("DEVSEQ_DEVICE", value)
            .env("DEVSEQ_TEST_AUTO_WANT", want)
            .output()
            .unwrap();
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(
            out.status.success() && stdout.contains("1 passed"),
            "DEVSEQ_DEVICE={value:?}, want {want}: the child failed ({}):\n{stdout}\n{stderr}",
            out.status
        );
        assert!(
            stderr.contains(&format!("auto_device_child: {want}")),
            "DEVSEQ_DEVICE={value:?}: the child did not check {want}:\n{stderr}"
        );
    }
}

/// The child of `auto_device_from_the_environment`: `Device::auto()` under the `DEVSEQ_DEVICE`
/// it was given is what `DEVSEQ_TEST_AUTO_WANT` names. Without that variable (a run of the
/// ignored tests in the parent) it checks nothing.
#[test]
#[ignore = "run by auto_device_from_the_environment in a child process"]
fn auto_device_child() {
    let Ok(want) = std::env::var("DEVSEQ_TEST_AUTO_WANT") else {
        return;
    };
    let got = Device::auto();
    let ok = match (&got, want.as_str()) {
        (Ok(d), "host") => !d.is_cuda() && d.same(&Device::host()),
        (Ok(d), "cuda") => d.is_cuda(),
        (Err(Error::InvalidArgument(m)), "InvalidArgument") => m.contains("DEVSEQ_DEVICE"),
        (Err(Error::NoCuda(_)), "NoCuda") => true,
        _ => false,
    };
    assert!(
        ok,
        "DEVSEQ_DEVICE={:?}: got {got:?}, want {want}",
        std::env::var("DEVSEQ_DEVICE")
    );
    eprintln!("auto_device_child: {want}");
}
