//! Compiles the kernel instances of every family with NVRTC for sm_90, without a GPU: every
//! element type, operator and variant the launchers can ask for, each family listing its own,
//! and lazy sources with every kind of leaf. Needs the NVRTC library, so it is ignored by
//! default: `cargo test --lib -- --ignored kernels_compile`. With `DEVSEQ_DUMP_DIR` set, the
//! images are written there (for cuobjdump), each beside its source text (`.cu`), their file
//! names the instance's index in the list, its name expression and its source text's hash;
//! `DEVSEQ_COMPILE_ONLY` keeps the instances whose name expression contains that text (e.g.
//! `ds::Col<i32, 4>>`) or whose source text has that hash (the dumped files' suffix), or
//! those of any of several such texts separated by `|`; `DEVSEQ_PTXAS_INFO=1` prints ptxas'
//! registers and spills of each, and fails on any spill. For compile-time surveys:
//! `DEVSEQ_COMPILE_TIMES=1` prints each instance's compile time (and its source's hash),
//! `DEVSEQ_COMPILE_SAMPLE=k` keeps every k-th instance (from the `DEVSEQ_COMPILE_OFFSET`-th), `DEVSEQ_COMPILE_QUICK=1` compiles the
//! quick form (`jit.rs`) and `DEVSEQ_NVRTC_EXTRA` adds NVRTC options (e.g. `--time=FILE`).
//! `DEVSEQ_COMPILE_ARCH` names another target: an `sm_` one for its images, a `compute_` one
//! for PTX (dumped as `.ptx`, NUL-terminated as NVRTC gives it), to time ptxas apart; the
//! instances are those that GPU's tuning asks for (`tuning::gpus::for_target`). For machine
//! code, every instance's static and dynamic shared memory must fit a block of that GPU.
//! `DEVSEQ_COMPILE_DRY=1` prints the instances' names and source hashes without compiling.

use super::key::KernelKey;
use super::source::SourceKey;
use super::*;
use crate::expr::trace;
use crate::item::Expr;
use crate::source::Storage;
use rayon::prelude::*;

struct NoMemory;
impl Storage for NoMemory {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// A stored column of `ty` with no memory behind it (compile checks launch nothing).
pub(super) fn col(ty: ScalarType) -> Source {
    Source::column(Column::new(ty, Arc::new(NoMemory), 10))
}

/// Lazy sources: one expression with every operator over two columns and a constant, the
/// positions as each index type, a constant, a half-precision chain, min/max against a
/// constant zero, and the benchmark's map.
fn lazy() -> Vec<SourceKey> {
    let mut v = Vec::new();
    let t = trace(&[ScalarType::F32, ScalarType::I32], |a, id| {
        let x = Expr::<f32>::from_node(id, a[0]);
        let k = Expr::<i32>::from_node(id, a[1]);
        let y = (x * 2.0 + 1.0)
            .sqrt()
            .exp()
            .ln()
            .sin()
            .cos()
            .tanh()
            .floor()
            .ceil();
        let z = (y.round().abs().powf(x) - x / 3.0).min(x).max(-x);
        let m = ((k % 7) & 3 | 1) ^ !k;
        let s = (m << 3u32) >> Expr::constant(1u32);
        let c = Expr::select(z.lt(1.0), s.cast::<f32>(), -z);
        c.cast::<half::f16>()
            .cast::<half::bf16>()
            .cast::<f64>()
            .cast::<u8>()
            .cast::<i64>()
    })
    .unwrap();
    let all = Source::map(&[&col(ScalarType::F32), &col(ScalarType::I32)], &t, 10);
    v.push(SourceKey::assuming(&all, 2));
    v.push(SourceKey::assuming(&all, 0));
    for i in [ScalarType::U32, ScalarType::U64] {
        v.push(SourceKey::assuming(&Source::sequence(i, 10), 4));
        v.push(SourceKey::assuming(&Source::sequence(i, 10).slice(3, 5), 2));
    }
    v.push(SourceKey::assuming(
        &Source::constant(ScalarType::F64, 0, 10),
        2,
    ));
    // Views: a gather by stored indices, a reversed map (read at other rows), a shift, a
    // concatenation of a column and a gathered map, a stride of an f16 column.
    let idx = col(ScalarType::U32);
    let g = col(ScalarType::F32).gathered(&idx);
    v.push(SourceKey::assuming(&g, 4));
    v.push(SourceKey::assuming(&all.reversed(), 2));
    v.push(SourceKey::assuming(
        &col(ScalarType::I64).shifted_by(-3, 7),
        2,
    ));
    v.push(SourceKey::assuming(&col(ScalarType::F32).concat(&g), 4));
    v.push(SourceKey::assuming(&col(ScalarType::F16).strided(3), 8));
    let h = trace(&[ScalarType::F16], |a, id| {
        Expr::<half::f16>::from_node(id, a[0]) * half::f16::from_f32(3.0)
    })
    .unwrap();
    let once = Source::map(&[&col(ScalarType::F16)], &h, 10);
    v.push(SourceKey::assuming(&Source::map(&[&once], &h, 10), 8));
    // Bits of every kind of operand: read (f16, f32, i8), computed (f64, bf16).
    let bits = trace(
        &[ScalarType::F16, ScalarType::F32, ScalarType::I8],
        |a, id| {
            let h = Expr::<half::f16>::from_node(id, a[0]);
            let x = Expr::<f32>::from_node(id, a[1]);
            let k = Expr::<i8>::from_node(id, a[2]);
            h.to_bits()
                ^ x.to_bits()
                ^ k.to_bits()
                ^ (x.cast::<f64>() * 0.5).to_bits()
                ^ (x * 2.0).cast::<half::bf16>().to_bits()
        },
    )
    .unwrap();
    v.push(SourceKey::assuming(
        &Source::map(
            &[
                &col(ScalarType::F16),
                &col(ScalarType::F32),
                &col(ScalarType::I8),
            ],
            &bits,
            10,
        ),
        2,
    ));
    let u = trace(&[ScalarType::U8], |a, id| {
        Expr::<u8>::from_node(id, a[0]).cast::<f32>().cast::<u8>()
    })
    .unwrap();
    v.push(SourceKey::assuming(
        &Source::map(&[&col(ScalarType::U8)], &u, 10),
        16,
    ));
    let z = trace(&[ScalarType::F32], |a, id| {
        let x = Expr::<f32>::from_node(id, a[0]);
        Expr::constant(0.0f32).min(x).sqrt() + Expr::constant(0.0f32).max(x)
    })
    .unwrap();
    v.push(SourceKey::assuming(
        &Source::map(&[&col(ScalarType::F32)], &z, 10),
        4,
    ));
    let b = trace(&[ScalarType::F32], |a, id| {
        Expr::<f32>::from_node(id, a[0]) * 2.0 + 1.0
    })
    .unwrap();
    v.push(SourceKey::assuming(
        &Source::map(&[&col(ScalarType::F32)], &b, 10),
        4,
    ));
    v.push(neighbours());
    // More constants than the argument words hold: they spill to device memory.
    let long = trace(&[ScalarType::I64], |a, id| {
        let mut y = Expr::<i64>::from_node(id, a[0]);
        for k in 0..200i64 {
            y = (y * 3 + k) % 1_000_003;
        }
        y
    })
    .unwrap();
    let long = Source::map(&[&col(ScalarType::I64)], &long, 10);
    assert!(SourceKey::assuming(&long, 2).spill);
    v.push(SourceKey::assuming(&long, 2));
    // Random leaves of every kind and type, whole and sliced, and one mapped.
    use crate::random::Rand;
    for (r, t) in [
        (Rand::Bits, ScalarType::U32),
        (Rand::Bits, ScalarType::U64),
        (Rand::Uniform, ScalarType::F32),
        (Rand::Uniform, ScalarType::F64),
        (Rand::Uniform, ScalarType::F16),
        (Rand::Uniform, ScalarType::BF16),
        (Rand::Normal, ScalarType::F32),
        (Rand::Normal, ScalarType::F64),
        (Rand::Normal, ScalarType::F16),
        (Rand::Normal, ScalarType::BF16),
    ] {
        let src = Source::random(r, t, 1, 100);
        v.push(SourceKey::assuming(&src, tuning::vec(t.size())));
        v.push(SourceKey::assuming(
            &src.slice(3, 50),
            tuning::vec(t.size()),
        ));
    }
    let u = Source::random(Rand::Uniform, ScalarType::F32, 1, 100);
    v.push(SourceKey::assuming(&Source::map(&[&u], &b, 100), 4));
    // Loops (`fold_range`): a state of three types, a count from a column, a loop in the body.
    let looped = trace(&[ScalarType::U32, ScalarType::F32], |a, id| {
        let n = Expr::<u32>::from_node(id, a[0]);
        let x = Expr::<f32>::from_node(id, a[1]);
        let init = (x, Expr::constant(0u64), n);
        let (s, c, _) = Expr::fold_range(n % 17, init, |k, (s, c, h)| {
            let inner = Expr::fold_range(k, h, |j, t| t * 3 + j);
            (
                s * 0.5 + inner.cast::<f32>(),
                c + (inner & 1).cast::<u64>(),
                inner,
            )
        });
        s.cast::<f64>() + c.cast::<f64>()
    })
    .unwrap();
    v.push(SourceKey::assuming(
        &Source::map(&[&col(ScalarType::U32), &col(ScalarType::F32)], &looped, 10),
        4,
    ));
    v
}

/// Neighbours in one column (find_repeats' flags `x[i] == x[i + 1]`): the second read
/// shifted.
fn neighbours() -> SourceKey {
    let eq = trace(&[ScalarType::U32, ScalarType::U32], |a, id| {
        Expr::<u32>::from_node(id, a[0]).eq(Expr::<u32>::from_node(id, a[1]))
    })
    .unwrap();
    let c = col(ScalarType::U32);
    let pairs = Source::map(&[&c.slice(0, 9), &c.slice(1, 9)], &eq, 9);
    let key = SourceKey::assuming(&pairs, 4);
    assert!(!key.shifted.is_empty());
    key
}

fn instances(arch: &tuning::Arch) -> Vec<KernelKey> {
    let lazy = lazy();
    let positions: Vec<SourceKey> = lazy
        .iter()
        .filter(|s| matches!(s.ty, ScalarType::U32 | ScalarType::U64))
        .cloned()
        .collect();
    let mut v = Vec::new();
    v.extend(map::check::variants(&lazy));
    v.extend(reduce::check::variants(arch));
    // argmax's words: 64-bit keys from a 32-bit column and the positions; and from bytes.
    let word = trace(&[ScalarType::F32, ScalarType::U64], |a, id| {
        let x = Expr::<f32>::from_node(id, a[0]);
        let i = Expr::<u64>::from_node(id, a[1]);
        (x.to_bits() << 32u32) | i
    })
    .unwrap();
    let at = Source::sequence(ScalarType::U64, 10);
    let bytes = trace(&[ScalarType::U8], |a, id| {
        Expr::<u8>::from_node(id, a[0]).cast::<u32>()
    })
    .unwrap();
    // The benchmark's transform_reduce: a float map read in the stored column's vectors.
    let square = trace(&[ScalarType::F32], |a, id| {
        let x = Expr::<f32>::from_node(id, a[0]);
        x * x
    })
    .unwrap();
    // Counts from a loop (a Monte Carlo's): one element a thread and tile.
    let hits = trace(&[ScalarType::U32], |a, id| {
        let t = Expr::<u32>::from_node(id, a[0]);
        let init = (t.cast::<u64>(), Expr::constant(0u32));
        let (_, h) = Expr::fold_range(256u32, init, |_, (x, h)| {
            let x = x * 48_271u64 % 2_147_483_647u64;
            (x, h + (x & 1u64).cast::<u32>())
        });
        h.cast::<u64>()
    })
    .unwrap();
    v.extend(reduce::check::lazy_variants(
        arch,
        &[
            Source::map(&[&col(ScalarType::F32), &at], &word, 10),
            Source::map(&[&col(ScalarType::U8)], &bytes, 10),
            Source::map(&[&col(ScalarType::F32)], &square, 10),
            Source::map(&[&Source::sequence(ScalarType::U32, 10)], &hits, 10),
        ],
    ));
    v.extend(scan::check::variants(arch, &lazy));
    // Lazy head flags of u32 keys, whole and sliced (a first row past the keys' first).
    let heads = Source::head_flags(Column::new(ScalarType::U32, Arc::new(NoMemory), 10));
    let flags = [
        SourceKey::assuming(&heads, 4),
        SourceKey::assuming(&heads.slice(3, 5), 4),
        SourceKey::assuming(&heads, 0),
        neighbours(),
    ];
    // 8-byte values (whose tiles wait in shared memory): one column mapped (an f64 and the
    // spilling i64), and two.
    let twice = trace(&[ScalarType::F64], |a, id| {
        Expr::<f64>::from_node(id, a[0]) * 2.0
    })
    .unwrap();
    let mut wide = vec![SourceKey::assuming(
        &Source::map(&[&col(ScalarType::F64)], &twice, 10),
        2,
    )];
    wide.extend(
        lazy.iter()
            .filter(|s| s.ty.size() == 8 && s.avec == 2)
            .cloned(),
    );
    v.extend(segment::check::variants(arch, &flags, &wide));
    // copy_if's flags: a comparison of the f32 values' own column.
    let below = trace(&[ScalarType::F32], |a, id| {
        Expr::<f32>::from_node(id, a[0]).lt(0.5f32).cast::<u8>()
    })
    .unwrap();
    let own = [
        (ScalarType::U32, flags[0].clone()),
        (ScalarType::U32, flags[1].clone()),
        (
            ScalarType::F32,
            SourceKey::assuming(&Source::map(&[&col(ScalarType::F32)], &below, 10), 4),
        ),
    ];
    v.extend(compact::check::variants(arch, &positions, &flags, &own));
    v.extend(gather::check::variants(&lazy));
    v.extend(sort::check::variants(arch, &positions, &lazy));
    v.extend(combine::check::variants(arch));
    v.extend(histogram::check::variants(&lazy));
    v.extend(assoc::check::variants(arch));
    v.extend(search::check::variants(&positions));
    v.extend(merge::check::variants(&positions));
    v
}

#[test]
fn ptxas_reports_give_static_shared_memory() {
    let log = "ptxas info    : Compiling entry function 'k' for 'sm_75'\n\
               ptxas info    : Used 96 registers, used 1 barriers, 17440 bytes smem, 432 bytes cmem[0]";
    assert_eq!(static_smem(log), 17440);
    assert_eq!(
        static_smem("ptxas info    : Used 8 registers, 380 bytes cmem[0]"),
        0
    );
}

/// The static shared memory of the kernel in a ptxas report (`-v`): the most of its lines'
/// "N bytes smem".
fn static_smem(log: &str) -> usize {
    log.lines()
        .filter_map(|l| {
            let (before, _) = l.split_once(" bytes smem")?;
            before.rsplit([' ', ',']).next()?.parse().ok()
        })
        .max()
        .unwrap_or(0)
}

/// `f`, its time printed with `name` where `DEVSEQ_COMPILE_TIMES` is set (run with
/// `RAYON_NUM_THREADS=1` for times of one compile alone).
fn timed<T>(name: &str, f: impl FnOnce() -> T) -> T {
    let t0 = std::time::Instant::now();
    let r = f();
    if std::env::var_os("DEVSEQ_COMPILE_TIMES").is_some() {
        println!("{:9.1} ms  {name}", t0.elapsed().as_secs_f64() * 1e3);
    }
    r
}

#[test]
#[ignore = "needs the NVRTC library; run with --ignored"]
fn kernels_compile() {
    let dump = std::env::var_os("DEVSEQ_DUMP_DIR").map(std::path::PathBuf::from);
    let only = std::env::var("DEVSEQ_COMPILE_ONLY").unwrap_or_default();
    let only: Vec<&str> = only.split('|').collect();
    // Every k-th instance only (`DEVSEQ_COMPILE_SAMPLE=k`), from the `DEVSEQ_COMPILE_OFFSET`-th
    // on (so that samples of several runs cover different instances).
    let var = |name: &str, default: usize| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let sample = var("DEVSEQ_COMPILE_SAMPLE", 1).max(1);
    let offset = var("DEVSEQ_COMPILE_OFFSET", 0) % sample;
    let arch = std::env::var("DEVSEQ_COMPILE_ARCH").unwrap_or_else(|_| "sm_90".into());
    let all: Vec<(usize, KernelKey, String, u32)> = instances(&tuning::gpus::for_target(&arch))
        .into_iter()
        .enumerate()
        .map(|(index, k)| {
            let (src, name) = jit::instance(&k);
            // Lazy sources print as S0, S1, ...: instances of one name differ in their
            // sources' definitions, so a dumped image's file name carries a hash of the text.
            let mut h = std::hash::DefaultHasher::new();
            std::hash::Hash::hash(&src, &mut h);
            (index, k, name, std::hash::Hasher::finish(&h) as u32)
        })
        .filter(|(_, _, name, hash)| {
            let hash = format!("{hash:08x}");
            only.iter().any(|o| name.contains(o) || hash == *o)
        })
        .enumerate()
        .filter(|(k, _)| k % sample == offset)
        .map(|(_, x)| x)
        .collect();
    // The instances' names and source hashes only, nothing compiled: for comparing what two
    // trees would build (`DEVSEQ_COMPILE_DRY=1`).
    if std::env::var_os("DEVSEQ_COMPILE_DRY").is_some() {
        for (_, _, name, hash) in &all {
            println!("{name} [{hash:08x}]");
        }
        return;
    }
    let info = std::env::var_os("DEVSEQ_PTXAS_INFO").is_some();
    let target = tuning::gpus::for_target(&arch);
    // ptxas reports each instance's static shared memory where it makes machine code.
    let cubin = !arch.starts_with("compute_");
    let compile = |key, name: &str, hash: u32| {
        timed(&format!("{name} [{hash:08x}]"), || {
            jit::compile_for(&arch, key, info || cubin)
        })
    };
    let failures: Vec<String> = all
        .par_iter()
        .filter_map(|(index, key, name, hash)| match compile(key, name, *hash) {
            Ok((image, log)) => {
                if let Some(d) = &dump {
                    let file: String = name
                        .chars()
                        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                        .collect();
                    // The instance's index first: it pairs the images of two trees whose
                    // instance names differ.
                    let file = d.join(format!("{index:04}_{file}_{hash:08x}"));
                    let _ = std::fs::create_dir_all(d);
                    let ext = if arch.starts_with("compute_") {
                        "ptx"
                    } else {
                        "cubin"
                    };
                    let _ = std::fs::write(file.with_extension(ext), image);
                    let _ = std::fs::write(file.with_extension("cu"), jit::instance(key).0);
                }
                if cubin {
                    let types: Vec<ScalarType> = key.sources.iter().map(|s| s.ty).collect();
                    let dynamic = key.family.dynamic_smem(&types) as usize;
                    let fixed = static_smem(&log);
                    if fixed + dynamic > target.smem_block {
                        return Some(format!(
                            "{name}: {fixed} bytes of static and {dynamic} of dynamic shared \
                             memory, past {arch}'s {} a block",
                            target.smem_block
                        ));
                    }
                }
                if info {
                    let report: Vec<&str> = log
                        .lines()
                        .filter(|l| l.contains("registers") || l.contains("spill"))
                        .collect();
                    println!("{name} [{hash:08x}]: {}", report.join(" | "));
                    if log.lines().any(|l| {
                        l.contains("bytes spill")
                            && !l.contains(" 0 bytes spill stores, 0 bytes spill loads")
                    }) {
                        return Some(format!("{name}: spills:\n{log}"));
                    }
                }
                None
            }
            Err(crate::Error::Compile { log, .. }) => Some(format!("{name}:\n{log}")),
            Err(e) => Some(format!("{name}: {e}")),
        })
        .collect();
    println!(
        "{} instances compiled, {} failed",
        all.len(),
        failures.len()
    );
    for f in failures.iter().take(5) {
        println!("{f}");
    }
    assert!(failures.is_empty());
}
