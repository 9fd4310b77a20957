//! The GPU benchmark: each primitive timed with CUDA events (median of 15 runs after a
//! warm-up), printed in the format of the CUB/Thrust peer benchmark that it is compared with,
//! line for line (docs/performance.md):
//!
//!     NAME n=2^K  MS ms  GELEM Gelem/s  GBPS GB/s
//!
//! Inputs are those the peer describes, generated on the device with devseq itself. Lines of
//! fused pipelines are written with the public API only: the lazy sequences fuse them.
//! On the host (no GPU) the same lines show the host backend, at the two smaller sizes.
//! Arguments other than `--bench` are substrings that select primitives by name;
//! `DEVSEQ_BENCH_LG=28` (a comma-separated list) selects sizes; `DEVSEQ_BENCH_EXTRA=1` adds
//! lines the peer does not have (for tuning: the segmented scan of i64, segmented scans of
//! views at an odd offset, segmented_reduce, and `scatter` with the copy of its base).

use devseq::{Device, DeviceSeq, Expr, Op, Result};

mod common;
use common::hash;

struct Bench {
    dev: Device,
    reps: usize,
    filter: Vec<String>,
}

impl Bench {
    fn run(
        &self,
        name: &str,
        lg: u32,
        bytes_per_elem: f64,
        f: impl Fn() -> Result<()>,
    ) -> Result<()> {
        if !self.filter.is_empty() && !self.filter.iter().any(|s| name.contains(s.as_str())) {
            return Ok(());
        }
        self.dev.time(&f)?; // warm-up: compiles and caches the kernels
        self.dev.finish_compiling(); // times the optimized kernels, not their quick first form
        let mut t: Vec<f64> = (0..self.reps)
            .map(|_| self.dev.time(&f))
            .collect::<Result<_>>()?;
        t.sort_by(f64::total_cmp);
        let ms = t[t.len() / 2];
        let n = (1u64 << lg) as f64;
        println!(
            "{:<30} n=2^{:<2} {:10.4} ms {:9.2} Gelem/s {:8.1} GB/s",
            name,
            lg,
            ms,
            n / ms / 1e6,
            n * bytes_per_elem / ms / 1e6
        );
        Ok(())
    }
}

/// The points inside the unit circle of thread `t`'s 256 samples: a Park-Miller generator
/// (`x = 48271 x mod 2^31 - 1`) started from the peer's hash of `t`, two draws a sample.
fn pi_hits(t: Expr<u32>) -> Expr<u64> {
    const M: u64 = 2_147_483_647;
    let x = hash(t).cast::<u64>() % M;
    let x = Expr::select(x.eq(0u64), Expr::constant(1u64), x);
    let unit = |x: Expr<u64>| x.cast::<u32>().cast::<f32>() * (1.0 / 2_147_483_648.0);
    let (_, hits) = Expr::fold_range(256u32, (x, Expr::constant(0u32)), |_, (x, hits)| {
        let x = x * 48_271u64 % M;
        let u = unit(x);
        let x = x * 48_271u64 % M;
        let v = unit(x);
        (x, hits + (u * u + v * v).le(1.0).cast::<u32>())
    });
    hits.cast::<u64>()
}

fn main() -> Result<()> {
    let dev = Device::auto()?;
    let (filter, lgs) = common::args(if dev.is_cuda() {
        &[16, 20, 24, 28]
    } else {
        &[16, 20]
    });
    let reps = if dev.is_cuda() { 15 } else { 5 };
    println!("# devseq {} on {}", env!("CARGO_PKG_VERSION"), dev.name());
    let b = Bench {
        dev: dev.clone(),
        reps,
        filter,
    };
    for lg in lgs {
        let n = 1usize << lg;
        let common::Inputs { idx, keys, f, ints } = common::inputs(&dev, n)?;

        b.run("copy_f32", lg, 8.0, || f.copy().map(drop))?;
        b.run("map_f32", lg, 8.0, || {
            f.map(|x| x * 2.0 + 1.0)?.copy().map(drop)
        })?;
        b.run("reduce_add_f32", lg, 4.0, || {
            f.reduce_to_seq(Op::Add).map(drop)
        })?;
        b.run("reduce_add_i32", lg, 4.0, || {
            ints.reduce_to_seq(Op::Add).map(drop)
        })?;
        b.run("reduce_max_f32", lg, 4.0, || {
            f.reduce_to_seq(Op::Max).map(drop)
        })?;
        b.run("inclusive_scan_add_i32", lg, 8.0, || {
            ints.inclusive_scan(Op::Add).map(drop)
        })?;
        b.run("exclusive_scan_add_f32", lg, 8.0, || {
            f.exclusive_scan(0.0, Op::Add).map(drop)
        })?;
        {
            let flags = idx.map(|i| (i % 1000u32).eq(0))?.copy()?;
            b.run("segmented_scan_add_i32", lg, 8.0, || {
                ints.segmented_inclusive_scan(&flags, Op::Add).map(drop)
            })?;
        }
        // Lines the peer does not have, for tuning only (`DEVSEQ_BENCH_EXTRA=1`): segmented
        // scans of 8-byte values, of views at an odd offset, and segmented_reduce, heads every
        // 1000 as above; scans of two lazy sources; nonzero_indices.
        if std::env::var_os("DEVSEQ_BENCH_EXTRA").is_some() {
            let flags = idx.map(|i| (i % 1000u32).eq(0))?.copy()?;
            let wide = ints.cast::<i64>()?.copy()?;
            b.run("segmented_scan_add_i64", lg, 17.0, || {
                wide.segmented_inclusive_scan(&flags, Op::Add).map(drop)
            })?;
            b.run("segmented_reduce_add_i32", lg, 5.0, || {
                ints.segmented_reduce(&flags, Op::Add).map(drop)
            })?;
            // Views one element in: columns not aligned for 16-byte vectors.
            let (wide1, ints1, flags1) = (wide.slice(1..), ints.slice(1..), flags.slice(1..));
            b.run("segmented_scan_add_i64_unaligned", lg, 17.0, || {
                wide1.segmented_inclusive_scan(&flags1, Op::Add).map(drop)
            })?;
            b.run("segmented_scan_add_i32_unaligned", lg, 9.0, || {
                ints1.segmented_inclusive_scan(&flags1, Op::Add).map(drop)
            })?;
            // Scans of lazy sources computed in registers before they are staged (no column,
            // and two columns), whose kernels take 2 blocks a multiprocessor.
            let at = DeviceSeq::<u64>::sequence(&dev, n)?;
            b.run("inclusive_scan_add_positions_u64", lg, 8.0, || {
                at.inclusive_scan(Op::Add).map(drop)
            })?;
            let mixed = keys.zip_map(&idx, |k, i| k ^ i)?;
            b.run("inclusive_scan_add_xor_u32", lg, 12.0, || {
                mixed.inclusive_scan(Op::Add).map(drop)
            })?;
            // Compaction of computed values (the positions), half of them kept: copy_if_f32's
            // flags.
            b.run("nonzero_indices_u32", lg, 6.0, || {
                f.map(|x| x.lt(0.5))?.nonzero_indices::<u32>().map(drop)
            })?;
        }
        {
            let perm = keys.argsort::<u32>()?;
            // `gather` is lazy: stored by `copy`.
            b.run("gather_f32", lg, 12.0, || f.gather(&perm)?.copy().map(drop))?;
            // The peer's permutation_iterator read by a reduction: the gather fused into it.
            b.run("permutation_reduce_f32", lg, 8.0, || {
                f.gather(&perm)?.reduce_to_seq(Op::Add).map(drop)
            })?;
            // The peer's scatter writes into an output it was given: here `scatter_into` a
            // target the bench alone holds (written in place, no copy). `scatter`, which makes
            // a new sequence from a copy of its base, is the extra line `scatter_copy_f32`.
            let out = std::cell::RefCell::new(DeviceSeq::filled(&dev, 0f32, n)?.copy()?);
            b.run("scatter_f32", lg, 12.0, || {
                f.scatter_into(&perm, &mut out.borrow_mut())
            })?;
            if std::env::var_os("DEVSEQ_BENCH_EXTRA").is_some() {
                b.run("scatter_copy_f32", lg, 12.0, || {
                    f.scatter(&perm, &out.borrow()).map(drop)
                })?;
            }
        }
        b.run("adjacent_difference_i32", lg, 8.0, || {
            ints.adjacent_difference()?.copy().map(drop)
        })?;
        // The peer's zip of three shifted iterators: three slices of one column.
        b.run("stencil3_f32", lg, 8.0, || {
            let (a, c) = (f.slice(..n - 2), f.slice(2..));
            f.slice(1..n - 1)
                .zip_map(&a, |m, l| l + m)?
                .zip_map(&c, |lm, r| lm + r)?
                .copy()
                .map(drop)
        })?;
        {
            // The peer's sets: the sorted keys of the first and the middle halves, sharing a
            // quarter (distinct: the hash is a bijection).
            let (sa, sb) = (
                keys.slice(..n / 2).sort()?,
                keys.slice(n / 4..n / 4 + n / 2).sort()?,
            );
            b.run("set_union_u32", lg, 7.0, || sa.set_union(&sb).map(drop))?;
            b.run("set_intersection_u32", lg, 5.0, || {
                sa.set_intersection(&sb).map(drop)
            })?;
        }
        {
            // The peer's tuple sort: (hi, lo) pairs as two columns, hi = hash(i) >> 20 (4096
            // values, many ties), sorted lexicographically and returned as two columns.
            let hi = keys.map(|k| k >> 20u32)?.copy()?;
            let lo = idx.map(|i| hash(i ^ 0x5bd1e995u32))?.copy()?;
            let pairs = DeviceSeq::zip(&hi, &lo)?;
            b.run("sort_tuple_u32_u32", lg, 16.0, || pairs.sort().map(drop))?;
        }
        {
            // The peer's Monte Carlo: a thread of 256 samples an element, its generator's
            // state in registers through the loop.
            let threads = DeviceSeq::<u32>::sequence(&dev, n / 256)?;
            b.run("monte_carlo_pi_f32", lg, 0.0, || {
                threads.map(pi_hits)?.reduce_to_seq(Op::Add).map(drop)
            })?;
        }
        b.run("sort_u32", lg, 8.0, || keys.sort().map(drop))?;
        b.run("sort_f32", lg, 8.0, || f.sort().map(drop))?;
        b.run("sort_pairs_u32", lg, 16.0, || {
            keys.sort_pairs(&idx).map(drop)
        })?;
        {
            let m = (n / 16) as u32;
            let bins = keys.map(move |k| k % m)?.copy()?;
            let zeros = DeviceSeq::filled(&dev, 0f32, n / 16)?.copy()?;
            b.run("scatter_combine_add_f32", lg, 12.0, || {
                f.scatter_combine(&bins, &zeros, Op::Add).map(drop)
            })?;
        }
        {
            let h = keys.map(|k| k & 255u32)?.copy()?;
            b.run("histogram_256_u32", lg, 4.0, || {
                h.histogram(256, 0, 256).map(drop)
            })?;
        }
        {
            let a = idx.map(|i| i / 3u32)?.copy()?;
            b.run("find_repeats_u32", lg, 4.0, || {
                let eq = a.slice(..n - 1).zip_map(&a.slice(1..), |x, y| x.eq(y))?;
                eq.nonzero_indices::<u32>().map(drop)
            })?;
        }
        // Fused pipelines: the peer passes CUB a transform iterator or functor.
        b.run("transform_reduce_f32", lg, 4.0, || {
            f.map(|x| x * x)?.reduce_to_seq(Op::Add).map(drop)
        })?;
        b.run("transform_scan_u32", lg, 8.0, || {
            keys.map(|k| k & 255u32)?.inclusive_scan(Op::Add).map(drop)
        })?;
        b.run("copy_if_f32", lg, 6.0, || {
            f.compact(&f.map(|x| x.lt(0.5))?).map(drop)
        })?;
        b.run("random_uniform_f32", lg, 4.0, || {
            DeviceSeq::<f32>::random_uniform(&dev, n, 12345)?
                .copy()
                .map(drop)
        })?;
        {
            let r3 = idx.map(|i| i / 3u32)?.copy()?;
            let r8 = idx.map(|i| i / 8u32)?.copy()?;
            b.run("unique_u32", lg, 4.0 + 4.0 / 3.0, || r3.dedup().map(drop))?;
            b.run("reduce_by_key_f32", lg, 9.0, || {
                r8.reduce_by_key(&f, Op::Add).map(drop)
            })?;
        }
        // Custom operators (traced closures): an argmax, a scan of affine maps (the crate
        // writes both components of the composed maps, 16 bytes an element; the peer writes
        // h alone), and a sum and sum of squares in one pass from one lazy column.
        b.run("argmax_f32", lg, 4.0, || f.argmax().map(drop))?;
        {
            let ab = f.map(|x| (x * 0.5 + 0.5, x - 0.5))?.copy()?;
            b.run("linear_recurrence_f32", lg, 12.0, || {
                ab.inclusive_scan_with(|(a1, b1), (a2, b2)| (a1 * a2, b1 * a2 + b2))
                    .map(drop)
            })?;
        }
        // Searching and merging: the peer's hay (the keys sorted), needles and halves.
        {
            let hay = keys.sort()?;
            let needles = idx.map(|i| hash(i ^ 0x9e3779b9u32))?.copy()?;
            b.run("lower_bound_u32", lg, 8.0, || {
                hay.lower_bound::<u32>(&needles).map(drop)
            })?;
            let (lo, hi) = (keys.slice(..n / 2).sort()?, keys.slice(n / 2..).sort()?);
            b.run("merge_u32", lg, 8.0, || lo.merge(&hi).map(drop))?;
            // No peer lines: CCCL 3.0.1 has no top-k (compare with reduce_add_f32 and
            // torch.topk), and sort_descending is compared with sort_u32.
            b.run("sort_descending_u32", lg, 8.0, || {
                keys.sort_descending().map(drop)
            })?;
            b.run("top_k_16_f32", lg, 4.0, || f.top_k::<u32>(16).map(drop))?;
            b.run("top_k_100_f32", lg, 4.0, || f.top_k::<u32>(100).map(drop))?;
            b.run("top_k_1024_f32", lg, 4.0, || f.top_k::<u32>(1024).map(drop))?;
        }
        // 8-byte elements: f64 = f, i64 = ints, u64 keys (hash(i) << 32) | hash(i ^ 0x5bd1e995),
        // segments of 1000 (head flags where the peer's by-key scan has keys i / 1000).
        {
            let dbl = f.cast::<f64>()?.copy()?;
            let wide = ints.cast::<i64>()?.copy()?;
            let k64 = idx
                .map(|i| (hash(i).cast::<u64>() << 32u32) | hash(i ^ 0x5bd1e995u32).cast::<u64>())?
                .copy()?;
            b.run("reduce_add_f64", lg, 8.0, || {
                dbl.reduce_to_seq(Op::Add).map(drop)
            })?;
            b.run("inclusive_scan_add_i64", lg, 16.0, || {
                wide.inclusive_scan(Op::Add).map(drop)
            })?;
            let flags = idx.map(|i| (i % 1000u32).eq(0))?.copy()?;
            b.run("segmented_scan_add_f64", lg, 16.0, || {
                dbl.segmented_inclusive_scan(&flags, Op::Add).map(drop)
            })?;
            // No peer line: the i64 twin of the f64 line (the peer's by-key scan is of f64).
            b.run("segmented_scan_add_i64", lg, 16.0, || {
                wide.segmented_inclusive_scan(&flags, Op::Add).map(drop)
            })?;
            let perm = keys.argsort::<u32>()?;
            b.run("gather_f64", lg, 20.0, || {
                dbl.gather(&perm)?.copy().map(drop)
            })?;
            b.run("sort_u64", lg, 16.0, || k64.sort().map(drop))?;
            b.run("sort_pairs_u64_u32", lg, 24.0, || {
                k64.sort_pairs(&idx).map(drop)
            })?;
        }
        b.run("reduce_with_pairs_f32", lg, 4.0, || {
            f.map(|x| (x, x * x))?
                .reduce_with(|(s, q), (t, r)| (s + t, q + r))
                .map(drop)
        })?;
    }
    Ok(())
}
