//! `sort` and `sort_pairs` of a sharded sequence: a sample sort with one all-to-all exchange
//! (docs/algorithms.md, "Several GPUs").
//!
//! 1. Each shard is sorted on its device (stably, with its values).
//! 2. `SAMPLES` evenly spaced keys of each sorted shard are read back, each with its shard and
//!    position. Keys are ordered by (key in the `total_cmp` order, shard, position), which is
//!    the order of the stable sort of the whole sequence, so equal keys are no obstacle: a
//!    splitter may fall inside a run of equal keys, even one that spans shards.
//! 3. For every sample and every shard, two binary searches on the device (`lower_bound`,
//!    `upper_bound`) give how many of the shard's elements come before the sample in that
//!    order; summed over the shards, the sample's exact rank in the sorted whole. For each
//!    boundary between output shards the sample whose rank is closest to the even split is
//!    the splitter, and the searches already say where it cuts every shard.
//! 4. One all-to-all exchange sends each cut piece to its output shard (NCCL sends and
//!    receives in one group between GPUs; views where the shards share one memory).
//! 5. Each output shard merges the runs it received, pairwise in source-shard order with the
//!    stable `merge` (`merge_pairs`), so equal keys keep the order of the input.

use super::{DeviceGroup, ShardedSeq, columns};
use crate::error::{Error, Result};
use crate::item::{Element, Item};
use crate::op::Op;
use crate::seq::DeviceSeq;
use std::cmp::Ordering;

/// Samples taken from each shard. Between two consecutive samples of the whole there are at
/// most about `len / SAMPLES + shards` elements, so each splitter's rank is within half that of
/// its target, and each output shard within about `len / SAMPLES + shards` of the even split.
const SAMPLES: usize = 1024;

/// The key's bits, ordered: their unsigned order is the `total_cmp` order for floats and
/// the value order for integers.
fn ordered<T: Element>(x: T) -> u64 {
    let ty = T::TYPE;
    let b = x.to_bits();
    let w = ty.bits();
    let sign = 1u64 << (w - 1);
    let mask = if w == 64 { !0u64 } else { (1u64 << w) - 1 };
    if ty.is_float() {
        if b & sign != 0 { !b & mask } else { b | sign }
    } else if ty.is_signed_int() {
        b ^ sign
    } else {
        b
    }
}

/// A sampled key: its value, ordered bits, shard, and position in its sorted shard.
#[derive(Clone, Copy)]
struct Sample<T> {
    key: T,
    ord: u64,
    shard: usize,
    pos: usize,
}

/// Where each sorted shard of the group is cut: `cuts[s][d]..cuts[s][d + 1]` of shard `s`
/// goes to output shard `d` (`cuts[s][0] == 0`, `cuts[s][k] == len(s)`, non-decreasing).
/// `sorted` are this process's shards, `lens` the lengths of all. Collective: every rank
/// gathers the same samples and counts and makes the same cuts. Where `whole_keys`, every
/// shard is cut before a splitting key, so that equal keys all go to one output shard.
fn cuts<T: Element>(
    group: &DeviceGroup,
    sorted: &[DeviceSeq<T>],
    lens: &[usize],
    whole_keys: bool,
) -> Result<Vec<Vec<usize>>> {
    let samples = samples_of(group, sorted)?;
    let before = ranks_before(group, sorted, lens, whole_keys, &samples)?;
    // Candidate cuts: none of any shard (rank 0), each sample, all of every shard (rank
    // `total`); their ranks do not decrease.
    let k = lens.len();
    let total: usize = lens.iter().sum();
    let cut_of = |c: usize, u: usize| -> usize {
        if c == 0 {
            0
        } else if c > samples.len() {
            lens[u]
        } else {
            before[u][c - 1]
        }
    };
    let rank: Vec<usize> = (0..samples.len() + 2)
        .map(|c| (0..k).map(|u| cut_of(c, u)).sum())
        .collect();
    // For each boundary, the first candidate closest to the even split.
    let mut chosen = vec![0usize; k + 1];
    chosen[k] = samples.len() + 1;
    for d in 1..k {
        let target = ((d as u128 * total as u128 + k as u128 / 2) / k as u128) as usize;
        let p = rank.partition_point(|&r| r < target);
        let c = if p == 0 {
            0
        } else if p == rank.len() || target - rank[p - 1] <= rank[p] - target {
            p - 1
        } else {
            p
        };
        chosen[d] = c.max(chosen[d - 1]);
    }
    Ok((0..k)
        .map(|u| chosen.iter().map(|&c| cut_of(c, u)).collect())
        .collect())
}

/// Evenly spaced samples of each sorted shard of the group (the middle of each of `m`
/// stretches), a key and a position each, in the stable sort's order (key, shard, position).
/// Collective.
fn samples_of<T: Element>(group: &DeviceGroup, sorted: &[DeviceSeq<T>]) -> Result<Vec<Sample<T>>> {
    let devs = group.devices();
    let local = group.mesh().per_shard(sorted.len(), |s| {
        let n = sorted[s].len();
        let m = n.min(SAMPLES);
        if m == 0 {
            return Ok(Vec::new());
        }
        let pos: Vec<u64> = (0..m as u128)
            .map(|i| ((2 * i + 1) * n as u128 / (2 * m as u128)) as u64)
            .collect();
        let at = DeviceSeq::from_slice(&devs[s], &pos)?;
        let keys = sorted[s].gather_stored(&at)?.to_vec()?;
        Ok(keys
            .into_iter()
            .zip(pos)
            .flat_map(|(key, p)| [key.to_bits(), p])
            .collect::<Vec<u64>>())
    });
    let mut samples: Vec<Sample<T>> = Vec::new();
    for (s, words) in group
        .gather_shards("sort samples", local)?
        .iter()
        .enumerate()
    {
        samples.extend(words.chunks_exact(2).map(|w| {
            let key = T::from_bits(w[0]);
            Sample {
                key,
                ord: ordered(key),
                shard: s,
                pos: w[1] as usize,
            }
        }));
    }
    samples.sort_unstable_by_key(|a| (a.ord, a.shard, a.pos));
    Ok(samples)
}

/// How many elements of each shard `u` come before each sample in the order of the stable
/// sort: the keys below it, and of its equal keys those of earlier shards (all), of its own
/// shard (those before its position) and of later shards (none); where `whole_keys`, the
/// keys below it only. Collective.
fn ranks_before<T: Element>(
    group: &DeviceGroup,
    sorted: &[DeviceSeq<T>],
    lens: &[usize],
    whole_keys: bool,
    samples: &[Sample<T>],
) -> Result<Vec<Vec<usize>>> {
    let devs = group.devices();
    let first = group.first_shard();
    let needles: Vec<T> = samples.iter().map(|s| s.key).collect();
    let local = group.mesh().per_shard(sorted.len(), |i| {
        let u = first + i;
        if lens[u] == 0 || needles.is_empty() {
            return Ok(vec![0; needles.len()]);
        }
        let at = DeviceSeq::from_slice(&devs[i], &needles)?;
        let lo = sorted[i].lower_bound::<u64>(&at)?.to_vec()?;
        let hi = sorted[i].upper_bound::<u64>(&at)?.to_vec()?;
        Ok(samples
            .iter()
            .enumerate()
            .map(|(j, s)| match s.shard.cmp(&u) {
                _ if whole_keys => lo[j],
                Ordering::Less => lo[j],
                Ordering::Equal => s.pos as u64,
                Ordering::Greater => hi[j],
            })
            .collect::<Vec<u64>>())
    });
    let before: Vec<Vec<usize>> = group
        .gather_shards("sort ranks", local)?
        .into_iter()
        .map(|v| v.into_iter().map(|b| b as usize).collect())
        .collect();
    if before.iter().any(|b| b.len() != samples.len()) {
        return Err(Error::Group("ranks sampled different keys".into()));
    }
    Ok(before)
}

/// The sorted runs merged pairwise, in order (ties: the earlier run's first), with their
/// values where there are values.
fn merge_runs<T: Element, V: Item>(
    mut runs: Vec<(DeviceSeq<T>, Option<DeviceSeq<V>>)>,
) -> Result<(DeviceSeq<T>, Option<DeviceSeq<V>>)> {
    while runs.len() > 1 {
        let mut next = Vec::with_capacity(runs.len().div_ceil(2));
        let mut it = runs.into_iter();
        while let Some(a) = it.next() {
            next.push(match (a, it.next()) {
                (a, None) => a,
                ((ak, Some(av)), Some((bk, Some(bv)))) => {
                    let (k, v) = ak.merge_pairs(&av, &bk, &bv)?;
                    (k, Some(v))
                }
                ((ak, _), Some((bk, _))) => (ak.merge(&bk)?, None),
            });
        }
        runs = next;
    }
    runs.pop()
        .ok_or_else(|| Error::Internal("a merge of no runs".into()))
}

/// Sorted shards of keys (this process's), of their values where there are values, and the
/// lengths of every shard of the group.
type Sorted<T, V> = (Vec<DeviceSeq<T>>, Option<Vec<DeviceSeq<V>>>, Vec<usize>);

/// Steps 2 to 5 over the sorted shards `keys` (and their values), this process's of a group
/// whose shards have `lens`: the globally sorted shards (equal keys on one shard where
/// `whole_keys`). Collective.
fn redistribute<T: Element, V: Item>(
    group: &DeviceGroup,
    keys: Vec<DeviceSeq<T>>,
    values: Option<Vec<DeviceSeq<V>>>,
    lens: &[usize],
    whole_keys: bool,
) -> Result<Sorted<T, V>> {
    let k = lens.len();
    if k == 1 || lens.iter().all(|&l| l == 0) {
        return Ok((keys, values, lens.to_vec()));
    }
    let cuts = cuts(group, &keys, lens, whole_keys)?;
    let first = group.first_shard();
    // 4. The pieces, keys' column first, then the values' columns.
    let pieces = keys
        .iter()
        .enumerate()
        .map(|(s, shard)| {
            let cut = &cuts[first + s];
            (0..k)
                .map(|d| {
                    let range = cut[d]..cut[d + 1];
                    let mut cols = columns(&shard.slice(range.clone()))?;
                    if let Some(v) = &values {
                        cols.extend(columns(&v[s].slice(range))?);
                    }
                    Ok(cols)
                })
                .collect()
        })
        .collect();
    let with_values = values.is_some();
    // The pieces hold what the exchange needs of the sorted shards.
    drop((keys, values));
    let received = group.exchange("sort", pieces)?;
    let out_lens: Vec<usize> = (0..k)
        .map(|d| cuts.iter().map(|c| c[d + 1] - c[d]).sum())
        .collect();
    // 5. Each output shard merges its runs.
    let devs = group.devices();
    let merged = group.mesh().per_shard(devs.len(), |d| {
        let dev = &devs[d];
        let runs: Vec<(DeviceSeq<T>, Option<DeviceSeq<V>>)> = received[d]
            .iter()
            .filter(|cols| cols.first().is_some_and(|c| c.len > 0))
            .map(|cols| {
                let keys = DeviceSeq::stored_columns(dev, cols[..1].to_vec());
                let vals = with_values.then(|| DeviceSeq::stored_columns(dev, cols[1..].to_vec()));
                (keys, vals)
            })
            .collect();
        if runs.is_empty() {
            let keys = DeviceSeq::from_slice(dev, &[])?;
            let vals = if with_values {
                Some(DeviceSeq::from_slice(dev, &[])?)
            } else {
                None
            };
            return Ok((keys, vals));
        }
        merge_runs(runs)
    })?;
    let (keys, vals): (Vec<_>, Vec<_>) = merged.into_iter().unzip();
    let vals = if with_values {
        Some(
            vals.into_iter()
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| Error::Internal("a merge lost its values".into()))?,
        )
    } else {
        None
    };
    Ok((keys, vals, out_lens))
}

impl<T: Element> ShardedSeq<T> {
    /// The whole sequence sorted ascending (floats in the `total_cmp` order of
    /// [`DeviceSeq::sort`]), sharded over the same group: every element of shard `k` is `<=`
    /// every element of shard `k + 1`. The shard lengths may change: the output is split as
    /// evenly as the splitters allow (within about `len / 1024` of the even split, whatever the
    /// keys: duplicates, all-equal or skewed keys included).
    ///
    /// A sample sort: each shard sorted on its device, splitters from a sample of the sorted
    /// shards with their exact ranks, one all-to-all exchange of the cut pieces (NCCL sends
    /// and receives between GPUs), and a stable merge of the received runs on each device
    /// (docs/algorithms.md). The result equals one device's sort bit for bit.
    ///
    /// Cost: one sort of each shard, `log2(group.len())` merge passes on each output shard,
    /// and the exchange of the elements that change devices; temporaries of about twice the
    /// input on each device.
    ///
    /// # Errors
    ///
    /// `Error::OutOfMemory`; `Error::Cuda`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceGroup, ShardedSeq};
    /// let group = DeviceGroup::new(&[Device::host(), Device::host(), Device::host()])?;
    /// let data: Vec<f32> = (0..1000).map(|i| ((i * 7919) % 1000) as f32 - 500.0).collect();
    /// let sorted = ShardedSeq::from_slice(&group, &data)?.sort()?;
    /// let mut want = data.clone();
    /// want.sort_by(f32::total_cmp);
    /// assert_eq!(sorted.to_vec()?, want);
    /// let sh = sorted.shards();
    /// assert!(sh[0].to_vec()?.last() <= sh[1].to_vec()?.first());
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn sort(&self) -> Result<ShardedSeq<T>> {
        let sorted = self
            .group
            .mesh()
            .per_shard(self.shards.len(), |k| self.shards[k].sort());
        let sorted = self.group.local_part(sorted)?;
        let (keys, _, lens) = redistribute::<T, u8>(&self.group, sorted, None, &self.lens, false)?;
        Ok(ShardedSeq::of(&self.group, keys, lens))
    }

    /// The stable sort of `values` by these keys over the whole sequence: both, in the same
    /// order, sharded alike (as [`sort`](Self::sort) does the keys; the shard lengths may
    /// change). Equal keys keep their values in input order. `values` must be sharded as the
    /// keys are (the same devices and shard lengths).
    ///
    /// Cost: as [`sort`](Self::sort), moving the values with the keys.
    ///
    /// # Errors
    ///
    /// `Error::LengthMismatch` and `Error::DeviceMismatch` where `values` is not sharded as
    /// the keys are; `Error::OutOfMemory`; `Error::Cuda`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceGroup, ShardedSeq};
    /// let group = DeviceGroup::new(&[Device::host(), Device::host()])?;
    /// let keys: Vec<u8> = (0..100u32).map(|i| (i * 7 % 5) as u8).collect();
    /// let vals: Vec<u32> = (0..100).collect();
    /// let (k, v) = ShardedSeq::from_slice(&group, &keys)?
    ///     .sort_pairs(&ShardedSeq::from_slice(&group, &vals)?)?;
    /// let mut want: Vec<(u8, u32)> = keys.iter().copied().zip(vals).collect();
    /// want.sort_by_key(|p| p.0); // stable
    /// assert_eq!(k.to_vec()?, want.iter().map(|p| p.0).collect::<Vec<_>>());
    /// assert_eq!(v.to_vec()?, want.iter().map(|p| p.1).collect::<Vec<_>>());
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn sort_pairs<V: Item>(
        &self,
        values: &ShardedSeq<V>,
    ) -> Result<(ShardedSeq<T>, ShardedSeq<V>)> {
        self.alike(values)?;
        let sorted = self.group.mesh().per_shard(self.shards.len(), |k| {
            self.shards[k].sort_pairs(&values.shards[k])
        });
        let sorted = self.group.local_part(sorted)?;
        let (keys, vals): (Vec<_>, Vec<_>) = sorted.into_iter().unzip();
        let (keys, vals, lens) = redistribute(&self.group, keys, Some(vals), &self.lens, false)?;
        let vals = vals.ok_or_else(|| Error::Internal("a sort lost its values".into()))?;
        Ok((
            ShardedSeq::of(&self.group, keys, lens.clone()),
            ShardedSeq::of(&self.group, vals, lens),
        ))
    }

    /// Every distinct key of the whole sequence once, ascending, with the `op`-combination of
    /// its values (as [`DeviceSeq::group_by_key`]), sharded over the same group: the keys are
    /// partitioned among the shards (every shard's keys below the next shard's), each key on
    /// one shard. `values` must be sharded as the keys are.
    ///
    /// Each shard groups its own pairs first (a sort and one reduction on its device); the
    /// grouped keys are cut at splitting keys (from a sample, as [`sort`](Self::sort) takes
    /// one), one all-to-all exchange sends each piece to its output shard, and each output
    /// shard merges its pieces and combines the partial results of each key in shard order.
    /// So the result is deterministic for a given sharding: integers equal one device's group-by
    /// exactly; float combinations may differ from one device's in rounding. Shard lengths
    /// follow the keys (a shard may be empty, and one key with most of the elements makes one
    /// long shard: the grouping moves at most one partial result a key and shard).
    ///
    /// Cost: a sort of each shard, the exchange of the grouped pairs, a merge and a reduction
    /// a shard.
    ///
    /// # Errors
    ///
    /// `Error::UnsupportedOp` for a bitwise `op` on float values; `Error::LengthMismatch` and
    /// `Error::DeviceMismatch` where `values` is not sharded as the keys are;
    /// `Error::OutOfMemory`; `Error::Cuda`; `Error::Group`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceGroup, Op, ShardedSeq};
    /// let group = DeviceGroup::new(&[Device::host(), Device::host(), Device::host()])?;
    /// let keys: Vec<u32> = (0..1000).map(|i| (i * 7919) % 13).collect();
    /// let vals: Vec<u64> = (0..1000).collect();
    /// let (k, v) = ShardedSeq::from_slice(&group, &keys)?
    ///     .group_by_key(&ShardedSeq::from_slice(&group, &vals)?, Op::Add)?;
    /// assert_eq!(k.to_vec()?, (0..13).collect::<Vec<u32>>());
    /// let mut want = vec![0u64; 13];
    /// for (key, val) in keys.iter().zip(&vals) { want[*key as usize] += val; }
    /// assert_eq!(v.to_vec()?, want);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn group_by_key<V: Element>(
        &self,
        values: &ShardedSeq<V>,
        op: Op,
    ) -> Result<(ShardedSeq<T>, ShardedSeq<V>)> {
        op.check::<V>()?;
        self.alike(values)?;
        let group = &self.group;
        let grouped = group.mesh().per_shard(self.shards.len(), |k| {
            self.shards[k].group_by_key(&values.shards[k], op)
        });
        let lens = |g: &Result<Vec<(DeviceSeq<T>, DeviceSeq<V>)>>| match g {
            Ok(g) => Ok(g.iter().map(|(k, _)| k.len()).collect()),
            Err(e) => Err(e.clone()),
        };
        let grouped_lens = group.gather_lens("group_by_key", lens(&grouped))?;
        let (keys, vals): (Vec<_>, Vec<_>) = grouped?.into_iter().unzip();
        if group.len() == 1 {
            return Ok((
                ShardedSeq::of(group, keys, grouped_lens.clone()),
                ShardedSeq::of(group, vals, grouped_lens),
            ));
        }
        let (keys, vals, _) = redistribute(group, keys, Some(vals), &grouped_lens, true)?;
        let vals = vals.ok_or_else(|| Error::Internal("a group-by lost its values".into()))?;
        // Each key's partial results are now adjacent on one shard, in shard order.
        let reduced = group
            .mesh()
            .per_shard(keys.len(), |d| keys[d].reduce_by_key(&vals[d], op));
        let out_lens = group.gather_lens("group_by_key", lens(&reduced))?;
        let (keys, vals): (Vec<_>, Vec<_>) = reduced?.into_iter().unzip();
        Ok((
            ShardedSeq::of(group, keys, out_lens.clone()),
            ShardedSeq::of(group, vals, out_lens),
        ))
    }
}
