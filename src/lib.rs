//! devseq: data-parallel primitives over one sequence type, [`DeviceSeq<T>`], on NVIDIA GPUs
//! (CUDA kernels compiled at run time by NVRTC) or on the host (rayon), with the same answers.
//!
//! # A short tour
//!
//! ```
//! use devseq::{Device, DeviceSeq, Op};
//!
//! // The GPU where there is one (or as DEVSEQ_DEVICE says), else the host.
//! let dev = Device::auto()?;
//!
//! // Sequences come from host data or are generated on the device.
//! let xs = DeviceSeq::<f32>::sequence(&dev, 1000)?;
//!
//! // map takes a closure over symbolic values; it is compiled for the device.
//! let ys = xs.map(|x| (x * 0.5).floor())?;
//!
//! // Reductions return host values; scans return sequences.
//! assert_eq!(ys.reduce(Op::Max)?, 499.0);
//! let prefix = ys.inclusive_scan(Op::Add)?;
//! assert_eq!(prefix.slice(999..).to_vec()?, [249500.0]);
//!
//! // Segments are head flags; sort, histogram, gather and scatter round it off.
//! let flags = ys.head_flags()?;
//! let counts = DeviceSeq::filled(&dev, 1u32, 1000)?.segmented_reduce(&flags, Op::Add)?;
//! assert_eq!(counts.len(), 500);
//! assert!(counts.to_vec()?.iter().all(|&c| c == 2));
//! # Ok::<(), devseq::Error>(())
//! ```
//!
//! Every operation is deterministic: the same inputs on the same device give the same bits
//! on every run, float sums and scans included. Errors are values ([`Error`]); a failed call
//! leaves its inputs as they were.
//!
//! docs/guide.md walks through devices, sequences, expressions, segments, errors and the
//! kernel cache; docs/algorithms.md describes each GPU algorithm.

#![deny(missing_docs)]

mod backend;
mod device;
mod diagnostics;
mod error;
mod expr;
mod fault;
mod hash;
mod item;
mod op;
mod random;
mod seq;
mod sharded;
mod source;
#[doc(hidden)]
pub mod testing;

/// This crate's version, as in its `Cargo.toml` (`"0.1.0"`).
///
/// ```
/// assert_eq!(devseq::VERSION.split('.').count(), 3);
/// ```
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The cudarc crate devseq is built on (driver API and NVRTC), re-exported so that a program
/// mixing its own CUDA work with devseq's need not match its version.
pub use cudarc;
pub use device::Device;
pub use error::{Error, Result};
pub use expr::{Condition, IntoExpr, Unsigned};
pub use half::{bf16, f16};
pub use item::{Element, Expr, Exprs, Flag, Float, Index, Integer, Item, Key};
pub use op::Op;
pub use seq::{DeviceSeq, ZipSeqs};
pub use sharded::{DeviceGroup, ShardedSeq};

#[doc(hidden)]
pub use item::{Num, ScalarType};

/// Kernel instances this process has built (compiled by NVRTC, or loaded from the disk
/// cache) on any GPU: a hook for tests of the kernel cache (closures that differ only in
/// their constants share one kernel).
#[doc(hidden)]
pub fn kernels_built() -> u64 {
    backend::cuda::jit::kernels_built()
}

/// The README's example, compiled and run as a doc-test.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
