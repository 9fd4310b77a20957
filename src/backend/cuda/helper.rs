//! Compile helpers: child processes that compile the optimized forms of kernels with NVRTC, so
//! that no thread of the user's process is ever inside NVRTC while the process exits (NVRTC's
//! exit handlers tear its state down under any compile still running; docs/jit.md has the
//! design). A helper is the user's own executable, started again with `DEVSEQ_COMPILE_HELPER`
//! set: a function that the C library runs before `main` (`.init_array`) sees the variable,
//! serves compiles over its standard input and output, and exits when its input closes, which
//! it does when the user's process exits, at whatever point. The helper is single-threaded, so
//! its own exit never races a compile.
//!
//! The parent's side (`Helper`) is a pipe to one helper: a request is an instance's source, name
//! expression, options and target; the answer is its image or NVRTC's error. A helper that
//! cannot be started (devseq in a shared library rather than the executable, a sandbox that
//! forbids it, a platform without `.init_array`) is an error of `Helper::start`, and the caller
//! compiles in the foreground instead.

use super::nvrtc::{self, Image, Target};
use crate::error::{Error, Result};
use std::io::{BufReader, BufWriter, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// The environment variable that makes a process a helper, and its value's prefix (then the
/// parent's process id), so that it is not set by accident.
const ENV: &str = "DEVSEQ_COMPILE_HELPER";
const TOKEN: &str = "devseq-compile-helper";

/// What a helper writes first: the protocol and this build of devseq (a helper must be the
/// same build as its parent, which it is when both are one executable).
fn hello() -> Vec<u8> {
    format!("{TOKEN} 1 {}\n", env!("CARGO_PKG_VERSION")).into_bytes()
}

/// Run by the C library before `main` in every process of an executable that links devseq:
/// nothing unless `DEVSEQ_COMPILE_HELPER` makes this process a helper, which then serves
/// compiles and exits without returning to `main`.
#[cfg(target_os = "linux")]
extern "C" fn helper_hook() {
    let asked = std::env::var(ENV).is_ok_and(|v| v.starts_with(TOKEN));
    if !asked {
        return;
    }
    let code = match std::panic::catch_unwind(serve) {
        Ok(Ok(())) => 0,
        _ => 1,
    };
    std::process::exit(code);
}

/// The hook, in the section of functions the C library calls at start-up.
// SAFETY: `helper_hook` takes no arguments (the C library passes argc, argv and envp, which
// the C calling convention lets a function ignore), does not unwind (it catches panics), and
// returns at once in every process that is not a helper.
#[cfg(target_os = "linux")]
#[used]
#[unsafe(link_section = ".init_array")]
static HELPER_HOOK: extern "C" fn() = helper_hook;

/// Whether this executable runs the hook: devseq is linked into the executable itself (not into
/// a shared library that another program loaded, whose executable would not), found by the
/// mapping that holds the hook's code in `/proc/self/maps`.
#[cfg(target_os = "linux")]
fn hook_in_executable() -> bool {
    // The use of the static keeps the hook's object in the link wherever helpers are used.
    let at = std::hint::black_box(HELPER_HOOK) as usize;
    let (Ok(maps), Ok(exe)) = (
        std::fs::read_to_string("/proc/self/maps"),
        std::env::current_exe().and_then(|e| e.canonicalize()),
    ) else {
        return false;
    };
    maps.lines().any(|line| {
        let mut parts = line.split_whitespace();
        let range = parts.next().unwrap_or("");
        let Some((lo, hi)) = range.split_once('-') else {
            return false;
        };
        let (Ok(lo), Ok(hi)) = (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
        else {
            return false;
        };
        let path = parts.nth(4).unwrap_or("");
        lo <= at && at < hi && std::path::Path::new(path) == exe
    })
}

#[cfg(not(target_os = "linux"))]
fn hook_in_executable() -> bool {
    false
}

/// The helper's loop: requests from standard input until it closes, each answered on standard
/// output.
fn serve() -> Result<()> {
    let mut input = BufReader::new(std::io::stdin().lock());
    let mut output = BufWriter::new(std::io::stdout().lock());
    let io = |e: std::io::Error| Error::Internal(format!("compile helper: {e}"));
    output.write_all(&hello()).map_err(io)?;
    output.flush().map_err(io)?;
    while let Some(req) = Request::read(&mut input).map_err(io)? {
        let target = Target::named(&req.arch);
        match nvrtc::compile(&req.source, &req.expr, &req.options, &target) {
            Ok((image, _)) => {
                output.write_all(&[0]).map_err(io)?;
                put(&mut output, image.lowered.as_bytes()).map_err(io)?;
                put(&mut output, &image.bytes).map_err(io)?;
            }
            Err(e) => {
                output.write_all(&[1]).map_err(io)?;
                put(&mut output, e.to_string().as_bytes()).map_err(io)?;
            }
        }
        output.flush().map_err(io)?;
    }
    Ok(())
}

/// One compile for a helper.
struct Request {
    source: String,
    expr: String,
    arch: String,
    options: Vec<String>,
}

impl Request {
    fn write(&self, w: &mut impl Write) -> std::io::Result<()> {
        put(w, self.source.as_bytes())?;
        put(w, self.expr.as_bytes())?;
        put(w, self.arch.as_bytes())?;
        w.write_all(&(self.options.len() as u64).to_le_bytes())?;
        for o in &self.options {
            put(w, o.as_bytes())?;
        }
        Ok(())
    }

    /// The next request, or `None` where the input has ended.
    fn read(r: &mut impl Read) -> std::io::Result<Option<Request>> {
        let Some(source) = get_or_end(r)? else {
            return Ok(None);
        };
        let text = |b: Vec<u8>| {
            String::from_utf8(b)
                .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
        };
        let (source, expr, arch) = (text(source)?, text(get(r)?)?, text(get(r)?)?);
        let n = word(r)?;
        let options = (0..n)
            .map(|_| text(get(r)?))
            .collect::<std::io::Result<_>>()?;
        Ok(Some(Request {
            source,
            expr,
            arch,
            options,
        }))
    }
}

/// A length (8 bytes, little-endian) and the bytes.
fn put(w: &mut impl Write, bytes: &[u8]) -> std::io::Result<()> {
    w.write_all(&(bytes.len() as u64).to_le_bytes())?;
    w.write_all(bytes)
}

fn word(r: &mut impl Read) -> std::io::Result<u64> {
    let mut b = [0u8; 8];
    r.read_exact(&mut b)?;
    Ok(u64::from_le_bytes(b))
}

/// The most bytes one field may have: a bound against a corrupted stream, far above any
/// source or image.
const FIELD_MOST: u64 = 1 << 30;

fn get(r: &mut impl Read) -> std::io::Result<Vec<u8>> {
    let n = word(r)?;
    if n > FIELD_MOST {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "a field longer than any compile's",
        ));
    }
    let mut v = vec![0u8; n as usize];
    r.read_exact(&mut v)?;
    Ok(v)
}

/// `get`, or `None` where the stream ends before the field starts.
fn get_or_end(r: &mut impl Read) -> std::io::Result<Option<Vec<u8>>> {
    let mut b = [0u8; 8];
    let mut got = 0;
    while got < 8 {
        match r.read(&mut b[got..])? {
            0 if got == 0 => return Ok(None),
            0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            k => got += k,
        }
    }
    let n = u64::from_le_bytes(b);
    if n > FIELD_MOST {
        return Err(std::io::ErrorKind::InvalidData.into());
    }
    let mut v = vec![0u8; n as usize];
    r.read_exact(&mut v)?;
    Ok(Some(v))
}

/// The parent's end of one helper process.
pub(crate) struct Helper {
    child: Child,
    input: BufWriter<ChildStdin>,
    output: BufReader<ChildStdout>,
}

impl Helper {
    /// Starts a helper and reads its greeting.
    pub fn start() -> Result<Helper> {
        let no = |why: String| Error::Internal(format!("no compile helper: {why}"));
        if !hook_in_executable() {
            return Err(no("devseq is not linked into this executable".into()));
        }
        let exe = std::env::current_exe().map_err(|e| no(e.to_string()))?;
        let mut child = Command::new(exe)
            .env(ENV, format!("{TOKEN} {}", std::process::id()))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| no(e.to_string()))?;
        let (Some(input), Some(output)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(no("its pipes were not made".into()));
        };
        let mut h = Helper {
            child,
            input: BufWriter::new(input),
            output: BufReader::new(output),
        };
        let want = hello();
        let mut got = vec![0u8; want.len()];
        match h.output.read_exact(&mut got) {
            Ok(()) if got == want => Ok(h),
            Ok(()) => Err(no("it answered in another protocol".into())),
            Err(e) => Err(no(format!("it did not answer ({e})"))),
        }
    }

    /// Compiles one instance in the helper: its image, or the error NVRTC gave (`Error::Internal`
    /// where the helper itself failed: it is of no more use then).
    pub fn compile(
        &mut self,
        source: &str,
        expr: &str,
        options: &[String],
        target: &Target,
    ) -> Result<Image> {
        let io = |e: std::io::Error| Error::Internal(format!("compile helper: {e}"));
        let req = Request {
            source: source.to_string(),
            expr: expr.to_string(),
            arch: target.arch().to_string(),
            options: options.to_vec(),
        };
        req.write(&mut self.input).map_err(io)?;
        self.input.flush().map_err(io)?;
        let mut status = [0u8; 1];
        self.output.read_exact(&mut status).map_err(io)?;
        let text = |b: Vec<u8>| String::from_utf8_lossy(&b).into_owned();
        if status[0] == 0 {
            let lowered = text(get(&mut self.output).map_err(io)?);
            let bytes = get(&mut self.output).map_err(io)?;
            Ok(Image { lowered, bytes })
        } else {
            Err(Error::Cuda(text(get(&mut self.output).map_err(io)?)))
        }
    }
}

impl Drop for Helper {
    /// Closes the helper's input, which ends it once any compile it runs is done; reaps it
    /// where it has ended already (else it ends on its own and its parent, init or this
    /// process, reaps it).
    fn drop(&mut self) {
        let _ = self.input.flush();
        let _ = self.child.try_wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_round_trip() {
        let req = Request {
            source: "#include \"prelude.cuh\"\n".into(),
            expr: "ds_map<S0, 256>".into(),
            arch: "sm_90".into(),
            options: vec!["-std=c++17".into(), "--fmad=false".into()],
        };
        let mut bytes = Vec::new();
        req.write(&mut bytes).unwrap();
        req.write(&mut bytes).unwrap();
        let mut r = bytes.as_slice();
        for _ in 0..2 {
            let got = Request::read(&mut r).unwrap().unwrap();
            assert_eq!(
                (got.source, got.expr, got.arch, got.options),
                (
                    req.source.clone(),
                    req.expr.clone(),
                    req.arch.clone(),
                    req.options.clone()
                )
            );
        }
        assert!(Request::read(&mut r).unwrap().is_none());
        // A stream cut inside a request is an error, not the end.
        let mut cut = &bytes[..bytes.len() / 3];
        assert!(Request::read(&mut cut).is_err());
    }

    #[test]
    fn the_hook_is_in_the_test_executable() {
        assert!(hook_in_executable());
    }
}
