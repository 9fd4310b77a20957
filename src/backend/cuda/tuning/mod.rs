//! Launch shapes per kernel family, by element size and GPU. The values were measured on compute
//! capability 9.0 (H100, H200); every other GPU takes the same values fitted to its attributes
//! (`Arch`: threads, shared memory a block and a multiprocessor), which leaves 9.0's unchanged.
//! Each entry links to its section of docs/tuning.md, where the measurements are; the
//! `DEVSEQ_TUNE` knobs (`knobs.rs`) override them for experiments.

mod arch;
mod knobs;

pub(crate) use arch::Arch;
pub(crate) use arch::gpus;
pub(crate) use knobs::{check as check_knobs, knobs};

use super::key::Launch;
use crate::item::ScalarType;

/// Threads a block and rounds a tile (a round is one 16-byte access a thread).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Shape {
    pub block: u32,
    pub rounds: u32,
}

impl Shape {
    /// A kernel's launch policy of this shape, `vec` elements an access and `minb` blocks a
    /// multiprocessor.
    pub(crate) fn launch(self, vec: u32, minb: u32) -> Launch {
        Launch {
            block: self.block,
            items: self.rounds,
            vec,
            minb,
        }
    }

    /// Elements a tile of this shape holds, `vec` to an access.
    pub(crate) fn tile(self, vec: u32) -> u32 {
        self.block * self.rounds * vec
    }

    /// Tiles that cover `n` elements, `vec` to an access.
    pub(crate) fn tiles(self, n: usize, vec: u32) -> u64 {
        (n as u64).div_ceil(self.tile(vec) as u64)
    }
}

/// Elements a thread takes in one 16-byte access (`size` the widest element involved).
pub(crate) fn vec(size: usize) -> u32 {
    (16 / size.clamp(1, 16)) as u32
}

/// Rounds of a tile staged in shared memory (16 bytes a thread a round): `rounds`, halved until
/// the tile leaves room for static shared memory in a block of `arch` (docs/tuning.md#scan).
fn fitted_rounds(arch: &Arch, block: u32, mut rounds: u32) -> u32 {
    while rounds > 1 && !arch.tile_fits((block * rounds * 16) as usize) {
        rounds /= 2;
    }
    rounds
}

/// Map, fill, sequence: 256 threads, 2 rounds, a block a tile (docs/tuning.md#map).
pub(crate) fn map() -> Shape {
    Shape {
        block: knobs().map_block.unwrap_or(256),
        rounds: knobs().map_rounds.unwrap_or(2),
    }
}

/// Map of a source that computes random numbers, `bytes` of output of `size`-byte elements: 4
/// rounds (more Philox blocks in flight) past 16 MB of 4- or 8-byte elements, else `map`'s
/// (docs/tuning.md#map).
pub(crate) fn map_random(bytes: usize, size: usize) -> Shape {
    let sh = map();
    if bytes > 16 << 20 && size >= 4 {
        Shape {
            rounds: knobs().map_rounds_random.unwrap_or(4),
            ..sh
        }
    } else {
        sh
    }
}

/// Whether a stored column of `bytes` is copied by devseq's kernel (no key lookup, less host
/// time a launch) rather than the driver: up to 128 MiB (docs/tuning.md#copy).
pub(crate) fn copy_by_kernel(bytes: usize) -> bool {
    let k = knobs();
    k.copy_kernel.unwrap_or(1) != 0 && bytes <= (k.copy_kernel_mib.unwrap_or(128) as usize) << 20
}

/// Reduce: 256 threads, 4 rounds, one wave of blocks (docs/tuning.md#reduce).
pub(crate) const REDUCE: Shape = Shape {
    block: 256,
    rounds: 4,
};

/// Elements a thread of the reduction takes in one access of a lazy integer source whose
/// narrowest column has `leaf`-byte elements, for results of `size` bytes: 16 bytes of that
/// column, at most four times the result's own vector (docs/tuning.md#reduce).
pub(crate) fn reduce_vec(size: usize, leaf: usize) -> u32 {
    vec(leaf).clamp(vec(size), 4 * vec(size))
}

/// Blocks a multiprocessor of the reduction, and so its grid: 8 (32 registers), 2 for 1-byte
/// elements (their 16 accumulators), as the GPU holds them (docs/tuning.md#blocks-per-multiprocessor).
/// The grid fixes the order of float combinations on one GPU.
pub(crate) fn reduce_min_blocks(arch: &Arch, size: usize) -> u32 {
    arch.blocks_that_fit(if size == 1 { 2 } else { 8 }, REDUCE.block, 0)
}

/// The largest scan, in bytes of elements, that takes 2 rounds a tile; and 8.
pub(crate) const SCAN_SMALL: usize = 512 << 10;
pub(crate) const SCAN_MID: usize = 8 << 20;

/// `inclusive_scan` and `exclusive_scan`, tiles staged in shared memory: 256 threads, rounds by
/// size (2 up to 512 KB, 8 up to 8 MB, then 16: the look-back costs per tile), at most 8 for
/// f16/bf16 (spills at 16), as the GPU's block holds them (docs/tuning.md#scan).
pub(crate) fn scan(arch: &Arch, ty: ScalarType, n: usize) -> Shape {
    let half = matches!(ty, ScalarType::F16 | ScalarType::BF16);
    let bytes = n * ty.size();
    let by_size = if bytes <= SCAN_SMALL {
        2
    } else if bytes <= SCAN_MID {
        8
    } else {
        16
    };
    let rounds = fitted_rounds(arch, 256, if half { by_size.min(8) } else { by_size });
    let k = knobs();
    Shape {
        block: 256,
        rounds: if half {
            k.scan_rounds_half
        } else {
            k.scan_rounds
        }
        .unwrap_or(rounds),
    }
}

/// Blocks a multiprocessor of the staged scan of tiles of `smem` bytes: 3, or 2 where items of
/// up to 4 bytes (or exclusive scans' float items) are `computed` in registers before they are
/// staged, as the GPU holds them (docs/tuning.md#blocks-per-multiprocessor).
pub(crate) fn scan_min_blocks(
    arch: &Arch,
    computed: bool,
    ty: ScalarType,
    exclusive: bool,
    smem: usize,
) -> u32 {
    let want = if computed && (ty.size() <= 4 || (ty.is_float() && exclusive)) {
        2
    } else {
        3
    };
    knobs()
        .scan_minb
        .unwrap_or_else(|| arch.blocks_that_fit(want, 256, smem))
}

/// The tile of the one-pass custom-operator scan, in bytes of stored items, for a scan of
/// `bytes` of them: 8 KB up to 1 MB, 16 KB up to 2 MB, 32 KB up to 256 MB, then 64 KB, at most
/// what the GPU's block holds (docs/tuning.md#custom-operator-scans).
pub(crate) fn assoc_tile(arch: &Arch, bytes: usize) -> usize {
    let mut tile = if bytes <= 1 << 20 {
        8 << 10
    } else if bytes <= 2 << 20 {
        16 << 10
    } else if bytes <= 256 << 20 {
        32 << 10
    } else {
        64 << 10
    };
    while tile > 8 << 10 && !arch.tile_fits(tile) {
        tile /= 2;
    }
    tile
}

/// Blocks a multiprocessor of the one-pass custom-operator scan with tiles of `smem` bytes: 2,
/// as the GPU holds them (docs/tuning.md#custom-operator-scans).
pub(crate) fn assoc_min_blocks(arch: &Arch, block: u32, smem: usize) -> u32 {
    knobs()
        .assoc_minb
        .unwrap_or_else(|| arch.blocks_that_fit(2, block, smem))
}

/// Kernels that hold their tile in registers (segmented scans and reduce, compaction, the runs
/// of scatter_combine): 256 threads, 32 elements a thread (16 for 8-byte types, 8 and 16 for
/// 1- and 2-byte ones) (docs/tuning.md#segmented-scans-and-reductions).
pub(crate) fn register_tile(size: usize) -> Shape {
    let rounds = match size {
        1 => 2,
        2 => 4,
        _ => 8,
    };
    Shape { block: 256, rounds }
}

/// The most bytes of values that the segmented kernels take in tiles of 2 rounds.
pub(crate) const SEG_SMALL: usize = 2 << 20;

/// The segmented kernels over (value, flag) pairs: `register_tile`'s shape, but 2 rounds for
/// up to 2 MB of 4- and 8-byte values, more tiles where 8 rounds left multiprocessors idle
/// (docs/tuning.md#segmented-scans-and-reductions).
pub(crate) fn seg(size: usize, n: usize) -> Shape {
    let sh = register_tile(size);
    let small = size >= 4 && n.saturating_mul(size) <= SEG_SMALL;
    Shape {
        block: sh.block,
        rounds: knobs()
            .seg_rounds
            .unwrap_or(if small { 2 } else { sh.rounds }),
    }
}

/// Blocks a multiprocessor of the kernels with tiles in registers: 3 (80 registers), as the
/// GPU holds them (docs/tuning.md#blocks-per-multiprocessor).
pub(crate) fn register_min_blocks(arch: &Arch) -> u32 {
    knobs()
        .seg_minb
        .unwrap_or_else(|| arch.blocks_that_fit(3, 256, 0))
}

/// The segmented scans: `seg`'s shape, with 2 blocks a multiprocessor for 4-byte values, 4 for
/// stored 8-byte floats and exact 8-byte integer sums (`fits_64`), else `register_min_blocks`
/// (docs/tuning.md#segmented-scans-and-reductions).
pub(crate) fn segscan(
    arch: &Arch,
    size: usize,
    n: usize,
    computed: bool,
    fits_64: bool,
) -> (Shape, u32) {
    let sh = seg(size, n);
    let k = knobs();
    let fit = |want| arch.blocks_that_fit(want, sh.block, 0);
    let minb = match size {
        4 => k.segscan_minb4.unwrap_or_else(|| fit(2)),
        8 if !computed && fits_64 => k.segscan_minb8.unwrap_or_else(|| fit(4)),
        _ => register_min_blocks(arch),
    };
    (sh, minb)
}

/// Blocks a multiprocessor of the segmented reduction: 3 for values of up to 4 bytes counted
/// in 32 bits, else 2 (docs/tuning.md#blocks-per-multiprocessor).
pub(crate) fn segreduce_min_blocks(arch: &Arch, size: usize, wide: bool) -> u32 {
    let want = if size <= 4 && !wide { 3 } else { 2 };
    knobs()
        .segreduce_minb
        .unwrap_or_else(|| arch.blocks_that_fit(want, 256, 0))
}

/// Compaction: `register_tile`'s rounds; 256 threads, or 512 (`big`) where the flags are
/// computed from the staged values alone and the sequence is large; tiles as the GPU's block
/// holds them (docs/tuning.md#compaction).
pub(crate) fn compact(arch: &Arch, size: usize, big: bool) -> Shape {
    let sh = register_tile(size);
    let k = knobs();
    let block = if big {
        k.compact_own_block.unwrap_or(512)
    } else {
        k.compact_block.unwrap_or(sh.block)
    };
    Shape {
        block,
        rounds: k
            .compact_rounds
            .unwrap_or_else(|| fitted_rounds(arch, block, sh.rounds)),
    }
}

/// Blocks a multiprocessor of compaction, whose values wait in `smem` bytes of shared memory:
/// 4 (64 registers) for blocks of 256, as many of 512 as give the same registers, as the GPU
/// holds them (docs/tuning.md#blocks-per-multiprocessor).
pub(crate) fn compact_min_blocks(arch: &Arch, block: u32, smem: usize) -> u32 {
    let want = if block > 256 {
        (1024 / block).max(1)
    } else {
        knobs().compact_minb.unwrap_or(4)
    };
    arch.blocks_that_fit(want, block, smem)
}

/// Whether compaction computes lazy flags that read only the values' own column from the values
/// it staged, reading the column once: on (docs/tuning.md#compaction).
pub(crate) fn compact_own() -> bool {
    knobs().compact_own.unwrap_or(1) != 0
}

/// The runs of scatter_combine: 12 elements a thread for 4-byte values, 16 for 8-byte ones,
/// half of `register_tile`'s for narrower ones (docs/tuning.md#scatter-combine).
pub(crate) fn combine(size: usize) -> Shape {
    let sh = register_tile(size);
    Shape {
        block: sh.block,
        rounds: knobs().combine_rounds.unwrap_or(match size {
            4 => 3,
            8.. => 4,
            _ => (sh.rounds / 2).max(1),
        }),
    }
}

/// Blocks a multiprocessor of scatter_combine's runs over tiles of `smem` bytes: 3 (80
/// registers) for 4-byte values, 2 for the others (docs/tuning.md#blocks-per-multiprocessor).
pub(crate) fn combine_min_blocks(arch: &Arch, size: usize, block: u32, smem: usize) -> u32 {
    let want = if size == 4 { 3 } else { 2 };
    knobs()
        .combine_minb
        .unwrap_or_else(|| arch.blocks_that_fit(want, block, smem))
}

/// Targets larger than this many bytes (the L2 cache's) may have their scatter partitioned
/// (docs/tuning.md#gather-and-scatter).
pub(crate) fn scatter_partition_bytes(arch: &Arch) -> usize {
    knobs()
        .scatter_partition_bytes
        .map_or(arch.l2_bytes, |b| b as usize)
}

/// Windows of 32 neighbouring indices that a scatter samples to decide whether to partition,
/// and the span (in elements) past which a window's writes count as far apart. First choice.
pub(crate) const SPREAD_WINDOWS: u32 = 256;
pub(crate) const SPREAD_SPAN: u64 = 1024;

/// Threads a block of the kernels that take one element a thread in a grid-stride loop (head
/// flags, the sort's histogram, histogram, the spread sample). First choice.
pub(crate) const FLAT_BLOCK: u32 = 256;

/// Histogram: blocks for `tiles` tiles in a grid-stride loop: a block for every 4 tiles, at
/// least 64 (or one a tile), at most a wave (docs/tuning.md#histogram).
pub(crate) fn histogram_blocks(tiles: u64, wave: u64) -> u64 {
    let per_block = knobs().histogram_tiles.unwrap_or(4) as u64;
    tiles
        .div_ceil(per_block)
        .max(tiles.min(64))
        .min(wave)
        .max(1)
}

/// Keys of the haystack a block of `ds_search` keeps in shared memory (the top 11 levels of
/// every binary search). First choice (docs/tuning.md#search).
pub(crate) const SEARCH_SAMPLES: u32 = 2048;

/// Needles from which a search of a haystack larger than the L2 cache sorts them and merges
/// them with the haystack. First choice (docs/tuning.md#search).
pub(crate) const SEARCH_SORTED_NEEDLES: usize = 1 << 18;

/// Threads a block of `ds_merge` (docs/tuning.md#merge).
pub(crate) fn merge_block() -> u32 {
    knobs().merge_block.unwrap_or(256)
}

/// Outputs a thread of `ds_merge` for keys of `size` bytes: odd (no bank conflicts in its
/// strided stores to shared memory), 27 for 4-byte keys, 7 for wider (docs/tuning.md#merge).
pub(crate) fn merge_items(size: usize) -> u32 {
    let k = knobs();
    if size <= 4 {
        k.merge_items.unwrap_or(27)
    } else {
        k.merge_items8.unwrap_or(7)
    }
}

/// Threads a block, keys a thread and blocks a multiprocessor of the radix sort's digit
/// passes, by the widest of key and value and whether values travel: after CUB's Onesweep
/// tuning for 9.0, measured on an H100 and an H200 (docs/tuning.md#sort).
pub(crate) fn sort(key: usize, value: Option<usize>) -> (u32, u32, u32) {
    let k = knobs();
    let widest = key.max(value.unwrap_or(0));
    let (items, minb) = match (widest <= 4, value) {
        (true, None) => (k.sort_items.unwrap_or(23), k.sort_minb.unwrap_or(3)),
        (true, Some(_)) => (
            k.sort_items_pairs.unwrap_or(28),
            k.sort_minb_pairs.unwrap_or(2),
        ),
        (false, None) => (k.sort_items8.unwrap_or(20), k.sort_minb8.unwrap_or(2)),
        (false, Some(v)) if key + v < 16 => (
            k.sort_items_pairs8.unwrap_or(18),
            k.sort_minb_pairs8.unwrap_or(2),
        ),
        (false, Some(_)) => (
            k.sort_items_pairs16.unwrap_or(20),
            k.sort_minb_pairs16.unwrap_or(1),
        ),
    };
    (k.sort_block.unwrap_or(384), items, minb)
}

/// The digit passes' shape for `n` keys on `arch`: `sort`'s, or where its tiles would not give
/// every multiprocessor two, 12 keys a thread (2 blocks a multiprocessor with 8-byte keys or
/// values; 16-byte pairs keep 1) (docs/tuning.md#sort).
pub(crate) fn sort_for(key: usize, value: Option<usize>, n: usize, arch: &Arch) -> (u32, u32, u32) {
    let (block, items, minb) = sort(key, value);
    let widest = key.max(value.unwrap_or(0));
    let tiles = (n as u64).div_ceil(u64::from(block * items));
    if tiles >= 2 * u64::from(arch.sms) {
        return (block, items, minb);
    }
    let small = knobs().sort_items_small.unwrap_or(12).min(items);
    let minb = match (widest, key + value.unwrap_or(0)) {
        (..=4, _) => minb,
        (_, 16..) => minb.min(2),
        _ => 2,
    };
    (block, small, minb)
}

/// Blocks a multiprocessor in the grid of the sort's digit counts: 6 (docs/tuning.md#sort).
pub(crate) fn sort_hist_blocks() -> u32 {
    knobs().sort_hist_blocks.unwrap_or(6)
}

/// Whether keys that fit one tile are sorted by one block in one launch: yes
/// (docs/tuning.md#sort).
pub(crate) fn sort_one_block() -> bool {
    knobs().sort_one_block.unwrap_or(1) != 0
}

/// Whether single-pass kernels take tile numbers from an atomic counter rather than their block
/// index (as CUB's do): the block index (docs/tuning.md#tile-numbers).
pub(crate) fn tile_counter() -> bool {
    knobs().tile_counter.unwrap_or(0) != 0
}

/// Bytes of a look-back status slot (`ds::Slot`).
pub(crate) const SLOT_BYTES: usize = 32;

/// Gather and scatter: 256 threads, 2 rounds of indices (docs/tuning.md#gather-and-scatter).
pub(crate) fn gather() -> Shape {
    Shape {
        block: 256,
        rounds: knobs().gather_rounds.unwrap_or(2),
    }
}

/// Targets of at most this many bytes (1 MiB) are scattered in one launch with the copy of their
/// base (a cooperative launch) (docs/tuning.md#gather-and-scatter).
pub(crate) fn scatter_base_bytes() -> usize {
    knobs().scatter_base_bytes.unwrap_or(1 << 20) as usize
}

/// Whether gather and scatter launch a block a tile rather than one wave striding over the
/// tiles: a block a tile (docs/tuning.md#gather-and-scatter).
pub(crate) fn gather_tiles() -> bool {
    knobs().gather_tiles.unwrap_or(1) != 0
}

/// The custom-operator reduction's rounds a tile and blocks a multiprocessor for commutative
/// combiners (docs/tuning.md#custom-operator-scans).
pub(crate) fn assoc_reduce_rounds() -> u32 {
    knobs().assoc_reduce_rounds.unwrap_or(8)
}
pub(crate) fn assoc_reduce_min_blocks(arch: &Arch, block: u32) -> u32 {
    knobs()
        .assoc_reduce_minb
        .unwrap_or_else(|| arch.blocks_that_fit(4, block, 0))
}

/// Whether custom-operator scans of items of up to 16 bytes take the one-pass scan (else
/// reduce, then scan), and whether its look-back goes over groups of 32 tiles
/// (docs/tuning.md#custom-operator-scans).
pub(crate) fn assoc_single() -> bool {
    knobs().assoc_single.unwrap_or(1) != 0
}
pub(crate) fn assoc_grouped() -> bool {
    knobs().assoc_grouped.unwrap_or(1) != 0
}
pub(crate) fn assoc_rounds(rounds: u32) -> u32 {
    knobs().assoc_rounds.unwrap_or(rounds)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The measured shapes are 9.0's: on an H100 and an H200 fitting changes none of them.
    #[test]
    fn measured_shapes_stay_on_their_gpus() {
        for arch in [gpus::H100, gpus::H200] {
            for ty in ScalarType::ALL {
                for n in [1, SCAN_SMALL, SCAN_MID, 1 << 30] {
                    let half = matches!(ty, ScalarType::F16 | ScalarType::BF16);
                    let by_size = if n * ty.size() <= SCAN_SMALL {
                        2
                    } else if n * ty.size() <= SCAN_MID {
                        8
                    } else {
                        16
                    };
                    let want = if half { by_size.min(8) } else { by_size };
                    assert_eq!(scan(&arch, ty, n).rounds, want, "{ty:?} {n}");
                }
            }
            assert_eq!(reduce_min_blocks(&arch, 4), 8);
            assert_eq!(reduce_min_blocks(&arch, 1), 2);
            assert_eq!(
                scan_min_blocks(&arch, false, ScalarType::I32, false, 64 << 10),
                3
            );
            assert_eq!(register_min_blocks(&arch), 3);
            assert_eq!(compact_min_blocks(&arch, 256, 32 << 10), 4);
            assert_eq!(compact_min_blocks(&arch, 512, 32 << 10), 2);
            assert_eq!(assoc_tile(&arch, 1 << 30), 64 << 10);
            assert_eq!(assoc_min_blocks(&arch, 256, 64 << 10), 2);
        }
    }

    /// On every GPU of the published figures, the shapes fit: tiles leave room for static
    /// shared memory in a block, and the blocks a multiprocessor asked for fit its threads and
    /// shared memory.
    #[test]
    fn shapes_fit_every_gpu() {
        for (name, arch) in gpus::ALL {
            for ty in ScalarType::ALL {
                for n in [1 << 10, 1 << 20, 1 << 30] {
                    let sh = scan(&arch, ty, n);
                    let smem = (sh.tile(vec(ty.size())) * ty.size() as u32) as usize;
                    assert!(
                        arch.tile_fits(smem),
                        "{name}: scan {ty:?} {n}: {smem} bytes"
                    );
                    let minb = scan_min_blocks(&arch, false, ty, false, smem);
                    assert!(minb * sh.block <= arch.threads_sm, "{name}: scan threads");
                    assert!(
                        minb == 1 || minb as usize * (smem + arch.smem_reserved) <= arch.smem_sm,
                        "{name}: scan {ty:?}: {minb} blocks of {smem} bytes"
                    );
                    let tile = assoc_tile(&arch, n * ty.size());
                    assert!(arch.tile_fits(tile), "{name}: custom scan tile {tile}");
                }
            }
            assert!(reduce_min_blocks(&arch, 4) * REDUCE.block <= arch.threads_sm);
            assert!(register_min_blocks(&arch) * 256 <= arch.threads_sm);
            for size in [1, 2, 4, 8] {
                for big in [false, true] {
                    let sh = compact(&arch, size, big);
                    let smem = (sh.tile(vec(size)) as usize) * size;
                    let minb = compact_min_blocks(&arch, sh.block, smem);
                    assert!(arch.tile_fits(smem), "{name}: compaction tile {smem}");
                    assert!(
                        minb * sh.block <= arch.threads_sm,
                        "{name}: compaction threads"
                    );
                }
            }
        }
        // Where the measured shapes do not fit, fewer rounds and blocks: a T4's 64 KB block.
        assert_eq!(scan(&gpus::T4, ScalarType::I32, 1 << 30).rounds, 8);
        assert_eq!(reduce_min_blocks(&gpus::T4, 4), 4);
    }
}
