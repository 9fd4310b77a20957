//! How fast results come back to the host: `to_vec` (a new vector each time), `to_vec_into` a
//! vector the program keeps (its pages already touched), and `to_vec_into` page-locked memory
//! from cudarc (`alloc_pinned`), which the driver fills straight from the device. Prints GB/s,
//! the best of `--reps` copies of `--n` u32 (2^28, 1 GiB, by default; 2^24 on the host).
//!
//!     cargo run --release --example transfers [-- --n 268435456 --reps 5]

mod common;

use devseq::{Device, DeviceSeq};

fn main() -> devseq::Result<()> {
    let dev = Device::auto()?;
    let n: usize = common::flag("--n", if dev.is_cuda() { 1 << 28 } else { 1 << 24 });
    let reps: usize = common::flag("--reps", 5);
    let xs = DeviceSeq::<u32>::sequence(&dev, n)?
        .map(|i| i * 3)?
        .copy()?;
    let gb = (n * 4) as f64 / 1e9;
    let report =
        |what: &str, t: f64| println!("{what:<34} {:>8.2} ms {:>7.1} GB/s", t * 1e3, gb / t);
    println!("{n} u32 ({gb:.2} GB) from {} to the host", dev.name());

    let t = common::best(reps, || {
        let v = xs.to_vec().unwrap();
        assert_eq!(v[n - 1], (n as u32 - 1).wrapping_mul(3));
    });
    report("to_vec (a new Vec each time)", t);

    let mut kept = vec![0u32; n];
    let t = common::best(reps, || xs.to_vec_into(&mut kept).unwrap());
    assert_eq!(kept[n - 1], (n as u32 - 1).wrapping_mul(3));
    report("to_vec_into a kept Vec", t);

    if let Some(stream) = dev.cuda_stream() {
        // SAFETY: the page-locked memory is written in full by `to_vec_into` before it is read.
        let mut pinned = unsafe { stream.context().alloc_pinned::<u32>(n) }.unwrap();
        let t = common::best(reps, || {
            xs.to_vec_into(pinned.as_mut_slice().unwrap()).unwrap()
        });
        assert_eq!(
            pinned.as_slice().unwrap()[n - 1],
            (n as u32 - 1).wrapping_mul(3)
        );
        report("to_vec_into page-locked memory", t);
    } else {
        println!("(no page-locked memory on the host backend)");
    }
    Ok(())
}
