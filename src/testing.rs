//! Test hooks, not part of the API (hidden from the docs): fault injection and a check of the
//! kernel cache's entries, for the crate's own fault and stress tests.

/// Makes the `k`-th device allocation from now fail with `Error::OutOfMemory` (`k` from
/// 1; 0 disarms). Process-wide.
///
/// ```rust,standalone_crate
/// use devseq::{Device, DeviceSeq, Error};
/// let dev = Device::host();
/// devseq::testing::fail_nth_allocation(1);
/// let r = DeviceSeq::from_slice(&dev, &[1u32, 2, 3]);
/// assert!(matches!(r, Err(Error::OutOfMemory { .. })));
/// assert!(devseq::testing::allocation_fault_fired());
/// assert!(DeviceSeq::from_slice(&dev, &[1u32, 2, 3]).is_ok());
/// ```
pub fn fail_nth_allocation(k: u64) {
    crate::fault::ALLOCATION.arm(k);
}

/// Makes the `k`-th kernel launch from now fail with `Error::Cuda` (`k` from 1; 0
/// disarms). Process-wide; the host backend launches nothing.
///
/// ```
/// devseq::testing::fail_nth_launch(0);
/// assert!(!devseq::testing::launch_fault_fired());
/// ```
pub fn fail_nth_launch(k: u64) {
    crate::fault::LAUNCH.arm(k);
}

/// Whether the armed allocation fault has fired.
///
/// ```
/// devseq::testing::fail_nth_allocation(0);
/// assert!(!devseq::testing::allocation_fault_fired());
/// ```
pub fn allocation_fault_fired() -> bool {
    crate::fault::ALLOCATION.fired()
}

/// Whether the armed launch fault has fired.
///
/// ```
/// devseq::testing::fail_nth_launch(0);
/// assert!(!devseq::testing::launch_fault_fired());
/// ```
pub fn launch_fault_fired() -> bool {
    crate::fault::LAUNCH.fired()
}

/// The kernel cache entries of `dir` that verify (checksum, key, owner), and the names of
/// the files there that do not.
///
/// ```
/// let dir = std::env::temp_dir().join(format!("devseq-doc-verify-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// std::fs::write(dir.join("junk.bin"), b"junk").unwrap();
/// let (ok, bad) = devseq::testing::verify_cache_dir(&dir).unwrap();
/// assert_eq!((ok, bad), (0, vec!["junk.bin".to_string()]));
/// std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn verify_cache_dir(dir: &std::path::Path) -> std::io::Result<(usize, Vec<String>)> {
    crate::backend::cuda::disk_cache::verify_dir(dir)
}

/// For the exit test, without a GPU: compiles the quick form of a large scan for `arch` (e.g.
/// `"sm_90"`) with NVRTC in this thread, then queues the optimized forms of the large sums of
/// every element type for compile helpers, and returns while they compile. The returned handle
/// keeps the queue; a process may exit at any point after.
///
/// # Errors
///
/// `Error::NoCuda` where the NVRTC library is not found, `Error::Compile` where the quick
/// compile fails.
///
/// ```
/// // Where NVRTC is installed, the background compiles run and the process may exit at once.
/// if let Ok(handle) = devseq::testing::compile_scans_in_background("sm_90") {
///     drop(handle);
/// }
/// ```
pub fn compile_scans_in_background(arch: &str) -> crate::Result<impl Sized + use<>> {
    crate::backend::cuda::compile_scans_in_background(arch)
}
