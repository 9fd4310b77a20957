//! The host backend: every primitive on the CPU with rayon, giving the answers the API
//! describes (integers identical to the GPU's; floats deterministic, rounded in the host's own
//! fixed order). Sources are read in chunks of `CHUNK` elements (a lazy one evaluated chunk by
//! chunk, `BLOCK` elements at a time node by node, with no temporary of the sequence's size),
//! and the element type is matched once, in `with_type!`.

pub(crate) mod combine;
pub(crate) mod compact;
pub(crate) mod gather;
pub(crate) mod histogram;
pub(crate) mod merge;
pub(crate) mod reduce;
pub(crate) mod scan;
pub(crate) mod search;
pub(crate) mod segment;
pub(crate) mod sort;

use super::{Backend, Init, ScanMode, SetOp, SortValues};
use crate::error::{Error, Result};
use crate::expr::combiner::Combiner;
use crate::expr::eval::{
    Lanes, Val, by_lane, canonical, each_in_lane, eval, eval_block, extend_le, fill_lane,
};
use crate::expr::graph::{Kind, Node};
use crate::item::{Element, ScalarType};
use crate::op::Op;
use crate::random::{self, Rand};
use crate::source::{Column, Source, Storage};
use rayon::prelude::*;
use std::any::Any;
use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Elements a parallel task takes: fixed, so float results never depend on the thread count.
pub(crate) const CHUNK: usize = 1 << 14;

/// Items a parallel task takes at least, where `items` items hold `elements` elements: about
/// `CHUNK` elements a task. Small inputs then run on the calling thread: work that rayon splits
/// goes to its pool, which costs waking a worker and then the caller (tens of microseconds).
pub(crate) fn min_items(items: usize, elements: usize) -> usize {
    (CHUNK * items / elements.max(1)).max(1)
}

/// Elements of a lazy source evaluated at once, node by node (`eval_block`): enough to walk
/// the graph rarely, few enough that every node's values stay in the L1 cache.
const BLOCK: usize = 256;

/// Runs `$body` with `$T` the element type of the `ScalarType` `$ty`.
macro_rules! with_type {
    ($ty:expr, $T:ident => $body:expr) => {
        match $ty {
            ScalarType::I8 => {
                type $T = i8;
                $body
            }
            ScalarType::I16 => {
                type $T = i16;
                $body
            }
            ScalarType::I32 => {
                type $T = i32;
                $body
            }
            ScalarType::I64 => {
                type $T = i64;
                $body
            }
            ScalarType::U8 => {
                type $T = u8;
                $body
            }
            ScalarType::U16 => {
                type $T = u16;
                $body
            }
            ScalarType::U32 => {
                type $T = u32;
                $body
            }
            ScalarType::U64 => {
                type $T = u64;
                $body
            }
            ScalarType::F16 => {
                type $T = half::f16;
                $body
            }
            ScalarType::BF16 => {
                type $T = half::bf16;
                $body
            }
            ScalarType::F32 => {
                type $T = f32;
                $body
            }
            ScalarType::F64 => {
                type $T = f64;
                $body
            }
            ScalarType::Bool => {
                type $T = bool;
                $body
            }
        }
    };
}

// After the macro, which it uses.
pub(crate) mod assoc;

/// Bytes the host's stored sequences hold, and the high-water mark.
static IN_USE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

/// The elements of a host column: a `Vec<T>` behind a type-erased box.
pub(crate) struct HostStore {
    data: Box<dyn HostData>,
    bytes: usize,
}

trait HostData: Send + Sync {
    fn bytes(&self) -> &[u8];
    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

impl<T: Element> HostData for Vec<T> {
    fn bytes(&self) -> &[u8] {
        bytemuck::cast_slice(self)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

impl Storage for HostStore {
    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl Drop for HostStore {
    fn drop(&mut self) {
        IN_USE.fetch_sub(self.bytes, Ordering::Relaxed);
    }
}

/// Results of at least this many bytes are reserved once before the work that makes them
/// (`room`).
const ROOM_CHECKED: usize = 1 << 30;

/// `Err(OutOfMemory)` where a result of `bytes` cannot be allocated: a result of a GiB or more
/// is reserved and freed again (its pages untouched) before the work, so that a request that no
/// memory holds (a lazy sequence may be 2^56 elements long) returns the error where Rust's
/// allocation would abort the process part-way.
fn room(bytes: usize) -> Result<()> {
    if bytes >= ROOM_CHECKED {
        crate::item::reserved::<u8>(bytes)?;
    }
    Ok(())
}

/// `room` for `n` elements of `ty` (saturating: a product past `usize` fails the reservation).
fn room_for(ty: ScalarType, n: usize) -> Result<()> {
    room(n.saturating_mul(ty.size()))
}

/// A stored column of `v`: the host backend's allocation, where an injected fault
/// (`crate::fault`) fails as a device allocation would.
pub(crate) fn column<T: Element>(v: Vec<T>) -> Result<Column> {
    let len = v.len();
    let bytes = std::mem::size_of_val(v.as_slice());
    if crate::fault::allocation() {
        return Err(Error::OutOfMemory { bytes });
    }
    let now = IN_USE.fetch_add(bytes, Ordering::Relaxed) + bytes;
    PEAK.fetch_max(now, Ordering::Relaxed);
    let store = HostStore {
        data: Box::new(v),
        bytes,
    };
    Ok(Column::new(T::TYPE, Arc::new(store), len))
}

/// The elements of a host column.
pub(crate) fn elements<T: Element>(c: &Column) -> Result<&[T]> {
    let v = c
        .storage::<HostStore>()?
        .data
        .as_any()
        .downcast_ref::<Vec<T>>()
        .ok_or_else(|| Error::Internal(format!("a host column is not of {}", T::TYPE.name())))?;
    Ok(&v[c.off..c.off + c.len])
}

fn column_bytes(c: &Column) -> Result<&[u8]> {
    let b = c.storage::<HostStore>()?.data.bytes();
    let s = c.ty.size();
    Ok(&b[c.off * s..(c.off + c.len) * s])
}

/// The bytes of the element just before a column's first (a view's), if it has one.
fn bytes_before(c: &Column) -> Result<Option<&[u8]>> {
    let b = c.storage::<HostStore>()?.data.bytes();
    let s = c.ty.size();
    Ok((c.off > 0).then(|| &b[(c.off - 1) * s..c.off * s]))
}

/// A column's type, its elements' bytes, and those of the element before it (if any).
type ColBytes<'a> = (ScalarType, &'a [u8], Option<&'a [u8]>);

/// A source read as elements of type `T` (its type): chunks borrowed from the column where it
/// is stored, else evaluated by the interpreter.
pub(crate) struct HostSrc<'a, T> {
    src: &'a Source,
    plain: Option<&'a [T]>,
    cols: Vec<ColBytes<'a>>,
    /// Whether the source's value is computed (`Graph::out_is_computed`): a NaN made canonical.
    computed: bool,
}

impl<'a, T: Element> HostSrc<'a, T> {
    pub fn new(src: &'a Source) -> Result<Self> {
        if src.ty() != T::TYPE {
            return Err(Error::Internal(format!(
                "a source of {} read as {}",
                src.ty().name(),
                T::TYPE.name()
            )));
        }
        let plain = match src.as_column() {
            Some(c) => Some(elements::<T>(c)?),
            None => None,
        };
        let cols = src
            .columns
            .iter()
            .map(|c| Ok((c.ty, column_bytes(c)?, bytes_before(c)?)))
            .collect::<Result<_>>()?;
        let computed = src.graph.out_is_computed();
        Ok(HostSrc {
            src,
            plain,
            cols,
            computed,
        })
    }

    pub fn len(&self) -> usize {
        self.src.len
    }

    /// Elements `range` (within the source).
    pub fn read(&self, range: std::ops::Range<usize>) -> Cow<'a, [T]> {
        match self.plain {
            Some(p) => Cow::Borrowed(&p[range]),
            None => Cow::Owned(self.evaluate(range)),
        }
    }

    /// Elements `range` of a lazy source, evaluated `BLOCK` at a time (`eval_block`).
    fn evaluate(&self, range: std::ops::Range<usize>) -> Vec<T> {
        let g = &self.src.graph;
        let room = range.len().min(BLOCK);
        let mut lanes: Vec<Lanes> = g.nodes.iter().map(|n| Lanes::new(n.ty, room)).collect();
        let mut out = Vec::with_capacity(range.len());
        let computed = self.computed;
        for from in range.clone().step_by(BLOCK) {
            let rows = from..range.end.min(from + BLOCK);
            eval_block(&g.nodes, rows.len(), &mut lanes, |n, done, lane| {
                self.leaves(n, rows.clone(), done, lane)
            });
            let o = &lanes[g.out as usize];
            by_lane!(o, each_in_lane(o, |v| out.push(stored::<T>(v, computed))));
        }
        out
    }

    /// The values of leaf node `n` at `rows`, appended to `lane` (of the node's type): in a
    /// typed loop for constants, row numbers and columns stored in their compute type; an
    /// `At` at the rows in its operand's lane (of `done`, the lanes before it).
    fn leaves(&self, n: &Node, rows: std::ops::Range<usize>, done: &[Lanes], lane: &mut Lanes) {
        match (n.kind, &mut *lane) {
            (Kind::At(k, i, p), lane) => {
                let at = &done[i as usize];
                (0..rows.len()).for_each(|j| lane.push(self.at(k, at.get(j).bits(), p)))
            }
            (Kind::Param(_), lane) => {
                let v = self.leaf(n, rows.start, &[]);
                by_lane!(lane, fill_lane(lane, v, rows.len()))
            }
            (Kind::Index, Lanes::U64(l)) => l.extend(rows.map(|r| r as u64)),
            (Kind::Column(k), lane)
                if self.cols[k as usize].0 == n.ty && n.ty.compute() == n.ty =>
            {
                let bytes = self.cols[k as usize].1;
                let s = n.ty.size();
                by_lane!(lane, extend_le(lane, &bytes[rows.start * s..rows.end * s]))
            }
            (_, lane) => rows.for_each(|r| lane.push(self.leaf(n, r, &[]))),
        }
    }

    /// Element `row` of column `k`, a row at or past `param p` reading row `p - 1`
    /// (`Kind::At`).
    fn at(&self, k: u32, row: u64, p: u32) -> Val {
        let (ty, bytes, _) = self.cols[k as usize];
        let n = self.src.params[p as usize];
        let row = row.min(n.saturating_sub(1)) as usize;
        let size = ty.size();
        let mut b = [0u8; 8];
        b[..size].copy_from_slice(&bytes[row * size..(row + 1) * size]);
        Val::load(ty, u64::from_le_bytes(b))
    }

    /// The value of leaf node `n` (of the source's graph) at `row`, `vals` the values of the
    /// nodes before it (an `At` reads its row there).
    fn leaf(&self, n: &Node, row: usize, vals: &[Val]) -> Val {
        let (src, cols) = (self.src, &self.cols);
        match n.kind {
            Kind::At(k, i, p) => self.at(k, vals[i as usize].bits(), p),
            Kind::Column(k) => {
                let (ty, bytes, _) = cols[k as usize];
                let size = ty.size();
                let mut b = [0u8; 8];
                b[..size].copy_from_slice(&bytes[row * size..(row + 1) * size]);
                Val::load(ty, u64::from_le_bytes(b))
            }
            Kind::Head(c, p) => {
                let Kind::Column(k) = src.graph.nodes[c as usize].kind else {
                    return Val::U8(1);
                };
                let (ty, bytes, before) = cols[k as usize];
                let size = ty.size();
                let first = row as u64 + src.params[p as usize] == 0;
                let differs = first
                    || if row == 0 {
                        before != Some(&bytes[..size])
                    } else {
                        bytes[(row - 1) * size..row * size] != bytes[row * size..(row + 1) * size]
                    };
                Val::U8(differs as u8)
            }
            Kind::Param(k) => Val::from_compute_bits(n.ty, src.params[k as usize]),
            Kind::Random(r, sd, o) => {
                let (seed, i) = (src.params[sd as usize], row as u64 + src.params[o as usize]);
                match (r, n.ty) {
                    (Rand::Bits, ScalarType::U64) => Val::U64(random::bits64(seed, i)),
                    (Rand::Bits, _) => Val::U32(random::bits32(seed, i)),
                    (Rand::Uniform, ScalarType::F64) => Val::F64(random::uniform(n.ty, seed, i)),
                    (Rand::Uniform, _) => Val::F32(random::uniform(n.ty, seed, i) as f32),
                    (Rand::Normal, ScalarType::F64) => Val::F64(random::normal(n.ty, seed, i)),
                    (Rand::Normal, _) => Val::F32(random::normal(n.ty, seed, i) as f32),
                }
            }
            Kind::Index => Val::U64(row as u64),
            _ => Val::U8(0),
        }
    }

    /// The elements of chunk `c` (of `CHUNK`).
    pub fn chunk(&self, c: usize) -> Cow<'a, [T]> {
        self.read(c * CHUNK..self.len().min((c + 1) * CHUNK))
    }

    /// Chunks of the source.
    pub fn chunks(&self) -> usize {
        self.len().div_ceil(CHUNK)
    }

    /// Random access for about `reads` reads in all: a stored column's elements directly; a
    /// lazy source read at least as often as it has elements evaluated once, block by block;
    /// else evaluated an element at a time where read.
    pub fn access(&self, reads: usize) -> Access<'_, 'a, T> {
        let all = match self.plain {
            Some(p) => Some(Cow::Borrowed(p)),
            None if reads >= self.len() => Some(Cow::Owned(self.to_vec())),
            None => None,
        };
        Access { s: self, all }
    }

    /// All elements (for algorithms whose output holds them all anyway).
    pub fn to_vec(&self) -> Vec<T> {
        (0..self.chunks())
            .into_par_iter()
            .flat_map_iter(|c| self.chunk(c).into_owned())
            .collect()
    }
}

/// Random access to a `HostSrc` (`HostSrc::access`), shared by the threads that read it.
pub(crate) struct Access<'s, 'a, T: Clone> {
    s: &'s HostSrc<'a, T>,
    /// The elements, where they are read from memory.
    all: Option<Cow<'a, [T]>>,
}

impl<'a, T: Element> Access<'_, 'a, T> {
    /// A reader for one thread.
    pub fn reader(&self) -> Reader<'_, 'a, T> {
        match &self.all {
            Some(all) => Reader::Stored(all),
            None => Reader::Each {
                s: self.s,
                vals: vec![Val::U8(0); self.s.src.graph.nodes.len()],
            },
        }
    }
}

/// One thread's reads of an `Access`: elements in memory, or each evaluated where read.
pub(crate) enum Reader<'r, 'a, T> {
    Stored(&'r [T]),
    Each {
        s: &'r HostSrc<'a, T>,
        vals: Vec<Val>,
    },
}

impl<T: Element> Reader<'_, '_, T> {
    #[inline]
    pub fn at(&mut self, row: usize) -> T {
        match self {
            Reader::Stored(all) => all[row],
            Reader::Each { s, vals } => {
                let g = &s.src.graph;
                let v = eval(&g.nodes, g.out, vals, |n, vals| s.leaf(n, row, vals));
                stored(v, s.computed)
            }
        }
    }
}

/// A source's result value as the element it stands for: a computed NaN made canonical, as
/// on the GPU.
#[inline(always)]
fn stored<T: Element>(v: Val, computed: bool) -> T {
    if computed {
        <T as Element>::from_bits(canonical(v).store(T::TYPE))
    } else {
        // Passed through: as the element it was read from (`ds::store_passed`).
        <T as Element>::from_bits(T::TYPE.bits_from_compute(v.bits()))
    }
}

/// The host CPU (rayon's global pool).
pub(crate) struct HostBackend;

impl HostBackend {
    /// The one host backend.
    pub fn get() -> Arc<HostBackend> {
        static H: std::sync::OnceLock<Arc<HostBackend>> = std::sync::OnceLock::new();
        H.get_or_init(|| {
            log::debug!("the host backend: {} threads", rayon::current_num_threads());
            Arc::new(HostBackend)
        })
        .clone()
    }
}

/// Each pair of value columns (of `a`, of `b`) at the origins `from` of a merge or a set
/// operation.
fn merged_values(values: &[(&Source, &Source)], from: &[u64]) -> Result<Vec<Column>> {
    values
        .iter()
        .map(|(va, vb)| {
            with_type!(va.ty(), V => {
                column(merge::values(&HostSrc::<V>::new(va)?, &HostSrc::<V>::new(vb)?, from))
            })
        })
        .collect()
}

impl Backend for HostBackend {
    fn name(&self) -> String {
        format!("host ({} threads)", rayon::current_num_threads())
    }

    fn is_cuda(&self) -> bool {
        false
    }

    fn synchronize(&self) -> Result<()> {
        Ok(())
    }

    fn time(&self, f: &mut dyn FnMut() -> Result<()>) -> Result<f64> {
        let t = std::time::Instant::now();
        f()?;
        Ok(t.elapsed().as_secs_f64() * 1e3)
    }

    fn memory(&self) -> Result<(usize, usize)> {
        Ok((0, 0))
    }

    fn memory_in_use(&self) -> usize {
        IN_USE.load(Ordering::Relaxed)
    }

    fn peak_memory_in_use(&self) -> usize {
        PEAK.load(Ordering::Relaxed)
    }

    fn reset_peak_memory(&self) {
        PEAK.store(IN_USE.load(Ordering::Relaxed), Ordering::Relaxed);
    }

    fn upload(&self, ty: ScalarType, bytes: &[u8], len: usize) -> Result<Column> {
        if bytes.len() != len * ty.size() {
            return Err(Error::Internal("an upload of the wrong size".into()));
        }
        // The bytes may not be aligned for `T` (a tuple's component): copy them.
        with_type!(ty, T => {
            let mut v = vec![T::default(); len];
            T::from_stored(bytes, &mut v);
            column(v)
        })
    }

    fn download(&self, src: &Source, out: &mut [u8]) -> Result<()> {
        with_type!(src.ty(), T => {
            let s = HostSrc::<T>::new(src)?;
            let size = std::mem::size_of::<T>();
            out.par_chunks_mut(CHUNK * size)
                .enumerate()
                .for_each(|(c, o)| o.copy_from_slice(bytemuck::cast_slice(&s.chunk(c))));
            Ok(())
        })
    }

    fn materialize(&self, src: &Source) -> Result<Column> {
        room_for(src.ty(), src.len)?;
        with_type!(src.ty(), T => column(HostSrc::<T>::new(src)?.to_vec()))
    }

    fn reduce(&self, src: &Source, op: Op) -> Result<u64> {
        with_type!(src.ty(), T => {
            let r = reduce::reduce(&HostSrc::<T>::new(src)?, op);
            Ok(Element::to_bits(T::from_compute(r)))
        })
    }

    fn reduce_to_column(&self, src: &Source, op: Op) -> Result<Column> {
        let bits = self.reduce(src, op)?;
        with_type!(src.ty(), T => column(vec![<T as Element>::from_bits(bits)]))
    }

    fn scan(&self, src: &Source, op: Op, init: Init) -> Result<Column> {
        room_for(src.ty(), src.len)?;
        with_type!(src.ty(), T => column(scan::scan(&HostSrc::<T>::new(src)?, op, init)))
    }

    fn segmented_scan(&self, src: &Source, flags: &Source, op: Op, init: Init) -> Result<Column> {
        room_for(src.ty(), src.len)?;
        let f = HostSrc::<u8>::new(flags)?;
        with_type!(src.ty(), T => {
            column(segment::scan(&HostSrc::<T>::new(src)?, &f, op, init))
        })
    }

    fn segmented_reduce(
        &self,
        src: &Source,
        flags: &Source,
        op: Op,
        _segments: Option<usize>,
    ) -> Result<Column> {
        let f = HostSrc::<u8>::new(flags)?;
        with_type!(src.ty(), T => {
            column(segment::reduce(&HostSrc::<T>::new(src)?, &f, op))
        })
    }

    fn head_flags(&self, src: &Source) -> Result<Column> {
        room(src.len)?;
        with_type!(src.ty(), T => column(segment::head_flags(&HostSrc::<T>::new(src)?)))
    }

    fn compact(&self, src: &Source, flags: &Source) -> Result<Column> {
        let f = HostSrc::<u8>::new(flags)?;
        with_type!(src.ty(), T => column(compact::compact(&HostSrc::<T>::new(src)?, &f)))
    }

    fn gather(&self, src: &Source, idx: &Source) -> Result<Column> {
        room_for(src.ty(), idx.len)?;
        with_type!(src.ty(), T => {
            let s = HostSrc::<T>::new(src)?;
            let v = match idx.ty() {
                ScalarType::U32 => gather::gather(&s, &HostSrc::<u32>::new(idx)?)?,
                _ => gather::gather(&s, &HostSrc::<u64>::new(idx)?)?,
            };
            column(v)
        })
    }

    fn scatter(&self, vals: &Source, idx: &Source, base: &Source) -> Result<Column> {
        room_for(vals.ty(), base.len)?;
        with_type!(vals.ty(), T => {
            let (v, b) = (HostSrc::<T>::new(vals)?, HostSrc::<T>::new(base)?);
            let out = match idx.ty() {
                ScalarType::U32 => gather::scatter(&v, &HostSrc::<u32>::new(idx)?, &b)?,
                _ => gather::scatter(&v, &HostSrc::<u64>::new(idx)?, &b)?,
            };
            column(out)
        })
    }

    fn scatter_into(&self, vals: &Source, idx: &Source, out: &mut Source) -> Result<()> {
        with_type!(vals.ty(), T => {
            // In place where `out` is one stored column whose memory nothing else holds.
            if let Some((host, off, len)) = out.sole_storage_mut::<HostStore>()
                && let Some(data) = host.data.as_any_mut().downcast_mut::<Vec<T>>()
            {
                let (v, rows) = (HostSrc::<T>::new(vals)?, &mut data[off..off + len]);
                return match idx.ty() {
                    ScalarType::U32 => gather::scatter_in_place(&v, &HostSrc::<u32>::new(idx)?, rows),
                    _ => gather::scatter_in_place(&v, &HostSrc::<u64>::new(idx)?, rows),
                };
            }
            super::scatter_anew(self, vals, idx, out)
        })
    }

    fn scatter_combine(
        &self,
        vals: &Source,
        idx: &Source,
        base: &Source,
        op: Op,
    ) -> Result<Column> {
        room_for(vals.ty(), base.len)?;
        with_type!(vals.ty(), T => {
            let (v, b) = (HostSrc::<T>::new(vals)?, HostSrc::<T>::new(base)?);
            let out = match idx.ty() {
                ScalarType::U32 => combine::scatter_combine(&v, &HostSrc::<u32>::new(idx)?, &b, op)?,
                _ => combine::scatter_combine(&v, &HostSrc::<u64>::new(idx)?, &b, op)?,
            };
            column(out)
        })
    }

    fn sort(
        &self,
        keys: &Source,
        values: Option<SortValues<'_>>,
        descending: bool,
    ) -> Result<(Column, Option<Column>)> {
        // The keys with their positions, 8 bytes more each.
        room(keys.len.saturating_mul(keys.ty().size() + 8))?;
        let (k, order) = with_type!(keys.ty(), K => {
            let k = HostSrc::<K>::new(keys)?;
            match values {
                None => return Ok((column(sort::sort(&k, descending))?, None)),
                Some(_) => {
                    let (ks, order) = sort::sort_order(&k, descending);
                    (column(ks)?, order)
                }
            }
        });
        let vals = values.map(|v| v.values);
        let Some(v) = vals else {
            return Ok((k, None));
        };
        let stored = self.materialize(v)?;
        let moved = sort::permute_bytes(column_bytes(&stored)?, v.ty().size(), &order);
        Ok((k, Some(self.upload(v.ty(), &moved, order.len())?)))
    }

    fn search(
        &self,
        hay: &Source,
        needles: &Source,
        upper: bool,
        idx: ScalarType,
        _ascending_needles: bool,
    ) -> Result<Column> {
        room_for(idx, needles.len)?;
        with_type!(hay.ty(), T => {
            let (h, q) = (HostSrc::<T>::new(hay)?, HostSrc::<T>::new(needles)?);
            match idx {
                ScalarType::U32 => column(search::search::<T, u32>(&h, &q, upper)),
                _ => column(search::search::<T, u64>(&h, &q, upper)),
            }
        })
    }

    fn merge(
        &self,
        a: &Source,
        b: &Source,
        values: &[(&Source, &Source)],
    ) -> Result<(Column, Vec<Column>)> {
        room_for(a.ty(), a.len.saturating_add(b.len))?;
        let (keys, from) = with_type!(a.ty(), T => {
            let (keys, from) = merge::merge(&HostSrc::<T>::new(a)?, &HostSrc::<T>::new(b)?);
            (column(keys)?, from)
        });
        Ok((keys, merged_values(values, &from)?))
    }

    fn set_op(
        &self,
        a: &Source,
        b: &Source,
        op: SetOp,
        values: &[(&Source, &Source)],
    ) -> Result<(Column, Vec<Column>)> {
        room_for(a.ty(), op.room(a.len, b.len))?;
        let (keys, from) = with_type!(a.ty(), T => {
            let (keys, from) = merge::set_op(&HostSrc::<T>::new(a)?, &HostSrc::<T>::new(b)?, op);
            (column(keys)?, from)
        });
        Ok((keys, merged_values(values, &from)?))
    }

    fn reduce_with(&self, srcs: &[Source], c: &Combiner) -> Result<Vec<u64>> {
        assoc::reduce(srcs, c)
    }

    fn scan_with(&self, srcs: &[Source], c: &Combiner, mode: &ScanMode) -> Result<Vec<Column>> {
        assoc::scan(srcs, c, mode)
    }

    fn histogram(&self, src: &Source, bins: usize, lo: u64, hi: u64) -> Result<Column> {
        with_type!(src.ty(), T => {
            let (lo, hi) = (T::from_compute_bits(lo), T::from_compute_bits(hi));
            column(histogram::histogram(&HostSrc::<T>::new(src)?, bins, lo, hi)?)
        })
    }
}
