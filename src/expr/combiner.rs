//! Combiners: a two-argument closure over items, traced once into a graph whose arguments are
//! the components of the left operand, then those of the right (`Arg(0..k)`, `Arg(k..2k)`),
//! and whose outputs are the components of the combination. The host interprets it
//! (`apply`); the GPU compiles it into a functor (`backend/cuda/functor.rs`).
//!
//! A combiner holds no constant values (they are `params` beside its graph), so two closures
//! that differ only in their constants share one compiled kernel, as map closures do.

use super::eval::{Lanes, Val, by_lane, canonical, eval, eval_block, fill_lane};
use super::graph::{Bin, Builder, Cmp, Kind, Node, pass_flags, passes};
use super::{Traced, trace};
use crate::error::Result;
use crate::item::{Exprs, Item, ScalarType};
use crate::op::Op;

/// A traced associative operator over items of `types`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Combiner {
    /// The item's component types.
    pub types: Vec<ScalarType>,
    /// Nodes in evaluation order; `Param(k)` leaves are `params[k]` (not part of the shape).
    pub nodes: Vec<Node>,
    /// The node of each component of the result.
    pub outs: Vec<u32>,
    /// Whether each component of the result is computed (`graph::passes` not): made canonical
    /// where it is a NaN. Derived from `nodes` and `outs` (`canon_of`).
    pub canon: Vec<bool>,
    /// Components of the item that are stored by scans (the first `stored`; the others are
    /// the combiner's own, such as the head flag of a segmented combiner).
    pub stored: usize,
    /// Whether the last component is a head flag that restarts the combination (the
    /// segmented form of a combiner).
    pub segmented: bool,
    /// The constants (compute bits), not hashed into the shape.
    #[allow(clippy::struct_field_names)]
    pub params: Vec<u64>,
}

/// What names a combiner's compiled code: everything but the constants' values.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct CombinerShape {
    pub types: Vec<ScalarType>,
    pub nodes: Vec<Node>,
    pub outs: Vec<u32>,
    pub stored: usize,
    pub segmented: bool,
    pub params: usize,
}

/// Whether each of `outs` is computed (`graph::passes` not), in one pass over `nodes`: made
/// canonical where it is a NaN (`Combiner::canon`, and the compiled functor's `operator()`).
pub(crate) fn canon_of(nodes: &[Node], outs: &[u32]) -> Vec<bool> {
    let pass = pass_flags(nodes);
    outs.iter().map(|&o| !pass[o as usize]).collect()
}

/// Node `m` of `b` made canonical where it is a float computed (`passes` not), by a `Canon`
/// node: for the computed branch of a `Select` that a lifted operator adds, so that the
/// `Select` passes its other branch through with its bits.
fn canonical_node(b: &mut Builder, m: u32) -> u32 {
    let n = b.nodes[m as usize];
    if n.ty.is_float() && !passes(&b.nodes, m) {
        b.add(Node {
            ty: n.ty,
            kind: Kind::Canon(m),
        })
    } else {
        m
    }
}

impl Combiner {
    /// Traces `f` over two items of type `T`.
    pub fn trace<T: Item>(f: impl Fn(T::Exprs, T::Exprs) -> T::Exprs) -> Result<Combiner> {
        let k = T::TYPES.len();
        let types: Vec<ScalarType> = T::TYPES.iter().chain(T::TYPES).copied().collect();
        let t = trace(&types, |a, id| {
            f(
                T::Exprs::from_nodes(id, &a[..k]),
                T::Exprs::from_nodes(id, &a[k..]),
            )
        })?;
        Ok(Self::from_traced(T::TYPES.to_vec(), t))
    }

    fn from_traced(types: Vec<ScalarType>, t: Traced) -> Combiner {
        let stored = types.len();
        Combiner {
            types,
            canon: canon_of(&t.nodes, &t.outs),
            nodes: t.nodes,
            outs: t.outs,
            stored,
            segmented: false,
            params: t.params,
        }
    }

    /// The shape (kernel key part).
    pub fn shape(&self) -> CombinerShape {
        CombinerShape {
            types: self.types.clone(),
            nodes: self.nodes.clone(),
            outs: self.outs.clone(),
            stored: self.stored,
            segmented: self.segmented,
            params: self.params.len(),
        }
    }

    /// The built-in operator this combiner is, if it is one `a op b` on one element (then the
    /// `Op` kernels run it, with their bits).
    pub fn builtin(&self) -> Option<Op> {
        if self.types.len() != 1 || self.segmented {
            return None;
        }
        let ty = self.types[0];
        let out = self.nodes.get(*self.outs.first()? as usize)?;
        let is_arg = |n: u32, k: u8| matches!(self.nodes[n as usize].kind, Kind::Arg(a) if a == k);
        let Kind::Binary(op, a, b) = out.kind else {
            return None;
        };
        if out.ty != ty || !is_arg(a, 0) || !is_arg(b, 1) {
            return None;
        }
        let op = match op {
            Bin::Add => Op::Add,
            Bin::Mul => Op::Mul,
            // Float min/max of a closure keep the first of equal zeros; the Op kernels do not
            // promise that, so only integers take their path.
            Bin::Min if !ty.is_float() => Op::Min,
            Bin::Max if !ty.is_float() => Op::Max,
            Bin::And => Op::BitAnd,
            Bin::Or => Op::BitOr,
            Bin::Xor => Op::BitXor,
            _ => return None,
        };
        Some(op)
    }

    /// Whether the combination is commutative by construction: each component of the result
    /// is one commutative built-in operation (`+`, `*`, integer `min`/`max`, the bitwise ops)
    /// of that component of the two operands, `|(a, b), (c, d)| (a + c, b * d)`. Such a
    /// combiner may be applied in any grouping and order (a reduction then folds each thread's
    /// items as they come, as the `Op` reductions do); floats still round differently by
    /// grouping, so the grouping stays fixed by the launch shape.
    pub fn commutative(&self) -> bool {
        let k = self.types.len();
        if self.segmented || self.outs.len() != k {
            return false;
        }
        let arg = |n: u32| match self.nodes[n as usize].kind {
            Kind::Arg(a) => Some(a as usize),
            _ => None,
        };
        self.outs.iter().enumerate().all(|(j, &o)| {
            let node = self.nodes[o as usize];
            let Kind::Binary(op, a, b) = node.kind else {
                return false;
            };
            let ty = self.types[j];
            let op_ok = match op {
                Bin::Add | Bin::Mul | Bin::And | Bin::Or | Bin::Xor => true,
                Bin::Min | Bin::Max => !ty.is_float(),
                _ => false,
            };
            let (x, y) = (arg(a), arg(b));
            let pair = (x == Some(j) && y == Some(k + j)) || (x == Some(k + j) && y == Some(j));
            node.ty == ty && op_ok && pair
        })
    }

    /// The segmented form: items gain a last component, a `u8` head flag, and
    /// `(a, fa) ⊕ (b, fb) = (fb ? b : a ⊕ b, fa | fb)`, which is associative when `⊕` is.
    pub fn segmented(&self) -> Combiner {
        let k = self.types.len();
        let mut b = Builder::default();
        // Arguments: a's k components and its flag, then b's.
        let arg = |b: &mut Builder, j: usize, ty: ScalarType| {
            b.add(Node {
                ty,
                kind: Kind::Arg(j as u8),
            })
        };
        let a_args: Vec<u32> = (0..k).map(|j| arg(&mut b, j, self.types[j])).collect();
        let fa = arg(&mut b, k, ScalarType::U8);
        let b_args: Vec<u32> = (0..k)
            .map(|j| arg(&mut b, k + 1 + j, self.types[j]))
            .collect();
        let fb = arg(&mut b, 2 * k + 1, ScalarType::U8);
        let map = self.copy_into(&mut b, &a_args, &b_args, |b, n| b.add(*n));
        let u8n = |kind| Node {
            ty: ScalarType::U8,
            kind,
        };
        let zero = b.add(u8n(Kind::Param(self.params.len() as u32)));
        let head = b.add(u8n(Kind::Cmp(Cmp::Ne, fb, zero)));
        // At a head the right operand passes through with its bits; elsewhere the combination,
        // made canonical where the operator's own result is.
        let mut outs: Vec<u32> = (0..k)
            .map(|j| {
                let ty = self.types[j];
                let m = canonical_node(&mut b, map[self.outs[j] as usize]);
                b.add(Node {
                    ty,
                    kind: Kind::Select(head, b_args[j], m),
                })
            })
            .collect();
        outs.push(b.add(u8n(Kind::Binary(Bin::Or, fa, fb))));
        let mut params = self.params.clone();
        params.push(0);
        let mut types = self.types.clone();
        types.push(ScalarType::U8);
        Combiner {
            types,
            canon: canon_of(&b.nodes, &outs),
            nodes: b.nodes,
            outs,
            stored: self.stored,
            segmented: true,
            params,
        }
    }

    /// The closure `(x, flag) -> flag != 0 ? l ⊕ x : x` over an item and a `u8` flag: each
    /// segment's first item combined with a left operand `l`, which is `init` (compute bits)
    /// where given, else a second item read after the flag (`(x, flag, l)`). Its results have
    /// the compute types (f32 for f16/bf16 components), so that a scan reading them rounds
    /// `l ⊕ x0 ⊕ x1 …` once, where it stores, and not `l ⊕ x0` first.
    pub fn head_transform(&self, init: Option<&[u64]>) -> Traced {
        let k = self.types.len();
        let mut b = Builder::default();
        let arg = |b: &mut Builder, ty: ScalarType, j: usize| {
            b.add(Node {
                ty,
                kind: Kind::Arg(j as u8),
            })
        };
        let xs: Vec<u32> = (0..k).map(|j| arg(&mut b, self.types[j], j)).collect();
        let flag = arg(&mut b, ScalarType::U8, k);
        let mut params = Vec::new();
        let mut param = |b: &mut Builder, ty: ScalarType, bits: u64| {
            params.push(bits);
            b.add(Node {
                ty,
                kind: Kind::Param(params.len() as u32 - 1),
            })
        };
        let lefts: Vec<u32> = (0..k)
            .map(|j| match init {
                Some(init) => param(&mut b, self.types[j], init[j]),
                None => arg(&mut b, self.types[j], k + 1 + j),
            })
            .collect();
        let map = self.copy_into(&mut b, &lefts, &xs, |b, n| match n.kind {
            Kind::Param(p) => param(b, n.ty, self.params[p as usize]),
            _ => b.add(*n),
        });
        let zero = param(&mut b, ScalarType::U8, 0);
        let head = b.add(Node {
            ty: ScalarType::U8,
            kind: Kind::Cmp(Cmp::Ne, flag, zero),
        });
        let outs = (0..k)
            .map(|j| {
                let ty = self.types[j];
                let m = canonical_node(&mut b, map[self.outs[j] as usize]);
                let v = b.add(Node {
                    ty,
                    kind: Kind::Select(head, m, xs[j]),
                });
                if ty.compute() == ty {
                    v
                } else {
                    b.add(Node {
                        ty: ty.compute(),
                        kind: Kind::Cast(v),
                    })
                }
            })
            .collect();
        Traced {
            nodes: b.nodes,
            outs,
            params,
        }
    }

    /// Copies the combiner's nodes into `b`, its left operand's components read from nodes
    /// `left` and its right operand's from `right`; `param` adds a `Param` leaf (or keeps its
    /// number). Returns the new node of each old one.
    fn copy_into(
        &self,
        b: &mut Builder,
        left: &[u32],
        right: &[u32],
        mut param: impl FnMut(&mut Builder, &Node) -> u32,
    ) -> Vec<u32> {
        let k = left.len();
        let mut map: Vec<u32> = Vec::with_capacity(self.nodes.len());
        for n in &self.nodes {
            let new = match n.kind {
                Kind::Arg(j) if (j as usize) < k => left[j as usize],
                Kind::Arg(j) => right[j as usize - k],
                Kind::Param(_) => param(b, n),
                _ => b.add(n.remap(|o| map[o as usize])),
            };
            map.push(new);
        }
        map
    }

    /// `a ⊕ b` on the host, items as compute values, a computed float NaN made canonical (as
    /// on the GPU) where `canon`; `scratch` has the nodes' length.
    pub fn apply(&self, a: &[Val], b: &[Val], scratch: &mut [Val], canon: bool) -> Vec<Val> {
        let mut out = Vec::with_capacity(self.outs.len());
        self.apply_into(a, b, scratch, canon, &mut out);
        out
    }

    /// `apply` into `out` (cleared first), for loops that combine without allocating.
    pub fn apply_into(
        &self,
        a: &[Val],
        b: &[Val],
        scratch: &mut [Val],
        canon: bool,
        out: &mut Vec<Val>,
    ) {
        out.clear();
        if self.nodes.is_empty() {
            out.extend_from_slice(a);
            return;
        }
        let k = self.types.len();
        let leaf = |n: &Node, _: &[Val]| match n.kind {
            Kind::Arg(j) if (j as usize) < k => a[j as usize],
            Kind::Arg(j) => b[j as usize - k],
            Kind::Param(p) => Val::from_compute_bits(n.ty, self.params[p as usize]),
            _ => Val::U8(0),
        };
        eval(&self.nodes, self.outs[0], scratch, leaf);
        out.extend(self.outs.iter().zip(&self.canon).map(|(&o, &c)| {
            let v = scratch[o as usize];
            if canon && c { canonical(v) } else { v }
        }));
    }

    /// Scratch for `apply`.
    pub fn scratch(&self) -> Vec<Val> {
        vec![Val::U8(0); self.nodes.len()]
    }

    /// `a ⊕ b` for many pairs of items at once, node by node (`eval_block`): items as lanes of
    /// their components (`a[j]`: component j of each left item, all of `a` and `b` of one
    /// length), the results into `out` (a lane a component, of `item_lanes`; cleared first).
    /// `lanes` is `block_lanes`. Each result is the one `apply` gives its pair.
    pub fn apply_block(
        &self,
        a: &[Lanes],
        b: &[Lanes],
        lanes: &mut [Lanes],
        canon: bool,
        out: &mut [Lanes],
    ) {
        let len = a.first().map_or(0, Lanes::len);
        out.iter_mut().for_each(Lanes::clear);
        if self.nodes.is_empty() {
            for (o, x) in out.iter_mut().zip(a) {
                o.push_strided(x, 0, 1, len);
            }
            return;
        }
        let k = self.types.len();
        eval_block(&self.nodes, len, lanes, |n, _, lane| {
            let bits = match n.kind {
                Kind::Arg(j) if (j as usize) < k => {
                    return lane.push_strided(&a[j as usize], 0, 1, len);
                }
                Kind::Arg(j) => return lane.push_strided(&b[j as usize - k], 0, 1, len),
                Kind::Param(p) => self.params[p as usize],
                // A combiner has no other leaves.
                _ => 0,
            };
            let v = Val::from_compute_bits(n.ty, bits);
            by_lane!(&*lane, fill_lane(lane, v, len))
        });
        for ((o, &r), &c) in out.iter_mut().zip(&self.outs).zip(&self.canon) {
            o.push_strided(&lanes[r as usize], 0, 1, len);
            if canon && c {
                o.canonicalize();
            }
        }
    }

    /// Scratch for `apply_block`: a lane a node, room for `len` values.
    pub fn block_lanes(&self, len: usize) -> Vec<Lanes> {
        self.nodes.iter().map(|n| Lanes::new(n.ty, len)).collect()
    }

    /// Lanes for items: one a component (of its compute type), room for `len` values.
    pub fn item_lanes(&self, len: usize) -> Vec<Lanes> {
        self.types.iter().map(|&t| Lanes::new(t, len)).collect()
    }
}

/// An item's components as compute values, from stored bits.
pub(crate) fn load_item(types: &[ScalarType], bits: &[u64]) -> Vec<Val> {
    types
        .iter()
        .zip(bits)
        .map(|(&t, &b)| Val::load(t, b))
        .collect()
}

/// An item's stored bits from compute values.
pub(crate) fn store_item(types: &[ScalarType], vals: &[Val]) -> Vec<u64> {
    types.iter().zip(vals).map(|(&t, v)| v.store(t)).collect()
}

/// An item's components as compute values, from compute bits.
pub(crate) fn load_compute(types: &[ScalarType], bits: &[u64]) -> Vec<Val> {
    types
        .iter()
        .zip(bits)
        .map(|(&t, &b)| Val::from_compute_bits(t, b))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::item::Expr;

    #[test]
    fn commutative_combiners_are_recognized() {
        let sums = Combiner::trace::<(f32, u32)>(|(a, b), (c, d)| (c + a, b.max(d))).unwrap();
        assert!(sums.commutative());
        let scalar = Combiner::trace::<i64>(|a, b| a ^ b).unwrap();
        assert!(scalar.commutative());
        // Not commutative by construction: order-keeping, mixed components, constants, float
        // min/max (which keep the first of equal zeros), segmented forms, differences.
        let affine =
            Combiner::trace::<(f32, f32)>(|(a1, b1), (a2, b2)| (a1 * a2, b1 * a2 + b2)).unwrap();
        let crossed = Combiner::trace::<(u32, u32)>(|(a, b), (c, d)| (a + d, b + c)).unwrap();
        let scaled = Combiner::trace::<u32>(|a, b| (a + b) * 2u32).unwrap();
        let fmax = Combiner::trace::<f32>(|a, b| a.max(b)).unwrap();
        let diff = Combiner::trace::<i32>(|a, b| a - b).unwrap();
        let first = Combiner::trace::<u32>(|a, _| a + Expr::constant(0u32)).unwrap();
        for c in [
            &affine,
            &crossed,
            &scaled,
            &fmax,
            &diff,
            &first,
            &sums.segmented(),
        ] {
            assert!(!c.commutative(), "{c:?}");
        }
    }
}
