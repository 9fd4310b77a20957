//! Diagnostics: devseq speaks through the `log` facade (compile and cache events at debug level,
//! a disk cache that cannot be used at warn), under targets that start with `devseq`. A program
//! that installs a logger (env_logger, tracing's bridge, ...) sees them there. Where no logger is
//! installed and `DEVSEQ_LOG` is set (not empty, not `0`), devseq installs a small one that
//! writes devseq's own records to standard error, so that `DEVSEQ_LOG=1` works without code.

use std::io::Write;
use std::sync::Once;

/// The logger devseq installs for `DEVSEQ_LOG` where the program has none: devseq's records,
/// each a line on standard error.
struct Stderr;

impl log::Log for Stderr {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        metadata.target().starts_with("devseq")
    }

    fn log(&self, record: &log::Record<'_>) {
        if self.enabled(record.metadata()) {
            // One write a record, so that lines of several threads do not interleave; a
            // failed write to standard error has nowhere to be reported.
            let line = format!("devseq: {}\n", record.args());
            let _ = std::io::stderr().lock().write_all(line.as_bytes());
        }
    }

    fn flush(&self) {}
}

static STDERR: Stderr = Stderr;

/// Whether `DEVSEQ_LOG` asks for diagnostics on standard error.
fn asked() -> bool {
    std::env::var_os("DEVSEQ_LOG").is_some_and(|v| !v.is_empty() && v != "0")
}

/// Installs the standard-error logger once, where `DEVSEQ_LOG` asks for it and the program has
/// installed no logger of its own (a logger installed later by the program then fails to
/// install, as two loggers always do; so `DEVSEQ_LOG` is for programs without one). Called
/// where a device is made, before anything is logged.
pub(crate) fn init() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        if asked() && log::set_logger(&STDERR).is_ok() {
            log::set_max_level(log::LevelFilter::Debug);
        }
    });
}
