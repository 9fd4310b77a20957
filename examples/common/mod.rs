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
