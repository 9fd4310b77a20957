//! `sort` and `sort_pairs` (and so `argsort`, a sort of the lazy positions) on the GPU
//! (`kernels/sort.cu`): one histogram pass for all digits, then one Onesweep pass per 8-bit
//! digit that the histogram did not find constant. The first pass that runs reads the keys
//! and values from their sources, so lazy keys or values are evaluated there.

use super::bounds::index_error;
use super::gpu::Gpu;
use super::key::{Launch, SortHistKey, SortPassKey, SortTileKey, Template};
use super::mem::{Buffer, Ptr};
use super::params::kernel_params;
use super::single_pass::{Status, counter};
use super::tuning;
use crate::error::{Error, Result};
use crate::item::ScalarType;
use crate::source::{Column, Source};

kernel_params!(
    /// `ds_sort_hist`'s parameters.
    SortHistParams {
        n: u64,
        hist: Ptr,
        done: Ptr,
        plan: Ptr,
        check_len: u64,
        err: Ptr,
        lo: u32,
        passes: u32,
    }
);

kernel_params!(
    /// `ds_sort_pass`'s parameters.
    SortPassParams {
        ka: Ptr,
        kb: Ptr,
        va: Ptr,
        vb: Ptr,
        n: u64,
        plan: Ptr,
        status: Ptr,
        counter: Ptr,
        lo: u32,
        pass: u32,
        epoch: u32,
        base: u32,
    }
);

kernel_params!(
    /// `ds_sort_tile`'s parameters.
    SortTileParams {
        ka: Ptr,
        va: Ptr,
        n: u64,
        check_len: u64,
        err: Ptr,
        lo: u32,
        passes: u32,
    }
);

impl Template for SortHistKey {
    type Params = SortHistParams;
    const FILE: &'static str = "sort.cu";
    const KERNEL: &'static str = "ds_sort_hist";
}

impl Template for SortPassKey {
    type Params = SortPassParams;
    const FILE: &'static str = "sort.cu";
    const KERNEL: &'static str = "ds_sort_pass";
    /// The tile's keys and values and the pass's counters.
    fn dynamic_smem(&self, types: &[ScalarType]) -> u32 {
        let value = self.values.then(|| types[1].size());
        pass_smem(self.launch.block, self.launch.items, types[0].size(), value)
    }
}

impl Template for SortTileKey {
    type Params = SortTileParams;
    const FILE: &'static str = "sort.cu";
    const KERNEL: &'static str = "ds_sort_tile";
    /// The tile's keys and values and the counters.
    fn dynamic_smem(&self, types: &[ScalarType]) -> u32 {
        let value = self.values.then(|| types[1].size());
        tile_smem(self.launch.block, self.launch.items, types[0].size(), value)
    }
}

/// Dynamic shared memory of a digit pass (the layout at the top of ds_sort_pass).
fn pass_smem(block: u32, items: u32, key: usize, value: Option<usize>) -> u32 {
    let nw = block as usize / 32;
    let tile = (block * items) as usize;
    (2 * nw * RADIX * 4 + RADIX * 8 + 64 + tile * (key + value.unwrap_or(0))) as u32
}

/// Dynamic shared memory of a sort in one block (the layout at the top of ds_sort_tile): a
/// pass's, less the look-back's digit offsets.
pub(crate) fn tile_smem(block: u32, items: u32, key: usize, value: Option<usize>) -> u32 {
    pass_smem(block, items, key, value) - (RADIX * 8) as u32
}

const RADIX: usize = 256;
const MAX_PASSES: usize = 8;
/// sizeof(ds::SortPlan), rounded up.
const PLAN_BYTES: usize = MAX_PASSES * RADIX * 8 + 64;

/// The digit passes' instance for `n` keys (`n` picks the tile size, `tuning::sort_for`),
/// with no more keys a thread than the tile's shared memory allows on `arch`, and as many
/// blocks a multiprocessor as it holds (the shapes are measured on GPUs with 227 KB a block and
/// 228 KB a multiprocessor; 4-byte keys with 4-byte values at 28 a thread need 110 KB, two
/// blocks a multiprocessor).
fn pass_key(
    key: ScalarType,
    value: Option<ScalarType>,
    desc: bool,
    n: usize,
    arch: &tuning::Arch,
) -> SortPassKey {
    let vsize = value.map(|v| v.size());
    let (block, mut items, minb) = tuning::sort_for(key.size(), vsize, n, arch);
    while items > 1 && pass_smem(block, items, key.size(), vsize) as usize > arch.smem_block {
        items -= 1;
    }
    let smem = pass_smem(block, items, key.size(), vsize) as usize;
    SortPassKey {
        launch: Launch {
            block,
            items,
            vec: 1,
            minb: arch.blocks_that_fit(minb, block, smem),
        },
        values: value.is_some(),
        desc,
    }
}

/// The first bit and the number of 8-bit digit passes of a sort on the key bits `bits`.
pub(crate) fn digit_passes(bits: std::ops::Range<u32>) -> (u32, u32) {
    let lo = bits.start.min(bits.end);
    (lo, (bits.end - lo).div_ceil(8).min(MAX_PASSES as u32))
}

/// The low bits that indices below `len` occupy (0 for `len <= 1`).
pub(crate) fn index_bits(len: usize) -> u32 {
    if len <= 1 {
        0
    } else {
        64 - ((len - 1) as u64).leading_zeros()
    }
}

/// A sort whose bounds check (with `check_len > 0`) is still to be read.
pub(crate) struct Sorted {
    pub keys: Column,
    pub values: Option<Column>,
    input: Source,
    check_len: u64,
    /// Histograms, plan and the error word (last), kept until the check.
    _tmp: Buffer,
    err: Ptr,
}

impl Sorted {
    /// The sorted values.
    pub fn values(&self) -> Result<&Column> {
        self.values
            .as_ref()
            .ok_or_else(|| Error::Internal("a sort returned no values".into()))
    }

    /// The word where the histogram notes a key out of range (zero: none), final once the
    /// sort's kernels have run, for kernels queued after it to read.
    pub fn error_word(&self) -> Ptr {
        self.err
    }

    /// Waits for the stream; `Error::IndexOutOfBounds` for the first key at or above
    /// `check_len`.
    pub fn check(&self, gpu: &Gpu) -> Result<()> {
        let w = gpu.mem.read_u64(self.err)?;
        if w == 0 {
            return Ok(());
        }
        Err(index_error(gpu, &self.input, !w, self.check_len as usize)?)
    }
}

/// Sorts the keys (stably) with their values on all their bits, ascending or (`descending`)
/// descending: every digit of the ordered bits is complemented where it is taken (the digit of
/// the complemented key), so equal keys keep their order either way and the keys move as an
/// ascending sort moves them. The direction is a template parameter of the kernels, so an
/// ascending sort does no complementing at all.
pub(crate) fn sort(
    gpu: &Gpu,
    keys: &Source,
    values: Option<&Source>,
    descending: bool,
) -> Result<Sorted> {
    let bits = keys.ty().bits();
    sort_unchecked(gpu, keys, values, 0..bits, 0, descending)
}

/// The (index, value) pairs sorted stably by index, on all the bits that indices below `len`
/// occupy or (`top_digit`) on their top 8 alone; indices at or past `len` are checked by
/// `Sorted::check`.
pub(crate) fn sort_by_index(
    gpu: &Gpu,
    idx: &Source,
    vals: &Source,
    len: usize,
    top_digit: bool,
) -> Result<Sorted> {
    let bits = index_bits(len);
    let lo = if top_digit { bits.saturating_sub(8) } else { 0 };
    sort_unchecked(gpu, idx, Some(vals), lo..bits, len as u64, false)
}

/// As `sort`, on the key bits `bits` (`lo..hi`, the keys' ordered bits), leaving the bounds
/// check to the caller (`Sorted::check`), so that it can queue more work first. Keys at or
/// above `check_len` are sorted on those bits like any; `desc`: descending.
fn sort_unchecked(
    gpu: &Gpu,
    keys: &Source,
    values: Option<&Source>,
    bits: std::ops::Range<u32>,
    check_len: u64,
    desc: bool,
) -> Result<Sorted> {
    let (n, kty) = (keys.len, keys.ty());
    let ks = kty.size();
    let vty = values.map(|v| v.ty());
    let vsize = vty.map_or(0, |v| v.size());
    let (lo, passes) = digit_passes(bits);
    let pk = pass_key(kty, vty, desc, n, &gpu.arch);
    let tiles = (n as u64).div_ceil((pk.launch.block * pk.launch.items) as u64);
    // Tile numbers are 32 bits; look-back words keep counts in 40 (ds_sort_pass).
    if tiles > u32::MAX as u64 || n as u64 >= 1 << 40 {
        return Err(Error::InvalidArgument(format!(
            "{n} keys are too many to sort"
        )));
    }
    if tiles == 1 && tuning::sort_one_block() {
        return sort_tile(gpu, keys, values, pk, lo, passes, check_len);
    }
    let smem = pk.dynamic_smem(&[kty, vty.unwrap_or(kty)]);
    let ka = Buffer::new(&gpu.mem, n * ks)?;
    let kb = Buffer::new(&gpu.mem, if passes > 1 { n * ks } else { 0 })?;
    let va = Buffer::new(&gpu.mem, n * vsize)?;
    let vb = Buffer::new(&gpu.mem, if passes > 1 { n * vsize } else { 0 })?;
    // Temporaries, zeroed at once: histograms, plan, the error word. The passes' look-back
    // words are the stream's (`Status::Sort`), tagged by launch, so they need no clearing.
    let hist_bytes = MAX_PASSES * RADIX * 8;
    let tmp = Buffer::new(&gpu.mem, hist_bytes + PLAN_BYTES + 8)?;
    let hist = tmp.ptr();
    let plan = hist.add(hist_bytes);
    let err = plan.add(PLAN_BYTES);
    gpu.mem.fill(&tmp, 1, 0, hist_bytes + PLAN_BYTES + 8)?;
    if n > 0 {
        let block = tuning::FLAT_BLOCK;
        // Sorts that check no bounds get an instance without the check's code.
        let check = check_len != 0;
        let hk = gpu.kernel(
            SortHistKey {
                launch: Launch::block(block),
                desc,
                check,
            },
            &[(keys, tuning::vec(ks))],
        )?;
        let grid = hk
            .wave(block, (n as u64).div_ceil(block as u64 * 16))?
            .min(tuning::sort_hist_blocks() as u64 * gpu.arch.sms as u64);
        hk.launch(
            grid,
            block,
            0,
            &SortHistParams {
                n: n as u64,
                hist,
                done: gpu.passes.counter(counter::DONE),
                plan,
                check_len,
                err,
                lo,
                passes,
            },
        )?;
        // Without values the keys stand in for them (never read).
        let vsrc = values.unwrap_or(keys);
        let k = gpu.kernel(pk, &[(keys, 1), (vsrc, 1)])?;
        // At least one launch: where no pass runs, the first copies the keys through.
        for pass in 0..passes.max(1) {
            gpu.passes
                .reserve(Status::Sort, tiles, tiles as usize * RADIX * 8, |s| {
                    let p = SortPassParams {
                        ka: ka.ptr(),
                        kb: kb.ptr(),
                        va: va.ptr(),
                        vb: vb.ptr(),
                        n: n as u64,
                        plan,
                        status: s.status,
                        counter: s.counter,
                        lo,
                        pass,
                        epoch: s.epoch,
                        base: s.base,
                    };
                    k.launch(tiles, pk.launch.block, smem, &p)
                })?;
        }
    }
    Ok(Sorted {
        keys: ka.into_column(kty, n),
        values: vty.map(|t| va.into_column(t, n)),
        input: keys.clone(),
        check_len,
        _tmp: tmp,
        err,
    })
}

/// The one-block sort of the passes' shape `pk`; `check`: its keys are checked against a
/// length (`check_len > 0`).
fn tile_key(pk: SortPassKey, check: bool) -> SortTileKey {
    // One block a launch, compiled as one.
    SortTileKey {
        launch: Launch {
            minb: 1,
            ..pk.launch
        },
        values: pk.values,
        desc: pk.desc,
        check,
    }
}

/// `sort_unchecked` for keys that fit one tile of the passes (`0 < n <= block * items`): one
/// block sorts them in shared memory (`ds_sort_tile`), one launch in all, where the passes
/// would take a histogram, a plan and a launch a digit, each of one block doing the same
/// ranking. (CUB sorts inputs of one tile in one block too, its single-tile policy.)
fn sort_tile(
    gpu: &Gpu,
    keys: &Source,
    values: Option<&Source>,
    pk: SortPassKey,
    lo: u32,
    passes: u32,
    check_len: u64,
) -> Result<Sorted> {
    let (n, kty) = (keys.len, keys.ty());
    let vty = values.map(|v| v.ty());
    let vsize = vty.map_or(0, |v| v.size());
    let ka = Buffer::new(&gpu.mem, n * kty.size())?;
    let va = Buffer::new(&gpu.mem, n * vsize)?;
    // The error word, written by the kernel.
    let tmp = Buffer::new(&gpu.mem, 8)?;
    let err = tmp.ptr();
    // Without values the keys stand in for them (never read).
    let vsrc = values.unwrap_or(keys);
    // Sorts that check no bounds get an instance without the check's code.
    let tk = tile_key(pk, check_len != 0);
    let k = gpu.kernel(tk, &[(keys, 1), (vsrc, 1)])?;
    k.launch(
        1,
        pk.launch.block,
        tk.dynamic_smem(&[kty, vty.unwrap_or(kty)]),
        &SortTileParams {
            ka: ka.ptr(),
            va: va.ptr(),
            n: n as u64,
            check_len,
            err,
            lo,
            passes,
        },
    )?;
    Ok(Sorted {
        keys: ka.into_column(kty, n),
        values: vty.map(|t| va.into_column(t, n)),
        input: keys.clone(),
        check_len,
        _tmp: tmp,
        err,
    })
}

#[cfg(test)]
pub(crate) mod check {
    use super::*;
    use crate::backend::cuda::key::KernelKey;
    use crate::backend::cuda::source::SourceKey;

    /// The instances a compile check builds for `arch`: both tile sizes of the passes (a few
    /// keys and many); for each of `lazy_keys`, the histogram and the passes of a sort of them
    /// (keys alone).
    pub(crate) fn variants(
        arch: &tuning::Arch,
        lazy_positions: &[SourceKey],
        lazy_keys: &[SourceKey],
    ) -> Vec<KernelKey> {
        let arch = *arch;
        // Index keys (u32, u64) ascending are also sorted with their bounds checked.
        let checks = |ty: ScalarType, desc: bool| -> &'static [bool] {
            match ty {
                ScalarType::U32 | ScalarType::U64 if !desc => &[false, true],
                _ => &[false],
            }
        };
        let hist = |desc: bool, key: SourceKey| {
            checks(key.ty, desc).iter().map(move |&check| KernelKey {
                functor: None,
                family: SortHistKey {
                    launch: Launch::block(tuning::FLAT_BLOCK),
                    desc,
                    check,
                }
                .into(),
                sources: vec![key.clone()],
            })
        };
        // The passes of a few keys and of many, and the one-block sort (of few).
        let passes = |v: &mut Vec<KernelKey>, t, u, desc, keys: &SourceKey, vals: &SourceKey| {
            for n in [0, 1 << 30] {
                let pk = pass_key(t, u, desc, n, &arch);
                let mut family = vec![pk.into()];
                if n == 0 {
                    for &check in checks(t, desc) {
                        family.push(tile_key(pk, check).into());
                    }
                }
                for family in family {
                    v.push(KernelKey {
                        functor: None,
                        family,
                        sources: vec![keys.clone(), vals.clone()],
                    });
                }
            }
        };
        let mut v = Vec::new();
        for k in lazy_keys {
            v.extend(hist(false, k.clone()));
            passes(&mut v, k.ty, None, false, k, k);
        }
        for t in ScalarType::ALL {
            for desc in [false, true] {
                for avec in [tuning::vec(t.size()), 0] {
                    v.extend(hist(desc, SourceKey::plain(t, avec)));
                }
                let k = SourceKey::plain(t, 1);
                let values = std::iter::once((None, k.clone()))
                    .chain(ScalarType::ALL.map(|u| (Some(u), SourceKey::plain(u, 1))))
                    .chain(lazy_positions.iter().map(|p| (Some(p.ty), p.clone())));
                for (u, vk) in values {
                    passes(&mut v, t, u, desc, &k, &vk);
                }
            }
        }
        v
    }

    /// Every pass shape fits the shared memory of a block: an H100's 227 KB holds the measured
    /// shapes (28 keys a thread with 4-byte values, 18 with 12-byte items, 20 with 16-byte
    /// items), and a smaller limit gets fewer keys a thread, never a launch that fails.
    #[test]
    fn pass_shapes_fit_shared_memory() {
        for (smem_block, want) in [(227usize << 10, [28, 18, 20]), (96 << 10, [23, 15, 11])] {
            let arch = tuning::Arch {
                smem_block,
                ..tuning::gpus::H100
            };
            for k in ScalarType::ALL {
                for v in std::iter::once(None).chain(ScalarType::ALL.into_iter().map(Some)) {
                    for n in [0, 1 << 30] {
                        let p = pass_key(k, v, false, n, &arch);
                        let bytes = pass_smem(
                            p.launch.block,
                            p.launch.items,
                            k.size(),
                            v.map(|v| v.size()),
                        );
                        assert!(bytes as usize <= smem_block, "{k:?} {v:?} {n}: {bytes}");
                    }
                }
            }
            let big = |k, v| pass_key(k, Some(v), false, 1 << 30, &arch).launch.items;
            let got = [
                (ScalarType::U32, ScalarType::U32),
                (ScalarType::U64, ScalarType::U32),
                (ScalarType::U64, ScalarType::U64),
            ]
            .map(|(k, v)| big(k, v));
            assert_eq!(
                got, want,
                "keys a thread of u32/u32, u64/u32, u64/u64 pairs"
            );
        }
    }
}
