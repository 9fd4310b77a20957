//! What the single-pass kernels (scans, segments, compaction, sort passes) share per stream:
//! the tile counter, the look-back status words, tagged with a launch number (epoch) so that
//! they need no clearing between launches, and the partial results of one-wave reductions.

use super::driver::DriverResult;
use super::mem::{Ptr, Raw};
use super::tuning;
use crate::error::{Error, Result};
use cudarc::driver::CudaStream;
use std::sync::{Arc, Mutex};

/// Bytes of the per-block partial results: 8 bytes for each of up to 8192 blocks.
pub(crate) const PARTIAL_BYTES: usize = 8 * 8192;

/// Bytes of the stream's tally: 64-bit counts, zero between launches (`ds_histogram`'s
/// shared-memory bins, at most 8192).
pub(crate) const TALLY_BYTES: usize = 8 * 8192;

/// Index of the counters (each a 32-bit word).
pub(crate) mod counter {
    /// The tile counter of single-pass kernels (only grows; see `StreamState`).
    pub const TILES: usize = 0;
    /// The "blocks done" counter of kernels whose last block finishes the work (reset to 0
    /// by that block).
    pub const DONE: usize = 1;
    /// The blocks that reached a grid barrier (`ds::grid_barrier`; zero between barriers).
    pub const BARRIER: usize = 2;
    /// The grid barriers passed (only grows).
    pub const BARRIER_GEN: usize = 3;
    /// Words in the counter block.
    pub const WORDS: usize = 64;
}

/// Which status words a single-pass launch looks back over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    /// `ds::Slot`s of the scans, tagged with 30-bit epochs.
    Scan,
    /// 64-bit words of the sort passes, tagged with 22-bit epochs (`ds_sort_pass`).
    Sort,
}

/// What a single-pass launch gets from `StreamState::reserve`.
pub(crate) struct PassSlots {
    pub counter: Ptr,
    pub base: u32,
    pub epoch: u32,
    pub status: Ptr,
}

/// The look-back status words of one kind (the scans' or the sort passes'), grown as launches
/// need them, and the epoch that tells one launch's words from the ones before.
struct StatusWords {
    status: Option<Raw>,
    epoch: u32,
}

struct Inner {
    /// Value the tile counter will have when the next launch starts (the counter only grows,
    /// so a launch's tiles are `counter - base`).
    counter_base: u32,
    scan: StatusWords,
    /// The sort passes' status words (one 64-bit word a tile and digit), apart from the scans'
    /// so that no scan slot is ever read as one of them.
    sort: StatusWords,
}

/// Per-stream state of the single-pass kernels.
pub(crate) struct StreamState {
    stream: Arc<CudaStream>,
    counters: Raw,
    /// The cuts of a merge of one tile, [0, 2^62]: `merge_load` clamps a tile's end in `a` to
    /// what its inputs hold, so this pair stands for "all of `a`" at any length.
    whole_cut: Raw,
    partials: Raw,
    tally: Raw,
    inner: Mutex<Inner>,
}

impl StreamState {
    pub fn new(stream: &Arc<CudaStream>) -> Result<StreamState> {
        let words = || StatusWords {
            status: None,
            epoch: 0,
        };
        Ok(StreamState {
            stream: stream.clone(),
            counters: Raw::zeroed(stream, counter::WORDS * 4)?,
            whole_cut: Raw::Device(
                stream
                    .clone_htod(&[[0u8; 8], (1u64 << 62).to_le_bytes()].concat())
                    .cuda("cuMemcpyHtoDAsync")?,
            ),
            partials: Raw::zeroed(stream, PARTIAL_BYTES)?,
            tally: Raw::zeroed(stream, TALLY_BYTES)?,
            inner: Mutex::new(Inner {
                counter_base: 0,
                scan: words(),
                sort: words(),
            }),
        })
    }

    /// The stream's buffer of PARTIAL_BYTES for per-block partial results.
    pub fn partials(&self) -> Ptr {
        self.partials.ptr(&self.stream)
    }

    /// The stream's tally of TALLY_BYTES: counts that kernels add into and whose last block
    /// zeroes again.
    pub fn tally(&self) -> Ptr {
        self.tally.ptr(&self.stream)
    }

    /// The cuts of a merge of one tile (`StreamState::whole_cut`).
    pub fn whole_cut(&self) -> Ptr {
        self.whole_cut.ptr(&self.stream)
    }

    /// The address of counter word `i`.
    pub fn counter(&self, i: usize) -> Ptr {
        self.counters.ptr(&self.stream).add(4 * i)
    }

    /// Reserves what a single-pass launch of `tiles` tiles needs: its slice of the tile counter,
    /// an epoch, and at least `status_bytes` of status words of the given kind. `launch` runs
    /// while the reservation is held, so launches take their tiles in the order they reserved
    /// them.
    pub fn reserve(
        &self,
        kind: Status,
        tiles: u64,
        status_bytes: usize,
        launch: impl FnOnce(&PassSlots) -> Result<()>,
    ) -> Result<()> {
        let mut guard = self
            .inner
            .lock()
            .map_err(|_| Error::Internal("stream state lock poisoned".into()))?;
        let st = &mut *guard;
        let (w, limit) = match kind {
            // Scan epochs are 30 bits (kernels keep flag bits beside them).
            Status::Scan => (&mut st.scan, (1u32 << 30) - 1),
            // Sort words keep 40 bits of count and 2 of flags beside a 22-bit epoch.
            Status::Sort => (&mut st.sort, (1u32 << 22) - 1),
        };
        let need = status_bytes.max(256);
        if w.status.as_ref().is_none_or(|s| s.bytes() < need) {
            // Grow by doubling; the old words are freed in stream order, after the launches
            // that used them.
            let bytes = need
                .max(w.status.as_ref().map_or(0, |s| s.bytes() * 2))
                .next_multiple_of(1 << 16);
            w.status = Some(Raw::zeroed(&self.stream, bytes)?);
            w.epoch = 0;
        }
        let status = match &w.status {
            Some(s) => s,
            None => return Err(Error::Internal("no status words".into())),
        };
        // Past the last epoch, clear the words and restart.
        if w.epoch >= limit {
            w.status = Some(Raw::zeroed(&self.stream, status.bytes())?);
            w.epoch = 0;
        }
        w.epoch += 1;
        let slots = PassSlots {
            // Without the counter (null), kernels number their tiles by block index.
            counter: if tuning::tile_counter() {
                self.counter(counter::TILES)
            } else {
                Ptr(0)
            },
            base: st.counter_base,
            epoch: w.epoch,
            status: w.status.as_ref().map_or(Ptr(0), |s| s.ptr(&self.stream)),
        };
        launch(&slots)?;
        st.counter_base = st.counter_base.wrapping_add(tiles as u32);
        Ok(())
    }
}
