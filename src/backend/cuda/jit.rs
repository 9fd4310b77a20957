//! Run-time compilation of the kernel templates in `kernels/` with NVRTC, and the caches: one
//! in memory per GPU (kernels by their typed key, `key.rs`), one on disk (compiled images by a
//! hash of everything that went into them) so that a second process starts warm.
//!
//! An instance is a short translation unit (the family's parameter struct, its kernel file,
//! the printed structs of lazy sources) and a C++ name expression such as
//! `ds_scan<ds::Col<f32, 4>, ds::OpAdd, 256, 16, 3, false>`; NVRTC instantiates the template
//! and tells its mangled name, so no wrapper is written and no list of instances is kept.
//! NVRTC is called through cudarc's raw bindings: its safe layer has no headers, name
//! expressions or CUBIN output.

use super::disk_cache;
use super::gpu::{DriverResult, nvrtc_present};
use super::key::KernelKey;
use super::source;
use super::tuning::Arch;
use crate::error::{Error, Result};
use cudarc::driver::{CudaContext, CudaFunction};
use cudarc::nvrtc::Ptx;
use cudarc::nvrtc::sys as nv;
use std::collections::HashMap;
use std::ffi::{CStr, CString, c_char};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

include!(concat!(env!("OUT_DIR"), "/kernels.rs"));

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

/// Kernel instances built (compiled, or loaded from the disk cache) by this process: a test
/// hook for "one compile per kernel shape".
static BUILT: AtomicU64 = AtomicU64::new(0);

/// Kernel instances this process has built (compiled or loaded from disk) so far.
pub(crate) fn kernels_built() -> u64 {
    BUILT.load(Ordering::Relaxed)
}

/// The translation unit and the name expression of the instance `key`.
pub(crate) fn instance(key: &KernelKey) -> (String, String) {
    let names: Vec<String> = key
        .sources
        .iter()
        .enumerate()
        .map(|(k, s)| source::cpp_name(s, k))
        .collect();
    let mut src = format!(
        "#include \"prelude.cuh\"\n{}#include \"{}\"\n",
        super::key::Family::all_params(),
        key.family.file()
    );
    for (k, s) in key.sources.iter().enumerate() {
        src.push_str(&source::cpp_struct(s, k));
    }
    if let Some(f) = &key.functor {
        src.push_str(&super::assoc::cpp_functor(f));
    }
    (src, key.family.name(&names))
}

/// The kernel of `key` in `map`, built by `build` on its first use: one slot a key, so that
/// different keys build in parallel and each key once.
fn once<K: Eq + std::hash::Hash + Clone>(
    map: &Mutex<HashMap<K, Slot>>,
    key: &K,
    build: impl FnOnce() -> Result<Kernel>,
) -> Result<Arc<Kernel>> {
    let slot = {
        let mut map = map
            .lock()
            .map_err(|_| Error::Internal("kernel cache lock poisoned".into()))?;
        match map.get(key) {
            Some(s) => s.clone(),
            None => map.entry(key.clone()).or_default().clone(),
        }
    };
    slot.get_or_init(|| build().map(Arc::new)).clone()
}

/// A compiled kernel, ready to launch.
pub(crate) struct Kernel {
    pub func: CudaFunction,
    /// The name expression it was instantiated from.
    pub name: String,
    /// Blocks per multiprocessor, once asked.
    pub occupancy: OnceLock<u32>,
    /// The dynamic shared memory limit set for it (0: the default 48 KB).
    pub smem_limit: AtomicU32,
}

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
    ctx: Arc<CudaContext>,
    target: Target,
    version: (i32, i32),
    options: Vec<String>,
    cache_dir: Option<PathBuf>,
    kernels: Mutex<HashMap<KernelKey, Slot>>,
    /// Users' kernels (`Device::compile`), by name and source.
    user: Mutex<HashMap<(String, String), Slot>>,
}

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
    /// The compiler of the GPU of `ctx` (one per process and GPU, shared by its `Device`s).
    pub fn for_device(ctx: &Arc<CudaContext>, arch: Arch) -> Result<Arc<Jit>> {
        static ALL: Mutex<Vec<(usize, Arc<Jit>)>> = Mutex::new(Vec::new());
        let mut all = ALL
            .lock()
            .map_err(|_| Error::Internal("jit registry lock poisoned".into()))?;
        if let Some((_, j)) = all.iter().find(|(o, _)| *o == ctx.ordinal()) {
            return Ok(j.clone());
        }
        if !nvrtc_present() {
            return Err(Error::NoCuda("the NVRTC library was not found".into()));
        }
        let (mut major, mut minor) = (0, 0);
        // SAFETY: writes two ints.
        nvrtc_check(
            unsafe { nv::nvrtcVersion(&mut major, &mut minor) },
            "nvrtcVersion",
        )?;
        let want = (arch.major * 10 + arch.minor) as i32;
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
                        arch.major, arch.minor
                    )));
                }
            }
        };
        let name = match &target {
            Target::Cubin(a) | Target::Ptx(a) => a.clone(),
        };
        let jit = Arc::new(Jit {
            ctx: ctx.clone(),
            target,
            version: (major, minor),
            options: options(&name),
            cache_dir: cache_dir().and_then(|d| match disk_cache::prepare_dir(&d) {
                Ok(()) => Some(d),
                Err(why) => {
                    if log_enabled() {
                        eprintln!("devseq: the disk cache is not used: {why}");
                    }
                    None
                }
            }),
            kernels: Mutex::new(HashMap::new()),
            user: Mutex::new(HashMap::new()),
        });
        all.push((ctx.ordinal(), jit.clone()));
        Ok(jit)
    }

    /// The kernel of `key`, built on first use (different keys in parallel, each once).
    pub fn get(&self, key: &KernelKey) -> Result<Arc<Kernel>> {
        once(&self.kernels, key, || {
            let (src, expr) = instance(key);
            self.build(&src, &expr)
        })
    }

    /// A user's kernel `name` from `source` (after devseq's prelude), built on first use
    /// through the same compiler options and caches as devseq's own.
    pub fn user(&self, name: &str, source: &str) -> Result<Arc<Kernel>> {
        once(&self.user, &(name.to_string(), source.to_string()), || {
            self.build(&format!("#include \"prelude.cuh\"\n{source}\n"), name)
        })
    }

    fn build(&self, source: &str, expr: &str) -> Result<Kernel> {
        BUILT.fetch_add(1, Ordering::Relaxed);
        let t0 = Instant::now();
        let version = format!("{}.{}", self.version.0, self.version.1);
        let mut parts: Vec<&[u8]> = vec![source.as_bytes(), expr.as_bytes(), version.as_bytes()];
        for o in &self.options {
            parts.push(o.as_bytes());
        }
        for (name, text) in files() {
            parts.push(name.as_bytes());
            parts.push(text.as_bytes());
        }
        let key = disk_cache::key(&parts);
        let path = self
            .cache_dir
            .as_ref()
            .map(|d| disk_cache::entry_path(d, &key));
        if let Some(p) = &path {
            let why = match disk_cache::read(p, &key) {
                Ok((lowered, image)) => match self.load(image, &lowered, expr) {
                    Ok(k) => {
                        if log_enabled() {
                            eprintln!(
                                "devseq: {expr}: loaded from the disk cache in {:.1} ms",
                                t0.elapsed().as_secs_f64() * 1e3
                            );
                        }
                        return Ok(k);
                    }
                    Err(e) => Some(format!("did not load ({e})")),
                },
                Err(disk_cache::Reject::Missing) => None,
                Err(r) => Some(format!("not used ({})", r.reason())),
            };
            if let Some(why) = why
                && log_enabled()
            {
                eprintln!("devseq: {}: {why}; compiling again", p.display());
            }
        }
        let (lowered, image, _) = compile(source, expr, &self.options, &self.target)?;
        let t1 = Instant::now();
        if let Some(p) = &path {
            disk_cache::write(p, &key, &lowered, &image);
        }
        let k = self.load(image, &lowered, expr)?;
        if log_enabled() {
            eprintln!(
                "devseq: {expr}: compiled by NVRTC in {:.1} ms, loaded in {:.1} ms",
                (t1 - t0).as_secs_f64() * 1e3,
                t1.elapsed().as_secs_f64() * 1e3
            );
        }
        Ok(k)
    }

    fn load(&self, image: Vec<u8>, lowered: &str, expr: &str) -> Result<Kernel> {
        // A CUBIN, or a PTX with its terminating NUL, as NVRTC or the cache wrote it.
        let module = self
            .ctx
            .load_module(Ptx::from_binary(image))
            .cuda("cuModuleLoadData")?;
        let func = module.load_function(lowered).cuda("cuModuleGetFunction")?;
        Ok(Kernel {
            func,
            name: expr.to_string(),
            occupancy: OnceLock::new(),
            smem_limit: AtomicU32::new(0),
        })
    }
}

/// NVRTC: the mangled name of `expr`, the image (CUBIN, or PTX with a trailing NUL) and
/// NVRTC's log.
fn compile(
    source: &str,
    expr: &str,
    options: &[String],
    target: &Target,
) -> Result<(String, Vec<u8>, String)> {
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
        let result = (|| -> Result<(String, Vec<u8>, String)> {
            nvrtc_check(
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
            Ok((lowered, image, log))
        })();
        nv::nvrtcDestroyProgram(&mut prog);
        result
    }
}

/// Compiles the instance `key` for `arch` (e.g. `sm_90`) without a device, as `Jit` would:
/// a check that every template instantiates, for the kernel compile test. Returns the image
/// and the log, which has ptxas' report of registers and spills where `ptxas_info`.
#[cfg(test)]
pub(crate) fn compile_for(
    arch: &str,
    key: &KernelKey,
    ptxas_info: bool,
) -> Result<(Vec<u8>, String)> {
    let (src, expr) = instance(key);
    let target = Target::Cubin(arch.to_string());
    let mut opts = options(arch);
    if ptxas_info {
        opts.push("--ptxas-options=-v".into());
    }
    compile(&src, &expr, &opts, &target).map(|(_, image, log)| (image, log))
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
