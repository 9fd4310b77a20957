//! What the benchmarks share: the peer benchmark's input generator.

// Each bench compiles this module on its own and uses a part of it.
#![allow(dead_code)]

use devseq::{Device, DeviceSeq, Expr, Result};

/// The peer's 32-bit mixer (`Hash` in the CUB/Thrust benchmark), as an expression of the
/// element index.
pub fn hash(i: Expr<u32>) -> Expr<u32> {
    let x = (i * 2654435761u32) ^ 12345u32;
    let x = x ^ (x >> 16u32);
    let x = x * 0x7feb352du32;
    let x = x ^ (x >> 15u32);
    let x = x * 0x846ca68bu32;
    x ^ (x >> 16u32)
}

/// The command line and environment of a benchmark: the name filters (arguments other than
/// `--bench`), and the sizes as powers of two (`DEVSEQ_BENCH_LG=24,28`, else `default`).
pub fn args(default: &[u32]) -> (Vec<String>, Vec<u32>) {
    let filter = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let lgs = match std::env::var("DEVSEQ_BENCH_LG") {
        Ok(v) => v.split(',').filter_map(|s| s.trim().parse().ok()).collect(),
        Err(_) => default.to_vec(),
    };
    (filter, lgs)
}

/// The peer's floats in [0, 1) from a key's high 24 bits.
pub fn unit_float(x: Expr<u32>) -> Expr<f32> {
    (x >> 8u32).cast::<f32>() * (1.0 / 16_777_216.0)
}

/// The peer's small ints in [-512, 512) from a key's low 10 bits.
pub fn small_int(x: Expr<u32>) -> Expr<i32> {
    (x & 1023u32).cast::<i32>() - 512
}

/// The peer's stored inputs of `n` elements: the element positions, the hashed keys, floats in
/// [0, 1) and the small ints of the keys.
pub struct Inputs {
    pub idx: DeviceSeq<u32>,
    pub keys: DeviceSeq<u32>,
    pub f: DeviceSeq<f32>,
    pub ints: DeviceSeq<i32>,
}

/// The inputs, stored as the peer's are (a lazy input would be computed inside each timed
/// primitive instead of read).
pub fn inputs(dev: &Device, n: usize) -> Result<Inputs> {
    let idx = DeviceSeq::<u32>::sequence(dev, n)?.copy()?;
    let keys = idx.map(hash)?.copy()?;
    let f = keys.map(unit_float)?.copy()?;
    let ints = keys.map(small_int)?.copy()?;
    Ok(Inputs { idx, keys, f, ints })
}
