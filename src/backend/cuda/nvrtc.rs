//! NVRTC, the run-time compiler: the kernel files it sees, its options, and one compile of an
//! instance (a translation unit and a C++ name expression) into an image for one target. Used
//! in the process for the quick forms and users' kernels (`jit.rs`), and in the compile helpers
//! for the optimized forms (`helper.rs`).
//!
//! NVRTC is called through cudarc's raw bindings: its safe layer has no headers, name
//! expressions or CUBIN output.

use super::driver::nvrtc_present;
use crate::error::{Error, Result};
use cudarc::nvrtc::sys as nv;
use std::ffi::{CStr, CString, c_char};
use std::path::PathBuf;
use std::sync::OnceLock;

include!(concat!(env!("OUT_DIR"), "/kernels.rs"));

/// The kernel files NVRTC sees: the embedded ones, or, for kernel development, the files of
/// the directory `DEVSEQ_KERNEL_DIR` names where it has them (the disk cache key covers their
/// contents, so edited kernels are recompiled).
pub(crate) fn files() -> &'static [(String, String)] {
    static F: OnceLock<Vec<(String, String)>> = OnceLock::new();
    F.get_or_init(|| {
        let dir = std::env::var_os("DEVSEQ_KERNEL_DIR").map(PathBuf::from);
        EMBEDDED
            .iter()
            .map(|(name, text)| {
                let over = dir
                    .as_ref()
                    .and_then(|d| std::fs::read_to_string(d.join(name)).ok());
                (name.to_string(), over.unwrap_or_else(|| text.to_string()))
            })
            .collect()
    })
}

/// What NVRTC produces for the device: machine code where NVRTC knows the architecture, else
/// PTX of the newest one it knows, which the driver compiles at load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    /// `sm_XY`: a CUBIN.
    Cubin(String),
    /// `compute_XY`: PTX, NUL-terminated.
    Ptx(String),
}

impl Target {
    /// The architecture's name as NVRTC's `--gpu-architecture` takes it.
    pub fn arch(&self) -> &str {
        match self {
            Target::Cubin(a) | Target::Ptx(a) => a,
        }
    }

    /// The target an architecture name asks for: PTX for a `compute_` one, else a CUBIN.
    pub fn named(arch: &str) -> Target {
        if arch.starts_with("compute_") {
            Target::Ptx(arch.to_string())
        } else {
            Target::Cubin(arch.to_string())
        }
    }
}

/// One compiled instance: the mangled name of its kernel and its image (a CUBIN, or PTX with
/// its trailing NUL).
#[derive(Debug, Clone)]
pub(crate) struct Image {
    pub lowered: String,
    pub bytes: Vec<u8>,
}

pub(crate) fn check(r: nv::nvrtcResult, call: &str) -> Result<()> {
    if r == nv::nvrtcResult::NVRTC_SUCCESS {
        return Ok(());
    }
    // SAFETY: returns a static string for any status.
    let msg = unsafe { CStr::from_ptr(nv::nvrtcGetErrorString(r)) }
        .to_string_lossy()
        .into_owned();
    Err(Error::Cuda(format!("{call}: {msg}")))
}

/// NVRTC's version, `(major, minor)`.
pub(crate) fn version() -> Result<(i32, i32)> {
    if !nvrtc_present() {
        return Err(Error::NoCuda("the NVRTC library was not found".into()));
    }
    let (mut major, mut minor) = (0, 0);
    // SAFETY: writes two ints.
    check(
        unsafe { nv::nvrtcVersion(&mut major, &mut minor) },
        "nvrtcVersion",
    )?;
    Ok((major, minor))
}

/// The architectures this NVRTC compiles machine code for, as `10 * major + minor`.
pub(crate) fn supported_archs() -> Result<Vec<i32>> {
    let mut count = 0;
    // SAFETY: writes one int.
    check(
        unsafe { nv::nvrtcGetNumSupportedArchs(&mut count) },
        "nvrtcGetNumSupportedArchs",
    )?;
    let mut archs = vec![0i32; count.max(0) as usize];
    // SAFETY: the vector holds `count` ints.
    check(
        unsafe { nv::nvrtcGetSupportedArchs(archs.as_mut_ptr()) },
        "nvrtcGetSupportedArchs",
    )?;
    Ok(archs)
}

/// NVRTC's option to neither read nor write its cache.
const NO_CACHE: &str = "--no-cache";

/// Whether NVRTC takes `--no-cache` (13.0 does; versions before 12.9 have no cache to
/// bypass), learned by compiling an empty kernel with it, once a process. Every devseq compile
/// then bypasses NVRTC's cache: devseq keeps its own disk cache of the optimized and quick
/// forms, so NVRTC's would only hold second copies in the driver's compute cache (shared with
/// other programs' PTX, and evicted by size).
pub(crate) fn takes_no_cache() -> bool {
    static TAKES: OnceLock<bool> = OnceLock::new();
    *TAKES.get_or_init(|| {
        let options = ["-std=c++17".to_string(), NO_CACHE.to_string()];
        let target = Target::Ptx(String::new());
        let empty = "extern \"C\" __global__ void ds_prime() {}";
        compile(empty, "ds_prime", &options, &target).is_ok()
    })
}

/// NVRTC's start, once a process: its library loaded and its first compile (an empty kernel,
/// which `takes_no_cache` makes), 20 to 75 ms that `Gpu::new` spends beside the creation of
/// its context rather than before the first kernel.
pub(crate) fn warm_up() {
    let t0 = std::time::Instant::now();
    let bypass = takes_no_cache();
    log::debug!(
        "NVRTC started in {:.1} ms ({})",
        t0.elapsed().as_secs_f64() * 1e3,
        if bypass {
            "its own cache bypassed"
        } else {
            "it does not take --no-cache"
        }
    );
}

/// NVRTC's options for `arch` (the optimized form).
pub(crate) fn options(arch: &str) -> Vec<String> {
    let mut o = vec![
        format!("--gpu-architecture={arch}"),
        "-std=c++17".to_string(),
        // No fused multiply-add contraction: host and GPU round the same way.
        "--fmad=false".to_string(),
        "-DNDEBUG".to_string(),
    ];
    if takes_no_cache() {
        o.push(NO_CACHE.to_string());
    }
    o
}

/// The quick form's options for `arch`: the same, with NVRTC's fast-compile level `mid` (a
/// third of the compile time of the optimized form for the scans, at some cost in speed) and
/// `DS_QUICK`, under which the look-back kernels read one window of predecessors in a small
/// loop instead of four unrolled ones (the same bits; a third less compile time again).
pub(crate) fn quick_options(arch: &str) -> Vec<String> {
    let mut o = options(arch);
    o.push("--Ofast-compile=mid".to_string());
    o.push("-DDS_QUICK".to_string());
    o
}

/// Compiles `source` (which includes the kernel files by name) and instantiates `expr` for
/// `target`: the image and NVRTC's log, or `Error::Compile` with the log and the source.
pub(crate) fn compile(
    source: &str,
    expr: &str,
    options: &[String],
    target: &Target,
) -> Result<(Image, String)> {
    let cstr = |s: &str| {
        CString::new(s).map_err(|_| Error::InvalidArgument("NUL in kernel source".into()))
    };
    let src = cstr(source)?;
    let names: Vec<CString> = files()
        .iter()
        .map(|(n, _)| cstr(n))
        .collect::<Result<_>>()?;
    let texts: Vec<CString> = files()
        .iter()
        .map(|(_, t)| cstr(t))
        .collect::<Result<_>>()?;
    let name_ptrs: Vec<*const c_char> = names.iter().map(|c| c.as_ptr()).collect();
    let text_ptrs: Vec<*const c_char> = texts.iter().map(|c| c.as_ptr()).collect();
    let opts: Vec<CString> = options.iter().map(|o| cstr(o)).collect::<Result<_>>()?;
    let opt_ptrs: Vec<*const c_char> = opts.iter().map(|c| c.as_ptr()).collect();
    let cexpr = cstr(expr)?;
    let mut prog: nv::nvrtcProgram = std::ptr::null_mut();
    // SAFETY: every pointer refers to a NUL-terminated string alive for the whole block;
    // the header arrays have `files().len()` entries; the program is destroyed at the end.
    unsafe {
        check(
            nv::nvrtcCreateProgram(
                &mut prog,
                src.as_ptr(),
                c"devseq.cu".as_ptr(),
                files().len() as i32,
                text_ptrs.as_ptr(),
                name_ptrs.as_ptr(),
            ),
            "nvrtcCreateProgram",
        )?;
        let result = (|| -> Result<(Image, String)> {
            check(
                nv::nvrtcAddNameExpression(prog, cexpr.as_ptr()),
                "nvrtcAddNameExpression",
            )?;
            let r = nv::nvrtcCompileProgram(prog, opt_ptrs.len() as i32, opt_ptrs.as_ptr());
            let mut n = 0usize;
            nv::nvrtcGetProgramLogSize(prog, &mut n);
            let mut log = vec![0u8; n.max(1)];
            nv::nvrtcGetProgramLog(prog, log.as_mut_ptr() as *mut c_char);
            let log = String::from_utf8_lossy(&log)
                .trim_end_matches('\0')
                .to_string();
            if r != nv::nvrtcResult::NVRTC_SUCCESS {
                return Err(Error::Compile {
                    log,
                    source: format!("// instance: {expr}\n{source}"),
                });
            }
            let mut lowered: *const c_char = std::ptr::null();
            check(
                nv::nvrtcGetLoweredName(prog, cexpr.as_ptr(), &mut lowered),
                "nvrtcGetLoweredName",
            )?;
            let lowered = CStr::from_ptr(lowered).to_string_lossy().into_owned();
            let mut n = 0usize;
            let bytes = match target {
                Target::Cubin(_) => {
                    check(nv::nvrtcGetCUBINSize(prog, &mut n), "nvrtcGetCUBINSize")?;
                    let mut v = vec![0u8; n];
                    check(
                        nv::nvrtcGetCUBIN(prog, v.as_mut_ptr() as *mut c_char),
                        "nvrtcGetCUBIN",
                    )?;
                    v
                }
                Target::Ptx(_) => {
                    check(nv::nvrtcGetPTXSize(prog, &mut n), "nvrtcGetPTXSize")?;
                    let mut v = vec![0u8; n];
                    check(
                        nv::nvrtcGetPTX(prog, v.as_mut_ptr() as *mut c_char),
                        "nvrtcGetPTX",
                    )?;
                    v
                }
            };
            Ok((Image { lowered, bytes }, log))
        })();
        nv::nvrtcDestroyProgram(&mut prog);
        result
    }
}
