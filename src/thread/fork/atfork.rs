//! The `pthread_atfork` layer (every unix): a fork epoch that moves in the child
//! of every `fork()` made through libc, and a hook that closes the forking
//! thread's state there.
//!
//! It sees only forks made through libc: a raw `fork` / `clone` system call runs
//! no handler (the wipe-on-fork pages catch those where the system has them).

use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};

/// Incremented in the child of every `fork()` made through libc (once the
/// handler is registered); compared on the slow path.
static FORK_EPOCH: AtomicUsize = AtomicUsize::new(0);

/// The storage's child hook ([`register`]'s argument), as a pointer (null:
/// none). A pointer, not an address: a function pointer rebuilt from an integer
/// has no provenance, and calling it is undefined behaviour.
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

/// The child handler. It runs in the child, which has a single thread at that
/// point (the one that forked, possibly inside a signal handler), and does only
/// atomic and plain memory writes: it moves the epoch, then lets the storage
/// close that thread's fast path.
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

/// Registers the child handler, which calls `on_child` after moving the epoch;
/// true if it is registered. Called with the same `on_child` every time. Two
/// threads racing here may both register it: the epoch then moves by two per
/// fork, which is as good (only "changed" matters), and the hook runs twice,
/// which it tolerates.
pub(crate) fn register(on_child: fn()) -> bool {
    // Once registered, one load (every refill asks, `fork::second_layer`): the
    // hook was stored before the handler was registered.
    if REGISTERED.load(Ordering::Acquire) {
        return true;
    }
    store_hook(&CHILD_HOOK, on_child);
    // SAFETY: the handler is a plain `extern "C" fn` with no arguments that lives
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

    /// The child handler's hook call, without a fork (Miri cannot fork): a
    /// hook stored as `register` stores it is called as `in_child` calls it.
    /// On a slot of its own, not `CHILD_HOOK`: running `in_child` itself would
    /// move this process's fork epoch and swap the storage's hook under the
    /// other tests. Miri checks the round trip: a function pointer rebuilt
    /// from an integer has no provenance, and calling it is undefined
    /// behaviour (`.ci/mutants/miri-hook-from-integer.patch`).
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
