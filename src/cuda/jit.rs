//! Run-time compilation of the kernel templates in `kernels/` with NVRTC, and the caches: one
//! in memory per GPU (kernel instances by source and name), one on disk (compiled images by a
//! hash of everything that went into them) so that a second process starts warm.
//!
//! An instance is named by a C++ name expression such as `ds_scan<f32, ds::OpAdd, 256, 4>`;
//! NVRTC instantiates the template and tells its mangled name, so no wrapper code is written
//! for it and no list of instances is kept anywhere.

use super::check;
use crate::error::{Error, Result};
use cudarc::driver::sys;
use cudarc::nvrtc::sys as nv;
use std::collections::HashMap;
use std::ffi::{CStr, CString, c_char};
use std::path::PathBuf;
use std::sync::atomic::AtomicU32;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

/// Every file of `kernels/`, by the name an `#include` uses, as built into the crate.
const EMBEDDED: &[(&str, &str)] = &[
    ("prelude.cuh", include_str!("../../kernels/prelude.cuh")),
    (
        "warp/reduce.cuh",
        include_str!("../../kernels/warp/reduce.cuh"),
    ),
    ("warp/scan.cuh", include_str!("../../kernels/warp/scan.cuh")),
    (
        "block/load.cuh",
        include_str!("../../kernels/block/load.cuh"),
    ),
    (
        "block/reduce.cuh",
        include_str!("../../kernels/block/reduce.cuh"),
    ),
    (
        "block/scan.cuh",
        include_str!("../../kernels/block/scan.cuh"),
    ),
    (
        "block/lookback.cuh",
        include_str!("../../kernels/block/lookback.cuh"),
    ),
    ("map.cu", include_str!("../../kernels/map.cu")),
    ("reduce.cu", include_str!("../../kernels/reduce.cu")),
    ("scan.cu", include_str!("../../kernels/scan.cu")),
    ("segment.cu", include_str!("../../kernels/segment.cu")),
    ("compact.cu", include_str!("../../kernels/compact.cu")),
    ("gather.cu", include_str!("../../kernels/gather.cu")),
    ("sort.cu", include_str!("../../kernels/sort.cu")),
    ("combine.cu", include_str!("../../kernels/combine.cu")),
    ("histogram.cu", include_str!("../../kernels/histogram.cu")),
];

/// The kernel files NVRTC sees: the embedded ones, or, for kernel development, the files of
/// the directory `DEVSEQ_KERNEL_DIR` names where it has them (the disk cache key covers their
/// contents, so edited kernels are recompiled).
fn files() -> &'static [(String, String)] {
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

/// One kernel instance: a translation unit (usually just an `#include` of its family's `.cu`,
/// plus the functor of a `map`) and the name expression that instantiates the kernel template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Instance {
    pub source: String,
    pub expr: String,
}

/// A compiled kernel, ready to launch.
pub(crate) struct Kernel {
    pub func: sys::CUfunction,
    /// The name expression it was instantiated from.
    pub name: String,
    /// Blocks per multiprocessor, once asked.
    pub occupancy: OnceLock<u32>,
    /// The dynamic shared memory limit set for it (0: the default 48 KB).
    pub smem_limit: AtomicU32,
}

// SAFETY: a CUfunction handle may be used from any thread with its context current; the
// module it belongs to is never unloaded (the Jit keeps the primary context for the process).
unsafe impl Send for Kernel {}
// SAFETY: as above.
unsafe impl Sync for Kernel {}

/// What NVRTC produces for the device: machine code where NVRTC knows the architecture, else
/// PTX of the newest one it knows, which the driver compiles at load.
#[derive(Debug, Clone)]
enum Target {
    Cubin(String),
    Ptx(String),
}

type Slot = Arc<OnceLock<Result<Arc<Kernel>>>>;

/// The compiler and caches of one GPU.
pub(crate) struct Jit {
    ctx: sys::CUcontext,
    target: Target,
    version: (i32, i32),
    options: Vec<String>,
    cache_dir: Option<PathBuf>,
    kernels: Mutex<HashMap<String, Slot>>,
}

// SAFETY: the context handle is only used to make it current before loading modules; the map
// is behind a mutex.
unsafe impl Send for Jit {}
// SAFETY: as above.
unsafe impl Sync for Jit {}

fn nvrtc_check(r: nv::nvrtcResult, call: &str) -> Result<()> {
    if r == nv::nvrtcResult::NVRTC_SUCCESS {
        return Ok(());
    }
    // SAFETY: returns a static string for any status.
    let msg = unsafe { CStr::from_ptr(nv::nvrtcGetErrorString(r)) }
        .to_string_lossy()
        .into_owned();
    Err(Error::Cuda(format!("{call}: {msg}")))
}

/// 128-bit FNV-1a, stable across Rust versions (the disk cache's key).
fn fnv128(parts: &[&[u8]]) -> u128 {
    let mut h: u128 = 0x6c62272e07bb014262b821756295c58d;
    for p in parts {
        for &b in *p {
            h ^= b as u128;
            h = h.wrapping_mul(0x0000000001000000000000000000013B);
        }
        h ^= 0xff;
        h = h.wrapping_mul(0x0000000001000000000000000000013B);
    }
    h
}

/// `DEVSEQ_CACHE_DIR`, else `$XDG_CACHE_HOME/devseq`, else `~/.cache/devseq`.
fn cache_dir() -> Option<PathBuf> {
    let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(d) = env("DEVSEQ_CACHE_DIR") {
        return Some(PathBuf::from(d));
    }
    if let Some(d) = env("XDG_CACHE_HOME") {
        return Some(PathBuf::from(d).join("devseq"));
    }
    env("HOME").map(|h| PathBuf::from(h).join(".cache").join("devseq"))
}

fn log_enabled() -> bool {
    static L: OnceLock<bool> = OnceLock::new();
    *L.get_or_init(|| std::env::var_os("DEVSEQ_LOG").is_some_and(|v| !v.is_empty() && v != "0"))
}

impl Jit {
    /// The compiler of GPU `ordinal` (one per process and GPU, shared by its `Device`s).
    pub fn for_device(ordinal: usize, ctx: sys::CUcontext, cc: (i32, i32)) -> Result<Arc<Jit>> {
        static ALL: Mutex<Vec<(usize, Arc<Jit>)>> = Mutex::new(Vec::new());
        let mut all = ALL
            .lock()
            .map_err(|_| Error::Cuda("jit registry lock poisoned".into()))?;
        if let Some((_, j)) = all.iter().find(|(o, _)| *o == ordinal) {
            return Ok(j.clone());
        }
        // Keep the primary context for the life of the process: the modules loaded into it
        // are cached here.
        let mut keep = std::ptr::null_mut();
        let mut dev = 0;
        // SAFETY: the ordinal was validated by the caller; writes one handle each.
        unsafe {
            check(sys::cuDeviceGet(&mut dev, ordinal as i32), "cuDeviceGet")?;
            check(
                sys::cuDevicePrimaryCtxRetain(&mut keep, dev),
                "cuDevicePrimaryCtxRetain",
            )?;
        }
        let (mut major, mut minor) = (0, 0);
        // SAFETY: writes two ints.
        nvrtc_check(
            unsafe { nv::nvrtcVersion(&mut major, &mut minor) },
            "nvrtcVersion",
        )?;
        let want = cc.0 * 10 + cc.1;
        let mut count = 0;
        // SAFETY: writes one int.
        nvrtc_check(
            unsafe { nv::nvrtcGetNumSupportedArchs(&mut count) },
            "nvrtcGetNumSupportedArchs",
        )?;
        let mut archs = vec![0i32; count.max(0) as usize];
        // SAFETY: the vector holds `count` ints.
        nvrtc_check(
            unsafe { nv::nvrtcGetSupportedArchs(archs.as_mut_ptr()) },
            "nvrtcGetSupportedArchs",
        )?;
        let target = if archs.contains(&want) {
            Target::Cubin(format!("sm_{want}"))
        } else {
            match archs.iter().copied().filter(|&a| a <= want).max() {
                Some(a) => Target::Ptx(format!("compute_{a}")),
                None => {
                    return Err(Error::NoCuda(format!(
                        "NVRTC {major}.{minor} cannot compile for compute capability {}.{}",
                        cc.0, cc.1
                    )));
                }
            }
        };
        let arch = match &target {
            Target::Cubin(a) | Target::Ptx(a) => a.clone(),
        };
        let options = options(&arch);
        let jit = Arc::new(Jit {
            ctx,
            target,
            version: (major, minor),
            options,
            cache_dir: cache_dir(),
            kernels: Mutex::new(HashMap::new()),
        });
        all.push((ordinal, jit.clone()));
        Ok(jit)
    }

    /// The kernel of `inst`, compiled on first use.
    pub fn get(&self, inst: &Instance) -> Result<Arc<Kernel>> {
        self.kernel(&inst.source, &inst.expr)
    }

    /// The kernel `expr` (a name expression such as `ds_reduce<f32, ds::OpAdd, 256, 16>`) of
    /// the translation unit `source`, compiled on first use.
    pub fn kernel(&self, source: &str, expr: &str) -> Result<Arc<Kernel>> {
        let key = format!("{expr}\n{source}");
        let slot = {
            let mut map = self
                .kernels
                .lock()
                .map_err(|_| Error::Cuda("kernel cache lock poisoned".into()))?;
            map.entry(key).or_default().clone()
        };
        // Different instances compile in parallel; the same one once.
        slot.get_or_init(|| self.build(source, expr).map(Arc::new))
            .clone()
    }

    fn build(&self, source: &str, expr: &str) -> Result<Kernel> {
        let t0 = Instant::now();
        let version = format!("{}.{}", self.version.0, self.version.1);
        let mut parts: Vec<&[u8]> = vec![
            b"devseq-jit-1",
            source.as_bytes(),
            expr.as_bytes(),
            version.as_bytes(),
        ];
        for o in &self.options {
            parts.push(o.as_bytes());
        }
        for (name, text) in files() {
            parts.push(name.as_bytes());
            parts.push(text.as_bytes());
        }
        let hash = fnv128(&parts);
        let path = self
            .cache_dir
            .as_ref()
            .map(|d| d.join(format!("{hash:032x}.bin")));
        if let Some(p) = &path
            && let Some((lowered, image)) = read_cache(p)
            && let Ok(k) = self.load(&image, &lowered, expr)
        {
            if log_enabled() {
                eprintln!(
                    "devseq: {expr}: loaded from the disk cache in {:.1} ms",
                    t0.elapsed().as_secs_f64() * 1e3
                );
            }
            return Ok(k);
        }
        let (lowered, image) = compile(source, expr, &self.options, &self.target)?;
        let t1 = Instant::now();
        if let Some(p) = &path {
            write_cache(p, &lowered, &image);
        }
        let k = self.load(&image, &lowered, expr)?;
        if log_enabled() {
            eprintln!(
                "devseq: {expr}: compiled by NVRTC in {:.1} ms, loaded in {:.1} ms",
                (t1 - t0).as_secs_f64() * 1e3,
                t1.elapsed().as_secs_f64() * 1e3
            );
        }
        Ok(k)
    }

    fn load(&self, image: &[u8], lowered: &str, expr: &str) -> Result<Kernel> {
        let name = CString::new(lowered)
            .map_err(|_| Error::InvalidArgument("NUL in a kernel name".into()))?;
        let mut module = std::ptr::null_mut();
        let mut func = std::ptr::null_mut();
        // SAFETY: the image is a complete CUBIN or a NUL-terminated PTX (both as NVRTC or the
        // cache wrote them); the context is retained for the process; the module is never
        // unloaded, so the function handle stays valid.
        unsafe {
            check(sys::cuCtxSetCurrent(self.ctx), "cuCtxSetCurrent")?;
            check(
                sys::cuModuleLoadData(&mut module, image.as_ptr() as *const _),
                "cuModuleLoadData",
            )?;
            check(
                sys::cuModuleGetFunction(&mut func, module, name.as_ptr()),
                "cuModuleGetFunction",
            )?;
        }
        Ok(Kernel {
            func,
            name: expr.to_string(),
            occupancy: OnceLock::new(),
            smem_limit: AtomicU32::new(0),
        })
    }
}

/// NVRTC: the mangled name of `expr` and the image (CUBIN, or PTX with a trailing NUL).
fn compile(
    source: &str,
    expr: &str,
    options: &[String],
    target: &Target,
) -> Result<(String, Vec<u8>)> {
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
        nvrtc_check(
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
        let result = (|| -> Result<(String, Vec<u8>)> {
            nvrtc_check(
                nv::nvrtcAddNameExpression(prog, cexpr.as_ptr()),
                "nvrtcAddNameExpression",
            )?;
            let r = nv::nvrtcCompileProgram(prog, opt_ptrs.len() as i32, opt_ptrs.as_ptr());
            if r != nv::nvrtcResult::NVRTC_SUCCESS {
                let mut n = 0usize;
                nv::nvrtcGetProgramLogSize(prog, &mut n);
                let mut log = vec![0u8; n.max(1)];
                nv::nvrtcGetProgramLog(prog, log.as_mut_ptr() as *mut c_char);
                let log = String::from_utf8_lossy(&log)
                    .trim_end_matches('\0')
                    .to_string();
                return Err(Error::Compile {
                    log,
                    source: format!("// instance: {expr}\n{source}"),
                });
            }
            let mut lowered: *const c_char = std::ptr::null();
            nvrtc_check(
                nv::nvrtcGetLoweredName(prog, cexpr.as_ptr(), &mut lowered),
                "nvrtcGetLoweredName",
            )?;
            let lowered = CStr::from_ptr(lowered).to_string_lossy().into_owned();
            let mut n = 0usize;
            let image = match target {
                Target::Cubin(_) => {
                    nvrtc_check(nv::nvrtcGetCUBINSize(prog, &mut n), "nvrtcGetCUBINSize")?;
                    let mut v = vec![0u8; n];
                    nvrtc_check(
                        nv::nvrtcGetCUBIN(prog, v.as_mut_ptr() as *mut c_char),
                        "nvrtcGetCUBIN",
                    )?;
                    v
                }
                Target::Ptx(_) => {
                    nvrtc_check(nv::nvrtcGetPTXSize(prog, &mut n), "nvrtcGetPTXSize")?;
                    let mut v = vec![0u8; n];
                    nvrtc_check(
                        nv::nvrtcGetPTX(prog, v.as_mut_ptr() as *mut c_char),
                        "nvrtcGetPTX",
                    )?;
                    v
                }
            };
            Ok((lowered, image))
        })();
        nv::nvrtcDestroyProgram(&mut prog);
        result
    }
}

/// Compiles `inst` for `arch` (e.g. `sm_90`) without a device, as `Jit` would: a check that
/// every template instantiates, for the kernel compile test.
#[cfg(test)]
pub(crate) fn compile_for(arch: &str, inst: &Instance) -> Result<Vec<u8>> {
    let target = Target::Cubin(arch.to_string());
    compile(&inst.source, &inst.expr, &options(arch), &target).map(|(_, image)| image)
}

/// NVRTC's options for `arch`.
fn options(arch: &str) -> Vec<String> {
    vec![
        format!("--gpu-architecture={arch}"),
        "-std=c++17".to_string(),
        // No fused multiply-add contraction: host and GPU round the same way.
        "--fmad=false".to_string(),
        "-DNDEBUG".to_string(),
    ]
}

const MAGIC: &[u8; 4] = b"DSQ1";

fn read_cache(path: &PathBuf) -> Option<(String, Vec<u8>)> {
    let data = std::fs::read(path).ok()?;
    if data.len() < 8 || &data[..4] != MAGIC {
        return None;
    }
    let n = u32::from_le_bytes(data[4..8].try_into().ok()?) as usize;
    let name = String::from_utf8(data.get(8..8 + n)?.to_vec()).ok()?;
    Some((name, data[8 + n..].to_vec()))
}

/// Writes the cache entry through a temporary file and a rename, so a reader never sees half
/// of one; failures only cost a recompilation later.
fn write_cache(path: &PathBuf, lowered: &str, image: &[u8]) {
    let Some(dir) = path.parent() else { return };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let mut data = Vec::with_capacity(8 + lowered.len() + image.len());
    data.extend_from_slice(MAGIC);
    data.extend_from_slice(&(lowered.len() as u32).to_le_bytes());
    data.extend_from_slice(lowered.as_bytes());
    data.extend_from_slice(image);
    let tmp = path.with_extension(format!("{}.tmp", std::process::id()));
    if std::fs::write(&tmp, &data).is_ok() && std::fs::rename(&tmp, path).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv_separates_parts() {
        assert_ne!(fnv128(&[b"ab", b"c"]), fnv128(&[b"a", b"bc"]));
        assert_eq!(fnv128(&[b"x"]), fnv128(&[b"x"]));
    }
}
