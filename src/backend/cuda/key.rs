//! Kernel keys: what names one compiled kernel instance. A key is typed data, hashed and
//! compared without any formatting; the C++ that instantiates the kernel is printed only when
//! the key is not in the cache (`jit.rs`).
//!
//! A key is the family's own key (its launch policy and flags, the operator among them) and the
//! keys of the sources the kernel reads (their element types, expression shapes and alignment).
//! `families!` declares every family's key once; from that one list come the Rust struct, the
//! C++ class template of its flags and the instance's name expression, so that no template
//! argument is written by position twice. Each family's file implements `Template` for its key:
//! the kernel file and template, the parameter struct the kernel takes, its dynamic shared
//! memory, and the variants a compile check builds.

use super::params::KernelParams;
use super::source::SourceKey;
use super::tuning::Shape;
use crate::backend::SetOp;
use crate::expr::combiner::CombinerShape;
use crate::item::ScalarType;
use crate::op::Op;
use std::sync::Arc;

/// A family's key: how it becomes a kernel template instance. The instance's name expression
/// is the family's kernel with its template arguments: `ds_F` (kernels of custom operators),
/// the launch policy (`Launch`), the family's flags (the key's other fields, as the C++
/// class template `ds::<Family>Flags` that `families!` prints), then its sources' types.
pub(crate) trait Template: Copy + Into<Family> {
    /// The parameter struct the kernel takes after its sources.
    type Params: KernelParams;
    /// The kernel file in `kernels/` that defines the template.
    const FILE: &'static str;
    /// The kernel template's name.
    const KERNEL: &'static str;
    /// Whether the kernel takes its parameter struct first, then its sources (variadic
    /// templates, whose parameter pack comes last).
    const PARAMS_FIRST: bool = false;
    /// Bytes of dynamic shared memory a block of the instance takes, given its sources'
    /// element types (what the launch asks for; the compile check checks that they fit beside
    /// the static ones).
    fn dynamic_smem(&self, _types: &[ScalarType]) -> u32 {
        0
    }
}

/// A kernel's launch policy, every family's first template argument (`ds::Launch`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Launch {
    /// Threads a block.
    pub block: u32,
    /// Items a thread takes of a tile: rounds of `vec`-element accesses, or single elements
    /// where `vec` is 1 (0: the family takes no such count).
    pub items: u32,
    /// Elements an access (0: the kernel's own, by its element size).
    pub vec: u32,
    /// Blocks a multiprocessor the kernel is compiled for, its launch bounds (0: no bound).
    pub minb: u32,
}

impl Launch {
    /// Threads a block only.
    pub fn block(block: u32) -> Launch {
        Launch {
            block,
            items: 0,
            vec: 0,
            minb: 0,
        }
    }

    /// Its threads a block and items a thread, as the tuning's `Shape`.
    pub fn shape(&self) -> Shape {
        Shape {
            block: self.block,
            rounds: self.items,
        }
    }

    /// The C++ class template (`ds::Launch`).
    fn cpp_template() -> String {
        cpp_template(
            "Launch",
            &[
                ("block", <u32 as CppArg>::KIND),
                ("items", <u32 as CppArg>::KIND),
                ("vec", <u32 as CppArg>::KIND),
                ("minb", <u32 as CppArg>::KIND),
            ],
        )
    }

    /// This policy's instance of it.
    fn cpp(&self) -> String {
        let args = [self.block, self.items, self.vec, self.minb].map(|v| v.cpp());
        format!("ds::Launch<{}>", args.join(", "))
    }
}

/// A key field as a C++ template argument: a value of `KIND`'s type, or a type (`KIND` "class").
pub(crate) trait CppArg {
    /// The template parameter's kind: a C++ value type, or `class`.
    const KIND: &'static str;
    /// The argument.
    fn cpp(&self) -> String;
}
impl CppArg for u32 {
    const KIND: &'static str = "u32";
    fn cpp(&self) -> String {
        self.to_string()
    }
}
impl CppArg for bool {
    const KIND: &'static str = "bool";
    fn cpp(&self) -> String {
        self.to_string()
    }
}
impl CppArg for Op {
    const KIND: &'static str = "class";
    fn cpp(&self) -> String {
        op_functor(*self).into()
    }
}
impl CppArg for ScalarType {
    const KIND: &'static str = "class";
    fn cpp(&self) -> String {
        self.cuda_name().into()
    }
}
impl CppArg for SetOp {
    const KIND: &'static str = "int";
    fn cpp(&self) -> String {
        let n = match self {
            SetOp::Union => 0,
            SetOp::Intersection => 1,
            SetOp::Difference => 2,
            SetOp::SymmetricDifference => 3,
        };
        n.to_string()
    }
}

/// `template <..> struct ds::NAME`, whose members are named as the parameters: a type member
/// for a `class` one, else an enumerator of that type (not a static constant, which NVRTC
/// emits as a global variable).
fn cpp_template(name: &str, params: &[(&str, &str)]) -> String {
    let heads: Vec<String> = params.iter().map(|(f, k)| format!("{k} {f}_")).collect();
    let mut s = format!(
        "namespace ds {{ template <{}> struct {name} {{",
        heads.join(", ")
    );
    for (f, k) in params {
        match *k {
            "class" => s.push_str(&format!(" typedef {f}_ {f};")),
            _ => s.push_str(&format!(" enum : {k} {{ {f} = {f}_ }};")),
        }
    }
    s.push_str(" }; }\n");
    s
}

/// The C++ name of a family's flags template: its key's name, `Key` replaced by `Flags`.
fn flags_name(key: &str) -> String {
    format!("{}Flags", key.trim_end_matches("Key"))
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

/// Declares every family: its key (a launch policy and the family's flags, the fields listed),
/// the flags' C++ class template printed from the same list, and the instance's name
/// expression.
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
                pub launch: Launch,
                $(pub $field: $ty,)*
            }

            impl From<$key> for Family {
                fn from(k: $key) -> Family {
                    Family::$variant(k)
                }
            }

            impl $key {
                /// The flags' C++ class template, none where the family has no flags.
                fn flags_template() -> Option<String> {
                    let params: &[(&str, &str)] =
                        &[$((stringify!($field), <$ty as CppArg>::KIND)),*];
                    (!params.is_empty())
                        .then(|| cpp_template(&flags_name(stringify!($key)), params))
                }

                /// This key's instance of the flags' template.
                #[allow(unused_mut)]
                fn flags(&self) -> Option<String> {
                    let mut args: Vec<String> = Vec::new();
                    $(args.push(CppArg::cpp(&self.$field));)*
                    (!args.is_empty()).then(|| {
                        format!("ds::{}<{}>", flags_name(stringify!($key)), args.join(", "))
                    })
                }

                /// The name expression, given whether the kernel takes a functor and the C++
                /// names of the sources' types.
                fn name(&self, functor: bool, sources: &[String]) -> String {
                    let mut args: Vec<String> = Vec::new();
                    if functor {
                        args.push("ds_F".into());
                    }
                    args.push(self.launch.cpp());
                    args.extend(self.flags());
                    args.extend(sources.iter().cloned());
                    format!("{}<{}>", <$key as Template>::KERNEL, args.join(", "))
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

            /// The name expression, given whether the kernel takes a functor (`ds_F`) and the
            /// C++ names of the sources' types.
            pub fn name(&self, functor: bool, sources: &[String]) -> String {
                match self {
                    $(Family::$variant(k) => k.name(functor, sources),)*
                }
            }

            /// Bytes of dynamic shared memory a block takes (`Template::dynamic_smem`).
            #[cfg(test)]
            pub fn dynamic_smem(&self, types: &[ScalarType]) -> u32 {
                match self {
                    $(Family::$variant(k) => k.dynamic_smem(types),)*
                }
            }

            /// The C++ definitions every kernel's translation unit starts with: the twins of
            /// every family's parameter struct (a kernel file defines the kernels of several
            /// families), `ds::Launch` and every family's flags template.
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
                    s.push_str(&Launch::cpp_template());
                    $(s.extend($key::flags_template());)*
                    s
                })
            }
        }
    };
}

families! {
    /// Materializing a source (`kernels/map.cu`).
    Map(MapKey {}),
    /// Reduction of a source (`kernels/reduce.cu`).
    Reduce(ReduceKey { op: Op }),
    /// Inclusive and exclusive scans (`kernels/scan.cu`).
    Scan(ScanKey { op: Op, exclusive: bool }),
    /// Segmented scans (`kernels/segment.cu`).
    SegScan(SegScanKey { op: Op, exclusive: bool }),
    /// One value per segment (`kernels/segment.cu`); `wide`: 64-bit segment counts; `keys`:
    /// the key at each segment's head too (reduce_by_key).
    SegReduce(SegReduceKey { op: Op, wide: bool, keys: bool }),
    /// Head flags of runs (`kernels/segment.cu`).
    HeadFlags(HeadFlagsKey {}),
    /// Stream compaction (`kernels/compact.cu`); `wide`: 64-bit counts; `own`: the flags are
    /// computed from the staged values (lazy flags over the values' column alone).
    Compact(CompactKey { wide: bool, own: bool }),
    /// Gather (`kernels/gather.cu`).
    Gather(GatherKey {}),
    /// Scatter (`kernels/gather.cu`).
    Scatter(ScatterKey {}),
    /// Scatter with the copy of its base, in one cooperative launch (`kernels/gather.cu`).
    ScatterBase(ScatterBaseKey {}),
    /// How far apart a scatter's writes are (`kernels/gather.cu`).
    Spread(SpreadKey {}),
    /// The radix sort's digit counts and plan (`kernels/sort.cu`); `check`: keys are indices
    /// whose bounds it checks.
    SortHist(SortHistKey { desc: bool, check: bool }),
    /// One radix sort pass (`kernels/sort.cu`).
    SortPass(SortPassKey { values: bool, desc: bool }),
    /// A whole radix sort in one block, for keys that fit one tile (`kernels/sort.cu`);
    /// `check`: as the histogram's.
    SortTile(SortTileKey { values: bool, desc: bool, check: bool }),
    /// The runs of scatter_combine (`kernels/combine.cu`).
    Combine(CombineKey { idx: ScalarType, op: Op }),
    /// scatter_combine of one tile in one launch: the block's sort of the pairs, then their
    /// runs (`kernels/combine.cu`).
    CombineTile(CombineTileKey { op: Op }),
    /// Chunk totals of a custom operator, then its result or the chunks' prefixes
    /// (`kernels/assoc.cu`); `mode` 0: reduce, 1: prefixes, 2: reduce by a commutative
    /// operator; `own`: the components computed from component 0's loaded elements (a bit
    /// each).
    AssocReduce(AssocReduceKey { mode: u32, own: u32 }),
    /// The scan of each chunk by a custom operator (`kernels/assoc.cu`); `mode` 0: inclusive,
    /// 1: exclusive, 2: segmented exclusive.
    AssocScan(AssocScanKey { mode: u32 }),
    /// The single-pass scan by a custom operator (`kernels/assoc.cu`), modes as `AssocScan`'s;
    /// `grouped`: the look-back over groups of 32 tiles (`tile_lookback_grouped`), else tile
    /// by tile.
    AssocScanLookback(AssocScanLookbackKey { mode: u32, grouped: bool }),
    /// Vectorized binary search (`kernels/search.cu`); `upper`: upper_bound; `idx`: the
    /// positions' type; `split`: samples of the haystack in shared memory.
    Search(SearchKey { upper: bool, idx: ScalarType, split: u32 }),
    /// The cuts of a merge's tiles (`kernels/merge.cu`).
    MergeSplit(MergeSplitKey { tile: u32 }),
    /// A merge's tiles (`kernels/merge.cu`); `keys`, `values`: what it stores.
    Merge(MergeKey { keys: bool, values: bool }),
    /// Ranks of sorted needles in a haystack by merging them (`kernels/merge.cu`); `side_b`:
    /// the needles are the merge's second input (upper_bound); `idx`: the ranks' type.
    MergeRank(MergeRankKey { side_b: bool, idx: ScalarType }),
    /// A set operation in one pass over merge path (`kernels/merge.cu`); `wide`: 64-bit counts;
    /// `keys`, `values`: what it stores.
    SetOp(SetOpKey { op: SetOp, wide: bool, keys: bool, values: bool }),
    /// Histogram (`kernels/histogram.cu`); `wide`: 128-bit bin products; `smem`: shared
    /// counters.
    Histogram(HistogramKey { wide: bool, smem: bool }),
}
