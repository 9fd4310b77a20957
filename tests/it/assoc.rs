//! Custom associative operators: `reduce_with`, `fold_with`, `inclusive_scan_with`,
//! `exclusive_scan_with`, the segmented `_with` forms, `scatter_combine_with` and
//! `reduce_by_key_with`, against sequential left folds written here. The operators are chosen
//! non-commutative (2x2 matrix products, affine-map composition, the segmented-sum operator,
//! first-maximum selection, the Heisenberg group, packed affine maps, "last nonzero"), so that
//! a slip in operand order fails. Also: the `_with` forms against the `Op` forms bit for bit
//! where the closure is a built-in operator, lazy inputs, `argmin`/`argmax` and the errors.

use crate::common::*;
use crate::for_types;
use devseq::{DeviceSeq, Element, Error, Expr, Index, Integer, Item, Op, f16};
use std::cmp::Ordering;

// ---- the operators -------------------------------------------------------------------------

type E<C> = <<C as Case>::I as Item>::Exprs;

/// A non-commutative associative operator on an item type: the closure the device traces,
/// the same function on host values, and how test values are drawn.
trait Case: Sized {
    type I: Item;
    const NAME: &'static str;
    fn draw(r: &mut Rng) -> Self::I;
    /// The operator on host values (the oracle's).
    fn host(a: Self::I, b: Self::I) -> Self::I;
    /// The operator as a `_with` closure.
    fn dev(a: E<Self>, b: E<Self>) -> E<Self>;
    /// Equal results (exact unless a case says otherwise).
    fn same(a: Self::I, b: Self::I) -> bool {
        a == b
    }
    /// Whether the operator returns an operand as it is (then `zip_map` by it is that operand,
    /// a stored sequence, not a lazy one).
    const PASSES: bool = false;
}

/// 2x2 matrices `(a, b, c, d)` = `[[a, b], [c, d]]` over u32 (wrapping): the product.
struct Mat2;
impl Case for Mat2 {
    type I = (u32, u32, u32, u32);
    const NAME: &'static str = "mat2 u32";
    fn draw(r: &mut Rng) -> Self::I {
        // Odd determinants: the products stay invertible mod 2^32 and never decay to zero.
        loop {
            let (a, b, c, d) = (
                r.next() as u32,
                r.next() as u32,
                r.next() as u32,
                r.next() as u32,
            );
            if a.wrapping_mul(d).wrapping_sub(b.wrapping_mul(c)) & 1 == 1 {
                return (a, b, c, d);
            }
        }
    }
    fn host((a0, b0, c0, d0): Self::I, (a1, b1, c1, d1): Self::I) -> Self::I {
        (
            a0.wrapping_mul(a1).wrapping_add(b0.wrapping_mul(c1)),
            a0.wrapping_mul(b1).wrapping_add(b0.wrapping_mul(d1)),
            c0.wrapping_mul(a1).wrapping_add(d0.wrapping_mul(c1)),
            c0.wrapping_mul(b1).wrapping_add(d0.wrapping_mul(d1)),
        )
    }
    fn dev((a0, b0, c0, d0): E<Self>, (a1, b1, c1, d1): E<Self>) -> E<Self> {
        (
            a0 * a1 + b0 * c1,
            a0 * b1 + b0 * d1,
            c0 * a1 + d0 * c1,
            c0 * b1 + d0 * d1,
        )
    }
}

/// Affine maps `x -> a x + b` as `(a, b)` over f64, composed first-then-second: a linear
/// recurrence. Drawn as small integers (a in {-1, 0, 1}) so that every result is an exact
/// integer whatever the grouping (signs of zero aside: compared with `==`).
struct Affine;
impl Case for Affine {
    type I = (f64, f64);
    const NAME: &'static str = "affine f64";
    fn draw(r: &mut Rng) -> Self::I {
        let a = match r.below(64) {
            0 => 0.0,
            k if k % 2 == 0 => -1.0,
            _ => 1.0,
        };
        (a, r.below(17) as f64 - 8.0)
    }
    fn host((a0, b0): Self::I, (a1, b1): Self::I) -> Self::I {
        (a0 * a1, a1 * b0 + b1)
    }
    fn dev((a0, b0): E<Self>, (a1, b1): E<Self>) -> E<Self> {
        (a0 * a1, a1 * b0 + b1)
    }
    fn same(x: Self::I, y: Self::I) -> bool {
        x.0 == y.0 && x.1 == y.1
    }
}

/// The segmented-sum operator on (value, flag): a nonzero flag on the right restarts the sum.
struct SegSum;
impl Case for SegSum {
    type I = (u32, u8);
    const NAME: &'static str = "segmented sum (u32, u8)";
    fn draw(r: &mut Rng) -> Self::I {
        let t = if r.below(10) == 0 {
            1 + r.below(255) as u8
        } else {
            0
        };
        (r.next() as u32, t)
    }
    fn host((v0, t0): Self::I, (v1, t1): Self::I) -> Self::I {
        (if t1 != 0 { v1 } else { v0.wrapping_add(v1) }, t0 | t1)
    }
    fn dev((v0, t0): E<Self>, (v1, t1): E<Self>) -> E<Self> {
        (Expr::select(t1.ne(0u8), v1, v0 + v1), t0 | t1)
    }
}

/// (value, tag) keeping the first of the largest values (ties go left): an argmax whose tags
/// are not positions, so the tie rule shows the order.
struct FirstMax;
impl Case for FirstMax {
    type I = (i64, u32);
    const NAME: &'static str = "first max (i64, u32)";
    fn draw(r: &mut Rng) -> Self::I {
        (r.below(40) as i64 - 20, r.next() as u32)
    }
    fn host(a: Self::I, b: Self::I) -> Self::I {
        if b.0 > a.0 { b } else { a }
    }
    fn dev((v0, i0): E<Self>, (v1, i1): E<Self>) -> E<Self> {
        let c = v1.gt(v0);
        (Expr::select(c, v1, v0), Expr::select(c, i1, i0))
    }
}

/// The Heisenberg group `(x, y, z)(x', y', z') = (x + x', y + y', z + z' + x y')`, with x in
/// i64, y in u32 and z in u16 (all wrapping; z reads x and y mod 2^16, consistently).
struct Heisenberg;
impl Case for Heisenberg {
    type I = (i64, u32, u16);
    const NAME: &'static str = "heisenberg (i64, u32, u16)";
    fn draw(r: &mut Rng) -> Self::I {
        (r.next() as i64, r.next() as u32, r.next() as u16)
    }
    fn host((x0, y0, z0): Self::I, (x1, y1, z1): Self::I) -> Self::I {
        (
            x0.wrapping_add(x1),
            y0.wrapping_add(y1),
            z0.wrapping_add(z1)
                .wrapping_add((x0 as u16).wrapping_mul(y1 as u16)),
        )
    }
    fn dev((x0, y0, z0): E<Self>, (x1, y1, z1): E<Self>) -> E<Self> {
        (
            x0 + x1,
            y0 + y1,
            z0 + z1 + x0.cast::<u16>() * y1.cast::<u16>(),
        )
    }
}

/// Affine maps mod 2^16 packed in a u32 as `a << 16 | b` (a odd).
struct PackedAffine32;
impl Case for PackedAffine32 {
    type I = u32;
    const NAME: &'static str = "packed affine u32";
    fn draw(r: &mut Rng) -> u32 {
        (r.next() as u32) | 1 << 16
    }
    fn host(x: u32, y: u32) -> u32 {
        let (a0, b0, a1, b1) = (x >> 16, x & 0xFFFF, y >> 16, y & 0xFFFF);
        (a0.wrapping_mul(a1) << 16) | (a1.wrapping_mul(b0).wrapping_add(b1) & 0xFFFF)
    }
    fn dev(x: Expr<u32>, y: Expr<u32>) -> Expr<u32> {
        let (a0, b0, a1, b1) = (x >> 16u32, x & 0xFFFFu32, y >> 16u32, y & 0xFFFFu32);
        ((a0 * a1) << 16u32) | ((a1 * b0 + b1) & 0xFFFFu32)
    }
}

/// Affine maps mod 16 packed in a u8 as `a << 4 | b` (a odd).
struct PackedAffine8;
impl Case for PackedAffine8 {
    type I = u8;
    const NAME: &'static str = "packed affine u8";
    fn draw(r: &mut Rng) -> u8 {
        (r.next() as u8) | 1 << 4
    }
    fn host(x: u8, y: u8) -> u8 {
        let (a0, b0, a1, b1) = (x >> 4, x & 15, y >> 4, y & 15);
        (a0.wrapping_mul(a1) << 4) | (a1.wrapping_mul(b0).wrapping_add(b1) & 15)
    }
    fn dev(x: Expr<u8>, y: Expr<u8>) -> Expr<u8> {
        let (a0, b0, a1, b1) = (x >> 4u32, x & 15u8, y >> 4u32, y & 15u8);
        ((a0 * a1) << 4u32) | ((a1 * b0 + b1) & 15u8)
    }
}

/// The last nonzero element (zero if none).
struct LastNonzero;
impl Case for LastNonzero {
    type I = i64;
    const NAME: &'static str = "last nonzero i64";
    fn draw(r: &mut Rng) -> i64 {
        if r.below(4) == 0 { r.next() as i64 } else { 0 }
    }
    fn host(a: i64, b: i64) -> i64 {
        if b != 0 { b } else { a }
    }
    fn dev(a: Expr<i64>, b: Expr<i64>) -> Expr<i64> {
        Expr::select(b.ne(0i64), b, a)
    }
}

/// The last of the elements of largest magnitude (of 3 and -3, the later one), f32 small
/// whole numbers and signed zeros; compared bitwise.
struct LastMaxAbs;
impl Case for LastMaxAbs {
    type I = f32;
    const NAME: &'static str = "last max abs f32";
    fn draw(r: &mut Rng) -> f32 {
        match r.below(20) {
            0 => -0.0,
            1 => 0.0,
            _ => r.below(41) as f32 - 20.0,
        }
    }
    fn host(a: f32, b: f32) -> f32 {
        if b.abs() >= a.abs() { b } else { a }
    }
    fn dev(a: Expr<f32>, b: Expr<f32>) -> Expr<f32> {
        Expr::select(b.abs().ge(a.abs()), b, a)
    }
    fn same(a: f32, b: f32) -> bool {
        a.to_bits() == b.to_bits()
    }
}

/// The later operand (`|_, later| later`): the last element; of `scatter_combine_with`, the
/// value of the highest position sent to a slot (the deterministic scatter of repeated
/// indices). Over (f64, u16, f16) with NaNs (payloads; f16's quiet, which its compute in f32
/// keeps) and signed zeros, compared bitwise.
struct Last;
impl Case for Last {
    type I = (f64, u16, f16);
    const NAME: &'static str = "last (f64, u16, f16)";
    const PASSES: bool = true;
    fn draw(r: &mut Rng) -> Self::I {
        let x = match r.below(10) {
            0 => f64::from_bits(0x7ff8_0000_0000_0000 | r.below(1 << 20)),
            1 => -0.0,
            _ => r.unit() - 0.5,
        };
        let h = match r.below(10) {
            0 => f16::from_bits(0x7e00 | r.below(1 << 9) as u16 | (r.below(2) as u16) << 15),
            1 => f16::from_f32(-0.0),
            _ => f16::from_f32(r.unit() as f32),
        };
        (x, r.next() as u16, h)
    }
    fn host(_: Self::I, b: Self::I) -> Self::I {
        b
    }
    fn dev(_: E<Self>, b: E<Self>) -> E<Self> {
        b
    }
    fn same(a: Self::I, b: Self::I) -> bool {
        a.0.to_bits() == b.0.to_bits() && a.1 == b.1 && a.2.to_bits() == b.2.to_bits()
    }
}

/// An f32 sum of small whole numbers (exact in any order; commutative, for the float path).
struct ExactSum;
impl Case for ExactSum {
    type I = f32;
    const NAME: &'static str = "exact sum f32";
    fn draw(r: &mut Rng) -> f32 {
        r.below(33) as f32 - 16.0
    }
    fn host(a: f32, b: f32) -> f32 {
        a + b
    }
    fn dev(a: Expr<f32>, b: Expr<f32>) -> Expr<f32> {
        a + b
    }
}

/// Component-wise commutative operations on a mixed tuple (i32 wrapping sum, u64 maximum, u16
/// xor, u8 wrapping product): the combiner the reductions may fold in any order, exact.
struct ComponentWise;
impl Case for ComponentWise {
    type I = (i32, u64, u16, u8);
    const NAME: &'static str = "component-wise i32 u64 u16 u8";
    fn draw(r: &mut Rng) -> Self::I {
        (
            r.next() as i32,
            r.next() >> r.below(64),
            r.next() as u16,
            1 + 2 * (r.below(8) as u8),
        )
    }
    fn host((a0, b0, c0, d0): Self::I, (a1, b1, c1, d1): Self::I) -> Self::I {
        (
            a0.wrapping_add(a1),
            b0.max(b1),
            c0 ^ c1,
            d0.wrapping_mul(d1),
        )
    }
    fn dev((a0, b0, c0, d0): E<Self>, (a1, b1, c1, d1): E<Self>) -> E<Self> {
        (a1 + a0, b0.max(b1), c0 ^ c1, d0 * d1)
    }
}

// ---- sequential oracles --------------------------------------------------------------------

fn o_reduce<I: Copy>(xs: &[I], f: impl Fn(I, I) -> I) -> Option<I> {
    let (&first, rest) = xs.split_first()?;
    Some(rest.iter().fold(first, |a, &x| f(a, x)))
}

fn o_fold<I: Copy>(init: I, xs: &[I], f: impl Fn(I, I) -> I) -> I {
    xs.iter().fold(init, |a, &x| f(a, x))
}

fn o_incl<I: Copy>(xs: &[I], f: impl Fn(I, I) -> I) -> Vec<I> {
    let mut out: Vec<I> = Vec::with_capacity(xs.len());
    for &x in xs {
        let v = match out.last() {
            None => x,
            Some(&p) => f(p, x),
        };
        out.push(v);
    }
    out
}

fn o_excl<I: Copy>(xs: &[I], init: I, f: impl Fn(I, I) -> I) -> Vec<I> {
    let mut out = Vec::with_capacity(xs.len());
    let mut acc = init;
    for &x in xs {
        out.push(acc);
        acc = f(acc, x);
    }
    out
}

fn head(fl: &[u8], i: usize) -> bool {
    i == 0 || fl[i] != 0
}

fn o_seg_incl<I: Copy>(xs: &[I], fl: &[u8], f: impl Fn(I, I) -> I) -> Vec<I> {
    let mut out: Vec<I> = Vec::with_capacity(xs.len());
    for (i, &x) in xs.iter().enumerate() {
        let v = if head(fl, i) { x } else { f(out[i - 1], x) };
        out.push(v);
    }
    out
}

fn o_seg_excl<I: Copy>(xs: &[I], fl: &[u8], init: I, f: impl Fn(I, I) -> I) -> Vec<I> {
    let mut out = Vec::with_capacity(xs.len());
    let mut acc = init;
    for (i, &x) in xs.iter().enumerate() {
        if head(fl, i) {
            acc = init;
        }
        out.push(acc);
        acc = f(acc, x);
    }
    out
}

fn o_seg_reduce<I: Copy>(xs: &[I], fl: &[u8], f: impl Fn(I, I) -> I) -> Vec<I> {
    let mut out: Vec<I> = Vec::new();
    for (i, &x) in xs.iter().enumerate() {
        if head(fl, i) {
            out.push(x);
        } else {
            let last = out.last_mut().unwrap();
            *last = f(*last, x);
        }
    }
    out
}

fn o_scatter<I: Copy>(xs: &[I], idx: &[u64], base: &[I], f: impl Fn(I, I) -> I) -> Vec<I> {
    let mut acc: Vec<Option<I>> = vec![None; base.len()];
    for (&x, &k) in xs.iter().zip(idx) {
        let a = &mut acc[k as usize];
        *a = Some(match *a {
            None => x,
            Some(p) => f(p, x),
        });
    }
    acc.iter()
        .zip(base)
        .map(|(a, &b)| match a {
            None => b,
            Some(v) => f(b, *v),
        })
        .collect()
}

fn o_by_key<K: Element, I: Copy>(
    keys: &[K],
    vals: &[I],
    f: impl Fn(I, I) -> I,
) -> (Vec<K>, Vec<I>) {
    let fl: Vec<u8> = (0..keys.len())
        .map(|i| (i == 0 || keys[i].to_bits() != keys[i - 1].to_bits()) as u8)
        .collect();
    let k = keys
        .iter()
        .zip(&fl)
        .filter(|(_, h)| **h != 0)
        .map(|(k, _)| *k)
        .collect();
    (k, o_seg_reduce(vals, &fl, f))
}

// ---- helpers -------------------------------------------------------------------------------

fn up<I: Item>(v: &[I]) -> DeviceSeq<I> {
    DeviceSeq::from_slice(&dev(), v).expect("from_slice")
}

fn check<C: Case>(got: &[C::I], want: &[C::I], what: &str) {
    assert_eq!(got.len(), want.len(), "{}: {what}: length", C::NAME);
    if let Some(i) = (0..got.len()).find(|&i| !C::same(got[i], want[i])) {
        panic!(
            "{}: {what}: first difference at {i} of {}: got {:?}, want {:?}",
            C::NAME,
            got.len(),
            got[i],
            want[i]
        );
    }
}

fn check_one<C: Case>(got: Option<C::I>, want: Option<C::I>, what: &str) {
    let ok = match (got, want) {
        (None, None) => true,
        (Some(g), Some(w)) => C::same(g, w),
        _ => false,
    };
    assert!(ok, "{}: {what}: got {got:?}, want {want:?}", C::NAME);
}

/// Keys in runs of 1 to 8 from a pool of three, so that neighbouring runs may be equal too.
fn key_runs(r: &mut Rng, n: usize) -> Vec<u32> {
    let pool = [r.next() as u32, r.next() as u32, r.next() as u32];
    let mut v = Vec::with_capacity(n);
    while v.len() < n {
        let k = pool[r.below(3) as usize];
        let len = 1 + r.below(8) as usize;
        v.extend(std::iter::repeat_n(k, len.min(n - v.len())));
    }
    v
}

const DENSITIES: [f64; 5] = [0.0, 0.001, 0.05, 0.5, 1.0];

/// The sizes of the operator suites: edges, and one random size from 70 000 to 200 000.
fn suite_sizes(r: &mut Rng) -> Vec<usize> {
    let mut ns = vec![0, 1, 31, 32, 33, 1023, 1024, 1025, 4095, 4097, 65535, 65537];
    ns.push(big(70_000 + r.below(130_000) as usize));
    ns
}

// ---- the suite of one operator -------------------------------------------------------------

/// Every `_with` method on `s` (whose elements are `xs`), against the oracles; `k` varies the
/// flag densities and slot counts from call to call.
fn run_all<C: Case>(r: &mut Rng, xs: &[C::I], s: &DeviceSeq<C::I>, k: usize, what: &str) {
    let n = xs.len();
    assert_eq!(s.len(), n, "{what}: input length");
    let f = C::host;

    let got = s.reduce_with(C::dev).unwrap();
    check_one::<C>(got, o_reduce(xs, f), &format!("reduce_with {what}"));
    let init = C::draw(r);
    let got = s.fold_with(init, C::dev).unwrap();
    check_one::<C>(
        Some(got),
        Some(o_fold(init, xs, f)),
        &format!("fold_with {what}"),
    );

    let got = s.inclusive_scan_with(C::dev).unwrap().to_vec().unwrap();
    check::<C>(&got, &o_incl(xs, f), &format!("inclusive_scan_with {what}"));
    let init = C::draw(r);
    let got = s
        .exclusive_scan_with(init, C::dev)
        .unwrap()
        .to_vec()
        .unwrap();
    check::<C>(
        &got,
        &o_excl(xs, init, f),
        &format!("exclusive_scan_with {what}"),
    );

    // Two flag patterns: the first with no flag at element 0 (it starts a segment anyway).
    for (j, p) in [DENSITIES[k % 5], DENSITIES[(k + 2) % 5]]
        .into_iter()
        .enumerate()
    {
        let mut fl = flags(r, n, p);
        if j == 0 && n > 0 {
            fl[0] = 0;
        }
        let fs = upload(&fl);
        let w = format!(
            "{what} density {p} flag0 {}",
            fl.first().copied().unwrap_or(0)
        );
        let got = s
            .segmented_inclusive_scan_with(&fs, C::dev)
            .unwrap()
            .to_vec()
            .unwrap();
        check::<C>(
            &got,
            &o_seg_incl(xs, &fl, f),
            &format!("segmented_inclusive_scan_with {w}"),
        );
        let init = C::draw(r);
        let got = s
            .segmented_exclusive_scan_with(&fs, init, C::dev)
            .unwrap()
            .to_vec()
            .unwrap();
        check::<C>(
            &got,
            &o_seg_excl(xs, &fl, init, f),
            &format!("segmented_exclusive_scan_with {w}"),
        );
        let got = s
            .segmented_reduce_with(&fs, C::dev)
            .unwrap()
            .to_vec()
            .unwrap();
        check::<C>(
            &got,
            &o_seg_reduce(xs, &fl, f),
            &format!("segmented_reduce_with {w}"),
        );
    }

    // scatter_combine_with: few slots (many repeats), many, and more slots than values (most
    // untouched); three more base slots than any index reaches.
    let slot_counts = [1usize, 16, n / 16 + 1, 2 * n + 1];
    for (j, slots) in [slot_counts[k % 4], slot_counts[(k + 1) % 4]]
        .into_iter()
        .enumerate()
    {
        let idx: Vec<u64> = (0..n).map(|_| r.below(slots as u64)).collect();
        let base: Vec<C::I> = (0..slots + 3).map(|_| C::draw(r)).collect();
        let bs = up(&base);
        let got = if j == 0 {
            let i32s: Vec<u32> = idx.iter().map(|&i| i as u32).collect();
            s.scatter_combine_with(&upload(&i32s), &bs, C::dev)
        } else {
            s.scatter_combine_with(&upload(&idx), &bs, C::dev)
        };
        let ity = if j == 0 { "u32" } else { "u64" };
        check::<C>(
            &got.unwrap().to_vec().unwrap(),
            &o_scatter(xs, &idx, &base, f),
            &format!("scatter_combine_with {what} slots={slots} {ity} indices"),
        );
        check::<C>(
            &bs.to_vec().unwrap(),
            &base,
            &format!("scatter_combine_with {what}: base unchanged"),
        );
    }

    // reduce_by_key_with: u32 keys in runs.
    let keys = key_runs(r, n);
    let (gk, gv) = upload(&keys).reduce_by_key_with(s, C::dev).unwrap();
    let (wk, wv) = o_by_key(&keys, xs, f);
    assert_eq!(
        gk.to_vec().unwrap(),
        wk,
        "{}: reduce_by_key_with {what}: keys",
        C::NAME
    );
    check::<C>(
        &gv.to_vec().unwrap(),
        &wv,
        &format!("reduce_by_key_with {what}: values"),
    );
}

/// `run_all` for every size, on stored inputs, and for some sizes on a lazy input (the
/// operator applied to each element and itself, by `zip_map`) and a view at an odd offset.
fn suite<C: Case>() {
    let mut r = Rng::new(C::NAME);
    for (k, n) in suite_sizes(&mut r).into_iter().enumerate() {
        let xs: Vec<C::I> = (0..n).map(|_| C::draw(&mut r)).collect();
        let s = up(&xs);
        run_all::<C>(&mut r, &xs, &s, k, &format!("n={n}"));
        if matches!(n, 33 | 4097) {
            let lazy = s.zip_map(&s, C::dev).unwrap();
            assert_eq!(lazy.is_stored(), C::PASSES, "zip_map is lazy");
            let squares: Vec<C::I> = xs.iter().map(|&x| C::host(x, x)).collect();
            run_all::<C>(&mut r, &squares, &lazy, k + 1, &format!("lazy n={n}"));
            let v = s.slice(3..);
            run_all::<C>(&mut r, &xs[3..], &v, k + 2, &format!("slice(3..) n={n}"));
        }
    }
}

#[test]
fn mat2_u32() {
    suite::<Mat2>()
}
#[test]
fn affine_f64_pairs() {
    suite::<Affine>()
}
#[test]
fn segmented_sum_u32_u8() {
    suite::<SegSum>()
}
#[test]
fn first_max_i64_u32() {
    suite::<FirstMax>()
}
#[test]
fn heisenberg_i64_u32_u16() {
    suite::<Heisenberg>()
}
#[test]
fn packed_affine_u32() {
    suite::<PackedAffine32>()
}
#[test]
fn packed_affine_u8() {
    suite::<PackedAffine8>()
}
#[test]
fn last_nonzero_i64() {
    suite::<LastNonzero>()
}
#[test]
fn last_max_abs_f32() {
    suite::<LastMaxAbs>()
}
#[test]
fn last_f64_u16_f16() {
    suite::<Last>()
}
#[test]
fn exact_sum_f32() {
    suite::<ExactSum>()
}
#[test]
fn component_wise_i32_u64_u16_u8() {
    suite::<ComponentWise>()
}

/// Sums and sums of squares of f32 values in one `reduce_with` of pairs (a commutative
/// combiner): each component close to the exact f64 sum, and the same on every run.
#[test]
fn reduce_with_f32_pairs_of_sums_are_close() {
    let mut r = Rng::new("reduce_with pairs f32");
    for n in [1usize, 31, 1000, 65537, big(300_007)] {
        let xs: Vec<f32> = (0..n).map(|_| r.unit() as f32 - 0.25).collect();
        let s = upload(&xs);
        let pairs = s.map(|x| (x, x * x)).unwrap();
        let sums = |p: &DeviceSeq<(f32, f32)>| {
            p.reduce_with(|(a, b), (c, d)| (a + c, b + d))
                .unwrap()
                .unwrap()
        };
        let got = sums(&pairs);
        let again = sums(&pairs);
        assert_eq!(
            (got.0.to_bits(), got.1.to_bits()),
            (again.0.to_bits(), again.1.to_bits()),
            "n={n}: the same bits on every run"
        );
        let stored = sums(&pairs.copy().unwrap());
        assert_eq!(
            (got.0.to_bits(), got.1.to_bits()),
            (stored.0.to_bits(), stored.1.to_bits()),
            "n={n}: lazy and stored pairs"
        );
        let exact: f64 = xs.iter().map(|&x| x as f64).sum();
        let squares: f64 = xs.iter().map(|&x| (x as f64) * (x as f64)).sum();
        let abs: f64 = xs.iter().map(|&x| (x as f64).abs()).sum();
        let bound = |m: f64| m * f32::EPSILON as f64 * n as f64;
        assert!(
            (got.0 as f64 - exact).abs() <= bound(abs),
            "n={n}: sum {got:?}"
        );
        assert!(
            (got.1 as f64 - squares).abs() <= bound(squares),
            "n={n}: squares {got:?}"
        );
    }
}

/// The inclusive scan of affine maps solves the recurrence `x[i] = a[i] x[i-1] + b[i]`.
#[test]
fn affine_scan_solves_a_linear_recurrence() {
    let mut r = Rng::new("recurrence");
    for n in [1usize, 1000, 65537, big(200_003)] {
        let maps: Vec<(f64, f64)> = (0..n).map(|_| Affine::draw(&mut r)).collect();
        let x0 = r.below(9) as f64 - 4.0;
        let got = up(&maps)
            .inclusive_scan_with(Affine::dev)
            .unwrap()
            .to_vec()
            .unwrap();
        let mut x = x0;
        for i in 0..n {
            x = maps[i].0 * x + maps[i].1;
            let (a, b) = got[i];
            assert!(
                a * x0 + b == x,
                "n={n}: x[{i}] = {x}, from the scan {a} * {x0} + {b}"
            );
        }
        let total = up(&maps).reduce_with(Affine::dev).unwrap().unwrap();
        assert!(total.0 * x0 + total.1 == x, "n={n}: reduce_with");
    }
}

/// NaN bits: a float NaN that a combination computes is stored as the canonical one
/// (`f32::NAN`), an element or initial value passed through keeps its bits (payload, sign). The
/// kernels combine without making NaNs canonical where every float component is computed (the
/// affine maps), making them canonical where they store; a combiner that passes a component
/// through keeps it raw. Scans (inclusive, exclusive from a NaN initial value) and reductions,
/// a NaN first element (all later outputs NaN, through every look-back) or NaNs made late (inf
/// minus inf, a payload NaN in b), over many tiles; values are exact integers, so any grouping
/// gives them (signs of zero aside).
#[test]
fn nan_bits_of_combined_and_passed_components() {
    type P = (f32, f32);
    let canon = |v: f32| if v.is_nan() { f32::NAN } else { v };
    let payload = f32::from_bits(0x7fa0_0001);
    let neg_payload = f32::from_bits(0xffc1_2345);
    let same = |g: f32, w: f32| {
        if w.is_nan() {
            g.to_bits() == w.to_bits()
        } else {
            g == w
        }
    };
    let check = |got: &[P], want: &[P], what: &str| {
        assert_eq!(got.len(), want.len(), "{what}: length");
        if let Some(i) =
            (0..got.len()).find(|&i| !same(got[i].0, want[i].0) || !same(got[i].1, want[i].1))
        {
            panic!(
                "{what}: first difference at {i}: got ({:#x}, {:#x}), want ({:#x}, {:#x})",
                got[i].0.to_bits(),
                got[i].1.to_bits(),
                want[i].0.to_bits(),
                want[i].1.to_bits()
            );
        }
    };
    let affine_h = |(a1, b1): P, (a2, b2): P| (canon(a1 * a2), canon(b1 * a2 + b2));
    let affine_d = |(a1, b1): (Expr<f32>, Expr<f32>), (a2, b2): (Expr<f32>, Expr<f32>)| {
        (a1 * a2, b1 * a2 + b2)
    };
    // The first component passed through from the right: the `raw` form is the combination.
    let last_h = |(_, b1): P, (a2, b2): P| (a2, canon(b1 + b2));
    let last_d = |(_, b1): (Expr<f32>, Expr<f32>), (a2, b2): (Expr<f32>, Expr<f32>)| (a2, b1 + b2);
    let mut r = Rng::new("nan bits");
    for n in [1usize, 2, 3, 33, 1025, 8193, 70_001, big(300_001)] {
        for late in [false, true] {
            let mut xs: Vec<P> = (0..n)
                .map(|_| {
                    let a = if r.below(2) == 0 { 1.0 } else { -1.0 };
                    (a, r.below(9) as f32 - 4.0)
                })
                .collect();
            if late {
                // inf - inf in b (the a are all 1 or -1, so b is a sum of the same signed terms
                // whatever the grouping, and whether it is NaN does not depend on it).
                let p = n * 2 / 3;
                if p + 5 < n {
                    xs[p].1 = f32::INFINITY;
                    xs[p + 5].1 = f32::NEG_INFINITY;
                }
                xs[n - 1].1 = payload;
            } else {
                xs[0] = (payload, neg_payload);
            }
            let s = up(&xs);
            let what = |op: &str| format!("{op}, n={n}, late NaNs {late}");
            check(
                &s.inclusive_scan_with(affine_d).unwrap().to_vec().unwrap(),
                &o_incl(&xs, affine_h),
                &what("affine inclusive"),
            );
            let init = (neg_payload, 1.0);
            check(
                &s.exclusive_scan_with(init, affine_d)
                    .unwrap()
                    .to_vec()
                    .unwrap(),
                &o_excl(&xs, init, affine_h),
                &what("affine exclusive"),
            );
            check(
                &[s.reduce_with(affine_d).unwrap().unwrap()],
                &[o_reduce(&xs, affine_h).unwrap()],
                &what("affine reduce_with"),
            );
            check(
                &s.inclusive_scan_with(last_d).unwrap().to_vec().unwrap(),
                &o_incl(&xs, last_h),
                &what("last inclusive"),
            );
            check(
                &[s.reduce_with(last_d).unwrap().unwrap()],
                &[o_reduce(&xs, last_h).unwrap()],
                &what("last reduce_with"),
            );
            // A commutative combiner (a sum a component): the reduction's chains.
            let sum_h = |(a1, b1): P, (a2, b2): P| (canon(a1 + a2), canon(b1 + b2));
            check(
                &[s.reduce_with(|(a1, b1), (a2, b2)| (a1 + a2, b1 + b2))
                    .unwrap()
                    .unwrap()],
                &[o_reduce(&xs, sum_h).unwrap()],
                &what("sum reduce_with"),
            );
        }
    }
}

/// The inclusive, exclusive and segmented exclusive scans of `n` drawn items, exact against
/// the oracles.
fn scans_three_ways<C: Case>(r: &mut Rng, n: usize) {
    let xs: Vec<C::I> = (0..n).map(|_| C::draw(r)).collect();
    let s = up(&xs);
    let what = format!("{} n={n}", C::NAME);
    let got = s.inclusive_scan_with(C::dev).unwrap().to_vec().unwrap();
    check::<C>(&got, &o_incl(&xs, C::host), &format!("{what} inclusive"));
    let init = xs[n / 2];
    let got = s
        .exclusive_scan_with(init, C::dev)
        .unwrap()
        .to_vec()
        .unwrap();
    check::<C>(
        &got,
        &o_excl(&xs, init, C::host),
        &format!("{what} exclusive"),
    );
    let fl: Vec<u8> = (0..n).map(|_| (r.below(50_000) == 0) as u8).collect();
    let got = s
        .segmented_exclusive_scan_with(&upload(&fl), init, C::dev)
        .unwrap()
        .to_vec()
        .unwrap();
    let want = o_seg_excl(&xs, &fl, init, C::host);
    check::<C>(&got, &want, &format!("{what} segmented exclusive"));
}

/// Scans on both sides of the sizes where the GPU's one-pass custom scan changes its tile (1 MB,
/// 2 MB and 256 MB of stored items: tiles of 8, 16, 32 and 64 KB), for items of 4, 5, 12 and 16
/// bytes (the 256 MB edge for 16-byte items only: 2^24 of them).
#[test]
fn scans_on_both_sides_of_tile_classes() {
    fn edges<C: Case>(r: &mut Rng, stored: usize, bounds: &[usize]) {
        for &bound in bounds {
            let at = bound / stored;
            for n in [at, at + 1] {
                scans_three_ways::<C>(r, big(n));
            }
        }
    }
    let mut r = Rng::new("tile classes");
    let (mb1, mb2) = (1 << 20, 2 << 20);
    edges::<PackedAffine32>(&mut r, 4, &[mb1, mb2]);
    edges::<SegSum>(&mut r, 5, &[mb1, mb2]);
    edges::<FirstMax>(&mut r, 12, &[mb1, mb2]);
    edges::<Mat2>(&mut r, 16, &[mb1, mb2, 256 << 20]);
}

/// Scans long enough that the single-pass scan's look-back runs over more than 32 groups of
/// 32 tiles (its window of groups: 2049 tiles of 8192 4-byte items or of 2048 16-byte ones),
/// so that it waits for group prefixes, starts from one found in the window, and meets tiles of
/// every position in a group: inclusive, exclusive and segmented exclusive, exact against the
/// oracles; and a float scan of that length gives the same bits twice.
#[test]
fn scans_over_many_groups_of_tiles() {
    let mut r = Rng::new("many groups");
    scans_three_ways::<PackedAffine32>(&mut r, big((1 << 24) + 3));
    scans_three_ways::<Mat2>(&mut r, big((1 << 22) + 5));
    let n = big((1 << 24) + 7);
    let maps: Vec<(f32, f32)> = (0..n)
        .map(|_| (r.unit() as f32 * 0.5 + 0.5, r.unit() as f32 - 0.5))
        .collect();
    let s = up(&maps);
    let scan = || {
        s.inclusive_scan_with(|(a1, b1), (a2, b2)| (a1 * a2, b1 * a2 + b2))
            .unwrap()
            .to_vec()
            .unwrap()
    };
    let (a, b) = (scan(), scan());
    assert!(
        a.iter()
            .zip(&b)
            .all(|(x, y)| x.0.to_bits() == y.0.to_bits() && x.1.to_bits() == y.1.to_bits()),
        "affine f32 n={n}: the same bits on every run"
    );
}

// ---- lazy inputs ---------------------------------------------------------------------------

/// Lazy inputs (zips of stored columns, maps returning tuples, sequences, lazy head flags)
/// give what their stored equivalents and the oracles give.
#[test]
fn lazy_inputs_equal_stored() {
    let d = dev();
    let mut r = Rng::new("assoc lazy");
    for n in [0usize, 1, 33, 1025, 4097, 65537] {
        // zip4 of four stored columns, as 2x2 matrices.
        let mats: Vec<(u32, u32, u32, u32)> = (0..n).map(|_| Mat2::draw(&mut r)).collect();
        let cols = (
            upload(&mats.iter().map(|m| m.0).collect::<Vec<_>>()),
            upload(&mats.iter().map(|m| m.1).collect::<Vec<_>>()),
            upload(&mats.iter().map(|m| m.2).collect::<Vec<_>>()),
            upload(&mats.iter().map(|m| m.3).collect::<Vec<_>>()),
        );
        let z = DeviceSeq::zip4(&cols.0, &cols.1, &cols.2, &cols.3).unwrap();
        let stored = up(&mats);
        let what = format!("zip4 n={n}");
        check_one::<Mat2>(
            z.reduce_with(Mat2::dev).unwrap(),
            o_reduce(&mats, Mat2::host),
            &what,
        );
        check_one::<Mat2>(
            z.reduce_with(Mat2::dev).unwrap(),
            stored.reduce_with(Mat2::dev).unwrap(),
            &what,
        );
        let got = z.inclusive_scan_with(Mat2::dev).unwrap().to_vec().unwrap();
        check::<Mat2>(&got, &o_incl(&mats, Mat2::host), &what);
        let init = Mat2::draw(&mut r);
        let got = z
            .exclusive_scan_with(init, Mat2::dev)
            .unwrap()
            .to_vec()
            .unwrap();
        check::<Mat2>(&got, &o_excl(&mats, init, Mat2::host), &what);
        // A lazy value sequence with lazy flags: the head flags of stored keys.
        let keys = key_runs(&mut r, n);
        let ks = upload(&keys);
        let heads = ks.head_flags().unwrap();
        let hv: Vec<u8> = (0..n)
            .map(|i| (i == 0 || keys[i] != keys[i - 1]) as u8)
            .collect();
        let got = z
            .segmented_reduce_with(&heads, Mat2::dev)
            .unwrap()
            .to_vec()
            .unwrap();
        check::<Mat2>(
            &got,
            &o_seg_reduce(&mats, &hv, Mat2::host),
            &format!("{what}: segmented_reduce_with over lazy head flags"),
        );
        let got = z
            .segmented_inclusive_scan_with(&heads, Mat2::dev)
            .unwrap()
            .to_vec()
            .unwrap();
        check::<Mat2>(
            &got,
            &o_seg_incl(&mats, &hv, Mat2::host),
            &format!("{what}: segmented_inclusive_scan_with over lazy head flags"),
        );
        let (gk, gv) = ks.reduce_by_key_with(&z, Mat2::dev).unwrap();
        let (wk, wv) = o_by_key(&keys, &mats, Mat2::host);
        assert_eq!(gk.to_vec().unwrap(), wk, "{what}: reduce_by_key_with keys");
        check::<Mat2>(
            &gv.to_vec().unwrap(),
            &wv,
            &format!("{what}: reduce_by_key_with"),
        );

        // A map of a stored u32 column returning a pair: affine maps mod 2^32.
        let xs: Vec<u32> = (0..n).map(|_| r.next() as u32).collect();
        let lazy = upload(&xs).map(|x| (x | 1u32, x * x)).unwrap();
        assert!(!lazy.is_stored());
        let pairs: Vec<(u32, u32)> = xs.iter().map(|&x| (x | 1, x.wrapping_mul(x))).collect();
        let aff = |(a0, b0): (Expr<u32>, Expr<u32>), (a1, b1): (Expr<u32>, Expr<u32>)| {
            (a0 * a1, a1 * b0 + b1)
        };
        let aff_h = |(a0, b0): (u32, u32), (a1, b1): (u32, u32)| {
            (a0.wrapping_mul(a1), a1.wrapping_mul(b0).wrapping_add(b1))
        };
        assert_eq!(
            lazy.reduce_with(aff).unwrap(),
            o_reduce(&pairs, aff_h),
            "map to pairs n={n}: reduce_with"
        );
        assert_eq!(
            lazy.reduce_with(aff).unwrap(),
            up(&pairs).reduce_with(aff).unwrap(),
            "map to pairs n={n}: lazy vs stored"
        );
        assert_eq!(
            lazy.inclusive_scan_with(aff).unwrap().to_vec().unwrap(),
            o_incl(&pairs, aff_h),
            "map to pairs n={n}: inclusive_scan_with"
        );
        let fl = flags(&mut r, n, 0.01);
        assert_eq!(
            lazy.segmented_exclusive_scan_with(&upload(&fl), (3, 5), aff)
                .unwrap()
                .to_vec()
                .unwrap(),
            o_seg_excl(&pairs, &fl, (3, 5), aff_h),
            "map to pairs n={n}: segmented_exclusive_scan_with"
        );
        let idx: Vec<u32> = (0..n).map(|_| r.below(40) as u32).collect();
        let base: Vec<(u32, u32)> = (0..45)
            .map(|_| (r.next() as u32, r.next() as u32))
            .collect();
        let idx64: Vec<u64> = idx.iter().map(|&i| i as u64).collect();
        assert_eq!(
            lazy.scatter_combine_with(&upload(&idx), &up(&base), aff)
                .unwrap()
                .to_vec()
                .unwrap(),
            o_scatter(&pairs, &idx64, &base, aff_h),
            "map to pairs n={n}: scatter_combine_with"
        );

        // zip of two stored f64 columns, mapped: affine maps of the recurrence.
        let maps: Vec<(f64, f64)> = (0..n).map(|_| Affine::draw(&mut r)).collect();
        let ca = upload(&maps.iter().map(|m| m.0).collect::<Vec<_>>());
        let cb = upload(&maps.iter().map(|m| m.1 / 2.0).collect::<Vec<_>>());
        let zm = DeviceSeq::zip(&ca, &cb)
            .unwrap()
            .map(|(a, b)| (a, b * 2.0))
            .unwrap();
        let got = zm
            .inclusive_scan_with(Affine::dev)
            .unwrap()
            .to_vec()
            .unwrap();
        check::<Affine>(
            &got,
            &o_incl(&maps, Affine::host),
            &format!("zip+map n={n}"),
        );
        check_one::<Affine>(
            Some(zm.fold_with((1.0, 0.5), Affine::dev).unwrap()),
            Some(o_fold((1.0, 0.5), &maps, Affine::host)),
            &format!("zip+map n={n}: fold_with"),
        );

        // A lazy sequence: first maximum of a pseudo-random function of the position.
        let seq = DeviceSeq::<u32>::sequence(&d, n)
            .unwrap()
            .map(|i| ((i * 2654435761u32) >> 26u32).cast::<i64>() - 32i64)
            .unwrap();
        let vals: Vec<i64> = (0..n as u32)
            .map(|i| (i.wrapping_mul(2654435761) >> 26) as i64 - 32)
            .collect();
        let tagged = seq.zip_map(&cols.0, |v, t| (v, t)).unwrap();
        let want: Vec<(i64, u32)> = vals.iter().zip(&mats).map(|(&v, m)| (v, m.0)).collect();
        check_one::<FirstMax>(
            tagged.reduce_with(FirstMax::dev).unwrap(),
            o_reduce(&want, FirstMax::host),
            &format!("sequence zip_map n={n}"),
        );
        assert_eq!(seq.argmax().unwrap(), o_arg(&vals, |a, b| b < a));
        assert_eq!(seq.argmin().unwrap(), o_arg(&vals, |a, b| a < b));
    }
}

// ---- `_with` against the `Op` forms ----------------------------------------------------------

fn int_closure<X: Integer>(op: Op) -> fn(Expr<X>, Expr<X>) -> Expr<X> {
    match op {
        Op::Add => |a: Expr<X>, b: Expr<X>| a + b,
        Op::Max => |a: Expr<X>, b: Expr<X>| a.max(b),
        Op::Min => |a: Expr<X>, b: Expr<X>| a.min(b),
        Op::BitXor => |a: Expr<X>, b: Expr<X>| a ^ b,
        _ => unreachable!("{op:?}"),
    }
}

/// The bits of `x`, every NaN the same (the `_with` forms' expressions give the one NaN of
/// the type, as map closures do; the `Op` forms keep the sign a NaN arose with).
fn key_bits<X: T>(x: X) -> u64 {
    if X::FLOAT && x.f().is_nan() {
        u64::MAX
    } else {
        x.to_bits()
    }
}

/// The same operators with the operands swapped: the same results for these commutative
/// operators, through the general path where the built-in one is recognized.
fn int_closure_swapped<X: Integer>(op: Op) -> fn(Expr<X>, Expr<X>) -> Expr<X> {
    match op {
        Op::Add => |a: Expr<X>, b: Expr<X>| b + a,
        Op::Max => |a: Expr<X>, b: Expr<X>| b.max(a),
        Op::Min => |a: Expr<X>, b: Expr<X>| b.min(a),
        Op::BitXor => |a: Expr<X>, b: Expr<X>| b ^ a,
        _ => unreachable!("{op:?}"),
    }
}

fn bits_of<X: T>(x: Option<X>) -> Option<u64> {
    x.map(key_bits)
}

/// Bitwise equality, any NaN equal to any NaN.
fn same_bits<X: T>(got: &[X], want: &[X], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    if let Some(i) = (0..got.len()).find(|&i| key_bits(got[i]) != key_bits(want[i])) {
        panic!(
            "{what}: first difference at {i} of {}: got {:?}, want {:?}",
            got.len(),
            got[i],
            want[i]
        );
    }
}

/// How `with_vs_op` checks the `_with` results besides against the `Op` forms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Oracle {
    /// Bitwise against the sequential oracle (the draw is exact for the operator in any
    /// order).
    Exact,
    /// Float sums (`Op::Add` only) whose grouping shows in the bits: each result within
    /// `terms * eps * sum |x|` of the exact sum of its terms (the bound of
    /// `reduce_with_f32_random_sum_is_close`, per result), infinite or NaN where the exact sum
    /// is. The exact sums are the same sequential oracles run on the values as f64 (exact
    /// for `Gen::Any`'s: multiples of 2^-10 below 2^9).
    Close,
}

/// The values as f64.
fn wide<X: T>(v: &[X]) -> Vec<f64> {
    v.iter().map(|x| x.f()).collect()
}

/// `Oracle::Close`: `o` runs a sequential oracle of f64 sums on its inputs as `m` maps them (each
/// input slice of `X`: the values, an init, a base); it is run with `m` giving the values, their
/// magnitudes and ones, for the exact sums, the bound's sums of magnitudes and the terms.
fn close_sums<X: T>(got: &[X], what: &str, o: impl Fn(&dyn Fn(&[X]) -> Vec<f64>) -> Vec<f64>) {
    let exact = o(&|v| wide(v));
    let abs = o(&|v| v.iter().map(|x| x.f().abs()).collect());
    let terms = o(&|v| vec![1.0; v.len()]);
    assert_eq!(got.len(), exact.len(), "{what}: length");
    let eps = match std::mem::size_of::<X>() {
        4 => f32::EPSILON as f64,
        8 => f64::EPSILON,
        _ => 1.0 / 128.0,
    };
    for i in 0..got.len() {
        let (g, e) = (got[i].f(), exact[i]);
        let bound = abs[i] * eps * terms[i];
        let ok = if e.is_nan() {
            g.is_nan()
        } else if e.is_infinite() {
            g == e
        } else {
            (g - e).abs() <= bound
        };
        assert!(
            ok,
            "{what}: at {i} of {}: got {g:?}, exact {e:?} (bound {bound:e}, {} terms)",
            got.len(),
            terms[i]
        );
    }
}

/// Every `_with` method with closure `f` against the `Op` form with `op`, bitwise; and against
/// the sequential oracle as `oracle` says; sizes up to `largest`.
fn with_vs_op<X: T>(
    r: &mut Rng,
    op: Op,
    f: fn(Expr<X>, Expr<X>) -> Expr<X>,
    g: Gen,
    oracle: Oracle,
    largest: usize,
) {
    assert!(oracle == Oracle::Exact || (X::FLOAT && op == Op::Add));
    let h = |a: X, b: X| X::from_acc(X::op(op, a.acc(), b.acc()));
    let add = |a: f64, b: f64| a + b;
    let exact = oracle == Oracle::Exact;
    let mut ns = vec![0usize, 1, 33, 1025, 4097, 65537.min(largest)];
    if largest > 65537 {
        ns.push(big(largest));
    }
    for (k, &n) in ns.iter().enumerate() {
        let xs: Vec<X> = draw_vec(r, n, g);
        let s = upload(&xs);
        let what = format!("{op:?} n={n}");

        let got = s.reduce_with(f).unwrap();
        let want = if n == 0 {
            None
        } else {
            Some(s.reduce(op).unwrap())
        };
        assert_eq!(
            bits_of(got),
            bits_of(want),
            "reduce_with vs reduce {what}: got {got:?}, want {want:?}"
        );
        if exact {
            assert_eq!(
                bits_of(got),
                bits_of(o_reduce(&xs, h)),
                "reduce_with {what}"
            );
        } else {
            let got: Vec<X> = got.into_iter().collect();
            close_sums(&got, &format!("reduce_with {what}"), |m| {
                o_reduce(&m(&xs), add).into_iter().collect()
            });
        }
        let init = X::draw(r, g);
        let got = s.fold_with(init, f).unwrap();
        // Empty, `fold_with` is `init` itself and `fold` is `init op identity`: the two differ
        // where that changes bits (-0.0 + 0.0 is +0.0).
        let want = if n == 0 {
            init
        } else {
            s.fold(init, op).unwrap()
        };
        same_bits(&[got], &[want], &format!("fold_with vs fold {what}"));
        if exact {
            same_bits(
                &[got],
                &[o_fold(init, &xs, h)],
                &format!("fold_with {what}"),
            );
        } else {
            close_sums(&[got], &format!("fold_with {what}"), |m| {
                vec![o_fold(m(&[init])[0], &m(&xs), add)]
            });
        }

        let got = s.inclusive_scan_with(f).unwrap().to_vec().unwrap();
        let want = s.inclusive_scan(op).unwrap().to_vec().unwrap();
        same_bits(&got, &want, &format!("inclusive_scan_with vs Op {what}"));
        if exact {
            same_bits(
                &got,
                &o_incl(&xs, h),
                &format!("inclusive_scan_with {what}"),
            );
        } else {
            close_sums(&got, &format!("inclusive_scan_with {what}"), |m| {
                o_incl(&m(&xs), add)
            });
        }
        let got = s.exclusive_scan_with(init, f).unwrap().to_vec().unwrap();
        let want = s.exclusive_scan(init, op).unwrap().to_vec().unwrap();
        same_bits(&got, &want, &format!("exclusive_scan_with vs Op {what}"));
        if exact {
            same_bits(
                &got,
                &o_excl(&xs, init, h),
                &format!("exclusive_scan_with {what}"),
            );
        } else {
            close_sums(&got, &format!("exclusive_scan_with {what}"), |m| {
                o_excl(&m(&xs), m(&[init])[0], add)
            });
        }

        let p = DENSITIES[k % 5];
        let mut fl = flags(r, n, p);
        if k % 2 == 0 && n > 0 {
            fl[0] = 0;
        }
        let fs = upload(&fl);
        let w = format!("{what} density {p}");
        let got = s
            .segmented_inclusive_scan_with(&fs, f)
            .unwrap()
            .to_vec()
            .unwrap();
        let want = s
            .segmented_inclusive_scan(&fs, op)
            .unwrap()
            .to_vec()
            .unwrap();
        same_bits(
            &got,
            &want,
            &format!("segmented_inclusive_scan_with vs Op {w}"),
        );
        if exact {
            same_bits(
                &got,
                &o_seg_incl(&xs, &fl, h),
                &format!("segmented_inclusive_scan_with {w}"),
            );
        } else {
            close_sums(&got, &format!("segmented_inclusive_scan_with {w}"), |m| {
                o_seg_incl(&m(&xs), &fl, add)
            });
        }
        let got = s
            .segmented_exclusive_scan_with(&fs, init, f)
            .unwrap()
            .to_vec()
            .unwrap();
        let want = s
            .segmented_exclusive_scan(&fs, init, op)
            .unwrap()
            .to_vec()
            .unwrap();
        same_bits(
            &got,
            &want,
            &format!("segmented_exclusive_scan_with vs Op {w}"),
        );
        if exact {
            same_bits(
                &got,
                &o_seg_excl(&xs, &fl, init, h),
                &format!("segmented_exclusive_scan_with {w}"),
            );
        } else {
            close_sums(&got, &format!("segmented_exclusive_scan_with {w}"), |m| {
                o_seg_excl(&m(&xs), &fl, m(&[init])[0], add)
            });
        }
        let got = s.segmented_reduce_with(&fs, f).unwrap().to_vec().unwrap();
        let want = s.segmented_reduce(&fs, op).unwrap().to_vec().unwrap();
        same_bits(&got, &want, &format!("segmented_reduce_with vs Op {w}"));
        if exact {
            same_bits(
                &got,
                &o_seg_reduce(&xs, &fl, h),
                &format!("segmented_reduce_with {w}"),
            );
        } else {
            close_sums(&got, &format!("segmented_reduce_with {w}"), |m| {
                o_seg_reduce(&m(&xs), &fl, add)
            });
        }

        let slots = [1usize, 16, n / 16 + 1][k % 3];
        let idx: Vec<u32> = (0..n).map(|_| r.below(slots as u64) as u32).collect();
        let base: Vec<X> = draw_vec(r, slots + 3, g);
        let (is, bs) = (upload(&idx), upload(&base));
        let got = s
            .scatter_combine_with(&is, &bs, f)
            .unwrap()
            .to_vec()
            .unwrap();
        let want = s.scatter_combine(&is, &bs, op).unwrap().to_vec().unwrap();
        same_bits(
            &got,
            &want,
            &format!("scatter_combine_with vs Op {what} slots={slots}"),
        );
        let idx64: Vec<u64> = idx.iter().map(|&i| i as u64).collect();
        if exact {
            same_bits(
                &got,
                &o_scatter(&xs, &idx64, &base, h),
                &format!("scatter_combine_with {what} slots={slots}"),
            );
        } else {
            close_sums(
                &got,
                &format!("scatter_combine_with {what} slots={slots}"),
                |m| o_scatter(&m(&xs), &idx64, &m(&base), add),
            );
        }

        let keys: Vec<u16> = key_runs(r, n).into_iter().map(|k| k as u16).collect();
        let ks = upload(&keys);
        let (gk, gv) = ks.reduce_by_key_with(&s, f).unwrap();
        let (wk, wv) = ks.reduce_by_key(&s, op).unwrap();
        assert_eq!(gk.to_vec().unwrap(), wk.to_vec().unwrap(), "{what}: keys");
        let gv = gv.to_vec().unwrap();
        same_bits(
            &gv,
            &wv.to_vec().unwrap(),
            &format!("reduce_by_key_with vs Op {what}"),
        );
        if exact {
            same_bits(
                &gv,
                &o_by_key(&keys, &xs, h).1,
                &format!("reduce_by_key_with {what}"),
            );
        } else {
            close_sums(&gv, &format!("reduce_by_key_with {what}"), |m| {
                o_by_key(&keys, &m(&xs), add).1
            });
        }
    }
}

fn int_with_vs_op<X: T + Integer>() {
    let mut r = Rng::new(std::any::type_name::<X>());
    for op in [Op::Add, Op::Max, Op::Min, Op::BitXor] {
        with_vs_op::<X>(
            &mut r,
            op,
            int_closure::<X>(op),
            Gen::Any,
            Oracle::Exact,
            150_001,
        );
        with_vs_op::<X>(
            &mut r,
            op,
            int_closure_swapped::<X>(op),
            Gen::Any,
            Oracle::Exact,
            20_001,
        );
    }
}

mod with_vs_op_int {
    #[test]
    fn u8() {
        super::int_with_vs_op::<u8>()
    }
    #[test]
    fn i16() {
        super::int_with_vs_op::<i16>()
    }
    #[test]
    fn i32() {
        super::int_with_vs_op::<i32>()
    }
    #[test]
    fn u32() {
        super::int_with_vs_op::<u32>()
    }
    #[test]
    fn i64() {
        super::int_with_vs_op::<i64>()
    }
    #[test]
    fn u64() {
        super::int_with_vs_op::<u64>()
    }
}

/// Float sums: exact draws against the oracle too; then ordinary random values (mixed
/// magnitudes, with and without infinities) against the `Op` forms bit for bit and against the
/// oracle: f32, where the grouping shows in the bits, within the rounding bound
/// (`Oracle::Close`); f64 exactly (every sum of these values is exact in f64, in any grouping,
/// signed zeros included); and `b + a` on exact draws.
fn float_add_with_vs_op<X: T>() {
    let mut r = Rng::new(std::any::type_name::<X>());
    let add = |a: Expr<X>, b: Expr<X>| a + b;
    with_vs_op::<X>(&mut r, Op::Add, add, Gen::SumExact, Oracle::Exact, 150_001);
    let any = if std::mem::size_of::<X>() == 8 {
        Oracle::Exact
    } else {
        Oracle::Close
    };
    with_vs_op::<X>(&mut r, Op::Add, add, Gen::Any, any, 150_001);
    // Finite values: long prefixes stay finite, so the bound applies all along the scans.
    with_vs_op::<X>(&mut r, Op::Add, add, Gen::Finite, any, 150_001);
    // Swapped operands: exact sums, the same in any grouping.
    let swapped = |a: Expr<X>, b: Expr<X>| b + a;
    with_vs_op::<X>(
        &mut r,
        Op::Add,
        swapped,
        Gen::SumExact,
        Oracle::Exact,
        70_001,
    );
}

#[test]
fn with_vs_op_add_f32() {
    float_add_with_vs_op::<f32>()
}
#[test]
fn with_vs_op_add_f64() {
    float_add_with_vs_op::<f64>()
}

/// Sums of ordinary random f32 values by `reduce_with`: the same bits as `reduce(Op::Add)`,
/// and close to the exact sum.
#[test]
fn reduce_with_f32_random_sum_is_close() {
    let mut r = Rng::new("reduce_with f32");
    for n in [1000usize, big(300_007)] {
        let xs: Vec<f32> = (0..n).map(|_| r.unit() as f32 - 0.25).collect();
        let exact: f64 = xs.iter().map(|&x| x as f64).sum();
        let abs: f64 = xs.iter().map(|&x| (x as f64).abs()).sum();
        let s = upload(&xs);
        let got = s.reduce_with(|a, b| a + b).unwrap().unwrap();
        assert_eq!(got.to_bits(), s.reduce(Op::Add).unwrap().to_bits(), "n={n}");
        let bound = abs * f32::EPSILON as f64 * n as f64;
        assert!(
            (got as f64 - exact).abs() <= bound,
            "n={n}: got {got}, exact {exact}"
        );
    }
}

// ---- reduce_by_key_with: float keys, tuple values ------------------------------------------

/// Runs of float keys are bitwise: NaN equals NaN of the same bits, -0.0 and 0.0 differ.
#[test]
fn reduce_by_key_with_float_keys_and_tuple_values() {
    let mut r = Rng::new("by key f32");
    let pool = [0.0f32, -0.0, f32::NAN, -f32::NAN, 1.0, f32::INFINITY];
    for n in [0usize, 1, 31, 1025, 65537] {
        let mut keys: Vec<f32> = Vec::with_capacity(n);
        while keys.len() < n {
            let k = pool[r.below(pool.len() as u64) as usize];
            let len = 1 + r.below(6) as usize;
            keys.extend(std::iter::repeat_n(k, len.min(n - keys.len())));
        }
        let vals: Vec<(i64, u32, u16)> = (0..n).map(|_| Heisenberg::draw(&mut r)).collect();
        let (gk, gv) = upload(&keys)
            .reduce_by_key_with(&up(&vals), Heisenberg::dev)
            .unwrap();
        let (wk, wv) = o_by_key(&keys, &vals, Heisenberg::host);
        assert_bits(&gk.to_vec().unwrap(), &wk, &format!("keys n={n}"));
        check::<Heisenberg>(&gv.to_vec().unwrap(), &wv, &format!("values n={n}"));
        let vals: Vec<(u32, u8)> = (0..n).map(|_| SegSum::draw(&mut r)).collect();
        let (_, gv) = upload(&keys)
            .reduce_by_key_with(&up(&vals), SegSum::dev)
            .unwrap();
        check::<SegSum>(
            &gv.to_vec().unwrap(),
            &o_by_key(&keys, &vals, SegSum::host).1,
            &format!("pair values n={n}"),
        );
    }
}

// ---- argmin / argmax -----------------------------------------------------------------------

fn is_nan<X: T>(x: X) -> bool {
    X::FLOAT && x.f().is_nan()
}

/// `a < b` by ordinary comparison (floats as values: -0.0 == 0.0; NaN never less).
fn lt<X: T>(a: X, b: X) -> bool {
    if X::FLOAT {
        a.f() < b.f()
    } else {
        a.total(&b) == Ordering::Less
    }
}

/// The first index whose element is `better` than every earlier non-NaN one, NaNs skipped;
/// 0 if all are NaN; None when empty.
fn o_arg<X: Copy>(xs: &[X], better: impl Fn(X, X) -> bool) -> Option<usize> {
    o_arg_nan(xs, better, |_| false)
}

fn o_arg_nan<X: Copy>(
    xs: &[X],
    better: impl Fn(X, X) -> bool,
    nan: impl Fn(X) -> bool,
) -> Option<usize> {
    if xs.is_empty() {
        return None;
    }
    let mut best: Option<usize> = None;
    for (i, &x) in xs.iter().enumerate() {
        if nan(x) {
            continue;
        }
        match best {
            Some(b) if !better(x, xs[b]) => {}
            _ => best = Some(i),
        }
    }
    Some(best.unwrap_or(0))
}

fn o_argmin<X: T>(xs: &[X]) -> Option<usize> {
    o_arg_nan(xs, |a, b| lt(a, b), is_nan)
}
fn o_argmax<X: T>(xs: &[X]) -> Option<usize> {
    o_arg_nan(xs, |a, b| lt(b, a), is_nan)
}

fn check_arg<X: T>(xs: &[X], what: &str) {
    let s = upload(xs);
    let n = xs.len();
    assert_eq!(s.argmin().unwrap(), o_argmin(xs), "argmin {what} n={n}");
    assert_eq!(s.argmax().unwrap(), o_argmax(xs), "argmax {what} n={n}");
}

fn arg_extremes<X: T>() {
    let mut r = Rng::new(std::any::type_name::<X>());
    let nan = X::from_acc_f(f64::NAN);
    let mut ns: Vec<usize> = small_sizes().to_vec();
    ns.extend([1023, 1024, 65535, big(200_001)]);
    for &n in &ns {
        // Anything (floats: NaN, +-0, +-inf, subnormals among them).
        check_arg(&draw_vec::<X>(&mut r, n, Gen::Special), "special");
        // Ties: four values.
        let pool: Vec<X> = draw_vec(&mut r, 4, Gen::Special);
        let xs: Vec<X> = (0..n).map(|_| pool[r.below(4) as usize]).collect();
        check_arg(&xs, "ties");
        // One value everywhere but three places (floats: NaN everywhere but three).
        let fill = if X::FLOAT {
            nan
        } else {
            X::draw(&mut r, Gen::Any)
        };
        let mut xs = vec![fill; n];
        for _ in 0..3 {
            if n > 0 {
                let i = r.below(n as u64) as usize;
                xs[i] = X::draw(&mut r, Gen::Special);
            }
        }
        check_arg(&xs, "sparse");
        // All NaN (floats), all equal (integers): index 0.
        check_arg(&vec![fill; n], "uniform");
        // Two equal extremes far apart: the first wins.
        if n > 2 {
            let mut xs: Vec<X> = draw_vec(&mut r, n, Gen::SumExact);
            let (i, j) = {
                let a = r.below(n as u64) as usize;
                let b = r.below(n as u64) as usize;
                (a.min(b), a.max(b))
            };
            // -100 (0 for unsigned types) and 100; integer draws clamped strictly between.
            let (lo, hi) = (X::from_acc_f(-100.0), X::from_acc_f(100.0));
            if !X::FLOAT {
                for x in xs.iter_mut() {
                    let inside = lt(lo, *x) && lt(*x, hi);
                    if !inside {
                        *x = X::from_acc_f(7.0);
                    }
                }
            }
            xs[i] = lo;
            xs[j] = lo;
            let k = r.below(n as u64) as usize;
            if k != i && k != j {
                xs[k] = hi;
            }
            check_arg(&xs, "two extremes");
        }
    }
    // Lazy: a map of a stored sequence.
    let xs: Vec<X> = draw_vec(&mut r, 70_001, Gen::Special);
    let got = upload(&xs).map(|x| x.max(x)).unwrap();
    assert!(!got.is_stored());
    assert_eq!(got.argmin().unwrap(), o_argmin(&xs), "argmin of a lazy map");
    assert_eq!(got.argmax().unwrap(), o_argmax(&xs), "argmax of a lazy map");
    let v = upload(&xs).slice(5..);
    assert_eq!(v.argmin().unwrap(), o_argmin(&xs[5..]), "argmin of a view");
    assert_eq!(v.argmax().unwrap(), o_argmax(&xs[5..]), "argmax of a view");
}
for_types!(argminmax, arg_extremes);

/// Signed zeros tie, NaNs are skipped wherever they are, all-NaN is index 0.
fn arg_float_specials<X: T>() {
    let v = |xs: &[f64]| -> Vec<X> { xs.iter().map(|&x| X::from_acc_f(x)).collect() };
    let nan = f64::NAN;
    let inf = f64::INFINITY;
    let cases: Vec<Vec<f64>> = vec![
        vec![],
        vec![nan],
        vec![nan, -nan, nan],
        vec![0.0, -0.0],
        vec![-0.0, 0.0],
        vec![nan, -0.0, 0.0, nan],
        vec![nan, 3.0, 1.0, nan, 1.0, 3.0],
        vec![1.0, -inf, inf, -inf, inf],
        vec![nan, inf, nan, -inf, nan],
        vec![5.0, nan],
        vec![-1.0, -2.0, -2.0, nan, -2.0],
    ];
    for c in &cases {
        let xs = v(c);
        check_arg(&xs, &format!("{c:?}"));
    }
    // The oracle itself, on the cases that state the rules.
    assert_eq!(o_argmin(&v(&[nan, -nan, nan])), Some(0));
    assert_eq!(o_argmax(&v(&[0.0, -0.0])), Some(0));
    assert_eq!(o_argmin(&v(&[-0.0, 0.0])), Some(0));
    assert_eq!(o_argmin(&v(&[nan, 3.0, 1.0, nan, 1.0])), Some(2));
    // Many NaNs with one value deep inside, past tile edges.
    for n in [4097usize, 65537, 70_001] {
        for pos in [0, 1, 4095, 4096, 8191, 8192, n - 1]
            .into_iter()
            .filter(|&p| p < n)
        {
            let mut xs = vec![X::from_acc_f(nan); n];
            xs[pos] = X::from_acc_f(-0.0);
            if pos + 7 < n {
                xs[pos + 7] = X::from_acc_f(0.0);
            }
            check_arg(&xs, &format!("NaNs with -0.0 at {pos}"));
        }
    }
}

#[test]
fn arg_specials_f32() {
    arg_float_specials::<f32>()
}
#[test]
fn arg_specials_f64() {
    arg_float_specials::<f64>()
}
#[test]
fn arg_specials_f16() {
    arg_float_specials::<devseq::f16>()
}
#[test]
fn arg_specials_bf16() {
    arg_float_specials::<devseq::bf16>()
}

// ---- errors --------------------------------------------------------------------------------

fn lm<R: std::fmt::Debug>(r: devseq::Result<R>, expected: usize, actual: usize, what: &str) {
    assert!(
        matches!(r, Err(Error::LengthMismatch { expected: e, actual: a }) if (e, a) == (expected, actual)),
        "{what}: {r:?}"
    );
}

#[test]
fn with_forms_check_lengths() {
    let v = vec![(1u32, 2u8), (3, 4), (5, 6)];
    let a = up(&v);
    let f = SegSum::dev;
    for fl in [vec![1u8, 0], vec![1u8, 0, 0, 1]] {
        let m = fl.len();
        let fs = upload(&fl);
        lm(a.segmented_inclusive_scan_with(&fs, f), 3, m, "seg incl");
        lm(
            a.segmented_exclusive_scan_with(&fs, (0, 0), f),
            3,
            m,
            "seg excl",
        );
        lm(a.segmented_reduce_with(&fs, f), 3, m, "seg reduce");
        // The Op forms say the same.
        let (x, _) = a.unzip();
        lm(x.segmented_reduce(&fs, Op::Add), 3, m, "Op seg reduce");
    }
    let base = up(&[(0u32, 0u8); 8]);
    lm(
        a.scatter_combine_with(&upload(&[0u32, 1]), &base, f),
        3,
        2,
        "scatter_combine_with u32",
    );
    lm(
        a.scatter_combine_with(&upload(&[0u64, 1, 2, 3]), &base, f),
        3,
        4,
        "scatter_combine_with u64",
    );
    lm(
        upload(&[1u32, 1]).reduce_by_key_with(&a, f),
        2,
        3,
        "reduce_by_key_with",
    );
    lm(
        upload(&[1u32, 1]).reduce_by_key(&upload(&[1u32, 2, 3]), Op::Add),
        2,
        3,
        "reduce_by_key (Op)",
    );
    assert_eq!(a.to_vec().unwrap(), v);
    assert_eq!(base.to_vec().unwrap(), [(0, 0); 8]);
}

fn out_of_range<I: Index + std::fmt::Debug>(to: fn(u64) -> I) {
    let v = vec![(1i64, 2u32, 3u16), (4, 5, 6), (7, 8, 9)];
    let xs = up(&v);
    let b = vec![(10i64, 11u32, 12u16); 4];
    let base = up(&b);
    for bad in [
        vec![0u64, 4, 1],
        vec![9, 0, 0],
        vec![1, 2, 400],
        vec![5, 4, 9],
    ] {
        let want = *bad.iter().find(|&&k| k >= 4).unwrap();
        let idx: Vec<I> = bad.iter().map(|&k| to(k)).collect();
        match xs.scatter_combine_with(&upload(&idx), &base, Heisenberg::dev) {
            Err(Error::IndexOutOfBounds { index, len: 4 }) => {
                assert_eq!(index, want, "{bad:?}: the index at the lowest position")
            }
            other => panic!("{bad:?}: {other:?}"),
        }
    }
    assert_eq!(base.to_vec().unwrap(), b, "base intact");
    assert_eq!(xs.to_vec().unwrap(), v, "values intact");
    let empty = up::<(i64, u32, u16)>(&[]);
    let zeros: Vec<I> = vec![to(0); 3];
    assert!(matches!(
        xs.scatter_combine_with(&upload(&zeros), &empty, Heisenberg::dev),
        Err(Error::IndexOutOfBounds { index: 0, len: 0 })
    ));
    // In range after all: the result is right, the base still intact.
    let idx: Vec<I> = [3u64, 0, 3].iter().map(|&k| to(k)).collect();
    let got = xs
        .scatter_combine_with(&upload(&idx), &base, Heisenberg::dev)
        .unwrap()
        .to_vec()
        .unwrap();
    assert_eq!(
        got,
        o_scatter(&v, &[3, 0, 3], &b, Heisenberg::host),
        "in range"
    );
    assert_eq!(base.to_vec().unwrap(), b, "base intact");
}

#[test]
fn scatter_combine_with_out_of_range_u32() {
    out_of_range::<u32>(|k| k as u32)
}
#[test]
fn scatter_combine_with_out_of_range_u64() {
    out_of_range::<u64>(|k| k)
}

/// A combiner's constants and the initial item reach the kernel by value up to 32 words
/// together (constants, then as many words as the item has components, the head flag of the
/// segmented forms included) and through device memory past that: `max(a, b, c_0, .., c_m-1)`
/// (associative: the maximum of the constants is one more operand) with the largest constant
/// last and the initial item above it, on both sides of the limit for the plain forms (item of
/// one word: 31 and 32 constants) and the segmented ones (two words: 30 and 31).
#[test]
fn constants_on_both_sides_of_the_by_value_limit() {
    let mut r = Rng::new("constants by value");
    for m in [30usize, 31, 32, 40] {
        let cs: Vec<u32> = (0..m)
            .map(|i| if i + 1 == m { 500 } else { 3 * i as u32 + 1 })
            .collect();
        let f = |a: Expr<u32>, b: Expr<u32>| cs.iter().fold(a.max(b), |x, &c| x.max(c));
        let host = |a: u32, b: u32| a.max(b).max(500);
        for n in [0usize, 1, 33, 4097, big(300_001)] {
            let xs: Vec<u32> = (0..n).map(|_| r.below(1000) as u32).collect();
            let fl: Vec<u8> = (0..n).map(|_| (r.below(50) == 0) as u8).collect();
            let (s, fs) = (upload(&xs), upload(&fl));
            let w = format!("{m} constants, n = {n}");
            let got = s.reduce_with(f).unwrap();
            assert_eq!(got, o_reduce(&xs, host), "reduce_with {w}");
            let got = s.inclusive_scan_with(f).unwrap().to_vec().unwrap();
            assert_eq!(got, o_incl(&xs, host), "inclusive_scan_with {w}");
            let got = s.exclusive_scan_with(700, f).unwrap().to_vec().unwrap();
            assert_eq!(got, o_excl(&xs, 700, host), "exclusive_scan_with {w}");
            let got = s
                .segmented_exclusive_scan_with(&fs, 700, f)
                .unwrap()
                .to_vec()
                .unwrap();
            assert_eq!(
                got,
                o_seg_excl(&xs, &fl, 700, host),
                "segmented_exclusive_scan_with {w}"
            );
            let got = s
                .segmented_inclusive_scan_with(&fs, f)
                .unwrap()
                .to_vec()
                .unwrap();
            assert_eq!(
                got,
                o_seg_incl(&xs, &fl, host),
                "segmented_inclusive_scan_with {w}"
            );
        }
    }
}

/// f16 and bf16 items are combined in f32 and rounded once where stored: pairs (sum, max) of
/// small whole numbers on inputs long enough for every path (the host's runs side by side and
/// the items after them, several chunks; the GPU's tiles). f32 holds every sum exactly, so each
/// result is the exact one rounded once, whatever the grouping.
fn half_pairs_round_once<X: T>() {
    type P<X> = (devseq::Expr<X>, devseq::Expr<X>);
    let f = |(a, p): P<X>, (b, q): P<X>| (a + b, p.max(q));
    let o = |a: (f64, f64), b: (f64, f64)| (a.0 + b.0, a.1.max(b.1));
    let mut r = Rng::new("half_pairs_round_once");
    for n in [1usize, 31, 33, 1023, 1025, 16383, 16385, 70_001] {
        let xs: Vec<(f64, f64)> = (0..n)
            .map(|_| {
                let v = r.below(3) as f64;
                (v, v)
            })
            .collect();
        let fl: Vec<u8> = (0..n).map(|_| (r.below(40) == 0) as u8).collect();
        let s = upload(&xs.iter().map(|x| X::from_acc_f(x.0)).collect::<Vec<X>>())
            .map(|x| (x, x))
            .unwrap();
        let fs = upload(&fl);
        let check = |got: Vec<(X, X)>, want: Vec<(f64, f64)>, what: &str| {
            assert_eq!(got.len(), want.len(), "{what}, n = {n}: length");
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                let ok = X::same(g.0, X::from_acc_f(w.0)) && X::same(g.1, X::from_acc_f(w.1));
                assert!(
                    ok,
                    "{what}, n = {n}, item {i}: got {g:?}, want {w:?} rounded"
                );
            }
        };
        let init = (X::from_acc_f(1.0), X::from_acc_f(0.0));
        let got = s
            .reduce_with(f)
            .unwrap()
            .map(|g| vec![g])
            .unwrap_or_default();
        let want: Vec<(f64, f64)> = o_reduce(&xs, o).into_iter().collect();
        check(got, want, "reduce_with");
        let got = s.inclusive_scan_with(f).unwrap().to_vec().unwrap();
        check(got, o_incl(&xs, o), "inclusive_scan_with");
        let got = s.exclusive_scan_with(init, f).unwrap().to_vec().unwrap();
        check(got, o_excl(&xs, (1.0, 0.0), o), "exclusive_scan_with");
        let got = s.segmented_inclusive_scan_with(&fs, f).unwrap();
        check(
            got.to_vec().unwrap(),
            o_seg_incl(&xs, &fl, o),
            "segmented inclusive",
        );
        let got = s.segmented_exclusive_scan_with(&fs, init, f).unwrap();
        let want = o_seg_excl(&xs, &fl, (1.0, 0.0), o);
        check(got.to_vec().unwrap(), want, "segmented exclusive");
    }
}
crate::for_each_type!(half_pairs, half_pairs_round_once, [f16, bf16, f32]);
