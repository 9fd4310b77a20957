//! Lazy sequences (`map`, `zip_map`, `cast`, `DeviceSeq::sequence`, `DeviceSeq::filled`, and
//! slices, chains and shared uses of them) as the input of every operation. The contract: the
//! result on a lazy input is bitwise the result on its materialization (`copy`), whichever
//! inputs are lazy; and where the host computes the lazy elements (`Lazy::want`) and the
//! operation is exact for them, it is the sequential oracle's. Also: `is_stored`, the memory a
//! fused read does not allocate, and the errors of lazy inputs.
//!
//! The oracles of the operations run on the elements the device computed for the lazy input
//! (which are checked against the host's separately), so that a failure names the step that
//! is wrong.

use crate::combine::oracle as combine_oracle;
use crate::common::*;
use crate::histogram::bin;
use crate::scan::{exclusive_oracle, inclusive_oracle};
use crate::segment::{seg_excl, seg_incl, seg_reduce};
use devseq::{DeviceSeq, Element, Error, Expr, Index, Op, bf16, f16};

// ---- which types and operators ---------------------------------------------------------------

/// Fusion reads a source the same way whatever the consumer combines it with, and its code
/// differs by element width, float or integer, and the half types' rounding: these seven types
/// cover that, and keep the number of kernels a GPU run compiles (one for each shape of input,
/// type and consumer) within minutes. Every type's stored inputs are tested elsewhere.
macro_rules! for_lazy_types {
    ($name:ident, $body:ident) => {
        crate::for_each_type!($name, $body, [u8, i32, u64, f16, bf16, f32, f64]);
    };
}

/// The operators of the lazy tests: an exact sum for some inputs and an order-free extreme for
/// all (the other operators take the same path through a source).
fn lazy_ops<X: T>() -> Vec<Op> {
    vec![Op::Add, Op::Max]
}

// ---- lazy inputs and how they are checked ------------------------------------------------

/// A lazy sequence, its name, and its elements as the host computes them (`None` where it
/// does not).
struct Lazy<X: Element> {
    name: String,
    seq: DeviceSeq<X>,
    want: Option<Vec<X>>,
    /// Floats: every `Op::Add` combination of the elements, in any order, is exact (small
    /// quarter steps).
    add_exact: bool,
}

fn lazy<X: Element>(
    name: impl Into<String>,
    seq: devseq::Result<DeviceSeq<X>>,
    want: Option<Vec<X>>,
    add_exact: bool,
) -> Lazy<X> {
    let name = name.into();
    let seq = seq.unwrap_or_else(|e| panic!("building {name}: {e}"));
    Lazy {
        name,
        seq,
        want,
        add_exact,
    }
}

/// Lengths: the edges of `small_sizes`, and one of about 100 000.
fn lens() -> Vec<usize> {
    small_sizes()
        .iter()
        .copied()
        .chain([big(100_003)])
        .collect()
}

/// Whether to check combination `j` at length `n`: always at the small lengths, one in
/// `every` (rotating with `j`) at the large ones, where the host backend's interpretation of
/// the expressions (dev profile) costs most.
fn at(n: usize, j: usize, every: usize) -> bool {
    n <= 4097 || j.is_multiple_of(every)
}

/// The draw for `op`: exact sums and products for `Add` and `Mul`, NaN and signed zeros for
/// the others (which are exact for any float).
fn gen_of(op: Op) -> Gen {
    match op {
        Op::Min | Op::Max => Gen::Special,
        _ => gen_for(op),
    }
}

/// Whether the sequential oracle of `op` is exact over these inputs, in any order.
fn exact<X: T>(inputs: &[&Lazy<X>], op: Op) -> bool {
    !X::FLOAT
        || matches!(op, Op::Min | Op::Max)
        || (op == Op::Add && inputs.iter().all(|k| k.add_exact))
}

/// Asserts bitwise equality, a NaN matching any NaN (the host's NaN payloads are its own).
fn assert_oracle<X: T>(got: &[X], want: &[X], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    let nan = |x: X| X::FLOAT && x.f().is_nan();
    let differs =
        |i: usize| got[i].to_bits() != want[i].to_bits() && !(nan(got[i]) && nan(want[i]));
    if let Some(i) = (0..got.len()).find(|&i| differs(i)) {
        panic!(
            "{what}: first difference from the oracle at {i} of {}: got {:?} ({:#x}), want {:?} \
             ({:#x})",
            got.len(),
            got[i],
            got[i].to_bits(),
            want[i],
            want[i].to_bits()
        );
    }
}

/// As `assert_oracle`, for the combination of elements by `op`: float `Min`/`Max` results may
/// also differ from the oracle in the sign of a zero. The API fixes `Op::Min`/`Op::Max` only
/// "as f32::min/f32::max" (which leave +-0 open); the GPU's reductions and scans combine with
/// the hardware's fminf/fmaxf, which order -0.0 below +0.0 (kernels/prelude.cuh), where the
/// host and the oracle keep the first of two equal values. The lazy input and its copy must
/// still agree bit for bit (checked separately).
fn assert_oracle_op<X: T>(got: &[X], want: &[X], op: Op, what: &str) {
    if X::FLOAT && matches!(op, Op::Min | Op::Max) {
        let unsign = |v: &[X]| -> Vec<X> {
            v.iter()
                .map(|&x| if x.f() == 0.0 { X::from_acc_f(0.0) } else { x })
                .collect()
        };
        assert_oracle(
            &unsign(got),
            &unsign(want),
            &format!("{what} (zeros unsigned)"),
        );
    } else {
        assert_oracle(got, want, what);
    }
}

/// Asserts bitwise equality, NaNs aside, naming the first difference with its bits.
///
/// Two NaNs count as the same: the sign of a NaN that an addition of NaNs returns depends on
/// the operands' order in the instruction, which the compiler may swap (IEEE 754 leaves it
/// open), so a fused and a stored evaluation may differ there and nowhere else.
fn same_bits<X: Element + std::fmt::Debug>(got: &[X], want: &[X], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    #[allow(clippy::eq_op)] // x != x: the NaN test for any Element
    let nan = |x: X| x != x;
    let differ = |i: usize| got[i].to_bits() != want[i].to_bits() && !(nan(got[i]) && nan(want[i]));
    if let Some(i) = (0..got.len()).find(|&i| differ(i)) {
        panic!(
            "{what}: first difference at {i} of {}: got {:?} ({:#x}), want {:?} ({:#x})",
            got.len(),
            got[i],
            got[i].to_bits(),
            want[i],
            want[i].to_bits()
        );
    }
}

/// Checks the lazy sequence (not stored; `to_vec` as its copy's, and as the host's where it
/// computes it) and returns its copy (stored) and its elements.
fn materialize<X: T>(k: &Lazy<X>, what: &str) -> (DeviceSeq<X>, Vec<X>) {
    assert!(!k.seq.is_stored(), "{what}: {} is lazy", k.name);
    let m = k
        .seq
        .copy()
        .unwrap_or_else(|e| panic!("{what}: copy of {}: {e}", k.name));
    assert!(m.is_stored(), "{what}: the copy of {} is stored", k.name);
    assert_eq!(m.len(), k.seq.len(), "{what}: copy length of {}", k.name);
    let vals = m.to_vec().unwrap();
    let direct = k
        .seq
        .to_vec()
        .unwrap_or_else(|e| panic!("{what}: to_vec of {}: {e}", k.name));
    same_bits(
        &direct,
        &vals,
        &format!("{what}: to_vec of {} vs its copy", k.name),
    );
    if let Some(w) = &k.want {
        assert_oracle(&vals, w, &format!("{what}: the elements of {}", k.name));
    }
    (m, vals)
}

/// The elements of an operation's result, which must be a stored sequence.
fn run<X: Element>(r: devseq::Result<DeviceSeq<X>>, what: &str) -> Vec<X> {
    let s = r.unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(s.is_stored(), "{what}: the result is stored");
    s.to_vec().unwrap()
}

/// Asserts that an operation's result is stored and bitwise `want`.
fn vs<X: Element + std::fmt::Debug>(r: devseq::Result<DeviceSeq<X>>, want: &[X], what: &str) {
    same_bits(&run(r, what), want, what);
}

/// `v as X` (u64 to X with Rust's `as`; to f16/bf16 through f32).
fn from_u64<X: T>(v: u64) -> X {
    if X::FLOAT {
        X::from_acc_f(v as f64)
    } else {
        X::from_bits(v)
    }
}

fn reduce_oracle<X: T>(xs: &[X], op: Op) -> X {
    X::from_acc(
        xs.iter()
            .map(|x| x.acc())
            .reduce(|a, b| X::op(op, a, b))
            .unwrap_or(X::identity(op)),
    )
}

// ---- the kinds of lazy inputs ---------------------------------------------------------------

/// `x * A + B` is the map of the kinds: `x * 3 + 1` for integers (wrapping), `x * 2 + 0.25` for
/// floats (exact in f64 for common.rs's draws, so the host's f64 arithmetic rounded once is the
/// type's own; `Gen::SumExact` draws stay small quarter steps).
fn ka<X: T>() -> X {
    X::from_acc_f(if X::FLOAT { 2.0 } else { 3.0 })
}
fn kb<X: T>() -> X {
    X::from_acc_f(if X::FLOAT { 0.25 } else { 1.0 })
}
/// `x + y * M` is the zip: `x - 3y` for integers (M wraps), `x - 2y` for floats.
fn km<X: T>() -> X {
    if X::FLOAT {
        X::from_acc_f(-2.0)
    } else {
        X::from_bits(-3i64 as u64)
    }
}
/// `x * a + b` as the host computes it: wrapping, or in f64 rounded once to `X`.
fn lin<X: T>(x: X, a: X, b: X) -> X {
    X::from_acc(X::op(Op::Add, X::op(Op::Mul, x.acc(), a.acc()), b.acc()))
}

/// Every kind of lazy sequence of `n` elements, stored parts drawn with `g`.
fn kinds<X: T>(r: &mut Rng, n: usize, g: Gen) -> Vec<Lazy<X>> {
    let d = dev();
    let (a, b, m) = (ka::<X>(), kb::<X>(), km::<X>());
    let f1 = move |x: X| lin(x, a, b);
    let small = X::FLOAT && g == Gen::SumExact;
    let mut v = Vec::new();

    v.push(lazy(
        "sequence",
        DeviceSeq::<X>::sequence(&d, n),
        Some((0..n).map(X::from_index).collect()),
        false,
    ));

    let c = X::draw(r, g);
    v.push(lazy(
        "filled",
        DeviceSeq::filled(&d, c, n),
        Some(vec![c; n]),
        small,
    ));

    let xs: Vec<X> = draw_vec(r, n, g);
    v.push(lazy(
        "map",
        upload(&xs).map(move |x| x * a + b),
        Some(xs.iter().map(|&x| f1(x)).collect()),
        small,
    ));

    let (xs, ys): (Vec<X>, Vec<X>) = (draw_vec(r, n, g), draw_vec(r, n, g));
    v.push(lazy(
        "zip_map",
        upload(&xs).zip_map(&upload(&ys), move |x, y| x + y * m),
        Some(xs.iter().zip(&ys).map(|(&x, &y)| lin(y, m, x)).collect()),
        small,
    ));

    let is: Vec<i32> = (0..n)
        .map(|_| match (X::FLOAT, g) {
            (true, Gen::SumExact) => r.below(17) as i32 - 8,
            (true, Gen::MulExact) => 1 - 2 * r.below(2) as i32,
            (false, Gen::MulExact) => r.next() as i32 | 1,
            _ => r.next() as i32,
        })
        .collect();
    let want = is
        .iter()
        .map(|&i| {
            if X::FLOAT {
                X::from_acc_f(i as f64)
            } else {
                X::from_bits(i as i64 as u64)
            }
        })
        .collect();
    v.push(lazy(
        "cast from i32",
        upload(&is).cast::<X>(),
        Some(want),
        small,
    ));

    v.push(lazy(
        "sequence.slice(3..)",
        DeviceSeq::<X>::sequence(&d, n + 3).map(|s| s.slice(3..)),
        Some((3..n + 3).map(X::from_index).collect()),
        false,
    ));

    let (xs, ys): (Vec<X>, Vec<X>) = (draw_vec(r, n + 3, g), draw_vec(r, n + 3, g));
    v.push(lazy(
        "zip_map.slice(3..)",
        upload(&xs)
            .zip_map(&upload(&ys), move |x, y| x + y * m)
            .map(|s| s.slice(3..)),
        Some((3..n + 3).map(|i| lin(ys[i], m, xs[i])).collect()),
        small,
    ));

    let xs: Vec<X> = draw_vec(r, n + 3, g);
    v.push(lazy(
        "stored.slice(3..).map",
        upload(&xs).slice(3..).map(move |x| x * a + b),
        Some(xs[3..].iter().map(|&x| f1(x)).collect()),
        small,
    ));

    let xs: Vec<X> = draw_vec(r, n, g);
    v.push(lazy(
        "map.map",
        upload(&xs)
            .map(move |x| x * a + b)
            .and_then(|s| s.map(move |x| x * a + b)),
        Some(xs.iter().map(|&x| f1(f1(x))).collect()),
        small,
    ));

    // Through an f16 intermediate, rounded to f16 as if stored. Integers below 2^24 in
    // magnitude for 64-bit types (exact in f32, as the host's `x.f() as f32` needs).
    let xs: Vec<X> = if X::FLOAT {
        draw_vec(r, n, g)
    } else {
        (0..n)
            .map(|_| X::from_bits(((r.next() as i64) >> 40) as u64))
            .collect()
    };
    let two = f16::from_f32(2.0);
    let want = xs
        .iter()
        .map(|x| X::from_acc_f((f16::from_f32(x.f() as f32).to_f32() * 2.0) as f64))
        .collect();
    v.push(lazy(
        "map to f16.map",
        upload(&xs)
            .map(|x| x.cast::<f16>())
            .and_then(|h| h.map(move |h| (h * two).cast::<X>())),
        Some(want),
        small,
    ));

    // One lazy sequence read twice by one expression.
    let xs: Vec<X> = draw_vec(r, n, g);
    let l = upload(&xs).map(move |x| x * a + b).unwrap();
    v.push(lazy(
        "l.zip_map(&l)",
        l.zip_map(&l, move |x, y| x * a + y),
        Some(xs.iter().map(|&x| lin(f1(x), a, f1(x))).collect()),
        small,
    ));

    let xs: Vec<X> = draw_vec(r, n + 1, g);
    let l = upload(&xs).map(move |x| x * a + b).unwrap();
    v.push(lazy(
        "l.slice(..n).zip_map(&l.slice(1..))",
        l.slice(..n).zip_map(&l.slice(1..), move |x, y| x + y * m),
        Some((0..n).map(|i| lin(f1(xs[i + 1]), m, f1(xs[i]))).collect()),
        small,
    ));
    v
}

/// Lazy head flags / keep flags of `n` elements (random nonzero values, not only 1).
fn flag_kinds(r: &mut Rng, n: usize) -> Vec<Lazy<u8>> {
    let d = dev();
    let mut v = Vec::new();
    let (seed, thr) = (r.next() as u32, 1 + r.below(15) as u32);
    let hash = move |i: u32| i.wrapping_mul(0x9E37_79B1).wrapping_add(seed) >> 28;
    v.push(lazy(
        "hash of sequence",
        DeviceSeq::<u32>::sequence(&d, n).and_then(|s| {
            s.map(move |i| {
                let h = (i * 0x9E37_79B1u32 + seed) >> 28u32;
                Expr::<u8>::select(h.lt(thr), (i >> 5u32).cast::<u8>() | 1u8, 0u8)
            })
        }),
        Some(
            (0..n as u32)
                .map(|i| if hash(i) < thr { (i >> 5) as u8 | 1 } else { 0 })
                .collect(),
        ),
        false,
    ));
    let p = [0.01, 0.3, 0.9][r.below(3) as usize];
    let f = flags(r, n, p);
    v.push(lazy(
        "stored & 0xF0",
        upload(&f).map(|x| x & 0xF0u8),
        Some(f.iter().map(|x| x & 0xF0).collect()),
        false,
    ));
    let xs: Vec<f32> = draw_vec(r, n + 3, Gen::Special);
    v.push(lazy(
        "(f32 < 0.5).slice(3..)",
        upload(&xs)
            .map(|x| x.lt(0.5f32).cast::<u8>())
            .map(|s| s.slice(3..)),
        Some(xs[3..].iter().map(|&x| (x < 0.5) as u8).collect()),
        false,
    ));
    v.push(lazy(
        "filled 0",
        DeviceSeq::filled(&d, 0u8, n),
        Some(vec![0; n]),
        false,
    ));
    v.push(lazy(
        "filled 3",
        DeviceSeq::filled(&d, 3u8, n),
        Some(vec![3; n]),
        false,
    ));
    v
}

/// Lazy u64 indices, `m` of them, below `len` (where `m > 0`). The first ("affine") and the
/// third ("reversed") have no repeats where `m <= len`.
fn index_kinds(r: &mut Rng, m: usize, len: usize) -> Vec<Lazy<u64>> {
    let d = dev();
    let l = len as u64;
    let md = move |x: u64| if l == 0 { x } else { x % l };
    // A prime that does not divide `len`: i -> (i * a + b) % len is one-to-one on 0..len.
    let a = [7919u64, 104_729, 1_299_709]
        .into_iter()
        .find(|&p| l == 0 || !l.is_multiple_of(p))
        .unwrap();
    let b = r.below(l);
    let mut v = vec![lazy(
        "affine",
        DeviceSeq::<u64>::sequence(&d, m).and_then(|s| s.map(move |i| (i * a + b) % l)),
        Some((0..m as u64).map(|i| md(i * a + b)).collect()),
        false,
    )];
    let ks: Vec<u64> = (0..m).map(|_| r.next()).collect();
    v.push(lazy(
        "stored % len",
        upload(&ks).map(move |k| k % l),
        Some(ks.iter().map(|&k| md(k)).collect()),
        false,
    ));
    let last = l.wrapping_sub(1);
    v.push(lazy(
        "reversed, slice(3..) of a map",
        DeviceSeq::<u64>::sequence(&d, m + 3)
            .and_then(|s| s.map(move |i| last - (i - 3u64) % l))
            .map(|s| s.slice(3..)),
        Some((0..m as u64).map(|j| last.wrapping_sub(md(j))).collect()),
        false,
    ));
    let c = r.below(l);
    v.push(lazy(
        "filled",
        DeviceSeq::filled(&d, c, m),
        Some(vec![c; m]),
        false,
    ));
    let ks: Vec<u64> = (0..m + 5).map(|_| r.next()).collect();
    v.push(lazy(
        "stored.slice(5..).map",
        upload(&ks).slice(5..).map(move |k| (k >> 7u32) % l),
        Some(ks[5..].iter().map(|&k| md(k >> 7)).collect()),
        false,
    ));
    v
}

/// The indices as u32: a cast of the lazy sequence (lazy too).
fn to_u32(k: &Lazy<u64>) -> Lazy<u32> {
    lazy(
        format!("({}) as u32", k.name),
        k.seq.cast::<u32>(),
        k.want
            .as_ref()
            .map(|w| w.iter().map(|&x| x as u32).collect()),
        false,
    )
}

/// Lazy bases for `scatter` and `scatter_combine`, `len` elements.
fn base_kinds<X: T>(r: &mut Rng, len: usize, g: Gen) -> Vec<Lazy<X>> {
    let (a, b) = (ka::<X>(), kb::<X>());
    let small = X::FLOAT && g == Gen::SumExact;
    let c = X::draw(r, g);
    let xs: Vec<X> = draw_vec(r, len, g);
    vec![
        lazy(
            "filled base",
            DeviceSeq::filled(&dev(), c, len),
            Some(vec![c; len]),
            small,
        ),
        lazy(
            "sequence.slice(3..) base",
            DeviceSeq::<X>::sequence(&dev(), len + 3).map(|s| s.slice(3..)),
            Some((3..len + 3).map(X::from_index).collect()),
            // Whole numbers below 2^17: sums with small quarter steps stay exact.
            X::FLOAT && len < 1 << 17,
        ),
        lazy(
            "map base",
            upload(&xs).map(move |x| x * a + b),
            Some(xs.iter().map(|&x| lin(x, a, b)).collect()),
            small,
        ),
    ]
}

// ---- reductions and scans -------------------------------------------------------------------

fn reductions<X: T>() {
    let mut r = Rng::new(std::any::type_name::<X>());
    for (oi, op) in lazy_ops::<X>().into_iter().enumerate() {
        let g = gen_of(op);
        for (si, n) in lens().into_iter().enumerate() {
            for (ki, k) in kinds::<X>(&mut r, n, g).into_iter().enumerate() {
                if !at(n, ki + oi + si, 5) {
                    continue;
                }
                let what = format!("{op:?} of {} n={n}", k.name);
                let (m, vals) = materialize(&k, &what);
                let ex = exact(&[&k], op);

                let got = k.seq.reduce(op).unwrap();
                let red = m.reduce(op).unwrap();
                same_bits(&[got], &[red], &format!("reduce {what}: lazy vs copy"));
                if ex {
                    assert_oracle_op(
                        &[got],
                        &[reduce_oracle(&vals, op)],
                        op,
                        &format!("reduce {what}"),
                    );
                }
                let s = run(k.seq.reduce_to_seq(op), &format!("reduce_to_seq {what}"));
                same_bits(&s, &[got], &format!("reduce_to_seq {what}"));

                let init = X::draw(&mut r, g);
                let got = k.seq.fold(init, op).unwrap();
                same_bits(
                    &[got],
                    &[m.fold(init, op).unwrap()],
                    &format!("fold {what}: lazy vs copy"),
                );
                if ex {
                    let want = X::from_acc(X::op(op, init.acc(), reduce_oracle(&vals, op).acc()));
                    assert_oracle_op(&[got], &[want], op, &format!("fold {what}"));
                }

                let w = format!("inclusive_scan {what}");
                let want = run(m.inclusive_scan(op), &w);
                vs(
                    k.seq.inclusive_scan(op),
                    &want,
                    &format!("{w}: lazy vs copy"),
                );
                if ex {
                    assert_oracle_op(&want, &inclusive_oracle(&vals, op), op, &w);
                }
                let w = format!("exclusive_scan {what}");
                let want = run(m.exclusive_scan(init, op), &w);
                vs(
                    k.seq.exclusive_scan(init, op),
                    &want,
                    &format!("{w}: lazy vs copy"),
                );
                if ex {
                    assert_oracle_op(&want, &exclusive_oracle(&vals, init, op), op, &w);
                }
            }
        }
    }
}
for_lazy_types!(reduce_and_scan, reductions);

// ---- segmented scans and reductions: values and flags lazy ---------------------------------

fn segments<X: T>() {
    let mut r = Rng::new(std::any::type_name::<X>());
    for (oi, op) in lazy_ops::<X>().into_iter().enumerate() {
        let g = gen_of(op);
        for (si, n) in lens().into_iter().enumerate() {
            let fks = flag_kinds(&mut r, n);
            let fms: Vec<(DeviceSeq<u8>, Vec<u8>)> = fks
                .iter()
                .map(|f| materialize(f, &format!("flags n={n}")))
                .collect();
            for (ki, k) in kinds::<X>(&mut r, n, g).iter().enumerate() {
                if !at(n, ki + oi + si, 10) {
                    continue;
                }
                // Lazy values with lazy flags always; with the other copied, in turn.
                let mixed = (ki + oi) % 2 == 0;
                let j = (ki + oi) % fks.len();
                let (fk, (fm, fv)) = (&fks[j], &fms[j]);
                let what = format!("{op:?} of {} with flags {} n={n}", k.name, fk.name);
                let (m, vals) = materialize(k, &what);
                let ex = exact(&[k], op);

                let w = format!("segmented_inclusive_scan {what}");
                let want = run(m.segmented_inclusive_scan(fm, op), &w);
                vs(
                    k.seq.segmented_inclusive_scan(&fk.seq, op),
                    &want,
                    &format!("{w}: lazy, lazy"),
                );
                if mixed {
                    vs(
                        k.seq.segmented_inclusive_scan(fm, op),
                        &want,
                        &format!("{w}: lazy, copy"),
                    );
                } else {
                    vs(
                        m.segmented_inclusive_scan(&fk.seq, op),
                        &want,
                        &format!("{w}: copy, lazy"),
                    );
                }
                if ex {
                    assert_oracle_op(&want, &seg_incl(&vals, fv, op), op, &w);
                }

                let init = X::draw(&mut r, g);
                let w = format!("segmented_exclusive_scan {what}");
                let want = run(m.segmented_exclusive_scan(fm, init, op), &w);
                vs(
                    k.seq.segmented_exclusive_scan(&fk.seq, init, op),
                    &want,
                    &format!("{w}: lazy, lazy"),
                );
                if mixed {
                    vs(
                        k.seq.segmented_exclusive_scan(fm, init, op),
                        &want,
                        &format!("{w}: lazy, copy"),
                    );
                } else {
                    vs(
                        m.segmented_exclusive_scan(&fk.seq, init, op),
                        &want,
                        &format!("{w}: copy, lazy"),
                    );
                }
                if ex {
                    assert_oracle_op(&want, &seg_excl(&vals, fv, init, op), op, &w);
                }

                let w = format!("segmented_reduce {what}");
                let want = run(m.segmented_reduce(fm, op), &w);
                vs(
                    k.seq.segmented_reduce(&fk.seq, op),
                    &want,
                    &format!("{w}: lazy, lazy"),
                );
                if mixed {
                    vs(
                        k.seq.segmented_reduce(fm, op),
                        &want,
                        &format!("{w}: lazy, copy"),
                    );
                } else {
                    vs(
                        m.segmented_reduce(&fk.seq, op),
                        &want,
                        &format!("{w}: copy, lazy"),
                    );
                }
                if ex {
                    assert_oracle_op(&want, &seg_reduce(&vals, fv, op), op, &w);
                }
            }
        }
    }
}
for_lazy_types!(segmented, segments);

// ---- head_flags and compact: values and flags lazy -----------------------------------------

fn compaction<X: T>() {
    let mut r = Rng::new(std::any::type_name::<X>());
    for (si, n) in lens().into_iter().enumerate() {
        let fks = flag_kinds(&mut r, n);
        let mut ks = kinds::<X>(&mut r, n, Gen::Special);
        // Runs of equal elements: (i / 3) as X (longer runs where f16/bf16 round).
        ks.push(lazy(
            "(i / 3) as X",
            DeviceSeq::<u32>::sequence(&dev(), n).and_then(|s| s.map(|i| (i / 3u32).cast::<X>())),
            Some((0..n).map(|i| from_u64::<X>((i / 3) as u64)).collect()),
            false,
        ));
        for (ki, k) in ks.iter().enumerate() {
            if !at(n, ki + si, 2) {
                continue;
            }
            let fk = &fks[ki % fks.len()];
            let what = format!("{} with flags {} n={n}", k.name, fk.name);
            let (m, vals) = materialize(k, &what);
            let (fm, fv) = materialize(fk, &what);

            let w = format!("head_flags of {what}");
            let of_copy = m.head_flags().unwrap();
            assert!(!of_copy.is_stored(), "{w}: of a stored sequence, lazy");
            let want = of_copy.to_vec().unwrap();
            vs(k.seq.head_flags(), &want, &format!("{w}: lazy vs copy"));
            let oracle: Vec<bool> = (0..n)
                .map(|i| i == 0 || vals[i].to_bits() != vals[i - 1].to_bits())
                .collect();
            assert_eq!(want, oracle, "{w}");

            let w = format!("compact {what}");
            let want = run(m.compact(&fm), &w);
            vs(k.seq.compact(&fk.seq), &want, &format!("{w}: lazy, lazy"));
            vs(k.seq.compact(&fm), &want, &format!("{w}: lazy, copy"));
            vs(m.compact(&fk.seq), &want, &format!("{w}: copy, lazy"));
            let oracle: Vec<X> = vals
                .iter()
                .zip(&fv)
                .filter(|(_, f)| **f != 0)
                .map(|(x, _)| *x)
                .collect();
            same_bits(&want, &oracle, &w);
        }
    }
}
for_lazy_types!(head_flags_and_compact, compaction);

#[test]
fn nonzero_indices_of_lazy_flags() {
    let mut r = Rng::new("nonzero_indices");
    for n in lens() {
        for fk in flag_kinds(&mut r, n) {
            let what = format!("nonzero_indices of {} n={n}", fk.name);
            let (fm, fv) = materialize(&fk, &what);
            let want: Vec<u64> = (0..n as u64).filter(|&i| fv[i as usize] != 0).collect();
            vs(
                fk.seq.nonzero_indices::<u64>(),
                &want,
                &format!("{what}: lazy"),
            );
            vs(fm.nonzero_indices::<u64>(), &want, &format!("{what}: copy"));
            let w32: Vec<u32> = want.iter().map(|&i| i as u32).collect();
            vs(
                fk.seq.nonzero_indices::<u32>(),
                &w32,
                &format!("{what}: lazy, u32"),
            );
            vs(
                fm.nonzero_indices::<u32>(),
                &w32,
                &format!("{what}: copy, u32"),
            );
        }
    }
}

// ---- gather and scatter: source, indices and base lazy -------------------------------------

fn check_gather<X: T, I: Index + T>(
    src: &Lazy<X>,
    sm: &DeviceSeq<X>,
    sv: &[X],
    ix: &Lazy<I>,
    what: &str,
) {
    let what = format!("gather {what} at {}", ix.name);
    let (im, iv) = materialize(ix, &what);
    // A gather is lazy: stored by `copy`, and read lazily by the others' consumer (to_vec).
    let g = |s: &DeviceSeq<X>, i: &DeviceSeq<I>| s.gather(i).and_then(|g| g.copy());
    let want = run(g(sm, &im), &what);
    vs(g(&src.seq, &ix.seq), &want, &format!("{what}: lazy, lazy"));
    vs(g(&src.seq, &im), &want, &format!("{what}: lazy, copy"));
    vs(g(sm, &ix.seq), &want, &format!("{what}: copy, lazy"));
    let lazy = sm.gather(&im).unwrap();
    same_bits(
        &lazy.to_vec().unwrap(),
        &want,
        &format!("{what}: read lazily"),
    );
    let oracle: Vec<X> = iv.iter().map(|i| sv[i.to_bits() as usize]).collect();
    same_bits(&want, &oracle, &what);
}

/// `scatter` where each slot receives one value, or where every value for a slot is the same
/// (either way the result is fixed).
fn check_scatter<X: T, I: Index + T>(vals: &Lazy<X>, ix: &Lazy<I>, base: &Lazy<X>, what: &str) {
    let what = format!(
        "scatter {what}: {} at {} into {}",
        vals.name, ix.name, base.name
    );
    let (vm, vv) = materialize(vals, &what);
    let (im, iv) = materialize(ix, &what);
    let (bm, bv) = materialize(base, &what);
    let want = run(vm.scatter(&im, &bm), &what);
    vs(
        vals.seq.scatter(&ix.seq, &base.seq),
        &want,
        &format!("{what}: all lazy"),
    );
    vs(
        vm.scatter(&ix.seq, &base.seq),
        &want,
        &format!("{what}: values copied"),
    );
    vs(
        vals.seq.scatter(&im, &base.seq),
        &want,
        &format!("{what}: indices copied"),
    );
    vs(
        vals.seq.scatter(&ix.seq, &bm),
        &want,
        &format!("{what}: base copied"),
    );
    let mut oracle = bv.clone();
    for (x, i) in vv.iter().zip(&iv) {
        oracle[i.to_bits() as usize] = *x;
    }
    same_bits(&want, &oracle, &what);
}

fn gathers_and_scatters<X: T>() {
    let mut r = Rng::new(std::any::type_name::<X>());
    for (si, n) in lens().into_iter().enumerate() {
        let ks = kinds::<X>(&mut r, n, Gen::Special);
        // More indices than elements (repeats), none where there are no elements.
        let m_idx = if n == 0 { 0 } else { n + n / 3 };
        let iks = index_kinds(&mut r, m_idx, n);
        for (ki, k) in ks.iter().enumerate() {
            if !at(n, ki + si, 4) {
                continue;
            }
            let what = format!("of {} n={n}", k.name);
            let (m, vals) = materialize(k, &what);
            let ik = &iks[ki % iks.len()];
            check_gather(k, &m, &vals, ik, &what);
            check_gather(k, &m, &vals, &to_u32(ik), &what);

            // One value per slot: indices without repeats into a lazy base of n + 3.
            let len = n + 3;
            let bases = base_kinds::<X>(&mut r, len, Gen::Special);
            let base = &bases[ki % bases.len()];
            let sik = index_kinds(&mut r, n, len).swap_remove(if ki % 2 == 0 { 0 } else { 2 });
            if ki % 4 < 2 {
                check_scatter(k, &sik, base, &what);
            } else {
                check_scatter(k, &to_u32(&sik), base, &what);
            }
        }
        // Repeated indices with values that depend on the slot only: the values are a map of
        // the lazy indices (one lazy sequence read by two arguments).
        let slots = n / 4 + 1;
        let ik = index_kinds(&mut r, n, slots).swap_remove(1);
        let w: Vec<X> = ik
            .want
            .as_ref()
            .unwrap()
            .iter()
            .map(|&k| from_u64::<X>(k * 3 + 1))
            .collect();
        let vals = lazy(
            "(idx * 3 + 1) as X",
            ik.seq.map(|k| (k * 3u64 + 1u64).cast::<X>()),
            Some(w.clone()),
            false,
        );
        let bases = base_kinds::<X>(&mut r, slots + 3, Gen::Special);
        check_scatter(&vals, &ik, &bases[n % 3], &format!("repeats n={n}"));
        let ik32 = to_u32(&ik);
        let vals = lazy(
            "(idx as u32 * 3 + 1) as X",
            ik32.seq.map(|k| (k * 3u32 + 1u32).cast::<X>()),
            Some(w),
            false,
        );
        check_scatter(&vals, &ik32, &bases[(n + 1) % 3], &format!("repeats n={n}"));
    }
}
for_lazy_types!(gather_scatter, gathers_and_scatters);

// ---- scatter_combine: values, indices and base lazy ----------------------------------------

fn check_combine<X: T, I: Index + T>(
    vals: &Lazy<X>,
    ix: &Lazy<I>,
    base: &Lazy<X>,
    op: Op,
    turn: usize,
    what: &str,
) {
    let what = format!(
        "scatter_combine {op:?} {what}: {} at {} into {}",
        vals.name, ix.name, base.name
    );
    let (vm, vv) = materialize(vals, &what);
    let (im, iv) = materialize(ix, &what);
    let (bm, bv) = materialize(base, &what);
    let want = run(vm.scatter_combine(&im, &bm, op), &what);
    vs(
        vals.seq.scatter_combine(&ix.seq, &base.seq, op),
        &want,
        &format!("{what}: all lazy"),
    );
    // And one of the three with one input copied, in turn.
    let (v, i, b, how) = match turn % 3 {
        0 => (&vm, &ix.seq, &base.seq, "values copied"),
        1 => (&vals.seq, &im, &base.seq, "indices copied"),
        _ => (&vals.seq, &ix.seq, &bm, "base copied"),
    };
    vs(
        v.scatter_combine(i, b, op),
        &want,
        &format!("{what}: {how}"),
    );
    if exact(&[vals, base], op) {
        let idx: Vec<u32> = iv.iter().map(|i| i.to_bits() as u32).collect();
        assert_oracle_op(&want, &combine_oracle(&vv, &idx, &bv, op), op, &what);
    }
}

fn combines<X: T>() {
    let mut r = Rng::new(std::any::type_name::<X>());
    for (oi, op) in lazy_ops::<X>().into_iter().enumerate() {
        let g = gen_of(op);
        for (si, n) in lens().into_iter().enumerate() {
            for (ki, k) in kinds::<X>(&mut r, n, g).iter().enumerate() {
                let j = ki + oi;
                if !at(n, j + si, 6) {
                    continue;
                }
                let slots = if j % 2 == 0 { 16 } else { n / 8 + 1 };
                let iks = index_kinds(&mut r, n, slots);
                let ik = &iks[j % iks.len()];
                let bases = base_kinds::<X>(&mut r, slots + 3, g);
                let base = &bases[j % bases.len()];
                let what = format!("n={n} slots={slots}");
                if j % 3 == 0 {
                    check_combine(k, &to_u32(ik), base, op, j + si, &what);
                } else {
                    check_combine(k, ik, base, op, j + si, &what);
                }
            }
        }
    }
}
for_lazy_types!(scatter_combine, combines);

// ---- sort, sort_pairs, argsort: keys and values lazy ---------------------------------------

fn sorts<X: T>() {
    let mut r = Rng::new(std::any::type_name::<X>());
    for (si, n) in lens().into_iter().enumerate() {
        let ks = kinds::<X>(&mut r, n, Gen::Special);
        for (ki, k) in ks.iter().enumerate() {
            if !at(n, ki + si, 3) {
                continue;
            }
            let what = format!("{} n={n}", k.name);
            let (m, vals) = materialize(k, &what);
            let (order, sorted) = stable_order(&vals);

            let w = format!("sort {what}");
            vs(m.sort(), &sorted, &format!("{w}: copy"));
            vs(k.seq.sort(), &sorted, &format!("{w}: lazy"));

            // Values: positions + 1 as a lazy slice of a sequence.
            let pv = lazy(
                "sequence(n + 1).slice(1..)",
                DeviceSeq::<u32>::sequence(&dev(), n + 1).map(|s| s.slice(1..)),
                Some((1..=n as u32).collect()),
                false,
            );
            let (pm, _) = materialize(&pv, &what);
            let want_v: Vec<u32> = order.iter().map(|&i| i + 1).collect();
            for (keys, values, how) in [
                (&k.seq, &pv.seq, "lazy, lazy"),
                (&k.seq, &pm, "lazy, copy"),
                (&m, &pv.seq, "copy, lazy"),
                (&m, &pm, "copy, copy"),
            ] {
                let w = format!("sort_pairs {what} with {}: {how}", pv.name);
                let (sk, sv) = keys
                    .sort_pairs(values)
                    .unwrap_or_else(|e| panic!("{w}: {e}"));
                vs(Ok(sk), &sorted, &format!("{w}: keys"));
                vs(Ok(sv), &want_v, &format!("{w}: values"));
            }
            // Values: another lazy kind of X.
            let other = &ks[(ki + 1) % ks.len()];
            let (om, ov) = materialize(other, &what);
            let want_o: Vec<X> = order.iter().map(|&i| ov[i as usize]).collect();
            for (keys, values, how) in [(&k.seq, &other.seq, "lazy, lazy"), (&m, &om, "copy, copy")]
            {
                let w = format!("sort_pairs {what} with {}: {how}", other.name);
                let (sk, sv) = keys
                    .sort_pairs(values)
                    .unwrap_or_else(|e| panic!("{w}: {e}"));
                vs(Ok(sk), &sorted, &format!("{w}: keys"));
                vs(Ok(sv), &want_o, &format!("{w}: values"));
            }

            vs(
                k.seq.argsort::<u32>(),
                &order,
                &format!("argsort u32 {what}: lazy"),
            );
            vs(
                m.argsort::<u32>(),
                &order,
                &format!("argsort u32 {what}: copy"),
            );
            let w64: Vec<u64> = order.iter().map(|&i| u64::from(i)).collect();
            vs(
                k.seq.argsort::<u64>(),
                &w64,
                &format!("argsort u64 {what}: lazy"),
            );
            vs(
                m.argsort::<u64>(),
                &w64,
                &format!("argsort u64 {what}: copy"),
            );
        }
    }
}
for_lazy_types!(sort, sorts);

// ---- histogram ----------------------------------------------------------------------------

fn histograms<X: T>() {
    let mut r = Rng::new(std::any::type_name::<X>());
    for (si, n) in lens().into_iter().enumerate() {
        for (ki, k) in kinds::<X>(&mut r, n, Gen::Special).into_iter().enumerate() {
            if !at(n, ki + si, 2) {
                continue;
            }
            let what = format!("{} n={n}", k.name);
            let (m, vals) = materialize(&k, &what);
            let ranges = [
                (X::from_acc_f(-3.0), X::from_acc_f(5.0)),
                (X::from_acc_f(-1000.0), X::from_acc_f(60_000.0)),
                (X::from_bits(0), X::from_bits(u64::MAX >> 1)),
            ];
            for (lo, hi) in ranges {
                if !(lo.f() < hi.f()) {
                    continue;
                }
                for bins in [1usize, 7, 300] {
                    let w = format!("histogram {bins} bins [{lo:?}, {hi:?}) of {what}");
                    let want = run(m.histogram(bins, lo, hi), &w);
                    vs(
                        k.seq.histogram(bins, lo, hi),
                        &want,
                        &format!("{w}: lazy vs copy"),
                    );
                    let mut oracle = vec![0u64; bins];
                    for &x in &vals {
                        if let Some(b) = bin(x, bins, lo, hi) {
                            oracle[b] += 1;
                        }
                    }
                    assert_eq!(want, oracle, "{w}");
                }
            }
        }
    }
}
for_lazy_types!(histogram, histograms);

// ---- chains through narrow types -------------------------------------------------------------

/// Every consumer once on `k` (a chain, say): against the copy, and against the oracles where
/// they are exact.
fn battery<X: T>(k: &Lazy<X>, r: &mut Rng) {
    let n = k.seq.len();
    let what = format!("{} (n={n})", k.name);
    let (m, vals) = materialize(k, &what);
    let ops: Vec<Op> = if X::FLOAT {
        vec![Op::Add, Op::Min, Op::Max]
    } else {
        vec![Op::Add, Op::Mul, Op::Max, Op::BitXor]
    };
    for op in ops {
        let ex = exact(&[k], op);
        let got = k.seq.reduce(op).unwrap();
        same_bits(
            &[got],
            &[m.reduce(op).unwrap()],
            &format!("reduce {op:?} of {what}: lazy vs copy"),
        );
        if ex {
            assert_oracle_op(
                &[got],
                &[reduce_oracle(&vals, op)],
                op,
                &format!("reduce {op:?} of {what}"),
            );
        }
        let w = format!("inclusive_scan {op:?} of {what}");
        let want = run(m.inclusive_scan(op), &w);
        vs(
            k.seq.inclusive_scan(op),
            &want,
            &format!("{w}: lazy vs copy"),
        );
        if ex {
            assert_oracle_op(&want, &inclusive_oracle(&vals, op), op, &w);
        }
        let init = X::from_acc_f(1.0);
        let w = format!("exclusive_scan {op:?} of {what}");
        let want = run(m.exclusive_scan(init, op), &w);
        vs(
            k.seq.exclusive_scan(init, op),
            &want,
            &format!("{w}: lazy vs copy"),
        );
        if ex {
            assert_oracle_op(&want, &exclusive_oracle(&vals, init, op), op, &w);
        }
    }

    let (w32, sorted) = stable_order(&vals);
    vs(k.seq.sort(), &sorted, &format!("sort of {what}: lazy"));
    vs(m.sort(), &sorted, &format!("sort of {what}: copy"));
    vs(k.seq.argsort::<u32>(), &w32, &format!("argsort of {what}"));

    let (lo, hi) = (X::from_acc_f(-100.0), X::from_acc_f(3000.0));
    let w = format!("histogram of {what}");
    let want = run(m.histogram(16, lo, hi), &w);
    vs(
        k.seq.histogram(16, lo, hi),
        &want,
        &format!("{w}: lazy vs copy"),
    );
    let mut oracle = vec![0u64; 16];
    for &x in &vals {
        if let Some(b) = bin(x, 16, lo, hi) {
            oracle[b] += 1;
        }
    }
    assert_eq!(want, oracle, "{w}");

    let w = format!("head_flags of {what}");
    let want = m.head_flags().unwrap().to_vec().unwrap();
    vs(k.seq.head_flags(), &want, &format!("{w}: lazy vs copy"));
    let oracle: Vec<bool> = (0..n)
        .map(|i| i == 0 || vals[i].to_bits() != vals[i - 1].to_bits())
        .collect();
    assert_eq!(want, oracle, "{w}");

    let fk = flag_kinds(r, n).swap_remove(0);
    let (fm, fv) = materialize(&fk, &what);
    let w = format!("segmented_reduce Max of {what} with {}", fk.name);
    let want = run(m.segmented_reduce(&fm, Op::Max), &w);
    vs(
        k.seq.segmented_reduce(&fk.seq, Op::Max),
        &want,
        &format!("{w}: lazy vs copy"),
    );
    assert_oracle_op(&want, &seg_reduce(&vals, &fv, Op::Max), Op::Max, &w);
    let w = format!("compact of {what} with {}", fk.name);
    let want = run(m.compact(&fm), &w);
    vs(k.seq.compact(&fk.seq), &want, &format!("{w}: lazy vs copy"));
    let oracle: Vec<X> = vals
        .iter()
        .zip(&fv)
        .filter(|(_, f)| **f != 0)
        .map(|(x, _)| *x)
        .collect();
    same_bits(&want, &oracle, &w);

    if n > 0 {
        let ik = index_kinds(r, n, n).swap_remove(2);
        check_gather(k, &m, &vals, &ik, &what);
    }
    let ik = index_kinds(r, n, 97).swap_remove(0);
    let base = lazy(
        "filled base",
        DeviceSeq::filled(&dev(), X::from_acc_f(-1.0), 97),
        Some(vec![X::from_acc_f(-1.0); 97]),
        true,
    );
    check_combine(k, &ik, &base, Op::Max, 0, &what);
}

/// Each map's result is rounded to its type as if it were stored, before the next map reads
/// it: `(x + 1) - 2048` in f16 is 0 for x = 2048 (2049 rounds to 2048), where an f32
/// intermediate would give 1; likewise for bf16 at 256. Against the host, against the chain
/// with its first step stored, and through every consumer.
#[test]
fn half_chains_round_each_step() {
    let mut r = Rng::new("half chains");
    let n = 10_007;

    let mut xs: Vec<f16> = [
        2048.0f32, 2049.0, 1.0, -2048.0, 0.5, 1000.5, 65504.0, -0.0, 6e-8,
    ]
    .map(f16::from_f32)
    .to_vec();
    xs.extend(draw_vec::<f16>(&mut r, n, Gen::Special));
    let (one, big) = (f16::from_f32(1.0), f16::from_f32(2048.0));
    let step = upload(&xs).map(move |x| x + one).unwrap();
    let chain = step.map(move |y| y - big).unwrap();
    let want: Vec<f16> = xs
        .iter()
        .map(|x| f16::from_f32(f16::from_f32(x.to_f32() + 1.0).to_f32() - 2048.0))
        .collect();
    assert_eq!(want[0].to_f32(), 0.0);
    let stepwise = step.copy().unwrap().map(move |y| y - big).unwrap();
    same_bits(
        &chain.to_vec().unwrap(),
        &stepwise.to_vec().unwrap(),
        "f16 chain vs its first step stored",
    );
    let k = lazy("f16 (x + 1) - 2048", Ok(chain), Some(want), false);
    battery(&k, &mut r);

    let mut xs: Vec<bf16> = [256.0f32, 257.0, 1.0, -256.0, 0.5, 3.0e38, -0.0, 1e-40]
        .map(bf16::from_f32)
        .to_vec();
    xs.extend(draw_vec::<bf16>(&mut r, n, Gen::Special));
    let (one, big) = (bf16::from_f32(1.0), bf16::from_f32(256.0));
    let step = upload(&xs).map(move |x| x + one).unwrap();
    let chain = step.map(move |y| y - big).unwrap();
    let want: Vec<bf16> = xs
        .iter()
        .map(|x| bf16::from_f32(bf16::from_f32(x.to_f32() + 1.0).to_f32() - 256.0))
        .collect();
    assert_eq!(want[0].to_f32(), 0.0);
    let stepwise = step.copy().unwrap().map(move |y| y - big).unwrap();
    same_bits(
        &chain.to_vec().unwrap(),
        &stepwise.to_vec().unwrap(),
        "bf16 chain vs its first step stored",
    );
    let k = lazy("bf16 (x + 1) - 256", Ok(chain), Some(want), false);
    battery(&k, &mut r);

    // f32 -> f16 -> f32: the f16 step saturates to inf above 65519 and loses bits.
    let mut xs: Vec<f32> = vec![21839.0, 21840.0, 2049.0, 0.1, 1e-8, -1e-8, 683.1];
    xs.extend(draw_vec::<f32>(&mut r, n, Gen::Special));
    let step = upload(&xs).map(|x| (x * 3.0f32).cast::<f16>()).unwrap();
    let chain = step.map(|h| h.cast::<f32>() + 0.1f32).unwrap();
    let want: Vec<f32> = xs
        .iter()
        .map(|&x| f16::from_f32(x * 3.0).to_f32() + 0.1)
        .collect();
    assert_eq!(want[1], f32::INFINITY);
    let stepwise = step
        .copy()
        .unwrap()
        .map(|h| h.cast::<f32>() + 0.1f32)
        .unwrap();
    same_bits(
        &chain.to_vec().unwrap(),
        &stepwise.to_vec().unwrap(),
        "f32 -> f16 -> f32 chain vs its first step stored",
    );
    let k = lazy("f32 -> f16 -> f32", Ok(chain), Some(want), false);
    battery(&k, &mut r);

    // f64 -> bf16 -> f64.
    let mut xs: Vec<f64> = vec![1.0 / 3.0, 1e300, -1e-300, 255.5];
    xs.extend(draw_vec::<f64>(&mut r, n, Gen::Special));
    let step = upload(&xs).map(|x| (x * 1.1f64).cast::<bf16>()).unwrap();
    let chain = step.map(|b| b.cast::<f64>() * 3.0f64).unwrap();
    let want: Vec<f64> = xs
        .iter()
        .map(|&x| bf16::from_f32((x * 1.1) as f32).to_f64() * 3.0)
        .collect();
    let stepwise = step
        .copy()
        .unwrap()
        .map(|b| b.cast::<f64>() * 3.0f64)
        .unwrap();
    same_bits(
        &chain.to_vec().unwrap(),
        &stepwise.to_vec().unwrap(),
        "f64 -> bf16 -> f64 chain vs its first step stored",
    );
    let k = lazy("f64 -> bf16 -> f64", Ok(chain), Some(want), false);
    battery(&k, &mut r);

    // A map whose f16 result overflows when stored, squared again.
    let xs: Vec<f16> = (0..n)
        .map(|i| f16::from_f32((i % 600) as f32 - 300.0))
        .collect();
    let chain = upload(&xs)
        .map(|x| x * x)
        .and_then(|s| s.map(|y| y * f16::from_f32(0.5)))
        .unwrap();
    let want: Vec<f16> = xs
        .iter()
        .map(|x| f16::from_f32(f16::from_f32(x.to_f32() * x.to_f32()).to_f32() * 0.5))
        .collect();
    let k = lazy("f16 (x * x) * 0.5", Ok(chain), Some(want), false);
    battery(&k, &mut r);
}

/// Integer chains wrap at each map's type: `x + 200` in u8, then widened, is below 256.
#[test]
fn integer_chains_wrap_each_step() {
    let mut r = Rng::new("integer chains");
    let n = 10_007;

    let xs: Vec<u8> = (0..n)
        .map(|i| if i < 256 { i as u8 } else { r.next() as u8 })
        .collect();
    let chain = upload(&xs)
        .map(|x| x + 200u8)
        .and_then(|s| s.map(|y| y.cast::<i16>() - 100i16))
        .unwrap();
    let want: Vec<i16> = xs
        .iter()
        .map(|x| x.wrapping_add(200) as i16 - 100)
        .collect();
    assert_eq!(want[100], 300 - 256 - 100);
    battery(
        &lazy("u8 x + 200 -> i16 - 100", Ok(chain), Some(want), false),
        &mut r,
    );

    let xs: Vec<i32> = draw_vec(&mut r, n, Gen::Any);
    let chain = upload(&xs)
        .map(|x| x * 3 + 1)
        .and_then(|s| s.cast::<u8>())
        .and_then(|s| s.map(|b| b.cast::<i64>() * 1000 - 7))
        .unwrap();
    let want: Vec<i64> = xs
        .iter()
        .map(|x| (x.wrapping_mul(3).wrapping_add(1) as u8) as i64 * 1000 - 7)
        .collect();
    battery(
        &lazy("i32 -> u8 -> i64", Ok(chain), Some(want), false),
        &mut r,
    );

    let xs: Vec<u16> = draw_vec(&mut r, n, Gen::Any);
    let chain = upload(&xs)
        .map(|x| x << 12u32)
        .and_then(|s| s.map(|y| y >> 12u32))
        .unwrap();
    let want: Vec<u16> = xs.iter().map(|x| x & 0xF).collect();
    battery(
        &lazy("u16 (x << 12) >> 12", Ok(chain), Some(want), false),
        &mut r,
    );

    let xs: Vec<i8> = draw_vec(&mut r, n, Gen::Any);
    let chain = upload(&xs)
        .map(|x| x * x)
        .and_then(|s| s.map(|y| y.cast::<i32>() * 1000))
        .unwrap();
    let want: Vec<i32> = xs
        .iter()
        .map(|x| x.wrapping_mul(*x) as i32 * 1000)
        .collect();
    battery(
        &lazy("i8 x * x -> i32 * 1000", Ok(chain), Some(want), false),
        &mut r,
    );

    // A sequence of u64 cut to u8 and back: wraps at 256.
    let chain = DeviceSeq::<u64>::sequence(&dev(), 70_001)
        .and_then(|s| s.cast::<u8>())
        .and_then(|s| s.map(|b| b.cast::<u64>() + 1u64))
        .unwrap();
    let want: Vec<u64> = (0..70_001u64).map(|i| (i as u8) as u64 + 1).collect();
    battery(
        &lazy(
            "sequence u64 -> u8 -> u64 + 1",
            Ok(chain),
            Some(want),
            false,
        ),
        &mut r,
    );
}

// ---- stored or lazy -------------------------------------------------------------------------

#[test]
fn stored_or_lazy() {
    let d = dev();
    for n in [0usize, 1, 100] {
        let xs: Vec<i32> = (0..n as i32).collect();
        let st = upload(&xs);
        assert!(st.is_stored(), "upload");
        let st3 = upload(&(0..n as i32 + 3).collect::<Vec<_>>());
        assert!(st3.slice(3..).is_stored(), "slice of stored");
        assert!(
            st3.slice(1..).slice(2..).is_stored(),
            "slice of slice of stored"
        );
        let small: Vec<u8> = (0..n).map(|i| i as u8).collect();
        let seq = DeviceSeq::<i32>::sequence(&d, n).unwrap();
        let lazies: Vec<(&str, DeviceSeq<i32>)> = vec![
            ("sequence", seq.clone()),
            ("clone of a lazy one", seq.clone().clone()),
            ("filled", DeviceSeq::filled(&d, 7, n).unwrap()),
            ("map", st.map(|x| x * 2).unwrap()),
            ("zip_map", st.zip_map(&seq, |x, y| x - y).unwrap()),
            ("cast", upload(&small).cast::<i32>().unwrap()),
            (
                "slice of lazy",
                DeviceSeq::<i32>::sequence(&d, n + 3).unwrap().slice(3..),
            ),
            (
                "map of a slice of stored",
                st3.slice(3..).map(|x| x + 1).unwrap(),
            ),
            (
                "map of a map",
                st.map(|x| x + 1).unwrap().map(|x| x * 5).unwrap(),
            ),
        ];
        let flags = DeviceSeq::<i32>::sequence(&d, n)
            .unwrap()
            .map(|i| (i % 3).eq(0))
            .unwrap();
        let idx = DeviceSeq::<u32>::sequence(&d, n)
            .unwrap()
            .map(|i| i / 2u32)
            .unwrap();
        assert!(!flags.is_stored() && !idx.is_stored());
        for (name, l) in lazies {
            let what = format!("{name} n={n}");
            assert!(!l.is_stored(), "{what}: lazy");
            assert!(format!("{l:?}").contains("lazy"), "{what}: {l:?}");
            assert!(!l.slice(..).is_stored(), "{what}: a slice of it is lazy");
            let c = l.copy().unwrap();
            assert!(c.is_stored(), "{what}: copy");
            assert!(format!("{c:?}").contains("stored"), "{what}: {c:?}");
            assert!(c.slice(n.min(1)..).is_stored(), "{what}: slice of its copy");
            assert!(
                !c.map(|x| x + 1).unwrap().is_stored(),
                "{what}: map of its copy"
            );
            let base = DeviceSeq::filled(&d, 0, n).unwrap();
            let stored = |s: devseq::Result<DeviceSeq<i32>>, op: &str| {
                assert!(s.unwrap().is_stored(), "{what}: {op}")
            };
            stored(l.copy(), "copy");
            stored(l.reduce_to_seq(Op::Add), "reduce_to_seq");
            stored(l.inclusive_scan(Op::Add), "inclusive_scan");
            stored(l.exclusive_scan(0, Op::Max), "exclusive_scan");
            stored(l.segmented_inclusive_scan(&flags, Op::Add), "seg incl");
            stored(l.segmented_exclusive_scan(&flags, 1, Op::Mul), "seg excl");
            stored(l.segmented_reduce(&flags, Op::Min), "segmented_reduce");
            stored(l.compact(&flags), "compact");
            let g = l.gather(&idx).unwrap();
            assert!(!g.is_stored() || g.is_empty(), "{what}: gather is lazy");
            stored(l.scatter(&idx, &base), "scatter");
            stored(l.scatter_combine(&idx, &base, Op::Add), "scatter_combine");
            stored(l.sort(), "sort");
            let (k, v) = l.sort_pairs(&seq).unwrap();
            assert!(k.is_stored() && v.is_stored(), "{what}: sort_pairs");
            assert!(l.argsort::<u32>().unwrap().is_stored(), "{what}: argsort");
            assert!(l.head_flags().unwrap().is_stored(), "{what}: head_flags");
            assert!(
                l.histogram(5, 0, 50).unwrap().is_stored(),
                "{what}: histogram"
            );
            assert!(
                flags.nonzero_indices::<u64>().unwrap().is_stored(),
                "{what}: nonzero_indices"
            );
            // Reading a lazy sequence leaves it lazy.
            assert!(!l.is_stored(), "{what}: still lazy after use");
            assert!(!flags.is_stored() && !idx.is_stored());
        }
    }
}

// ---- memory: a fused read stores nothing of the input's size --------------------------------

// ---- errors with lazy inputs ---------------------------------------------------------------

#[test]
fn out_of_range_lazy_indices() {
    let d = dev();
    for n in [1usize, 2, 33, 4097, 100_001] {
        let nn = n as u64;
        let src = DeviceSeq::<f32>::sequence(&d, n)
            .unwrap()
            .map(|x| x * 0.5f32)
            .unwrap();
        let vals = DeviceSeq::filled(&d, 1.5f32, n).unwrap();
        let base = DeviceSeq::<f32>::sequence(&d, n + 2)
            .unwrap()
            .map(|x| -x)
            .unwrap()
            .slice(2..);
        let mut cases: Vec<(String, DeviceSeq<u64>, u64)> = Vec::new();
        for q in [0, nn / 2, nn - 1] {
            // n + 5 at position q, and u32::MAX at the last position (bad too, but later).
            let idx = DeviceSeq::<u64>::sequence(&d, n)
                .unwrap()
                .map(move |i| {
                    Expr::select(
                        i.eq(q),
                        Expr::constant(nn + 5),
                        Expr::select(i.eq(nn - 1), Expr::constant(u32::MAX as u64), i),
                    )
                })
                .unwrap();
            cases.push((format!("n + 5 at {q}"), idx, nn + 5));
        }
        if n >= 2 {
            // i * 2: every position from ceil(n / 2) on is out of range.
            let p = n.div_ceil(2) as u64;
            let idx = DeviceSeq::<u64>::sequence(&d, n + 1)
                .unwrap()
                .map(|i| (i - 1u64) * 2u64)
                .unwrap()
                .slice(1..);
            cases.push(("i * 2, a slice of a map".into(), idx, 2 * p));
        }
        for (name, idx, bad) in cases {
            let what = format!("{name} n={n}");
            let idx32 = idx.cast::<u32>().unwrap();
            let oob = |r: devseq::Result<DeviceSeq<f32>>, op: &str| match r.and_then(|y| y.to_vec())
            {
                Err(Error::IndexOutOfBounds { index, len }) => {
                    assert_eq!((index, len), (bad, n), "{op} {what}")
                }
                other => panic!("{op} {what}: {other:?}"),
            };
            oob(src.gather(&idx), "gather");
            oob(src.gather(&idx32), "gather u32");
            oob(src.copy().unwrap().gather(&idx), "gather from a copy");
            oob(vals.scatter(&idx, &base), "scatter");
            oob(vals.scatter(&idx32, &base), "scatter u32");
            oob(
                vals.scatter(&idx.copy().unwrap(), &base),
                "scatter, indices copied",
            );
        }
        // scatter_combine: one index out of range, into a lazy base of 7.
        for q in [0, nn / 2, nn - 1] {
            let idx = DeviceSeq::<u32>::sequence(&d, n)
                .unwrap()
                .map(move |i| Expr::select(i.eq(q as u32), Expr::constant(16u32), i % 7u32))
                .unwrap();
            let base7 = DeviceSeq::filled(&d, 0.25f32, 7).unwrap();
            // From the call or the first use of its result (the GPU's call does not wait).
            match vals
                .scatter_combine(&idx, &base7, Op::Add)
                .and_then(|y| y.to_vec())
            {
                Err(Error::IndexOutOfBounds { index: 16, len: 7 }) => {}
                other => panic!("scatter_combine n={n} bad at {q}: {other:?}"),
            }
        }
        // The inputs still read as before.
        let half: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
        assert_eq!(src.to_vec().unwrap(), half);
        let neg: Vec<f32> = (2..n + 2).map(|i| -(i as f32)).collect();
        assert_eq!(base.to_vec().unwrap(), neg);
    }
}

#[test]
fn length_mismatches_of_lazy_inputs() {
    let d = dev();
    let a = DeviceSeq::<i32>::sequence(&d, 10)
        .unwrap()
        .map(|x| x * 3)
        .unwrap();
    let b = DeviceSeq::filled(&d, 4i32, 9).unwrap();
    let f9 = DeviceSeq::<u32>::sequence(&d, 12)
        .unwrap()
        .map(|i| i.lt(4u32))
        .unwrap()
        .slice(3..);
    let i9 = DeviceSeq::<u32>::sequence(&d, 9)
        .unwrap()
        .map(|i| i % 5u32)
        .unwrap();
    let base = DeviceSeq::<i32>::sequence(&d, 5).unwrap();
    let lm = |r: devseq::Result<()>, what: &str, expected: usize, actual: usize| {
        assert!(
            matches!(r, Err(Error::LengthMismatch { expected: e, actual: a }) if (e, a) == (expected, actual)),
            "{what}: {r:?}"
        )
    };
    lm(a.zip_map(&b, |x, y| x + y).map(|_| ()), "zip_map", 10, 9);
    lm(b.zip_map(&a, |x, y| x + y).map(|_| ()), "zip_map", 9, 10);
    lm(
        a.segmented_inclusive_scan(&f9, Op::Add).map(|_| ()),
        "seg incl",
        10,
        9,
    );
    lm(
        a.segmented_exclusive_scan(&f9, 0, Op::Add).map(|_| ()),
        "seg excl",
        10,
        9,
    );
    lm(
        a.segmented_reduce(&f9, Op::Add).map(|_| ()),
        "seg reduce",
        10,
        9,
    );
    lm(a.compact(&f9).map(|_| ()), "compact", 10, 9);
    lm(a.scatter(&i9, &base).map(|_| ()), "scatter", 10, 9);
    lm(
        a.scatter_combine(&i9, &base, Op::Add).map(|_| ()),
        "scatter_combine",
        10,
        9,
    );
    lm(a.sort_pairs(&b).map(|_| ()), "sort_pairs", 10, 9);
    lm(
        a.slice(1..)
            .map(|x| x + 1)
            .unwrap()
            .sort_pairs(&a)
            .map(|_| ()),
        "sort_pairs of a slice",
        9,
        10,
    );
    // The lazy inputs still read as before.
    assert_eq!(
        a.to_vec().unwrap(),
        (0..10).map(|x| x * 3).collect::<Vec<_>>()
    );
    assert_eq!(
        f9.to_vec().unwrap(),
        [true, false, false, false, false, false, false, false, false]
    );
}
