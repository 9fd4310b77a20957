//! NCCL between the distinct GPUs of a device group: one communicator a GPU, made together by
//! `ncclCommInitAll`, whose transfers are queued on devseq's own streams, so that they run in
//! order with devseq's kernels on both sides and read and write devseq's buffers where they lie
//! (no staging through the host).
//!
//! NCCL is loaded at run time, as the driver is, from `libnccl.so.2` (the name NCCL's packages
//! install), else `libnccl.so`. devseq opens it itself rather than through cudarc's loader:
//! cudarc 0.19 looks for `libnccl.so` and for names versioned after the CUDA release
//! (`libnccl.so.13`), not for NCCL's own `libnccl.so.2`, and panics on first use where it
//! finds none. The types of the calls are cudarc's (`cudarc::nccl::sys`); results are read as
//! plain integers, so a status that cudarc's enum lacks cannot be misread.

use super::CudaBackend;
use super::driver::check;
use super::gpu::Gpu;
use super::mem::{Buffer, Ptr, column_ptr};
use crate::error::{Error, Result};
use crate::item::ScalarType;
use crate::source::{Column, Storage};
use cudarc::driver::CudaContext;
use cudarc::nccl::sys::{cudaStream_t, ncclComm_t, ncclDataType_t, ncclRedOp_t};
use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::{Arc, Mutex, OnceLock};

/// An `ncclResult_t` as NCCL returns it (0 is success).
type Status = u32;

type GetVersion = unsafe extern "C" fn(*mut c_int) -> Status;
type CommInitAll = unsafe extern "C" fn(*mut ncclComm_t, c_int, *const c_int) -> Status;
type CommDestroy = unsafe extern "C" fn(ncclComm_t) -> Status;
type Group = unsafe extern "C" fn() -> Status;
type SendFn = unsafe extern "C" fn(
    *const c_void,
    usize,
    ncclDataType_t,
    c_int,
    ncclComm_t,
    cudaStream_t,
) -> Status;
type RecvFn = unsafe extern "C" fn(
    *mut c_void,
    usize,
    ncclDataType_t,
    c_int,
    ncclComm_t,
    cudaStream_t,
) -> Status;
type Reduce = unsafe extern "C" fn(
    *const c_void,
    *mut c_void,
    usize,
    ncclDataType_t,
    ncclRedOp_t,
    c_int,
    ncclComm_t,
    cudaStream_t,
) -> Status;
type ErrorString = unsafe extern "C" fn(Status) -> *const c_char;

/// The NCCL entry points devseq uses (their C signatures from NCCL's nccl.h).
struct Lib {
    get_version: GetVersion,
    comm_init_all: CommInitAll,
    comm_destroy: CommDestroy,
    group_start: Group,
    group_end: Group,
    send: SendFn,
    recv: RecvFn,
    reduce: Reduce,
    error_string: ErrorString,
}

#[cfg(unix)]
mod dl {
    use std::ffi::{c_char, c_int, c_void};
    pub const RTLD_NOW: c_int = 2;
    // The C library's dynamic loader (in libc, or libdl which the Rust runtime links).
    unsafe extern "C" {
        pub fn dlopen(filename: *const c_char, flag: c_int) -> *mut c_void;
        pub fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
    }
}

/// The names NCCL is looked for under, in order.
const NAMES: [&CStr; 2] = [c"libnccl.so.2", c"libnccl.so"];

/// The library, opened once a process (and never closed: its functions stay valid).
fn lib() -> Result<&'static Lib> {
    static LIB: OnceLock<std::result::Result<Lib, String>> = OnceLock::new();
    LIB.get_or_init(open)
        .as_ref()
        .map_err(|m| Error::NoCuda(m.clone()))
}

#[cfg(not(unix))]
fn open() -> std::result::Result<Lib, String> {
    Err("NCCL (libnccl.so.2) is loaded on Linux only".into())
}

#[cfg(unix)]
fn open() -> std::result::Result<Lib, String> {
    let handle = NAMES
        .iter()
        // SAFETY: a NUL-terminated name; loading runs the library's initializers, as loading
        // the CUDA driver does.
        .map(|n| unsafe { dl::dlopen(n.as_ptr(), dl::RTLD_NOW) })
        .find(|h| !h.is_null())
        .ok_or_else(|| {
            "NCCL (libnccl.so.2) was not found: a group of several GPUs exchanges data through \
             it (install NCCL, or add its folder to LD_LIBRARY_PATH)"
                .to_string()
        })?;
    let sym = |name: &CStr| -> std::result::Result<*mut c_void, String> {
        // SAFETY: `handle` is a library dlopen returned; the name is NUL-terminated.
        let p = unsafe { dl::dlsym(handle, name.as_ptr()) };
        if p.is_null() {
            Err(format!(
                "libnccl.so.2 lacks {} (NCCL 2.7 or later is needed)",
                name.to_string_lossy()
            ))
        } else {
            Ok(p)
        }
    };
    macro_rules! load {
        ($name:literal, $ty:ty) => {{
            let p = sym($name)?;
            // SAFETY: `p` is the address of the NCCL function `$name`, whose C signature
            // (NCCL's nccl.h) the field's type repeats: pointers, sizes, C ints and C enums
            // (32-bit) in the same order.
            unsafe { std::mem::transmute::<*mut c_void, $ty>(p) }
        }};
    }
    Ok(Lib {
        get_version: load!(c"ncclGetVersion", GetVersion),
        comm_init_all: load!(c"ncclCommInitAll", CommInitAll),
        comm_destroy: load!(c"ncclCommDestroy", CommDestroy),
        group_start: load!(c"ncclGroupStart", Group),
        group_end: load!(c"ncclGroupEnd", Group),
        send: load!(c"ncclSend", SendFn),
        recv: load!(c"ncclRecv", RecvFn),
        reduce: load!(c"ncclReduce", Reduce),
        error_string: load!(c"ncclGetErrorString", ErrorString),
    })
}

/// `Ok` or `Error::Cuda` naming the call and NCCL's description of the status.
fn nccl_check(lib: &Lib, r: Status, call: &str) -> Result<()> {
    if r == 0 {
        return Ok(());
    }
    // SAFETY: ncclGetErrorString takes any status and returns a static NUL-terminated string
    // (or null, handled).
    let p = unsafe { (lib.error_string)(r) };
    let desc = if p.is_null() {
        String::new()
    } else {
        // SAFETY: non-null, NUL-terminated, static (above).
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    };
    Err(Error::Cuda(format!("{call}: NCCL error {r} ({desc})")))
}

/// The version of the NCCL library that loads, e.g. `"2.21.5"`.
pub(crate) fn version() -> Result<String> {
    let lib = lib()?;
    let mut code: c_int = 0;
    // SAFETY: writes one int.
    nccl_check(
        lib,
        unsafe { (lib.get_version)(&mut code) },
        "ncclGetVersion",
    )?;
    let code = code.max(0) as u32;
    // NCCL_VERSION_CODE: major * 10000 + minor * 100 + patch from 2.9 on, else
    // major * 1000 + minor * 100 + patch.
    let (major, minor, patch) = if code >= 10000 {
        (code / 10000, code % 10000 / 100, code % 100)
    } else {
        (code / 1000, code % 1000 / 100, code % 100)
    };
    Ok(format!("{major}.{minor}.{patch}"))
}

impl CudaBackend {
    /// The physical GPU (the driver's ordinal).
    pub fn ordinal(&self) -> usize {
        self.gpu.ctx.ordinal()
    }

    /// The number of GPUs the driver shows (the driver is loaded: this backend exists).
    pub fn device_count(&self) -> Result<usize> {
        CudaContext::device_count()
            .map(|n| n.max(0) as usize)
            .map_err(|e| super::driver::driver_error(e, "cuDeviceGetCount"))
    }
}

/// One communicator a GPU of the group, rank `k` on the group's GPU `k`.
pub(crate) struct Comms {
    ranks: Vec<Rank>,
    /// NCCL communicators are not to be used from two threads at once.
    lock: Mutex<()>,
}

struct Rank {
    comm: ncclComm_t,
    gpu: Arc<Gpu>,
}

// SAFETY: the communicator handles are used only under `lock` (and in `drop`, which has the
// only reference); the GPUs are `Send + Sync`.
unsafe impl Send for Comms {}
// SAFETY: as for `Send`.
unsafe impl Sync for Comms {}

/// One transfer of an exchange: `bytes` bytes from `src` on rank `from` to `dst` on rank `to`.
struct Move {
    from: usize,
    to: usize,
    src: Ptr,
    dst: Ptr,
    bytes: usize,
}

impl Comms {
    /// Communicators over the GPUs of `backends`, which are distinct GPUs (the caller checked),
    /// at least two of them.
    ///
    /// # Errors
    ///
    /// `Error::NoCuda` where NCCL (libnccl.so.2) does not load or is older than 2.7;
    /// `Error::Cuda` where NCCL cannot make the communicators.
    pub fn new(backends: &[&CudaBackend]) -> Result<Comms> {
        let lib = lib()?;
        let v = version()?;
        let mut parts = v.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
        let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
        if (major, minor) < (2, 7) {
            return Err(Error::NoCuda(format!(
                "NCCL {v} is older than 2.7, the first with sends and receives"
            )));
        }
        let ordinals: Vec<c_int> = backends.iter().map(|b| b.ordinal() as c_int).collect();
        let mut comms: Vec<ncclComm_t> = vec![std::ptr::null_mut(); backends.len()];
        // SAFETY: `comms` has room for one handle a device; `ordinals` lists that many distinct
        // devices.
        let r = unsafe {
            (lib.comm_init_all)(
                comms.as_mut_ptr(),
                ordinals.len() as c_int,
                ordinals.as_ptr(),
            )
        };
        nccl_check(lib, r, "ncclCommInitAll")?;
        let ranks = comms
            .into_iter()
            .zip(backends)
            .map(|(comm, b)| Rank {
                comm,
                gpu: b.gpu.clone(),
            })
            .collect();
        Ok(Comms {
            ranks,
            lock: Mutex::new(()),
        })
    }

    fn stream(g: &Gpu) -> cudaStream_t {
        g.stream.cu_stream() as cudaStream_t
    }

    /// Runs `f` between ncclGroupStart and ncclGroupEnd, under the lock; the group is ended
    /// whatever `f` returns, and the first error is returned.
    fn group(&self, f: impl FnOnce(&Lib) -> Result<()>) -> Result<()> {
        let lib = lib()?;
        let _held = self
            .lock
            .lock()
            .map_err(|_| Error::Internal("NCCL lock poisoned".into()))?;
        // SAFETY: no arguments; starts a group on this thread.
        nccl_check(lib, unsafe { (lib.group_start)() }, "ncclGroupStart")?;
        let inside = f(lib);
        // SAFETY: ends the group started above (also after an error inside it).
        let end = nccl_check(lib, unsafe { (lib.group_end)() }, "ncclGroupEnd");
        inside.and(end)
    }

    /// The all-to-all exchange: `parts[s][d]` are columns on rank `s` (one a component, the
    /// same number and types for every pair) for rank `d`. Returns `out[d][s]`: the same
    /// columns on rank `d`, the runs from all ranks in one buffer a component, in rank order.
    /// Queued on the ranks' streams: the senders' earlier work comes first, the receivers'
    /// later work after; nothing waits here.
    pub fn all_to_all(&self, parts: &[Vec<Vec<Column>>]) -> Result<Vec<Vec<Vec<Column>>>> {
        let n = self.ranks.len();
        let comps = parts.first().and_then(|p| p.first()).map_or(0, Vec::len);
        if parts.len() != n
            || parts
                .iter()
                .any(|p| p.len() != n || p.iter().any(|c| c.len() != comps))
        {
            return Err(Error::Internal("an exchange of the wrong shape".into()));
        }
        let mut out: Vec<Vec<Vec<Column>>> = vec![vec![Vec::with_capacity(comps); n]; n];
        let mut moves = Vec::new();
        for (d, rank) in self.ranks.iter().enumerate() {
            for c in 0..comps {
                let ty = parts[0][d][c].ty;
                let size = ty.size();
                let total: usize = parts.iter().map(|p| p[d][c].len).sum();
                let buf = Arc::new(Buffer::new(&rank.gpu.mem, total * size)?);
                let store: Arc<dyn Storage> = buf.clone();
                let mut off = 0;
                for (s, p) in parts.iter().enumerate() {
                    let piece = &p[d][c];
                    if piece.ty != ty {
                        return Err(Error::Internal("an exchange of mixed types".into()));
                    }
                    if piece.len > 0 {
                        moves.push(Move {
                            from: s,
                            to: d,
                            src: column_ptr(piece)?,
                            dst: buf.ptr().add(off * size),
                            bytes: piece.len * size,
                        });
                    }
                    out[d][s].push(Column {
                        ty,
                        store: store.clone(),
                        off,
                        len: piece.len,
                    });
                    off += piece.len;
                }
            }
        }
        // A rank's own runs: a copy on its stream.
        for m in moves.iter().filter(|m| m.from == m.to) {
            let g = &self.ranks[m.to].gpu;
            g.mem.bind()?;
            // SAFETY: `dst` is `bytes` bytes inside the new buffer made above for this run;
            // `src` starts `bytes` bytes of a live column on the same GPU (the caller's
            // `parts`, alive until this returns, and freed later in this stream's order).
            check(
                unsafe {
                    cudarc::driver::sys::cuMemcpyDtoDAsync_v2(
                        m.dst.0,
                        m.src.0,
                        m.bytes,
                        g.stream.cu_stream(),
                    )
                },
                "cuMemcpyDtoDAsync",
            )?;
        }
        // The others: one send and one receive each, all in one group (calls between one pair
        // of ranks match in the order they are made, which is the same on both sides).
        self.group(|lib| {
            for m in moves.iter().filter(|m| m.from != m.to) {
                let (from, to) = (&self.ranks[m.from], &self.ranks[m.to]);
                // SAFETY: `src` starts `bytes` bytes of a live column on rank `from`'s GPU,
                // which is freed only in that stream's order, after this send; bytes as u8.
                let r = unsafe {
                    (lib.send)(
                        m.src.0 as *const c_void,
                        m.bytes,
                        ncclDataType_t::ncclUint8,
                        m.to as c_int,
                        from.comm,
                        Self::stream(&from.gpu),
                    )
                };
                nccl_check(lib, r, "ncclSend")?;
                // SAFETY: `dst` is `bytes` bytes inside a new buffer on rank `to`'s GPU, kept by
                // the returned columns and freed only in that stream's order.
                let r = unsafe {
                    (lib.recv)(
                        m.dst.0 as *mut c_void,
                        m.bytes,
                        ncclDataType_t::ncclUint8,
                        m.from as c_int,
                        to.comm,
                        Self::stream(&to.gpu),
                    )
                };
                nccl_check(lib, r, "ncclRecv")?;
            }
            Ok(())
        })?;
        Ok(out)
    }

    /// The element-wise sum of the `len`-element u64 columns `cols` (one a rank, stored), on
    /// rank 0, by `ncclReduce`. Queued as `all_to_all` is.
    pub fn sum_u64(&self, cols: &[Column], len: usize) -> Result<Column> {
        if cols.len() != self.ranks.len()
            || cols.iter().any(|c| c.len != len || c.ty != ScalarType::U64)
        {
            return Err(Error::Internal("a reduction of the wrong shape".into()));
        }
        let out = Arc::new(Buffer::new(&self.ranks[0].gpu.mem, len * 8)?);
        if len > 0 {
            let srcs = cols.iter().map(column_ptr).collect::<Result<Vec<_>>>()?;
            self.group(|lib| {
                for (r, (rank, src)) in self.ranks.iter().zip(&srcs).enumerate() {
                    let dst = if r == 0 {
                        out.ptr().0 as *mut c_void
                    } else {
                        std::ptr::null_mut()
                    };
                    // SAFETY: `src` starts `len` u64s of a live column on this rank's GPU; on
                    // rank 0 `dst` is the new buffer of `len` u64s (NCCL ignores it elsewhere).
                    let r = unsafe {
                        (lib.reduce)(
                            src.0 as *const c_void,
                            dst,
                            len,
                            ncclDataType_t::ncclUint64,
                            ncclRedOp_t::ncclSum,
                            0,
                            rank.comm,
                            Self::stream(&rank.gpu),
                        )
                    };
                    nccl_check(lib, r, "ncclReduce")?;
                }
                Ok(())
            })?;
        }
        Ok(Column::new(ScalarType::U64, out, len))
    }
}

impl Drop for Comms {
    fn drop(&mut self) {
        let Ok(lib) = lib() else { return };
        for rank in &self.ranks {
            // Transfers still queued use the communicator: let them finish first.
            let _ = rank.gpu.synchronize();
            // SAFETY: a communicator ncclCommInitAll made, destroyed once, with no operation
            // in flight (the stream drained above).
            let _ = unsafe { (lib.comm_destroy)(rank.comm) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where NCCL does not load, the error says so and names the library; where it does, its
    /// version reads back. Either way nothing panics.
    #[test]
    fn nccl_loads_or_names_the_library() {
        match version() {
            Ok(v) => assert!(v.starts_with("2."), "{v}"),
            Err(Error::NoCuda(m)) => assert!(m.contains("libnccl.so.2"), "{m}"),
            Err(e) => panic!("{e}"),
        }
    }
}
