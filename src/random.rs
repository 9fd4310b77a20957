//! Counter-based random sequences: Philox4x32-10 (Salmon, Moraes, Dror and Shaw, "Parallel
//! random numbers: as easy as 1, 2, 3", SC 2011; the generator of Random123, of cuRAND's
//! `PHILOX4_32_10`, JAX and PyTorch). Element `i` of a random sequence is a pure function of the
//! seed and `i`, so a random sequence is a lazy source like `sequence`: it is computed where it
//! is read, in any order, and the host and the GPU (`kernels/block/random.cuh`, the same
//! functions) give the same bits.
//!
//! With `key = (seed as u32, (seed >> 32) as u32)` and `P(c)` the four 32-bit words of
//! Philox4x32-10 of the 128-bit counter `c` (little-endian over its words):
//! - u32 bits `i`: word `i % 4` of `P(i / 4)`;
//! - u64 bits `i`: `w0 | w1 << 32` for words `2(i % 2)`, `2(i % 2) + 1` of `P(i / 2)`;
//! - uniform `i`: f32 `(u32 bits i >> 8) * 2^-24`, f64 `(u64 bits i >> 11) * 2^-53`, f16
//!   `(u32 bits i >> 21) * 2^-11`, bf16 `(u32 bits i >> 24) * 2^-8`: in `[0, 1)`;
//! - normal `i` (Box–Muller): with `j = i / 2`, `u1 = 1 - uniform(2j)`, `u2 = uniform(2j + 1)`
//!   (uniforms of the same type; f16/bf16 computed in f32 and rounded once):
//!   `sqrt(-2 ln u1) * cos(2π u2)` for even `i`, `sin` for odd `i`.

use crate::item::ScalarType;

/// What a random leaf computes (its node's type says which float).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Rand {
    Bits,
    Uniform,
    Normal,
}

impl Rand {
    /// The number the CUDA side names this kind by (`ds::random_at<T, KIND>`).
    pub fn code(self) -> u32 {
        match self {
            Rand::Bits => 0,
            Rand::Uniform => 1,
            Rand::Normal => 2,
        }
    }
}

const M0: u32 = 0xD251_1F53;
const M1: u32 = 0xCD9E_8D57;
const W0: u32 = 0x9E37_79B9;
const W1: u32 = 0xBB67_AE85;

/// Philox4x32-10 of counter `ctr` with key `key`.
pub(crate) fn philox(mut ctr: [u32; 4], mut key: [u32; 2]) -> [u32; 4] {
    for r in 0..10 {
        if r > 0 {
            key[0] = key[0].wrapping_add(W0);
            key[1] = key[1].wrapping_add(W1);
        }
        let p0 = M0 as u64 * ctr[0] as u64;
        let p1 = M1 as u64 * ctr[2] as u64;
        ctr = [
            (p1 >> 32) as u32 ^ ctr[1] ^ key[0],
            p1 as u32,
            (p0 >> 32) as u32 ^ ctr[3] ^ key[1],
            p0 as u32,
        ];
    }
    ctr
}

/// `P(c)` for a counter below 2^64, with the key of `seed`.
fn block(seed: u64, c: u64) -> [u32; 4] {
    philox(
        [c as u32, (c >> 32) as u32, 0, 0],
        [seed as u32, (seed >> 32) as u32],
    )
}

/// u32 bits `i`.
pub(crate) fn bits32(seed: u64, i: u64) -> u32 {
    block(seed, i / 4)[(i % 4) as usize]
}

/// u64 bits `i`.
pub(crate) fn bits64(seed: u64, i: u64) -> u64 {
    let w = block(seed, i / 2);
    let k = 2 * (i % 2) as usize;
    w[k] as u64 | (w[k + 1] as u64) << 32
}

/// Uniform `i` of `ty` in `[0, 1)`, as an f64 (exact: it has at most 53 bits).
pub(crate) fn uniform(ty: ScalarType, seed: u64, i: u64) -> f64 {
    match ty {
        ScalarType::F64 => (bits64(seed, i) >> 11) as f64 * (1.0 / (1u64 << 53) as f64),
        ScalarType::F16 => (bits32(seed, i) >> 21) as f64 * (1.0 / 2048.0),
        ScalarType::BF16 => (bits32(seed, i) >> 24) as f64 * (1.0 / 256.0),
        _ => (bits32(seed, i) >> 8) as f64 * (1.0 / (1u32 << 24) as f64),
    }
}

/// Normal `i` of `ty`: f64 for `F64`, else the f32 value (f16/bf16: before the rounding that
/// storing does).
pub(crate) fn normal(ty: ScalarType, seed: u64, i: u64) -> f64 {
    let j = i / 2;
    let odd = i % 2 == 1;
    if ty == ScalarType::F64 {
        let u1 = 1.0 - uniform(ty, seed, 2 * j);
        let u2 = uniform(ty, seed, 2 * j + 1);
        let r = (-2.0 * u1.ln()).sqrt();
        let a = u2 * std::f64::consts::TAU;
        r * if odd { a.sin() } else { a.cos() }
    } else {
        let u1 = 1.0 - uniform(ty, seed, 2 * j) as f32;
        let u2 = uniform(ty, seed, 2 * j + 1) as f32;
        let r = (-2.0 * u1.ln()).sqrt();
        let a = u2 * std::f32::consts::TAU;
        (r * if odd { a.sin() } else { a.cos() }) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random123's known answers for Philox4x32-10 (its kat_vectors file).
    #[test]
    fn known_answers() {
        assert_eq!(
            philox([0; 4], [0; 2]),
            [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]
        );
        assert_eq!(
            philox([u32::MAX; 4], [u32::MAX; 2]),
            [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd]
        );
        assert_eq!(
            philox(
                [0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344],
                [0xa4093822, 0x299f31d0]
            ),
            [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1]
        );
    }
}
