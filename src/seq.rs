//! `DeviceSeq<T>`: the public operations, their validation, and dispatch to a backend.

use crate::cuda::{self, Buffer, Gpu, Ptr};
use crate::device::{Device, Kind};
use crate::element::{Element, Index, Num};
use crate::error::{Error, Result};
use crate::expr::{self, Expr};
use crate::host;
use crate::op::Op;
use std::ops::{Bound, RangeBounds};
use std::sync::Arc;

/// An immutable sequence of `T` on one device.
///
/// `Clone` is O(1) (the storage is shared); every operation returns a new sequence and never
/// changes its inputs. Sequences used together must be on the same device, else
/// `Err(Error::DeviceMismatch)`. A call that fails returns an `Err` and leaves every sequence
/// it was given as it was.
///
/// Determinism: the same inputs on the same device give bitwise the same outputs on every
/// run, for every operation and type, floats included.
///
/// # Examples
///
/// ```
/// use devseq::{Device, DeviceSeq, Op};
/// let dev = Device::auto()?;
/// let xs = DeviceSeq::from_slice(&dev, &[3.0f32, 1.0, 2.0])?;
/// let ys = xs.map(|x| x * x + 1.0)?.sort()?;
/// assert_eq!(ys.to_vec()?, vec![2.0, 5.0, 10.0]);
/// assert_eq!(ys.reduce(Op::Add)?, 17.0);
/// # Ok::<(), devseq::Error>(())
/// ```
pub struct DeviceSeq<T: Element> {
    dev: Device,
    data: Data<T>,
    off: usize,
    len: usize,
}

enum Data<T> {
    Host(Arc<Vec<T>>),
    Cuda(Arc<Buffer>),
}

impl<T> Clone for Data<T> {
    fn clone(&self) -> Self {
        match self {
            Data::Host(v) => Data::Host(v.clone()),
            Data::Cuda(b) => Data::Cuda(b.clone()),
        }
    }
}

impl<T: Element> Clone for DeviceSeq<T> {
    fn clone(&self) -> Self {
        DeviceSeq {
            dev: self.dev.clone(),
            data: self.data.clone(),
            off: self.off,
            len: self.len,
        }
    }
}

impl<T: Element> std::fmt::Debug for DeviceSeq<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "DeviceSeq<{}>(len {}, on {})",
            T::TYPE.name(),
            self.len,
            self.dev.name()
        )
    }
}

/// A sequence's elements as a backend sees them.
enum Side<'a, T> {
    Host(&'a [T]),
    Cuda(&'a Arc<Gpu>, Ptr),
}

fn length(expected: usize, actual: usize) -> Result<()> {
    if expected == actual {
        Ok(())
    } else {
        Err(Error::LengthMismatch { expected, actual })
    }
}

impl<T: Element> DeviceSeq<T> {
    fn side(&self) -> Side<'_, T> {
        match &self.data {
            Data::Host(v) => Side::Host(&v[self.off..self.off + self.len]),
            Data::Cuda(b) => Side::Cuda(b.gpu(), b.ptr().add(self.off * T::TYPE.size())),
        }
    }

    fn host_seq(dev: &Device, v: Vec<T>) -> Self {
        let len = v.len();
        DeviceSeq {
            dev: dev.clone(),
            data: Data::Host(Arc::new(v)),
            off: 0,
            len,
        }
    }

    fn gpu_seq(dev: &Device, b: Buffer, len: usize) -> Self {
        DeviceSeq {
            dev: dev.clone(),
            data: Data::Cuda(Arc::new(b)),
            off: 0,
            len,
        }
    }

    /// `Err(DeviceMismatch)` unless `other` lives on this sequence's device.
    fn same_device<U: Element>(&self, other: &DeviceSeq<U>) -> Result<()> {
        if self.dev.same(&other.dev) {
            Ok(())
        } else {
            Err(Error::DeviceMismatch)
        }
    }

    /// Copies host data to the device.
    ///
    /// Cost: one transfer of `len * size_of::<T>()` bytes.
    ///
    /// # Errors
    ///
    /// `Error::OutOfMemory` where the device has no room; `Error::Cuda` from the driver.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[1u16, 2, 3])?;
    /// assert_eq!(xs.to_vec()?, [1, 2, 3]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn from_slice(dev: &Device, data: &[T]) -> Result<Self> {
        match &dev.kind {
            Kind::Host => Ok(Self::host_seq(dev, data.to_vec())),
            Kind::Cuda(g) => {
                let b = Buffer::new(g, std::mem::size_of_val(data))?;
                g.write(b.ptr(), bytemuck::cast_slice(data))?;
                Ok(Self::gpu_seq(dev, b, data.len()))
            }
        }
    }

    /// `len` copies of `value`.
    ///
    /// Cost: one write of the sequence.
    ///
    /// # Errors
    ///
    /// `Error::OutOfMemory`; `Error::Cuda`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// assert_eq!(DeviceSeq::filled(&dev, -7i64, 3)?.to_vec()?, [-7, -7, -7]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn filled(dev: &Device, value: T, len: usize) -> Result<Self> {
        match &dev.kind {
            Kind::Host => Ok(Self::host_seq(dev, vec![value; len])),
            Kind::Cuda(g) => {
                let b = cuda::map::filled(g, T::TYPE, value.to_bits(), len)?;
                Ok(Self::gpu_seq(dev, b, len))
            }
        }
    }

    /// `0, 1, 2, …, len-1` as `T`: wrapping for small integer types, rounded to nearest for
    /// floats (as `i as T`; `f16`/`bf16` through `f32`).
    ///
    /// Cost: one write of the sequence.
    ///
    /// # Errors
    ///
    /// `Error::OutOfMemory`; `Error::Cuda`; `Error::Compile` if the kernel fails to build.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::<u8>::sequence(&dev, 300)?.to_vec()?;
    /// assert_eq!(xs, (0..300).map(|i| i as u8).collect::<Vec<_>>());
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn sequence(dev: &Device, len: usize) -> Result<Self> {
        match &dev.kind {
            Kind::Host => Ok(Self::host_seq(dev, host::map::sequence(len))),
            Kind::Cuda(g) => {
                let b = cuda::map::sequence(g, T::TYPE, len)?;
                Ok(Self::gpu_seq(dev, b, len))
            }
        }
    }

    /// Copies the elements to the host (waits for the work that produces them).
    ///
    /// # Errors
    ///
    /// `Error::Cuda` where queued work failed.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let v = DeviceSeq::<i32>::sequence(&dev, 4)?.to_vec()?;
    /// assert_eq!(v, [0, 1, 2, 3]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn to_vec(&self) -> Result<Vec<T>> {
        match self.side() {
            Side::Host(xs) => Ok(xs.to_vec()),
            Side::Cuda(g, p) => {
                let mut v = vec![T::default(); self.len];
                g.read_pageable(p, bytemuck::cast_slice_mut(&mut v))?;
                Ok(v)
            }
        }
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The device the sequence lives on.
    pub fn device(&self) -> &Device {
        &self.dev
    }

    /// An O(1) view of a sub-range, sharing the storage (no copy).
    ///
    /// # Panics
    ///
    /// On a range outside `0..len`, exactly as slice indexing does.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::<u32>::sequence(&dev, 10)?;
    /// assert_eq!(xs.slice(2..5).to_vec()?, [2, 3, 4]);
    /// assert_eq!(xs.slice(8..).to_vec()?, [8, 9]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Self {
        let start = match range.start_bound() {
            Bound::Included(&s) => s,
            Bound::Excluded(&s) => s
                .checked_add(1)
                .unwrap_or_else(|| panic!("attempted to index slice from after maximum usize")),
            Bound::Unbounded => 0,
        };
        let end = match range.end_bound() {
            Bound::Included(&e) => e
                .checked_add(1)
                .unwrap_or_else(|| panic!("attempted to index slice up to maximum usize")),
            Bound::Excluded(&e) => e,
            Bound::Unbounded => self.len,
        };
        if start > end {
            panic!("slice index starts at {start} but ends at {end}");
        }
        if end > self.len {
            panic!(
                "range end index {end} out of range for slice of length {}",
                self.len
            );
        }
        DeviceSeq {
            dev: self.dev.clone(),
            data: self.data.clone(),
            off: self.off + start,
            len: end - start,
        }
    }

    /// A deep copy with storage of its own.
    ///
    /// Cost: one read and one write of the sequence (a device-to-device copy).
    ///
    /// # Errors
    ///
    /// `Error::OutOfMemory`; `Error::Cuda`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::<i8>::sequence(&dev, 5)?;
    /// assert_eq!(xs.slice(1..3).copy()?.to_vec()?, [1, 2]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn copy(&self) -> Result<Self> {
        match self.side() {
            Side::Host(xs) => Ok(Self::host_seq(&self.dev, xs.to_vec())),
            Side::Cuda(g, p) => {
                let b = cuda::map::copy(g, p, self.len * T::TYPE.size())?;
                Ok(Self::gpu_seq(&self.dev, b, self.len))
            }
        }
    }

    /// `out[i] = f(self[i])`.
    ///
    /// `f` is called once, on the host, with an [`Expr`] standing for the element; what it
    /// returns is compiled for the device (NVRTC, cached in memory and on disk) or interpreted
    /// by the host backend, with the semantics [`Expr`] describes.
    ///
    /// Cost: one read of the input, one write of the output.
    ///
    /// # Errors
    ///
    /// `Error::InvalidArgument` where the closure uses an `Expr` from another closure;
    /// `Error::Compile`; `Error::OutOfMemory`; `Error::Cuda`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[1.5f32, -2.0, 4.0])?;
    /// let ys = xs.map(|x| (x * 2.0 + 1.0).max(0.0))?;
    /// let want: Vec<f32> = [1.5f32, -2.0, 4.0].iter().map(|x| (x * 2.0 + 1.0).max(0.0)).collect();
    /// assert_eq!(ys.to_vec()?, want);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn map<U: Element>(&self, f: impl Fn(Expr<T>) -> Expr<U>) -> Result<DeviceSeq<U>> {
        let g = expr::trace(&[T::TYPE], |a, id| f(Expr::from_node(id, a[0])))?;
        match self.side() {
            Side::Host(xs) => Ok(DeviceSeq::host_seq(&self.dev, host::map::map1(&g, xs))),
            Side::Cuda(gpu, p) => {
                let b = cuda::map::map(gpu, &g, &[p], self.len)?;
                Ok(DeviceSeq::gpu_seq(&self.dev, b, self.len))
            }
        }
    }

    /// `out[i] = f(self[i], other[i])`.
    ///
    /// Cost: one read of each input, one write of the output.
    ///
    /// # Errors
    ///
    /// `Error::LengthMismatch` where the lengths differ; `Error::DeviceMismatch`; as
    /// [`map`](Self::map).
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq, Expr};
    /// let dev = Device::auto()?;
    /// let a = DeviceSeq::from_slice(&dev, &[1i32, 5, 3])?;
    /// let b = DeviceSeq::from_slice(&dev, &[4u8, 2, 3])?;
    /// let c = a.zip_map(&b, |x, y| x - y.cast::<i32>())?;
    /// assert_eq!(c.to_vec()?, [-3, 3, 0]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn zip_map<U: Element, V: Element>(
        &self,
        other: &DeviceSeq<U>,
        f: impl Fn(Expr<T>, Expr<U>) -> Expr<V>,
    ) -> Result<DeviceSeq<V>> {
        self.same_device(other)?;
        length(self.len, other.len)?;
        let g = expr::trace(&[T::TYPE, U::TYPE], |a, id| {
            f(Expr::from_node(id, a[0]), Expr::from_node(id, a[1]))
        })?;
        match (self.side(), other.side()) {
            (Side::Host(xs), Side::Host(ys)) => {
                Ok(DeviceSeq::host_seq(&self.dev, host::map::map2(&g, xs, ys)))
            }
            (Side::Cuda(gpu, p), Side::Cuda(_, q)) => {
                let b = cuda::map::map(gpu, &g, &[p, q], self.len)?;
                Ok(DeviceSeq::gpu_seq(&self.dev, b, self.len))
            }
            _ => Err(Error::DeviceMismatch),
        }
    }

    /// Element-wise conversion with Rust's `as` semantics (float to integer saturates, NaN
    /// gives 0; to `f16`/`bf16` through `f32`).
    ///
    /// Cost: as [`map`](Self::map).
    ///
    /// # Errors
    ///
    /// As [`map`](Self::map).
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[-1.5f64, 300.7, f64::NAN])?;
    /// assert_eq!(xs.cast::<u8>()?.to_vec()?, [0, 255, 0]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn cast<U: Element>(&self) -> Result<DeviceSeq<U>> {
        self.map(|x| x.cast::<U>())
    }

    /// The `op`-combination of all elements; the identity of `op` when empty.
    ///
    /// Integers wrap; `f16`/`bf16` accumulate in `f32` and round once. Deterministic: the
    /// combination order depends only on the length and the device, so float sums are the
    /// same on every run (on the GPU: a fixed grid, a fixed tree per block, then the blocks
    /// in order).
    ///
    /// Cost: one read of the sequence; waits for the result.
    ///
    /// # Errors
    ///
    /// `Error::UnsupportedOp` for a bitwise `op` on a float type; `Error::Cuda`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq, Op};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[200u8, 100, 7])?;
    /// assert_eq!(xs.reduce(Op::Add)?, [200u8, 100, 7].iter().fold(0u8, |a, b| a.wrapping_add(*b)));
    /// assert_eq!(xs.reduce(Op::Max)?, 200);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn reduce(&self, op: Op) -> Result<T> {
        op.check::<T>()?;
        if self.len == 0 {
            return op.identity::<T>();
        }
        match self.side() {
            Side::Host(xs) => Ok(T::from_compute(host::reduce::reduce(xs, op))),
            Side::Cuda(g, p) => {
                let bits =
                    cuda::reduce::reduce(g, T::TYPE, op, cuda::reduce::Load::Value, p, self.len)?;
                Ok(T::from_bits(bits))
            }
        }
    }

    /// As [`reduce`](Self::reduce), with the result left on the device as a one-element
    /// sequence (no waiting): for pipelines that use it there, and for timing the reduction
    /// alone.
    ///
    /// # Errors
    ///
    /// As [`reduce`](Self::reduce); `Error::OutOfMemory`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq, Op};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[1.0f64, 2.0, 4.0])?;
    /// assert_eq!(xs.reduce_to_seq(Op::Add)?.to_vec()?, [7.0]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn reduce_to_seq(&self, op: Op) -> Result<Self> {
        op.check::<T>()?;
        match self.side() {
            Side::Cuda(g, p) if self.len > 0 => {
                let out = Buffer::new(g, T::TYPE.size())?;
                cuda::reduce::reduce_into(
                    g,
                    T::TYPE,
                    op,
                    cuda::reduce::Load::Value,
                    p,
                    self.len,
                    out.ptr(),
                )?;
                Ok(Self::gpu_seq(&self.dev, out, 1))
            }
            _ => Self::from_slice(&self.dev, &[self.reduce(op)?]),
        }
    }

    /// `op(init, self.reduce(op))`.
    ///
    /// # Errors
    ///
    /// As [`reduce`](Self::reduce).
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq, Op};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[2i32, 3, 4])?;
    /// assert_eq!(xs.fold(10, Op::Mul)?, 10 * 2 * 3 * 4);
    /// assert_eq!(xs.slice(0..0).fold(5, Op::Min)?, 5);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn fold(&self, init: T, op: Op) -> Result<T> {
        let r = self.reduce(op)?;
        Ok(T::from_compute(<T::Compute as Num>::combine(
            op,
            init.to_compute(),
            r.to_compute(),
        )))
    }

    /// `out[i] = self[0] op … op self[i]`.
    ///
    /// Deterministic, floats included: a single pass (each element read and written once)
    /// whose look-back combines tile aggregates in a fixed order (docs/algorithms.md).
    /// `f16`/`bf16` accumulate in `f32` and round each output once.
    ///
    /// Cost: one read and one write of the sequence.
    ///
    /// # Errors
    ///
    /// `Error::UnsupportedOp` for a bitwise `op` on a float type; `Error::OutOfMemory`;
    /// `Error::Cuda`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq, Op};
    /// let dev = Device::auto()?;
    /// let v = [3i32, -1, 4, -1, 5];
    /// let xs = DeviceSeq::from_slice(&dev, &v)?;
    /// let want: Vec<i32> = v.iter().scan(0, |s, x| { *s += x; Some(*s) }).collect();
    /// assert_eq!(xs.inclusive_scan(Op::Add)?.to_vec()?, want);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn inclusive_scan(&self, op: Op) -> Result<Self> {
        op.check::<T>()?;
        self.scan(op, None)
    }

    /// `out[0] = init`, `out[i] = init op self[0] op … op self[i-1]`.
    ///
    /// Deterministic as [`inclusive_scan`](Self::inclusive_scan).
    ///
    /// Cost: one read and one write of the sequence.
    ///
    /// # Errors
    ///
    /// As [`inclusive_scan`](Self::inclusive_scan).
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq, Op};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[5u32, 1, 7, 2])?;
    /// assert_eq!(xs.exclusive_scan(100, Op::Min)?.to_vec()?, [100, 5, 1, 1]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn exclusive_scan(&self, init: T, op: Op) -> Result<Self> {
        op.check::<T>()?;
        self.scan(op, Some(init))
    }

    fn scan(&self, op: Op, init: Option<T>) -> Result<Self> {
        match self.side() {
            Side::Host(xs) => Ok(Self::host_seq(&self.dev, host::scan::scan(xs, op, init))),
            Side::Cuda(g, p) => {
                let b = cuda::scan::scan(
                    g,
                    T::TYPE,
                    op,
                    p,
                    self.len,
                    init.is_some(),
                    init.map_or(0, |v| v.compute_bits()),
                )?;
                Ok(Self::gpu_seq(&self.dev, b, self.len))
            }
        }
    }

    fn segment_inputs(&self, flags: &DeviceSeq<u8>) -> Result<()> {
        self.same_device(flags)?;
        length(self.len, flags.len)
    }

    /// An inclusive scan that restarts at every segment head: a nonzero flag starts a segment
    /// at that element, and element 0 always starts one.
    ///
    /// Deterministic as [`inclusive_scan`](Self::inclusive_scan) (a single-pass scan of
    /// (value, flag) pairs with the flag-carrying operator).
    ///
    /// Cost: one read of the sequence and the flags, one write of the output.
    ///
    /// # Errors
    ///
    /// `Error::LengthMismatch` where `flags` has another length; `Error::DeviceMismatch`;
    /// `Error::UnsupportedOp`; `Error::OutOfMemory`; `Error::Cuda`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq, Op};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[1i64, 2, 3, 4, 5])?;
    /// let flags = DeviceSeq::from_slice(&dev, &[0u8, 0, 1, 0, 7])?;
    /// assert_eq!(xs.segmented_inclusive_scan(&flags, Op::Add)?.to_vec()?, [1, 3, 3, 7, 5]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn segmented_inclusive_scan(&self, flags: &DeviceSeq<u8>, op: Op) -> Result<Self> {
        op.check::<T>()?;
        self.segment_inputs(flags)?;
        self.segmented_scan(flags, op, None)
    }

    /// An exclusive scan that restarts, with `init`, at every segment head.
    ///
    /// Deterministic as [`inclusive_scan`](Self::inclusive_scan).
    ///
    /// Cost: as [`segmented_inclusive_scan`](Self::segmented_inclusive_scan).
    ///
    /// # Errors
    ///
    /// As [`segmented_inclusive_scan`](Self::segmented_inclusive_scan).
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq, Op};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[1i64, 2, 3, 4, 5])?;
    /// let flags = DeviceSeq::from_slice(&dev, &[1u8, 0, 1, 0, 0])?;
    /// assert_eq!(xs.segmented_exclusive_scan(&flags, 10, Op::Add)?.to_vec()?, [10, 11, 10, 13, 17]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn segmented_exclusive_scan(&self, flags: &DeviceSeq<u8>, init: T, op: Op) -> Result<Self> {
        op.check::<T>()?;
        self.segment_inputs(flags)?;
        self.segmented_scan(flags, op, Some(init))
    }

    fn segmented_scan(&self, flags: &DeviceSeq<u8>, op: Op, init: Option<T>) -> Result<Self> {
        match (self.side(), flags.side()) {
            (Side::Host(xs), Side::Host(fl)) => Ok(Self::host_seq(
                &self.dev,
                host::segment::scan(xs, fl, op, init),
            )),
            (Side::Cuda(g, p), Side::Cuda(_, f)) => {
                let b = cuda::segment::scan(
                    g,
                    T::TYPE,
                    op,
                    p,
                    f,
                    self.len,
                    init.is_some(),
                    init.map_or(0, |v| v.compute_bits()),
                )?;
                Ok(Self::gpu_seq(&self.dev, b, self.len))
            }
            _ => Err(Error::DeviceMismatch),
        }
    }

    /// One value per segment, in order: the `op`-combination of each segment (the
    /// `reduce_by_key` of sorted keys, with keys given as head flags).
    ///
    /// Deterministic as [`inclusive_scan`](Self::inclusive_scan).
    ///
    /// Cost: one read of the flags to count the segments (waits for the count), then one read
    /// of the sequence and the flags and one write per segment.
    ///
    /// # Errors
    ///
    /// As [`segmented_inclusive_scan`](Self::segmented_inclusive_scan).
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq, Op};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[4u16, 1, 9, 2, 8, 3])?;
    /// let flags = DeviceSeq::from_slice(&dev, &[1u8, 0, 0, 1, 0, 1])?;
    /// assert_eq!(xs.segmented_reduce(&flags, Op::Max)?.to_vec()?, [9, 8, 3]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn segmented_reduce(&self, flags: &DeviceSeq<u8>, op: Op) -> Result<Self> {
        op.check::<T>()?;
        self.segment_inputs(flags)?;
        match (self.side(), flags.side()) {
            (Side::Host(xs), Side::Host(fl)) => {
                Ok(Self::host_seq(&self.dev, host::segment::reduce(xs, fl, op)))
            }
            (Side::Cuda(g, p), Side::Cuda(_, f)) => {
                let segments = cuda::segment::count_heads(g, f, self.len)?;
                let b = cuda::segment::reduce_segments(g, T::TYPE, op, p, f, self.len, segments)?;
                Ok(Self::gpu_seq(&self.dev, b, segments))
            }
            _ => Err(Error::DeviceMismatch),
        }
    }

    /// 1 where `i == 0` or `self[i] != self[i-1]` (bitwise for floats), else 0: the heads of
    /// the runs of equal elements.
    ///
    /// Cost: one read of the sequence, one write of the flags.
    ///
    /// # Errors
    ///
    /// `Error::OutOfMemory`; `Error::Cuda`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[1u32, 1, 2, 2, 2, 5])?;
    /// assert_eq!(xs.head_flags()?.to_vec()?, [1, 0, 1, 0, 0, 1]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn head_flags(&self) -> Result<DeviceSeq<u8>> {
        match self.side() {
            Side::Host(xs) => Ok(DeviceSeq::host_seq(
                &self.dev,
                host::segment::head_flags(xs),
            )),
            Side::Cuda(g, p) => {
                let b = cuda::segment::head_flags(g, T::TYPE, p, self.len)?;
                Ok(DeviceSeq::gpu_seq(&self.dev, b, self.len))
            }
        }
    }

    /// The elements whose flag is nonzero, in order (stream compaction).
    ///
    /// Cost: one fused pass (the flags scanned and each kept element written in the same
    /// kernel); waits for the count. Where fewer than half the elements are kept they are
    /// moved to storage of their own size.
    ///
    /// # Errors
    ///
    /// `Error::LengthMismatch`; `Error::DeviceMismatch`; `Error::OutOfMemory`; `Error::Cuda`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[10i16, 11, 12, 13])?;
    /// let keep = DeviceSeq::from_slice(&dev, &[0u8, 1, 0, 3])?;
    /// assert_eq!(xs.compact(&keep)?.to_vec()?, [11, 13]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn compact(&self, flags: &DeviceSeq<u8>) -> Result<Self> {
        self.segment_inputs(flags)?;
        match (self.side(), flags.side()) {
            (Side::Host(xs), Side::Host(fl)) => {
                Ok(Self::host_seq(&self.dev, host::compact::compact(xs, fl)))
            }
            (Side::Cuda(g, p), Side::Cuda(_, f)) => {
                let (b, count) = cuda::compact::compact(g, T::TYPE, Some(p), f, self.len)?;
                Ok(Self::gpu_seq(&self.dev, b, count))
            }
            _ => Err(Error::DeviceMismatch),
        }
    }

    /// `out[i] = self[indices[i]]`; `out.len() == indices.len()`.
    ///
    /// Bounds-checked at (nearly) no cost: the kernel notes a bad index in a device word that
    /// is checked when the call completes (so the call waits for the gather).
    ///
    /// Cost: one read of the indices, one random read per index, one write of the output.
    ///
    /// # Errors
    ///
    /// `Error::IndexOutOfBounds { index, len }` for the index at the lowest position that is
    /// not below `self.len()` (no partial result); `Error::DeviceMismatch`;
    /// `Error::OutOfMemory`; `Error::Cuda`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq, Error};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[1.5f32, 2.5, 3.5])?;
    /// let idx = DeviceSeq::from_slice(&dev, &[2u32, 0, 2])?;
    /// assert_eq!(xs.gather(&idx)?.to_vec()?, [3.5, 1.5, 3.5]);
    /// let bad = DeviceSeq::from_slice(&dev, &[0u64, 3])?;
    /// assert!(matches!(xs.gather(&bad), Err(Error::IndexOutOfBounds { index: 3, len: 3 })));
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn gather<I: Index>(&self, indices: &DeviceSeq<I>) -> Result<Self> {
        self.same_device(indices)?;
        match (self.side(), indices.side()) {
            (Side::Host(xs), Side::Host(ix)) => {
                Ok(Self::host_seq(&self.dev, host::gather::gather(xs, ix)?))
            }
            (Side::Cuda(g, p), Side::Cuda(_, q)) => {
                let b = cuda::gather::gather(g, T::TYPE, p, self.len, I::TYPE, q, indices.len)?;
                Ok(Self::gpu_seq(&self.dev, b, indices.len))
            }
            _ => Err(Error::DeviceMismatch),
        }
    }

    /// `base` with `out[indices[i]] = self[i]`; where indices repeat, one of their values
    /// lands (which is unspecified).
    ///
    /// Bounds-checked as [`gather`](Self::gather).
    ///
    /// Cost: a copy of `base`, one read of the values and indices, one random write per value.
    ///
    /// # Errors
    ///
    /// `Error::LengthMismatch` where `indices` and `self` differ in length;
    /// `Error::IndexOutOfBounds` (no partial result); `Error::DeviceMismatch`;
    /// `Error::OutOfMemory`; `Error::Cuda`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let vals = DeviceSeq::from_slice(&dev, &[7u8, 9])?;
    /// let idx = DeviceSeq::from_slice(&dev, &[3u32, 0])?;
    /// let base = DeviceSeq::filled(&dev, 0u8, 5)?;
    /// assert_eq!(vals.scatter(&idx, &base)?.to_vec()?, [9, 0, 0, 7, 0]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn scatter<I: Index>(&self, indices: &DeviceSeq<I>, base: &DeviceSeq<T>) -> Result<Self> {
        self.same_device(indices)?;
        self.same_device(base)?;
        length(self.len, indices.len)?;
        match (self.side(), indices.side(), base.side()) {
            (Side::Host(xs), Side::Host(ix), Side::Host(bs)) => Ok(Self::host_seq(
                &self.dev,
                host::gather::scatter(xs, ix, bs)?,
            )),
            (Side::Cuda(g, p), Side::Cuda(_, q), Side::Cuda(_, b)) => {
                let out = cuda::gather::scatter(g, T::TYPE, p, I::TYPE, q, self.len, b, base.len)?;
                Ok(Self::gpu_seq(&self.dev, out, base.len))
            }
            _ => Err(Error::DeviceMismatch),
        }
    }

    /// `base` with every `self[i]` combined into `out[indices[i]]` by `op`, for any number of
    /// repeats: the values for one slot are combined in ascending order of `i`, then with the
    /// base value.
    ///
    /// Deterministic, floats included: built on a stable sort of (index, value) on the bits
    /// the indices need and a segmented reduction of each run, not on atomics.
    ///
    /// Cost: the sort (one histogram pass, then per 8 index bits one read and one write of
    /// index and value), one read of the sorted pairs, one write per distinct index, and a
    /// copy of `base`; waits for the bounds check.
    ///
    /// # Errors
    ///
    /// `Error::LengthMismatch`; `Error::IndexOutOfBounds` (nothing written);
    /// `Error::UnsupportedOp`; `Error::DeviceMismatch`; `Error::OutOfMemory`; `Error::Cuda`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq, Op};
    /// let dev = Device::auto()?;
    /// let vals = DeviceSeq::from_slice(&dev, &[1.0f32, 2.0, 3.0, 4.0])?;
    /// let idx = DeviceSeq::from_slice(&dev, &[2u32, 0, 2, 2])?;
    /// let base = DeviceSeq::filled(&dev, 10.0f32, 3)?;
    /// assert_eq!(vals.scatter_combine(&idx, &base, Op::Add)?.to_vec()?, [12.0, 10.0, 18.0]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn scatter_combine<I: Index>(
        &self,
        indices: &DeviceSeq<I>,
        base: &DeviceSeq<T>,
        op: Op,
    ) -> Result<Self> {
        op.check::<T>()?;
        self.same_device(indices)?;
        self.same_device(base)?;
        length(self.len, indices.len)?;
        match (self.side(), indices.side(), base.side()) {
            (Side::Host(xs), Side::Host(ix), Side::Host(bs)) => Ok(Self::host_seq(
                &self.dev,
                host::combine::scatter_combine(xs, ix, bs, op)?,
            )),
            (Side::Cuda(g, p), Side::Cuda(_, q), Side::Cuda(_, b)) => {
                let out = cuda::combine::scatter_combine(
                    g,
                    T::TYPE,
                    p,
                    I::TYPE,
                    q,
                    self.len,
                    b,
                    base.len,
                    op,
                )?;
                Ok(Self::gpu_seq(&self.dev, out, base.len))
            }
            _ => Err(Error::DeviceMismatch),
        }
    }

    /// Ascending; floats in the order of `f32::total_cmp`
    /// (`-NaN < -inf < … < -0.0 < +0.0 < … < +inf < +NaN`).
    ///
    /// GPU: LSD radix sort, 8-bit digits, Onesweep style: one pass counts all digits, then one
    /// pass per digit ranks and scatters; a digit that is the same for every key is skipped.
    ///
    /// Cost: one read of the keys, then one read and one write per 8 key bits whose digit
    /// varies; temporaries of about twice the sequence.
    ///
    /// # Errors
    ///
    /// `Error::OutOfMemory`; `Error::Cuda`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let v = [0.5f32, -0.0, f32::NAN, -3.0, 0.0, f32::NEG_INFINITY];
    /// let mut want = v.to_vec();
    /// want.sort_by(f32::total_cmp);
    /// let got = DeviceSeq::from_slice(&dev, &v)?.sort()?.to_vec()?;
    /// assert_eq!(got.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
    ///            want.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn sort(&self) -> Result<Self> {
        match self.side() {
            Side::Host(xs) => Ok(Self::host_seq(&self.dev, host::sort::sort(xs))),
            Side::Cuda(g, p) => {
                if self.len <= 1 {
                    return self.copy();
                }
                let (k, _) = cuda::sort::sort(
                    g,
                    T::TYPE,
                    p,
                    self.len,
                    cuda::sort::Values::None,
                    T::TYPE.bits(),
                )?;
                Ok(Self::gpu_seq(&self.dev, k, self.len))
            }
        }
    }

    /// The stable sort of `values` by these keys: both, in the same order.
    ///
    /// Cost: as [`sort`](Self::sort), moving the values with the keys.
    ///
    /// # Errors
    ///
    /// `Error::LengthMismatch`; `Error::DeviceMismatch`; `Error::OutOfMemory`; `Error::Cuda`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let keys = DeviceSeq::from_slice(&dev, &[3i8, -1, 3, 0])?;
    /// let vals = DeviceSeq::from_slice(&dev, &['a' as u8, b'b', b'c', b'd'])?;
    /// let (k, v) = keys.sort_pairs(&vals)?;
    /// assert_eq!(k.to_vec()?, [-1, 0, 3, 3]);
    /// assert_eq!(v.to_vec()?, [b'b', b'd', b'a', b'c']);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn sort_pairs<V: Element>(&self, values: &DeviceSeq<V>) -> Result<(Self, DeviceSeq<V>)> {
        self.same_device(values)?;
        length(self.len, values.len)?;
        match (self.side(), values.side()) {
            (Side::Host(ks), Side::Host(vs)) => {
                let (k, v) = host::sort::sort_pairs(ks, vs);
                Ok((
                    Self::host_seq(&self.dev, k),
                    DeviceSeq::host_seq(&self.dev, v),
                ))
            }
            (Side::Cuda(g, p), Side::Cuda(_, q)) => {
                if self.len <= 1 {
                    return Ok((self.copy()?, values.copy()?));
                }
                let (k, v) = cuda::sort::sort(
                    g,
                    T::TYPE,
                    p,
                    self.len,
                    cuda::sort::Values::Given(V::TYPE, q),
                    T::TYPE.bits(),
                )?;
                let v = v.ok_or_else(|| Error::Cuda("sort returned no values".into()))?;
                Ok((
                    Self::gpu_seq(&self.dev, k, self.len),
                    DeviceSeq::gpu_seq(&self.dev, v, self.len),
                ))
            }
            _ => Err(Error::DeviceMismatch),
        }
    }

    /// The stable permutation that sorts the sequence: `self.gather(&self.argsort()?)` is
    /// `self.sort()`.
    ///
    /// Cost: as [`sort_pairs`](Self::sort_pairs) (the positions are generated, not read).
    ///
    /// # Errors
    ///
    /// `Error::InvalidArgument` where `I` cannot index every element (`u32` indices for more
    /// than 2^32 elements); `Error::OutOfMemory`; `Error::Cuda`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[30u64, 10, 20, 10])?;
    /// assert_eq!(xs.argsort::<u32>()?.to_vec()?, [1, 3, 2, 0]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn argsort<I: Index>(&self) -> Result<DeviceSeq<I>> {
        if I::TYPE.size() == 4 && self.len as u64 > 1 << 32 {
            return Err(Error::InvalidArgument(format!(
                "u32 indices cannot address {} elements",
                self.len
            )));
        }
        match self.side() {
            Side::Host(xs) => Ok(DeviceSeq::host_seq(&self.dev, host::sort::argsort(xs))),
            Side::Cuda(g, p) => {
                if self.len <= 1 {
                    return DeviceSeq::sequence(&self.dev, self.len);
                }
                let (_, v) = cuda::sort::sort(
                    g,
                    T::TYPE,
                    p,
                    self.len,
                    cuda::sort::Values::Positions(I::TYPE),
                    T::TYPE.bits(),
                )?;
                let v = v.ok_or_else(|| Error::Cuda("sort returned no values".into()))?;
                Ok(DeviceSeq::gpu_seq(&self.dev, v, self.len))
            }
        }
    }

    /// Counts of `bins` equal-width bins over `[lo, hi)`; values outside (and NaN) are not
    /// counted.
    ///
    /// Bins: for integers `(x - lo) * bins / (hi - lo)`, computed exactly (no overflow); for
    /// floats `floor((x - lo) / (hi - lo) * bins)` in `f64` for `f64` input and `f32`
    /// otherwise, each operation rounded (no fused multiply-add), clamped to `bins - 1`. Host
    /// and GPU agree exactly.
    ///
    /// Cost: one read of the sequence; GPU: per-block counters in shared memory merged once
    /// (counters straight in device memory beyond 8192 bins).
    ///
    /// # Errors
    ///
    /// `Error::InvalidArgument` where `bins == 0` or `!(lo < hi)`; `Error::OutOfMemory`;
    /// `Error::Cuda`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[0.1f32, 0.5, 0.55, 0.99, 1.0, -0.2])?;
    /// assert_eq!(xs.histogram(4, 0.0, 1.0)?.to_vec()?, [1, 0, 2, 1]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn histogram(&self, bins: usize, lo: T, hi: T) -> Result<DeviceSeq<u64>> {
        if bins == 0 {
            return Err(Error::InvalidArgument("histogram with 0 bins".into()));
        }
        if lo.to_compute().partial_cmp(&hi.to_compute()) != Some(std::cmp::Ordering::Less) {
            return Err(Error::InvalidArgument(format!(
                "histogram range [{lo:?}, {hi:?}) is empty"
            )));
        }
        match self.side() {
            Side::Host(xs) => Ok(DeviceSeq::host_seq(
                &self.dev,
                host::histogram::histogram(xs, bins, lo, hi),
            )),
            Side::Cuda(g, p) => {
                let b = cuda::histogram::histogram(
                    g,
                    T::TYPE,
                    p,
                    self.len,
                    bins as u64,
                    lo.compute_bits(),
                    hi.compute_bits(),
                )?;
                Ok(DeviceSeq::gpu_seq(&self.dev, b, bins))
            }
        }
    }
}

impl DeviceSeq<u8> {
    /// The positions whose flag is nonzero, in order, as indices of type `I` (as
    /// `numpy.flatnonzero`): `DeviceSeq::sequence(..).compact(flags)` without reading a
    /// sequence of positions.
    ///
    /// Cost: one fused pass over the flags; waits for the count.
    ///
    /// # Errors
    ///
    /// `Error::InvalidArgument` where `I` cannot index every element; `Error::OutOfMemory`;
    /// `Error::Cuda`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let flags = DeviceSeq::from_slice(&dev, &[0u8, 1, 1, 0, 5])?;
    /// assert_eq!(flags.nonzero_indices::<u32>()?.to_vec()?, [1, 2, 4]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn nonzero_indices<I: Index>(&self) -> Result<DeviceSeq<I>> {
        if I::TYPE.size() == 4 && self.len as u64 > 1 << 32 {
            return Err(Error::InvalidArgument(format!(
                "u32 indices cannot address {} elements",
                self.len
            )));
        }
        match self.side() {
            Side::Host(fl) => Ok(DeviceSeq::host_seq(
                &self.dev,
                host::compact::nonzero_indices(fl)
                    .into_iter()
                    .map(I::from_u64)
                    .collect(),
            )),
            Side::Cuda(g, f) => {
                let (b, count) = cuda::compact::compact(g, I::TYPE, None, f, self.len)?;
                Ok(DeviceSeq::gpu_seq(&self.dev, b, count))
            }
        }
    }
}
