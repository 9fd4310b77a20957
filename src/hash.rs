//! A fast hasher for the crate's own keys (expression graphs, kernel keys), which are small,
//! hashed on every call and never chosen by an adversary: each word is folded in with a
//! rotation, an exclusive or and a multiplication (the scheme of rustc's `FxHasher`), where the
//! standard library's SipHash costs more than the rest of a lazy `map`'s host work.

use std::hash::{BuildHasherDefault, Hasher};

/// The hasher; `Fast` builds it for hash maps.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct FastHasher(u64);

/// Builds `FastHasher`s: `HashMap<K, V, Fast>`.
pub(crate) type Fast = BuildHasherDefault<FastHasher>;

/// An odd constant with well-mixed bits (2^64 / the golden ratio).
const K: u64 = 0x9e37_79b9_7f4a_7c15;

impl FastHasher {
    fn add(&mut self, w: u64) {
        self.0 = (self.0.rotate_left(5) ^ w).wrapping_mul(K);
    }
}

impl Hasher for FastHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().unwrap_or_default()));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(w) ^ (rest.len() as u64) << 56);
        }
    }
    fn write_u8(&mut self, i: u8) {
        self.add(i as u64);
    }
    fn write_u16(&mut self, i: u16) {
        self.add(i as u64);
    }
    fn write_u32(&mut self, i: u32) {
        self.add(i as u64);
    }
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
    fn finish(&self) -> u64 {
        // The last word's bits reach the low bits, which hash maps use to pick a bucket.
        self.0.rotate_left(26)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::Hash;

    fn h<T: Hash + ?Sized>(t: &T) -> u64 {
        let mut s = FastHasher::default();
        t.hash(&mut s);
        s.finish()
    }

    /// Different small keys hash apart, in their low bits too (the buckets of a small map).
    #[test]
    fn small_keys_spread() {
        let mut low = std::collections::HashSet::new();
        let mut all = std::collections::HashSet::new();
        for a in 0u32..64 {
            for b in 0u8..16 {
                let x = h(&(a, b));
                all.insert(x);
                low.insert(x & 1023);
            }
        }
        assert_eq!(all.len(), 64 * 16);
        assert!(low.len() > 600, "{} of 1024 low-bit buckets", low.len());
        assert_ne!(h(&[1u8, 2, 3][..]), h(&[1u8, 2, 3, 0][..]));
    }
}
