//! Bounds checks of indices: the offending index read back for `Error::IndexOutOfBounds`, and
//! checks that a kernel leaves in a mailbox, read by the first use of the call's result
//! (gather, scatter, scatter_combine) rather than by the call.

use super::gpu::Gpu;
use super::mem::{Buffer, Mailbox, Pending, column_ptr};
use crate::error::{Error, Result};
use crate::source::Source;
use std::sync::{Arc, Mutex, OnceLock, Weak};

/// The element at position `pos` of `src`, as u64 bits (waits for the stream).
fn element(gpu: &Gpu, src: &Source, pos: u64) -> Result<u64> {
    let size = src.ty().size();
    let mut b = [0u8; 8];
    match src.as_column() {
        Some(c) => gpu.read_small(column_ptr(c)?.add(pos as usize * size), &mut b[..size])?,
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
                let gpu = self
                    .gpu
                    .upgrade()
                    .ok_or_else(|| Error::Internal("a bounds check outlived its GPU".into()))?;
                let idx = self
                    .idx
                    .lock()
                    .map_err(|_| Error::Internal("bounds check lock poisoned".into()))?
                    .take()
                    .ok_or_else(|| Error::Internal("a bounds check read twice".into()))?;
                match gpu.take_error(self.m)? {
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
            let _ = gpu.retire(self.m);
        }
    }
}
