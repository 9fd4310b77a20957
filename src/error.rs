//! The crate's error type.
//!
//! `Display` and `std::error::Error` are written out here rather than derived with
//! `thiserror`: the API fixes a field named `source` in `Compile` (the generated kernel
//! source), which `thiserror` would always take for the error's cause.

use std::fmt;

/// Everything that can go wrong in a devseq call.
///
/// A call that returns an `Err` leaves every sequence it was given as it was: no input is
/// changed and no partial result is returned.
///
/// # Examples
///
/// ```
/// use devseq::{Device, DeviceSeq, Error};
/// let dev = Device::auto()?;
/// let a = DeviceSeq::from_slice(&dev, &[1u32, 2, 3])?;
/// let b = DeviceSeq::from_slice(&dev, &[1.0f32, 2.0])?;
/// match DeviceSeq::zip(&a, &b) {
///     Err(Error::LengthMismatch { expected, actual }) => assert_eq!((expected, actual), (3, 2)),
///     other => panic!("expected a length mismatch, got {other:?}"),
/// }
/// let e = DeviceSeq::zip(&a, &b).unwrap_err();
/// assert_eq!(e.to_string(), "length mismatch: expected 3, got 2");
/// assert_eq!(a.to_vec()?, [1, 2, 3]); // the inputs are unchanged
/// # Ok::<(), devseq::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// No usable CUDA driver, GPU or NVRTC library (also: `DEVSEQ_DEVICE=cuda` on a machine
    /// without one).
    NoCuda(String),
    /// A CUDA driver call failed: the call, the driver's error name and its description,
    /// e.g. `"cuLaunchKernel: CUDA_ERROR_LAUNCH_FAILED (unspecified launch failure)"`.
    Cuda(String),
    /// NVRTC could not compile a generated kernel.
    Compile {
        /// The NVRTC log.
        log: String,
        /// The generated source (with the name of the instance that failed).
        source: String,
    },
    /// Two sequences that must have the same length do not.
    LengthMismatch {
        /// The length required.
        expected: usize,
        /// The length given.
        actual: usize,
    },
    /// An index is outside the sequence it indexes.
    IndexOutOfBounds {
        /// The offending index (for `gather` and `scatter`, the one at the lowest position).
        index: u64,
        /// The length of the indexed sequence.
        len: usize,
    },
    /// The operator does not apply to the element type (bitwise ops on floats).
    UnsupportedOp {
        /// The operator.
        op: crate::Op,
        /// The element type, e.g. `"f32"`.
        ty: &'static str,
    },
    /// Sequences used together live on different devices.
    DeviceMismatch,
    /// The device has not enough free memory for the call.
    OutOfMemory {
        /// The size of the allocation that failed.
        bytes: usize,
    },
    /// An argument is outside what the operation accepts.
    InvalidArgument(String),
    /// A group of several processes failed: a rank left (it failed or exited), did not
    /// arrive or answer within `DEVSEQ_GROUP_TIMEOUT`, or the ranks called different
    /// collectives. The group cannot be used again.
    Group(String),
    /// A broken invariant inside devseq (a bug, not a misuse): please report it.
    Internal(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NoCuda(m) => write!(f, "no usable CUDA device: {m}"),
            Error::Cuda(m) => write!(f, "CUDA driver error: {m}"),
            Error::Compile { log, .. } => write!(f, "NVRTC could not compile a kernel:\n{log}"),
            Error::LengthMismatch { expected, actual } => {
                write!(f, "length mismatch: expected {expected}, got {actual}")
            }
            Error::IndexOutOfBounds { index, len } => {
                write!(f, "index {index} out of bounds for length {len}")
            }
            Error::UnsupportedOp { op, ty } => {
                write!(f, "operator {op:?} is not supported for element type {ty}")
            }
            Error::DeviceMismatch => write!(f, "sequences live on different devices"),
            Error::OutOfMemory { bytes } => {
                write!(f, "out of device memory allocating {bytes} bytes")
            }
            Error::InvalidArgument(m) => write!(f, "invalid argument: {m}"),
            Error::Group(m) => write!(f, "the process group failed: {m}"),
            Error::Internal(m) => write!(f, "internal error in devseq (please report): {m}"),
        }
    }
}

impl std::error::Error for Error {}

/// `Result<T, devseq::Error>`.
///
/// # Examples
///
/// ```
/// use devseq::{Device, DeviceSeq, Op, Result};
/// fn sum_of_squares(dev: &Device, xs: &[i64]) -> Result<i64> {
///     DeviceSeq::from_slice(dev, xs)?.map(|x| x * x)?.reduce(Op::Add)
/// }
/// assert_eq!(sum_of_squares(&Device::auto()?, &[1, 2, 3])?, 14);
/// # Ok::<(), devseq::Error>(())
/// ```
pub type Result<T> = std::result::Result<T, Error>;
