//! Several devices as one (the backend of `DeviceGroup` and `ShardedSeq`): how the shards of
//! a group exchange data, and how per-shard work runs at the same time, one thread a shard.
//!
//! A group is one of two kinds, fixed when it is made:
//!
//! - `Shared`: every shard lives in one memory (host devices, which are all one device, or
//!   clones of one GPU's `Device`, which share its stream). An exchange hands the receiver
//!   views of the sender's columns; the bytes move when the receiver's next step (a merge, a
//!   sum) reads them and writes its own result, which is the one copy an exchange costs.
//! - `Nccl`: the shards live on distinct GPUs, and NCCL moves them (`cuda/nccl.rs`): sends and
//!   receives queued on devseq's streams, device memory to device memory.
//!
//! The sharded algorithms (`src/sharded/`) are written once against this: the same code runs
//! on host groups (which is how it is tested without a GPU) and on GPU groups.

use super::cuda::nccl::{self, Comms};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::source::Column;

/// How a group's shards reach each other.
pub(crate) enum Mesh {
    /// All shards in one memory: exchanges hand over views.
    Shared,
    /// Distinct GPUs, one NCCL communicator each.
    Nccl(Comms),
}

impl Mesh {
    /// The mesh of a group of `devices` (at least one).
    ///
    /// # Errors
    ///
    /// `Error::InvalidArgument` for a group that mixes the host and GPUs, or that holds one GPU
    /// twice through two `Device`s (two streams: devseq cannot order their work without
    /// NCCL, and NCCL takes a GPU once); `Error::NoCuda` where distinct GPUs need NCCL and it
    /// does not load; `Error::Cuda` from NCCL.
    pub fn new(devices: &[Device]) -> Result<Mesh> {
        let Some(first) = devices.first() else {
            return Err(Error::InvalidArgument(
                "a device group needs at least one device".into(),
            ));
        };
        if devices.iter().all(|d| d.same(first)) {
            return Ok(Mesh::Shared);
        }
        let gpus: Vec<_> = devices
            .iter()
            .map(|d| d.backend().cuda())
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| {
                Error::InvalidArgument(
                    "a device group mixes the host and GPUs: its devices are all GPUs or all \
                     the host"
                        .into(),
                )
            })?;
        for (i, g) in gpus.iter().enumerate() {
            if let Some(j) = gpus[..i].iter().position(|h| h.ordinal() == g.ordinal()) {
                return Err(Error::InvalidArgument(format!(
                    "devices {j} and {i} of the group are GPU {} through two different Devices \
                     (streams): a group holds distinct GPUs, or clones of one Device",
                    g.ordinal()
                )));
            }
        }
        Ok(Mesh::Nccl(Comms::new(&gpus)?))
    }

    /// The NCCL version the group's communicators use (`None` where it needs none).
    pub fn nccl_version(&self) -> Option<String> {
        match self {
            Mesh::Shared => None,
            Mesh::Nccl(_) => nccl::version().ok(),
        }
    }

    /// The all-to-all exchange: `parts[s][d]` (columns on shard `s`'s device, one a component)
    /// become `out[d][s]` on shard `d`'s device. The columns must be stored.
    pub fn all_to_all(&self, parts: Vec<Vec<Vec<Column>>>) -> Result<Vec<Vec<Vec<Column>>>> {
        match self {
            Mesh::Shared => {
                let n = parts.len();
                let mut out: Vec<Vec<Vec<Column>>> =
                    (0..n).map(|_| Vec::with_capacity(n)).collect();
                for row in parts {
                    if row.len() != n {
                        return Err(Error::Internal("an exchange of the wrong shape".into()));
                    }
                    for (d, cols) in row.into_iter().enumerate() {
                        out[d].push(cols);
                    }
                }
                Ok(out)
            }
            Mesh::Nccl(c) => c.all_to_all(&parts),
        }
    }

    /// The NCCL communicators, for the collectives that have no shared-memory form here.
    pub fn comms(&self) -> Option<&Comms> {
        match self {
            Mesh::Shared => None,
            Mesh::Nccl(c) => Some(c),
        }
    }
}

/// `f(0), …, f(n - 1)`, each on a thread of its own (`f(0)` on this one), so that the shards'
/// work runs at the same time; the results in order, or the error of the lowest shard that
/// failed. Where a thread cannot be started, its shard runs on this thread after `f(0)`.
pub(crate) fn per_shard<R: Send>(
    n: usize,
    f: impl Fn(usize) -> Result<R> + Sync,
) -> Result<Vec<R>> {
    if n <= 1 {
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
