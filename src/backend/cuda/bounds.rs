//! Bounds checks of indices: the offending index read back for `Error::IndexOutOfBounds`, and
//! checks that a kernel leaves in a mailbox, read by the first use of the call's result
//! (gather, scatter, scatter_combine) rather than by the call. In-place scatters into one
//! target, one after another, share one check (`ScatterChain`), so that a loop of them holds
//! three mailboxes and never waits for the GPU before the target is read.

use super::gpu::Gpu;
use super::mem::{Buffer, Mailbox, Pending, Report, column_ptr};
use crate::error::{Error, Result};
use crate::source::Source;
use std::sync::{Arc, Mutex, OnceLock, Weak};

/// The element at position `pos` of `src`, as u64 bits (waits for the stream).
fn element(gpu: &Gpu, src: &Source, pos: u64) -> Result<u64> {
    let size = src.ty().size();
    let mut b = [0u8; 8];
    match src.as_column() {
        Some(c) => gpu
            .mem
            .read_small(column_ptr(c)?.add(pos as usize * size), &mut b[..size])?,
        None => super::map::download(gpu, &src.slice(pos as usize, 1), &mut b[..size])?,
    }
    Ok(u64::from_le_bytes(b))
}

/// `IndexOutOfBounds` for the index at position `pos` of `idx`, read back, against a target
/// of `len` elements.
pub(crate) fn index_error(gpu: &Gpu, idx: &Source, pos: u64, len: usize) -> Result<Error> {
    Ok(Error::IndexOutOfBounds {
        index: element(gpu, idx, pos)?,
        len,
    })
}

/// The bounds check of a gather, scatter or scatter_combine, read when its result is first
/// used: a position noted in `m` becomes `IndexOutOfBounds` for the index there. The indices
/// are kept alive for that until the check is read (then let go, so that a result does not
/// hold its indices' memory for its whole life).
pub(crate) struct BoundsCheck {
    gpu: Weak<Gpu>,
    m: Mailbox,
    idx: Mutex<Option<Source>>,
    len: usize,
    verdict: OnceLock<Result<()>>,
}

impl BoundsCheck {
    /// The check of the kernel just queued with mailbox `m`, whose indices `idx` address a
    /// target of `len` elements.
    pub fn check(gpu: &Gpu, m: Mailbox, idx: &Source, len: usize) -> Arc<dyn Pending> {
        Arc::new(BoundsCheck {
            gpu: gpu.me.clone(),
            m,
            idx: Mutex::new(Some(idx.clone())),
            len,
            verdict: OnceLock::new(),
        })
    }

    /// `out`, valid once the check of the kernel just queued with mailbox `m` passes.
    pub fn guard(gpu: &Gpu, out: Buffer, m: Mailbox, idx: &Source, len: usize) -> Buffer {
        out.pending(Self::check(gpu, m, idx, len))
    }
}

/// The GPU of a check being read, which outlives its checks.
fn live(gpu: &Weak<Gpu>) -> Result<Arc<Gpu>> {
    gpu.upgrade()
        .ok_or_else(|| Error::Internal("a bounds check outlived its GPU".into()))
}

/// A verdict known already: the error of a call that wrote part of a buffer in place before it
/// failed, for every later use of the buffer.
pub(crate) struct Failed(pub Error);

impl Pending for Failed {
    fn resolve(&self) -> Result<()> {
        Err(self.0.clone())
    }
}

impl Pending for BoundsCheck {
    fn resolve(&self) -> Result<()> {
        self.verdict
            .get_or_init(|| {
                let gpu = live(&self.gpu)?;
                let idx = self
                    .idx
                    .lock()
                    .map_err(|_| Error::Internal("bounds check lock poisoned".into()))?
                    .take()
                    .ok_or_else(|| Error::Internal("a bounds check read twice".into()))?;
                match gpu.mem.take_error(self.m)? {
                    None => Ok(()),
                    Some(pos) => Err(index_error(&gpu, &idx, pos, self.len)?),
                }
            })
            .clone()
    }
}

impl Drop for BoundsCheck {
    fn drop(&mut self) {
        // Never read: a kernel may still write the mailbox.
        if self.verdict.get().is_none()
            && let Some(gpu) = self.gpu.upgrade()
        {
            let _ = gpu.mem.retire(self.m);
        }
    }
}

/// The low bits of a `ScatterChain`'s key that hold a position: writes of up to 2^40 elements
/// join a chain (larger ones take a `BoundsCheck` of their own).
pub(crate) const CHAIN_POSITION_BITS: u32 = 40;

/// The most writes one chain takes (the key's other 24 bits number them).
const CHAIN_CALLS: u64 = 1 << (64 - CHAIN_POSITION_BITS);

/// The bounds checks of in-place scatters into one target, one after another, in one set of
/// mailboxes: write `c` notes a bad index at position `i` under the key `c << 40 | i`, the
/// smallest key wins (the first write with a bad index, at its first bad position), and the
/// kernel notes the index found there beside it (`note_chain_index`, kernels/gather.cu), so
/// the writes' indices are not kept. The target's first use reads it, as a `BoundsCheck`.
pub(crate) struct ScatterChain {
    gpu: Weak<Gpu>,
    /// The key (and the slot, set on any error), the index, the lock.
    key: Mailbox,
    index: Mailbox,
    lock: Mailbox,
    /// The writes joined, and the target length of each: (first write, length) where it
    /// changes.
    writes: Mutex<(u64, Vec<(u64, usize)>)>,
    verdict: OnceLock<Result<()>>,
}

impl ScatterChain {
    /// A new chain, and the report of its first write, into a target of `len` elements.
    pub fn start(gpu: &Gpu, len: usize) -> Result<(Arc<dyn Pending>, Report)> {
        let (key, index, lock) = (gpu.mem.mailbox()?, gpu.mem.mailbox()?, gpu.mem.mailbox()?);
        let c = ScatterChain {
            gpu: gpu.me.clone(),
            key: key.keep()?,
            index: index.keep()?,
            lock: lock.keep()?,
            writes: Mutex::new((0, Vec::new())),
            verdict: OnceLock::new(),
        };
        let r = c
            .join(len)
            .ok_or_else(|| Error::Internal("a new scatter chain refused a write".into()))?;
        Ok((Arc::new(c), r))
    }
}

impl Pending for ScatterChain {
    fn resolve(&self) -> Result<()> {
        self.verdict
            .get_or_init(|| {
                let gpu = live(&self.gpu)?;
                // The stream has drained once the key is read; the lock is free again, the
                // index word set only where a key is.
                let key = gpu.mem.take_error(self.key)?;
                gpu.mem.give_back(self.lock)?;
                let Some(key) = key else {
                    gpu.mem.give_back(self.index)?;
                    return Ok(());
                };
                let index = gpu.mem.take_kept_word(self.index)?;
                let write = key >> CHAIN_POSITION_BITS;
                let writes = self
                    .writes
                    .lock()
                    .map_err(|_| Error::Internal("scatter chain lock poisoned".into()))?;
                let len = writes
                    .1
                    .iter()
                    .rev()
                    .find(|&&(first, _)| first <= write)
                    .map(|&(_, len)| len)
                    .ok_or_else(|| {
                        Error::Internal("a scatter chain's key names no write".into())
                    })?;
                Err(Error::IndexOutOfBounds { index, len })
            })
            .clone()
    }

    fn join(&self, len: usize) -> Option<Report> {
        if self.verdict.get().is_some() {
            return None;
        }
        let mut w = self.writes.lock().ok()?;
        let c = w.0;
        if c >= CHAIN_CALLS {
            return None;
        }
        if w.1.last().is_none_or(|&(_, l)| l != len) {
            w.1.push((c, len));
        }
        w.0 += 1;
        Some(Report {
            err: self.key.word,
            flag: self.key.slot,
            val: self.index.word,
            lock: self.lock.word,
            tag: c << CHAIN_POSITION_BITS,
        })
    }
}

impl Drop for ScatterChain {
    fn drop(&mut self) {
        // Never read: a kernel may still write the mailboxes (the index without a slot).
        if self.verdict.get().is_none()
            && let Some(gpu) = self.gpu.upgrade()
        {
            let _ = gpu.mem.retire(self.key);
            let _ = gpu.mem.retire_zeroed(self.index);
            let _ = gpu.mem.retire(self.lock);
        }
    }
}
