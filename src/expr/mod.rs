//! `Expr<T>`: symbolic element values that `map` and `zip_map` closures compute with.
//!
//! A map closure is called once, on the host, with an `Expr` standing for "the element". Each
//! operator on an `Expr` appends a node to a graph (a DAG: a value used twice is one node);
//! the graph the closure returns becomes part of a lazy sequence's source (`src/source.rs`),
//! which the CUDA backend prints as C++ (`cuda.rs`) and the host backend interprets
//! (`eval.rs`). Both give the results the API describes.

pub(crate) mod combiner;
pub(crate) mod cuda;
pub(crate) mod eval;
pub(crate) mod graph;

use crate::error::{Error, Result};
use crate::item::{Element, Expr, Exprs, Float, Integer, ScalarType};
use graph::{Bin, Builder, Cmp, Kind, Node, Un};
use std::cell::RefCell;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU32, Ordering};

struct Tracer {
    id: u32,
    graph: Builder,
    params: Vec<u64>,
    error: Option<String>,
}

thread_local! {
    static STACK: RefCell<Vec<Tracer>> = const { RefCell::new(Vec::new()) };
}

static NEXT_GRAPH: AtomicU32 = AtomicU32::new(1);

/// The id of graphs that do not exist: an `Expr` made outside any map closure.
const NO_GRAPH: u32 = 0;

/// Appends `node` to graph `graph` (which must be the innermost one being traced) and returns
/// its index, reusing an equal node where there is one. A node of kind `Param` gets the next
/// parameter number, with `value` as its value.
fn push(graph: u32, node: Node, value: u64) -> u32 {
    STACK.with(|s| {
        let mut s = s.borrow_mut();
        let Some(b) = s.last_mut() else {
            return u32::MAX;
        };
        if b.id != graph {
            if b.error.is_none() {
                b.error =
                    Some("an Expr was used outside the map closure that received it".to_string());
            }
            return u32::MAX;
        }
        let node = match node.kind {
            Kind::Param(_) => {
                b.params.push(value);
                Node {
                    ty: node.ty,
                    kind: Kind::Param(b.params.len() as u32 - 1),
                }
            }
            // The bits of a computed float are those of its canonical NaN where it is one.
            Kind::Bits(a)
                if b.graph
                    .nodes
                    .get(a as usize)
                    .is_some_and(|n| n.ty.is_float())
                    && !graph::passes(&b.graph.nodes, a) =>
            {
                let ty = b.graph.nodes[a as usize].ty;
                let c = b.graph.add(Node {
                    ty,
                    kind: Kind::Canon(a),
                });
                Node {
                    ty: node.ty,
                    kind: Kind::Bits(c),
                }
            }
            _ => node,
        };
        b.graph.add(node)
    })
}

/// The graph of an operation on operands of graphs `a` and `b`: `NO_GRAPH` (which `push`
/// reports) where they differ.
fn joint(a: u32, b: u32) -> u32 {
    if a == b { a } else { NO_GRAPH }
}

/// Makes the trace of graph `graph` fail with `why` (the closure's `map` reports it).
fn refuse(graph: u32, why: String) {
    STACK.with(|s| {
        if let Some(t) = s.borrow_mut().last_mut()
            && t.id == graph
            && t.error.is_none()
        {
            t.error = Some(why);
        }
    });
}

/// The graph currently being traced, or `NO_GRAPH`.
fn current_graph() -> u32 {
    STACK.with(|s| s.borrow().last().map_or(NO_GRAPH, |b| b.id))
}

/// Pops the tracer on drop, so a panicking closure leaves the stack as it found it.
struct Guard;
impl Drop for Guard {
    fn drop(&mut self) {
        STACK.with(|s| s.borrow_mut().pop());
    }
}

/// A traced closure: its nodes (over `Arg` nodes), the node of each component of its result,
/// and the values of its `Param` nodes.
#[derive(Debug, Clone)]
pub(crate) struct Traced {
    pub nodes: Vec<Node>,
    pub outs: Vec<u32>,
    pub params: Vec<u64>,
}

impl Traced {
    /// The graph of result component `k` alone.
    #[cfg(test)]
    pub fn graph(&self, k: usize) -> graph::Graph {
        let mut b = Builder::default();
        for n in &self.nodes {
            b.add(*n);
        }
        b.finish(self.outs[k])
    }
}

/// Traces `f`, which receives the arguments as nodes of graph `id` (node `k` is argument `k`,
/// of type `args[k]`), and returns the nodes of the values it returns. Generic only in the
/// call of `f`: what comes before and after is `begin_trace` and `end_trace`, compiled once.
pub(crate) fn trace<R: Exprs>(
    args: &[ScalarType],
    f: impl FnOnce(&[u32], u32) -> R,
) -> Result<Traced> {
    let (id, guard, arg_nodes) = begin_trace(args);
    let out = f(&arg_nodes, id).nodes();
    end_trace(id, guard, out)
}

/// A new tracer on this thread's stack (popped when the guard drops), and its argument nodes.
fn begin_trace(args: &[ScalarType]) -> (u32, Guard, Vec<u32>) {
    let id = NEXT_GRAPH.fetch_add(1, Ordering::Relaxed).max(1);
    STACK.with(|s| {
        s.borrow_mut().push(Tracer {
            id,
            graph: Builder::default(),
            params: Vec::new(),
            error: None,
        })
    });
    let guard = Guard;
    let arg_nodes: Vec<u32> = args
        .iter()
        .enumerate()
        .map(|(k, &ty)| {
            let kind = Kind::Arg(k as u8);
            push(id, Node { ty, kind }, 0)
        })
        .collect();
    (id, guard, arg_nodes)
}

/// The traced graph `id`, taken from the stack, with the nodes `out` that the closure returned.
fn end_trace(id: u32, guard: Guard, out: Vec<(u32, u32)>) -> Result<Traced> {
    let tracer = STACK.with(|s| {
        let mut s = s.borrow_mut();
        s.last_mut().map(|t| Tracer {
            id: t.id,
            graph: std::mem::take(&mut t.graph),
            params: std::mem::take(&mut t.params),
            error: t.error.take(),
        })
    });
    drop(guard);
    let Some(t) = tracer else {
        return Err(Error::Internal("the tracer's stack was empty".into()));
    };
    if let Some(e) = t.error {
        return Err(Error::InvalidArgument(e));
    }
    if out
        .iter()
        .any(|&(g, n)| g != id || n as usize >= t.graph.nodes.len())
    {
        return Err(Error::InvalidArgument(
            "the closure returned an Expr that it did not compute from its arguments".to_string(),
        ));
    }
    Ok(Traced {
        nodes: t.graph.nodes,
        outs: out.into_iter().map(|(_, n)| n).collect(),
        params: t.params,
    })
}

impl Expr<u32> {
    /// A loop inside an element function: `state = f(k, state)` for `k = 0, 1, …, count - 1`,
    /// from `init`, and the state after the last iteration (`init` where `count` is 0). The
    /// state is an `Expr` or a tuple of them; `count` a `u32` or an `Expr<u32>` (each element
    /// may loop a different number of times).
    ///
    /// `f` is traced once, and the loop is compiled as a loop: the state stays in registers,
    /// and the kernel's code does not grow with `count` (where a Rust `for` around `Expr`
    /// operations would trace `count` copies of its body). The host backend runs the same
    /// loop, with the same bits for the exact operations.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq, Expr};
    /// let dev = Device::auto()?;
    /// // The first 1 + (i % 5) terms of a geometric series, and how many were added.
    /// let xs = DeviceSeq::<u32>::sequence(&dev, 6)?;
    /// let sums = xs.map(|i| {
    ///     let init = (Expr::constant(0.0f32), Expr::constant(1.0f32), Expr::constant(0u32));
    ///     let (sum, _, n) = Expr::fold_range(i % 5 + 1, init, |_, (sum, term, n)| {
    ///         (sum + term, term * 0.5, n + 1)
    ///     });
    ///     (sum, n)
    /// })?;
    /// assert_eq!(sums.to_vec()?, [(1.0, 1), (1.5, 2), (1.75, 3), (1.875, 4), (1.9375, 5), (1.0, 1)]);
    /// // A linear congruential generator run 1000 times an element, its state in registers.
    /// let last = xs.map(|i| Expr::fold_range(1000u32, i + 1, |_, x| x * 1_664_525 + 1_013_904_223))?;
    /// let mut want = 3u32;
    /// for _ in 0..1000 { want = want.wrapping_mul(1_664_525).wrapping_add(1_013_904_223); }
    /// assert_eq!(last.to_vec()?[2], want);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn fold_range<S: Exprs>(
        count: impl IntoExpr<u32>,
        init: S,
        f: impl Fn(Expr<u32>, S) -> S,
    ) -> S {
        let inits = init.nodes();
        let count = count.into_expr(inits[0].0);
        let graph = inits.iter().fold(count.graph, |g, &(h, _)| joint(g, h));
        let types = <S::Item as crate::item::Item>::TYPES;
        let node = |ty, kind| push(graph, Node { ty, kind }, 0);
        let vars: Vec<u32> = inits
            .iter()
            .zip(types)
            .map(|(&(_, init), &ty)| node(ty, Kind::LoopVar(init)))
            .collect();
        let index = node(ScalarType::U32, Kind::LoopIndex(count.id));
        let k = Expr::<u32> {
            id: index,
            graph,
            _t: PhantomData,
        };
        let next = f(k, S::from_nodes(graph, &vars)).nodes();
        if next.iter().any(|&(g, _)| g != graph) {
            refuse(
                graph,
                "fold_range's function returned an Expr it did not compute from its arguments"
                    .into(),
            );
        }
        for ((&var, &(_, v)), &ty) in vars.iter().zip(&next).zip(types) {
            node(ty, Kind::LoopNext(var, v));
        }
        let end = node(ScalarType::U32, Kind::LoopEnd(index));
        let outs: Vec<u32> = vars
            .iter()
            .zip(types)
            .map(|(&var, &ty)| node(ty, Kind::LoopOut(var, end)))
            .collect();
        S::from_nodes(graph, &outs)
    }
}

/// Something that can be the operand of an `Expr<T>` operation: an `Expr<T>` or a plain `T`.
///
/// # Examples
///
/// ```
/// use devseq::{Device, DeviceSeq, Expr, IntoExpr};
/// // A helper whose bounds may be `Expr`s or plain values, as the built-in operations' operands.
/// fn clamp(x: Expr<f32>, lo: impl IntoExpr<f32>, hi: impl IntoExpr<f32>) -> Expr<f32> {
///     x.max(lo).min(hi)
/// }
/// let dev = Device::auto()?;
/// let xs = DeviceSeq::from_slice(&dev, &[-2.0f32, 0.5, 3.0])?;
/// let ys = DeviceSeq::from_slice(&dev, &[1.0f32, 1.0, 2.0])?;
/// assert_eq!(xs.map(|x| clamp(x, 0.0, 1.0))?.to_vec()?, [0.0, 0.5, 1.0]);
/// assert_eq!(xs.zip_map(&ys, |x, y| clamp(x, -y, y))?.to_vec()?, [-1.0, 0.5, 2.0]);
/// # Ok::<(), devseq::Error>(())
/// ```
pub trait IntoExpr<T: Element> {
    #[doc(hidden)]
    fn into_expr(self, graph: u32) -> Expr<T>;
}

impl<T: Element> IntoExpr<T> for Expr<T> {
    fn into_expr(self, _graph: u32) -> Expr<T> {
        self
    }
}

impl<T: Element> IntoExpr<T> for T {
    fn into_expr(self, graph: u32) -> Expr<T> {
        // The value in its compute type (f16/bf16 constants are widened to f32 exactly).
        let kind = Kind::Param(0);
        Expr {
            id: push(graph, Node { ty: T::TYPE, kind }, self.compute_bits()),
            graph,
            _t: PhantomData,
        }
    }
}

impl<T: Element> Expr<T> {
    fn node(graph: u32, kind: Kind) -> Self {
        Self::node_of(graph, T::TYPE, kind)
    }

    fn node_of(graph: u32, ty: ScalarType, kind: Kind) -> Self {
        Expr {
            id: push(graph, Node { ty, kind }, 0),
            graph,
            _t: PhantomData,
        }
    }

    /// The `Expr` of an existing node (used by `trace`'s callers for the arguments).
    pub(crate) fn from_node(graph: u32, id: u32) -> Self {
        Expr {
            id,
            graph,
            _t: PhantomData,
        }
    }

    fn unary(self, op: Un) -> Self {
        if T::TYPE == ScalarType::Bool && op != Un::Not {
            refuse(
                self.graph,
                format!("{op:?} of an Expr<bool> (booleans take ! & | ^)"),
            );
        }
        Self::node(self.graph, Kind::Unary(op, self.id))
    }

    fn binary(self, op: Bin, other: impl IntoExpr<T>) -> Self {
        let o = other.into_expr(self.graph);
        let logical = matches!(op, Bin::Min | Bin::Max | Bin::And | Bin::Or | Bin::Xor);
        if T::TYPE == ScalarType::Bool && !logical {
            refuse(
                self.graph,
                format!(
                    "{op:?} of Expr<bool>s (booleans take ! & | ^ min max; count trues with count())"
                ),
            );
        }
        Self::node(joint(self.graph, o.graph), Kind::Binary(op, self.id, o.id))
    }

    fn compare(self, op: Cmp, other: impl IntoExpr<T>) -> Expr<bool> {
        let o = other.into_expr(self.graph);
        Expr::node(joint(self.graph, o.graph), Kind::Cmp(op, self.id, o.id))
    }

    /// A constant of the map closure being traced.
    ///
    /// Plain values can be written directly as operands (`x + 1`); `constant` is for where an
    /// `Expr` is needed, as in `Expr::select(c, Expr::constant(0), x)`. Constants are passed to
    /// the kernel when it runs, not compiled into it: `xs.map(|x| x * k)` compiles once for
    /// every `k`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq, Expr};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[5i32, -3, 8])?;
    /// // A tuple component that is no operation's operand needs an `Expr`.
    /// let counted = xs.map(|x| (x, Expr::constant(1u32)))?;
    /// assert_eq!(counted.to_vec()?, [(5, 1), (-3, 1), (8, 1)]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn constant(value: T) -> Self {
        value.into_expr(current_graph())
    }

    /// The smaller of the two; for floats a NaN operand is ignored unless both are NaN.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[1i32, 5, -7])?;
    /// assert_eq!(xs.map(|x| x.min(2))?.to_vec()?, [1, 2, -7]);
    /// let fs = DeviceSeq::from_slice(&dev, &[f32::NAN, 3.0])?;
    /// assert_eq!(fs.map(|x| x.min(2.0))?.to_vec()?, [2.0, 2.0]); // the NaN is ignored
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn min(self, other: impl IntoExpr<T>) -> Self {
        self.binary(Bin::Min, other)
    }

    /// The larger of the two; for floats a NaN operand is ignored unless both are NaN.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let a = DeviceSeq::from_slice(&dev, &[1u8, 9, 4])?;
    /// let b = DeviceSeq::from_slice(&dev, &[3u8, 2, 4])?;
    /// assert_eq!(a.zip_map(&b, |x, y| x.max(y))?.to_vec()?, [3, 9, 4]);
    /// let fs = DeviceSeq::from_slice(&dev, &[f32::NAN, -1.0])?;
    /// assert_eq!(fs.map(|x| x.max(0.0))?.to_vec()?, [0.0, 0.0]); // the NaN is ignored
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn max(self, other: impl IntoExpr<T>) -> Self {
        self.binary(Bin::Max, other)
    }

    /// `self == other` (IEEE comparison for floats: NaN is unequal to everything).
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq, Op};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[1.0f32, 2.0, 3.0, f32::NAN])?;
    /// assert_eq!(xs.map(|x| x.eq(2.0))?.to_vec()?, [false, true, false, false]);
    /// assert_eq!(xs.map(|x| x.eq(x))?.to_vec()?, [true, true, true, false]); // NaN != NaN
    /// // Four of the six comparisons against 2:
    /// let cmp = xs.map(|x| (x.lt(2.0), x.le(2.0), x.gt(2.0), x.ge(2.0)))?;
    /// let (t, f) = (true, false);
    /// assert_eq!(cmp.to_vec()?, [(t, t, f, f), (f, t, f, t), (f, f, t, t), (f, f, f, f)]);
    /// assert_eq!(xs.map(|x| x.ne(2.0))?.to_vec()?, [true, false, true, true]);
    /// // Counting the elements below 2.5 (one pass):
    /// assert_eq!(xs.count_if(|x| x.lt(2.5))?, 2);
    /// assert_eq!(xs.map(|x| x.lt(2.5).cast::<u32>())?.reduce(Op::Add)?, 2);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn eq(self, other: impl IntoExpr<T>) -> Expr<bool> {
        self.compare(Cmp::Eq, other)
    }

    /// `self != other`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[1.0f64, f64::NAN])?;
    /// assert_eq!(xs.map(|x| x.ne(x))?.to_vec()?, [false, true]); // only NaN differs from itself
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn ne(self, other: impl IntoExpr<T>) -> Expr<bool> {
        self.compare(Cmp::Ne, other)
    }

    /// `self < other`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[1i32, 2, 3])?;
    /// assert_eq!(xs.map(|x| x.lt(2))?.to_vec()?, [true, false, false]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn lt(self, other: impl IntoExpr<T>) -> Expr<bool> {
        self.compare(Cmp::Lt, other)
    }

    /// `self <= other`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[1i32, 2, 3])?;
    /// assert_eq!(xs.map(|x| x.le(2))?.to_vec()?, [true, true, false]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn le(self, other: impl IntoExpr<T>) -> Expr<bool> {
        self.compare(Cmp::Le, other)
    }

    /// `self > other`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let a = DeviceSeq::from_slice(&dev, &[1u16, 5, 3])?;
    /// let b = DeviceSeq::from_slice(&dev, &[2u16, 4, 3])?;
    /// assert_eq!(a.zip_map(&b, |x, y| x.gt(y))?.to_vec()?, [false, true, false]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn gt(self, other: impl IntoExpr<T>) -> Expr<bool> {
        self.compare(Cmp::Gt, other)
    }

    /// `self >= other`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[1i32, 2, 3])?;
    /// assert_eq!(xs.map(|x| x.ge(2))?.to_vec()?, [false, true, true]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn ge(self, other: impl IntoExpr<T>) -> Expr<bool> {
        self.compare(Cmp::Ge, other)
    }

    /// `if cond { if_true } else { if_false }`: `cond` an `Expr<bool>` (a comparison), or an
    /// `Expr<u8>` where nonzero is true.
    ///
    /// Floats: where both branches are values read (elements, constants, or selects of them),
    /// the chosen value keeps its bits, NaN payloads and signs included; where a branch is
    /// computed, a NaN result is the canonical one, as any computed NaN is.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq, Expr};
    /// let dev = Device::auto()?;
    /// let mask = DeviceSeq::from_slice(&dev, &[0u8, 1, 7])?; // any nonzero value selects
    /// let xs = DeviceSeq::from_slice(&dev, &[10i64, 20, 30])?;
    /// assert_eq!(mask.zip_map(&xs, |m, x| Expr::select(m, x, -1))?.to_vec()?, [-1, 20, 30]);
    /// let ys = xs.map(|x| Expr::select(x.gt(15), x / 10, x * 10))?;
    /// assert_eq!(ys.to_vec()?, [100, 2, 3]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn select(
        cond: impl Condition,
        if_true: impl IntoExpr<T>,
        if_false: impl IntoExpr<T>,
    ) -> Self {
        let (cg, cid) = cond.node();
        let a = if_true.into_expr(cg);
        let b = if_false.into_expr(cg);
        let g = joint(joint(cg, a.graph), b.graph);
        Self::node(g, Kind::Select(cid, a.id, b.id))
    }

    /// Conversion with Rust's `as` semantics: integers wrap or extend, float to integer
    /// saturates (NaN gives 0), conversions to floats round to nearest-even (to `f16`/`bf16`
    /// through `f32`), a `bool` gives 0 or 1; to `bool`, which `as` does not have, nonzero is
    /// true (`x != 0`, so NaN is true).
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let fs = DeviceSeq::from_slice(&dev, &[2.7f32, -1.5, f32::NAN, 1e10])?;
    /// assert_eq!(fs.map(|x| x.cast::<i32>())?.to_vec()?, [2, -1, 0, i32::MAX]);
    /// let is = DeviceSeq::from_slice(&dev, &[-1i32, 300])?;
    /// assert_eq!(is.map(|x| x.cast::<u8>())?.to_vec()?, [255, 44]); // wraps
    /// assert_eq!(is.map(|x| x.cast::<f64>() * 0.5)?.to_vec()?, [-0.5, 150.0]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn cast<U: Element>(self) -> Expr<U> {
        Expr::node(self.graph, Kind::Cast(self.id))
    }

    /// The stored bits of the value, zero-extended: `f32::to_bits` for an `f32`, the two's
    /// complement bits for a signed integer (`-1i8` gives `0xff`), the bits of the `f16` or
    /// `bf16` the value rounds to (a NaN keeps its sign). A computed NaN is the canonical
    /// one (`f32::NAN`), as it would be stored; a NaN read from memory keeps its bits, and so
    /// does one that [`select`](Expr::select) chooses where both its branches are read.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[1.0f32, -0.0, -2.5])?;
    /// let bits = xs.map(|x| x.to_bits())?.to_vec()?;
    /// assert_eq!(bits, [1.0f32.to_bits() as u64, 0x8000_0000, (-2.5f32).to_bits() as u64]);
    /// let ys = DeviceSeq::from_slice(&dev, &[-1i16, 5])?;
    /// assert_eq!(ys.map(|y| y.to_bits())?.to_vec()?, [0xffff, 5]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn to_bits(self) -> Expr<u64> {
        Expr::node(self.graph, Kind::Bits(self.id))
    }

    /// The value of type `T` whose stored bits are the low bits of `bits` (as many as `T` has):
    /// the inverse of [`to_bits`](Expr::to_bits), so that `Expr::<f32>::from_bits(x.to_bits())`
    /// is `x` bit for bit, NaN payloads included.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq, Expr};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[1.5f32, -0.0, f32::from_bits(0x7fc0_1234)])?;
    /// let back = xs.map(|x| Expr::<f32>::from_bits(x.to_bits()))?.to_vec()?;
    /// let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    /// assert_eq!(bits(&back), bits(&xs.to_vec()?));
    /// // The sign bit flipped through the integer bits:
    /// let neg = xs.map(|x| Expr::<f32>::from_bits(x.to_bits() ^ 0x8000_0000u64))?;
    /// assert_eq!(neg.to_vec()?[0], -1.5);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn from_bits<U: Unsigned>(bits: Expr<U>) -> Self {
        Self::node(bits.graph, Kind::FromBits(bits.id))
    }

    /// `self op other` for a built-in operator, with the operator's semantics (callers have
    /// checked that it applies to `T`): for generic code over `T: Element`, where the
    /// bitwise operators are not available as Rust operators.
    pub(crate) fn apply(self, op: crate::op::Op, other: impl IntoExpr<T>) -> Self {
        use crate::op::Op;
        let b = match op {
            Op::Add => Bin::Add,
            Op::Mul => Bin::Mul,
            Op::Min => Bin::Min,
            Op::Max => Bin::Max,
            Op::BitAnd => Bin::And,
            Op::BitOr => Bin::Or,
            Op::BitXor => Bin::Xor,
        };
        self.binary(b, other)
    }
}

impl<T: Float> Expr<T> {
    /// `|x|`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[-1.5f32, 0.0, 2.0])?;
    /// assert_eq!(xs.map(|x| x.abs())?.to_vec()?, [1.5, 0.0, 2.0]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn abs(self) -> Self {
        self.unary(Un::Abs)
    }
    /// The square root (correctly rounded on both backends).
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[4.0f32, 2.0, 0.25])?;
    /// assert_eq!(xs.map(|x| x.sqrt())?.to_vec()?, [2.0, 2.0f32.sqrt(), 0.5]); // exact
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn sqrt(self) -> Self {
        self.unary(Un::Sqrt)
    }
    /// `e^x`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[0.0f64, 1.0, -1.0])?;
    /// let got = xs.map(|x| x.exp())?.to_vec()?;
    /// let want = [1.0, std::f64::consts::E, 1.0 / std::f64::consts::E];
    /// for (g, w) in got.iter().zip(want) {
    ///     assert!((g - w).abs() < 1e-6, "{g} vs {w}");
    /// }
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn exp(self) -> Self {
        self.unary(Un::Exp)
    }
    /// The natural logarithm.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[1.0f64, std::f64::consts::E, 10.0])?;
    /// let got = xs.map(|x| x.ln())?.to_vec()?;
    /// let want = [0.0, 1.0, std::f64::consts::LN_10];
    /// for (g, w) in got.iter().zip(want) {
    ///     assert!((g - w).abs() < 1e-6, "{g} vs {w}");
    /// }
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn ln(self) -> Self {
        self.unary(Un::Ln)
    }
    /// The sine.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// use std::f64::consts::PI;
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[0.0f64, PI / 2.0, PI / 6.0, -PI / 2.0])?;
    /// let got = xs.map(|x| x.sin())?.to_vec()?;
    /// let want = [0.0, 1.0, 0.5, -1.0];
    /// for (g, w) in got.iter().zip(want) {
    ///     assert!((g - w).abs() < 1e-6, "{g} vs {w}");
    /// }
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn sin(self) -> Self {
        self.unary(Un::Sin)
    }
    /// The cosine.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// use std::f64::consts::PI;
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[0.0f64, PI, PI / 3.0])?;
    /// let got = xs.map(|x| x.cos())?.to_vec()?;
    /// let want = [1.0, -1.0, 0.5];
    /// for (g, w) in got.iter().zip(want) {
    ///     assert!((g - w).abs() < 1e-6, "{g} vs {w}");
    /// }
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn cos(self) -> Self {
        self.unary(Un::Cos)
    }
    /// The hyperbolic tangent.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[0.0f64, 0.5, -20.0])?;
    /// let got = xs.map(|x| x.tanh())?.to_vec()?;
    /// let want = [0.0, 0.5f64.tanh(), -1.0];
    /// for (g, w) in got.iter().zip(want) {
    ///     assert!((g - w).abs() < 1e-6, "{g} vs {w}");
    /// }
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn tanh(self) -> Self {
        self.unary(Un::Tanh)
    }
    /// The largest integer not above `x`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[-1.5f32, 2.7, 3.0])?;
    /// assert_eq!(xs.map(|x| x.floor())?.to_vec()?, [-2.0, 2.0, 3.0]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn floor(self) -> Self {
        self.unary(Un::Floor)
    }
    /// The smallest integer not below `x`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[-1.5f32, 2.2, 3.0])?;
    /// assert_eq!(xs.map(|x| x.ceil())?.to_vec()?, [-1.0, 3.0, 3.0]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn ceil(self) -> Self {
        self.unary(Un::Ceil)
    }
    /// The nearest integer, halves away from zero (as `f32::round`).
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[-2.5f64, 0.5, 1.4, 2.5])?;
    /// assert_eq!(xs.map(|x| x.round())?.to_vec()?, [-3.0, 1.0, 1.0, 3.0]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn round(self) -> Self {
        self.unary(Un::Round)
    }
    /// `x` to the power `y`.
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let xs = DeviceSeq::from_slice(&dev, &[2.0f64, 9.0, 4.0])?;
    /// let ys = DeviceSeq::from_slice(&dev, &[3.0f64, 0.5, -1.0])?;
    /// let got = xs.zip_map(&ys, |x, y| x.powf(y))?.to_vec()?;
    /// let want = [8.0, 3.0, 0.25];
    /// for (g, w) in got.iter().zip(want) {
    ///     assert!((g - w).abs() < 1e-6, "{g} vs {w}");
    /// }
    /// let got = xs.map(|x| x.powf(2.0))?.to_vec()?;
    /// let want = [4.0, 81.0, 16.0];
    /// for (g, w) in got.iter().zip(want) {
    ///     assert!((g - w).abs() < 1e-6, "{g} vs {w}");
    /// }
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn powf(self, y: impl IntoExpr<T>) -> Self {
        self.binary(Bin::Pow, y)
    }
}

macro_rules! bin_ops {
    ($($trait:ident $method:ident $op:ident $bound:ident);* $(;)?) => {$(
        impl<T: $bound, R: IntoExpr<T>> std::ops::$trait<R> for Expr<T> {
            type Output = Expr<T>;
            fn $method(self, rhs: R) -> Expr<T> {
                self.binary(Bin::$op, rhs)
            }
        }
    )*};
}
bin_ops! {
    Add add Add Element;
    Sub sub Sub Element;
    Mul mul Mul Element;
    Div div Div Element;
    Rem rem Rem Integer;
    BitAnd bitand And Integer;
    BitOr bitor Or Integer;
    BitXor bitxor Xor Integer;
}

macro_rules! shift_ops {
    ($($trait:ident $method:ident $op:ident);*) => {$(
        impl<T: Integer> std::ops::$trait<Expr<u32>> for Expr<T> {
            type Output = Expr<T>;
            fn $method(self, rhs: Expr<u32>) -> Expr<T> {
                Self::node(joint(self.graph, rhs.graph), Kind::Binary(Bin::$op, self.id, rhs.id))
            }
        }
        impl<T: Integer> std::ops::$trait<u32> for Expr<T> {
            type Output = Expr<T>;
            fn $method(self, rhs: u32) -> Expr<T> {
                let r: Expr<u32> = rhs.into_expr(self.graph);
                Self::node(self.graph, Kind::Binary(Bin::$op, self.id, r.id))
            }
        }
    )*};
}
shift_ops!(Shl shl Shl; Shr shr Shr);

impl<T: Element> std::ops::Neg for Expr<T> {
    type Output = Expr<T>;
    fn neg(self) -> Expr<T> {
        self.unary(Un::Neg)
    }
}

impl<T: Integer> std::ops::Not for Expr<T> {
    type Output = Expr<T>;
    fn not(self) -> Expr<T> {
        self.unary(Un::Not)
    }
}

/// Logical not.
impl std::ops::Not for Expr<bool> {
    type Output = Expr<bool>;
    fn not(self) -> Expr<bool> {
        self.unary(Un::Not)
    }
}

macro_rules! logical_ops {
    ($($trait:ident $method:ident $op:ident);*) => {$(
        /// Logical, on booleans.
        impl<R: IntoExpr<bool>> std::ops::$trait<R> for Expr<bool> {
            type Output = Expr<bool>;
            fn $method(self, rhs: R) -> Expr<bool> {
                self.binary(Bin::$op, rhs)
            }
        }
    )*};
}
logical_ops!(BitAnd bitand And; BitOr bitor Or; BitXor bitxor Xor);

/// A condition of [`Expr::select`]: an `Expr<bool>`, or an `Expr<u8>` where nonzero is true.
///
/// # Examples
///
/// ```
/// use devseq::{Device, DeviceSeq, Expr};
/// let dev = Device::auto()?;
/// let xs = DeviceSeq::from_slice(&dev, &[3i32, -4, 0])?;
/// let by_bool = xs.map(|x| Expr::select(x.lt(0) | x.eq(0), 0, x))?;
/// let by_byte = xs.map(|x| Expr::select(x.gt(0).cast::<u8>() * 5u8, x, 0))?;
/// assert_eq!(by_bool.to_vec()?, [3, 0, 0]);
/// assert_eq!(by_byte.to_vec()?, [3, 0, 0]);
/// # Ok::<(), devseq::Error>(())
/// ```
pub trait Condition: crate::item::ConditionSealed {
    #[doc(hidden)]
    fn node(&self) -> (u32, u32);
}

impl crate::item::ConditionSealed for Expr<bool> {}
impl crate::item::ConditionSealed for Expr<u8> {}
impl Condition for Expr<bool> {
    fn node(&self) -> (u32, u32) {
        (self.graph, self.id)
    }
}
impl Condition for Expr<u8> {
    fn node(&self) -> (u32, u32) {
        (self.graph, self.id)
    }
}

/// The unsigned integer types, whose bits [`Expr::from_bits`] takes: `u8`, `u16`, `u32`, `u64`.
///
/// # Examples
///
/// ```
/// use devseq::{Device, DeviceSeq, Expr, Unsigned};
/// fn low_byte<U: Unsigned>(x: devseq::Expr<U>) -> devseq::Expr<i8> {
///     Expr::<i8>::from_bits(x)
/// }
/// let dev = Device::auto()?;
/// let xs = DeviceSeq::from_slice(&dev, &[0x1ffu32, 0x80])?;
/// assert_eq!(xs.map(low_byte)?.to_vec()?, [-1, -128]);
/// # Ok::<(), devseq::Error>(())
/// ```
pub trait Unsigned: Integer {}
impl Unsigned for u8 {}
impl Unsigned for u16 {}
impl Unsigned for u32 {}
impl Unsigned for u64 {}

/// `plain op expr` for the arithmetic operators, per concrete type (a generic impl on `T`
/// itself is not allowed).
macro_rules! scalar_lhs {
    ($($t:ty),*) => {$(
        scalar_lhs!(@op $t, Add add Add);
        scalar_lhs!(@op $t, Sub sub Sub);
        scalar_lhs!(@op $t, Mul mul Mul);
        scalar_lhs!(@op $t, Div div Div);
    )*};
    (@op $t:ty, $trait:ident $method:ident $op:ident) => {
        impl std::ops::$trait<Expr<$t>> for $t {
            type Output = Expr<$t>;
            fn $method(self, rhs: Expr<$t>) -> Expr<$t> {
                let l: Expr<$t> = self.into_expr(rhs.graph);
                Expr::node(rhs.graph, Kind::Binary(Bin::$op, l.id, rhs.id))
            }
        }
    };
}
scalar_lhs!(
    i8,
    i16,
    i32,
    i64,
    u8,
    u16,
    u32,
    u64,
    half::f16,
    half::bf16,
    f32,
    f64
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traces_a_dag_once_per_value() {
        let t = trace(&[ScalarType::F32], |a, id| {
            let x = Expr::<f32>::from_node(id, a[0]);
            x * x + x
        })
        .unwrap();
        // arg, mul, add
        assert_eq!(t.nodes.len(), 3);
        assert_eq!(t.graph(0).out_type(), ScalarType::F32);
    }

    #[test]
    fn constants_are_parameters() {
        let shape = |k: f32| {
            trace(&[ScalarType::F32], |a, id| {
                Expr::<f32>::from_node(id, a[0]) * k + 1.0
            })
            .unwrap()
        };
        let (a, b) = (shape(2.0), shape(3.0));
        assert_eq!(a.graph(0), b.graph(0));
        assert_eq!(a.params, [2.0f32.to_bits() as u64, 1.0f32.to_bits() as u64]);
        assert_eq!(b.params[0], 3.0f32.to_bits() as u64);
    }

    #[test]
    fn an_expr_from_another_closure_is_an_error() {
        let mut stolen = None;
        let _ = trace(&[ScalarType::I32], |a, id| {
            let x = Expr::<i32>::from_node(id, a[0]);
            stolen = Some(x);
            x
        });
        let r = trace(&[ScalarType::I32], |a, id| {
            let x = Expr::<i32>::from_node(id, a[0]);
            x + stolen.unwrap()
        });
        assert!(matches!(r, Err(Error::InvalidArgument(_))));
    }
}
