//! A fork that bypasses libc: shared by `tests/fork.rs` and `tests/signals.rs`
//! through `#[path]` (neither includes the rest of `common`).
//!
//! The system call, with each architecture's argument order, is in
//! `raw_clone.rs` beside this file.

#[path = "raw_clone.rs"]
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
