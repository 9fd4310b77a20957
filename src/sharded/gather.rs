//! `gather` by global position and `top_k` of a sharded sequence.
//!
//! `gather`: each shard of indices sorts its indices (with their positions), cuts them at the
//! first global position of every shard of the data (binary searches of the shard offsets),
//! and sends each piece to the shard that holds those positions (one all-to-all); each data
//! shard reads the elements asked of it and sends them back (a second all-to-all), in the order
//! asked; each index shard puts the answers back in the order of its indices (a scatter by the
//! sorting permutation).
//!
//! `top_k`: each shard's own `k` largest (fewer where it is shorter) with their global
//! positions go to the first shard, in shard order, where one more `top_k` picks the `k`
//! largest of them. Equal elements come in shard order and, within a shard, by position, so
//! the ties keep ascending global positions.

use super::{ShardedSeq, columns, joined};
use crate::error::{Error, Result};
use crate::item::{Element, Index, Item};
use crate::seq::DeviceSeq;

impl<T: Item> ShardedSeq<T> {
    /// `out[i] = self[indices[i]]`, by global position over the whole sequence, sharded as
    /// `indices` is (which must be over the same group). Collective in a group of several
    /// processes.
    ///
    /// Cost: a sort of each shard of indices (with their positions), two all-to-all exchanges
    /// (the indices to the shards that hold their elements, the elements back), a gather on
    /// every data shard and a scatter on every index shard.
    ///
    /// # Errors
    ///
    /// `Error::IndexOutOfBounds` (on every rank, nothing made) where an index is at least
    /// `self.len()` (the largest such index); `Error::DeviceMismatch` where `indices` is
    /// over other devices; `Error::OutOfMemory`; `Error::Cuda`; `Error::Group`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceGroup, ShardedSeq};
    /// let group = DeviceGroup::new(&[Device::host(), Device::host(), Device::host()])?;
    /// let data: Vec<f32> = (0..10).map(|i| i as f32 * 1.5).collect();
    /// let xs = ShardedSeq::from_slice(&group, &data)?;
    /// let at = ShardedSeq::from_slice(&group, &[9u32, 0, 4, 4, 7])?;
    /// assert_eq!(xs.gather(&at)?.to_vec()?, [13.5, 0.0, 6.0, 6.0, 10.5]);
    /// assert!(xs.gather(&ShardedSeq::from_slice(&group, &[10u32])?).is_err());
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn gather<I: Index>(&self, indices: &ShardedSeq<I>) -> Result<ShardedSeq<T>> {
        let group = &self.group;
        if indices.shards.len() != self.shards.len()
            || indices.lens.len() != self.lens.len()
            || self
                .shards
                .iter()
                .zip(&indices.shards)
                .any(|(a, b)| !a.device().same(b.device()))
        {
            return Err(Error::DeviceMismatch);
        }
        let len = self.len();
        let k = self.lens.len();
        let first = group.first_shard();
        let devs = group.devices();
        // The indices as u64 (negative ones as huge), sorted with their positions; and the
        // largest, which every rank checks.
        let sorted = group.mesh().per_shard(self.shards.len(), |i| {
            let idx = indices.shards[i].map(|x| x.cast::<u64>())?;
            let at = DeviceSeq::<u64>::sequence(&devs[i], idx.len())?;
            let (keys, pos) = idx.sort_pairs(&at)?;
            let max = if keys.is_empty() {
                Vec::new()
            } else {
                keys.slice(keys.len() - 1..).to_vec()?
            };
            Ok((keys, pos, max))
        });
        let maxima = group.gather_shards(
            "gather",
            sorted
                .as_ref()
                .map(|v| v.iter().map(|(_, _, m)| m.clone()).collect())
                .map_err(Clone::clone),
        )?;
        let sorted = sorted?;
        let max = maxima.iter().filter_map(|m| m.first()).max().copied();
        if let Some(max) = max.filter(|&m| m >= len as u64) {
            return Err(Error::IndexOutOfBounds { index: max, len });
        }
        // Where each data shard starts.
        let starts = self.starts();
        // 1. Each index shard's sorted indices, cut by the data shard that holds them.
        let requests = sorted
            .iter()
            .enumerate()
            .map(|(i, (keys, _, _))| {
                let bounds = DeviceSeq::from_slice(&devs[i], &starts[1..])?;
                let mut cut = vec![0usize];
                cut.extend(
                    keys.lower_bound::<u64>(&bounds)?
                        .to_vec()?
                        .into_iter()
                        .map(|c| c as usize),
                );
                cut.push(keys.len());
                (0..k)
                    .map(|d| columns(&keys.slice(cut[d]..cut[d + 1])))
                    .collect()
            })
            .collect();
        let received = group.exchange("gather", requests)?;
        // 2. Each data shard reads what is asked of it, in the order asked.
        let answers = group.mesh().per_shard(self.shards.len(), |d| {
            let base = starts[first + d];
            received[d]
                .iter()
                .map(|cols| {
                    let asked = DeviceSeq::<u64>::stored_columns(&devs[d], cols.clone());
                    let local = asked.map(move |x| x - base)?;
                    columns(&self.shards[d].gather_stored(&local.copy()?)?)
                })
                .collect::<Result<Vec<_>>>()
        });
        let returned = group.exchange("gather", answers)?;
        // 3. Each index shard puts the answers in the order of its indices.
        let shards = group.mesh().per_shard(self.shards.len(), |i| {
            let (_, pos, _) = &sorted[i];
            match joined::<T>(&devs[i], returned[i].iter().cloned())? {
                Some(g) if !g.is_empty() => {
                    let g = g.copy()?;
                    g.scatter(pos, &g)
                }
                _ => DeviceSeq::from_slice(&devs[i], &[]),
            }
        })?;
        Ok(ShardedSeq::of(group, shards, indices.lens.clone()))
    }
}

impl<T: Element> ShardedSeq<T> {
    /// The `k` largest elements of the whole sequence in descending order, with their global
    /// positions (equal elements by ascending position), as [`DeviceSeq::top_k`] gives them
    /// for one sequence: two `DeviceSeq`s on the first device of rank 0 (empty, on their first
    /// device, on the other ranks). Collective in a group of several processes.
    ///
    /// Cost: a `top_k` of every shard, the exchange of at most `k` pairs a shard to the first,
    /// and one more `top_k` there.
    ///
    /// # Errors
    ///
    /// `Error::InvalidArgument` where `k > len()` (on every rank); `Error::OutOfMemory`;
    /// `Error::Cuda`; `Error::Group`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceGroup, ShardedSeq};
    /// let group = DeviceGroup::new(&[Device::host(), Device::host()])?;
    /// let xs = ShardedSeq::from_slice(&group, &[4i32, 9, 1, 9, 7, 2])?;
    /// let (top, at) = xs.top_k::<u32>(3)?;
    /// assert_eq!(top.to_vec()?, [9, 9, 7]);
    /// assert_eq!(at.to_vec()?, [1, 3, 4]);
    /// assert!(xs.top_k::<u32>(7).is_err());
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn top_k<I: Index>(&self, k: usize) -> Result<(DeviceSeq<T>, DeviceSeq<I>)> {
        let n = self.len();
        if k > n {
            return Err(Error::InvalidArgument(format!(
                "top_k of {k} from {n} elements"
            )));
        }
        let last = n.saturating_sub(1) as u64;
        if I::from_u64(last).to_u64() != last {
            return Err(Error::InvalidArgument(format!(
                "positions up to {last} do not fit the index type {}",
                I::TYPE.name()
            )));
        }
        let group = &self.group;
        let first = group.first_shard();
        let devs = group.devices();
        let shards = self.lens.len();
        let starts = self.starts();
        // Each shard's best, with global positions, for the first shard (nothing for the rest).
        let best = group.mesh().per_shard(self.shards.len(), |s| {
            let shard = &self.shards[s];
            let (top, at) = shard.top_k::<u64>(k.min(shard.len()))?;
            let base = starts[first + s];
            let at = at.map(move |p| p + base)?.copy()?;
            let mut row = vec![[columns(&top)?, columns(&at)?].concat()];
            let none = [columns(&top.slice(0..0))?, columns(&at.slice(0..0))?].concat();
            row.extend(std::iter::repeat_n(none, shards - 1));
            Ok(row)
        });
        let received = group.exchange("top_k", best)?;
        let dev = &devs[0];
        if first != 0 {
            return Ok((
                DeviceSeq::from_slice(dev, &[])?,
                DeviceSeq::from_slice(dev, &[])?,
            ));
        }
        // The first shard: the candidates in shard order, and the best of them.
        let values = joined::<T>(dev, received[0].iter().map(|c| c[..1].to_vec()))?;
        let places = joined::<u64>(dev, received[0].iter().map(|c| c[1..].to_vec()))?;
        let (Some(values), Some(places)) = (values, places) else {
            return Err(Error::Internal("a top_k of no shards".into()));
        };
        let (top, at) = values.copy()?.top_k::<u64>(k)?;
        let at = places.copy()?.gather_stored(&at)?;
        let at = at.map(|p| p.cast::<I>())?.copy()?;
        Ok((top, at))
    }
}
