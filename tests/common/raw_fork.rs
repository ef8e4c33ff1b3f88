//! A fork that bypasses libc: shared by `tests/fork.rs` and `tests/signals.rs`
//! through `#[path]` (neither includes the rest of `common`).
//!
//! The system call is the library's own: `src/thread/fork/raw_clone.rs` (the
//! wipe probe's `clone`, with each architecture's argument order), included here
//! by path, so there is one copy of it.

#[path = "../../src/thread/fork/raw_clone.rs"]
mod raw_clone;

/// `fork` as a raw system call: `clone` with only the exit signal `SIGCHLD` (no
/// `CLONE_VM`, no new stack, no tid or tls pointer). libc's `pthread_atfork`
/// handlers do not run, so only a wipe-on-fork protects the child.
/// Async-signal-safe. Returns what `fork` returns.
///
/// # Safety
/// As `fork`: the child of a multithreaded process may only call
/// async-signal-safe functions until it execs or exits.
pub unsafe fn raw_fork() -> libc::pid_t {
    // SAFETY: the caller's guarantee.
    unsafe { raw_clone::fork(libc::SIGCHLD) }
}
