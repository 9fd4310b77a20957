//! What the benchmarks share: the peer benchmark's input generator.

use devseq::Expr;

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
