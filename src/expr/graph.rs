//! The expression graph that closures trace to and that sources are made of: nodes in
//! evaluation order, each with its element type; operands are indices of earlier nodes.
//!
//! A graph holds no constant values: a constant is a `Param` node whose value lives beside the
//! graph (a traced closure's `params`, a source's `params`). So the graph is the *shape* of a
//! computation, and two closures that differ only in their constants have equal graphs: one
//! kernel serves both, the constants passed when it is launched.

use crate::item::ScalarType;
use crate::random::Rand;
use std::collections::HashMap;

/// Unary operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Un {
    Neg,
    Not,
    Abs,
    Sqrt,
    Exp,
    Ln,
    Sin,
    Cos,
    Tanh,
    Floor,
    Ceil,
    Round,
}

/// Binary operators whose operands and result share one type (`Shl`/`Shr`: the right
/// operand is a `u32`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Bin {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    And,
    Or,
    Xor,
    Shl,
    Shr,
    Min,
    Max,
    Pow,
}

/// Comparisons, whose result is a `bool` (1 or 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// What a node computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Kind {
    /// The k-th argument of a traced closure (only in traced graphs).
    Arg(u8),
    /// The k-th runtime constant: the bits of its value in the node type's compute type (f32
    /// for f16/bf16), kept beside the graph.
    Param(u32),
    /// Leaf of a source: element `row` of its k-th stored column, in compute type.
    Column(u32),
    /// Leaf of a source: the row number itself (a `u64`).
    Index,
    /// Of a source: the element of its stored column `k` at the row that node `i` (a `u64`)
    /// gives, in compute type; a row at or past `param n` (the column's rows) reads row
    /// `n - 1` (views and lazy gathers, `source/view.rs`, check their rows before).
    At(u32, u32, u32),
    /// Of a source (a `u8`): 1 where the element that node c (a `Column` leaf) reads at the
    /// row starts a run of equal elements (bitwise), else 0. The row starts a run where
    /// `row + param p == 0` (the first element of the sequence the flags were made for; a
    /// slice of the flags adds its offset to `p`), else where its bits differ from those of
    /// the column's element before it.
    Head(u32, u32),
    /// Leaf of a source: element `row + param o` of the random sequence of this kind (the
    /// node's type) with the seed `param s` (src/random.rs), in compute type.
    Random(Rand, u32, u32),
    Unary(Un, u32),
    Binary(Bin, u32, u32),
    Cmp(Cmp, u32, u32),
    /// `cond != 0 ? a : b`.
    Select(u32, u32, u32),
    /// `as`-conversion of the operand to the node's type (to f16/bf16: rounded, and so also
    /// the rounding of an f32 value to the f16/bf16 it would be stored as).
    Cast(u32),
    /// The stored bits of the operand (a value of its type) as it is, zero-extended (the node
    /// is a `u64`). Tracing puts a `Canon` before an operand that is computed (`passes` not),
    /// so that the bits of a computed NaN are the canonical NaN's.
    Bits(u32),
    /// The value of the node's type whose stored bits are the low bits of the operand (an
    /// unsigned integer): `to_bits`' inverse, NaN payloads included.
    FromBits(u32),
    /// The operand, a float NaN made the canonical one (`eval::canonical`): before the
    /// operand of a `Bits` that is computed (tracing adds it), and where devseq lifts an
    /// operator (`Combiner::segmented`, `head_transform`) into a `Select` between an operand
    /// passed through and the operator's computed result.
    Canon(u32),
    /// A loop (`Expr::fold_range`) is a region of nodes: a `LoopVar` a component of its
    /// state, then its `LoopIndex`, the body, a `LoopNext` a state component, its `LoopEnd`,
    /// then a `LoopOut` a component. `LoopVar(init)`: the state's component, `init` before the
    /// first iteration; inside the body its value in the current iteration.
    LoopVar(u32),
    /// The iteration's number (a `u32`, from 0), for `count` (node, a `u32`) iterations.
    LoopIndex(u32),
    /// `LoopNext(var, v)`: the state component `var` takes `v` for the next iteration.
    LoopNext(u32, u32),
    /// The end of the body of the loop whose `LoopIndex` is the operand: the `LoopNext`s just
    /// before it give the next state; the body runs again while iterations remain.
    LoopEnd(u32),
    /// `LoopOut(var, end)`: the state component `var` after the loop that `end` closes.
    LoopOut(u32, u32),
}

impl Kind {
    /// Whether the node is part of a loop's structure (never shared with an equal node).
    pub fn is_loop(&self) -> bool {
        matches!(
            self,
            Kind::LoopVar(_)
                | Kind::LoopIndex(_)
                | Kind::LoopNext(..)
                | Kind::LoopEnd(_)
                | Kind::LoopOut(..)
        )
    }
}

/// The `LoopEnd` that closes the loop whose `LoopIndex` is node `index`.
pub(crate) fn loop_end(nodes: &[Node], index: u32) -> usize {
    nodes
        .iter()
        .enumerate()
        .skip(index as usize + 1)
        .find(|(_, n)| n.kind == Kind::LoopEnd(index))
        .map_or(nodes.len(), |(i, _)| i)
}

/// The `LoopNext` nodes of the loop that the `LoopEnd` at `end` closes (those just before it).
pub(crate) fn loop_nexts(nodes: &[Node], end: usize) -> std::ops::Range<usize> {
    let mut start = end;
    while start > 0 && matches!(nodes[start - 1].kind, Kind::LoopNext(..)) {
        start -= 1;
    }
    start..end
}

/// Whether node `id` of `nodes` passes a value through rather than computes it: a value read
/// (an argument, a constant, a column's element), one made canonical already (`Canon`), one
/// that `Select` chooses among such values, or the cast of one to its own compute type (an
/// `f16` or `bf16` to `f32`: the same compute value). A float NaN passed through keeps its
/// bits; a computed one is made the canonical NaN (`eval::canonical`), since its sign is not
/// specified. Linear in the nodes up to `id` (not for per-element loops: `pass_flags`).
pub(crate) fn passes(nodes: &[Node], id: u32) -> bool {
    pass_flags(&nodes[..=id as usize])[id as usize]
}

/// `passes` of every node, in one pass over them (operands come before their nodes).
pub(crate) fn pass_flags(nodes: &[Node]) -> Vec<bool> {
    through_selects(nodes, |n, f| match n.kind {
        Kind::Arg(_)
        | Kind::Param(_)
        | Kind::Column(_)
        | Kind::At(..)
        | Kind::Canon(_)
        | Kind::FromBits(_) => true,
        Kind::Cast(a) => n.ty.is_float() && nodes[a as usize].ty.compute() == n.ty && f[a as usize],
        _ => false,
    })
}

/// Whether node `id`'s value is one its type can store exactly (no rounding to `f16`/`bf16`
/// needed): a column's element, a constant, a cast (which rounds), a head flag, or a `Select`
/// among such values. Linear in the nodes up to `id`.
pub(crate) fn stored_exactly(nodes: &[Node], id: u32) -> bool {
    through_selects(&nodes[..=id as usize], |n, _| {
        matches!(
            n.kind,
            Kind::Column(_)
                | Kind::At(..)
                | Kind::Param(_)
                | Kind::Cast(_)
                | Kind::Head(..)
                | Kind::FromBits(_)
        )
    })[id as usize]
}

/// A flag a node, in one pass: a `Select`'s where both its branches have it, any other node's
/// as `own` says from the node and the flags of the nodes before it.
fn through_selects(nodes: &[Node], own: impl Fn(&Node, &[bool]) -> bool) -> Vec<bool> {
    let mut f: Vec<bool> = Vec::with_capacity(nodes.len());
    for n in nodes {
        let v = match n.kind {
            Kind::Select(_, a, b) => f[a as usize] && f[b as usize],
            _ => own(n, &f),
        };
        f.push(v);
    }
    f
}

/// One value of a graph: its element type and how it is computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Node {
    pub ty: ScalarType,
    pub kind: Kind,
}

impl Node {
    /// The nodes this one reads.
    pub fn operands(&self) -> impl Iterator<Item = u32> {
        let (a, b, c) = match self.kind {
            Kind::Unary(_, a)
            | Kind::Cast(a)
            | Kind::Bits(a)
            | Kind::FromBits(a)
            | Kind::Canon(a)
            | Kind::At(_, a, _)
            | Kind::Head(a, _)
            | Kind::LoopVar(a)
            | Kind::LoopIndex(a)
            | Kind::LoopEnd(a) => (Some(a), None, None),
            Kind::Binary(_, a, b)
            | Kind::Cmp(_, a, b)
            | Kind::LoopNext(a, b)
            | Kind::LoopOut(a, b) => (Some(a), Some(b), None),
            Kind::Select(c, a, b) => (Some(c), Some(a), Some(b)),
            _ => (None, None, None),
        };
        a.into_iter().chain(b).chain(c)
    }

    /// The same node with the numbers of the columns and constants it reads renumbered by `col`
    /// and `par` (a random leaf's seed before its offset).
    pub fn remap_leaves(
        self,
        mut col: impl FnMut(u32) -> u32,
        mut par: impl FnMut(u32) -> u32,
    ) -> Node {
        let kind = match self.kind {
            Kind::Column(k) => Kind::Column(col(k)),
            Kind::At(k, i, p) => {
                let k = col(k);
                Kind::At(k, i, par(p))
            }
            Kind::Param(k) => Kind::Param(par(k)),
            Kind::Head(c, p) => Kind::Head(c, par(p)),
            Kind::Random(r, sd, o) => {
                let sd = par(sd);
                Kind::Random(r, sd, par(o))
            }
            k => k,
        };
        Node { ty: self.ty, kind }
    }

    /// The same node with its operands renumbered by `f`.
    pub fn remap(self, f: impl Fn(u32) -> u32) -> Node {
        let kind = match self.kind {
            Kind::Unary(op, a) => Kind::Unary(op, f(a)),
            Kind::Cast(a) => Kind::Cast(f(a)),
            Kind::Bits(a) => Kind::Bits(f(a)),
            Kind::FromBits(a) => Kind::FromBits(f(a)),
            Kind::Canon(a) => Kind::Canon(f(a)),
            Kind::Head(c, p) => Kind::Head(f(c), p),
            Kind::At(k, i, p) => Kind::At(k, f(i), p),
            Kind::Binary(op, a, b) => Kind::Binary(op, f(a), f(b)),
            Kind::Cmp(op, a, b) => Kind::Cmp(op, f(a), f(b)),
            Kind::Select(c, a, b) => Kind::Select(f(c), f(a), f(b)),
            Kind::LoopVar(a) => Kind::LoopVar(f(a)),
            Kind::LoopIndex(a) => Kind::LoopIndex(f(a)),
            Kind::LoopNext(a, b) => Kind::LoopNext(f(a), f(b)),
            Kind::LoopEnd(a) => Kind::LoopEnd(f(a)),
            Kind::LoopOut(a, b) => Kind::LoopOut(f(a), f(b)),
            k => k,
        };
        Node { ty: self.ty, kind }
    }
}

/// A graph: nodes in evaluation order and the node that is its value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Graph {
    pub nodes: Vec<Node>,
    pub out: u32,
}

impl Graph {
    /// The type of the result.
    pub fn out_type(&self) -> ScalarType {
        self.nodes[self.out as usize].ty
    }

    /// Whether the result is computed (not passed through, `passes`, and not a random
    /// number): a computed float result is made canonical where it is NaN (`eval::canonical`).
    pub fn out_is_computed(&self) -> bool {
        !passes(&self.nodes, self.out)
            && !matches!(self.nodes[self.out as usize].kind, Kind::Random(..))
    }

    /// Whether the graph runs a loop (`Expr::fold_range`): an element may cost many operations,
    /// so kernels that read it take one element a thread at a time, as many threads as fit.
    pub fn loops(&self) -> bool {
        self.nodes
            .iter()
            .any(|n| matches!(n.kind, Kind::LoopIndex(_)))
    }

    /// Whether the element function's code would dominate a kernel's compile where it is
    /// copied into every item of every load path, so that the quick form calls it rather than
    /// inlining it: where a node calls a transcendental function of the math library (exp, ln,
    /// sin, cos, tanh, pow), or where the graph has more than `HEAVY_NODES` nodes.
    pub fn heavy(&self) -> bool {
        self.nodes.len() > HEAVY_NODES
            || self.nodes.iter().any(|n| match n.kind {
                Kind::Unary(u, _) => {
                    matches!(u, Un::Exp | Un::Ln | Un::Sin | Un::Cos | Un::Tanh)
                }
                Kind::Binary(b, _, _) => b == Bin::Pow,
                _ => false,
            })
    }
}

/// Nodes above which an element function is `Graph::heavy` whatever it computes (a closure's
/// arithmetic is a few to a few dozen nodes; an expression built in a loop can be hundreds).
const HEAVY_NODES: usize = 64;

/// Builds a graph node by node, sharing equal nodes (a value used twice is computed once).
/// `Param` nodes are never equal to one another (each has its own number), so the constants
/// of a closure keep their own parameters whatever their values are.
#[derive(Debug)]
pub(crate) struct Builder {
    pub nodes: Vec<Node>,
    /// Whether node i may stand for an equal node added later: not a loop's structure, and not
    /// in the body of a loop that has ended (its values are the last iteration's, if any ran).
    shareable: Vec<bool>,
    /// The nodes by value, kept once there are more than `SCAN` (fewer are searched in order:
    /// hashing a node costs more than comparing it with a closure's few nodes).
    index: HashMap<Node, u32, crate::hash::Fast>,
}

/// Nodes a `Builder` searches in order before it keeps an index.
const SCAN: usize = 32;

impl Default for Builder {
    /// An empty builder with room for a short closure's nodes (one allocation, not three).
    fn default() -> Self {
        Builder {
            nodes: Vec::with_capacity(8),
            shareable: Vec::with_capacity(8),
            index: HashMap::default(),
        }
    }
}

impl Builder {
    /// The index of `node`, appended unless an equal node is there.
    pub fn add(&mut self, node: Node) -> u32 {
        let shareable = !node.kind.is_loop();
        let found = if !shareable {
            None
        } else if self.nodes.len() <= SCAN {
            (0..self.nodes.len())
                .find(|&i| self.shareable[i] && self.nodes[i] == node)
                .map(|i| i as u32)
        } else {
            if self.index.is_empty() {
                self.index = (0..)
                    .zip(&self.nodes)
                    .filter(|&(i, _)| self.shareable[i as usize])
                    .map(|(i, n)| (*n, i))
                    .collect();
            }
            self.index.get(&node).copied()
        };
        if let Some(i) = found {
            return i;
        }
        let i = self.nodes.len() as u32;
        self.nodes.push(node);
        self.shareable.push(shareable);
        if shareable && !self.index.is_empty() {
            self.index.insert(node, i);
        }
        if let Kind::LoopEnd(index) = node.kind {
            // The body's values are the iteration's: nothing after the loop shares them.
            for k in index as usize + 1..i as usize {
                if std::mem::take(&mut self.shareable[k]) && !self.index.is_empty() {
                    self.index.remove(&self.nodes[k]);
                }
            }
        }
        i
    }

    /// The graph whose value is node `out`, with only the nodes it needs, in order.
    pub fn finish(self, out: u32) -> Graph {
        let mut live = vec![false; self.nodes.len()];
        live[out as usize] = true;
        for i in (0..self.nodes.len()).rev() {
            if live[i] {
                for o in self.nodes[i].operands() {
                    live[o as usize] = true;
                }
                // A loop that runs computes all of its state.
                if let Kind::LoopEnd(_) = self.nodes[i].kind {
                    for k in loop_nexts(&self.nodes, i) {
                        live[k] = true;
                    }
                }
            }
        }
        if live.iter().all(|&l| l) {
            // Every node is needed (a short closure's usual case): already in order.
            return Graph {
                nodes: self.nodes,
                out,
            };
        }
        let mut new = vec![u32::MAX; self.nodes.len()];
        let mut nodes = Vec::new();
        for (i, n) in self.nodes.into_iter().enumerate() {
            if live[i] {
                new[i] = nodes.len() as u32;
                nodes.push(n.remap(|o| new[o as usize]));
            }
        }
        Graph {
            nodes,
            out: new[out as usize],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Equal nodes share one index on both sides of `SCAN` (searched in order below it, by
    /// the index above it), and distinct ones get the next.
    #[test]
    fn equal_nodes_share_an_index_past_the_scan() {
        let mut b = Builder::default();
        let arg = b.add(Node {
            ty: ScalarType::U32,
            kind: Kind::Arg(0),
        });
        let mut last = arg;
        let mut chain = vec![arg];
        for _ in 0..3 * SCAN {
            let n = Node {
                ty: ScalarType::U32,
                kind: Kind::Binary(Bin::Add, last, arg),
            };
            let i = b.add(n);
            assert_eq!(
                i as usize,
                b.nodes.len() - 1,
                "a new node gets the next index"
            );
            assert_eq!(b.add(n), i, "at {} nodes", b.nodes.len());
            chain.push(i);
            last = i;
        }
        for (k, &i) in chain.iter().enumerate().skip(1) {
            let n = Node {
                ty: ScalarType::U32,
                kind: Kind::Binary(Bin::Add, chain[k - 1], arg),
            };
            assert_eq!(b.add(n), i);
        }
        assert_eq!(b.nodes.len(), 3 * SCAN + 1);
    }

    /// A chain of additions is heavy past `HEAVY_NODES` nodes, and one exponential at once.
    #[test]
    fn heavy_by_size_or_by_math() {
        let chain = |len: usize, exp: bool| {
            let mut nodes = vec![Node {
                ty: ScalarType::F32,
                kind: Kind::Index,
            }];
            while nodes.len() < len {
                let last = nodes.len() as u32 - 1;
                nodes.push(Node {
                    ty: ScalarType::F32,
                    kind: if exp && nodes.len() == 1 {
                        Kind::Unary(Un::Exp, last)
                    } else {
                        Kind::Binary(Bin::Add, last, 0)
                    },
                });
            }
            let out = nodes.len() as u32 - 1;
            Graph { nodes, out }
        };
        assert!(!chain(1, false).heavy());
        assert!(!chain(HEAVY_NODES, false).heavy());
        assert!(chain(HEAVY_NODES + 1, false).heavy());
        assert!(chain(2, true).heavy());
    }
}
