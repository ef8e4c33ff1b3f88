//! The injection hook's own round trip, small enough for Miri (which runs it
//! under both aliasing models in an inspection build, see CONTRIBUTING.md
//! "Miri"): a hook set with `__inspect::set_injection_hook` is called at the
//! points a draw passes, and no more once it is unset. `tests/injection.rs`
//! uses the hook to raise signals, which Miri cannot run; this file only
//! counts. The hook is kept as a pointer, never an integer: a function pointer
//! rebuilt from an integer has no provenance, and Miri reports the call as
//! undefined behaviour (`.ci/mutants/miri-hook-from-integer.patch`). Needs
//! `RATCHET_RNG_INSPECT=1`; a plain run counts the test as ignored.

#[cfg(ratchet_rng_inspect)]
mod counting {
    use ratchet_rng::__inspect::Point;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Calls per point, in `Point::ALL`'s order.
    pub static CALLS: [AtomicUsize; Point::ALL.len()] =
        [const { AtomicUsize::new(0) }; Point::ALL.len()];

    /// The hook: counts (atomics only, async-signal-safe as a hook must be).
    pub fn count(point: Point) {
        if let Some(i) = Point::ALL.iter().position(|&p| p == point) {
            CALLS[i].fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Calls so far at `point`.
    pub fn calls(point: Point) -> usize {
        let i = Point::ALL.iter().position(|&p| p == point).unwrap();
        CALLS[i].load(Ordering::Relaxed)
    }

    /// Calls so far at every point.
    pub fn total() -> usize {
        CALLS.iter().map(|c| c.load(Ordering::Relaxed)).sum()
    }
}

#[test]
#[cfg_attr(not(ratchet_rng_inspect), ignore = "needs RATCHET_RNG_INSPECT=1")]
fn hook_is_called_where_a_draw_passes() {
    #[cfg(ratchet_rng_inspect)]
    {
        use counting::{calls, count, total};
        use ratchet_rng::__inspect::{Point, set_injection_hook};

        // The first draw (the slow path) with no hook: nothing counted.
        let _ = ratchet_rng::u64();
        assert_eq!(total(), 0, "a hook ran before any was set");

        // Every draw enters `take` (the fast path) or the slow path, or both.
        let entered = || calls(Point::TakeSlotRead) + calls(Point::SlowSlotRead);
        set_injection_hook(Some(count));
        let first = ratchet_rng::u64();
        let after_u64 = entered();
        let mut bytes = [0u8; 24];
        ratchet_rng::fill(&mut bytes);
        let after_fill = entered();
        let second = ratchet_rng::u64();
        set_injection_hook(None);

        assert_ne!(first, second);
        assert_ne!(bytes, [0; 24]);
        assert!(after_u64 >= 1, "u64(): the hook was not called");
        assert!(after_fill > after_u64, "fill(): the hook was not called");
        assert!(entered() > after_fill, "u64(): the hook was not called");

        let seen = total();
        let _ = ratchet_rng::u64();
        ratchet_rng::fill(&mut bytes);
        assert_eq!(total(), seen, "the hook ran after it was unset");
    }
}
