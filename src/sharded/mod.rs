//! Sequences sharded over several devices: `DeviceGroup` (the devices, and how they exchange
//! data: `src/backend/mesh.rs`) and `ShardedSeq<T>` (one `DeviceSeq` a device, in order). This
//! file has the types, making and reading, and the lazy maps; `reduce.rs` the reduction, scans
//! and histogram; `sort.rs` the sample sort.
//!
//! Every operation is written once over the shards' own `DeviceSeq` operations and the mesh's
//! exchange, with per-shard work on one thread a shard, so host groups (tested here) and GPU
//! groups run the same code.

mod reduce;
mod sort;

use crate::backend::mesh::Mesh;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::item::{Exprs, Item};
use crate::seq::DeviceSeq;
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
    devices: Vec<Device>,
    mesh: Mesh,
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
            }),
        })
    }

    /// The devices, in shard order.
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

    /// The number of devices (shards of every sequence over the group).
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
        self.inner.devices.len()
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
    shards: Vec<DeviceSeq<T>>,
}

impl<T: Item> Clone for ShardedSeq<T> {
    fn clone(&self) -> Self {
        ShardedSeq {
            group: self.group.clone(),
            shards: self.shards.clone(),
        }
    }
}

impl<T: Item> std::fmt::Debug for ShardedSeq<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let lens: Vec<usize> = self.shards.iter().map(DeviceSeq::len).collect();
        write!(f, "ShardedSeq(len {}, shards {lens:?})", self.len())
    }
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
    /// A sharded sequence of `shards` (already checked against `group`).
    pub(crate) fn of(group: &DeviceGroup, shards: Vec<DeviceSeq<T>>) -> Self {
        ShardedSeq {
            group: group.clone(),
            shards,
        }
    }

    /// Copies host data to the group: contiguous shards as even as possible (the first
    /// `len % group.len()` one element longer), each copied to its device at the same time
    /// as the others.
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
        let shards = group.mesh().per_shard(group.len(), |k| {
            DeviceSeq::from_slice(&devs[k], &data[ranges[k].clone()])
        })?;
        Ok(Self::of(group, shards))
    }

    /// A sharded sequence of the given shards, in order (no copy): shard `k` must live on
    /// `group.devices()[k]`; any lengths, empty shards included.
    ///
    /// # Errors
    ///
    /// `Error::InvalidArgument` where there are not `group.len()` shards;
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
        if shards.len() != group.len() {
            return Err(Error::InvalidArgument(format!(
                "{} shards for a group of {} devices",
                shards.len(),
                group.len()
            )));
        }
        if shards
            .iter()
            .zip(group.devices())
            .any(|(s, d)| !s.device().same(d))
        {
            return Err(Error::DeviceMismatch);
        }
        Ok(Self::of(group, shards))
    }

    /// The shards, in order (shard `k` on `group().devices()[k]`).
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

    /// The number of elements, over all shards.
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
        self.shards.iter().map(DeviceSeq::len).sum()
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
    /// time; lazy shards are evaluated on their devices first).
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
            .per_shard(self.shards.len(), |k| self.shards[k].to_vec())?;
        Ok(parts.concat())
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
        Ok(ShardedSeq::of(&self.group, shards))
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
        Ok(ShardedSeq::of(&self.group, shards))
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
        if self.shards.len() != other.shards.len() {
            return Err(Error::DeviceMismatch);
        }
        for (a, b) in self.shards.iter().zip(&other.shards) {
            if !a.device().same(b.device()) {
                return Err(Error::DeviceMismatch);
            }
            if a.len() != b.len() {
                return Err(Error::LengthMismatch {
                    expected: a.len(),
                    actual: b.len(),
                });
            }
        }
        Ok(())
    }
}
