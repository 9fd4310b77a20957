//! Kernel keys: what names one compiled kernel instance. A key is typed data, hashed and
//! compared without any formatting; the C++ that instantiates the kernel is printed only when
//! the key is not in the cache (`jit.rs`).
//!
//! A key is the family's own key (its operator, flags and launch shape) and the keys of the
//! sources the kernel reads (their element types, expression shapes and alignment). Each
//! family's file implements `Template` for its key: the kernel file, the template's name
//! expression, the parameter struct the kernel takes, and the variants a compile check
//! builds.

use super::params::KernelParams;
use super::source::SourceKey;
use crate::backend::SetOp;
use crate::expr::combiner::CombinerShape;
use crate::item::ScalarType;
use crate::op::Op;
use std::sync::Arc;

/// A family's key: how it becomes a kernel template instance.
pub(crate) trait Template: Copy + Into<Family> {
    /// The parameter struct the kernel takes after its sources.
    type Params: KernelParams;
    /// The kernel file in `kernels/` that defines the template.
    const FILE: &'static str;
    /// Whether the kernel takes its parameter struct first, then its sources (variadic
    /// templates, whose parameter pack comes last).
    const PARAMS_FIRST: bool = false;
    /// The name expression of the instance, given the C++ names of its sources' types.
    fn name(&self, sources: &[String]) -> String;
    /// Bytes of dynamic shared memory a block of the instance takes, given its sources'
    /// element types (what the launch asks for; the compile check checks that they fit beside
    /// the static ones).
    fn dynamic_smem(&self, _types: &[ScalarType]) -> u32 {
        0
    }
}

/// The key of one kernel instance.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct KernelKey {
    /// The combiner a kernel of custom operators is instantiated with (printed as the
    /// functor `ds_F`), none for the others.
    pub functor: Option<Arc<CombinerShape>>,
    pub family: Family,
    pub sources: Vec<SourceKey>,
}

/// The C++ functor of an operator.
pub(crate) fn op_functor(op: Op) -> &'static str {
    match op {
        Op::Add => "ds::OpAdd",
        Op::Mul => "ds::OpMul",
        Op::Min => "ds::OpMin",
        Op::Max => "ds::OpMax",
        Op::BitAnd => "ds::OpAnd",
        Op::BitOr => "ds::OpOr",
        Op::BitXor => "ds::OpXor",
    }
}

macro_rules! families {
    ($($(#[$doc:meta])* $variant:ident($key:ident { $($field:ident: $ty:ty),* $(,)? }),)*) => {
        /// Every kernel family, with its key.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub(crate) enum Family {
            $($variant($key),)*
        }

        $(
            $(#[$doc])*
            #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
            pub(crate) struct $key {
                $(pub $field: $ty,)*
            }

            impl From<$key> for Family {
                fn from(k: $key) -> Family {
                    Family::$variant(k)
                }
            }
        )*

        impl Family {
            /// The kernel file.
            pub fn file(&self) -> &'static str {
                match self {
                    $(Family::$variant(_) => <$key as Template>::FILE,)*
                }
            }

            /// The name expression, given the C++ names of the sources' types.
            pub fn name(&self, sources: &[String]) -> String {
                match self {
                    $(Family::$variant(k) => k.name(sources),)*
                }
            }

            /// Bytes of dynamic shared memory a block takes (`Template::dynamic_smem`).
            #[cfg(test)]
            pub fn dynamic_smem(&self, types: &[ScalarType]) -> u32 {
                match self {
                    $(Family::$variant(k) => k.dynamic_smem(types),)*
                }
            }

            /// The C++ twins of every family's parameter struct (a kernel file defines the
            /// kernels of several families).
            pub fn all_params() -> &'static str {
                static P: std::sync::OnceLock<String> = std::sync::OnceLock::new();
                P.get_or_init(|| {
                    // Once each: families may share a parameter struct. (`ds::Words` first:
                    // a field type of some.)
                    let mut s = super::params::Words::cpp();
                    $(
                        let p = <<$key as Template>::Params as KernelParams>::cpp();
                        if !s.contains(&p) {
                            s.push_str(&p);
                        }
                    )*
                    s
                })
            }
        }
    };
}

families! {
    /// Materializing a source (`kernels/map.cu`).
    Map(MapKey { block: u32, vec: u32, rounds: u32 }),
    /// Reduction of a source (`kernels/reduce.cu`).
    Reduce(ReduceKey { op: Op, block: u32, vec: u32, rounds: u32, minb: u32 }),
    /// Inclusive and exclusive scans (`kernels/scan.cu`).
    Scan(ScanKey { op: Op, block: u32, rounds: u32, minb: u32, exclusive: bool }),
    /// Segmented scans (`kernels/segment.cu`).
    SegScan(SegScanKey { op: Op, block: u32, rounds: u32, minb: u32, exclusive: bool }),
    /// One value per segment (`kernels/segment.cu`); `wide`: 64-bit segment counts; `keys`:
    /// the key at each segment's head too (reduce_by_key).
    SegReduce(SegReduceKey { op: Op, wide: bool, keys: bool, block: u32, rounds: u32, minb: u32 }),
    /// Head flags of runs (`kernels/segment.cu`).
    HeadFlags(HeadFlagsKey { block: u32 }),
    /// Stream compaction (`kernels/compact.cu`); `wide`: 64-bit counts; `own`: the flags are
    /// computed from the staged values (lazy flags over the values' column alone).
    Compact(CompactKey { wide: bool, block: u32, rounds: u32, minb: u32, own: bool }),
    /// Gather (`kernels/gather.cu`).
    Gather(GatherKey { block: u32, vec: u32, rounds: u32 }),
    /// Scatter (`kernels/gather.cu`).
    Scatter(ScatterKey { block: u32, vec: u32, rounds: u32 }),
    /// Scatter with the copy of its base, in one cooperative launch (`kernels/gather.cu`).
    ScatterBase(ScatterBaseKey { block: u32, vec: u32, rounds: u32 }),
    /// How far apart a scatter's writes are (`kernels/gather.cu`).
    Spread(SpreadKey { block: u32 }),
    /// The radix sort's digit counts and plan (`kernels/sort.cu`); `check`: keys are indices
    /// whose bounds it checks.
    SortHist(SortHistKey { desc: bool, block: u32, check: bool }),
    /// One radix sort pass (`kernels/sort.cu`).
    SortPass(SortPassKey { values: bool, desc: bool, block: u32, items: u32, minb: u32 }),
    /// A whole radix sort in one block, for keys that fit one tile (`kernels/sort.cu`);
    /// `check`: as the histogram's.
    SortTile(SortTileKey { values: bool, desc: bool, block: u32, items: u32, check: bool }),
    /// The runs of scatter_combine (`kernels/combine.cu`).
    Combine(CombineKey { idx: ScalarType, op: Op, block: u32, rounds: u32, minb: u32 }),
    /// scatter_combine of one tile in one launch: the block's sort of the pairs, then their
    /// runs (`kernels/combine.cu`).
    CombineTile(CombineTileKey { op: Op, block: u32, rounds: u32 }),
    /// Chunk totals of a custom operator, then its result or the chunks' prefixes
    /// (`kernels/assoc.cu`); `mode` 0: reduce, 1: prefixes, 2: reduce by a commutative
    /// operator; `minb`: blocks a multiprocessor it is compiled for (0: no bound); `own`: the
    /// components computed from component 0's loaded elements (a bit each).
    AssocReduce(AssocReduceKey { block: u32, rounds: u32, vec: u32, mode: u32, minb: u32, own: u32 }),
    /// The scan of each chunk by a custom operator (`kernels/assoc.cu`); `mode` 0: inclusive,
    /// 1: exclusive, 2: segmented exclusive.
    AssocScan(AssocScanKey { block: u32, rounds: u32, vec: u32, mode: u32 }),
    /// The single-pass scan by a custom operator (`kernels/assoc.cu`), modes as `AssocScan`'s;
    /// `minb`: blocks a multiprocessor it is compiled for; `grouped`: the look-back over groups
    /// of 32 tiles (`tile_lookback_grouped`), else tile by tile.
    AssocScanLookback(AssocScanLookbackKey { block: u32, rounds: u32, vec: u32, mode: u32, minb: u32, grouped: bool }),
    /// Vectorized binary search (`kernels/search.cu`); `upper`: upper_bound; `idx`: the
    /// positions' type; `split`: samples of the haystack in shared memory.
    Search(SearchKey { upper: bool, idx: ScalarType, block: u32, split: u32 }),
    /// The cuts of a merge's tiles (`kernels/merge.cu`).
    MergeSplit(MergeSplitKey { tile: u32 }),
    /// A merge's tiles (`kernels/merge.cu`); `keys`, `values`: what it stores.
    Merge(MergeKey { keys: bool, values: bool, block: u32, items: u32 }),
    /// Ranks of sorted needles in a haystack by merging them (`kernels/merge.cu`); `side_b`:
    /// the needles are the merge's second input (upper_bound); `idx`: the ranks' type.
    MergeRank(MergeRankKey { side_b: bool, idx: ScalarType, block: u32, items: u32 }),
    /// A set operation in one pass over merge path (`kernels/merge.cu`); `wide`: 64-bit counts;
    /// `keys`, `values`: what it stores.
    SetOp(SetOpKey { op: SetOp, wide: bool, keys: bool, values: bool, block: u32, items: u32 }),
    /// Histogram (`kernels/histogram.cu`); `wide`: 128-bit bin products; `smem`: shared
    /// counters.
    Histogram(HistogramKey { wide: bool, smem: bool, block: u32 }),
}
