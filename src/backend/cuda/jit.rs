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
//!
//! Tiers (`DEVSEQ_JIT`): by default a kernel that is not on disk is first compiled quickly
//! (NVRTC's `--Ofast-compile=mid`: a third of the time, slower code), used at once, and
//! compiled again with full optimization by background threads, which put the optimized
//! kernel in its place and on disk. Both come from the same template, options and launch
//! shapes, so they give the same bits; only their speed differs. (The quick form's look-back
//! kernels find a tile's prefix by one window of predecessors, `ds::tile_lookback_quick`,
//! which gives the value that the optimized form's windows find, by its definition.)
//! `Device::finish_compiling` waits for the background compiles.

use super::disk_cache;
use super::gpu::{DriverResult, nvrtc_present};
use super::key::KernelKey;
use super::source;
use super::tuning::Arch;
use crate::error::{Error, Result};
use cudarc::driver::{CudaContext, CudaFunction};
use cudarc::nvrtc::Ptx;
use cudarc::nvrtc::sys as nv;
use std::collections::{HashMap, VecDeque};
use std::ffi::{CStr, CString, c_char};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock, RwLock};
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
fn once<K: Eq + std::hash::Hash + Clone, T: Clone>(
    map: &Cache<K, T>,
    key: &K,
    build: impl FnOnce() -> Result<T>,
) -> Result<T> {
    let slot = {
        let mut map = map
            .lock()
            .map_err(|_| Error::Internal("kernel cache lock poisoned".into()))?;
        match map.get(key) {
            Some(s) => s.clone(),
            None => map.entry(key.clone()).or_default().clone(),
        }
    };
    slot.get_or_init(build).clone()
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

type Slot<T> = Arc<OnceLock<Result<T>>>;
/// A cache of kernels, each built once.
type Cache<K, T> = Mutex<HashMap<K, Slot<T>, crate::hash::Fast>>;

/// How kernels are compiled, from `DEVSEQ_JIT`: `tiered` (the default), `optimized` (every
/// kernel fully optimized before its first launch, as a build without tiers) or `quick` (the
/// quick form only, for testing it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tiers {
    Tiered,
    Optimized,
    Quick,
}

fn tiers() -> Tiers {
    match std::env::var("DEVSEQ_JIT").as_deref() {
        Ok("optimized") => Tiers::Optimized,
        Ok("quick") => Tiers::Quick,
        _ => Tiers::Tiered,
    }
}

/// The two forms a kernel is compiled in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    Quick,
    Optimized,
}

/// NVRTC with one GPU's target and options, and the disk cache: what the background thread
/// needs as well.
struct Compiler {
    ctx: Arc<CudaContext>,
    target: Target,
    version: (i32, i32),
    optimized: Vec<String>,
    /// The quick form's options; none where this NVRTC has no `--Ofast-compile` (before 12.8).
    quick: Option<Vec<String>>,
    cache_dir: Option<PathBuf>,
}

/// The kernel of one key now: its quick form until the optimized one replaces it. The
/// replaced form is kept (its module loaded) for the life of the process: launches of it may
/// still be queued when it is replaced, and unloading a module under them is not safe.
struct Entry {
    current: RwLock<Arc<Kernel>>,
    replaced: Mutex<Option<Arc<Kernel>>>,
}

impl Entry {
    fn new(k: Kernel) -> Arc<Entry> {
        Arc::new(Entry {
            current: RwLock::new(Arc::new(k)),
            replaced: Mutex::new(None),
        })
    }
    fn current(&self) -> Result<Arc<Kernel>> {
        self.current
            .read()
            .map(|k| k.clone())
            .map_err(|_| Error::Internal("kernel entry lock poisoned".into()))
    }
    fn replace(&self, k: Kernel) {
        let old = std::mem::replace(
            &mut *self.current.write().unwrap_or_else(|e| e.into_inner()),
            Arc::new(k),
        );
        *self.replaced.lock().unwrap_or_else(|e| e.into_inner()) = Some(old);
    }
}

/// A kernel's cache entry, held (`Jit::pin`).
pub(crate) struct Pinned(Arc<Entry>);

impl Pinned {
    /// The kernel's current form.
    pub fn current(&self) -> Result<Arc<Kernel>> {
        self.0.current()
    }
}

/// An optimized compile waiting for the background thread.
struct Job {
    source: String,
    expr: String,
    entry: Arc<Entry>,
}

/// The background compiles of one GPU: a queue served by up to `workers()` threads, started
/// when work arrives and ended when the queue is empty.
#[derive(Default)]
struct Background {
    queue: Mutex<Queue>,
    idle: Condvar,
}

#[derive(Default)]
struct Queue {
    jobs: VecDeque<Job>,
    /// Jobs queued or being compiled.
    pending: usize,
    /// Threads serving the queue.
    workers: usize,
    /// Whether a thread registers the exit hook again while compiles run (`Background::keep`).
    keeper: bool,
    /// The process is exiting: no more jobs.
    closed: bool,
}

/// Background compile threads for one GPU: a quarter of the CPUs, from 1 to 4. The quick
/// forms run slower (1.1 to 9.4 times on an H100), so the optimized ones should come soon, but
/// the user's own threads need the CPUs too.
fn workers() -> usize {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    (cpus / 4).clamp(1, 4)
}

/// Every GPU's background compiles, for the exit hook.
static BACKGROUNDS: Mutex<Vec<Arc<Background>>> = Mutex::new(Vec::new());

unsafe extern "C" {
    /// The C library's: runs `f` at process exit.
    fn atexit(f: extern "C" fn()) -> std::ffi::c_int;
}

/// Run by the C library at process exit, before the CUDA and NVRTC libraries tear down (their
/// own exit handlers were registered before this one, and run after it): ends the background
/// compiles, dropping the queued ones and waiting (a bounded time) for those running. A thread
/// still inside NVRTC or the driver while they tear down would crash the exiting process.
extern "C" fn end_background_compiles() {
    if let Ok(all) = BACKGROUNDS.try_lock() {
        for b in all.iter() {
            b.close();
        }
    }
}

/// Registers the exit hook: after NVRTC's first compile (`prime_nvrtc`), after each of the
/// first 64 NVRTC compiles and each of the first 64 module loads of a process (every load calls
/// it, so it is in place before the first background job, which follows a quick form's load),
/// and every millisecond while background compiles run (`Background::keep`). The C library runs
/// exit handlers in the reverse order of their registration, and NVRTC and the driver register
/// the destructors of state they create lazily, during a process's first compiles and module
/// loads: a hook registered after those runs before them, and waits for the background
/// compiles while that state still exists; a process that exits during a compile in which NVRTC
/// registered a handler after the hook's latest registration runs that handler first and tears
/// NVRTC's state down under the compile.
/// (Registered once, at the first background job, it ran after some of them: processes that
/// exited during background compiles ended in a segmentation fault in a `devseq-jit` thread,
/// inside the C library's `setjmp` with a null buffer, on an H100, run 174; with
/// `DEVSEQ_JIT=optimized`, no background compiles, they exited cleanly. Counted over loads
/// alone, a process whose first 64 kernels came from the disk cache compiled its first kernel
/// after the last registration, and three of five test processes on a warm cache crashed at
/// exit, a `devseq-jit` thread in a stack overflow or the allocator's heap check, on an H100,
/// run 197: so compiles count apart. Registered after loads and compiles alone, a process
/// whose quick forms all came from the disk cache and that exited 40 to 120 ms into its first
/// background compiles crashed in `nvrtcCompileProgram` every time, on an H100 and an H200,
/// runs 268-271: NVRTC 13.0 registered 12 handlers in the first compile of a process and 4
/// more some 45 ms into the first compile of a real kernel; hence the prime and the keeper.
/// Those 4 come from NVRTC's optimizer, which the prime skipped where NVRTC's own cache held
/// the empty kernel; with the keeper alone, one child in some 300 of the exit test still
/// crashed, on an H200, run 338. The prime now bypasses that cache: see
/// `prime_nvrtc`.) Closing twice is harmless.
fn register_exit_hook(after: Hook) {
    static HOOKS: [AtomicU32; 2] = [AtomicU32::new(0), AtomicU32::new(0)];
    if HOOKS[after as usize].fetch_add(1, Ordering::Relaxed) < 64 {
        add_exit_hook();
    }
}

/// One more registration of the exit hook with the C library.
fn add_exit_hook() {
    // SAFETY: registers a function that takes and returns nothing and does not unwind (it only
    // takes locks without panicking).
    unsafe { atexit(end_background_compiles) };
}

/// NVRTC's start, once a process, in the caller's thread: a compile of an empty kernel (20 to
/// 75 ms), then the exit hook. NVRTC registers its lazily made exit handlers during a
/// process's first compile that runs its optimizer and code generator (NVRTC 13.0: 16 on an
/// H200's host, 11 of the C++ library and 5 of NVRTC's; 14 on a build machine), so this takes
/// them out of the background compiles (see `register_exit_hook`). The compile bypasses
/// NVRTC's own cache (`nvrtc_takes_no_cache`):
/// from that cache (NVRTC 12.9 and later keep compiled results in the driver's compute cache
/// where a driver is installed), the empty kernel skipped the optimizer, and 4 of the 16
/// handlers came in the first compile of a real kernel instead (on an H200's host, in every
/// process but the first on a machine). `Gpu::new` runs it beside the creation of its context
/// (about 110 ms) and waits for it. Without an architecture the kernel compiles to PTX for
/// NVRTC's default one, which every version has.
pub(crate) fn prime_nvrtc() {
    static PRIMED: std::sync::Once = std::sync::Once::new();
    PRIMED.call_once(|| {
        let t0 = Instant::now();
        let bypass = nvrtc_takes_no_cache();
        let r = if bypass { Ok(()) } else { compile_empty(false) };
        register_exit_hook(Hook::Compile);
        if log_enabled() {
            let ms = t0.elapsed().as_secs_f64() * 1e3;
            let cache = if bypass {
                "its own cache bypassed"
            } else {
                "it does not take --no-cache: its own cache is used"
            };
            match r {
                Ok(()) => eprintln!("devseq: NVRTC started in {ms:.1} ms ({cache})"),
                Err(e) => eprintln!("devseq: NVRTC's first compile failed in {ms:.1} ms ({e})"),
            }
        }
    });
}

/// Whether NVRTC takes `--no-cache` (13.0 does; versions before 12.9 have no cache to
/// bypass), learned by compiling an empty kernel with it, once a process. Every devseq compile
/// then bypasses NVRTC's cache: devseq keeps its own disk cache of the optimized and quick
/// forms, so NVRTC's would only hold second copies in the driver's compute cache (shared with
/// other programs' PTX, and evicted by size), and every compile follows the prime's path.
fn nvrtc_takes_no_cache() -> bool {
    static TAKES: OnceLock<bool> = OnceLock::new();
    *TAKES.get_or_init(|| compile_empty(true).is_ok())
}

/// NVRTC's compile of an empty kernel to PTX, bypassing its cache where `no_cache`.
fn compile_empty(no_cache: bool) -> Result<()> {
    let mut options = vec!["-std=c++17".to_string()];
    if no_cache {
        options.push(NO_CACHE.to_string());
    }
    let target = Target::Ptx(String::new());
    compile(
        "extern \"C\" __global__ void ds_prime() {}",
        "ds_prime",
        &options,
        &target,
    )
    .map(|_| ())
}

/// NVRTC's option to neither read nor write its cache.
const NO_CACHE: &str = "--no-cache";

/// Registrations of the exit hook by the keepers (`Background::keep`), and their limit: 16 s of
/// background compiles a process (at exit, each runs the hook again: two locks taken and
/// released once the queues are closed).
static KEEPER_HOOKS: AtomicU32 = AtomicU32::new(0);
const KEEPER_MOST: u32 = 1 << 14;

/// What a registration of the exit hook follows: a compile by NVRTC or a module load.
#[derive(Clone, Copy)]
enum Hook {
    Compile = 0,
    Load = 1,
}

impl Background {
    fn lock(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn push(self: &Arc<Self>, job: Job, compiler: &Arc<Compiler>) {
        let mut q = self.lock();
        if q.closed {
            return;
        }
        q.jobs.push_back(job);
        q.pending += 1;
        if !q.keeper && KEEPER_HOOKS.load(Ordering::Relaxed) < KEEPER_MOST {
            let me = self.clone();
            if std::thread::Builder::new()
                .name("devseq-jit".into())
                .spawn(move || me.keep())
                .is_ok()
            {
                q.keeper = true;
            }
        }
        if q.workers >= workers() {
            return;
        }
        let (me, c) = (self.clone(), compiler.clone());
        match std::thread::Builder::new()
            .name("devseq-jit".into())
            .spawn(move || me.work(&c))
        {
            Ok(_) => q.workers += 1,
            Err(e) => {
                if log_enabled() {
                    eprintln!("devseq: no background compile thread ({e})");
                }
                // With no thread at all, the quick kernels stay.
                if q.workers == 0 {
                    q.pending -= q.jobs.len();
                    q.jobs.clear();
                    self.idle.notify_all();
                }
            }
        }
    }

    fn work(&self, c: &Compiler) {
        loop {
            let job = {
                let mut q = self.lock();
                match q.jobs.pop_front() {
                    Some(j) => j,
                    None => {
                        q.workers -= 1;
                        return;
                    }
                }
            };
            match c.build(&job.source, &job.expr, Form::Optimized, "in the background") {
                Ok(k) => job.entry.replace(k),
                Err(e) => {
                    if log_enabled() {
                        eprintln!(
                            "devseq: {}: the optimized compile failed ({e}); the quick form stays",
                            job.expr
                        );
                    }
                }
            }
            let mut q = self.lock();
            q.pending -= 1;
            if q.pending == 0 {
                self.idle.notify_all();
            }
        }
    }

    /// Registers the exit hook again every millisecond while compiles are queued or running
    /// (at most `KEEPER_MOST` times a process), so that exit handlers NVRTC registers during a
    /// compile come before the hook's latest registration within a millisecond (see
    /// `register_exit_hook`).
    fn keep(&self) {
        let mut q = self.lock();
        loop {
            if q.closed
                || q.pending == 0
                || KEEPER_HOOKS.fetch_add(1, Ordering::Relaxed) >= KEEPER_MOST
            {
                q.keeper = false;
                return;
            }
            drop(q);
            add_exit_hook();
            q = self.lock();
            q = self
                .idle
                .wait_timeout(q, std::time::Duration::from_millis(1))
                .map_or_else(|e| e.into_inner().0, |r| r.0);
        }
    }

    /// Waits until no compile is queued or running.
    fn finish(&self) {
        let mut q = self.lock();
        while q.pending > 0 {
            q = self.idle.wait(q).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Takes no more jobs, drops the queued ones and waits for those running, for 10 minutes
    /// at most: only against a compile that never ends, since an exit that goes on while a
    /// thread is inside NVRTC crashes (see `register_exit_hook`).
    fn close(&self) {
        let deadline = Instant::now() + std::time::Duration::from_secs(600);
        let mut q = self.lock();
        q.closed = true;
        q.pending -= q.jobs.len();
        q.jobs.clear();
        while q.pending > 0 {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            q = self
                .idle
                .wait_timeout(q, left)
                .map_or_else(|e| e.into_inner().0, |r| r.0);
        }
    }
}

/// The compiler and caches of one GPU.
pub(crate) struct Jit {
    compiler: Arc<Compiler>,
    tiers: Tiers,
    kernels: Cache<KernelKey, Arc<Entry>>,
    /// Users' kernels (`Device::compile`), by name and source: optimized at once, as they are
    /// handed to the user.
    user: Cache<(String, String), Arc<Kernel>>,
    background: Arc<Background>,
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

pub(crate) fn log_enabled() -> bool {
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
        let compiler = Compiler {
            ctx: ctx.clone(),
            target,
            version: (major, minor),
            optimized: options(&name),
            quick: ((major, minor) >= (12, 8)).then(|| quick_options(&name)),
            cache_dir: cache_dir().and_then(|d| match disk_cache::prepare_dir(&d) {
                Ok(()) => Some(d),
                Err(why) => {
                    if log_enabled() {
                        eprintln!("devseq: the disk cache is not used: {why}");
                    }
                    None
                }
            }),
        };
        let jit = Arc::new(Jit {
            compiler: Arc::new(compiler),
            tiers: tiers(),
            kernels: Mutex::new(HashMap::default()),
            user: Mutex::new(HashMap::default()),
            background: Arc::new(Background::default()),
        });
        BACKGROUNDS
            .lock()
            .map_err(|_| Error::Internal("jit registry lock poisoned".into()))?
            .push(jit.background.clone());
        all.push((ctx.ordinal(), jit.clone()));
        Ok(jit)
    }

    /// The kernel of `key`, built on first use (different keys in parallel, each once): the
    /// optimized form from the disk cache where it is there, else as the tiers say.
    pub fn get(&self, key: &KernelKey) -> Result<Arc<Kernel>> {
        self.pin(key)?.current()
    }

    /// The kernel of `key`, held for launches that look up no key: its current form (quick,
    /// then optimized) is `Pinned::current`.
    pub fn pin(&self, key: &KernelKey) -> Result<Pinned> {
        once(&self.kernels, key, || self.first_build(key)).map(Pinned)
    }

    fn first_build(&self, key: &KernelKey) -> Result<Arc<Entry>> {
        BUILT.fetch_add(1, Ordering::Relaxed);
        let (src, expr) = instance(key);
        let c = &self.compiler;
        if self.tiers == Tiers::Optimized || c.quick.is_none() {
            return c.build(&src, &expr, Form::Optimized, "").map(Entry::new);
        }
        if self.tiers == Tiers::Tiered
            && let Some(k) = c.cached(&src, &expr, Form::Optimized, Instant::now())
        {
            return Ok(Entry::new(k));
        }
        let quick = match c.build(&src, &expr, Form::Quick, "") {
            Ok(k) => k,
            // A quick compile that fails (an NVRTC that refuses its options): the optimized
            // form at once, or its error.
            Err(e) => {
                if log_enabled() {
                    eprintln!("devseq: {expr}: the quick compile failed ({e})");
                }
                return c.build(&src, &expr, Form::Optimized, "").map(Entry::new);
            }
        };
        let entry = Entry::new(quick);
        if self.tiers == Tiers::Tiered {
            let job = Job {
                source: src,
                expr,
                entry: entry.clone(),
            };
            self.background.push(job, c);
        }
        Ok(entry)
    }

    /// Waits until every kernel compiled in its quick form so far has its optimized form in
    /// place (nothing to wait for where the tiers are off).
    pub fn finish(&self) {
        self.background.finish();
    }

    /// A user's kernel `name` from `source` (after devseq's prelude), built on first use
    /// through the same compiler options and caches as devseq's own (optimized at once).
    pub fn user(&self, name: &str, source: &str) -> Result<Arc<Kernel>> {
        once(&self.user, &(name.to_string(), source.to_string()), || {
            let src = format!("#include \"prelude.cuh\"\n{source}\n");
            self.compiler
                .build(&src, name, Form::Optimized, "")
                .map(Arc::new)
        })
    }
}

impl Compiler {
    fn options(&self, form: Form) -> &[String] {
        match (form, &self.quick) {
            (Form::Quick, Some(q)) => q,
            _ => &self.optimized,
        }
    }

    /// The disk cache entry of an instance in `form` (its path and key), where there is a cache.
    fn entry(
        &self,
        source: &str,
        expr: &str,
        form: Form,
    ) -> Option<(PathBuf, [u8; disk_cache::HASH])> {
        let dir = self.cache_dir.as_ref()?;
        let version = format!("{}.{}", self.version.0, self.version.1);
        let mut parts: Vec<&[u8]> = vec![source.as_bytes(), expr.as_bytes(), version.as_bytes()];
        for o in self.options(form) {
            parts.push(o.as_bytes());
        }
        for (name, text) in files() {
            parts.push(name.as_bytes());
            parts.push(text.as_bytes());
        }
        let key = disk_cache::key(&parts);
        Some((disk_cache::entry_path(dir, &key), key))
    }

    /// The instance in `form` from the disk cache, where it is there and loads.
    fn cached(&self, source: &str, expr: &str, form: Form, t0: Instant) -> Option<Kernel> {
        let (path, key) = self.entry(source, expr, form)?;
        let why = match disk_cache::read(&path, &key) {
            Ok((lowered, image)) => match self.load(image, &lowered, expr) {
                Ok(k) => {
                    if log_enabled() {
                        eprintln!(
                            "devseq: {expr}: loaded from the disk cache in {:.1} ms ({form:?})",
                            t0.elapsed().as_secs_f64() * 1e3
                        );
                    }
                    return Some(k);
                }
                Err(e) => Some(format!("did not load ({e})")),
            },
            Err(disk_cache::Reject::Missing) => None,
            Err(r) => Some(format!("not used ({})", r.reason())),
        };
        if let Some(why) = why
            && log_enabled()
        {
            eprintln!("devseq: {}: {why}; compiling again", path.display());
        }
        None
    }

    /// The instance in `form`: from the disk cache, else compiled (and written there).
    fn build(&self, source: &str, expr: &str, form: Form, note: &str) -> Result<Kernel> {
        let t0 = Instant::now();
        if let Some(k) = self.cached(source, expr, form, t0) {
            return Ok(k);
        }
        let (lowered, image, _) = compile(source, expr, self.options(form), &self.target)?;
        register_exit_hook(Hook::Compile);
        let t1 = Instant::now();
        if let Some((path, key)) = self.entry(source, expr, form) {
            disk_cache::write(&path, &key, &lowered, &image);
        }
        let k = self.load(image, &lowered, expr)?;
        if log_enabled() {
            eprintln!(
                "devseq: {expr}: compiled by NVRTC in {:.1} ms, loaded in {:.1} ms ({form:?}{}{note})",
                (t1 - t0).as_secs_f64() * 1e3,
                t1.elapsed().as_secs_f64() * 1e3,
                if note.is_empty() { "" } else { ", " },
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
        register_exit_hook(Hook::Load);
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
    let target = if arch.starts_with("compute_") {
        Target::Ptx(arch.to_string())
    } else {
        Target::Cubin(arch.to_string())
    };
    // The quick form where `DEVSEQ_COMPILE_QUICK` is set.
    let mut opts = if std::env::var_os("DEVSEQ_COMPILE_QUICK").is_some() {
        quick_options(arch)
    } else {
        options(arch)
    };
    if ptxas_info {
        opts.push("--ptxas-options=-v".into());
    }
    // Options to try, for measuring the compiler (e.g. `--time=-`).
    if let Ok(extra) = std::env::var("DEVSEQ_NVRTC_EXTRA") {
        opts.extend(extra.split_whitespace().map(String::from));
    }
    compile(&src, &expr, &opts, &target).map(|(_, image, log)| (image, log))
}

/// NVRTC's options for `arch`.
fn options(arch: &str) -> Vec<String> {
    let mut o = vec![
        format!("--gpu-architecture={arch}"),
        "-std=c++17".to_string(),
        // No fused multiply-add contraction: host and GPU round the same way.
        "--fmad=false".to_string(),
        "-DNDEBUG".to_string(),
    ];
    if nvrtc_takes_no_cache() {
        o.push(NO_CACHE.to_string());
    }
    o
}

/// The quick form's options for `arch`: the same, with NVRTC's fast-compile level `mid` (a
/// third of the compile time of the optimized form for the scans, at some cost in speed) and
/// `DS_QUICK`, under which the look-back kernels read one window of predecessors in a small
/// loop instead of four unrolled ones (the same bits; a third less compile time again).
fn quick_options(arch: &str) -> Vec<String> {
    let mut o = options(arch);
    o.push("--Ofast-compile=mid".to_string());
    o.push("-DDS_QUICK".to_string());
    o
}
