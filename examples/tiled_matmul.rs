//! The tiled matrix product of every CUDA course, on devseq sequences: C = A B for square
//! row-major `f32` matrices, by three kernels of our own compiled with `Device::compile` (a
//! naive one, one thread an element reading A and B from global memory; and the shared-memory
//! tiled one with 16x16 and 32x32 tiles, each block staging a tile of A and of B per step so
//! that every element loaded from memory is used `tile` times), launched with cudarc's launch
//! builder on devseq's stream at the addresses of the sequences (`DeviceSeq::device_ptr`).
//! Each product is checked against the host's (every element up to `--n 512`, 4096 sampled
//! elements beyond, in `f64` within the `f32` rounding bound), and timed: GFLOP/s is
//! 2 n^3 / time, the best of `--reps` runs. cuBLAS's SGEMM (through cudarc's bindings) runs on
//! the same inputs for comparison where libcublas loads, and is skipped with a message where
//! it does not.
//!
//!     cargo run --release --example tiled_matmul [-- --n 4096 --reps 5 --seed 7]
//!
//! The host backend compiles no kernels: without a GPU the example says so and stops.

mod common;

use devseq::cudarc::driver::{CudaStream, LaunchConfig, PushKernelArg};
use devseq::{Device, DeviceSeq};
use std::sync::Arc;

const SOURCE: &str = r#"
// One thread an element of C: row `row` of A and column `col` of B from global memory.
extern "C" __global__ void matmul_naive(const float* a, const float* b, float* c, u32 n) {
  const u32 col = blockIdx.x * blockDim.x + threadIdx.x;
  const u32 row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= n || col >= n) return;
  float s = 0.0f;
  for (u32 k = 0; k < n; ++k) s += a[(u64)row * n + k] * b[(u64)k * n + col];
  c[(u64)row * n + col] = s;
}

// A T x T block computes a T x T tile of C: per step it stages a T x T tile of A and one of B
// in shared memory (each thread loads one element of each, zero past the edges), then every
// thread takes the dot product of its row of the A tile and its column of the B tile.
template <int T>
__device__ void tiled(const float* a, const float* b, float* c, u32 n) {
  __shared__ float as[T][T];
  __shared__ float bs[T][T];
  const u32 tx = threadIdx.x, ty = threadIdx.y;
  const u32 row = blockIdx.y * T + ty, col = blockIdx.x * T + tx;
  float s = 0.0f;
  for (u32 t = 0; t < n; t += T) {
    as[ty][tx] = (row < n && t + tx < n) ? a[(u64)row * n + t + tx] : 0.0f;
    bs[ty][tx] = (t + ty < n && col < n) ? b[(u64)(t + ty) * n + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < T; ++k) s += as[ty][k] * bs[k][tx];
    __syncthreads();
  }
  if (row < n && col < n) c[(u64)row * n + col] = s;
}

extern "C" __global__ void matmul_tiled16(const float* a, const float* b, float* c, u32 n) {
  tiled<16>(a, b, c, n);
}
extern "C" __global__ void matmul_tiled32(const float* a, const float* b, float* c, u32 n) {
  tiled<32>(a, b, c, n);
}
"#;

/// `n x n` elements uniform in [-1, 1), stored.
fn matrix(dev: &Device, n: usize, seed: u64) -> devseq::Result<DeviceSeq<f32>> {
    DeviceSeq::<f32>::random_uniform(dev, n * n, seed)?
        .map(|u| u * 2.0 - 1.0)?
        .copy()
}

/// Checks `c` against the host's product of `a` and `b` (all elements, or a sample of 4096):
/// each within the bound on the rounding of an `f32` dot product of `n` terms.
fn check(what: &str, a: &[f32], b: &[f32], c: &[f32], n: usize) {
    let all = n <= 512;
    let count = if all { n * n } else { 4096 };
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    for e in 0..count {
        let (i, j) = if all {
            (e / n, e % n)
        } else {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let r = (state >> 33) as usize;
            (r % n, (r / n) % n)
        };
        let (mut exact, mut magnitude) = (0f64, 0f64);
        for k in 0..n {
            let p = a[i * n + k] as f64 * b[k * n + j] as f64;
            exact += p;
            magnitude += p.abs();
        }
        let bound = 2.0 * n as f64 * f32::EPSILON as f64 * magnitude + 1e-30;
        let got = c[i * n + j] as f64;
        assert!(
            (got - exact).abs() <= bound,
            "{what}: C[{i}][{j}] = {got}, the host's {exact} (bound {bound:e})"
        );
    }
}

/// SGEMM from cuBLAS on the same inputs: its time, and its product (row-major, so computed
/// as the column-major Cᵀ = Bᵀ Aᵀ), or `None` where libcublas does not load.
fn cublas(
    stream: &Arc<CudaStream>,
    a: &DeviceSeq<f32>,
    b: &DeviceSeq<f32>,
    n: usize,
    reps: usize,
) -> Option<(f64, Vec<f32>)> {
    use cudarc::cublas::{CudaBlas, Gemm, GemmConfig, sys};
    // SAFETY: only looks for the library on the loader's search path.
    if !unsafe { sys::is_culib_present() } {
        println!("cuBLAS SGEMM: libcublas was not found; skipped");
        return None;
    }
    let blas = match CudaBlas::new(stream.clone()) {
        Ok(b) => b,
        Err(e) => {
            println!("cuBLAS SGEMM: no handle ({e:?}); skipped");
            return None;
        }
    };
    let (da, db) = (a.to_cuda_slice().unwrap(), b.to_cuda_slice().unwrap());
    let mut dc = stream.alloc_zeros::<f32>(n * n).unwrap();
    let m = n as i32;
    let cfg = GemmConfig {
        transa: sys::cublasOperation_t::CUBLAS_OP_N,
        transb: sys::cublasOperation_t::CUBLAS_OP_N,
        m,
        n: m,
        k: m,
        alpha: 1.0f32,
        lda: m,
        ldb: m,
        beta: 0.0f32,
        ldc: m,
    };
    let t = common::best(reps, || {
        // SAFETY: three n x n f32 matrices of n * n elements each, with leading dimension n,
        // on the handle's stream; the slices outlive the call's work (waited for here).
        unsafe { blas.gemm(cfg, &db, &da, &mut dc) }.unwrap();
        stream.synchronize().unwrap();
    });
    Some((t, stream.clone_dtoh(&dc).unwrap()))
}

fn main() -> devseq::Result<()> {
    let dev = Device::auto()?;
    let Some(stream) = dev.cuda_stream() else {
        println!(
            "tiled_matmul launches CUDA kernels of its own: it needs a GPU ({} has none)",
            dev.name()
        );
        return Ok(());
    };
    let n: usize = common::flag("--n", 4096);
    let reps: usize = common::flag("--reps", 5);
    let seed: u64 = common::flag("--seed", 7);
    assert!(n > 0 && n <= 1 << 15, "--n: 1 to 32768");
    let a = matrix(&dev, n, seed)?;
    let b = matrix(&dev, n, seed + 1)?;
    let (ha, hb) = (a.to_vec()?, b.to_vec()?);
    let flop = 2.0 * (n as f64).powi(3);
    println!("C = A B, {n} x {n} f32, best of {reps} runs");
    println!("{:<22} {:>10} {:>10}", "kernel", "ms", "GFLOP/s");
    let mut rates = Vec::new();
    for (name, tile) in [
        ("matmul_naive", 16u32),
        ("matmul_tiled16", 16),
        ("matmul_tiled32", 32),
    ] {
        let k = dev.compile(name, SOURCE)?;
        let c = DeviceSeq::filled(&dev, f32::NAN, n * n)?.copy()?;
        let (pa, pb, pc) = (a.device_ptr()?, b.device_ptr()?, c.device_ptr()?);
        let n32 = n as u32;
        let blocks = n32.div_ceil(tile);
        let cfg = LaunchConfig {
            grid_dim: (blocks, blocks, 1),
            block_dim: (tile, tile, 1),
            shared_mem_bytes: 0,
        };
        let t = common::best(reps, || {
            let mut launch = stream.launch_builder(&k);
            launch.arg(&pa).arg(&pb).arg(&pc).arg(&n32);
            // SAFETY: every kernel of SOURCE takes (const float*, const float*, float*, u32):
            // the addresses of three stored n * n f32 sequences that live past the launch
            // (queued on devseq's stream, waited for here), and n; the grid covers C.
            unsafe { launch.launch(cfg) }.unwrap();
            stream.synchronize().unwrap();
        });
        check(name, &ha, &hb, &c.to_vec()?, n);
        println!("{name:<22} {:>10.3} {:>10.0}", t * 1e3, flop / t / 1e9);
        rates.push(flop / t / 1e9);
    }
    if let Some((t, c)) = cublas(&stream, &a, &b, n, reps) {
        check("cuBLAS SGEMM", &ha, &hb, &c, n);
        println!(
            "{:<22} {:>10.3} {:>10.0}",
            "cuBLAS SGEMM",
            t * 1e3,
            flop / t / 1e9
        );
    }
    println!(
        "tiles of 16 run {:.1}x, tiles of 32 {:.1}x the naive kernel's rate",
        rates[1] / rates[0],
        rates[2] / rates[0]
    );
    Ok(())
}
