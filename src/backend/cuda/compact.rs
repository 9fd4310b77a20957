//! `compact` (and so `nonzero_indices`, a compaction of the lazy positions) on the GPU
//! (`kernels/compact.cu`): one fused pass.

use super::gpu::Gpu;
use super::key::{CompactKey, Template};
use super::mem::{Buffer, Ptr};
use super::params::kernel_params;
use super::tuning::{self, Arch};
use crate::error::Result;
use crate::item::ScalarType;
use crate::source::Source;

kernel_params!(
    /// `ds_compact`'s parameters: `total` gets the count.
    CompactParams {
        out: Ptr,
        n: u64,
        total: Ptr,
        counter: Ptr,
        status: Ptr,
        base: u32,
        epoch: u32,
        tiles: u32,
    }
);

impl Template for CompactKey {
    type Params = CompactParams;
    const FILE: &'static str = "compact.cu";
    const KERNEL: &'static str = "ds_compact";
    /// The staged tile of values.
    fn dynamic_smem(&self, types: &[ScalarType]) -> u32 {
        let size = types[0].size();
        self.launch.shape().tile(tuning::vec(size)) * size as u32
    }
}

/// The tile: `tuning::compact`'s (`big`: its large blocks), with half the rounds for 8-byte
/// counts (sequences of 2^32 elements or more), whose look-back and registers are twice as
/// wide.
fn shape(arch: &Arch, size: usize, wide: bool, big: bool) -> tuning::Shape {
    let mut sh = tuning::compact(arch, size, big);
    if wide {
        sh.rounds = (sh.rounds / 2).max(1);
    }
    sh
}

/// Whether the flags are lazy and read only the values' column (a stored one), from the same
/// rows: the kernel then computes them from the values it staged.
fn own_flags(src: &Source, flags: &Source) -> bool {
    match (src.as_column(), flags.as_column()) {
        (Some(c), None) => flags.reads_only(c) && tuning::compact_own(),
        _ => false,
    }
}

fn key(arch: &Arch, ty: ScalarType, wide: bool, own: bool, big: bool) -> CompactKey {
    let sh = shape(arch, ty.size(), wide, big);
    let mut key = CompactKey {
        launch: sh.launch(0, 0),
        wide,
        own,
    };
    let smem = key.dynamic_smem(&[ty]) as usize;
    key.launch.minb = tuning::compact_min_blocks(arch, sh.block, smem);
    key
}

/// The elements of `src` whose flag is nonzero: a buffer and how many elements it holds. The
/// kernel writes into a buffer of `n` elements (as CUB's and Thrust's callers provide); where
/// fewer than `n / 16` are kept they move to a buffer of their own size, else the result keeps
/// the large one (moving a third of the elements cost `unique` a third of its time).
pub(crate) fn compact(gpu: &Gpu, src: &Source, flags: &Source) -> Result<(Buffer, usize)> {
    let (n, size) = (src.len, src.ty().size());
    let out = Buffer::new(&gpu.mem, n * size)?;
    if n == 0 {
        return Ok((out, 0));
    }
    let vec = tuning::vec(size);
    let wide = n as u64 >= u32::MAX as u64;
    let own = own_flags(src, flags);
    // Large blocks where the flags come from the staged values alone (not from neighbours,
    // as dedup's: `tuning::compact`) and their tiles still give every multiprocessor four (two
    // waves of its two blocks): at 2^20 they left half of an H100's idle and took copy_if and
    // unique from 0.022 to 0.025 ms.
    let big = own
        && !flags.reads_neighbours()
        && shape(&gpu.arch, size, wide, true).tiles(n, vec) >= 4 * u64::from(gpu.arch.sms);
    let sh = shape(&gpu.arch, size, wide, big);
    let key = key(&gpu.arch, src.ty(), wide, own, big);
    let k = gpu.kernel(key, &[(src, vec), (flags, vec)])?;
    let total = gpu.mem.mailbox()?;
    let tiles = sh.tiles(n, vec);
    // The tile waits in shared memory.
    let smem = key.dynamic_smem(&[src.ty()]);
    k.launch_single_pass(tiles, sh.block, smem, |s| CompactParams {
        out: out.ptr(),
        n: n as u64,
        total: total.slot,
        counter: s.counter,
        status: s.status,
        base: s.base,
        epoch: s.epoch,
        tiles: tiles as u32,
    })?;
    let count = gpu.mem.take_slot(total)? as usize;
    Ok((out.fit(&gpu.mem, count * size)?, count))
}

#[cfg(test)]
pub(crate) mod check {
    use super::*;
    use crate::backend::cuda::key::KernelKey;
    use crate::backend::cuda::source::SourceKey;
    use crate::item::ScalarType;

    /// The instances a compile check builds.
    /// `lazy_flags` over u32 values; `own`: flags over the values' own column, and its type.
    pub(crate) fn variants(
        arch: &Arch,
        lazy_indices: &[SourceKey],
        lazy_flags: &[SourceKey],
        own: &[(ScalarType, SourceKey)],
    ) -> Vec<KernelKey> {
        let mut v = Vec::new();
        for f in lazy_flags {
            let (ty, vec) = (ScalarType::U32, tuning::vec(4));
            // A stored column, and the positions (`nonzero_indices`, find_repeats).
            let at = SourceKey::assuming(&Source::sequence(ty, 10), vec);
            for values in [SourceKey::plain(ty, vec), at] {
                v.push(KernelKey {
                    functor: None,
                    family: key(arch, ty, false, false, false).into(),
                    sources: vec![values, f.clone()],
                });
            }
        }
        for (ty, f) in own {
            let vec = tuning::vec(ty.size());
            for (wide, big) in [(false, false), (false, true), (true, true)] {
                v.push(KernelKey {
                    functor: None,
                    family: key(arch, *ty, wide, true, big).into(),
                    sources: vec![SourceKey::plain(*ty, vec), f.clone()],
                });
            }
        }
        for ty in ScalarType::ALL {
            let vec = tuning::vec(ty.size());
            for (avec, wide) in [(vec, false), (0, true)] {
                v.push(KernelKey {
                    functor: None,
                    family: key(arch, ty, wide, false, false).into(),
                    sources: vec![
                        SourceKey::plain(ty, avec),
                        SourceKey::plain(ScalarType::U8, avec),
                    ],
                });
            }
        }
        for s in lazy_indices {
            let vec = tuning::vec(s.ty.size());
            v.push(KernelKey {
                functor: None,
                family: key(arch, s.ty, false, false, false).into(),
                sources: vec![s.clone(), SourceKey::plain(ScalarType::U8, vec)],
            });
        }
        v
    }
}
