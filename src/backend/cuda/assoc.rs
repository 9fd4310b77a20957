//! Reductions and scans by a combiner (`kernels/assoc.cu`): the combiner printed as the
//! functor `ds_F` (`functor.rs`). Reductions: fixed contiguous chunks one a block, the chunk
//! totals folded in order. Scans of items of up to 16 bytes: one pass, tiles in shared memory,
//! the look-back over groups of 32 tiles (`tile_lookback_grouped`); of wider items: the chunk
//! totals scanned into chunk prefixes that a second kernel scans each chunk from.

use super::gpu::Gpu;
use super::key::{AssocReduceKey, AssocScanKey, AssocScanLookbackKey, Launch, Template};
use super::mem::{Buffer, Ptr};
use super::params::{WORDS, Words, kernel_params};
use super::single_pass::counter;
use super::tuning::{self, Arch};
use crate::backend::ScanMode;
use crate::error::{Error, Result};
use crate::expr::combiner::{Combiner, CombinerShape};
use crate::item::{MAX_COMPONENTS, ScalarType};
use crate::source::{Column, Source};
use std::sync::Arc;

kernel_params!(
    /// The parameters of `ds_assoc_reduce` and `ds_assoc_scan`: `chunk` elements a block,
    /// `partial` one `Opt` item a block, `done` the blocks-finished counter, `result` the
    /// reduction's words, `words` the combiner's constants, then the initial item's words
    /// (`consts`: the same in device memory where they are more than `WORDS`), `excl` whether
    /// the scan starts from the initial item, `out0..out7` the stored components; the
    /// single-pass scan's look-back (as `ScanParams`): `counter`, `status`, `base`, `epoch`,
    /// `tiles`.
    AssocParams {
        n: u64,
        chunk: u64,
        partial: Ptr,
        done: Ptr,
        result: Ptr,
        consts: Ptr,
        out0: Ptr,
        out1: Ptr,
        out2: Ptr,
        out3: Ptr,
        out4: Ptr,
        out5: Ptr,
        out6: Ptr,
        out7: Ptr,
        excl: u32,
        counter: Ptr,
        status: Ptr,
        base: u32,
        epoch: u32,
        tiles: u32,
        words: Words,
    }
);

/// Threads a block and rounds a tile.
const BLOCK: u32 = 256;
const ROUNDS: u32 = 2;
/// Blocks a multiprocessor (chunks are one a block; the grid is the device's, not the
/// kernel's, so results depend only on the length and the device).
const BLOCKS_PER_SM: u32 = 8;

impl Template for AssocReduceKey {
    type Params = AssocParams;
    const FILE: &'static str = "assoc.cu";
    const PARAMS_FIRST: bool = true;
    const KERNEL: &'static str = "ds_assoc_reduce";
}

impl Template for AssocScanKey {
    type Params = AssocParams;
    const FILE: &'static str = "assoc.cu";
    const PARAMS_FIRST: bool = true;
    const KERNEL: &'static str = "ds_assoc_scan";
}

impl Template for AssocScanLookbackKey {
    type Params = AssocParams;
    const FILE: &'static str = "assoc.cu";
    const PARAMS_FIRST: bool = true;
    const KERNEL: &'static str = "ds_assoc_scan_lookback";
    /// The staged tile of stored items, column by column.
    fn dynamic_smem(&self, types: &[ScalarType]) -> u32 {
        let bytes: usize = types.iter().map(|t| t.size()).sum();
        self.launch.shape().tile(self.launch.vec) * bytes as u32
    }
}

/// The reduction's instance: a commutative combiner folds each thread's items as they come
/// (mode 2), for items of up to 8 bytes with `tuning::assoc_reduce_rounds` rounds, compiled for
/// 4 blocks a multiprocessor (2 for items over 16 bytes) and launched with that many, one even
/// wave; any other keeps their order (mode 0), 8 blocks a multiprocessor, no bound
/// (docs/tuning.md#custom-operator-scans).
fn reduce_key(arch: &Arch, c: &Combiner, own: u32) -> AssocReduceKey {
    let commutative = c.commutative();
    let bytes: usize = c.types.iter().map(|t| t.size()).sum();
    let v = c.types.iter().map(|t| t.compute().size()).sum::<usize>();
    AssocReduceKey {
        launch: Launch {
            block: BLOCK,
            items: if commutative && bytes <= 8 {
                tuning::assoc_reduce_rounds()
            } else {
                ROUNDS
            },
            vec: vec_of(c),
            minb: match (commutative, v <= 16) {
                (false, _) => 0,
                (true, true) => tuning::assoc_reduce_min_blocks(arch, BLOCK),
                (true, false) => arch.blocks_that_fit(2, BLOCK, 0),
            },
        },
        mode: if commutative { 2 } else { 0 },
        own: if commutative { own } else { 0 },
    }
}

/// The chunked scan's first pass, `vec` elements an access: each chunk's total (`mode` 1), or
/// (0) the reduction's.
fn totals_key(vec: u32, mode: u32) -> AssocReduceKey {
    AssocReduceKey {
        launch: Launch {
            block: BLOCK,
            items: ROUNDS,
            vec,
            minb: 0,
        },
        mode,
        own: 0,
    }
}

/// The chunked scan's second pass (`mode` as `AssocScanKey`'s), compiled for one block a
/// multiprocessor (kernels/assoc.cu's `ds_assoc_scan` says why).
fn chunk_scan_key(vec: u32, mode: u32) -> AssocScanKey {
    AssocScanKey {
        launch: Launch {
            block: BLOCK,
            items: ROUNDS,
            vec,
            minb: 1,
        },
        mode,
    }
}

/// The components (a bit each) that the commutative reduction computes from component 0's
/// loaded elements: lazy sources that read only component 0's stored column, with no head
/// flags (which read the element before), e.g. `x * x` in `xs.map(|x| (x, x * x))`. The
/// column is then loaded once (`vec_from`), not once a component.
fn own_components(srcs: &[Source]) -> u32 {
    let Some(base) = srcs.first().and_then(|s| s.as_column()) else {
        return 0;
    };
    srcs.iter()
        .enumerate()
        .skip(1)
        .filter(|(_, s)| s.as_column().is_none() && s.reads_only(base) && !s.reads_neighbours())
        .fold(0, |m, (j, _)| m | 1 << j)
}

/// Blocks a multiprocessor a launch of `key` has: as many as it is compiled for.
fn blocks_per_sm(key: &AssocReduceKey) -> u32 {
    if key.launch.minb == 0 {
        BLOCKS_PER_SM
    } else {
        key.launch.minb
    }
}

/// Bytes of the kernels' item `V` (the components in their compute types, C layout).
fn item_bytes(c: &Combiner) -> usize {
    let (mut off, mut align) = (0usize, 1usize);
    for t in &c.types {
        let s = t.compute().size();
        off = off.next_multiple_of(s) + s;
        align = align.max(s);
    }
    off.next_multiple_of(align)
}

/// Bytes of a stored item (the single-pass scan's tile in shared memory holds its columns).
fn stored_bytes(c: &Combiner) -> usize {
    c.types.iter().map(|t| t.size()).sum()
}

/// The single-pass scan's instance, for items of up to 16 bytes (their look-back slots are tagged
/// words, read without a fence): tiles of `tuning::assoc_tile`'s bytes of items for the scan's
/// size, at most 8 rounds (4 for items over 8 bytes, which spilled registers with 8), which wait
/// in shared memory through the look-back, `tuning::assoc_min_blocks` blocks a multiprocessor;
/// the look-back over groups of 32 tiles (docs/tuning.md#custom-operator-scans).
fn lookback_key(arch: &Arch, c: &Combiner, mode: u32, n: usize) -> Option<AssocScanLookbackKey> {
    let v = item_bytes(c);
    if v > 16 || !tuning::assoc_single() {
        return None;
    }
    let vec = vec_of(c);
    let most = if v > 8 { 4 } else { 8 };
    let tile = tuning::assoc_tile(arch, n.saturating_mul(stored_bytes(c)));
    let rounds = (tile / (BLOCK as usize * vec as usize * stored_bytes(c))).clamp(1, most) as u32;
    let mut key = AssocScanLookbackKey {
        launch: Launch {
            block: BLOCK,
            items: tuning::assoc_rounds(rounds),
            vec,
            minb: 0,
        },
        mode,
        grouped: tuning::assoc_grouped(),
    };
    let smem = key.dynamic_smem(&c.types) as usize;
    key.launch.minb = tuning::assoc_min_blocks(arch, BLOCK, smem);
    Some(key)
}

/// Items a thread loads at once per round: 16 bytes of the widest component.
fn vec_of(c: &Combiner) -> u32 {
    let widest = c.types.iter().map(|t| t.size()).max().unwrap_or(1);
    (16 / widest as u32).clamp(1, 4)
}

/// A launch's chunking: (blocks, elements a block), a whole number of tiles each.
fn chunks(gpu: &Gpu, n: usize, tile: u64, per_sm: u32) -> (u64, u64) {
    let tiles = (n as u64).div_ceil(tile).max(1);
    let most = (gpu.arch.sms as u64 * per_sm as u64).max(1);
    let per = tiles.div_ceil(most.min(tiles));
    (tiles.div_ceil(per), per * tile)
}

/// What the kernels share: the functor's shape, the sources with their vector width, the
/// constants (then the initial item) on the device; for the chunked kernels (`ds_assoc_reduce`,
/// `ds_assoc_scan`) the chunks and the partials.
struct Setup<'a> {
    functor: Arc<CombinerShape>,
    srcs: Vec<(&'a Source, u32)>,
    vec: u32,
    grid: u64,
    params: AssocParams,
    _consts: Buffer,
    _partial: Buffer,
}

fn setup<'a>(
    gpu: &Gpu,
    srcs: &'a [Source],
    c: &Combiner,
    init: &[u64],
    chunked: Option<(u32, u32)>,
) -> Result<Setup<'a>> {
    let k = c.types.len();
    // Up to eight components, and a segmented form's head flag.
    if srcs.len() != k || c.stored > MAX_COMPONENTS || k > MAX_COMPONENTS + 1 || init.len() > k {
        return Err(Error::Internal(format!(
            "a combiner of {k} components over {} sources from {} initial words",
            srcs.len(),
            init.len()
        )));
    }
    let vec = vec_of(c);
    let n = srcs[0].len;
    // Chunks of (rounds a tile, blocks a multiprocessor); none for the one-pass scan.
    let (grid, chunk) = chunked.map_or((0, 0), |(rounds, per_sm)| {
        chunks(gpu, n, (BLOCK * rounds * vec) as u64, per_sm)
    });
    // The constants, then the initial item: by value where the kernel takes them so (the same
    // test as `assoc_words`, kernels/assoc.cu: a copy to the device costs the host more than
    // the rest of a small call), else in device memory.
    let mut params = AssocParams {
        n: n as u64,
        chunk,
        done: gpu.passes.counter(counter::DONE),
        ..Default::default()
    };
    let words = c.params.iter().chain(init).copied();
    let consts = if c.params.len() + k <= WORDS {
        for (w, v) in params.words.0.iter_mut().zip(words) {
            *w = v;
        }
        Buffer::new(&gpu.mem, 0)?
    } else {
        let bytes: Vec<u8> = words.flat_map(u64::to_le_bytes).collect();
        let consts = Buffer::new(&gpu.mem, bytes.len())?;
        gpu.mem.write(&consts, &bytes)?;
        params.consts = consts.ptr();
        consts
    };
    let partial = Buffer::new(&gpu.mem, grid as usize * 8 * (k + 1))?;
    params.partial = partial.ptr();
    Ok(Setup {
        functor: Arc::new(c.shape()),
        srcs: srcs.iter().map(|s| (s, vec)).collect(),
        vec,
        grid,
        params,
        _consts: consts,
        _partial: partial,
    })
}

/// The combination of the items of `srcs` (`len > 0`): compute bits, one a component.
pub(crate) fn reduce(gpu: &Gpu, srcs: &[Source], c: &Combiner) -> Result<Vec<u64>> {
    let key = reduce_key(&gpu.arch, c, own_components(srcs));
    let mut s = setup(
        gpu,
        srcs,
        c,
        &[],
        Some((key.launch.items, blocks_per_sm(&key))),
    )?;
    let k = c.types.len();
    let kernel = gpu.kernel_with(key, &s.srcs, Some(s.functor.clone()))?;
    // The last block writes the result's words to mapped host memory: no copy after it.
    let mut bytes = vec![0u8; 8 * (k + 1)];
    gpu.mem.read_mapped(&mut bytes, |result| {
        s.params.result = result;
        kernel.launch(s.grid, BLOCK, 0, &s.params)
    })?;
    let words: Vec<u64> = bytes
        .chunks_exact(8)
        .map(|b| u64::from_le_bytes(b.try_into().unwrap_or_default()))
        .collect();
    if words[k] == 0 {
        return Err(Error::Internal("a reduction of items found none".into()));
    }
    Ok(words[..k].to_vec())
}

/// The scan of the items of `srcs` (`len > 0`) by `c` in `mode`: the stored components.
pub(crate) fn scan(
    gpu: &Gpu,
    srcs: &[Source],
    c: &Combiner,
    mode: &ScanMode,
) -> Result<Vec<Column>> {
    let (init, excl, code) = match mode {
        ScanMode::Inclusive => (Vec::new(), false, 0),
        ScanMode::Exclusive(i) => (i.clone(), true, 1),
        ScanMode::SegmentedExclusive(i) => (i.clone(), false, 2),
    };
    // The one-pass scan stages each component as its stored type: sources of another type
    // (a head combined in the compute type, f32 for f16 components) take the two passes.
    let typed = srcs.iter().zip(&c.types).all(|(s, t)| s.ty() == *t);
    let single = lookback_key(&gpu.arch, c, code, srcs[0].len).filter(|_| typed);
    let chunked = single.is_none().then_some((ROUNDS, BLOCKS_PER_SM));
    let mut s = setup(gpu, srcs, c, &init, chunked)?;
    s.params.excl = excl as u32; // (0 elsewhere: a reduction, or the segmented exclusive scan)
    let n = srcs[0].len;
    let outs = (0..c.stored)
        .map(|j| Buffer::new(&gpu.mem, n * c.types[j].size()))
        .collect::<Result<Vec<_>>>()?;
    let ptrs: Vec<Ptr> = outs.iter().map(|b| b.ptr()).collect();
    let at = |j: usize| ptrs.get(j).copied().unwrap_or_default();
    s.params.out0 = at(0);
    s.params.out1 = at(1);
    s.params.out2 = at(2);
    s.params.out3 = at(3);
    s.params.out4 = at(4);
    s.params.out5 = at(5);
    s.params.out6 = at(6);
    s.params.out7 = at(7);
    let columns = |outs: Vec<Buffer>| {
        outs.into_iter()
            .enumerate()
            .map(|(j, b)| b.into_column(c.types[j], n))
            .collect()
    };
    if let Some(key) = single {
        let tile = key.launch.shape().tile(key.launch.vec) as u64;
        let tiles = (n as u64).div_ceil(tile);
        let smem = key.dynamic_smem(&c.types);
        let k = gpu.kernel_with(key, &s.srcs, Some(s.functor.clone()))?;
        let mut params = s.params;
        k.launch_single_pass(tiles, key.launch.block, smem, |slots| {
            params.counter = slots.counter;
            params.status = slots.status;
            params.base = slots.base;
            params.epoch = slots.epoch;
            params.tiles = tiles as u32;
            params
        })?;
        return Ok(columns(outs));
    }
    gpu.kernel_with(totals_key(s.vec, 1), &s.srcs, Some(s.functor.clone()))?
        .launch(s.grid, BLOCK, 0, &s.params)?;
    let key = chunk_scan_key(s.vec, code);
    gpu.kernel_with(key, &s.srcs, Some(s.functor.clone()))?
        .launch(s.grid, BLOCK, 0, &s.params)?;
    Ok(columns(outs))
}

#[cfg(test)]
pub(crate) mod check {
    use super::*;
    use crate::backend::cuda::key::KernelKey;
    use crate::backend::cuda::source::SourceKey;
    use crate::expr::graph::Kind;

    /// The instances a compile check builds: a non-commutative pair operator (affine maps)
    /// and an argmax-like (value, position) operator, each with its segmented form, over
    /// stored columns, in every mode.
    pub(crate) fn variants(arch: &Arch) -> Vec<KernelKey> {
        let affine = Combiner::trace::<(f32, f32)>(|(a1, b1), (a2, b2)| (a1 * a2, b1 * a2 + b2))
            .expect("trace");
        let arg = Combiner::trace::<(f64, u64)>(|(a, i), (b, j)| {
            let take = crate::Expr::select(a.ne(a), b.eq(b), b.gt(a));
            (
                crate::Expr::select(take, b, a),
                crate::Expr::select(take, j, i),
            )
        })
        .expect("trace");
        let mut v = Vec::new();
        let sums = Combiner::trace::<(f32, f32)>(|(s, q), (t, r)| (s + t, q + r)).expect("trace");
        let wide = Combiner::trace::<(f64, f64, u64, i64)>(|(a, b, c, d), (e, f, g, h)| {
            (a + e, f * b, c.max(g), d ^ h)
        })
        .expect("trace");
        assert!(sums.commutative() && wide.commutative());
        assert!(!affine.commutative() && !arg.commutative() && !arg.segmented().commutative());
        for c in [&sums, &wide] {
            let k = reduce_key(arch, c, 0);
            v.push(KernelKey {
                functor: Some(Arc::new(c.shape())),
                family: k.into(),
                sources: c
                    .types
                    .iter()
                    .map(|&t| SourceKey::plain(t, k.launch.vec))
                    .collect(),
            });
        }
        // The sum and sum of squares of one column: the squares from the column's loads.
        let x = super::super::compile_check::col(crate::item::ScalarType::F32);
        let t = crate::expr::trace(&[crate::item::ScalarType::F32], |a, id| {
            let e = crate::Expr::<f32>::from_node(id, a[0]);
            e * e
        })
        .expect("trace");
        let srcs = [x.clone(), Source::map(&[&x], &t, 10)];
        let k = reduce_key(arch, &sums, own_components(&srcs));
        assert_eq!(k.own, 2);
        v.push(KernelKey {
            functor: Some(Arc::new(sums.shape())),
            family: k.into(),
            sources: srcs
                .iter()
                .map(|s| SourceKey::assuming(s, k.launch.vec))
                .collect(),
        });
        // The segmented affine maps: a `Select` between an operand passed through and the
        // combination made canonical (`Canon`), where the argmax selects operands only.
        let seg_affine = affine.segmented();
        assert!(
            seg_affine
                .nodes
                .iter()
                .any(|n| matches!(n.kind, Kind::Canon(_)))
        );
        // An item of eight components (every output column), non-commutative.
        type Eight = (u8, f64, i16, u32, u64, f32, bool, i8);
        let eight = Combiner::trace::<Eight>(|x, y| {
            let bits = x.6 | y.6;
            (
                x.0.max(y.0),
                x.1 + y.1,
                x.2 ^ y.2,
                y.3,
                x.4 + y.4,
                x.5.min(y.5),
                bits,
                x.7 + y.7,
            )
        })
        .expect("trace");
        for c in [affine, seg_affine, arg.clone(), arg.segmented(), eight] {
            let vec = vec_of(&c);
            let f = Some(Arc::new(c.shape()));
            let sources: Vec<SourceKey> =
                c.types.iter().map(|&t| SourceKey::plain(t, vec)).collect();
            for mode in [0, 1] {
                v.push(KernelKey {
                    functor: f.clone(),
                    family: totals_key(vec, mode).into(),
                    sources: sources.clone(),
                });
            }
            for mode in [0, 1, 2] {
                // The one-pass scan's tile in each of its size classes (`tuning::assoc_tile`).
                let mut keys: Vec<AssocScanLookbackKey> = Vec::new();
                for n in [1usize, 1 << 17, 1 << 20, 1 << 30] {
                    if let Some(k) = lookback_key(arch, &c, mode, n).filter(|k| !keys.contains(k)) {
                        keys.push(k);
                    }
                }
                for k in keys {
                    v.push(KernelKey {
                        functor: f.clone(),
                        family: k.into(),
                        sources: sources.clone(),
                    });
                }
                v.push(KernelKey {
                    functor: f.clone(),
                    family: chunk_scan_key(vec, mode).into(),
                    sources: sources.clone(),
                });
            }
        }
        v
    }
}
