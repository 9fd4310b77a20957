//! Launch shapes per kernel family, by element size and architecture. Each entry says where
//! its numbers came from; "first choice" entries are reasoned, not yet measured, and are
//! revisited with the benchmark (docs/performance.md). Every number was measured on sm_90
//! (H100, H200); other architectures take the same values until they are measured there.

use crate::item::ScalarType;
use std::collections::HashMap;
use std::sync::OnceLock;

/// A launch-shape value, overridable for tuning experiments through `DEVSEQ_TUNE` (a
/// comma-separated list of `name=value`, e.g. `scan_rounds=8,sort_items=12`). Not for
/// production use: shapes outside the tested ones may not compile.
pub(crate) fn knob(name: &str, default: u32) -> u32 {
    static K: OnceLock<HashMap<String, u32>> = OnceLock::new();
    K.get_or_init(|| {
        std::env::var("DEVSEQ_TUNE")
            .unwrap_or_default()
            .split(',')
            .filter_map(|kv| {
                let (k, v) = kv.split_once('=')?;
                Some((k.trim().to_string(), v.trim().parse().ok()?))
            })
            .collect()
    })
    .get(name)
    .copied()
    .unwrap_or(default)
}

/// What the launch shapes depend on besides the data: the GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Arch {
    /// Compute capability.
    pub major: u32,
    pub minor: u32,
    /// Multiprocessors.
    pub sms: u32,
    /// Bytes of L2 cache.
    pub l2_bytes: usize,
    /// Bytes of shared memory one block may use (the opt-in maximum).
    pub smem_block: usize,
    /// Whether kernels may be launched cooperatively (every block resident at once).
    pub cooperative: bool,
}

/// Threads a block and rounds a tile (a round is one 16-byte access a thread).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Shape {
    pub block: u32,
    pub rounds: u32,
}

impl Shape {
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

/// Map, fill, sequence: 256 threads, 2 rounds (two 16-byte vectors a thread), a block a
/// tile. Measured on an H200 (runs 16 and 20, docs/performance.md): one wave of blocks
/// striding over the tiles stayed at 0.55-0.58 ms for 2^28 f32 whatever its shape (128-512
/// threads, 1-4 rounds, with or without bulk copies through shared memory), against Thrust's
/// 0.528; a block a tile took 0.526-0.533 ms with 2, 4 or 8 rounds. On an H100 (run 76) 2
/// rounds beat 4 at every size: map_f32 0.0120 / 0.0558 / 0.7237 ms at 2^20 / 2^24 / 2^28
/// against 0.0178 / 0.0627 / 0.7489, random_uniform_f32 0.0303 against 0.0343 at 2^24 (1
/// round: 0.404 ms at 2^28, too few Philox blocks in flight; 8: no better than 4).
/// (`DEVSEQ_TUNE` knobs `map_block`, `map_rounds`.)
pub(crate) fn map() -> Shape {
    Shape {
        block: knob("map_block", 256),
        rounds: knob("map_rounds", 2),
    }
}

/// Map of a source that computes random numbers, `bytes` of output of `size`-byte elements: 4
/// rounds where the output passes 16 MB and the elements are 4 or 8 bytes (four Philox blocks a
/// thread in flight: the kernel is bound by arithmetic more than by its stores), else `map`'s.
/// (Elements of 2 bytes take four blocks a thread in `map`'s 2 rounds already; at 4 rounds
/// their normals spilled 16 bytes a thread around the calls of sine and cosine.) Measured on an
/// H200 (2026-11-28, run 316, three alternations, ms, random_uniform_f32 at 2^20 / 2^24 /
/// 2^28): 2 rounds 0.0091-0.0094 / 0.0263-0.0269 / 0.3087-0.3123, 4 rounds 0.0094-0.0102 /
/// 0.0258-0.0266 / 0.2869-0.2885 (cuRAND's 0.294-0.298 at 2^28 in runs 313-314).
/// (`DEVSEQ_TUNE` knob `map_rounds_random`.)
pub(crate) fn map_random(bytes: usize, size: usize) -> Shape {
    let sh = map();
    if bytes > 16 << 20 && size >= 4 {
        Shape {
            rounds: knob("map_rounds_random", 4),
            ..sh
        }
    } else {
        sh
    }
}

/// Whether a stored column of `bytes` (aligned for 16-byte vectors) is copied by the map kernel
/// rather than the driver's device-to-device copy: by the map kernel of 4-byte words (or bytes)
/// that the GPU holds after its first use, so that a copy builds and looks up no kernel key
/// (map.rs `copy_by_kernel`), up to 128 MiB; larger copies by the driver. The kernel's launch
/// costs the host less than the driver's copy; at large sizes the driver's copy moved the bytes
/// faster on an H200 and as fast on an H100. On an H100 (run 277, 2026-11-28, one process a
/// variant, four alternations; medians of the four medians, us, at 2^16 / 2^20 / 2^24 / 2^28
/// f32): the held kernel 7.25 / 8.75 / 52.45 / 725.9, the driver 7.95 / 8.95 / 52.75 / 727.6,
/// the map kernel through the usual key lookup 8.25 / 9.00 / 53.10 / 722.7; the peer's
/// `cudaMemcpyAsync` 8.55 / 9.20 / 60.0 / 718.7 in the same run. On an H200 (run 319,
/// 2026-11-28, two alternations, ms at 2^24 / 2^26 / 2^27 / 2^28 f32): the held kernel 0.0399,
/// 0.0387 / 0.1351, 0.1388 / 0.2681, 0.2668 / 0.5210, 0.5264; the driver 0.0400, 0.0396 /
/// 0.1321, 0.1359 / 0.2614, 0.2637 / 0.5108, 0.5134. (`DEVSEQ_TUNE` knobs `copy_kernel`, 1 or
/// 0, and `copy_kernel_mib`, the largest copy in MiB that the kernel takes.)
pub(crate) fn copy_by_kernel(bytes: usize) -> bool {
    knob("copy_kernel", 1) != 0 && bytes <= (knob("copy_kernel_mib", 128) as usize) << 20
}

/// Reduce: 256 threads, 4 rounds (64 bytes in flight a thread), one wave of blocks. First
/// choice, as CUB's reduce tuning for 4-byte types (256 threads, 16 items).
pub(crate) const REDUCE: Shape = Shape {
    block: 256,
    rounds: 4,
};

/// Elements a thread of the reduction takes in one access of a lazy integer source whose
/// narrowest stored column has `leaf`-byte elements, for results of `size` bytes: 16 bytes of
/// that column, at most four times the result's own vector (so that counting 1-byte flags into
/// u32 reads 16 of them at once, not 4). First choice: for argmax's 64-bit words made from f32
/// elements it changed nothing measurable (H100 run 72: 0.530 ms at 2^28 against 0.519 with
/// 8-byte reads; computing the key in 32-bit words then gave 0.414, run 75).
pub(crate) fn reduce_vec(size: usize, leaf: usize) -> u32 {
    vec(leaf).clamp(vec(size), 4 * vec(size))
}

/// Blocks a multiprocessor of the reduction (`__launch_bounds__`, so every instance fits that
/// many), and so its grid: the multiprocessors times this, whatever the source. The grid fixes
/// the order in which float values are combined, so a lazy input reduces to the same bits as
/// its stored copy. ptxas (sm_90, 2026-11-23) gave the stored instances 32 registers (f32: 33)
/// for elements of 2 to 8 bytes, so 8 blocks fit; 1-byte elements keep 16 accumulators and
/// used up to 87 registers (2 blocks then).
pub(crate) fn reduce_min_blocks(size: usize) -> u32 {
    if size == 1 { 2 } else { 8 }
}

/// `inclusive_scan` and `exclusive_scan`, whose tiles wait in shared memory (kernels/scan.cu):
/// 256 threads and 16 rounds (a 64 KB tile for every element size; rounds x warps must not
/// exceed 128), 3 blocks a multiprocessor. The look-back, not the data path, sets the pace, and
/// it costs per tile, so tiles are as large as fits. Measured (2026-11-22, docs/performance.md):
/// i32 scan of 2^28 on an H100 (run 42) 0.796 ms with 16 rounds x 3 blocks, 0.80 with 16 x 2,
/// 0.815 with 11 x 4, 0.84 with 8 x 4, against 0.835 with 8 rounds in registers; on an H200
/// (runs 41, 45) 0.638-0.644 with 11 x 4 and 0.606-0.611 with 16 x 3, against 0.665 in
/// registers. f16 and bf16 take 8 rounds (32 KB): at 16 ptxas spilled 16-138 bytes a thread
/// (their conversions to and from f32 in each of 128 items a thread), at 8 none (69-74
/// registers; sm_90, 2026-11-27; no benchmark line scans them).
///
/// Small scans take smaller tiles (`scan_rounds_for`): a scan of 2^16 i32 in 64 KB tiles is 4
/// blocks on a GPU of 132 multiprocessors. (`DEVSEQ_TUNE` knobs `scan_rounds`,
/// `scan_rounds_half` (every size), `scan_minb`.)
pub(crate) fn scan(ty: ScalarType, n: usize) -> Shape {
    let half = matches!(ty, ScalarType::F16 | ScalarType::BF16);
    let most = if half { 8 } else { 16 };
    let rounds = scan_rounds_for(n * ty.size()).min(most);
    Shape {
        block: 256,
        rounds: if half {
            knob("scan_rounds_half", rounds)
        } else {
            knob("scan_rounds", rounds)
        },
    }
}

/// The rounds of a scan's tile for `bytes` of elements: 2 (8 KB tiles) up to 512 KB, 8 (32 KB)
/// up to 8 MB, then 16 (64 KB). The bounds depend on the size alone, not on the GPU, so a
/// float scan of the same elements gives the same bits on every device of one kind of tile.
/// Measured on an H100 (2026-11-27, run 243, `DEVSEQ_TUNE=scan_rounds=R`, event ms, two
/// alternations): inclusive_scan_add_i32 at 2^16 (256 KB) 0.0132 / 0.0136 with 16 rounds,
/// 0.0116 / 0.0114 with 8, 0.0114 / 0.0112 with 4, 0.0107 / 0.0102 with 2, 0.0111 / 0.0103
/// with 1 (the kernel alone, Nsight Compute: 6.7-8.1 us with 16, 5.7-6.3 with 2); at 2^20
/// (4 MB) 0.0151 / 0.0143 with 16, 0.0122 / 0.0129 with 8, 0.0133 / 0.0137 with 4, 0.0142 /
/// 0.0134 with 2; at 2^24 (64 MB) 0.0629 / 0.0615 with 16, 0.0640 / 0.0635 with 8, 0.0733 /
/// 0.0716 with 4. inclusive_scan_add_i64 at 2^16 (512 KB) 0.0157 / 0.0134 with 16, 0.0111 /
/// 0.0109 with 2; at 2^20 (8 MB) 0.0149 / 0.0151 with 16, 0.0148 / 0.0151 with 8.
pub(crate) fn scan_rounds_for(bytes: usize) -> u32 {
    if bytes <= SCAN_SMALL {
        2
    } else if bytes <= SCAN_MID {
        8
    } else {
        16
    }
}

/// The largest scan, in bytes of elements, that takes 2 rounds a tile; and 8.
pub(crate) const SCAN_SMALL: usize = 512 << 10;
pub(crate) const SCAN_MID: usize = 8 << 20;

/// The tile of the one-pass custom-operator scan (`ds_assoc_scan_lookback`, the scans of items of
/// up to 16 bytes), in bytes of stored items, for a scan of `bytes` of them: 8 KB up to 1 MB, 16 KB
/// up to 2 MB, 32 KB up to 256 MB, then 64 KB. As for `scan_rounds_for`, the bounds depend on the
/// size alone, so a float scan of the same items gives the same bits on every device of one kind.
/// Measured on an H200 (2026-11-29, runs 365-366, `DEVSEQ_TUNE=assoc_rounds=R` over
/// linear_recurrence_f32's (f32, f32) items, where a round is 8 KB; event ms, three alternations,
/// 8 KB / 16 KB / 32 KB / 64 KB tiles): at 2^16 (512 KB) 0.0106-0.0128 / 0.0108-0.0127 /
/// 0.0139-0.0142 / 0.0148-0.0167; 2^17 0.0111-0.0113 / 0.0119-0.0134 / 0.0135-0.0138 /
/// 0.0152-0.0168; 2^18 (2 MB) 0.0130-0.0150 / 0.0116-0.0135 / 0.0124-0.0148 / 0.0151-0.0185; 2^19
/// 0.0177-0.0193 / 0.0142-0.0164 / 0.0132-0.0156 / 0.0161-0.0180; 2^20 0.0244-0.0251 /
/// 0.0189-0.0216 / 0.0160-0.0187 / 0.0168-0.0185; 2^22 0.0465-0.0467 / 0.0374-0.0400 /
/// 0.0337-0.0365 / 0.0373-0.0403; 2^24 (128 MB) -- / 0.1141-0.1167 / 0.0990-0.0996 / 0.1031-0.1050;
/// 2^26 (512 MB) -- / 0.4217-0.4237 / 0.3538-0.3596 / 0.3540-0.3590; 2^28 -- / 1.6468-1.6491 /
/// 1.3826-1.3893 / 1.3427-1.3668. On an H100 (run 170) 32 KB tiles read 0.123 ms at 2^24 against
/// 0.129-0.131 and 1.708 at 2^28 against 1.677-1.682. (`DEVSEQ_TUNE` knob `assoc_rounds`, every
/// size.)
pub(crate) fn assoc_tile(bytes: usize) -> usize {
    if bytes <= 1 << 20 {
        8 << 10
    } else if bytes <= 2 << 20 {
        16 << 10
    } else if bytes <= 256 << 20 {
        32 << 10
    } else {
        64 << 10
    }
}

/// Single-pass kernels that hold their tile in registers (segmented scans and reduce,
/// compaction, the runs of scatter_combine): 256 threads (8 warps) and rounds such that a
/// thread holds 32 elements (16 for 8-byte types); rounds x warps must not exceed 128 (warp 0
/// scans the chunk totals, up to four a lane). Measured on an H200 (2026-11-21,
/// docs/performance.md): for 4-byte types 8 rounds with 3 blocks a multiprocessor took an
/// inclusive scan of 2^28 from 0.80 ms (4 rounds, 4 blocks) to 0.67 ms, fewer tiles to look
/// back over; 2 rounds were slower still.
pub(crate) fn register_tile(size: usize) -> Shape {
    let rounds = match size {
        1 => 2,
        2 => 4,
        _ => 8,
    };
    Shape { block: 256, rounds }
}

/// The single-pass kernels over (value, flag) pairs (segmented scans and reduce): as
/// `register_tile`. For 8-byte values 4 rounds spill less (ptxas: 400 bytes a thread in the
/// i64 scan against 700 with 8) but double the tiles, and were slower: the f64 segmented scan
/// of 2^28 took 4.01 ms with 4 and 3.54 with 8 (H100, run 72).
///
/// Small inputs of 4- and 8-byte values (`n` values of `size` bytes, at most `SEG_SMALL`) take
/// 2 rounds: more, smaller tiles where 8 rounds left most multiprocessors idle. On an H100
/// (2026-11-27, run 251, `DEVSEQ_TUNE=seg_rounds=R`, event ms, the mean of four alternations,
/// 8 / 4 / 2 rounds): reduce_by_key_f32 at 2^16 0.0255 / 0.0219 / 0.0205, at 2^18 0.0261 /
/// 0.0230 / 0.0238, at 2^20 0.0286 / 0.0304 / 0.0370; segmented_scan_add_i32 at 2^16 0.0119 /
/// 0.0112 / 0.0108, 2^18 0.0120 / 0.0114 / 0.0106, 2^20 0.0123 / 0.0125 / 0.0122;
/// segmented_scan_add_f64 at 2^16 0.0136 / 0.0128 / 0.0118, 2^18 (2 MB) 0.0132 / 0.0129 /
/// 0.0122, 2^20 0.0158 / 0.0168 / 0.0195. (`DEVSEQ_TUNE` knob `seg_rounds`, every size.)
pub(crate) fn seg(size: usize, n: usize) -> Shape {
    let sh = register_tile(size);
    let small = size >= 4 && n.saturating_mul(size) <= SEG_SMALL;
    Shape {
        block: sh.block,
        rounds: knob("seg_rounds", if small { 2 } else { sh.rounds }),
    }
}

/// The most bytes of values that the segmented kernels take in tiles of 2 rounds.
pub(crate) const SEG_SMALL: usize = 2 << 20;

/// The segmented scans: `seg`'s shape and `register_min_blocks` (for 8-byte values 8 rounds x 3
/// blocks a multiprocessor), but 2 blocks for 4-byte values. The 8-byte integers' look-back also
/// walks back by trees over exact aggregates, more code beside the tile: ptxas put 550 bytes a
/// thread on the stack at 8 rounds x 3 blocks, 440 at 4 x 4 (136 at 8 x 3 with the look-back left
/// out). On an H100 (2026-11-25, runs 101-102, heads every 1000) an i64 segmented scan of 2^28 took
/// 2.39 ms at 4 x 4 against 3.48 at 8 x 3 (2.75 at 4 x 3), and f64's (a left fold) 2.10 against
/// 2.04, so floats keep 8 x 3. Since 8-byte items wait in shared memory through the look-back
/// (2026-11-25, run 119): i64 2.25 ms at 4 x 4 against 2.28-2.30 at 8 x 3, f64 1.79-1.80 at 8 x 3.
/// At 4 x 4 ptxas spilled 80-88 bytes a thread of the 8-byte integer instances, and at 4 x 3 none,
/// but that ran 12% slower (2026-11-26, run 203: 2.35 ms against 2.09-2.11), so they kept 4 x 4.
/// Since the block scan keeps the pairs' state in shared memory through the look-back
/// (`tile_scan_with`, 2026-11-27) they spill none at 4 x 4 nor at 8 x 3 (75 registers), and 8 x 3
/// is the faster: 1.55-1.56 ms at 2^28 against 1.80-1.82 at 4 x 4 (0.123-0.125 against 0.141-0.142
/// at 2^24; H100, run 237), so they take 8 x 3 as f64 does, and f64's knobs (their own,
/// `segscan_rounds8` and `segscan_minb8`, are gone). 4-byte values run 2 blocks (8 rounds, up to
/// 128 registers): at 3 ptxas spilled 4-72 bytes a thread (f32 most), and segmented_scan_add_i32 at
/// 2^28 took 0.811-0.814 ms against 0.818-0.835 (runs 202-203); f64's 8 x 3 spilled 4-8 bytes (none
/// since 2026-11-27) but 2 blocks took 1.94-1.95 ms against 1.58 (run 202). Stored 8-byte
/// floats, and stored 8-byte integers' sums and products (`fits_64`), now take 4 blocks (64
/// registers), where the prefixes' head flags wait packed in one mask through the look-back
/// (kernels/block/scan.cuh, `PackedPrefixes`; unpacked, the f64 instances spilled 20-32 bytes a
/// thread at 4). On an H200 (2026-11-28, runs 331-335, ms at 2^20 / 2^24 / 2^28, three
/// alternations in run 335) segmented_scan_add_f64 took 0.0145-0.0159 / 0.1032-0.1049 /
/// 1.3475-1.3501 at 4 against 0.0137-0.0158 / 0.1105-0.1121 / 1.4177-1.4234 at 3 (2 blocks:
/// 0.128-0.130 / 1.81-1.83 at 2^24 / 2^28, run 331), and segmented_scan_add_i64 0.0143-0.0158 /
/// 0.0974-0.0986 / 1.2794-1.2804 against 0.0140-0.0156 / 0.1057-0.1066 / 1.3304-1.3327, with 4-8
/// bytes a thread spilled in the integer sums (ptxas). Integer minima, maxima and bitwise
/// operators keep 3 (at 4 they spilled 4-72 bytes, not measured), and so do computed values
/// (lazy sources: 24-184 bytes at 4). (`DEVSEQ_TUNE` knobs `seg_rounds`, `seg_minb`,
/// `segscan_minb4`, `segscan_minb8`.)
pub(crate) fn segscan(size: usize, n: usize, computed: bool, fits_64: bool) -> (Shape, u32) {
    let sh = seg(size, n);
    match size {
        4 => (sh, knob("segscan_minb4", 2)),
        8 if !computed && fits_64 => (sh, knob("segscan_minb8", 4)),
        _ => (sh, register_min_blocks()),
    }
}

/// Compaction (`compact`): `register_tile`'s rounds; 256 threads, or 512 (`big`) where the
/// flags are computed from the staged values alone (copy_if's `x < c`; not dedup's head flags,
/// which compare neighbours) and the sequence is large (src/backend/cuda/compact.rs), half as
/// many tiles to look back over. On an H100 (2026-11-26, run 206, three alternations, ms at
/// 2^28) copy_if_f32 took 0.658-0.671 with 512 against 0.681-0.685, unique_u32 0.651-0.663
/// against 0.648-0.657, and find_repeats_u32 (positions, flags of another column)
/// 0.883-0.897 against 0.826-0.834, so the others keep 256. On an H200 (2026-11-28, run 323,
/// three alternations, ms at 2^24 / 2^28, 512 against 256): copy_if_f32 0.0557-0.0559 /
/// 0.531-0.542 against 0.0524-0.0573 / 0.536-0.564, unique_u32 0.0566-0.0585 / 0.584-0.600
/// against 0.0536-0.0575 / 0.555-0.572: dedup's flags take 256 since. (`DEVSEQ_TUNE` knobs
/// `compact_block`, `compact_own_block`, `compact_rounds`.)
pub(crate) fn compact(size: usize, big: bool) -> Shape {
    let sh = register_tile(size);
    Shape {
        block: if big {
            knob("compact_own_block", 512)
        } else {
            knob("compact_block", sh.block)
        },
        rounds: knob("compact_rounds", sh.rounds),
    }
}

/// The runs of scatter_combine (a segmented scan of sorted (index, value) pairs reading both):
/// 12 elements a thread for 4-byte values, 8 for 8-byte ones, half of `register_tile`'s for
/// narrower ones. Measured on an H200
/// (2026-11-22, run 21), 8 rounds of 4-byte values had taken scatter_combine_add_f32 of 2^28
/// values to 8.42 ms against 8.73 with 4; since, the kernel's code grew and ptxas spilled 164
/// bytes a thread at 8 rounds (8 at 4, 68 at 6), and on an H100 (2026-11-26, run 195, three
/// alternations, one process each) 4 rounds took 8.54-8.58 ms at 2^28 against 9.23-9.25 with
/// 8 (6: 8.61-8.63), and 0.580-0.588 ms at 2^24 against 0.643-0.656. 4-byte values now take
/// 3 rounds (12 a thread), where ptxas spills none (8 bytes a thread at 4): 8.68-8.76 ms at
/// 2^28 against 8.61-8.65 at 4 (2026-11-26, run 202, two alternations), 0.58-0.59 at 2^24
/// either way.
pub(crate) fn combine(size: usize) -> Shape {
    let sh = register_tile(size);
    Shape {
        block: sh.block,
        rounds: knob(
            "combine_rounds",
            match size {
                4 => 3,
                8.. => 4,
                _ => (sh.rounds / 2).max(1),
            },
        ),
    }
}

/// Blocks a multiprocessor that the runs of scatter_combine are compiled for: 3 (80
/// registers) for 4-byte values, 2 (128) for the others, whose keys, values and slots did
/// not fit 80 registers at any tile (ptxas, sm_90, 2026-11-26: 8-byte values spilled 60-100
/// bytes a thread at 4 rounds and 36 at 2, 1-byte values 16-36 at 1 round; at 2 blocks
/// none). (`DEVSEQ_TUNE` knob `combine_minb`.)
pub(crate) fn combine_min_blocks(size: usize) -> u32 {
    knob("combine_minb", if size == 4 { 3 } else { 2 })
}

/// Blocks of a single-pass kernel that must fit a multiprocessor (`__launch_bounds__`,
/// capping registers). The staged scan: 3 (64 KB of shared memory each; 2 was slower, run
/// 42: 0.80 against 0.796 ms for i32 at 2^28 on an H100), but 2 (128 registers) where its
/// items of up to 4 bytes are `computed` in registers before they are staged (a lazy source
/// not staged as its one column). At 80 registers ptxas spilled 4-100 bytes a thread in 41 of
/// the compile check's 70 lazy scan instances (sm_90, 2026-11-28), most in that staging (its
/// 64-bit bounds of every round). On an H100 (run 289, five alternations, us at 2^24 / 2^28)
/// the scan of the xor of two u32 columns took 82.7 / 1079 with 2 blocks against 92.9 / 1191
/// with 3; the scan of the positions as u64 took 68.9 / 914 with 2 against 67.6 / 847 with 3,
/// so 8-byte items keep 3 blocks. Since the staging tests its bounds in 32 bits (2026-11-28)
/// no 4-byte computed scan spills at 3 either, but 2 stays faster: on an H200 (run 304, four
/// alternations, us at 2^28) the xor scan took 810-816 with 2 against 866-882 with 3, the
/// positions 686-705 with 3 against 827-836 with 2. The tile keeps its shape either way, so
/// such a scan gives the bits of its stored copy's scan. The kernels with tiles in registers:
/// 3 (85 registers for 256 threads); measured with 8 rounds (H200, 2026-11-21): 3 beat 2; with
/// 4 rounds 4 and 5 blocks were tried, 5 was slower. Exclusive scans of computed 8-byte floats
/// take 2 as well: at 3 ptxas spilled 20-36 bytes a thread in those of a constant and of random
/// uniform and normal f64 (sm_90, 2026-11-28), none at 2, and the exclusive maximum of 2^28
/// random normal f64 took 3.50-3.55 ms either way (H200, run 325, two alternations). Inclusive
/// ones keep 3 (none spills): the sum of 2^28 random uniform f64 took 1.23-1.24 ms at 3 against
/// 1.47-1.50 at 2, and the segmented sum 3.51-3.52 against 3.94-3.96 (with 16 bytes a thread
/// spilled at 3: spills cheaper than a third fewer warps).
pub(crate) fn scan_min_blocks(computed: bool, ty: ScalarType, exclusive: bool) -> u32 {
    knob(
        "scan_minb",
        if computed && (ty.size() <= 4 || (ty.is_float() && exclusive)) {
            2
        } else {
            3
        },
    )
}
pub(crate) fn register_min_blocks() -> u32 {
    knob("seg_minb", 3)
}

/// Blocks a multiprocessor that the segmented reduction is compiled for: 3 (80 registers)
/// for values of up to 4 bytes counted in 32 bits, else 2 (128 registers). Since its whole
/// tiles test no bounds and its flags are bit masks, ptxas spills none of the first at 3 but
/// reduce_by_key's (16 bytes a thread there), where the 8-byte values and 64-bit counts spill
/// 100 to 400 bytes; at 2 the first spilled up to 200. reduce_by_key_f32 at 2^28 on an H100
/// (2026-11-24, run 98): 1.286 ms at 3 against 1.447 at 2 (CUB 1.276). (`DEVSEQ_TUNE` knob
/// `segreduce_minb`.)
pub(crate) fn segreduce_min_blocks(size: usize, wide: bool) -> u32 {
    knob("segreduce_minb", if size <= 4 && !wide { 3 } else { 2 })
}

/// Blocks a multiprocessor that the compaction kernel is compiled for: 4 (64 registers). Its
/// values wait in shared memory through the look-back and its flags are one mask a thread;
/// at 4 the 4-byte instances spilled 12 to 32 bytes a thread (ptxas) while each thread held
/// all its items to move them (since it moves them half a tile at a time, copy_if's and
/// dedup's spill none, and ran 1-3% faster: 2026-11-26, run 202), and still ran faster than
/// at 3 (80 registers, no spills): at 2^28 on an H100 (2026-11-24, run 99) copy_if_f32
/// 0.699 ms against 0.728, unique_u32 0.692 against 0.729, find_repeats_u32 0.911 against
/// 1.025; 4 rounds with 4 or 6 blocks were slower (0.89 to 1.02 ms for copy_if). When the
/// tile's values, flags and counts were all in registers it needed 2. Blocks of 512 threads
/// (`compact`) take 2, the same 64 registers. (`DEVSEQ_TUNE` knob `compact_minb`, for blocks of
/// 256.)
pub(crate) fn compact_min_blocks(block: u32) -> u32 {
    if block > 256 {
        (1024 / block).max(1)
    } else {
        knob("compact_minb", 4)
    }
}

/// Whether compaction computes lazy flags that read only the values' own column from the
/// values it staged (see `ds_compact`), reading the column once: on. (`DEVSEQ_TUNE` knob
/// `compact_own`, 0 for off: the flags then load the column again, through L1.)
pub(crate) fn compact_own() -> bool {
    knob("compact_own", 1) != 0
}

/// Targets larger than this many bytes (by default the L2 cache's) may have their scatter
/// partitioned (src/cuda/gather.rs). Measured on an H200 (50 MB of L2; 2026-11-22, run 27):
/// a random permutation of 2^24 floats (64 MB) 0.48 ms against 0.84 written directly, 2^28
/// 7.25 ms against 17.5. (`DEVSEQ_TUNE` knob `scatter_partition_bytes`.)
pub(crate) fn scatter_partition_bytes(arch: &Arch) -> usize {
    knob(
        "scatter_partition_bytes",
        arch.l2_bytes.min(u32::MAX as usize) as u32,
    ) as usize
}

/// Windows of 32 neighbouring indices that a scatter samples to decide whether to partition,
/// and the span (in elements) past which a window's writes count as far apart. First choice.
pub(crate) const SPREAD_WINDOWS: u32 = 256;
pub(crate) const SPREAD_SPAN: u64 = 1024;

/// Threads a block of the kernels that take one element a thread in a grid-stride loop (head
/// flags, the sort's histogram, histogram, the spread sample). First choice.
pub(crate) const FLAT_BLOCK: u32 = 256;

/// Histogram: blocks for `tiles` tiles (a 16-byte access a thread each) in a grid-stride loop:
/// a block for every 4 tiles, but at least 64 blocks (or one a tile), at most a wave. Each block
/// merges its counters into the device's tally at the end, and a block a tile merged most of
/// the time away where there is little to count: on an H100 (2026-11-27, run 245, event ms,
/// two alternations; `DEVSEQ_TUNE` knob `histogram_tiles`, the tiles a block) histogram_256_u32
/// at 2^20 took 0.0253 / 0.0182 with a block a tile (1024 blocks), 0.0139 / 0.0146 with 4
/// tiles a block, 0.0224 / 0.0220 with 16; at 2^24 0.0562 / 0.0489, 0.0470 / 0.0476 and
/// 0.0477 / 0.0479 (a wave either way); at 2^16 0.0109 / 0.0108 with 64 blocks against 0.0114
/// / 0.0118 with 16 and 0.022 with 4 (a block's loop waits on each load in turn).
pub(crate) fn histogram_blocks(tiles: u64, wave: u64) -> u64 {
    let per_block = knob("histogram_tiles", 4) as u64;
    tiles
        .div_ceil(per_block)
        .max(tiles.min(64))
        .min(wave)
        .max(1)
}

/// Keys of the haystack a block of `ds_search` keeps in shared memory (the top 11 levels of
/// every binary search; 8 KB of u32, 16 KB of u64 ordered bits). First choice, not measured.
pub(crate) const SEARCH_SAMPLES: u32 = 2048;

/// Needles from which a search of a haystack larger than the L2 cache sorts them and merges
/// them with the haystack (the sort and the haystack's read cost about what a few hundred
/// thousand searches through memory do). First choice.
pub(crate) const SEARCH_SORTED_NEEDLES: usize = 1 << 18;

/// Threads a block of `ds_merge`.
pub(crate) fn merge_block() -> u32 {
    knob("merge_block", 256)
}

/// Outputs a thread of `ds_merge` for keys of `size` bytes: odd, so that the threads' stores
/// of their outputs to shared memory (stride `items`) meet no bank conflicts. 4-byte keys:
/// 27 (a tile of 6912). With keys loaded one at a time (H100, run 61), 19 took merge_u32 at
/// 2^28 1.07 ms, against 1.19 (15), 1.24 (11), 1.19 (23), 1.45 (7), and blocks of 128 or 512
/// threads were no better; with the stretches copied in 16-byte vectors (run 73), 27 took
/// 0.803 ms against 0.851 (15) and 0.820 (19), 0.078 against 0.076 (19) at 2^24. 8-byte keys:
/// 7 (a tile of 1792), first choice.
pub(crate) fn merge_items(size: usize) -> u32 {
    if size <= 4 {
        knob("merge_items", 27)
    } else {
        knob("merge_items8", 7)
    }
}

/// Threads a block, keys a thread and blocks a multiprocessor (`__launch_bounds__`) of the
/// radix sort's digit passes, by the widest of key and value and whether values travel. After
/// CUB's sm_90 tuning of its Onesweep (384 threads x 23 items for 4-byte keys,
/// cub/device/dispatch/tuning/tuning_radix_sort.cuh); measured on an H200: keys alone, 24 a
/// thread sorted 2^28 u32 keys in 5.61 ms against 5.87 with 16 and 6.71 with 12 (2026-11-21);
/// with u32 values, once the ranked keys no longer waited in registers (2026-11-22, run 20),
/// 24 took 8.05 ms against 8.65 with 16 and 9.80 with 12; on an H100 (run 77) 20 a thread
/// took 10.28 ms and 28 (one block a multiprocessor) 10.14 against 9.66 with 24. Eight-byte
/// keys or values, on an H100 (2^28; runs 77 and 78): u64 keys alone 15.64 and 16.08 ms with
/// 20 a thread and 2 blocks a multiprocessor, 15.84 with 24 (but 1.160 against 1.105 ms at
/// 2^24), 16.26 with 16, 17.28 with 24 and one block, 18.02 with the 12 (3 blocks) first
/// chosen; u64 keys with u32 values, one block a multiprocessor: 24.61 ms with 20 a thread
/// (1.678 at 2^24), 24.17 with 24 (1.716), 25.78 with 16, 28.67 with 12, and 32.49 with the 8
/// (two blocks) first chosen; 16 with two blocks 27.21. (`DEVSEQ_TUNE` knobs
/// `sort_block`, `sort_items`, `sort_minb`, `sort_items_pairs`, `sort_minb_pairs`, and for
/// 8-byte keys or values the same names ending in `8`.)
///
/// With values the tiles grew again on an H100 (2026-11-26, runs 192-194, each shape in its
/// own process, two or three alternations, ms at 2^28): u32 keys with u32 values 9.68-9.79
/// with 24 a thread, 9.54-9.59 with 26, 9.47-9.55 with 27, 9.43-9.46 with 28 (the most that
/// gives two blocks a multiprocessor their shared memory; 23 as CUB: 9.89-9.94), and
/// scatter_combine, which sorts such pairs, 9.22-9.28 against 9.03-9.19; u64 keys with u32
/// values 24.56-24.62 with 20, 24.37-24.43 with 24, 23.32-23.42 with 28, 22.93-22.95 with 32
/// (2^24: 1.683-1.734, 1.648-1.676 with 28, 1.640-1.654 with 32); 28 is the most for
/// which ptxas spills nothing with 12-byte items at one block of 384 (168 registers; 16 bytes
/// at 32), and 16-byte items (8-byte keys with 8-byte values) keep 20 (22: 48 bytes; knobs
/// `sort_items_pairs16`, `sort_minb_pairs16`).
///
/// 12-byte items then took two blocks a multiprocessor of 18 a thread, on an H200 (2026-11-28,
/// runs 318-319, each shape in its own process, four alternations, u64 keys with u32 values,
/// ms at 2^24 / 2^28): 1.392-1.407 / 19.99-20.04 against 1.478-1.487 / 21.25-21.31 with 28 and
/// one block (CUB: 1.417 / 20.12 in runs 313-314); 17 a thread 1.407-1.408 / 20.27-20.29, 16
/// 1.416-1.419 / 20.41-20.46, 12 1.425 / 22.00-22.03; 512 threads of 13, two blocks,
/// 1.404-1.409 / 20.15-20.21; 256 threads of 24, two blocks, 1.363-1.372 / 20.92-20.96. Two
/// blocks hide one's loads behind the other's ranking; 18 is the most for which two tiles'
/// shared memory fits a multiprocessor (2 x 108 KB of 228) and ptxas spills nothing at their 80
/// registers (once signed keys' sign flip moved into the digits: `sort_bits` in sort.cu).
/// Not measured on an H100 (its 2^28 ratio was 1.10 with 28 and one block, run 282-283). Keys
/// alone gained nothing from larger tiles (u32: 26 or 28 a thread 5.10-5.20 against 5.09-5.13;
/// u64: 24 15.80-15.87 against 15.61-15.71), nor did streaming loads of the buffers
/// (`ld.global.cs`: 10.07-10.11 with values) or storing all keys before all values.
/// `sort::pass_key` takes fewer keys a thread where a GPU's block has less shared memory than
/// the tile needs.
///
/// Keys alone: 23 a thread, as CUB (odd: the threads' strides through shared memory meet no
/// bank conflicts), on an H100 (runs 87-88, each in its own process, two alternations):
/// sort_u32 5.05-5.06 ms at 2^28 and 0.381-0.388 at 2^24 against 5.12-5.13 and 0.403-0.405
/// with 24 (20: 5.21; 2 blocks a multiprocessor: 5.42-5.44).
///
/// Those large tiles leave most multiprocessors idle below a few million keys, where each
/// pass is one short wave: there 12 keys a thread. On an H100 (run 83, two
/// alternations, ms at 2^16 / 2^20): sort_u32 0.049-0.051 / 0.071 against 0.063 / 0.077
/// with 24 (16: 0.052-0.058 / 0.072-0.075); sort_pairs_u32 0.053-0.055 / 0.083 against
/// 0.066-0.071 / 0.087-0.091; sort_u64 0.086-0.088 / 0.134-0.139 against 0.098-0.102 /
/// 0.152-0.154 with 20 (8 a thread: 0.086 / 0.151-0.156); sort_pairs_u64_u32 0.095-0.100 /
/// 0.164-0.169 against 0.118-0.120 / 0.205-0.209 (8: 0.089-0.091 / 0.185-0.190). At 2^24
/// the large tiles win (sort_u32 0.386-0.389 against 0.443 with 12).
/// (`DEVSEQ_TUNE` knob `sort_items_small`.)
pub(crate) fn sort(key: usize, value: Option<usize>) -> (u32, u32, u32) {
    let widest = key.max(value.unwrap_or(0));
    let (items, minb) = match (widest <= 4, value) {
        (true, None) => (knob("sort_items", 23), knob("sort_minb", 3)),
        (true, Some(_)) => (knob("sort_items_pairs", 28), knob("sort_minb_pairs", 2)),
        (false, None) => (knob("sort_items8", 20), knob("sort_minb8", 2)),
        (false, Some(v)) if key + v < 16 => {
            (knob("sort_items_pairs8", 18), knob("sort_minb_pairs8", 2))
        }
        (false, Some(_)) => (knob("sort_items_pairs16", 20), knob("sort_minb_pairs16", 1)),
    };
    (knob("sort_block", 384), items, minb)
}

/// The digit passes' shape for `n` keys on `arch`: `sort`'s, or where its tiles would not
/// give every multiprocessor two, 12 keys a thread (2 blocks a multiprocessor with 8-byte keys
/// or values, as `sort` has for them at most; 4-byte keys keep theirs; 16-byte pairs keep 1:
/// at 2 ptxas spilled 184 bytes a thread of i64 keys with lazy u64 positions).
pub(crate) fn sort_for(key: usize, value: Option<usize>, n: usize, arch: &Arch) -> (u32, u32, u32) {
    let (block, items, minb) = sort(key, value);
    let widest = key.max(value.unwrap_or(0));
    let tiles = (n as u64).div_ceil(u64::from(block * items));
    if tiles >= 2 * u64::from(arch.sms) {
        return (block, items, minb);
    }
    let small = knob("sort_items_small", 12).min(items);
    let minb = match (widest, key + value.unwrap_or(0)) {
        (..=4, _) => minb,
        (_, 16..) => minb.min(2),
        _ => 2,
    };
    (block, small, minb)
}

/// Blocks a multiprocessor in the grid of the sort's digit counts (`ds_sort_hist`, a wave of
/// blocks striding over the keys): at most 6. Its instances without a bounds check take 32
/// registers for 4-byte keys (8 blocks fit) where those with the check took 34-36 (6 fit); on
/// an H200 (2026-11-28, run 309, four alternations, ms at 2^28) the 8 blocks made sort_u32
/// slower (4.925-4.946 against 4.893-4.915 before) and 6 did not (4.900-4.904), sort_f32
/// 5.435-5.456 either way against 5.502-5.513 before. (`DEVSEQ_TUNE` knob `sort_hist_blocks`.)
pub(crate) fn sort_hist_blocks() -> u32 {
    knob("sort_hist_blocks", 6)
}

/// Whether keys that fit one tile of the sort's passes are sorted by one block in one launch
/// (`ds_sort_tile`) rather than by the histogram and a pass a digit, each of that one tile:
/// yes. (`DEVSEQ_TUNE` knob `sort_one_block`, 0 for the passes.)
pub(crate) fn sort_one_block() -> bool {
    knob("sort_one_block", 1) != 0
}

/// Whether single-pass kernels (scans, sort passes, compaction) take tile numbers from an
/// atomic counter (progress guaranteed by construction: a tile waits only for tiles whose
/// blocks have started) or use their block index, as CUB's single-pass kernels do (relying on
/// the hardware starting blocks in index order; no atomic round trip before a block's first
/// load). The block index, measured on an H200 (2026-11-22, run 26, two alternations):
/// inclusive_scan_add_i32 0.652 ms at 2^28 against 0.664, 0.051 against 0.055 at 2^24;
/// sort_u32 0.368 against 0.392 at 2^24; sort_f32 0.401 against 0.431; scatter_combine
/// 0.519 against 0.550. (`DEVSEQ_TUNE=tile_counter=1` brings the counter back.)
pub(crate) fn tile_counter() -> bool {
    knob("tile_counter", 0) != 0
}

/// Bytes of a look-back status slot (`ds::Slot`).
pub(crate) const SLOT_BYTES: usize = 32;

/// Gather and scatter: 256 threads, 2 rounds of indices (8 random accesses in flight a
/// thread for 4-byte indices). First choice; reached 0.97-0.99 of Thrust on an H200.
pub(crate) fn gather() -> Shape {
    Shape {
        block: 256,
        rounds: knob("gather_rounds", 2),
    }
}

/// Targets of at most this many bytes (1 MiB) are scattered in one launch together with the
/// copy of their base (`ds_scatter_base`, a cooperative launch with a grid barrier) rather than
/// a copy, then the scatter. Measured on an H100 (2026-11-27, run 217, scatter_f32 of a random
/// permutation, two alternations, ms): at 2^16 0.0147 and 0.0129 against 0.0162 and 0.0169;
/// at 2^20 (4 MiB) 0.0305 and 0.0283 against 0.0268 and 0.0298, at 2^22 0.0925 and 0.0898
/// against 0.0898 and 0.0905: a launch saved where the call is mostly launches, nothing where
/// the copy's bytes count. (`DEVSEQ_TUNE` knob `scatter_base_bytes`; 0: never.)
pub(crate) fn scatter_base_bytes() -> usize {
    knob("scatter_base_bytes", 1 << 20) as usize
}

/// Whether gather and scatter launch a block a tile (as map does) rather than one wave of
/// blocks striding over the tiles. A block a tile, measured on an H200 (2026-11-22, run 26,
/// two alternations): gather_f32 7.51 ms at 2^28 against 7.59 with the wave, 0.299 against
/// 0.300 at 2^24; and the partitioned scatter needs it: its blocks then write neighbouring
/// slices of the target at any time (2^28: 7.23 ms; with the wave 17.6, no better than
/// writing directly). (`DEVSEQ_TUNE` knob `gather_tiles`.)
pub(crate) fn gather_tiles() -> bool {
    knob("gather_tiles", 1) != 0
}
