//! Groups of several processes: joining one (from a launcher's environment, or by hand), and
//! the collectives the sharded algorithms are written with.
//!
//! Each process holds the shards of its own devices; the global sequence is every process's
//! shards in rank order. The sharded algorithms run their per-shard work on the local shards,
//! and meet the other processes in three collectives, which are the identity (or the local
//! mesh's exchange) in a group of one process:
//!
//! - `gather_shards`: a few words of every shard (a total, samples, counts), in global shard
//!   order, on every rank; every rank then makes the same decisions from the same data;
//! - `gather_ranks`: the same a process (summed counts);
//! - `exchange`: the all-to-all of stored columns between shards: between the devices of this
//!   process through the local mesh (NCCL, views or host copies), to and from other processes
//!   through the wire (`wire.rs`), the columns downloaded, sent, and uploaded on the receiving
//!   device.
//!
//! A rank whose local part of a collective fails breaks its wire, so that the others fail at
//! once rather than at the timeout.

use super::DeviceGroup;
use super::wire::{Cursor, Wire};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::item::ScalarType;
use crate::source::{Column, Source};
use std::time::Duration;

/// The processes of a group, seen from one of them.
pub(crate) struct World {
    wire: Wire,
    /// The shards (devices) of each rank, in rank order.
    counts: Vec<usize>,
}

impl World {
    pub fn rank(&self) -> usize {
        self.wire.rank()
    }

    pub fn ranks(&self) -> usize {
        self.wire.ranks()
    }

    /// The global index of this rank's first shard.
    pub fn first(&self) -> usize {
        self.counts[..self.rank()].iter().sum()
    }

    /// The number of shards over all ranks.
    pub fn shards(&self) -> usize {
        self.counts.iter().sum()
    }
}

/// A process's place in a group, as a launcher describes it.
#[derive(Debug, PartialEq)]
pub(crate) struct Launch {
    pub rank: usize,
    pub ranks: usize,
    /// The process's place on its host (which GPU it takes); `None` where the launcher says
    /// nothing of it.
    pub local_rank: Option<usize>,
    /// `MASTER_ADDR:MASTER_PORT`; `None` where neither is set.
    pub rendezvous: Option<String>,
}

/// The launcher's description in the variables `var` reads: torchrun's, then Open MPI's, then
/// Slurm's; `None` where none is set.
///
/// # Errors
///
/// `Error::InvalidArgument` for a variable that is not a number, a rank outside the group, or
/// only one of `MASTER_ADDR` and `MASTER_PORT`.
pub(crate) fn launch(var: impl Fn(&str) -> Option<String>) -> Result<Option<Launch>> {
    let number = |name: &str| -> Result<Option<usize>> {
        match var(name) {
            None => Ok(None),
            Some(v) => v.trim().parse::<usize>().map(Some).map_err(|_| {
                Error::InvalidArgument(format!("{name}={v:?} is not a non-negative integer"))
            }),
        }
    };
    const LAUNCHERS: [[&str; 3]; 3] = [
        ["RANK", "WORLD_SIZE", "LOCAL_RANK"],
        [
            "OMPI_COMM_WORLD_RANK",
            "OMPI_COMM_WORLD_SIZE",
            "OMPI_COMM_WORLD_LOCAL_RANK",
        ],
        ["SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"],
    ];
    for [rank, size, local] in LAUNCHERS {
        let (r, n) = (number(rank)?, number(size)?);
        let (r, n) = match (r, n) {
            (None, None) => continue,
            (Some(r), Some(n)) => (r, n),
            _ => {
                return Err(Error::InvalidArgument(format!(
                    "{rank} and {size} must be set together"
                )));
            }
        };
        if n == 0 || r >= n {
            return Err(Error::InvalidArgument(format!(
                "{rank}={r} is not a rank of {size}={n}"
            )));
        }
        let rendezvous = match (var("MASTER_ADDR"), var("MASTER_PORT")) {
            (Some(a), Some(p)) => Some(format!("{}:{}", a.trim(), p.trim())),
            (None, None) => None,
            _ => {
                return Err(Error::InvalidArgument(
                    "MASTER_ADDR and MASTER_PORT must be set together".into(),
                ));
            }
        };
        return Ok(Some(Launch {
            rank: r,
            ranks: n,
            local_rank: number(local)?,
            rendezvous,
        }));
    }
    Ok(None)
}

/// `DEVSEQ_GROUP_TIMEOUT` (seconds, default 300) as `var` reads it.
pub(crate) fn timeout(var: impl Fn(&str) -> Option<String>) -> Result<Duration> {
    match var("DEVSEQ_GROUP_TIMEOUT") {
        None => Ok(Duration::from_secs(300)),
        Some(v) => match v.trim().parse::<f64>() {
            Ok(s) if s > 0.0 && s.is_finite() && s < 1e9 => Ok(Duration::from_secs_f64(s)),
            _ => Err(Error::InvalidArgument(format!(
                "DEVSEQ_GROUP_TIMEOUT={v:?} is not a positive number of seconds"
            ))),
        },
    }
}

/// The device a launched process takes: the host where `DEVSEQ_DEVICE` says `cpu`, the GPU it
/// names where it names one (`cuda:N`), else GPU `LOCAL_RANK`.
pub(crate) fn launched_device(
    launch: &Launch,
    var: impl Fn(&str) -> Option<String>,
) -> Result<Device> {
    let asked = var("DEVSEQ_DEVICE").map(|v| v.trim().to_ascii_lowercase());
    match asked.as_deref() {
        Some("cpu" | "host") => Ok(Device::host()),
        Some(v) if v.starts_with("cuda:") => Device::auto(),
        _ => match launch.local_rank {
            Some(l) => Device::cuda(l),
            None if launch.ranks == 1 => Device::cuda(0),
            None => Err(Error::InvalidArgument(
                "the launcher set no local rank (LOCAL_RANK, OMPI_COMM_WORLD_LOCAL_RANK or \
                 SLURM_LOCALID), so which GPU this process takes is unknown"
                    .into(),
            )),
        },
    }
}

fn put_u64(out: &mut Vec<u8>, x: u64) {
    out.extend_from_slice(&x.to_le_bytes());
}

/// Words as bytes, with their count first.
fn put_words(out: &mut Vec<u8>, words: &[u64]) {
    put_u64(out, words.len() as u64);
    for w in words {
        put_u64(out, *w);
    }
}

fn get_words(c: &mut Cursor<'_>) -> Result<Vec<u64>> {
    let n = c.usize()?;
    (0..n).map(|_| c.u64()).collect()
}

/// What a process says when it joins: the kinds of its devices (0 the host, 1 a GPU).
fn hello(devices: &[Device]) -> Vec<u8> {
    let mut out = Vec::new();
    put_words(
        &mut out,
        &devices
            .iter()
            .map(|d| u64::from(d.is_cuda()))
            .collect::<Vec<_>>(),
    );
    out
}

/// Joins `rank` of `ranks` with `devices`: the world, or `None` for a group of one rank.
pub(crate) fn join(
    rank: usize,
    ranks: usize,
    rendezvous: &str,
    devices: &[Device],
    timeout: Duration,
) -> Result<Option<World>> {
    if devices.is_empty() {
        return Err(Error::InvalidArgument(
            "a process of a group needs at least one device".into(),
        ));
    }
    if ranks == 1 && rank == 0 {
        return Ok(None);
    }
    let (wire, hellos) = Wire::join(rank, ranks, rendezvous, timeout, hello(devices))?;
    let counts = hellos
        .iter()
        .map(|h| {
            let mut c = Cursor::new(h);
            let kinds = get_words(&mut c)?;
            c.end()?;
            Ok(kinds.len())
        })
        .collect::<Result<Vec<_>>>()?;
    if counts.contains(&0) {
        return Err(Error::Group("a rank joined with no device".into()));
    }
    Ok(Some(World { wire, counts }))
}

impl DeviceGroup {
    fn world(&self) -> Option<&World> {
        self.inner.world.as_ref()
    }

    /// This process's pieces of an exchange: those for its own shards (`[s][local d]`), and
    /// one message for each process (the others' pieces, downloaded).
    fn route(&self, w: &World, parts: Pieces) -> Result<(Pieces, Vec<Vec<u8>>)> {
        let devs = self.devices();
        let (first, n, total) = (w.first(), devs.len(), w.shards());
        if parts.len() != n || parts.iter().any(|row| row.len() != total) {
            return Err(Error::Internal("an exchange of the wrong shape".into()));
        }
        let mut messages = vec![Vec::new(); w.ranks()];
        let mut owner = Vec::with_capacity(total);
        for (r, &c) in w.counts.iter().enumerate() {
            owner.extend(std::iter::repeat_n(r, c));
        }
        let mut local = Vec::with_capacity(n);
        for (s, row) in parts.into_iter().enumerate() {
            let mut mine = Vec::with_capacity(n);
            for (d, cols) in row.into_iter().enumerate() {
                if (first..first + n).contains(&d) {
                    mine.push(cols);
                } else {
                    put_columns(&mut messages[owner[d]], &devs[s], cols)?;
                }
            }
            local.push(mine);
        }
        Ok((local, messages))
    }

    /// The place of this process's first shard among the group's (0 in a group of one
    /// process): shard `k` of [`devices`](Self::devices) is shard `first_shard() + k` of every
    /// sequence over the group, which is what a process needs to make its own part of a
    /// sequence ([`ShardedSeq::from_local`](crate::ShardedSeq::from_local)).
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceGroup};
    /// let group = DeviceGroup::new(&[Device::host(), Device::host()])?;
    /// assert_eq!(group.first_shard(), 0);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn first_shard(&self) -> usize {
        self.world().map_or(0, World::first)
    }

    /// `local`, this process's result of a collective's local part, where it failed: the wire
    /// is broken first, so that the other ranks fail their collective at once.
    pub(crate) fn local_part<X>(&self, local: Result<X>) -> Result<X> {
        if let (Err(e), Some(w)) = (&local, self.world()) {
            w.wire.fail(e.clone());
        }
        local
    }

    /// Every shard's words, in global shard order, from each process's `local` ones (one
    /// vector a local shard). Collective.
    pub(crate) fn gather_shards(
        &self,
        what: &str,
        local: Result<Vec<Vec<u64>>>,
    ) -> Result<Vec<Vec<u64>>> {
        let local = self.local_part(local)?;
        let Some(w) = self.world() else {
            return Ok(local);
        };
        let mut mine = Vec::new();
        for v in &local {
            put_words(&mut mine, v);
        }
        let all = w.wire.all_gather(what, mine)?;
        let mut out = Vec::with_capacity(w.shards());
        for (bytes, &count) in all.iter().zip(&w.counts) {
            let mut c = Cursor::new(bytes);
            for _ in 0..count {
                out.push(get_words(&mut c)?);
            }
            c.end()?;
        }
        Ok(out)
    }

    /// Every shard's length, in global shard order, from this process's shards' `local`
    /// ones. Collective.
    pub(crate) fn gather_lens(&self, what: &str, local: Result<Vec<usize>>) -> Result<Vec<usize>> {
        let words = local.map(|l| l.into_iter().map(|n| vec![n as u64]).collect());
        Ok(self
            .gather_shards(what, words)?
            .iter()
            .map(|w| w.first().map_or(0, |&n| n as usize))
            .collect())
    }

    /// Every process's words, in rank order, from this one's `local`. Collective.
    pub(crate) fn gather_ranks(
        &self,
        what: &str,
        local: Result<Vec<u64>>,
    ) -> Result<Vec<Vec<u64>>> {
        let local = self.local_part(local)?;
        let Some(w) = self.world() else {
            return Ok(vec![local]);
        };
        let mut mine = Vec::new();
        put_words(&mut mine, &local);
        w.wire
            .all_gather(what, mine)?
            .iter()
            .map(|b| {
                let mut c = Cursor::new(b);
                let v = get_words(&mut c)?;
                c.end()?;
                Ok(v)
            })
            .collect()
    }

    /// The all-to-all exchange of stored columns: `parts[s][d]` (the columns, one a component,
    /// on local shard `s`'s device, for global shard `d`) become `out[d][s]` (on local shard
    /// `d`'s device, from global shard `s`). Collective.
    pub(crate) fn exchange(&self, what: &str, parts: Result<Pieces>) -> Result<Pieces> {
        let parts = self.local_part(parts)?;
        let Some(w) = self.world() else {
            return self.mesh().all_to_all(parts);
        };
        let devs = self.devices();
        let (n, total) = (devs.len(), w.shards());
        let (local, messages) = self.local_part(self.route(w, parts))?;
        let received = self.local_part(self.mesh().all_to_all(local))?;
        let incoming = w.wire.exchange(what, messages)?;
        let mut out: Pieces = (0..n).map(|_| Vec::with_capacity(total)).collect();
        let mut received: Vec<std::vec::IntoIter<Vec<Column>>> =
            received.into_iter().map(Vec::into_iter).collect();
        for (r, bytes) in incoming.iter().enumerate() {
            if r == w.rank() {
                for _ in 0..n {
                    for (d, from_here) in received.iter_mut().enumerate() {
                        let cols = from_here
                            .next()
                            .ok_or_else(|| Error::Internal("a short local exchange".into()))?;
                        out[d].push(cols);
                    }
                }
                continue;
            }
            let mut c = Cursor::new(bytes);
            for _ in 0..w.counts[r] {
                for (d, dev) in devs.iter().enumerate() {
                    out[d].push(get_columns(&mut c, dev)?);
                }
            }
            c.end()?;
        }
        Ok(out)
    }
}

/// Pieces of an exchange: `parts[s][d]`, the columns (one a component) from shard `s` to `d`.
pub(crate) type Pieces = Vec<Vec<Vec<Column>>>;

/// `cols` (on `dev`) downloaded into `out`: their count, then each one's type, length and bytes.
fn put_columns(out: &mut Vec<u8>, dev: &Device, cols: Vec<Column>) -> Result<()> {
    put_u64(out, cols.len() as u64);
    for col in cols {
        let ty = ScalarType::ALL
            .iter()
            .position(|&t| t == col.ty)
            .ok_or_else(|| Error::Internal("a column of no type".into()))?;
        let bytes = col.len * col.ty.size();
        put_u64(out, ty as u64);
        put_u64(out, col.len as u64);
        put_u64(out, bytes as u64);
        let at = out.len();
        out.resize(at + bytes, 0);
        dev.backend()
            .download(&Source::column(col), &mut out[at..])?;
    }
    Ok(())
}

/// Columns `put_columns` wrote, uploaded to `dev`.
fn get_columns(c: &mut Cursor<'_>, dev: &Device) -> Result<Vec<Column>> {
    let count = c.usize()?;
    (0..count)
        .map(|_| {
            let ty = *ScalarType::ALL
                .get(c.usize()?)
                .ok_or_else(|| Error::Group("a malformed message from another rank".into()))?;
            let len = c.usize()?;
            let bytes = c.bytes()?;
            if bytes.len() != len * ty.size() {
                return Err(Error::Group("a malformed message from another rank".into()));
            }
            dev.backend().upload(ty, bytes, len)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn vars(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let m: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| m.get(k).cloned()
    }

    #[test]
    fn launchers_are_read_in_order_of_precedence() {
        assert_eq!(launch(vars(&[])).unwrap(), None);
        let torch = launch(vars(&[
            ("RANK", "2"),
            ("WORLD_SIZE", "4"),
            ("LOCAL_RANK", "0"),
            ("MASTER_ADDR", "node7"),
            ("MASTER_PORT", "29500"),
            ("OMPI_COMM_WORLD_RANK", "1"),
            ("OMPI_COMM_WORLD_SIZE", "2"),
        ]))
        .unwrap();
        assert_eq!(
            torch,
            Some(Launch {
                rank: 2,
                ranks: 4,
                local_rank: Some(0),
                rendezvous: Some("node7:29500".into()),
            })
        );
        let mpi = launch(vars(&[
            ("OMPI_COMM_WORLD_RANK", "1"),
            ("OMPI_COMM_WORLD_SIZE", "2"),
            ("OMPI_COMM_WORLD_LOCAL_RANK", "1"),
            ("SLURM_PROCID", "5"),
            ("SLURM_NTASKS", "8"),
        ]))
        .unwrap()
        .unwrap();
        assert_eq!((mpi.rank, mpi.ranks, mpi.local_rank), (1, 2, Some(1)));
        assert_eq!(mpi.rendezvous, None);
        let slurm = launch(vars(&[
            ("SLURM_PROCID", "5"),
            ("SLURM_NTASKS", "8"),
            ("SLURM_LOCALID", "1"),
            ("MASTER_ADDR", "10.0.0.1"),
            ("MASTER_PORT", "1234"),
        ]))
        .unwrap()
        .unwrap();
        assert_eq!((slurm.rank, slurm.ranks, slurm.local_rank), (5, 8, Some(1)));
        assert_eq!(slurm.rendezvous.as_deref(), Some("10.0.0.1:1234"));
    }

    #[test]
    fn bad_launcher_variables_are_errors() {
        let bad: [&[(&str, &str)]; 6] = [
            &[("RANK", "one"), ("WORLD_SIZE", "2")],
            &[("RANK", "2"), ("WORLD_SIZE", "2")],
            &[("RANK", "0"), ("WORLD_SIZE", "0")],
            &[("RANK", "0")],
            &[("SLURM_PROCID", "0"), ("SLURM_NTASKS", "-3")],
            &[("RANK", "0"), ("WORLD_SIZE", "2"), ("MASTER_ADDR", "x")],
        ];
        for b in bad {
            assert!(
                matches!(launch(vars(b)), Err(Error::InvalidArgument(_))),
                "{b:?}"
            );
        }
        for t in ["0", "-1", "soon", "inf"] {
            assert!(
                timeout(vars(&[("DEVSEQ_GROUP_TIMEOUT", t)])).is_err(),
                "{t}"
            );
        }
        assert_eq!(timeout(vars(&[])).unwrap(), Duration::from_secs(300));
        assert_eq!(
            timeout(vars(&[("DEVSEQ_GROUP_TIMEOUT", "2.5")])).unwrap(),
            Duration::from_millis(2500)
        );
        let two = Launch {
            rank: 1,
            ranks: 2,
            local_rank: None,
            rendezvous: None,
        };
        assert!(matches!(
            launched_device(&two, vars(&[])),
            Err(Error::InvalidArgument(_))
        ));
        assert!(
            !launched_device(&two, vars(&[("DEVSEQ_DEVICE", "cpu")]))
                .unwrap()
                .is_cuda()
        );
    }
}
