//! The `pthread_atfork` layer (every unix): a fork epoch that moves in the child
//! of every `fork()` made through libc, and a hook that closes the forking
//! thread's state there.
//!
//! It sees only forks made through libc: a raw `fork` / `clone` system call runs
//! no handler (the wipe-on-fork pages catch those where the system has them).

use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Incremented in the child of every `fork()` made through libc (once the
/// handler is registered); compared on the slow path.
static FORK_EPOCH: AtomicUsize = AtomicUsize::new(0);

/// The storage's child hook ([`register`]'s argument), as an address (0: none).
static CHILD_HOOK: AtomicUsize = AtomicUsize::new(0);

/// Whether the handler is registered.
static REGISTERED: AtomicBool = AtomicBool::new(false);

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
    let hook = CHILD_HOOK.load(Ordering::Relaxed);
    if hook != 0 {
        // SAFETY: the only value ever stored is a `fn()` by `register`, which
        // lives for the whole program.
        let hook: fn() = unsafe { core::mem::transmute::<usize, fn()>(hook) };
        hook();
    }
}

/// Registers the child handler, which calls `on_child` after moving the epoch;
/// true if it is registered. Called with the same `on_child` every time. Two
/// threads racing here may both register it: the epoch then moves by two per
/// fork, which is as good (only "changed" matters), and the hook runs twice,
/// which it tolerates.
pub(crate) fn register(on_child: fn()) -> bool {
    CHILD_HOOK.store(on_child as usize, Ordering::Relaxed);
    if REGISTERED.load(Ordering::Acquire) {
        return true;
    }
    // SAFETY: the handler is a plain `extern "C" fn` with no arguments that lives
    // for the whole program and touches only atomics and the hook.
    let rc = unsafe { libc::pthread_atfork(None, None, Some(in_child)) };
    if rc == 0 {
        REGISTERED.store(true, Ordering::Release);
    }
    rc == 0
}
