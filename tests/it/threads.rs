//! One Device shared by 8 threads, each running its own pipeline; and two Devices (two
//! streams) on one GPU.

use crate::common::*;
use devseq::{Device, DeviceSeq, Op};

fn pipeline(d: &Device, k: u64) -> (u64, Vec<u32>, f64) {
    let n = 200_000 + k as usize * 1000;
    let xs = DeviceSeq::<u64>::sequence(d, n).unwrap();
    let ys = xs.map(move |x| (x * (k + 3)) % 1009).unwrap();
    let sum = ys.reduce(Op::Add).unwrap();
    let sorted = ys.cast::<u32>().unwrap().sort().unwrap();
    let heads = sorted.head_flags().unwrap();
    let distinct = sorted.compact(&heads).unwrap().to_vec().unwrap();
    let f = ys.cast::<f64>().unwrap().inclusive_scan(Op::Add).unwrap();
    let last = f.slice(n - 1..).to_vec().unwrap()[0];
    (sum, distinct, last)
}

fn oracle(k: u64) -> (u64, Vec<u32>, f64) {
    let n = 200_000 + k as usize * 1000;
    let ys: Vec<u64> = (0..n as u64).map(|x| (x * (k + 3)) % 1009).collect();
    let sum = ys.iter().sum();
    let mut d: Vec<u32> = ys.iter().map(|&y| y as u32).collect();
    d.sort();
    d.dedup();
    (sum, d, ys.iter().sum::<u64>() as f64)
}

#[test]
fn eight_threads_one_device() {
    let d = dev();
    std::thread::scope(|s| {
        let hs: Vec<_> = (0..8u64)
            .map(|k| {
                let d = d.clone();
                s.spawn(move || (k, pipeline(&d, k)))
            })
            .collect();
        for h in hs {
            let (k, got) = h.join().unwrap();
            assert_eq!(got, oracle(k), "thread {k}");
        }
    });
}

#[test]
fn two_devices_one_gpu() {
    let d = dev();
    let (a, b) = if d.is_cuda() {
        (Device::cuda(0).unwrap(), Device::cuda(0).unwrap())
    } else {
        (Device::host(), Device::host())
    };
    std::thread::scope(|s| {
        let ha = s.spawn(|| pipeline(&a, 1));
        let hb = s.spawn(|| pipeline(&b, 2));
        assert_eq!(ha.join().unwrap(), oracle(1));
        assert_eq!(hb.join().unwrap(), oracle(2));
    });
    if d.is_cuda() {
        let x = DeviceSeq::from_slice(&a, &[1u8]).unwrap();
        let y = DeviceSeq::from_slice(&b, &[1u8]).unwrap();
        assert!(matches!(
            x.zip_map(&y, |p, q| p + q),
            Err(devseq::Error::DeviceMismatch)
        ));
    }
}
