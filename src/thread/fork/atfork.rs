//! The `pthread_atfork` layer (every unix): a fork epoch that moves in the
//! child of every libc `fork()`, and a hook that closes the forking thread's
//! state there (a raw `fork` / `clone` runs no handler: the wipe catches it).

use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};

/// Moved in every libc child once registered; compared on the slow path.
static FORK_EPOCH: AtomicUsize = AtomicUsize::new(0);

/// The storage's child hook ([`register`]'s argument; null: none), kept as a
/// pointer: one rebuilt from an integer has no provenance (calling it: UB).
static CHILD_HOOK: AtomicPtr<()> = AtomicPtr::new(core::ptr::null_mut());

/// Whether the handler is registered.
static REGISTERED: AtomicBool = AtomicBool::new(false);

/// Whether the handler is registered (inspection).
#[cfg(ratchet_rng_inspect)]
pub(crate) fn registered() -> bool {
    REGISTERED.load(Ordering::Acquire)
}

/// The current fork epoch.
pub(crate) fn epoch() -> usize {
    FORK_EPOCH.load(Ordering::Relaxed)
}

/// The child handler, run by the child's only thread (the one that forked,
/// possibly inside a signal handler): only atomic and plain memory writes.
extern "C" fn in_child() {
    FORK_EPOCH.fetch_add(1, Ordering::Relaxed);
    call_hook(&CHILD_HOOK);
}

/// Stores `hook` in `slot` as a pointer (its provenance kept).
fn store_hook(slot: &AtomicPtr<()>, hook: fn()) {
    slot.store(hook as *mut (), Ordering::Relaxed);
}

/// Calls the function [`store_hook`] last stored in `slot`, if any.
fn call_hook(slot: &AtomicPtr<()>) {
    let hook = slot.load(Ordering::Relaxed);
    if !hook.is_null() {
        // SAFETY: only `store_hook` stores into a hook slot, and only a `fn()`
        // cast to a pointer, so this is that function pointer with its
        // provenance (a pointer-to-pointer transmute, never an integer's);
        // functions live for the whole program.
        let hook = unsafe { core::mem::transmute::<*mut (), fn()>(hook) };
        hook();
    }
}

/// Registers the child handler with hook `on_child` (the same every time);
/// true if it is registered. Two racing threads may both register it: the
/// epoch then moves by two per fork (only "changed" matters), and the hook
/// runs twice, which it tolerates.
pub(crate) fn register(on_child: fn()) -> bool {
    // Every refill asks: one load once registered (the hook was stored first).
    if REGISTERED.load(Ordering::Acquire) {
        return true;
    }
    store_hook(&CHILD_HOOK, on_child);
    #[cfg(ratchet_rng_inspect)]
    crate::__inspect::signal_unsafe_call();
    // SAFETY: the handler is a plain `extern "C" fn` with no arguments, lives
    // for the whole program and touches only atomics and the hook.
    let rc = unsafe { libc::pthread_atfork(None, None, Some(in_child)) };
    if rc == 0 {
        REGISTERED.store(true, Ordering::Release);
    }
    rc == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    static CALLS: AtomicUsize = AtomicUsize::new(0);

    fn count_call() {
        CALLS.fetch_add(1, Ordering::Relaxed);
    }

    /// The child handler's hook call, without a fork (Miri cannot fork), on a
    /// slot of its own: `in_child` itself would move the fork epoch and swap
    /// the storage's hook under the other tests. Miri checks the provenance
    /// (`CHILD_HOOK`; `.ci/mutants/miri-hook-from-integer.patch`).
    #[test]
    fn child_handler_calls_the_registered_hook() {
        static SLOT: AtomicPtr<()> = AtomicPtr::new(core::ptr::null_mut());
        call_hook(&SLOT);
        assert_eq!(CALLS.load(Ordering::Relaxed), 0, "no hook registered");
        store_hook(&SLOT, count_call);
        call_hook(&SLOT);
        call_hook(&SLOT);
        assert_eq!(CALLS.load(Ordering::Relaxed), 2);
    }
}
