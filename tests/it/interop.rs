//! cudarc interoperation: `Device::cuda_stream`, `DeviceSeq::to_cuda_slice`,
//! `DeviceSeq::device_ptr`, `Device::compile`. On the host each says so (`None`, `NoCuda`);
//! on a GPU, copies out equal `to_vec`, addresses follow views, and a user's kernel reads one
//! devseq sequence and writes another.

use crate::common::*;
use devseq::cudarc::driver::{LaunchConfig, PushKernelArg};
use devseq::{DeviceSeq, Error};

#[test]
fn host_devices_say_so() {
    let d = dev();
    if d.is_cuda() {
        assert!(d.cuda_stream().is_some());
        return;
    }
    let xs = upload(&[1u32, 2, 3]);
    assert!(d.cuda_stream().is_none());
    assert!(matches!(xs.to_cuda_slice(), Err(Error::NoCuda(_))));
    assert!(matches!(xs.device_ptr(), Err(Error::NoCuda(_))));
    assert!(matches!(
        d.compile("k", "extern \"C\" __global__ void k() {}"),
        Err(Error::NoCuda(_))
    ));
    assert_eq!(xs.to_vec().unwrap(), [1, 2, 3], "inputs unchanged");
}

#[test]
fn copies_out_and_addresses() {
    let d = dev();
    let Some(stream) = d.cuda_stream() else {
        eprintln!("copies_out_and_addresses: the host has no cudarc memory (host_devices_say_so)");
        return;
    };
    for &n in sizes() {
        let v: Vec<u32> = (0..n as u32)
            .map(|i| i.wrapping_mul(2_654_435_761))
            .collect();
        let xs = upload(&v);
        let s = xs.to_cuda_slice().unwrap();
        assert_eq!(s.len(), n);
        assert_eq!(stream.clone_dtoh(&s).unwrap(), v, "stored, n = {n}");
        let lazy = xs.map(|x| x ^ 5u32).unwrap();
        let want: Vec<u32> = v.iter().map(|x| x ^ 5).collect();
        let s = lazy.to_cuda_slice().unwrap();
        assert_eq!(stream.clone_dtoh(&s).unwrap(), want, "lazy, n = {n}");
        assert!(matches!(lazy.device_ptr(), Err(Error::InvalidArgument(_))));
        if n > 3 {
            let p = xs.device_ptr().unwrap();
            assert_eq!(xs.slice(3..).device_ptr().unwrap(), p + 12);
            let s = xs.slice(3..).to_cuda_slice().unwrap();
            assert_eq!(stream.clone_dtoh(&s).unwrap(), v[3..], "view, n = {n}");
        }
    }
    // Other element types, and the copy is the caller's: dropping the sequence leaves it.
    let f = upload(&[1.5f64, -0.0, f64::INFINITY]);
    let s = f.to_cuda_slice().unwrap();
    drop(f);
    let back = stream.clone_dtoh(&s).unwrap();
    assert_eq!(
        back.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
        [1.5f64, -0.0, f64::INFINITY].map(f64::to_bits)
    );
}

#[test]
fn slices_come_in_without_a_copy() {
    let d = dev();
    let Some(stream) = d.cuda_stream() else {
        eprintln!("slices_come_in_without_a_copy: the host has no cudarc memory");
        return;
    };
    for &n in sizes() {
        let v: Vec<i64> = (0..n as i64).map(|i| (i * 7919) % 1000 - 500).collect();
        // (What devseq counts as in use: tests/alone.rs, where no other test allocates.)
        let xs = DeviceSeq::from_cuda_slice(&d, stream.clone_htod(&v).unwrap()).unwrap();
        assert_eq!(xs.len(), n);
        assert_eq!(xs.to_vec().unwrap(), v, "n = {n}");
        let mut want = v.clone();
        want.sort();
        assert_eq!(
            xs.sort().unwrap().to_vec().unwrap(),
            want,
            "sorted, n = {n}"
        );
        // Out and back in: the same elements, on devseq's stream.
        let back = DeviceSeq::from_cuda_slice(&d, xs.to_cuda_slice().unwrap()).unwrap();
        assert_eq!(back.to_vec().unwrap(), v);
    }
    // A slice written on another stream: devseq's stream waits for that work.
    let other = stream.context().new_stream().unwrap();
    let n = 1 << 22;
    let mut s = other.alloc_zeros::<u32>(n).unwrap();
    other.memset_zeros(&mut s).unwrap();
    let ones = vec![1u32; n];
    other.memcpy_htod(&ones, &mut s).unwrap();
    let xs = DeviceSeq::from_cuda_slice(&d, s).unwrap();
    assert_eq!(xs.reduce(devseq::Op::Add).unwrap(), n as u32);
}

#[test]
fn a_user_kernel_reads_one_sequence_and_writes_another() {
    let d = dev();
    let Some(stream) = d.cuda_stream() else {
        eprintln!("a_user_kernel...: the host compiles no kernels (host_devices_say_so)");
        return;
    };
    let src = r#"
extern "C" __global__ void axpb(const float* x, float* y, float a, float b, u64 n) {
  const u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + b;
}"#;
    let k = d.compile("axpb", src).unwrap();
    let again = d.compile("axpb", src).unwrap();
    drop(again);
    let n = 100_003usize;
    let x = DeviceSeq::<f32>::sequence(&d, n).unwrap().copy().unwrap();
    let y = DeviceSeq::filled(&d, 0f32, n).unwrap().copy().unwrap();
    let (px, py) = (x.device_ptr().unwrap(), y.device_ptr().unwrap());
    let (a, b, n64) = (2.0f32, 0.5f32, n as u64);
    let mut launch = stream.launch_builder(&k);
    launch.arg(&px).arg(&py).arg(&a).arg(&b).arg(&n64);
    // SAFETY: `axpb` takes (const float*, float*, float, float, u64), and these are two
    // addresses of stored f32 sequences of `n` elements that live past the launch (it runs on
    // devseq's stream, before anything later that reads or frees them), then two f32 and a u64.
    unsafe { launch.launch(LaunchConfig::for_num_elems(n as u32)) }.unwrap();
    let got = y.to_vec().unwrap();
    for (i, &g) in got.iter().enumerate() {
        assert_eq!(g, 2.0 * i as f32 + 0.5, "y[{i}]");
    }
    assert_eq!(x.to_vec().unwrap()[n - 1], (n - 1) as f32, "x unchanged");
}

#[test]
fn a_compile_error_is_typed() {
    let d = dev();
    if !d.is_cuda() {
        return; // host_devices_say_so covers the host
    }
    match d.compile(
        "broken",
        "extern \"C\" __global__ void broken() { this is not C++; }",
    ) {
        Err(Error::Compile { log, source }) => {
            assert!(!log.is_empty(), "NVRTC's log");
            assert!(source.contains("this is not C++"), "the source: {source}");
        }
        other => panic!("want Error::Compile, got {:?}", other.map(|_| ())),
    }
}

#[test]
fn copies_into_callers_memory() {
    let d = dev();
    for &n in sizes() {
        let v: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(40_503)).collect();
        let xs = upload(&v);
        let mut out = vec![7u32; n];
        xs.to_vec_into(&mut out).unwrap();
        assert_eq!(out, v, "stored, n = {n}");
        xs.map(|x| x ^ 1u32).unwrap().to_vec_into(&mut out).unwrap();
        assert!(
            out.iter().zip(&v).all(|(o, x)| *o == x ^ 1),
            "lazy, n = {n}"
        );
        let mut short = vec![9u32; n + 1];
        assert!(matches!(
            xs.to_vec_into(&mut short),
            Err(Error::LengthMismatch { expected, actual }) if expected == n && actual == n + 1
        ));
        assert!(short.iter().all(|&s| s == 9), "left untouched");
    }
    // Into page-locked memory from cudarc.
    if let Some(stream) = d.cuda_stream() {
        let n = 1 << 20;
        let xs = DeviceSeq::<f64>::sequence(&d, n).unwrap();
        // SAFETY: the page-locked memory is written in full by `to_vec_into` before it is read.
        let mut pinned = unsafe { stream.context().alloc_pinned::<f64>(n) }.unwrap();
        xs.to_vec_into(pinned.as_mut_slice().unwrap()).unwrap();
        let got = pinned.as_slice().unwrap();
        assert!(got.iter().enumerate().all(|(i, &x)| x == i as f64));
    }
}
