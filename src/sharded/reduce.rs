//! `reduce`, the scans and `histogram` of a sharded sequence: per-shard work, then the
//! per-shard results combined in shard order.

use super::ShardedSeq;
use crate::error::{Error, Result};
use crate::item::{Element, Expr, Num, ScalarType};
use crate::op::Op;
use crate::seq::DeviceSeq;

/// The compute bits (as scans take their initial value) of a compute-type value of `T`.
fn compute_bits<T: Element>(c: T::Compute) -> u64 {
    match T::TYPE {
        // Compute type f32 (f16, bf16, f32) or f64: `as_f64` is exact, and so is the way back.
        ScalarType::F16 | ScalarType::BF16 | ScalarType::F32 => {
            (c.as_f64() as f32).to_bits() as u64
        }
        ScalarType::F64 => c.as_f64().to_bits(),
        // Integers are their own compute type.
        _ => T::from_compute(c).compute_bits(),
    }
}

/// `a op b`, where either may be absent.
fn combine<C: Num>(op: Op, a: Option<C>, b: Option<C>) -> Option<C> {
    match (a, b) {
        (Some(a), Some(b)) => Some(op.combine(a, b)),
        (a, None) => a,
        (None, b) => b,
    }
}

/// The lazy `carry op scan[i]`: a later shard's scan fixed up with what comes before it.
fn fix_up<T: Element>(scan: &DeviceSeq<T>, op: Op, carry: T) -> Result<DeviceSeq<T>> {
    scan.map(move |y| Expr::constant(carry).apply(op, y))
}

impl<T: Element> ShardedSeq<T> {
    /// The `op`-reduction of every shard of the group (`None` for an empty one), the local
    /// shards at the same time. Collective.
    fn shard_totals(&self, op: Op) -> Result<Vec<Option<T>>> {
        let local = self.group.mesh().per_shard(self.shards.len(), |k| {
            let s = &self.shards[k];
            if s.is_empty() {
                Ok(Vec::new())
            } else {
                s.reduce(op).map(|t| vec![t])
            }
        });
        let all = self.gather_values("reduce", local)?;
        Ok(all.iter().map(|v| v.first().copied()).collect())
    }

    /// The `op`-combination of all elements (over all shards); the identity of `op` when
    /// empty.
    ///
    /// Each shard is reduced on its device (at the same time as the others), then the
    /// shards' results are combined on the host in shard order, skipping empty shards. So the
    /// result is deterministic for a given sharding (shard lengths): integers are those of
    /// one device exactly; float results may differ from one device's in rounding, and depend
    /// on how the sequence is sharded (for [`from_slice`](Self::from_slice), on the group
    /// size). `f16`/`bf16` shard results are combined in `f32` and rounded once.
    ///
    /// Cost: one read of every shard; one small read-back a shard.
    ///
    /// # Errors
    ///
    /// `Error::UnsupportedOp` for a bitwise `op` on a float type; `Error::Cuda`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceGroup, Op, ShardedSeq};
    /// let group = DeviceGroup::new(&[Device::host(), Device::host(), Device::host()])?;
    /// let data: Vec<u32> = (0..1001u32).map(|i| i.wrapping_mul(2654435761)).collect();
    /// let xs = ShardedSeq::from_slice(&group, &data)?;
    /// assert_eq!(xs.reduce(Op::Add)?, data.iter().fold(0u32, |a, &b| a.wrapping_add(b)));
    /// assert_eq!(xs.reduce(Op::Max)?, *data.iter().max().unwrap());
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn reduce(&self, op: Op) -> Result<T> {
        op.check::<T>()?;
        let totals = self.shard_totals(op)?;
        let mut acc: Option<T::Compute> = None;
        for t in totals.into_iter().flatten() {
            acc = Some(match acc {
                None => t.to_compute(),
                Some(a) => op.combine(a, t.to_compute()),
            });
        }
        match acc {
            Some(a) => Ok(T::from_compute(a)),
            None => op.identity::<T>(),
        }
    }

    /// `out[i] = self[0] op … op self[i]` over the whole sequence; the result keeps the shard
    /// lengths.
    ///
    /// Every shard is scanned on its device at the same time as the others; the last element
    /// of each (its total) comes back, and the host combines the totals in shard order into
    /// each shard's carry (what comes before it). The carry is then a fused fix-up: shard 0 of
    /// the result is its stored scan, and each later shard is a lazy sequence
    /// `carry op scan[i]` over its stored scan, evaluated inside whatever reads it, in the same
    /// pass (as a `map` is; [`DeviceSeq::copy`] stores it). Integers equal one device's scan
    /// exactly; floats are deterministic for a given sharding and may differ from one
    /// device's in rounding (`carry + (x0 + … + xi)` instead of `(carry + x0) + … + xi`; for
    /// `f16`/`bf16` both terms are rounded to the element type first).
    ///
    /// Cost: one read and one write of every shard, all at once; one element read back a
    /// shard; the fix-up where the result is read.
    ///
    /// # Errors
    ///
    /// `Error::UnsupportedOp` for a bitwise `op` on a float type; `Error::OutOfMemory`;
    /// `Error::Cuda`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceGroup, Op, ShardedSeq};
    /// let group = DeviceGroup::new(&[Device::host(), Device::host(), Device::host()])?;
    /// let data: Vec<i32> = (0..100).map(|i| (i * 37) % 11 - 5).collect();
    /// let scanned = ShardedSeq::from_slice(&group, &data)?.inclusive_scan(Op::Add)?;
    /// let want: Vec<i32> = data.iter().scan(0, |s, x| { *s += x; Some(*s) }).collect();
    /// assert_eq!(scanned.to_vec()?, want);
    /// assert_eq!(scanned.shards()[2].len(), 33);
    /// assert!(scanned.shards()[0].is_stored() && !scanned.shards()[2].is_stored());
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn inclusive_scan(&self, op: Op) -> Result<ShardedSeq<T>> {
        op.check::<T>()?;
        let (k, first) = (self.lens.len(), self.group.first_shard());
        let scans = self.group.mesh().per_shard(self.shards.len(), |i| {
            let scan = self.shards[i].inclusive_scan(op)?;
            // The shard's total, where a later shard needs it.
            let n = scan.len();
            let total = if first + i + 1 < k && n > 0 {
                scan.slice(n - 1..).to_vec()?
            } else {
                Vec::new()
            };
            Ok((scan, total))
        });
        let (scans, totals) = self.split_gather(scans)?;
        // The carry into every shard of the group: the totals before it, in order.
        let mut carry: Option<T::Compute> = None;
        let mut carries = Vec::with_capacity(k);
        for total in totals {
            carries.push(carry);
            carry = combine(op, carry, total.first().map(|t| t.to_compute()));
        }
        let shards = scans
            .into_iter()
            .enumerate()
            .map(|(i, scan)| match carries[first + i] {
                None => Ok(scan),
                Some(c) => fix_up(&scan, op, T::from_compute(c)),
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(ShardedSeq::of(&self.group, shards, self.lens.clone()))
    }

    /// `local`'s scans, and the values beside them of every shard of the group (collective).
    #[allow(clippy::type_complexity)]
    fn split_gather(
        &self,
        local: Result<Vec<(DeviceSeq<T>, Vec<T>)>>,
    ) -> Result<(Vec<DeviceSeq<T>>, Vec<Vec<T>>)> {
        let mut scans = Vec::new();
        let vals = local.map(|v| {
            v.into_iter()
                .map(|(scan, vals)| {
                    scans.push(scan);
                    vals
                })
                .collect()
        });
        Ok((scans, self.gather_values("scan", vals)?))
    }

    /// Every shard's values, in global shard order, from this process's shards' `local` ones
    /// (any number a shard), as their bits. Collective.
    fn gather_values(&self, what: &str, local: Result<Vec<Vec<T>>>) -> Result<Vec<Vec<T>>> {
        let words = local.map(|v| {
            v.iter()
                .map(|vals| vals.iter().map(|x| x.to_bits()).collect())
                .collect()
        });
        Ok(self
            .group
            .gather_shards(what, words)?
            .iter()
            .map(|w| w.iter().map(|&b| T::from_bits(b)).collect())
            .collect())
    }

    /// `out[0] = init`, `out[i] = init op self[0] op … op self[i-1]` over the whole sequence;
    /// the result keeps the shard lengths.
    ///
    /// As [`inclusive_scan`](Self::inclusive_scan): shard 0 is scanned from `init`, every
    /// later shard from `op`'s neutral element (at the same time); each shard's total (its
    /// scan's last element `op` its own last element) comes back, the host combines them in
    /// shard order into each shard's carry (`init` first), and each later shard of the result
    /// is the lazy `carry op scan[i]`. Deterministic as `inclusive_scan`.
    ///
    /// Cost: as [`inclusive_scan`](Self::inclusive_scan) (two elements read back a shard).
    ///
    /// # Errors
    ///
    /// As [`inclusive_scan`](Self::inclusive_scan).
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceGroup, Op, ShardedSeq};
    /// let group = DeviceGroup::new(&[Device::host(), Device::host()])?;
    /// let data = [5u64, 1, 7, 2, 9];
    /// let xs = ShardedSeq::from_slice(&group, &data)?;
    /// let want: Vec<u64> = (0..data.len()).map(|i| 100 + data[..i].iter().sum::<u64>()).collect();
    /// assert_eq!(xs.exclusive_scan(100, Op::Add)?.to_vec()?, want);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn exclusive_scan(&self, init: T, op: Op) -> Result<ShardedSeq<T>> {
        op.check::<T>()?;
        let (k, first) = (self.lens.len(), self.group.first_shard());
        // Later shards start from an element that changes nothing (exactly), so that their
        // first output is the carry itself once fixed up.
        let neutral = compute_bits::<T>(op.neutral_of::<T::Compute>());
        let scans = self.group.mesh().per_shard(self.shards.len(), |i| {
            let s = &self.shards[i];
            let start = if first + i == 0 {
                init.compute_bits()
            } else {
                neutral
            };
            let col = s.device().backend().scan(s.source(), op, Some(start))?;
            let scan = DeviceSeq::<T>::stored(s.device(), col);
            let n = s.len();
            // What the shard adds to the carry (for shard 0, `init` included): its scan's last
            // element and its own last element.
            let total = if first + i + 1 < k && n > 0 {
                let mut t = scan.slice(n - 1..).to_vec()?;
                t.extend(s.slice(n - 1..).to_vec()?);
                t
            } else {
                Vec::new()
            };
            Ok((scan, total))
        });
        let (scans, totals) = self.split_gather(scans)?;
        // The carry into each later shard: shard 0's total (which starts from `init`; `init`
        // itself where shard 0 is empty), then the later totals in shard order.
        let mut carry = init.to_compute();
        let mut carries = Vec::with_capacity(k);
        for (g, total) in totals.iter().enumerate() {
            carries.push(carry);
            let total = match total[..] {
                [before, last] => Some(op.combine(before.to_compute(), last.to_compute())),
                _ => None,
            };
            carry = if g == 0 {
                total.unwrap_or(carry)
            } else {
                combine(op, Some(carry), total).unwrap_or(carry)
            };
        }
        let shards = scans
            .into_iter()
            .enumerate()
            .map(|(i, scan)| match first + i {
                0 => Ok(scan),
                g => fix_up(&scan, op, T::from_compute(carries[g])),
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(ShardedSeq::of(&self.group, shards, self.lens.clone()))
    }

    /// Counts of `bins` equal-width bins over `[lo, hi)` of the whole sequence, as
    /// [`DeviceSeq::histogram`] defines them, on the group's first device.
    ///
    /// Each shard is counted on its device (at the same time), and the counts are summed
    /// on the first device: by NCCL's reduction between GPUs, else by one pass over the shards'
    /// counts (copied there first where a group mixes devices). Exact: the result equals one
    /// device's. In a group of several processes: collective, and the counts of the whole
    /// sequence come to the first device of every rank.
    ///
    /// Cost: one read of every shard; the exchange of `bins` counts a shard.
    ///
    /// # Errors
    ///
    /// `Error::InvalidArgument` where `bins == 0` or `!(lo < hi)`; `Error::OutOfMemory`;
    /// `Error::Cuda`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceGroup, ShardedSeq};
    /// let group = DeviceGroup::new(&[Device::host(), Device::host(), Device::host()])?;
    /// let data: Vec<f32> = (0..1000).map(|i| ((i * 37) % 1000) as f32 / 1000.0).collect();
    /// let counts = ShardedSeq::from_slice(&group, &data)?.histogram(4, 0.0, 1.0)?;
    /// let mut want = vec![0u64; 4];
    /// for x in &data { want[(x * 4.0) as usize] += 1; }
    /// assert_eq!(counts.to_vec()?, want);
    /// assert!(counts.device().same(&group.devices()[0]));
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn histogram(&self, bins: usize, lo: T, hi: T) -> Result<DeviceSeq<u64>> {
        crate::seq::histogram_args(bins, lo, hi)?;
        let local = self.local_histogram(bins, lo, hi);
        if self.group.ranks() == 1 {
            return local;
        }
        // Every process's counts, summed on every rank (in rank order: exact either way).
        let all = self
            .group
            .gather_ranks("histogram", local.and_then(|c| c.to_vec()))?;
        let mut sum = vec![0u64; bins];
        for counts in all {
            if counts.len() != bins {
                return Err(Error::Group("ranks counted different bins".into()));
            }
            sum.iter_mut().zip(counts).for_each(|(s, c)| *s += c);
        }
        DeviceSeq::from_slice(&self.group.devices()[0], &sum)
    }

    /// The counts of this process's shards, on its first device.
    fn local_histogram(&self, bins: usize, lo: T, hi: T) -> Result<DeviceSeq<u64>> {
        let counts = self.group.mesh().per_shard(self.shards.len(), |k| {
            self.shards[k].histogram(bins, lo, hi)
        })?;
        let cols = counts
            .iter()
            .map(|c| {
                c.source()
                    .as_column()
                    .cloned()
                    .ok_or_else(|| Error::Internal("a histogram that is not stored".into()))
            })
            .collect::<Result<Vec<_>>>()?;
        let first = self.group.devices()[0].clone();
        let mesh = self.group.mesh();
        if let Some(comms) = mesh.comms() {
            return Ok(DeviceSeq::stored(&first, comms.sum_u64(&cols, bins)?));
        }
        // One memory, or copies through the host: the counts on the first device, summed there.
        let mut cols = cols.into_iter().enumerate();
        let Some((_, own)) = cols.next() else {
            return Err(Error::Internal("a group of no devices".into()));
        };
        let mut sum = DeviceSeq::<u64>::stored(&first, own);
        for (k, col) in cols {
            let counts = DeviceSeq::<u64>::stored(&first, mesh.carry(col, k, 0)?);
            sum = sum.zip_map(&counts, |a, b| a + b)?;
        }
        if counts.len() > 1 {
            sum.copy()
        } else {
            Ok(sum)
        }
    }
}
