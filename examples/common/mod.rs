//! What the examples share: reading their command-line flags, and timing.

/// The word after the last `name` on the command line (empty where `name` comes last), or
/// `None` where `name` is absent.
pub fn value(name: &str) -> Option<String> {
    let v: Vec<String> = std::env::args().skip(1).collect();
    v.iter()
        .rposition(|a| a == name)
        .map(|i| v.get(i + 1).cloned().unwrap_or_default())
}

/// The value of the flag `name` (`--n 100`), or `default` where it is absent; panics, naming
/// the flag, where its value does not parse.
pub fn flag<T: std::str::FromStr>(name: &str, default: T) -> T {
    match value(name) {
        Some(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("{name} N: {v:?} is not a valid value")),
        None => default,
    }
}

/// The best time, in seconds, of `reps` calls of `f` after one warm-up call (`f` waits for the
/// work it times).
#[allow(dead_code)] // not every example times something
pub fn best(reps: usize, mut f: impl FnMut()) -> f64 {
    f();
    (0..reps)
        .map(|_| {
            let t = std::time::Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

/// The group a sharded example runs on: the one its launcher describes (torchrun, mpirun,
/// srun, or the variables set by hand: one process a GPU, `DEVSEQ_DEVICE=cpu` for host
/// devices) where a launcher variable is set; else every GPU of this host, in one process;
/// else two host devices.
#[allow(dead_code)] // only the sharded examples use it
pub fn group() -> devseq::Result<devseq::DeviceGroup> {
    use devseq::{Device, DeviceGroup};
    let launched = ["RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID"]
        .iter()
        .any(|v| std::env::var_os(v).is_some());
    if launched {
        return DeviceGroup::from_env();
    }
    let dev = Device::auto()?;
    if dev.is_cuda() {
        DeviceGroup::cuda_all()
    } else {
        DeviceGroup::new(&[dev.clone(), dev])
    }
}
