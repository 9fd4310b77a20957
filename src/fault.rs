//! Fault injection, for tests: the k-th device allocation, or the k-th kernel launch, counted
//! from the moment a fault is armed, fails as if the device had refused it
//! (`Error::OutOfMemory`, `Error::Cuda`). One fault of each kind at a time, process-wide; it
//! fires once and disarms itself. When nothing is armed the cost is one relaxed load.
//!
//! On the host backend the allocations are the stored columns a primitive makes (its results
//! and materialized temporaries); it launches no kernels.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

struct Trigger {
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

    fn arm(&self, k: u64) {
        self.at.store(0, Ordering::SeqCst);
        self.count.store(0, Ordering::SeqCst);
        self.fired.store(false, Ordering::SeqCst);
        self.at.store(k, Ordering::SeqCst);
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

static ALLOCATION: Trigger = Trigger::new();
static LAUNCH: Trigger = Trigger::new();

/// Whether the allocation being made must fail.
pub(crate) fn allocation() -> bool {
    ALLOCATION.hit()
}

/// Whether the kernel launch being made must fail.
pub(crate) fn launch() -> bool {
    LAUNCH.hit()
}

/// Arms the allocation fault (`crate::testing`).
pub(crate) fn arm_allocation(k: u64) {
    ALLOCATION.arm(k);
}

/// Arms the launch fault (`crate::testing`).
pub(crate) fn arm_launch(k: u64) {
    LAUNCH.arm(k);
}

/// Whether the allocation fault fired since it was armed.
pub(crate) fn allocation_fired() -> bool {
    ALLOCATION.fired.load(Ordering::SeqCst)
}

/// Whether the launch fault fired since it was armed.
pub(crate) fn launch_fired() -> bool {
    LAUNCH.fired.load(Ordering::SeqCst)
}
