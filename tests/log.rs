//! devseq's diagnostics reach the program's logger (the `log` facade): a test binary of its own,
//! since a process has one logger and it must be installed before devseq logs anything.

use devseq::{Device, DeviceSeq, Op};
use std::sync::Mutex;

/// A logger that keeps every record of devseq's.
struct Keep(Mutex<Vec<(log::Level, String, String)>>);

impl log::Log for Keep {
    fn enabled(&self, _: &log::Metadata<'_>) -> bool {
        true
    }
    fn log(&self, r: &log::Record<'_>) {
        if r.target().starts_with("devseq") {
            let mut kept = self.0.lock().unwrap();
            kept.push((r.level(), r.target().to_string(), r.args().to_string()));
        }
    }
    fn flush(&self) {}
}

static KEEP: Keep = Keep(Mutex::new(Vec::new()));

/// Making a device and running a kernel logs at debug level under devseq's targets: the host
/// backend's start (the first host device of a process), and on a GPU each kernel's compile or
/// its load from the disk cache.
#[test]
fn records_reach_the_programs_logger() {
    log::set_logger(&KEEP).expect("the first logger of this process");
    log::set_max_level(log::LevelFilter::Debug);
    let dev = Device::auto().unwrap();
    for d in [Device::host(), dev.clone()] {
        let xs = DeviceSeq::<u32>::sequence(&d, 1000).unwrap();
        assert_eq!(xs.map(|x| x * 3u32).unwrap().reduce(Op::Max).unwrap(), 2997);
    }
    let kept = KEEP.0.lock().unwrap();
    let has = |what: &str| {
        kept.iter().any(|(level, target, msg)| {
            *level == log::Level::Debug && target.starts_with("devseq::") && msg.contains(what)
        })
    };
    assert!(
        has("the host backend"),
        "no record of the host backend among {kept:?}"
    );
    if dev.is_cuda() {
        assert!(
            has("compiled by NVRTC") || has("loaded from the disk cache"),
            "no compile or load record among {kept:?}"
        );
    }
}
