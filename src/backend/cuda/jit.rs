//! Run-time compilation of the kernel templates in `kernels/` and the caches: one in memory per
//! GPU (kernels by their typed key, `key.rs`), one on disk (compiled images by a hash of
//! everything that went into them) so that a second process starts warm.
//!
//! An instance is a short translation unit (the family's parameter struct, its kernel file,
//! the printed structs of lazy sources) and a C++ name expression such as
//! `ds_scan<ds::Launch<256, 16, 0, 3>, ds::ScanFlags<ds::OpAdd, false>, ds::Col<f32, 4>>`
//! (`key.rs`); NVRTC instantiates the template and tells its mangled name (`nvrtc.rs`), so no
//! wrapper is written and no list of instances is kept.
//!
//! Tiers (`DEVSEQ_JIT`): by default a kernel that is not on disk is first compiled quickly
//! (NVRTC's `--Ofast-compile=mid`: a third of the time, slower code) in the caller's thread and
//! used at once, and compiled again with full optimization by compile helpers, child processes
//! (`helper.rs`), whose images are loaded in place of the quick form at the kernel's next use and
//! written to disk. Both forms come from the same template, options and launch shapes, so they
//! give the same bits; only their speed differs. (The quick form's look-back kernels find a
//! tile's prefix by one window of predecessors, `ds::tile_lookback_quick`, which gives the value
//! that the optimized form's windows find, by its definition.) `Device::finish_compiling` waits
//! for the helpers and loads what they made. Where no helper can run, kernels are compiled
//! optimized at once, in the caller's thread. No thread of the process but the caller's ever
//! compiles or loads a kernel, so an exiting process has no compile to race (docs/jit.md).

use super::disk_cache;
use super::driver::DriverResult;
use super::helper::Helper;
use super::key::KernelKey;
use super::nvrtc::{self, Image, Target};
use super::source;
use super::tuning::Arch;
use crate::error::{Error, Result};
use cudarc::driver::{CudaContext, CudaFunction};
use cudarc::nvrtc::Ptx;
use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, RwLock};
use std::time::Instant;

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
        src.push_str(&super::functor::cpp_functor(f));
    }
    (src, key.family.name(key.functor.is_some(), &names))
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

/// NVRTC with one GPU's target and options, and the disk cache.
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
    /// The optimized image a helper made, to be loaded at the kernel's next use.
    arrived: Mutex<Option<Image>>,
    has_arrived: AtomicBool,
}

impl Entry {
    fn new(k: Kernel) -> Arc<Entry> {
        Arc::new(Entry {
            current: RwLock::new(Arc::new(k)),
            replaced: Mutex::new(None),
            arrived: Mutex::new(None),
            has_arrived: AtomicBool::new(false),
        })
    }

    /// The kernel's current form, the optimized one loaded first where it has arrived.
    fn current(&self, c: &Compiler) -> Result<Arc<Kernel>> {
        if self.has_arrived.load(Ordering::Acquire) {
            self.load_arrived(c);
        }
        self.current
            .read()
            .map(|k| k.clone())
            .map_err(|_| Error::Internal("kernel entry lock poisoned".into()))
    }

    /// Hands over an optimized image from a helper (any thread).
    fn arrive(&self, image: Image) {
        *lock(&self.arrived) = Some(image);
        self.has_arrived.store(true, Ordering::Release);
    }

    /// Loads the image that arrived and puts it in place (the caller's thread); where it does
    /// not load, the quick form stays.
    fn load_arrived(&self, c: &Compiler) {
        let Some(image) = lock(&self.arrived).take() else {
            return;
        };
        self.has_arrived.store(false, Ordering::Release);
        let name = self
            .current
            .read()
            .map(|k| k.name.clone())
            .unwrap_or_default();
        match c.load(image, &name) {
            Ok(k) => {
                let old = std::mem::replace(
                    &mut *self.current.write().unwrap_or_else(|e| e.into_inner()),
                    Arc::new(k),
                );
                *lock(&self.replaced) = Some(old);
            }
            Err(e) => {
                log::warn!("{name}: the optimized form did not load ({e}); the quick form stays")
            }
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A kernel's cache entry, held (`Jit::pin`), with the compiler that loads its optimized form.
pub(crate) struct Pinned(Arc<Entry>, Arc<Compiler>);

impl Pinned {
    /// The kernel's current form.
    pub fn current(&self) -> Result<Arc<Kernel>> {
        self.0.current(&self.1)
    }
}

/// A kernel held for launches without a key lookup (`Gpu::kernel_held`), with its key.
pub(crate) struct HeldKernel {
    pub key: KernelKey,
    pub kernel: Pinned,
}

/// An optimized compile waiting for a helper: the instance, and what is done with its image.
pub(crate) struct Job {
    pub source: String,
    pub expr: String,
    pub options: Vec<String>,
    pub target: Target,
    pub deliver: Box<dyn FnOnce(Result<Image>) + Send>,
}

/// The background compiles of one GPU: a queue served by up to `workers()` threads, each
/// driving one helper process, started when work arrives and ended when the queue is empty
/// (their helpers with them). The threads only move bytes: NVRTC runs in the helpers, and the
/// images are loaded by the threads that launch the kernels.
#[derive(Default)]
pub(crate) struct Background {
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
    /// A helper could not be started: no more background compiles in this process.
    broken: bool,
}

/// Background compile threads (and helper processes) for one GPU: a quarter of the CPUs, from 1
/// to 4. The quick forms run slower (1.1 to 9.4 times), so the optimized ones should come soon,
/// but the user's own threads need the CPUs too.
fn workers() -> usize {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    (cpus / 4).clamp(1, 4)
}

impl Background {
    /// Whether background compiles can run (no helper has failed to start).
    pub fn usable(&self) -> bool {
        !lock(&self.queue).broken
    }

    /// Queues `job`, starting a worker where fewer than `workers()` run; where none can run,
    /// the job is delivered an error at once.
    pub fn push(self: &Arc<Self>, job: Job) {
        let mut q = lock(&self.queue);
        if q.broken {
            drop(q);
            (job.deliver)(Err(Error::Internal("no compile helper".into())));
            return;
        }
        q.jobs.push_back(job);
        q.pending += 1;
        if q.workers >= workers() {
            return;
        }
        let me = self.clone();
        match std::thread::Builder::new()
            .name("devseq-jit".into())
            .spawn(move || me.work())
        {
            Ok(_) => q.workers += 1,
            Err(e) => {
                log::debug!("no background compile thread ({e})");
                if q.workers == 0 {
                    self.drop_all(&mut q);
                }
            }
        }
    }

    /// Delivers an error to every queued job (the quick forms stay).
    fn drop_all(&self, q: &mut Queue) {
        for job in q.jobs.drain(..) {
            (job.deliver)(Err(Error::Internal("no background compile".into())));
            q.pending -= 1;
        }
        self.idle.notify_all();
    }

    fn work(&self) {
        let mut helper: Option<Helper> = None;
        loop {
            let job = {
                let mut q = lock(&self.queue);
                match q.jobs.pop_front() {
                    Some(j) => j,
                    None => {
                        q.workers -= 1;
                        return;
                    }
                }
            };
            let result = match helper.as_mut() {
                Some(h) => Ok(h),
                None => Helper::start().map(|h| helper.insert(h)),
            };
            let result = match result {
                Ok(h) => {
                    let r = h.compile(&job.source, &job.expr, &job.options, &job.target);
                    if let Err(Error::Internal(_)) = r {
                        helper = None;
                    }
                    r
                }
                Err(e) => {
                    log::debug!("{e}: kernels are compiled optimized in the foreground");
                    let mut q = lock(&self.queue);
                    q.broken = true;
                    self.drop_all(&mut q);
                    Err(e)
                }
            };
            (job.deliver)(result);
            let mut q = lock(&self.queue);
            q.pending -= 1;
            if q.pending == 0 {
                self.idle.notify_all();
            }
        }
    }

    /// Waits until no compile is queued or running.
    pub fn finish(&self) {
        let mut q = lock(&self.queue);
        while q.pending > 0 {
            q = self.idle.wait(q).unwrap_or_else(|e| e.into_inner());
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
    /// Entries whose optimized image arrived, for `finish` to load.
    arrived: Arc<Mutex<Vec<Arc<Entry>>>>,
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

/// What NVRTC `version` produces for a GPU of compute capability `cc` (10 * major + minor),
/// given the architectures it compiles for (`archs`): machine code for `cc` where it knows it,
/// else PTX for the newest architecture below, which the driver compiles at load; an error
/// naming the GPU where there is none.
pub(crate) fn target_for(
    name: &str,
    cc: i32,
    version: (i32, i32),
    archs: &[i32],
) -> Result<Target> {
    if archs.contains(&cc) {
        return Ok(Target::Cubin(format!("sm_{cc}")));
    }
    match archs.iter().copied().filter(|&a| a <= cc).max() {
        Some(a) => Ok(Target::Ptx(format!("compute_{a}"))),
        None => Err(Error::NoCuda(format!(
            "{name} (compute capability {}.{}): NVRTC {}.{} cannot compile for it; an NVRTC \
             that targets it is needed (NVRTC 12.x targets 5.0 and later, 13.x 7.5 and later)",
            cc / 10,
            cc % 10,
            version.0,
            version.1
        ))),
    }
}

/// PTX of the older architecture `older` for a GPU of compute capability `cc`, as
/// `DEVSEQ_TUNE=ptx_arch=80` asks: the kernels' code paths of that architecture, run on this
/// GPU through the driver's compiler (how the older GPUs' paths are tested on a newer one).
fn older_ptx(cc: i32, older: i32, archs: &[i32]) -> Result<Target> {
    if older > cc || !archs.contains(&older) {
        return Err(Error::InvalidArgument(format!(
            "DEVSEQ_TUNE ptx_arch={older}: must be at most the GPU's compute capability ({cc}) \
             and one this NVRTC compiles for ({archs:?})"
        )));
    }
    Ok(Target::Ptx(format!("compute_{older}")))
}

impl Jit {
    /// The compiler of the GPU of `ctx` (one per process and GPU, shared by its `Device`s).
    pub fn for_device(ctx: &Arc<CudaContext>, name: &str, arch: Arch) -> Result<Arc<Jit>> {
        static ALL: Mutex<Vec<(usize, Arc<Jit>)>> = Mutex::new(Vec::new());
        let mut all = ALL
            .lock()
            .map_err(|_| Error::Internal("jit registry lock poisoned".into()))?;
        if let Some((_, j)) = all.iter().find(|(o, _)| *o == ctx.ordinal()) {
            return Ok(j.clone());
        }
        let version = nvrtc::version()?;
        let cc = (arch.major * 10 + arch.minor) as i32;
        let archs = nvrtc::supported_archs()?;
        let target = match super::tuning::knobs().ptx_arch {
            Some(older) => older_ptx(cc, older as i32, &archs)?,
            None => target_for(name, cc, version, &archs)?,
        };
        let compiler = Compiler {
            ctx: ctx.clone(),
            optimized: nvrtc::options(target.arch()),
            quick: (version >= (12, 8)).then(|| nvrtc::quick_options(target.arch())),
            target,
            version,
            cache_dir: cache_dir().and_then(|d| match disk_cache::prepare_dir(&d) {
                Ok(()) => Some(d),
                Err(why) => {
                    log::warn!("the disk cache is not used: {why}");
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
            arrived: Arc::new(Mutex::new(Vec::new())),
        });
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
        let entry = once(&self.kernels, key, || self.first_build(key))?;
        Ok(Pinned(entry, self.compiler.clone()))
    }

    fn first_build(&self, key: &KernelKey) -> Result<Arc<Entry>> {
        BUILT.fetch_add(1, Ordering::Relaxed);
        let (src, expr) = instance(key);
        let c = &self.compiler;
        // Tiered where helpers can compile the optimized forms, else optimized at once; the
        // quick form alone where asked for.
        let tiered = self.tiers == Tiers::Tiered && self.background.usable();
        if c.quick.is_none() || !(tiered || self.tiers == Tiers::Quick) {
            return c.build(&src, &expr, Form::Optimized).map(Entry::new);
        }
        if tiered && let Some(k) = c.cached(&src, &expr, Form::Optimized, Instant::now()) {
            return Ok(Entry::new(k));
        }
        let quick = match c.build(&src, &expr, Form::Quick) {
            Ok(k) => k,
            // A quick compile that fails (an NVRTC that refuses its options): the optimized
            // form at once, or its error.
            Err(e) => {
                log::debug!("{expr}: the quick compile failed ({e})");
                return c.build(&src, &expr, Form::Optimized).map(Entry::new);
            }
        };
        let entry = Entry::new(quick);
        if tiered {
            self.background.push(self.job(src, expr, &entry));
        }
        Ok(entry)
    }

    /// The background compile of the optimized form of an instance whose quick form is `entry`:
    /// its image goes to the disk cache and to the entry.
    fn job(&self, source: String, expr: String, entry: &Arc<Entry>) -> Job {
        let disk = self.compiler.entry(&source, &expr, Form::Optimized);
        let (entry, arrived) = (entry.clone(), self.arrived.clone());
        let t0 = Instant::now();
        let name = expr.clone();
        Job {
            options: self.compiler.optimized.clone(),
            target: self.compiler.target.clone(),
            source,
            expr,
            deliver: Box::new(move |r| match r {
                Ok(image) => {
                    log::debug!(
                        "{name}: compiled by a helper in {:.1} ms (Optimized)",
                        t0.elapsed().as_secs_f64() * 1e3
                    );
                    if let Some((path, key)) = disk {
                        disk_cache::write(&path, &key, &image.lowered, &image.bytes);
                    }
                    entry.arrive(image);
                    lock(&arrived).push(entry);
                }
                Err(e) => {
                    log::debug!("{name}: the optimized compile failed ({e}); the quick form stays")
                }
            }),
        }
    }

    /// Waits until every kernel compiled in its quick form so far has its optimized form in
    /// place (nothing to wait for where the tiers are off).
    pub fn finish(&self) {
        self.background.finish();
        let arrived = std::mem::take(&mut *lock(&self.arrived));
        for e in arrived {
            e.load_arrived(&self.compiler);
        }
    }

    /// A user's kernel `name` from `source` (after devseq's prelude), built on first use
    /// through the same compiler options and caches as devseq's own (optimized at once).
    pub fn user(&self, name: &str, source: &str) -> Result<Arc<Kernel>> {
        once(&self.user, &(name.to_string(), source.to_string()), || {
            let src = format!("#include \"prelude.cuh\"\n{source}\n");
            self.compiler
                .build(&src, name, Form::Optimized)
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
        for (name, text) in nvrtc::files() {
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
            Ok((lowered, bytes)) => match self.load(Image { lowered, bytes }, expr) {
                Ok(k) => {
                    log::debug!(
                        "{expr}: loaded from the disk cache in {:.1} ms ({form:?})",
                        t0.elapsed().as_secs_f64() * 1e3
                    );
                    return Some(k);
                }
                Err(e) => format!("did not load ({e})"),
            },
            Err(disk_cache::Reject::Missing) => return None,
            Err(r) => format!("not used ({})", r.reason()),
        };
        log::warn!("{}: {why}; compiling again", path.display());
        None
    }

    /// The instance in `form`: from the disk cache, else compiled in this thread (and written
    /// there).
    fn build(&self, source: &str, expr: &str, form: Form) -> Result<Kernel> {
        let t0 = Instant::now();
        if let Some(k) = self.cached(source, expr, form, t0) {
            return Ok(k);
        }
        let (image, _) = nvrtc::compile(source, expr, self.options(form), &self.target)?;
        let t1 = Instant::now();
        if let Some((path, key)) = self.entry(source, expr, form) {
            disk_cache::write(&path, &key, &image.lowered, &image.bytes);
        }
        let k = self.load(image, expr)?;
        log::debug!(
            "{expr}: compiled by NVRTC in {:.1} ms, loaded in {:.1} ms ({form:?})",
            (t1 - t0).as_secs_f64() * 1e3,
            t1.elapsed().as_secs_f64() * 1e3,
        );
        Ok(k)
    }

    fn load(&self, image: Image, expr: &str) -> Result<Kernel> {
        // A CUBIN, or a PTX with its terminating NUL, as NVRTC or the cache wrote it.
        let module = self
            .ctx
            .load_module(Ptx::from_binary(image.bytes))
            .cuda("cuModuleLoadData")?;
        let func = module
            .load_function(&image.lowered)
            .cuda("cuModuleGetFunction")?;
        Ok(Kernel {
            func,
            name: expr.to_string(),
            occupancy: OnceLock::new(),
            smem_limit: AtomicU32::new(0),
        })
    }
}

/// For the exit test, without a device: compiles the quick form of the first of `keys` for
/// `arch` in this thread (NVRTC's start in the process, as a program's first kernel), then
/// queues the optimized forms of all of them for compile helpers, and returns while those run.
/// The returned queue is the caller's to keep alive (or not) until it exits.
pub(crate) fn compile_in_background(arch: &str, keys: &[KernelKey]) -> Result<Arc<Background>> {
    let target = Target::named(arch);
    let bg = Arc::new(Background::default());
    for (k, key) in keys.iter().enumerate() {
        let (source, expr) = instance(key);
        if k == 0 {
            nvrtc::compile(&source, &expr, &nvrtc::quick_options(arch), &target)?;
        }
        bg.push(Job {
            source,
            expr,
            options: nvrtc::options(arch),
            target: target.clone(),
            deliver: Box::new(|_| ()),
        });
    }
    Ok(bg)
}

/// Compiles the instance `key` for `arch` (e.g. `sm_90`, or `compute_80` for PTX) without a
/// device, as `Jit` would: a check that every template instantiates, for the kernel compile
/// test. Returns the image and the log, which has ptxas' report of registers and spills where
/// `ptxas_info`.
#[cfg(test)]
pub(crate) fn compile_for(
    arch: &str,
    key: &KernelKey,
    ptxas_info: bool,
) -> Result<(Vec<u8>, String)> {
    let (src, expr) = instance(key);
    // The quick form where `DEVSEQ_COMPILE_QUICK` is set.
    let mut opts = if std::env::var_os("DEVSEQ_COMPILE_QUICK").is_some() {
        nvrtc::quick_options(arch)
    } else {
        nvrtc::options(arch)
    };
    if ptxas_info {
        opts.push("--ptxas-options=-v".into());
    }
    // Options to try, for measuring the compiler (e.g. `--time=-`).
    if let Ok(extra) = std::env::var("DEVSEQ_NVRTC_EXTRA") {
        opts.extend(extra.split_whitespace().map(String::from));
    }
    nvrtc::compile(&src, &expr, &opts, &nvrtc::Target::named(arch))
        .map(|(image, log)| (image.bytes, log))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_follow_what_nvrtc_knows() {
        let archs13 = [75, 80, 86, 87, 89, 90, 100, 120];
        let v13 = (13, 0);
        assert_eq!(
            target_for("g", 90, v13, &archs13).unwrap(),
            Target::Cubin("sm_90".into())
        );
        // A newer GPU than NVRTC knows: PTX for the newest it does.
        assert_eq!(
            target_for("g", 121, v13, &archs13).unwrap(),
            Target::Ptx("compute_120".into())
        );
        // An older architecture's PTX where asked for, never a newer one's or an unknown one.
        assert_eq!(
            older_ptx(90, 80, &archs13).unwrap(),
            Target::Ptx("compute_80".into())
        );
        assert!(older_ptx(80, 90, &archs13).is_err());
        assert!(older_ptx(90, 70, &archs13).is_err());
        // Volta with NVRTC 13 (which dropped it): an error naming the GPU and what it needs.
        let e = target_for("Tesla V100-SXM2-16GB", 70, v13, &archs13).unwrap_err();
        assert!(
            matches!(&e, Error::NoCuda(m) if m.contains("V100") && m.contains("7.0")),
            "{e}"
        );
        let archs12 = [50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90];
        assert_eq!(
            target_for("g", 70, (12, 9), &archs12).unwrap(),
            Target::Cubin("sm_70".into())
        );
    }
}
