//! `DeviceSeq<T>`: the public operations, one file per algorithm family. Every method checks
//! its arguments and makes one backend call (or, for the lazy ones, builds a source and makes
//! none).

mod assoc;
mod combine;
mod compact;
mod gather;
mod histogram;
pub(crate) use histogram::histogram_args;
mod interop;
mod map;
pub(crate) mod order;
mod random;
mod reduce;
mod runs;
mod scan;
mod search;
mod segment;
mod sets;
mod sort;
mod view;
mod write;
mod zip;
pub use zip::ZipSeqs;

use crate::device::Device;
use crate::error::{Error, Result};
use crate::item::{Element, Item};
use crate::source::{Column, Source};
use std::marker::PhantomData;
use std::ops::{Bound, RangeBounds};
use std::sync::Arc;

/// An immutable sequence of `T` on one device.
///
/// `Clone` is O(1) (the storage is shared); every operation returns a new sequence and never
/// changes its inputs. Sequences used together must be on the same device, else
/// `Err(Error::DeviceMismatch)`. A call that fails returns an `Err` and leaves every sequence
/// it was given as it was.
///
/// A sequence is *stored* (its elements in memory) or *lazy*: `map`, `zip_map`, `cast`,
/// `DeviceSeq::sequence`, `DeviceSeq::filled`, and `slice` of a lazy sequence record an
/// expression over their inputs and hold no memory for their elements; every operation that
/// reads a lazy sequence evaluates it inside its own kernel, in the same pass. Results are
/// bitwise those of storing each step first. A lazy sequence read twice is computed twice:
/// [`copy`](Self::copy) it where it is read many times.
///
/// Determinism: the same inputs on the same device give bitwise the same outputs on every
/// run, for every operation and type, floats included (but which of the values that
/// `scatter` and `scatter_into` send to one repeated index lands, which is unspecified).
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
pub struct DeviceSeq<T: Item> {
    dev: Device,
    /// One source a component (one for an element), all of the same length.
    comps: Arc<[Source]>,
    _t: PhantomData<fn() -> T>,
}

impl<T: Item> Clone for DeviceSeq<T> {
    fn clone(&self) -> Self {
        DeviceSeq {
            dev: self.dev.clone(),
            comps: self.comps.clone(),
            _t: PhantomData,
        }
    }
}

impl<T: Item> std::fmt::Debug for DeviceSeq<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = T::TYPES.iter().map(|t| t.name()).collect();
        let ty = match names.as_slice() {
            [one] => one.to_string(),
            many => format!("({})", many.join(", ")),
        };
        write!(
            f,
            "DeviceSeq<{ty}>(len {}, {}, on {})",
            self.len(),
            if self.is_stored() { "stored" } else { "lazy" },
            self.dev.name()
        )
    }
}

/// `Err(LengthMismatch)` unless the lengths are equal.
fn length(expected: usize, actual: usize) -> Result<()> {
    if expected == actual {
        Ok(())
    } else {
        Err(Error::LengthMismatch { expected, actual })
    }
}

/// The longest sequence: 2^56 elements. Lazy sequences (`sequence`, `filled`, the random ones)
/// may name lengths no memory holds, and every length a sequence is made with is checked
/// against this, so that sizes in bytes (a length times at most 32 bytes an item, and the
/// sums of two lengths that a merge makes) never overflow.
pub(crate) const MAX_LEN: usize = 1 << 56;

/// `len`, or `Err(InvalidArgument)` where it is more than a sequence may hold (`MAX_LEN`).
pub(crate) fn lazy_len(len: usize) -> Result<usize> {
    if len > MAX_LEN {
        return Err(Error::InvalidArgument(format!(
            "a sequence of {len} elements is longer than the 2^56 a sequence may hold"
        )));
    }
    Ok(len)
}

/// `Err(InvalidArgument)` where indices of `idx_bytes` bytes cannot address `len` elements.
fn index_width(idx_bytes: usize, len: usize) -> Result<()> {
    if idx_bytes == 4 && len as u64 > 1 << 32 {
        return Err(Error::InvalidArgument(format!(
            "u32 indices cannot address {len} elements"
        )));
    }
    Ok(())
}

impl<T: Item> DeviceSeq<T> {
    /// A sequence on `dev` whose components are `comps` (one for an element).
    pub(crate) fn from_sources(dev: &Device, comps: Vec<Source>) -> Self {
        DeviceSeq {
            dev: dev.clone(),
            comps: comps.into(),
            _t: PhantomData,
        }
    }

    /// A stored sequence of the columns `cols`, one a component.
    pub(crate) fn stored_columns(dev: &Device, cols: Vec<Column>) -> Self {
        Self::from_sources(dev, cols.into_iter().map(Source::column).collect())
    }

    /// What each component reads.
    pub(crate) fn sources(&self) -> &[Source] {
        &self.comps
    }

    /// `Err(DeviceMismatch)` unless `other` lives on this sequence's device.
    fn same_device<U: Item>(&self, other: &DeviceSeq<U>) -> Result<()> {
        if self.dev.same(&other.dev) {
            Ok(())
        } else {
            Err(Error::DeviceMismatch)
        }
    }

    /// A hash of the sequence's shape: equal for two lazy sequences that one compiled kernel
    /// evaluates (whatever their constants are). For tests of the kernel cache.
    #[doc(hidden)]
    pub fn shape_hash(&self) -> u64 {
        self.comps
            .iter()
            .fold(0u64, |h, s| h.rotate_left(7) ^ s.hash)
    }

    /// Copies host data to the device (a tuple's components into a column each).
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
        let mut cols = Vec::with_capacity(T::TYPES.len());
        T::put_components(data, &mut |k, bytes| {
            cols.push(dev.backend().upload(T::TYPES[k], bytes, data.len())?);
            Ok(())
        })?;
        Ok(Self::stored_columns(dev, cols))
    }

    /// `len` copies of `value`: a lazy sequence (no memory, no kernel; evaluated where it is
    /// read).
    ///
    /// # Errors
    ///
    /// `Error::InvalidArgument` where `len` is more than 2^56 (the longest sequence).
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
        let len = lazy_len(len)?;
        let bits = value.item_bits();
        let comps = T::TYPES
            .iter()
            .enumerate()
            .map(|(k, &ty)| Source::constant(ty, ty.compute_from_stored(bits[k]), len))
            .collect();
        Ok(Self::from_sources(dev, comps))
    }

    /// Copies the elements to the host (waits for the work that produces them; a lazy
    /// sequence is evaluated on the device first).
    ///
    /// # Errors
    ///
    /// `Error::Cuda` where queued work failed; `Error::OutOfMemory`; `Error::Compile`.
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
        T::get_components(self.len(), &mut |k, bytes| {
            self.dev.backend().download(&self.comps[k], bytes)
        })
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.comps[0].len
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The device the sequence lives on.
    pub fn device(&self) -> &Device {
        &self.dev
    }
    /// An O(1) view of a sub-range, sharing the storage (no copy); of a lazy sequence, the lazy
    /// sequence of those elements.
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
            Bound::Unbounded => self.len(),
        };
        if start > end {
            panic!("slice index starts at {start} but ends at {end}");
        }
        if end > self.len() {
            panic!(
                "range end index {end} out of range for slice of length {}",
                self.len()
            );
        }
        let comps = self
            .comps
            .iter()
            .map(|s| s.slice(start, end - start))
            .collect();
        Self::from_sources(&self.dev, comps)
    }

    /// A stored sequence with the same elements and storage of its own: a deep copy of a
    /// stored sequence, the evaluation of a lazy one.
    ///
    /// Cost: one write of the sequence, and one read of what it is made of (a device-to-device
    /// copy where it is stored).
    ///
    /// # Errors
    ///
    /// `Error::OutOfMemory`; `Error::Cuda`; `Error::Compile`.
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
        let cols = self
            .comps
            .iter()
            .map(|s| self.dev.backend().materialize(s))
            .collect::<Result<Vec<_>>>()?;
        Ok(Self::stored_columns(&self.dev, cols))
    }

    /// Whether the elements are in memory (`false` for a lazy sequence). A `slice` of a stored
    /// sequence is stored.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::<u32>::sequence(&dev, 8)?;
    /// assert!(!xs.is_stored());
    /// let ys = xs.copy()?;
    /// assert!(ys.is_stored() && ys.slice(2..5).is_stored());
    /// assert!(!ys.map(|y| y + 1)?.is_stored());
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn is_stored(&self) -> bool {
        self.comps.iter().all(|s| s.as_column().is_some())
    }
}

impl<T: Element> DeviceSeq<T> {
    /// A sequence on `dev` whose elements are `src`.
    pub(crate) fn from_source(dev: &Device, src: Source) -> Self {
        Self::from_sources(dev, vec![src])
    }

    /// A stored sequence of the column `col`.
    pub(crate) fn stored(dev: &Device, col: Column) -> Self {
        Self::from_source(dev, Source::column(col))
    }

    /// What the sequence reads.
    pub(crate) fn source(&self) -> &Source {
        &self.comps[0]
    }

    /// `0, 1, 2, …, len-1` as `T`: wrapping for small integer types, rounded to nearest for
    /// floats (as `i as T`; `f16`/`bf16` through `f32`).
    ///
    /// A lazy sequence: no memory and no kernel; each element is computed where it is read.
    ///
    /// # Errors
    ///
    /// `Error::InvalidArgument` where `len` is more than 2^56 (the longest sequence).
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
        Ok(Self::from_source(
            dev,
            Source::sequence(T::TYPE, lazy_len(len)?),
        ))
    }
}
