//! The CUDA libraries as devseq finds them, and the driver's errors as devseq reports them:
//! whether the driver and NVRTC libraries load and which entry points the driver has, and the
//! mapping of a driver status to `Error`. Depends on nothing else of the backend, which all
//! builds on it.

use crate::error::{Error, Result};
use cudarc::driver::{DriverError, sys};
use std::sync::OnceLock;

/// `Error::Cuda` naming the call, the driver's error name and its description.
pub(crate) fn driver_error(e: DriverError, call: &str) -> Error {
    let name = e
        .error_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|_| format!("{:?}", e.0));
    let desc = e
        .error_string()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    Error::Cuda(format!("{call}: {name} ({desc})"))
}

/// `Ok` or `Error::Cuda` naming the call, for a raw driver status.
pub(crate) fn check(r: sys::CUresult, call: &'static str) -> Result<()> {
    if r == sys::CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(driver_error(DriverError(r), call))
    }
}

/// Extension: `.cuda("call")?` turns a cudarc error into `Error::Cuda` (out of memory into
/// `Error::OutOfMemory` where the caller says how many bytes it asked for).
pub(crate) trait DriverResult<T> {
    fn cuda(self, call: &'static str) -> Result<T>;
}

impl<T> DriverResult<T> for std::result::Result<T, DriverError> {
    fn cuda(self, call: &'static str) -> Result<T> {
        self.map_err(|e| driver_error(e, call))
    }
}

/// Whether the CUDA driver library can be loaded (cudarc panics on first use where it cannot,
/// so this is asked first, once).
pub(crate) fn driver_present() -> bool {
    static P: OnceLock<bool> = OnceLock::new();
    // SAFETY: only tries to open the library by its candidate names.
    *P.get_or_init(|| unsafe { sys::is_culib_present() })
}

/// Whether the NVRTC library can be loaded.
pub(crate) fn nvrtc_present() -> bool {
    static P: OnceLock<bool> = OnceLock::new();
    // SAFETY: only tries to open the library by its candidate names.
    *P.get_or_init(|| unsafe { cudarc::nvrtc::sys::is_culib_present() })
}

/// Whether the driver library exports `name` (for entry points newer than the oldest
/// supported driver; cudarc panics when a missing one is called).
pub(crate) fn driver_has(name: &str) -> bool {
    // SAFETY: `culib` is only called once `driver_present` said the library loads; looking up a
    // symbol has no side effects.
    driver_present()
        && unsafe {
            sys::culib()
                .get::<*const std::ffi::c_void>(name.as_bytes())
                .is_ok()
        }
}
