//! Sequences sharded over several devices: `DeviceGroup` (the devices, and how they exchange
//! data: `mesh.rs`) and `ShardedSeq<T>` (one `DeviceSeq` a device, in order). This
//! file has the types, making and reading, and the lazy maps; `reduce.rs` the reduction, scans
//! and histogram; `sort.rs` the sample sort.
//!
//! Every operation is written once over the shards' own `DeviceSeq` operations and the mesh's
//! exchange, with per-shard work on one thread a shard, so host groups (tested here) and GPU
//! groups run the same code.

mod gather;
mod mesh;
mod reduce;
mod sort;
mod wire;
mod world;

use crate::device::Device;
use crate::error::{Error, Result};
use crate::item::{Exprs, Item};
use crate::seq::DeviceSeq;
use mesh::Mesh;
use std::sync::Arc;

/// Devices that hold the shards of a [`ShardedSeq`], in order, and the way their shards
/// exchange data.
///
/// A group is one of:
///
/// - distinct GPUs ([`cuda_all`](Self::cuda_all), or [`new`](Self::new) with one `Device` a
///   GPU): shards exchange data through NCCL (`libnccl.so.2`, loaded at run time), device to
///   device, on devseq's streams;
/// - one device repeated: [`Device::host()`] any number of times (every host device is the
///   same device), or clones of one GPU's `Device`. Shards then share one memory and an
///   exchange hands over views; the same sharded algorithms run, so a host group is how they
///   are tested without a GPU, and clones of one GPU are how they are tested on a machine with
///   one;
/// - any other mix: the host beside GPUs, or one GPU through two `Device`s (two streams, which
///   NCCL cannot take as two ranks). An exchange between two of its devices copies through
///   host memory (the sender's device finishes the work that makes the piece, the receiver's
///   queues the upload), between clones of one `Device` it hands over views. The results are
///   those of the other kinds; the exchanges cost a download and an upload each.
///
/// A group of one GPU needs no NCCL. `DeviceGroup` is `Clone` (O(1): clones share the
/// communicators) and `Send + Sync`.
///
/// # Examples
///
/// ```
/// use devseq::{Device, DeviceGroup};
/// let group = DeviceGroup::new(&[Device::host(), Device::host()])?;
/// assert_eq!(group.len(), 2);
/// assert!(group.devices().iter().all(|d| !d.is_cuda()));
/// assert_eq!(group.nccl_version(), None); // host devices need no NCCL
/// # Ok::<(), devseq::Error>(())
/// ```
#[derive(Clone)]
pub struct DeviceGroup {
    inner: Arc<Group>,
}

struct Group {
    /// This process's devices.
    devices: Vec<Device>,
    /// How this process's devices exchange data.
    mesh: Mesh,
    /// The other processes of a group of several.
    world: Option<world::World>,
}

impl std::fmt::Debug for DeviceGroup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<String> = self.devices().iter().map(|d| d.name()).collect();
        write!(f, "DeviceGroup[{}]", names.join(", "))
    }
}

impl DeviceGroup {
    /// Every GPU of this host, in the driver's order, with one NCCL communicator each (none
    /// where there is one GPU).
    ///
    /// # Errors
    ///
    /// `Error::NoCuda` where there is no usable GPU, or where there are several and NCCL
    /// (`libnccl.so.2`) does not load; `Error::Cuda` where NCCL cannot connect them.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::DeviceGroup;
    /// match DeviceGroup::cuda_all() {
    ///     Ok(group) => assert!(group.devices().iter().all(|d| d.is_cuda())),
    ///     Err(e) => println!("no GPU group here: {e}"),
    /// }
    /// ```
    pub fn cuda_all() -> Result<DeviceGroup> {
        let first = Device::cuda(0)?;
        let count = match first.backend().cuda() {
            Some(c) => c.device_count()?,
            None => 1,
        };
        let mut devices = vec![first];
        for ordinal in 1..count {
            devices.push(Device::cuda(ordinal)?);
        }
        DeviceGroup::new(&devices)
    }

    /// A group of `devices`, in order: any devices (distinct GPUs exchange through NCCL, one
    /// device repeated hands over views, other mixes copy through host memory; see
    /// [`DeviceGroup`]).
    ///
    /// Cost: for several GPUs, NCCL's communicator setup (`ncclCommInitAll`; tenths of a
    /// second): make a group once and keep it.
    ///
    /// # Errors
    ///
    /// `Error::InvalidArgument` for no devices; `Error::NoCuda` where distinct GPUs need NCCL
    /// and `libnccl.so.2` does not load; `Error::Cuda` from NCCL.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceGroup, Error};
    /// let three = DeviceGroup::new(&[Device::host(), Device::host(), Device::host()])?;
    /// assert_eq!(three.len(), 3);
    /// assert!(matches!(DeviceGroup::new(&[]), Err(Error::InvalidArgument(_))));
    /// // The host beside a GPU: exchanges copy through host memory.
    /// if let Ok(gpu) = Device::cuda(0) {
    ///     let mixed = DeviceGroup::new(&[gpu, Device::host()])?;
    ///     let xs = devseq::ShardedSeq::from_slice(&mixed, &[5u32, 1, 4, 2, 3])?;
    ///     assert_eq!(xs.sort()?.to_vec()?, [1, 2, 3, 4, 5]);
    /// }
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn new(devices: &[Device]) -> Result<DeviceGroup> {
        Self::of(devices, Mesh::new(devices)?)
    }

    /// A group of `devices` whose exchanges copy through host memory whatever the devices
    /// are (for tests of the copies on a machine with one kind of device); otherwise as
    /// [`new`](Self::new).
    #[doc(hidden)]
    pub fn with_copies(devices: &[Device]) -> Result<DeviceGroup> {
        Self::of(devices, Mesh::copied(devices)?)
    }

    fn of(devices: &[Device], mesh: Mesh) -> Result<DeviceGroup> {
        Ok(DeviceGroup {
            inner: Arc::new(Group {
                devices: devices.to_vec(),
                mesh,
                world: None,
            }),
        })
    }

    /// Joins the group that the process's launcher describes, with one device: torchrun's
    /// variables (`RANK`, `WORLD_SIZE`, `LOCAL_RANK`), else Open MPI's
    /// (`OMPI_COMM_WORLD_RANK`, `_SIZE`, `_LOCAL_RANK`), else Slurm's (`SLURM_PROCID`,
    /// `SLURM_NTASKS`, `SLURM_LOCALID`); the rendezvous is `MASTER_ADDR:MASTER_PORT` (which
    /// torchrun sets, and which an `mpirun` or `srun` line sets as well). The process takes
    /// GPU `LOCAL_RANK`, or the host where `DEVSEQ_DEVICE=cpu` (or the GPU `DEVSEQ_DEVICE=cuda:N`
    /// names). Where no launcher variable is set, the group of one process on
    /// [`Device::auto`]: the same program runs with and without a launcher.
    ///
    /// Collective: every rank must call it; see [`join`](Self::join) for the rest.
    ///
    /// # Errors
    ///
    /// `Error::InvalidArgument` for a launcher variable that is not a number or names a rank
    /// outside the group, a group of several ranks without `MASTER_ADDR`/`MASTER_PORT`, a GPU
    /// process without a local rank, or a bad `DEVSEQ_GROUP_TIMEOUT`; as
    /// [`join`](Self::join).
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::DeviceGroup;
    /// // Run without a launcher: a group of this one process.
    /// # if std::env::var_os("RANK").is_none() && std::env::var_os("OMPI_COMM_WORLD_RANK").is_none()
    /// #     && std::env::var_os("SLURM_PROCID").is_none() {
    /// let group = DeviceGroup::from_env()?;
    /// assert_eq!((group.rank(), group.ranks(), group.len()), (0, 1, 1));
    /// # }
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn from_env() -> Result<DeviceGroup> {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        let timeout = world::timeout(var)?;
        let Some(launch) = world::launch(var)? else {
            return DeviceGroup::new(&[Device::auto()?]);
        };
        let device = world::launched_device(&launch, var)?;
        let rendezvous = match (&launch.rendezvous, launch.ranks) {
            (Some(r), _) => r.clone(),
            (None, 1) => String::from("localhost:0"),
            (None, _) => {
                return Err(Error::InvalidArgument(
                    "a group of several processes needs MASTER_ADDR and MASTER_PORT".into(),
                ));
            }
        };
        Self::joined(launch.rank, launch.ranks, &rendezvous, &[device], timeout)
    }

    /// Joins a group of `ranks` processes as `rank`, with one device, meeting the others at
    /// the rendezvous `host:port` (where rank 0 listens: it must be an address of rank 0's
    /// host that the others reach). The group's shards are every process's devices in rank
    /// order; [`devices`](Self::devices) are this process's, [`len`](Self::len) all of them.
    ///
    /// Collective: every rank must call it. A rank that does not arrive within
    /// `DEVSEQ_GROUP_TIMEOUT` seconds (default 300) makes the others `Err(Group(..))`; so does,
    /// in every later collective (each sharded operation), a rank that failed or exited: no
    /// collective waits for ever. The processes exchange over TCP; the GPUs of several
    /// processes exchange their data through the host (downloaded, sent, uploaded), and the
    /// GPUs of one process as in [`new`](Self::new).
    ///
    /// # Errors
    ///
    /// `Error::InvalidArgument` for `rank >= ranks`, a rendezvous that is not `host:port`, or a
    /// bad `DEVSEQ_GROUP_TIMEOUT`; `Error::Group` where a rank does not arrive in time, two
    /// ranks claim one place, or rank 0 cannot listen on the port.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceGroup, ShardedSeq};
    /// // Two processes (here: two threads, each as one process would be) meet on a port.
    /// let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    /// let rendezvous = format!("127.0.0.1:{port}");
    /// let sums = std::thread::scope(|s| {
    ///     let ranks: Vec<_> = (0..2)
    ///         .map(|rank| {
    ///             let rendezvous = &rendezvous;
    ///             s.spawn(move || -> devseq::Result<u64> {
    ///                 let group = DeviceGroup::join(rank, 2, rendezvous, &Device::host())?;
    ///                 assert_eq!((group.rank(), group.ranks(), group.len()), (rank, 2, 2));
    ///                 let data: Vec<u64> = (1..=100).collect();
    ///                 let xs = ShardedSeq::from_slice(&group, &data)?; // each keeps its half
    ///                 assert_eq!(xs.local_shards()[0].len(), 50);
    ///                 xs.reduce(devseq::Op::Add)
    ///             })
    ///         })
    ///         .collect();
    ///     ranks.into_iter().map(|r| r.join().unwrap()).collect::<Vec<_>>()
    /// });
    /// assert!(sums.into_iter().all(|s| s == Ok(5050)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn join(
        rank: usize,
        ranks: usize,
        rendezvous: &str,
        device: &Device,
    ) -> Result<DeviceGroup> {
        Self::join_devices(rank, ranks, rendezvous, std::slice::from_ref(device))
    }

    /// As [`join`](Self::join), with several devices in this process (several GPUs, or
    /// several shards on the host): a group of processes that each hold several shards.
    ///
    /// # Errors
    ///
    /// As [`join`](Self::join) and [`new`](Self::new); `Error::InvalidArgument` for no devices.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceGroup};
    /// let host = Device::host();
    /// // A group of one process with two shards: no rendezvous is contacted.
    /// let group = DeviceGroup::join_devices(0, 1, "localhost:1", &[host.clone(), host])?;
    /// assert_eq!((group.ranks(), group.len(), group.devices().len()), (1, 2, 2));
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn join_devices(
        rank: usize,
        ranks: usize,
        rendezvous: &str,
        devices: &[Device],
    ) -> Result<DeviceGroup> {
        let timeout = world::timeout(|k| std::env::var(k).ok().filter(|v| !v.trim().is_empty()))?;
        Self::joined(rank, ranks, rendezvous, devices, timeout)
    }

    fn joined(
        rank: usize,
        ranks: usize,
        rendezvous: &str,
        devices: &[Device],
        timeout: std::time::Duration,
    ) -> Result<DeviceGroup> {
        if rank >= ranks {
            return Err(Error::InvalidArgument(format!(
                "rank {rank} of a group of {ranks} ranks"
            )));
        }
        let mesh = Mesh::new(devices)?;
        let world = world::join(rank, ranks, rendezvous, devices, timeout)?;
        Ok(DeviceGroup {
            inner: Arc::new(Group {
                devices: devices.to_vec(),
                mesh,
                world,
            }),
        })
    }

    /// This process's place in the group: 0 to `ranks() - 1` (0 in a group of one process).
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceGroup};
    /// let group = DeviceGroup::new(&[Device::host(), Device::host()])?;
    /// assert_eq!((group.rank(), group.ranks()), (0, 1));
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn rank(&self) -> usize {
        self.inner.world.as_ref().map_or(0, world::World::rank)
    }

    /// The number of processes in the group (1 for a group of one process).
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceGroup};
    /// assert_eq!(DeviceGroup::new(&[Device::host()])?.ranks(), 1);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn ranks(&self) -> usize {
        self.inner.world.as_ref().map_or(1, world::World::ranks)
    }

    /// This process's devices, in shard order (in a group of one process, every device of
    /// the group).
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceGroup};
    /// let host = Device::host();
    /// let group = DeviceGroup::new(&[host.clone(), host.clone(), host.clone()])?;
    /// assert_eq!(group.devices().len(), 3);
    /// assert!(group.devices().iter().all(|d| d.same(&host)));
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn devices(&self) -> &[Device] {
        &self.inner.devices
    }

    /// The number of devices of every process (shards of every sequence over the group).
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceGroup};
    /// let group = DeviceGroup::new(&[Device::host(), Device::host()])?;
    /// assert_eq!(group.len(), 2);
    /// assert_eq!(group.len(), group.devices().len());
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.inner
            .world
            .as_ref()
            .map_or(self.inner.devices.len(), world::World::shards)
    }

    /// Always `false`: a group has at least one device.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceGroup};
    /// let group = DeviceGroup::new(&[Device::host()])?;
    /// assert!(!group.is_empty());
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.inner.devices.is_empty()
    }

    /// The version of NCCL (e.g. `"2.21.5"`) that the group's GPUs exchange data through;
    /// `None` where the group uses no NCCL (one device, one device repeated, or a mix whose
    /// exchanges copy through host memory).
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceGroup};
    /// let dev = Device::auto()?;
    /// // One device repeated exchanges views: no NCCL, on the host or on a GPU.
    /// let group = DeviceGroup::new(&[dev.clone(), dev.clone()])?;
    /// assert_eq!(group.nccl_version(), None);
    /// if let Ok(all) = DeviceGroup::cuda_all() {
    ///     if let Some(v) = all.nccl_version() {
    ///         assert!(all.len() > 1 && !v.is_empty());
    ///     }
    /// }
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn nccl_version(&self) -> Option<String> {
        self.inner.mesh.nccl_version()
    }

    pub(crate) fn mesh(&self) -> &Mesh {
        &self.inner.mesh
    }
}

/// A sequence of `T` split into contiguous shards, shard `k` a [`DeviceSeq`] on device `k` of
/// a [`DeviceGroup`]: element `i` of the whole is element `i - offset(k)` of the shard that
/// holds it, `offset(k)` being the lengths of the shards before `k`.
///
/// Operations have the single-sequence semantics over the whole sequence; each shard's work
/// runs on its own device, at the same time as the others' (one thread a shard), and the
/// exchanges between shards go through the group (NCCL in a group of distinct GPUs, host
/// memory in a mixed one; see [`DeviceGroup`]). Like `DeviceSeq`,
/// `Clone` is O(1), inputs are never changed, and a failed call leaves them as they were.
///
/// Determinism: the same input on the same group gives bitwise the same result on every run.
/// Integer results are those of one device bit for bit. Float reductions and scans combine
/// per-shard results in shard order, so they depend on the shard lengths (fixed by the group
/// size for [`from_slice`](Self::from_slice)) and may differ in rounding from one device's.
///
/// # Examples
///
/// ```
/// use devseq::{Device, DeviceGroup, Op, ShardedSeq};
/// let group = DeviceGroup::new(&[Device::host(), Device::host()])?;
/// let data: Vec<i64> = (0..1000).map(|i| (i * 7919) % 1000 - 500).collect();
/// let xs = ShardedSeq::from_slice(&group, &data)?;
/// assert_eq!(xs.reduce(Op::Add)?, data.iter().sum::<i64>());
/// let mut want = data.clone();
/// want.sort();
/// assert_eq!(xs.sort()?.to_vec()?, want);
/// # Ok::<(), devseq::Error>(())
/// ```
pub struct ShardedSeq<T: Item> {
    group: DeviceGroup,
    /// This process's shards.
    shards: Vec<DeviceSeq<T>>,
    /// The length of every shard of the group, this process's and the others'.
    lens: Vec<usize>,
}

impl<T: Item> Clone for ShardedSeq<T> {
    fn clone(&self) -> Self {
        ShardedSeq {
            group: self.group.clone(),
            shards: self.shards.clone(),
            lens: self.lens.clone(),
        }
    }
}

impl<T: Item> std::fmt::Debug for ShardedSeq<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ShardedSeq(len {}, shards {:?})", self.len(), self.lens)
    }
}

/// The stored columns of a sequence (one a component), as an exchange sends them.
fn columns<T: Item>(s: &DeviceSeq<T>) -> Result<Vec<crate::source::Column>> {
    s.sources()
        .iter()
        .map(|c| {
            c.as_column()
                .cloned()
                .ok_or_else(|| Error::Internal("an exchange of a lazy sequence".into()))
        })
        .collect()
}

/// One sequence of the stored pieces `parts` (columns on `dev`, one a component), in order;
/// `None` where there are no pieces. Lazy: the pieces are concatenated where it is read.
fn joined<T: Item>(
    dev: &Device,
    parts: impl IntoIterator<Item = Vec<crate::source::Column>>,
) -> Result<Option<DeviceSeq<T>>> {
    let mut all: Option<DeviceSeq<T>> = None;
    for cols in parts {
        let piece = DeviceSeq::<T>::stored_columns(dev, cols);
        all = Some(match all {
            None => piece,
            Some(a) => a.concat(&piece)?,
        });
    }
    Ok(all)
}

/// The even split of `n` elements into `k` contiguous ranges: the first `n % k` one longer.
fn even(n: usize, k: usize) -> Vec<std::ops::Range<usize>> {
    let (base, extra) = (n / k, n % k);
    let mut start = 0;
    (0..k)
        .map(|i| {
            let len = base + usize::from(i < extra);
            start += len;
            start - len..start
        })
        .collect()
}

impl<T: Item> ShardedSeq<T> {
    /// A sharded sequence of this process's `shards` (already checked against `group`), the
    /// group's shards of `lens`.
    pub(crate) fn of(group: &DeviceGroup, shards: Vec<DeviceSeq<T>>, lens: Vec<usize>) -> Self {
        debug_assert_eq!(lens.len(), group.len());
        debug_assert!(
            shards
                .iter()
                .enumerate()
                .all(|(k, s)| s.len() == lens[group.first_shard() + k])
        );
        ShardedSeq {
            group: group.clone(),
            shards,
            lens,
        }
    }

    /// The global position of the first element of every shard of the group, in order.
    pub(crate) fn starts(&self) -> Vec<u64> {
        let mut at = 0u64;
        self.lens
            .iter()
            .map(|&l| {
                at += l as u64;
                at - l as u64
            })
            .collect()
    }

    /// Copies host data to the group: contiguous shards as even as possible (the first
    /// `len % group.len()` one element longer), each copied to its device at the same time
    /// as the others. In a group of several processes every rank gives the whole `data` (as
    /// every rank of a program reads the same input) and keeps its own shards: no exchange.
    ///
    /// Cost: one transfer of the data, spread over the devices.
    ///
    /// # Errors
    ///
    /// `Error::OutOfMemory` where a device has no room; `Error::Cuda`. Nothing is kept of a
    /// failed call.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceGroup, ShardedSeq};
    /// let group = DeviceGroup::new(&[Device::host(), Device::host(), Device::host()])?;
    /// let data: Vec<u32> = (0..10).collect();
    /// let xs = ShardedSeq::from_slice(&group, &data)?;
    /// let lens: Vec<usize> = xs.shards().iter().map(|s| s.len()).collect();
    /// assert_eq!(lens, [4, 3, 3]);
    /// assert_eq!(xs.shards()[1].to_vec()?, data[4..7]);
    /// assert_eq!(xs.to_vec()?, data);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn from_slice(group: &DeviceGroup, data: &[T]) -> Result<Self> {
        let ranges = even(data.len(), group.len());
        let devs = group.devices();
        let first = group.first_shard();
        let shards = group.mesh().per_shard(devs.len(), |k| {
            DeviceSeq::from_slice(&devs[k], &data[ranges[first + k].clone()])
        })?;
        Ok(Self::of(
            group,
            shards,
            ranges.iter().map(|r| r.len()).collect(),
        ))
    }

    /// A sharded sequence of the given shards, in order (no copy): shard `k` must live on
    /// `group.devices()[k]`; any lengths, empty shards included. In a group of several
    /// processes, the same as [`from_local`](Self::from_local).
    ///
    /// # Errors
    ///
    /// `Error::InvalidArgument` where there are not `group.devices().len()` shards;
    /// `Error::DeviceMismatch` where shard `k` lives on another device than the group's
    /// device `k`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceGroup, DeviceSeq, ShardedSeq};
    /// let host = Device::host();
    /// let group = DeviceGroup::new(&[host.clone(), host.clone()])?;
    /// let a = DeviceSeq::from_slice(&host, &[1.0f32, 2.0])?;
    /// let b = DeviceSeq::<f32>::sequence(&host, 3)?;
    /// let xs = ShardedSeq::from_shards(&group, vec![a, b])?;
    /// assert_eq!(xs.len(), 5);
    /// assert_eq!(xs.to_vec()?, [1.0, 2.0, 0.0, 1.0, 2.0]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn from_shards(group: &DeviceGroup, shards: Vec<DeviceSeq<T>>) -> Result<Self> {
        Self::from_local(group, shards)
    }

    /// The sequence made of every process's `shards` (those of its own devices, shard `k` on
    /// `group.devices()[k]`), in rank order: no copy, any lengths, empty shards included.
    /// Collective: every rank must call it (it learns the other ranks' shard lengths). In a
    /// group of one process, the same as [`from_shards`](Self::from_shards).
    ///
    /// # Errors
    ///
    /// `Error::InvalidArgument` where there are not `group.devices().len()` shards;
    /// `Error::DeviceMismatch` where shard `k` lives on another device than the group's
    /// device `k`; `Error::Group` where another rank failed.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceGroup, DeviceSeq, ShardedSeq};
    /// let host = Device::host();
    /// let group = DeviceGroup::new(&[host.clone(), host.clone()])?;
    /// let mine = vec![
    ///     DeviceSeq::from_slice(&host, &[3u16, 1])?,
    ///     DeviceSeq::from_slice(&host, &[])?,
    /// ];
    /// let xs = ShardedSeq::from_local(&group, mine)?;
    /// assert_eq!((xs.len(), xs.local_shards().len()), (2, 2));
    /// assert_eq!(xs.to_vec()?, [3, 1]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn from_local(group: &DeviceGroup, shards: Vec<DeviceSeq<T>>) -> Result<Self> {
        let devs = group.devices();
        let local = if shards.len() != devs.len() {
            Err(Error::InvalidArgument(format!(
                "{} shards for a process of {} devices",
                shards.len(),
                devs.len()
            )))
        } else if shards.iter().zip(devs).any(|(s, d)| !s.device().same(d)) {
            Err(Error::DeviceMismatch)
        } else {
            Ok(shards.iter().map(DeviceSeq::len).collect())
        };
        let lens = group.gather_lens("from_local", local)?;
        Ok(Self::of(group, shards, lens))
    }

    /// The shards of this process, in order (shard `k` on `group().devices()[k]`): in a group
    /// of one process, every shard.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceGroup, ShardedSeq};
    /// let group = DeviceGroup::new(&[Device::host(), Device::host()])?;
    /// let xs = ShardedSeq::from_slice(&group, &[1i32, 2, 3, 4, 5])?;
    /// assert_eq!(xs.shards().len(), group.len());
    /// assert_eq!(xs.shards()[0].to_vec()?, [1, 2, 3]);
    /// assert_eq!(xs.shards()[1].to_vec()?, [4, 5]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn shards(&self) -> &[DeviceSeq<T>] {
        &self.shards
    }

    /// This process's shards, in order (shard `k` on `group().devices()[k]`); in a group of
    /// one process, every shard ([`shards`](Self::shards)).
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceGroup, ShardedSeq};
    /// let group = DeviceGroup::new(&[Device::host(), Device::host()])?;
    /// let xs = ShardedSeq::from_slice(&group, &[1i32, 2, 3])?;
    /// assert_eq!(xs.local_shards().len(), group.devices().len());
    /// assert_eq!(xs.local_shards()[1].to_vec()?, [3]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn local_shards(&self) -> &[DeviceSeq<T>] {
        &self.shards
    }

    /// The group the shards live on.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceGroup, ShardedSeq};
    /// let group = DeviceGroup::new(&[Device::host(), Device::host()])?;
    /// let xs = ShardedSeq::from_slice(&group, &[1u8, 2, 3])?;
    /// assert_eq!(xs.group().len(), 2);
    /// for (shard, dev) in xs.shards().iter().zip(xs.group().devices()) {
    ///     assert!(shard.device().same(dev));
    /// }
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn group(&self) -> &DeviceGroup {
        &self.group
    }

    /// The number of elements, over all shards (of every process).
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceGroup, ShardedSeq};
    /// let group = DeviceGroup::new(&[Device::host(), Device::host(), Device::host()])?;
    /// let xs = ShardedSeq::from_slice(&group, &[0.5f32; 7])?;
    /// assert_eq!(xs.len(), 7);
    /// assert_eq!(xs.shards().iter().map(|s| s.len()).sum::<usize>(), 7);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.lens.iter().sum()
    }

    /// Whether there are no elements.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceGroup, ShardedSeq};
    /// let group = DeviceGroup::new(&[Device::host(), Device::host()])?;
    /// let empty = ShardedSeq::<u64>::from_slice(&group, &[])?;
    /// assert!(empty.is_empty());
    /// assert!(empty.shards().iter().all(|s| s.is_empty()));
    /// assert!(!ShardedSeq::from_slice(&group, &[1u64])?.is_empty());
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Copies the elements to the host, shard after shard (the shards' copies run at the same
    /// time; lazy shards are evaluated on their devices first). In a group of several
    /// processes, collective: every rank gets the whole sequence.
    ///
    /// # Errors
    ///
    /// `Error::Cuda` where queued work failed; `Error::OutOfMemory`; `Error::Compile`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceGroup, ShardedSeq};
    /// let group = DeviceGroup::new(&[Device::host(), Device::host()])?;
    /// let data = [(1u8, -1.5f64), (2, 0.25), (3, 8.0)];
    /// assert_eq!(ShardedSeq::from_slice(&group, &data)?.to_vec()?, data);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn to_vec(&self) -> Result<Vec<T>> {
        let parts = self
            .group
            .mesh()
            .per_shard(self.shards.len(), |k| self.shards[k].to_vec());
        if self.group.ranks() == 1 {
            return Ok(parts?.concat());
        }
        // Each element as its components' bits, a word each.
        let width = T::TYPES.len();
        let words = parts.map(|parts| {
            parts
                .iter()
                .map(|p| {
                    p.iter()
                        .flat_map(|x| x.item_bits().into_iter().take(width))
                        .collect()
                })
                .collect()
        });
        let all = self.group.gather_shards("to_vec", words)?;
        Ok(all
            .iter()
            .flat_map(|w| w.chunks_exact(width).map(T::from_item_bits))
            .collect())
    }

    /// `out[i] = f(self[i])`, shard by shard: lazy, as [`DeviceSeq::map`] (`f` is traced once
    /// a shard; nothing runs until an operation reads the result). The shard lengths stay.
    ///
    /// # Errors
    ///
    /// As [`DeviceSeq::map`].
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceGroup, ShardedSeq};
    /// let group = DeviceGroup::new(&[Device::host(), Device::host()])?;
    /// let data = [1.5f32, -2.0, 4.0];
    /// let ys = ShardedSeq::from_slice(&group, &data)?.map(|x| x * 2.0 + 1.0)?;
    /// assert!(ys.shards().iter().all(|s| !s.is_stored()));
    /// assert_eq!(ys.to_vec()?, data.iter().map(|x| x * 2.0 + 1.0).collect::<Vec<_>>());
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn map<R: Exprs>(&self, f: impl Fn(T::Exprs) -> R) -> Result<ShardedSeq<R::Item>> {
        let shards = self
            .shards
            .iter()
            .map(|s| s.map(&f))
            .collect::<Result<Vec<_>>>()?;
        Ok(ShardedSeq::of(&self.group, shards, self.lens.clone()))
    }

    /// `out[i] = f(self[i], other[i])`, shard by shard: lazy, as [`DeviceSeq::zip_map`]. Both
    /// must be sharded alike: shard `k` of each on the same device, with the same length.
    ///
    /// # Errors
    ///
    /// `Error::LengthMismatch` where the lengths, or the lengths of two shards `k`, differ;
    /// `Error::DeviceMismatch` where the shard counts or devices differ; as
    /// [`DeviceSeq::map`].
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceGroup, ShardedSeq};
    /// let group = DeviceGroup::new(&[Device::host(), Device::host()])?;
    /// let (a, b) = ([1i32, 5, 3, 8, 0], [4u8, 2, 3, 1, 9]);
    /// let xs = ShardedSeq::from_slice(&group, &a)?;
    /// let ys = ShardedSeq::from_slice(&group, &b)?;
    /// let zs = xs.zip_map(&ys, |x, y| x - y.cast::<i32>())?;
    /// let want: Vec<i32> = a.iter().zip(&b).map(|(x, y)| x - *y as i32).collect();
    /// assert_eq!(zs.to_vec()?, want);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn zip_map<U: Item, R: Exprs>(
        &self,
        other: &ShardedSeq<U>,
        f: impl Fn(T::Exprs, U::Exprs) -> R,
    ) -> Result<ShardedSeq<R::Item>> {
        self.alike(other)?;
        let shards = self
            .shards
            .iter()
            .zip(&other.shards)
            .map(|(a, b)| a.zip_map(b, &f))
            .collect::<Result<Vec<_>>>()?;
        Ok(ShardedSeq::of(&self.group, shards, self.lens.clone()))
    }

    /// `Ok` where `other` is sharded as `self` is: the same length, shard count, devices and
    /// shard lengths.
    pub(crate) fn alike<U: Item>(&self, other: &ShardedSeq<U>) -> Result<()> {
        if self.len() != other.len() {
            return Err(Error::LengthMismatch {
                expected: self.len(),
                actual: other.len(),
            });
        }
        if self.shards.len() != other.shards.len() || self.lens.len() != other.lens.len() {
            return Err(Error::DeviceMismatch);
        }
        if self
            .shards
            .iter()
            .zip(&other.shards)
            .any(|(a, b)| !a.device().same(b.device()))
        {
            return Err(Error::DeviceMismatch);
        }
        match self.lens.iter().zip(&other.lens).find(|(a, b)| a != b) {
            Some((&a, &b)) => Err(Error::LengthMismatch {
                expected: a,
                actual: b,
            }),
            None => Ok(()),
        }
    }
}
