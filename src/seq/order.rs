//! Orders over keys: each component's ordered bits (an unsigned word whose order is the
//! component's), and for tuples, words in which the components are packed so that one
//! unsigned comparison is the lexicographic one.
//!
//! A tuple whose components fit in 64 bits together sorts, searches and merges as one `u64`
//! key, packed lazily where it is read and unpacked where it is stored, so it costs what the
//! packed key costs (and the radix sort skips the digits no key varies in, as for any key).
//! Wider tuples are split into such words, the last component's word first: a least
//! significant digit first sort by each word in turn, stably, is the lexicographic sort;
//! searches and merges of wide tuples run over dense ranks (one sort of both sides).

use super::DeviceSeq;
use crate::error::Result;
use crate::item::{Expr, Index, Key, ScalarType};
use crate::op::Op;
use std::ops::Range;

/// The bits a component's ordered word can have set (a `bool` one).
fn width(ty: ScalarType) -> u32 {
    if ty == ScalarType::Bool { 1 } else { ty.bits() }
}

/// The components packed into each word, the most significant word first: from the last
/// component, as many as fit in 64 bits.
fn groups(types: &[ScalarType]) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut end = types.len();
    while end > 0 {
        let (mut start, mut bits) = (end, 0);
        while start > 0 && bits + width(types[start - 1]) <= 64 {
            start -= 1;
            bits += width(types[start]);
        }
        out.push(start..end);
        end = start;
    }
    out.reverse();
    out
}

/// The components `g` of `words` packed into one word, the first the most significant.
fn pack(types: &[ScalarType], words: &[Expr<u64>], g: Range<usize>) -> Expr<u64> {
    let mut shift = 0;
    let mut out: Option<Expr<u64>> = None;
    for k in g.rev() {
        let w = if shift == 0 {
            words[k]
        } else {
            words[k] << shift
        };
        out = Some(match out {
            None => w,
            Some(o) => o | w,
        });
        shift += width(types[k]);
    }
    out.expect("a group holds a component")
}

/// The components' ordered words from one packed word of all of them.
fn unpack(types: &[ScalarType], word: Expr<u64>) -> Vec<Expr<u64>> {
    let mut shift = 0;
    let mut out: Vec<Expr<u64>> = types
        .iter()
        .rev()
        .map(|&ty| {
            let w = width(ty);
            let v = if shift == 0 { word } else { word >> shift };
            shift += w;
            if w == 64 { v } else { v & ((1u64 << w) - 1) }
        })
        .collect();
    out.reverse();
    out
}

/// Whether the words `a` come before `b` lexicographically.
pub(super) fn lex_less(a: &[Expr<u64>], b: &[Expr<u64>]) -> Expr<bool> {
    let last = a.len() - 1;
    let mut less = a[last].lt(b[last]);
    for k in (0..last).rev() {
        less = a[k].lt(b[k]) | (a[k].eq(b[k]) & less);
    }
    less
}

impl<T: Key> DeviceSeq<T> {
    /// Whether the keys pack into one `u64` word (every element does).
    pub(super) fn packs() -> bool {
        groups(T::TYPES).len() == 1
    }

    /// The packed words of the keys, lazily, the most significant first (one where the keys
    /// pack).
    pub(super) fn order_keys(&self) -> Result<Vec<DeviceSeq<u64>>> {
        groups(T::TYPES)
            .into_iter()
            .map(|g| self.map(move |x| pack(T::TYPES, &T::order_words(x), g.clone())))
            .collect()
    }

    /// The keys whose packed words are `words` (where the keys pack), stored.
    pub(super) fn from_packed(words: &DeviceSeq<u64>) -> Result<Self> {
        words
            .map(|w| T::from_order_words(&unpack(T::TYPES, w)))?
            .copy()
    }

    /// The stable permutation that sorts the keys (ascending or descending): a sort of each
    /// packed word in turn, the least significant first, carrying the permutation so far.
    pub(super) fn sorting_permutation<I: Index>(&self, descending: bool) -> Result<DeviceSeq<I>> {
        let mut perm = DeviceSeq::<I>::sequence(self.device(), self.len())?;
        for (k, word) in self.order_keys()?.iter().rev().enumerate() {
            let word = if k == 0 {
                word.clone()
            } else {
                word.gather_stored(&perm)?
            };
            perm = word.sort_pairs_in(&perm, descending)?.1;
        }
        Ok(perm)
    }

    /// The keys and `values` (where given) moved by [`sorting_permutation`](Self::sorting_permutation).
    pub(super) fn sorted_by_permutation<V: crate::item::Item>(
        &self,
        values: Option<&DeviceSeq<V>>,
        descending: bool,
    ) -> Result<(Self, Option<DeviceSeq<V>>)> {
        fn moved<T: Key, V: crate::item::Item, I: Index>(
            keys: &DeviceSeq<T>,
            values: Option<&DeviceSeq<V>>,
            descending: bool,
        ) -> Result<(DeviceSeq<T>, Option<DeviceSeq<V>>)> {
            let perm = keys.sorting_permutation::<I>(descending)?;
            let v = values.map(|v| v.gather_stored(&perm)).transpose()?;
            Ok((keys.gather_stored(&perm)?, v))
        }
        if (self.len() as u64) < u32::MAX as u64 {
            moved::<T, V, u32>(self, values, descending)
        } else {
            moved::<T, V, u64>(self, values, descending)
        }
    }

    /// Words for the keys of `self` and of `other` whose unsigned order is the keys' order:
    /// the packed keys (lazy) where they pack, else dense ranks of both sides' keys together.
    pub(super) fn joint_order(&self, other: &Self) -> Result<(DeviceSeq<u64>, DeviceSeq<u64>)> {
        if Self::packs() {
            let a = self.order_keys()?.remove(0);
            return Ok((a, other.order_keys()?.remove(0)));
        }
        let (na, both) = (self.len(), self.concat(other)?);
        let ranks = if (both.len() as u64) < u32::MAX as u64 {
            both.dense_ranks::<u32>()?
        } else {
            both.dense_ranks::<u64>()?
        };
        Ok((ranks.slice(..na), ranks.slice(na..)))
    }

    /// Each key's rank among the distinct keys, from 1.
    fn dense_ranks<I: Index>(&self) -> Result<DeviceSeq<u64>> {
        let perm = self.sorting_permutation::<I>(false)?;
        let heads = self.gather_stored(&perm)?.head_flags()?;
        let ranks = heads
            .map(|h| Expr::select(h, 1u64, 0u64))?
            .inclusive_scan(Op::Add)?;
        ranks.scatter(&perm, &ranks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ScalarType::*;

    #[test]
    fn groups_fill_words_from_the_last_component() {
        assert_eq!(groups(&[U32, U32]), vec![0..2]);
        assert_eq!(groups(&[U64, U8]), vec![0..1, 1..2]);
        assert_eq!(groups(&[U8, U64, U32, Bool]), vec![0..1, 1..2, 2..4]);
        assert_eq!(groups(&[Bool, F32, I16, U8, Bool]), vec![0..5]);
        assert_eq!(groups(&[F64]), vec![0..1]);
    }
}
