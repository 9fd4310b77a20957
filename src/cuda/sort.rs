//! `sort`, `sort_pairs` and `argsort` on the GPU (`kernels/sort.cu`): one histogram pass
//! for all digits, then one Onesweep pass per 8-bit digit that the histogram did not find
//! constant.

use super::gather::index_error;
use super::jit::Instance;
use super::{Args, Buffer, Gpu, Ptr, Status, counter, tuning};
use crate::element::ScalarType;
use crate::error::{Error, Result};
use std::sync::Arc;

/// Threads a block, keys a thread and blocks a multiprocessor (`__launch_bounds__`) of the
/// digit passes, by the widest of key and value and whether values travel. First choice:
/// 384 x 16 (6144 keys a tile) for 4-byte data, after CUB's sm_90 tuning of its Onesweep (384
/// threads x 23 items for 4-byte keys, cub/device/dispatch/tuning/tuning_radix_sort.cuh).
fn shape(widest: usize, values: bool) -> (u32, u32, u32) {
    // Measured on an H200: keys alone, 24 a thread sorted 2^28 u32 keys in 5.61 ms against
    // 5.87 with 16 and 6.71 with 12 (2026-11-21); with u32 values, once the ranked keys no
    // longer waited in registers (2026-11-22, run 20), 24 took 8.05 ms against 8.65 with 16
    // and 9.80 with 12.
    let items = match (widest <= 4, values) {
        (true, _) => 24,
        (false, false) => 12,
        (false, true) => 8,
    };
    (
        tuning::knob("sort_block", 384),
        if values {
            tuning::knob("sort_items_pairs", items)
        } else {
            tuning::knob("sort_items", items)
        },
        if values {
            tuning::knob("sort_minb_pairs", 2)
        } else {
            tuning::knob("sort_minb", 3)
        },
    )
}

/// Dynamic shared memory of a digit pass (the layout at the top of ds_sort_pass).
fn pass_smem(block: u32, items: u32, key: usize, value: Option<usize>) -> u32 {
    let nw = block as usize / 32;
    let tile = (block * items) as usize;
    (2 * nw * RADIX * 4 + RADIX * 8 + 64 + tile * (key + value.unwrap_or(0))) as u32
}

const RADIX: usize = 256;
const MAX_PASSES: usize = 8;
/// sizeof(ds::SortPlan), rounded up.
const PLAN_BYTES: usize = MAX_PASSES * RADIX * 8 + 64;

/// What travels with the keys.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Values {
    None,
    /// Values of this type at this address.
    Given(ScalarType, Ptr),
    /// The keys' original positions, as this index type (argsort).
    Positions(ScalarType),
}

impl Values {
    fn mode(self) -> (u32, &'static str, usize) {
        match self {
            Values::None => (0, "u8", 1),
            Values::Given(t, _) => (1, t.name(), t.size()),
            Values::Positions(t) => (2, t.name(), t.size()),
        }
    }
}

pub(crate) fn hist_instance(key: ScalarType) -> Instance {
    Instance {
        source: "#include \"sort.cu\"\n".to_string(),
        expr: format!("ds_sort_hist<{}, 256>", key.name()),
    }
}

pub(crate) fn pass_instance(key: ScalarType, values: Values) -> Instance {
    let (vmode, vname, vsize) = values.mode();
    let (block, items, minb) = shape(key.size().max(vsize), vmode != 0);
    Instance {
        source: "#include \"sort.cu\"\n".to_string(),
        expr: format!(
            "ds_sort_pass<{}, {vname}, {vmode}, {block}, {items}, {minb}>",
            key.name()
        ),
    }
}

/// Sorts `n > 0` keys at `keys` on their `bits` low bits (all of them for `sort`), stably,
/// with their values. Returns the sorted keys and values.
pub(crate) fn sort(
    gpu: &Arc<Gpu>,
    key: ScalarType,
    keys: Ptr,
    n: usize,
    values: Values,
    bits: u32,
) -> Result<(Buffer, Option<Buffer>)> {
    let s = sort_unchecked(gpu, key, keys, n, values, 0..bits, 0)?;
    Ok((s.keys, s.values))
}

/// The low bits that indices below `len` occupy (0 for `len <= 1`).
fn index_bits(len: usize) -> u32 {
    if len <= 1 {
        0
    } else {
        64 - ((len - 1) as u64).leading_zeros()
    }
}

/// The `n` (index, value) pairs at `idx` and `vals` sorted stably by index, on all the bits
/// that indices below `len` occupy or (`top_digit`) on their top 8 alone; indices at or past
/// `len` are checked by `Sorted::check`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn sort_by_index(
    gpu: &Arc<Gpu>,
    idx_ty: ScalarType,
    idx: Ptr,
    n: usize,
    ty: ScalarType,
    vals: Ptr,
    len: usize,
    top_digit: bool,
) -> Result<Sorted> {
    let bits = index_bits(len);
    let lo = if top_digit { bits.saturating_sub(8) } else { 0 };
    sort_unchecked(
        gpu,
        idx_ty,
        idx,
        n,
        Values::Given(ty, vals),
        lo..bits,
        len as u64,
    )
}

/// A sort whose bounds check (with `check_len > 0`) is still to be read.
pub(crate) struct Sorted {
    pub keys: Buffer,
    pub values: Option<Buffer>,
    key: ScalarType,
    input: Ptr,
    check_len: u64,
    /// Histograms, plan and the error word (last), kept until the check.
    _tmp: Buffer,
    err: Ptr,
}

impl Sorted {
    /// The sorted values' buffer.
    pub fn values(&self) -> Result<&Buffer> {
        self.values
            .as_ref()
            .ok_or_else(|| Error::Cuda("sort returned no values".into()))
    }

    /// The word where the histogram notes a key out of range (zero: none), final once the
    /// sort's kernels have run, for kernels queued after it to read.
    pub fn error_word(&self) -> Ptr {
        self.err
    }

    /// Waits for the stream; `Error::IndexOutOfBounds` for the first key at or above
    /// `check_len`.
    pub fn check(&self, gpu: &Arc<Gpu>) -> Result<()> {
        let w = gpu.read_u64(self.err)?;
        if w == 0 {
            return Ok(());
        }
        Err(index_error(
            gpu,
            self.key,
            self.input,
            !w,
            self.check_len as usize,
        )?)
    }
}

/// As `sort`, on the key bits `bits` (`lo..hi`, the keys' ordered bits), leaving the bounds
/// check to the caller (`Sorted::check`), so that it can queue more work first. Keys at or
/// above `check_len` are sorted on those bits like any.
pub(crate) fn sort_unchecked(
    gpu: &Arc<Gpu>,
    key: ScalarType,
    keys: Ptr,
    n: usize,
    values: Values,
    bits: std::ops::Range<u32>,
    check_len: u64,
) -> Result<Sorted> {
    let ks = key.size();
    let (_, _, vsize) = values.mode();
    let has_values = !matches!(values, Values::None);
    let lo = bits.start.min(bits.end);
    let passes = (bits.end - lo).div_ceil(8).min(MAX_PASSES as u32);
    let (block, items, _) = shape(ks.max(vsize), has_values);
    let smem = pass_smem(block, items, ks, has_values.then_some(vsize));
    let tiles = (n as u64).div_ceil((block * items) as u64);
    // Tile numbers are 32 bits; look-back words keep counts in 40 (ds_sort_pass).
    if tiles > u32::MAX as u64 || n as u64 >= 1 << 40 {
        return Err(Error::InvalidArgument(format!(
            "{n} keys are too many to sort"
        )));
    }
    let ka = Buffer::new(gpu, n * ks)?;
    let kb = Buffer::new(gpu, if passes > 1 { n * ks } else { 0 })?;
    let va = Buffer::new(gpu, if has_values { n * vsize } else { 0 })?;
    let vb = Buffer::new(
        gpu,
        if has_values && passes > 1 {
            n * vsize
        } else {
            0
        },
    )?;
    // Temporaries, zeroed at once: histograms, plan, the error word. The passes' look-back
    // words are the stream's (`Status::Sort`), tagged by launch, so they need no clearing.
    let hist_bytes = MAX_PASSES * RADIX * 8;
    let tmp = Buffer::new(gpu, hist_bytes + PLAN_BYTES + 8)?;
    let hist = tmp.ptr();
    let plan = hist.add(hist_bytes);
    let err = plan.add(PLAN_BYTES);
    gpu.memset_u8(tmp.ptr(), 0, hist_bytes + PLAN_BYTES + 8)?;

    let hk = gpu.jit.get(&hist_instance(key))?;
    let grid = gpu.wave(&hk, 256, (n as u64).div_ceil(256 * 16))?;
    gpu.launch(
        &hk,
        grid,
        256,
        Args::new()
            .ptr(keys)
            .u64(n as u64)
            .u32(lo)
            .u32(passes)
            .ptr(hist)
            .ptr(gpu.counter(counter::DONE))
            .ptr(plan)
            .u64(check_len)
            .ptr(err)
            .u32(keys.aligned(16) as u32),
    )?;
    let vin = match values {
        Values::Given(_, p) => p,
        _ => Ptr(0),
    };
    let pk = gpu.jit.get(&pass_instance(key, values))?;
    // At least one launch: where no pass runs, the first copies the keys through.
    for pass in 0..passes.max(1) {
        gpu.reserve(Status::Sort, tiles, tiles as usize * RADIX * 8, |s| {
            gpu.launch_smem(
                &pk,
                tiles,
                block,
                smem,
                Args::new()
                    .ptr(keys)
                    .ptr(ka.ptr())
                    .ptr(kb.ptr())
                    .ptr(vin)
                    .ptr(va.ptr())
                    .ptr(vb.ptr())
                    .u64(n as u64)
                    .u32(lo)
                    .u32(pass)
                    .ptr(plan)
                    .ptr(s.status)
                    .u32(s.epoch)
                    .ptr(s.counter)
                    .u32(s.base),
            )
        })?;
    }
    Ok(Sorted {
        keys: ka,
        values: has_values.then_some(va),
        key,
        input: keys,
        check_len,
        _tmp: tmp,
        err,
    })
}
