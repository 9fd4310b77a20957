//! Sources made stored (`copy`, and every read of a lazy sequence by the host): a copy where
//! the source is a stored column, a fill where it is one value, else the `ds_map` kernel
//! (`kernels/map.cu`) evaluating the source tile by tile; uploads and downloads.

use super::gpu::Gpu;
use super::key::{MapKey, Template};
use super::launch::Bound;
use super::mem::{Buffer, Ptr, column_ptr};
use super::params::kernel_params;
use super::source;
use super::tuning::{self, Shape};
use crate::error::Result;
use crate::item::ScalarType;
use crate::source::Source;

kernel_params!(
    /// `ds_map`'s parameters.
    MapParams { out: Ptr, n: u64 }
);

impl Template for MapKey {
    type Params = MapParams;
    const FILE: &'static str = "map.cu";
    const KERNEL: &'static str = "ds_map";
}

/// Elements a thread takes per access for `src` (by the widest of its type and its columns').
fn map_vec(src: &Source) -> u32 {
    let widest = src
        .columns
        .iter()
        .map(|c| c.ty.size())
        .chain([src.ty().size()])
        .max()
        .unwrap_or(1);
    tuning::vec(widest)
}

/// The elements of `src`, stored in a new buffer.
pub(crate) fn materialize(gpu: &Gpu, src: &Source) -> Result<Buffer> {
    let (n, ty) = (src.len, src.ty());
    let bytes = n * ty.size();
    let out = Buffer::new(&gpu.mem, bytes)?;
    if n == 0 {
        return Ok(out);
    }
    // A stored column is copied by a kernel where it is aligned for 16-byte vectors (whose
    // launch costs the host less than the driver's copy) and not large, else by the driver
    // (tuning::copy_by_kernel).
    if let Some(c) = src.as_column() {
        let p = column_ptr(c)?;
        if tuning::copy_by_kernel(bytes) && p.aligned(16) {
            copy_by_kernel(gpu, &out, p, bytes)?;
        } else {
            gpu.mem.copy(&out, p, bytes)?;
        }
        return Ok(out);
    }
    if let Some(bits) = src.as_constant()
        && ty.size() <= 4
    {
        let stored = ty.stored_from_compute(bits);
        gpu.mem.fill(&out, ty.size(), stored as u32, n)?;
        return Ok(out);
    }
    let sh = if source::computes_random(src) {
        tuning::map_random(bytes, ty.size())
    } else {
        tuning::map()
    };
    let vec = map_vec(src);
    let key = MapKey {
        launch: sh.launch(vec, 0),
    };
    let k = gpu.kernel(key, &[(src, vec)])?;
    launch_tiles(&k, sh, vec, &out, n)?;
    Ok(out)
}

/// Queues `k`, a `ds_map` of `n` elements read in vectors of `vec`, into `out`: a block a tile
/// (the kernel strides only past the largest grid).
fn launch_tiles(
    k: &Bound<'_, MapParams>,
    sh: Shape,
    vec: u32,
    out: &Buffer,
    n: usize,
) -> Result<()> {
    let grid = sh.tiles(n, vec).clamp(1, i32::MAX as u64);
    k.launch(
        grid,
        sh.block,
        0,
        &MapParams {
            out: out.ptr(),
            n: n as u64,
        },
    )
}

/// Queues a copy of `bytes` bytes from `src` (aligned to 16) into the new buffer `dst` by the
/// map kernel of a stored column of 4-byte words (bytes where `bytes` is no multiple of 4),
/// held by the GPU (`Gpu::kernel_held`).
fn copy_by_kernel(gpu: &Gpu, dst: &Buffer, src: Ptr, bytes: usize) -> Result<()> {
    let (ty, slot) = if bytes.is_multiple_of(4) {
        (ScalarType::U32, &gpu.copiers[0])
    } else {
        (ScalarType::U8, &gpu.copiers[1])
    };
    let (sh, vec) = (tuning::map(), tuning::vec(ty.size()));
    let n = bytes / ty.size();
    let key = MapKey {
        launch: sh.launch(vec, 0),
    };
    let k = gpu.kernel_held(slot, key, &[(ty, vec, src)])?;
    launch_tiles(&k, sh, vec, dst, n)
}

/// The elements of `src` into `out` (stored bits), waiting for them.
pub(crate) fn download(gpu: &Gpu, src: &Source, out: &mut [u8]) -> Result<()> {
    match src.as_column() {
        Some(c) => gpu.mem.read(c, out),
        None => {
            let b = materialize(gpu, src)?;
            gpu.mem.read(&b.into_column(src.ty(), src.len), out)
        }
    }
}

/// A new buffer holding `bytes`.
pub(crate) fn upload(gpu: &Gpu, bytes: &[u8]) -> Result<Buffer> {
    let b = Buffer::new(&gpu.mem, bytes.len())?;
    gpu.mem.write(&b, bytes)?;
    Ok(b)
}

#[cfg(test)]
pub(crate) mod check {
    use super::*;
    use crate::backend::cuda::key::KernelKey;
    use crate::backend::cuda::source::SourceKey;
    use crate::item::ScalarType;

    /// The instances a compile check builds: every element type, stored and aligned or not, and
    /// lazy sources of every leaf kind.
    pub(crate) fn variants(lazy: &[SourceKey]) -> Vec<KernelKey> {
        let sh = tuning::map();
        let mut v = Vec::new();
        for ty in ScalarType::ALL {
            let vec = tuning::vec(ty.size());
            for avec in [vec, 0] {
                v.push(KernelKey {
                    functor: None,
                    family: MapKey {
                        launch: sh.launch(vec, 0),
                    }
                    .into(),
                    sources: vec![SourceKey::plain(ty, avec)],
                });
            }
        }
        for s in lazy {
            // Random numbers also take the large outputs' rounds.
            let mut rounds = vec![sh.rounds];
            let wide = tuning::map_random(usize::MAX, s.ty.size()).rounds;
            if s.computes_random() && wide != sh.rounds {
                rounds.push(wide);
            }
            for rounds in rounds {
                v.push(KernelKey {
                    functor: None,
                    family: MapKey {
                        launch: tuning::Shape { rounds, ..sh }.launch(s.avec.max(1), 0),
                    }
                    .into(),
                    sources: vec![s.clone()],
                });
            }
        }
        v
    }
}
