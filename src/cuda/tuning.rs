//! Launch shapes per kernel family, by element size. Each entry says where its numbers came
//! from; "first choice" entries are reasoned, not yet measured, and are revisited with the
//! benchmark (docs/performance.md).

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

/// Threads a block and rounds a tile (a round is one 16-byte access a thread).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Shape {
    pub block: u32,
    pub rounds: u32,
}

/// Elements a thread takes in one 16-byte access (`size` the widest element involved).
pub(crate) fn vec(size: usize) -> u32 {
    (16 / size.clamp(1, 16)) as u32
}

/// Map, fill, sequence: 256 threads, 2 rounds, grid-stride over a single wave, the next
/// tile's loads issued before the current tile is stored (software pipelining). Measured on
/// an H200 (2026-11-21, docs/performance.md): 2 and 4 rounds without pipelining both reached
/// 0.92 of Thrust's transform at 2^28 (3.84 TB/s, 72% of cycles waiting on loads).
/// A sweep of 128-512 threads, 1-4 rounds and 2-6 bulk stages (run 16) put every shape within
/// 0.546-0.571 ms at 2^28, so the shape is kept. (`DEVSEQ_TUNE` knobs `map_block`, `map_rounds`.)
pub(crate) fn map() -> Shape {
    Shape {
        block: knob("map_block", 256),
        rounds: knob("map_rounds", 2),
    }
}

/// One-input maps of at least this many input bytes stream their input through shared memory
/// with the bulk copy engine on Hopper (sm_90), `MAP_BULK_STAGES` tiles ahead, as CUB's
/// transform does there ("ublkcp", cub/device/dispatch/tuning/tuning_transform.cuh). First
/// choice; the plain kernel reached 3.84 TB/s on an H200, Thrust's 4.08.
pub(crate) const MAP_BULK_MIN_BYTES: usize = 1 << 20;
pub(crate) fn map_bulk_stages() -> u32 {
    knob("map_stages", 3)
}

/// Reduce: 256 threads, 4 rounds (64 bytes in flight a thread), one wave of blocks. First
/// choice, as CUB's reduce tuning for 4-byte types (256 threads, 16 items).
pub(crate) const REDUCE: Shape = Shape {
    block: 256,
    rounds: 4,
};

/// Single-pass scans (scan, segmented scan and reduce, compaction): 256 threads (8 warps)
/// and rounds such that a thread holds 32 elements (16 for 8-byte types); rounds x warps must
/// not exceed 64 (warp 0 scans the chunk totals, two a lane). Measured on an H200
/// (2026-11-21, docs/performance.md): for 4-byte types 8 rounds with 3 blocks a
/// multiprocessor took an inclusive scan of 2^28 from 0.80 ms (4 rounds, 4 blocks) to 0.67 ms,
/// fewer tiles to look back over; 2 rounds were slower still.
pub(crate) fn scan(size: usize) -> Shape {
    let rounds = match size {
        1 => 2,
        2 => 4,
        _ => 8,
    };
    Shape {
        block: 256,
        rounds: knob("scan_rounds", rounds),
    }
}

/// The single-pass kernels over (value, flag) pairs (segmented scans and reduce, the runs of
/// scatter_combine): as `scan`, overridable apart.
pub(crate) fn seg(size: usize) -> Shape {
    let sh = scan(size);
    Shape {
        block: sh.block,
        rounds: knob("seg_rounds", sh.rounds),
    }
}

/// The runs of scatter_combine (a segmented scan of sorted (index, value) pairs reading both):
/// 4 rounds, since 8 spill registers there (ptxas, sm_90: 304 bytes of stack for f32 values).
pub(crate) fn combine(size: usize) -> Shape {
    let sh = scan(size);
    Shape {
        block: sh.block,
        rounds: knob("combine_rounds", (sh.rounds / 2).max(1)),
    }
}

/// Blocks of a single-pass scan kernel that must fit a multiprocessor (`__launch_bounds__`,
/// capping registers; tiles in flight hide the look-back): 3 (85 registers for 256 threads),
/// also for the kernels that scan (value, flag) pairs. Measured with 8 rounds (H200,
/// 2026-11-21): 3 beat 2; with 4 rounds 4 and 5 blocks were tried, 5 was slower.
pub(crate) fn scan_min_blocks() -> u32 {
    knob("scan_minb", 3)
}
pub(crate) fn seg_min_blocks() -> u32 {
    knob("seg_minb", 3)
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
