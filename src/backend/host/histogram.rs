//! `histogram` on the host, with the bin formula of the GPU kernel.

use super::HostSrc;
use crate::error::Result;
use crate::item::{Element, ScalarType, reserved};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};

/// The bin of x in [lo, hi) of `bins`, or None (outside, or NaN).
pub(crate) fn bin_of<T: Element>(x: T, bins: u64, lo: T, hi: T) -> Option<u64> {
    let ty = T::TYPE;
    if ty.is_float() {
        if ty == ScalarType::F64 {
            let (v, lo, hi) = (
                f64::from_bits(x.to_bits()),
                f64::from_bits(lo.to_bits()),
                f64::from_bits(hi.to_bits()),
            );
            if !(v >= lo && v < hi) {
                return None;
            }
            let t = ((v - lo) / (hi - lo) * bins as f64).floor();
            Some((t as u64).min(bins - 1))
        } else {
            let (v, lo, hi) = (
                f32_of(x.compute_bits()),
                f32_of(lo.compute_bits()),
                f32_of(hi.compute_bits()),
            );
            if !(v >= lo && v < hi) {
                return None;
            }
            let t = ((v - lo) / (hi - lo) * bins as f32).floor();
            Some((t as u64).min(bins - 1))
        }
    } else {
        let (v, l, h) = (x.to_compute(), lo.to_compute(), hi.to_compute());
        if !(v >= l && v < h) {
            return None;
        }
        let mask = if ty.bits() == 64 {
            !0u64
        } else {
            (1u64 << ty.bits()) - 1
        };
        let diff = x.to_bits().wrapping_sub(lo.to_bits()) & mask;
        let range = hi.to_bits().wrapping_sub(lo.to_bits()) & mask;
        Some((diff as u128 * bins as u128 / range as u128) as u64)
    }
}

fn f32_of(bits: u64) -> f32 {
    f32::from_bits(bits as u32)
}

/// Bins up to which each of rayon's tasks counts into its own vector (at most 512 KiB a task);
/// more are counted into one vector of atomic counters, so that memory does not grow with
/// the tasks (the counts are the same either way).
const PRIVATE_BINS: usize = 1 << 16;

pub(crate) fn histogram<T: Element>(
    s: &HostSrc<'_, T>,
    bins: usize,
    lo: T,
    hi: T,
) -> Result<Vec<u64>> {
    let b = bins as u64;
    if bins > PRIVATE_BINS {
        let mut counts: Vec<AtomicU64> = reserved(bins)?;
        counts.resize_with(bins, || AtomicU64::new(0));
        (0..s.chunks()).into_par_iter().for_each(|c| {
            for &x in s.chunk(c).iter() {
                if let Some(k) = bin_of(x, b, lo, hi) {
                    counts[k as usize].fetch_add(1, Ordering::Relaxed);
                }
            }
        });
        return Ok(counts.into_iter().map(AtomicU64::into_inner).collect());
    }
    Ok((0..s.chunks())
        .into_par_iter()
        .fold(
            || vec![0u64; bins],
            |mut h, c| {
                for &x in s.chunk(c).iter() {
                    if let Some(k) = bin_of(x, b, lo, hi) {
                        h[k as usize] += 1;
                    }
                }
                h
            },
        )
        .reduce(
            || vec![0u64; bins],
            |mut a, b| {
                for (x, y) in a.iter_mut().zip(b) {
                    *x += y;
                }
                a
            },
        ))
}
