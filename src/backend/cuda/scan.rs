//! `inclusive_scan` and `exclusive_scan` on the GPU (`kernels/scan.cu`): single pass, the
//! tile staged in shared memory while the block looks back.

use super::gpu::Gpu;
use super::key::{ScanKey, Template};
use super::mem::{Buffer, Ptr};
use super::params::kernel_params;
use super::source;
use super::tuning::{self, Arch};
use crate::backend::Init;
use crate::error::Result;
use crate::item::ScalarType;
use crate::op::Op;
use crate::source::Source;

kernel_params!(
    /// The parameters of `ds_scan` and the look-back of every single-pass kernel: the tile
    /// counter and its base, the launch's epoch, the status words and the tile count.
    ScanParams {
        out: Ptr,
        n: u64,
        init: u64,
        counter: Ptr,
        status: Ptr,
        base: u32,
        epoch: u32,
        tiles: u32,
    }
);

impl Template for ScanKey {
    type Params = ScanParams;
    const FILE: &'static str = "scan.cu";
    const KERNEL: &'static str = "ds_scan";
    /// The staged tile.
    fn dynamic_smem(&self, types: &[ScalarType]) -> u32 {
        let size = types[0].size();
        self.launch.shape().tile(tuning::vec(size)) * size as u32
    }
}

/// The key of a scan of `n` elements of `ty`, whose items are `computed` in registers before
/// they are staged (`source::computed`) or not.
fn key(arch: &Arch, ty: ScalarType, n: usize, op: Op, exclusive: bool, computed: bool) -> ScanKey {
    let mut key = ScanKey {
        launch: tuning::scan(arch, ty, n).launch(0, 0),
        op,
        exclusive,
    };
    let smem = key.dynamic_smem(&[ty]) as usize;
    key.launch.minb = tuning::scan_min_blocks(arch, computed, ty, exclusive, smem);
    key
}

/// The keys of the large inclusive and exclusive sums of a stored column of every type: the
/// slowest compiles of the scans, for the exit test (`jit::compile_in_background`).
pub(crate) fn large_sums(arch: &Arch) -> Vec<super::key::KernelKey> {
    let n = tuning::SCAN_MID + 1;
    let mut v = Vec::new();
    for ty in ScalarType::ALL {
        for exclusive in [false, true] {
            v.push(super::key::KernelKey {
                functor: None,
                family: key(arch, ty, n, Op::Add, exclusive, false).into(),
                sources: vec![super::source::SourceKey::plain(ty, tuning::vec(ty.size()))],
            });
        }
    }
    v
}

/// The inclusive scan, or the exclusive one from `init`, of `src`.
pub(crate) fn scan(gpu: &Gpu, src: &Source, op: Op, init: Init) -> Result<Buffer> {
    let (n, size) = (src.len, src.ty().size());
    let out = Buffer::new(&gpu.mem, n * size)?;
    if n == 0 {
        return Ok(out);
    }
    let vec = tuning::vec(size);
    // The tiles follow the shape the instance is compiled for.
    let key = key(
        &gpu.arch,
        src.ty(),
        n,
        op,
        init.is_some(),
        source::computed(src),
    );
    let sh = key.launch.shape();
    let k = gpu.kernel(key, &[(src, vec)])?;
    // The tile waits in shared memory.
    let smem = key.dynamic_smem(&[src.ty()]);
    let tiles = sh.tiles(n, vec);
    k.launch_single_pass(tiles, sh.block, smem, |s| ScanParams {
        out: out.ptr(),
        n: n as u64,
        init: init.unwrap_or(0),
        counter: s.counter,
        status: s.status,
        base: s.base,
        epoch: s.epoch,
        tiles: tiles as u32,
    })?;
    Ok(out)
}

#[cfg(test)]
pub(crate) mod check {
    use super::*;
    use crate::backend::cuda::key::KernelKey;
    use crate::backend::cuda::source::SourceKey;

    /// The instances a compile check builds, in the tiles of large scans; for each of `lazy`,
    /// its inclusive sum and exclusive maximum; the smaller tiles of small scans for every
    /// type's inclusive sum and exclusive maximum.
    pub(crate) fn variants(arch: &Arch, lazy: &[SourceKey]) -> Vec<KernelKey> {
        let large = tuning::SCAN_MID + 1;
        let mut v = Vec::new();
        for s in lazy {
            for (op, exclusive) in [(Op::Add, false), (Op::Max, true)] {
                v.push(KernelKey {
                    functor: None,
                    family: key(arch, s.ty, large, op, exclusive, s.computed()).into(),
                    sources: vec![s.clone()],
                });
            }
        }
        for ty in ScalarType::ALL {
            let vec = tuning::vec(ty.size());
            let n = large.div_ceil(ty.size());
            for op in Op::ALL.into_iter().filter(|o| o.applies_to(ty)) {
                for exclusive in [false, true] {
                    v.push(KernelKey {
                        functor: None,
                        family: key(arch, ty, n, op, exclusive, false).into(),
                        sources: vec![SourceKey::plain(ty, vec)],
                    });
                }
            }
            for bytes in [tuning::SCAN_SMALL, tuning::SCAN_MID] {
                for (op, exclusive) in [(Op::Add, false), (Op::Max, true)] {
                    v.push(KernelKey {
                        functor: None,
                        family: key(arch, ty, bytes / ty.size(), op, exclusive, false).into(),
                        sources: vec![SourceKey::plain(ty, vec)],
                    });
                }
            }
            v.push(KernelKey {
                functor: None,
                family: key(arch, ty, n, Op::Max, false, false).into(),
                sources: vec![SourceKey::plain(ty, 0)],
            });
        }
        v
    }
}
