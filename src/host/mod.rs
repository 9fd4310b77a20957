//! The host backend: every primitive on the CPU with rayon, giving the answers API.md
//! describes (integers identical to the GPU's; floats deterministic, rounded in the host's
//! own fixed order).

pub(crate) mod combine;
pub(crate) mod compact;
pub(crate) mod gather;
pub(crate) mod histogram;
pub(crate) mod map;
pub(crate) mod reduce;
pub(crate) mod scan;
pub(crate) mod segment;
pub(crate) mod sort;

/// Elements a parallel task takes: fixed, so float results never depend on the thread count.
pub(crate) const CHUNK: usize = 1 << 14;
