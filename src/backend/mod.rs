//! The backends: one object-safe trait, `Backend`, with one method per algorithm family, each
//! taking sources (`src/source.rs`) and returning stored columns. `DeviceSeq` validates its
//! arguments and makes one call; the host (`host/`) and the CUDA GPU (`cuda/`) implement it.
//!
//! Every method may assume what `DeviceSeq` checked: the sources are of this backend, lengths
//! match, the operator applies to the element type, arguments are in range.

pub(crate) mod cuda;
pub(crate) mod host;

use crate::error::Result;
use crate::expr::combiner::Combiner;
use crate::item::ScalarType;
use crate::op::Op;
use crate::source::{Column, Source};

/// What a sort moves along with its keys.
pub(crate) struct SortValues<'a> {
    pub values: &'a Source,
}

/// Where a scan starts: `None` for the inclusive scan, else the exclusive scan's `init`
/// (compute bits).
pub(crate) type Init = Option<u64>;

/// What a scan by a combiner writes at element `i`, `q` being the combination of the elements
/// before `i` and `x` element `i` (initial values as compute bits, one a component).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ScanMode {
    /// `q ⊕ x` (`x` at `i == 0`).
    Inclusive,
    /// `init ⊕ q` (`init` at `i == 0`).
    Exclusive(Vec<u64>),
    /// For a segmented combiner: `init` where `x` is a head, else `q` (whose segment's first
    /// element the caller has combined with `init` already).
    SegmentedExclusive(Vec<u64>),
}

/// One of the four set operations over ascending keys, with the multiset semantics of C++'s
/// `std::set_*`: of a key that `a` holds `m` times and `b` `n` times, the union keeps `a`'s
/// `m` copies and `b`'s last `n - m`, the intersection `a`'s first `min(m, n)`, the difference
/// `a`'s last `m - n`, the symmetric difference both differences; in merge order (ties: `a`'s
/// copies first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum SetOp {
    Union,
    Intersection,
    Difference,
    SymmetricDifference,
}

impl SetOp {
    /// Whether a copy from `a` is kept, given whether `b` matches it (holds more copies of its
    /// key than come before it in `a`).
    pub fn keeps_a(self, matched: bool) -> bool {
        match self {
            SetOp::Union => true,
            SetOp::Intersection => matched,
            SetOp::Difference | SetOp::SymmetricDifference => !matched,
        }
    }

    /// Whether a copy from `b` is kept, given whether `a` leaves it unmatched (holds no more
    /// copies of its key than come before it in `b`).
    pub fn keeps_b(self, unmatched: bool) -> bool {
        matches!(self, SetOp::Union | SetOp::SymmetricDifference) && unmatched
    }

    /// The most elements the result of `na` and `nb` keys can have.
    pub fn room(self, na: usize, nb: usize) -> usize {
        match self {
            SetOp::Union | SetOp::SymmetricDifference => na + nb,
            SetOp::Intersection | SetOp::Difference => na,
        }
    }
}

/// A device's implementation of every primitive.
pub(crate) trait Backend: Send + Sync {
    /// The device's name, e.g. `"NVIDIA H100 80GB HBM3"` or `"host (16 threads)"`.
    fn name(&self) -> String;
    /// Whether this is a CUDA GPU.
    fn is_cuda(&self) -> bool;
    /// The CUDA backend itself, for interoperation with cudarc (`None` on the host).
    fn cuda(&self) -> Option<&cuda::CudaBackend> {
        None
    }
    /// Waits for all work queued so far.
    fn synchronize(&self) -> Result<()>;
    /// Waits until the kernels compiled so far run in their optimized form (nothing to wait
    /// for where nothing is compiled).
    fn finish_compiling(&self) {}
    /// Runs `f` and returns the milliseconds its device work took.
    fn time(&self, f: &mut dyn FnMut() -> Result<()>) -> Result<f64>;
    /// Total and free memory in bytes (zeros where there is no fixed pool).
    fn memory(&self) -> Result<(usize, usize)>;
    /// Bytes held now for sequences and work in flight; the high-water mark since the last
    /// reset; the reset.
    fn memory_in_use(&self) -> usize;
    fn peak_memory_in_use(&self) -> usize;
    fn reset_peak_memory(&self);
    /// Gives the memory kept for reuse back (nothing to give where none is kept).
    fn trim_memory(&self) -> Result<()> {
        Ok(())
    }
    /// Keeps at most `bytes` for reuse from now on.
    fn set_kept_memory_limit(&self, _bytes: usize) -> Result<()> {
        Ok(())
    }

    /// A column holding `len` elements of type `ty` from `bytes` (their stored bits).
    fn upload(&self, ty: ScalarType, bytes: &[u8], len: usize) -> Result<Column>;
    /// The elements of `src` as stored bits, into `out` (`src.len` elements of its type).
    fn download(&self, src: &Source, out: &mut [u8]) -> Result<()>;
    /// The elements of `src`, stored (a copy where it is stored already).
    fn materialize(&self, src: &Source) -> Result<Column>;

    /// The `op`-combination of the `len > 0` elements: stored bits of the element type.
    fn reduce(&self, src: &Source, op: Op) -> Result<u64>;
    /// As `reduce`, left on the device as a one-element column (no wait).
    fn reduce_to_column(&self, src: &Source, op: Op) -> Result<Column>;
    /// Inclusive scan, or exclusive from `init`.
    fn scan(&self, src: &Source, op: Op, init: Init) -> Result<Column>;
    /// The segmented scans: `flags` (u8) of the same length start segments.
    fn segmented_scan(&self, src: &Source, flags: &Source, op: Op, init: Init) -> Result<Column>;
    /// One value per segment; `segments`, where the caller knows it (the heads compacted
    /// beside), saves counting them.
    fn segmented_reduce(
        &self,
        src: &Source,
        flags: &Source,
        op: Op,
        segments: Option<usize>,
    ) -> Result<Column>;
    /// For each segment of `flags` over `keys` and `values` (the same length): the key at its
    /// head and the `op`-combination of its values (`reduce_by_key`). By default the keys
    /// compacted at the heads, then a segmented reduction of the values.
    fn reduce_by_key(
        &self,
        keys: &Source,
        values: &Source,
        flags: &Source,
        op: Op,
    ) -> Result<(Column, Column)> {
        let k = self.compact(keys, flags)?;
        let v = self.segmented_reduce(values, flags, op, Some(k.len))?;
        Ok((k, v))
    }
    /// `true` where an element's bits differ from those before it (and at 0), as `bool`s.
    fn head_flags(&self, src: &Source) -> Result<Column>;
    /// The elements whose flag is nonzero, in order.
    fn compact(&self, src: &Source, flags: &Source) -> Result<Column>;
    /// `out[i] = src[idx[i]]`; `IndexOutOfBounds` for an index past `src.len`.
    fn gather(&self, src: &Source, idx: &Source) -> Result<Column>;
    /// `base` with `out[idx[i]] = vals[i]`.
    fn scatter(&self, vals: &Source, idx: &Source, base: &Source) -> Result<Column>;
    /// `out[idx[i]] = vals[i]` into `out`: by default `out` becomes `scatter`'s new column; a
    /// backend may write into `out`'s own memory where nothing else shares it.
    fn scatter_into(&self, vals: &Source, idx: &Source, out: &mut Source) -> Result<()> {
        scatter_anew(self, vals, idx, out)
    }
    /// `base` with every `vals[i]` combined into `out[idx[i]]`, in order.
    fn scatter_combine(&self, vals: &Source, idx: &Source, base: &Source, op: Op)
    -> Result<Column>;
    /// The keys sorted (stably, in the `total_cmp` order for floats; ascending, or
    /// descending), with their values.
    fn sort(
        &self,
        keys: &Source,
        values: Option<SortValues<'_>>,
        descending: bool,
    ) -> Result<(Column, Option<Column>)>;
    /// For each needle, the first position of the sorted `hay` whose element is `>=` it
    /// (`>` where `upper`) in the `total_cmp` order, as indices of type `idx` (u32 or u64).
    /// `ascending_needles`: the caller knows the needles ascending, so neighbouring searches
    /// share their paths already (no reordering of them pays).
    fn search(
        &self,
        hay: &Source,
        needles: &Source,
        upper: bool,
        idx: ScalarType,
        ascending_needles: bool,
    ) -> Result<Column>;
    /// The stable merge of the sorted `a` and `b` (ties from `a` first, the `total_cmp` order
    /// for floats), and each pair of value columns (of `a`, of `b`) moved with its keys.
    fn merge(
        &self,
        a: &Source,
        b: &Source,
        values: &[(&Source, &Source)],
    ) -> Result<(Column, Vec<Column>)>;
    /// The set operation `op` of the ascending `a` and `b` (the `total_cmp` order for floats;
    /// equal keys are equal bits), and each pair of value columns (of `a`, of `b`) moved with
    /// the kept keys.
    fn set_op(
        &self,
        a: &Source,
        b: &Source,
        op: SetOp,
        values: &[(&Source, &Source)],
    ) -> Result<(Column, Vec<Column>)>;
    /// The combination by `c` of the `len > 0` items whose components are `srcs`, as compute
    /// bits, in order.
    fn reduce_with(&self, srcs: &[Source], c: &Combiner) -> Result<Vec<u64>>;
    /// The scan by `c` of the items whose components are `srcs`: the first `c.stored`
    /// components of each result, stored.
    fn scan_with(&self, srcs: &[Source], c: &Combiner, mode: &ScanMode) -> Result<Vec<Column>>;
    /// Counts of `bins` equal-width bins over `[lo, hi)` (compute bits), as u64.
    fn histogram(&self, src: &Source, bins: usize, lo: u64, hi: u64) -> Result<Column>;
}

/// `out` replaced by `scatter`'s new column (`Backend::scatter_into` where `out`'s memory cannot
/// be written in place).
pub(crate) fn scatter_anew<B: Backend + ?Sized>(
    b: &B,
    vals: &Source,
    idx: &Source,
    out: &mut Source,
) -> Result<()> {
    let col = b.scatter(vals, idx, out)?;
    *out = Source::column(col);
    Ok(())
}
