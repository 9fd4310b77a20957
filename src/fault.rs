//! Fault injection, for tests: the k-th device allocation, or the k-th kernel launch, counted
//! from the moment a fault is armed, fails as if the device had refused it
//! (`Error::OutOfMemory`, `Error::Cuda`). One fault of each kind at a time, process-wide; it
//! fires once and disarms itself. When nothing is armed the cost is one relaxed load.
//!
//! On the host backend the allocations are the stored columns a primitive makes (its results
//! and materialized temporaries); it launches no kernels.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

pub(crate) struct Trigger {
    /// 0: disarmed; else the count at which to fail.
    at: AtomicU64,
    count: AtomicU64,
    fired: AtomicBool,
}

impl Trigger {
    const fn new() -> Trigger {
        Trigger {
            at: AtomicU64::new(0),
            count: AtomicU64::new(0),
            fired: AtomicBool::new(false),
        }
    }

    /// Fails the `k`-th event from now (`k` from 1; 0 disarms).
    pub fn arm(&self, k: u64) {
        self.at.store(0, Ordering::SeqCst);
        self.count.store(0, Ordering::SeqCst);
        self.fired.store(false, Ordering::SeqCst);
        self.at.store(k, Ordering::SeqCst);
    }

    /// Whether the fault fired since it was armed.
    pub fn fired(&self) -> bool {
        self.fired.load(Ordering::SeqCst)
    }

    /// Whether this event must fail.
    fn hit(&self) -> bool {
        let at = self.at.load(Ordering::Relaxed);
        if at == 0 {
            return false;
        }
        let n = self.count.fetch_add(1, Ordering::SeqCst) + 1;
        if n == at
            && self
                .at
                .compare_exchange(at, 0, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
        {
            self.fired.store(true, Ordering::SeqCst);
            return true;
        }
        false
    }
}

/// The allocation fault and the launch fault (armed through `crate::testing`).
pub(crate) static ALLOCATION: Trigger = Trigger::new();
pub(crate) static LAUNCH: Trigger = Trigger::new();

/// Whether the allocation being made must fail.
pub(crate) fn allocation() -> bool {
    ALLOCATION.hit()
}

/// Whether the kernel launch being made must fail.
pub(crate) fn launch() -> bool {
    LAUNCH.hit()
}
