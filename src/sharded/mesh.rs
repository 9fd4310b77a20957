//! Several devices as one (the backend of `DeviceGroup` and `ShardedSeq`): how the shards of
//! a group exchange data, and how per-shard work runs at the same time, one thread a shard.
//!
//! A group is one of three kinds, fixed when it is made:
//!
//! - `Shared`: every shard lives in one memory (host devices, which are all one device, or
//!   clones of one GPU's `Device`, which share its stream). An exchange hands the receiver
//!   views of the sender's columns; the bytes move when the receiver's next step (a merge, a
//!   sum) reads them and writes its own result, which is the one copy an exchange costs.
//! - `Nccl`: the shards live on distinct GPUs, and NCCL moves them (`cuda/nccl.rs`): sends and
//!   receives queued on devseq's streams, device memory to device memory.
//! - `Copied`: any other mix (the host and GPUs; one GPU through two `Device`s, whose two
//!   streams NCCL cannot tell apart). A piece for another device is copied through host
//!   memory: the sender's device finishes the work that makes it (the download waits for it),
//!   and the receiver's device queues the upload before the work that reads it. Pieces
//!   between clones of one `Device` are handed over as views, as in `Shared`.
//!
//! The sharded algorithms (`src/sharded/`) are written once against this: the same code runs
//! on host groups (which is how it is tested without a GPU) and on GPU groups.

use crate::backend::cuda::nccl::{self, Comms};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::source::{Column, Source};

/// How a group's shards reach each other.
pub(crate) enum Mesh {
    /// All shards in one memory: exchanges hand over views.
    Shared,
    /// Distinct GPUs, one NCCL communicator each.
    Nccl(Comms),
    /// Any other mix of `devices` (the group's, in shard order): exchanges copy through the
    /// host, but between shards of one device where `views` (always, but in tests of the
    /// copies) hand over views.
    Copied { devices: Vec<Device>, views: bool },
}

impl Mesh {
    /// The mesh of a group of `devices` (at least one): `Shared` for one device repeated,
    /// `Nccl` for distinct GPUs, `Copied` for every other mix.
    ///
    /// # Errors
    ///
    /// `Error::InvalidArgument` for no devices; `Error::NoCuda` where distinct GPUs need NCCL
    /// and it does not load; `Error::Cuda` from NCCL.
    pub fn new(devices: &[Device]) -> Result<Mesh> {
        let first = first(devices)?;
        if devices.iter().all(|d| d.same(first)) {
            return Ok(Mesh::Shared);
        }
        let gpus = devices
            .iter()
            .map(|d| d.backend().cuda())
            .collect::<Option<Vec<_>>>();
        match gpus {
            Some(gpus)
                if gpus
                    .iter()
                    .enumerate()
                    .all(|(i, g)| gpus[..i].iter().all(|h| h.ordinal() != g.ordinal())) =>
            {
                Ok(Mesh::Nccl(Comms::new(&gpus)?))
            }
            _ => Ok(Mesh::Copied {
                devices: devices.to_vec(),
                views: true,
            }),
        }
    }

    /// A `Copied` mesh of `devices` whatever they are, that copies every piece that changes
    /// shards (for tests of the copies on machines with one kind of device).
    pub fn copied(devices: &[Device]) -> Result<Mesh> {
        first(devices)?;
        Ok(Mesh::Copied {
            devices: devices.to_vec(),
            views: false,
        })
    }

    /// The NCCL version the group's communicators use (`None` where it needs none).
    pub fn nccl_version(&self) -> Option<String> {
        match self {
            Mesh::Shared | Mesh::Copied { .. } => None,
            Mesh::Nccl(_) => nccl::version().ok(),
        }
    }

    /// The all-to-all exchange: `parts[s][d]` (columns on shard `s`'s device, one a component)
    /// become `out[d][s]` on shard `d`'s device. The columns must be stored.
    pub fn all_to_all(&self, parts: Vec<Vec<Vec<Column>>>) -> Result<Vec<Vec<Vec<Column>>>> {
        if let Mesh::Nccl(c) = self {
            return c.all_to_all(&parts);
        }
        let n = parts.len();
        let mut out: Vec<Vec<Vec<Column>>> = (0..n).map(|_| Vec::with_capacity(n)).collect();
        for (s, row) in parts.into_iter().enumerate() {
            if row.len() != n {
                return Err(Error::Internal("an exchange of the wrong shape".into()));
            }
            for (d, cols) in row.into_iter().enumerate() {
                let cols = cols
                    .into_iter()
                    .map(|c| self.carry(c, s, d))
                    .collect::<Result<Vec<_>>>()?;
                out[d].push(cols);
            }
        }
        Ok(out)
    }

    /// `col`, stored on shard `from`'s device, readable on shard `to`'s: itself where both
    /// shards share one memory (`Shared`, or one device in a `Copied` group), else a copy
    /// through host memory (`Copied`). Not for `Nccl` groups, whose exchanges NCCL makes.
    pub fn carry(&self, col: Column, from: usize, to: usize) -> Result<Column> {
        match self {
            Mesh::Shared => Ok(col),
            Mesh::Copied { devices, views } => {
                let (Some(src), Some(dst)) = (devices.get(from), devices.get(to)) else {
                    return Err(Error::Internal("an exchange with no such shard".into()));
                };
                if from == to || (*views && src.same(dst)) {
                    return Ok(col);
                }
                let mut bytes = crate::item::touched(col.len * col.ty.size(), 0u8)?;
                let (ty, len) = (col.ty, col.len);
                src.backend().download(&Source::column(col), &mut bytes)?;
                dst.backend().upload(ty, &bytes, len)
            }
            Mesh::Nccl(_) => Err(Error::Internal(
                "a copy between the GPUs of an NCCL group".into(),
            )),
        }
    }

    /// The NCCL communicators, for the collectives that have no shared-memory form here.
    pub fn comms(&self) -> Option<&Comms> {
        match self {
            Mesh::Shared | Mesh::Copied { .. } => None,
            Mesh::Nccl(c) => Some(c),
        }
    }
}

/// The first of a group's `devices`, or `InvalidArgument` where there is none.
fn first(devices: &[Device]) -> Result<&Device> {
    devices
        .first()
        .ok_or_else(|| Error::InvalidArgument("a device group needs at least one device".into()))
}

impl Mesh {
    /// `f(0), …, f(n - 1)`, the shards' work: one after the other where every shard is in one
    /// memory (`Shared`: host devices, whose work is already parallel, or clones of one GPU's
    /// `Device`, which queue on one stream), else each on a thread of its own (`f(0)` on this
    /// one), so that the shards' devices work at the same time and collectives meet. The
    /// results in order, or the error of the lowest shard that failed. Where a thread cannot be
    /// started, its shard runs on this thread after `f(0)`.
    pub(crate) fn per_shard<R: Send>(
        &self,
        n: usize,
        f: impl Fn(usize) -> Result<R> + Sync,
    ) -> Result<Vec<R>> {
        if n <= 1 || matches!(self, Mesh::Shared) {
            return (0..n).map(&f).collect();
        }
        let f = &f;
        std::thread::scope(|s| {
            let spawned: Vec<_> = (1..n)
                .map(|k| {
                    std::thread::Builder::new()
                        .name(format!("devseq-shard-{k}"))
                        .spawn_scoped(s, move || f(k))
                        .ok()
                })
                .collect();
            let mut out = Vec::with_capacity(n);
            out.push(f(0));
            for (k, h) in (1..n).zip(spawned) {
                out.push(match h {
                    Some(h) => h.join().unwrap_or_else(|_| {
                        Err(Error::Internal(format!("shard {k}'s thread panicked")))
                    }),
                    None => f(k),
                });
            }
            out.into_iter().collect()
        })
    }
}
