//! Host cost of a call at small sizes, kernels cached: for each primitive at 2^10 elements
//! (`DEVSEQ_BENCH_LG` for other sizes), in microseconds a call,
//!
//! - `submit`: host time of the call while the GPU is still busy with earlier work, so that
//!   nothing waits for the GPU but what the call itself waits for (the median of 15 batches of
//!   32 calls). A call that returns before its work ends costs only this; a call that reads a
//!   result back (a count, a scalar) shows the wait for the busy GPU and is marked `waits`.
//! - `latency`: the call and a `synchronize` on an idle GPU (the median of 201 calls): what a
//!   caller that needs the result at once pays, launch latency and kernel time included.
//! - `event`: the GPU's time from an event recorded before the call to one recorded after it
//!   (the median of 15), as `benches/primitives` and its peer measure: host time until the
//!   last work is queued, plus that work's time on the GPU.
//!
//! The `driver` lines do through cudarc alone what the crate's copy does (allocate, copy,
//! free in stream order): the floor that the crate's own code adds to. On the host backend the
//! same lines show the host's call costs. Arguments other than `--bench` are substrings that
//! select lines by name. docs/performance.md ("Runs 124-132") records the figures.

use devseq::{Device, DeviceSeq, Op, Result};
use std::time::Instant;

mod common;

/// Calls a batch, batches a line, calls a latency sample.
const BATCH: usize = 32;
const BATCHES: usize = 15;
const SAMPLES: usize = 201;

struct Bench {
    dev: Device,
    filter: Vec<String>,
    /// A lazy sequence whose reduction keeps the GPU busy for a few milliseconds.
    busy: DeviceSeq<f32>,
}

fn median(mut t: Vec<f64>) -> f64 {
    t.sort_by(f64::total_cmp);
    t[t.len() / 2]
}

impl Bench {
    fn run(&self, name: &str, lg: u32, f: impl Fn() -> Result<()>) -> Result<()> {
        if !self.filter.is_empty() && !self.filter.iter().any(|s| name.contains(s.as_str())) {
            return Ok(());
        }
        for _ in 0..8 {
            f()?; // warm-up: compiles and caches the kernels, fills the memory pool
        }
        self.dev.finish_compiling();
        self.dev.synchronize()?;
        let mut submit = Vec::with_capacity(BATCHES);
        for _ in 0..BATCHES {
            // Several milliseconds of GPU work queued first: the batch's calls queue behind it.
            let busy = self.busy.reduce_to_seq(Op::Add)?;
            let t0 = Instant::now();
            for _ in 0..BATCH {
                f()?;
            }
            submit.push(t0.elapsed().as_secs_f64() * 1e6 / BATCH as f64);
            drop(busy);
            self.dev.synchronize()?;
        }
        let latency = (0..SAMPLES)
            .map(|_| {
                let t0 = Instant::now();
                f()?;
                self.dev.synchronize()?;
                Ok(t0.elapsed().as_secs_f64() * 1e6)
            })
            .collect::<Result<Vec<f64>>>()?;
        let submit = median(submit);
        // A batch that took about as long as the busy work (about 7 ms on an H100) waited
        // for it; a sort's several launches take 1-2 ms a batch without waiting.
        let waits = submit * BATCH as f64 > 4000.0 && self.dev.is_cuda();
        let event = (0..BATCHES)
            .map(|_| Ok(self.dev.time(&f)? * 1e3))
            .collect::<Result<Vec<f64>>>()?;
        println!(
            "{:<30} n=2^{:<2} submit {:8.2} us  latency {:8.2} us  event {:8.2} us{}",
            name,
            lg,
            submit,
            median(latency),
            median(event),
            if waits { "  waits" } else { "" }
        );
        Ok(())
    }
}

fn main() -> Result<()> {
    let dev = Device::auto()?;
    let (filter, lgs) = common::args(&[10]);
    println!("# devseq {} on {}", env!("CARGO_PKG_VERSION"), dev.name());
    let busy_len = if dev.is_cuda() { 1 << 31 } else { 1 << 10 };
    let b = Bench {
        dev: dev.clone(),
        filter,
        busy: DeviceSeq::<f32>::random_normal(&dev, busy_len, 7)?,
    };
    for lg in lgs {
        let n = 1usize << lg;
        let common::Inputs { idx, keys, f, ints } = common::inputs(&dev, n)?;
        let flags = idx.map(|i| (i % 1000u32).eq(0))?.copy()?;
        let perm = keys.argsort::<u32>()?;
        let base = DeviceSeq::filled(&dev, 0f32, n)?.copy()?;

        if let Some(stream) = dev.cuda_stream() {
            let bytes = n * 4;
            let src = f.to_cuda_slice()?;
            let drv = |e: cudarc::driver::DriverError| devseq::Error::Cuda(format!("{e:?}"));
            b.run("driver_alloc_free", lg, || {
                // SAFETY: nothing reads the uninitialized bytes; they are freed at once.
                drop(unsafe { stream.alloc::<u8>(bytes) }.map_err(drv)?);
                Ok(())
            })?;
            // SAFETY: written by each copy before anything could read it; nothing does.
            let mut dst = unsafe { stream.alloc::<f32>(n) }.map_err(drv)?;
            let dst = std::cell::RefCell::new(&mut dst);
            b.run("driver_copy", lg, || {
                stream.memcpy_dtod(&src, *dst.borrow_mut()).map_err(drv)
            })?;
            b.run("driver_alloc_copy_free", lg, || {
                // SAFETY: written by the copy before it is freed; nothing reads it.
                let mut dst = unsafe { stream.alloc::<f32>(n) }.map_err(drv)?;
                stream.memcpy_dtod(&src, &mut dst).map_err(drv)?;
                Ok(())
            })?;
        }
        b.run("slice", lg, || {
            drop(f.slice(1..n - 1));
            Ok(())
        })?;
        b.run("map_lazy", lg, || f.map(|x| x * 2.0 + 1.0).map(drop))?;
        b.run("copy_f32", lg, || f.copy().map(drop))?;
        b.run("filled_f32", lg, || {
            DeviceSeq::filled(&dev, 1f32, n)?.copy().map(drop)
        })?;
        b.run("map_f32", lg, || f.map(|x| x * 2.0 + 1.0)?.copy().map(drop))?;
        b.run("to_vec_f32", lg, || f.to_vec().map(drop))?;
        b.run("reduce_add_f32", lg, || f.reduce_to_seq(Op::Add).map(drop))?;
        b.run("reduce_add_f32_to_host", lg, || f.reduce(Op::Add).map(drop))?;
        b.run("inclusive_scan_add_i32", lg, || {
            ints.inclusive_scan(Op::Add).map(drop)
        })?;
        b.run("exclusive_scan_add_f32", lg, || {
            f.exclusive_scan(0.0, Op::Add).map(drop)
        })?;
        b.run("segmented_scan_add_i32", lg, || {
            ints.segmented_inclusive_scan(&flags, Op::Add).map(drop)
        })?;
        b.run("segmented_reduce_add_i32", lg, || {
            ints.segmented_reduce(&flags, Op::Add).map(drop)
        })?;
        b.run("gather_f32", lg, || f.gather(&perm)?.copy().map(drop))?;
        b.run("scatter_f32", lg, || f.scatter(&perm, &base).map(drop))?;
        let target = std::cell::RefCell::new(base.copy()?);
        b.run("scatter_into_f32", lg, || {
            f.scatter_into(&perm, &mut target.borrow_mut())
        })?;
        b.run("scatter_combine_add_f32", lg, || {
            f.scatter_combine(&perm, &base, Op::Add).map(drop)
        })?;
        b.run("histogram_256_u32", lg, || {
            keys.histogram(256, 0, u32::MAX).map(drop)
        })?;
        b.run("sort_u32", lg, || keys.sort().map(drop))?;
        b.run("sort_pairs_u32", lg, || keys.sort_pairs(&idx).map(drop))?;
        b.run("copy_if_f32", lg, || {
            f.compact(&f.map(|x| x.lt(0.5))?).map(drop)
        })?;
        b.run("unique_u32", lg, || keys.dedup().map(drop))?;
        b.run("reduce_by_key_f32", lg, || {
            keys.reduce_by_key(&f, Op::Add).map(drop)
        })?;
        b.run("argmax_f32", lg, || f.argmax().map(drop))?;
        b.run("linear_recurrence_f32", lg, || {
            f.map(|x| (x, x))?
                .inclusive_scan_with(|(a1, b1), (a2, b2)| (a1 * a2, b1 * a2 + b2))
                .map(drop)
        })?;
        // A custom operator with a constant and an initial item (both passed by value).
        let pairs = f.map(|x| (x, x))?.copy()?;
        b.run("exclusive_scan_with_const_f32", lg, || {
            pairs
                .exclusive_scan_with((1.0, 0.0), |(a1, b1), (a2, b2)| {
                    (a1 * a2 * 0.5, b1 * a2 + b2)
                })
                .map(drop)
        })?;
        b.run("reduce_with_pairs_f32", lg, || {
            f.map(|x| (x, x * x))?
                .reduce_with(|(s, q), (t, r)| (s + t, q + r))
                .map(drop)
        })?;
        b.run("lower_bound_u32", lg, || {
            idx.lower_bound::<u32>(&keys).map(drop)
        })?;
        b.run("merge_u32", lg, || idx.merge(&idx).map(drop))?;
        b.run("top_k_16_f32", lg, || f.top_k::<u32>(16).map(drop))?;
        b.run("random_uniform_f32", lg, || {
            DeviceSeq::<f32>::random_uniform(&dev, n, 12345)?
                .copy()
                .map(drop)
        })?;
    }
    Ok(())
}
