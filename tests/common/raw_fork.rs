//! A fork that bypasses libc: shared by `tests/fork.rs` and `tests/signals.rs`
//! through `#[path]` (neither includes the rest of `common`).

/// `fork` as a raw system call: `clone` with only the exit signal (no
/// `CLONE_VM`), every other argument (stack, parent and child tid, tls) 0. libc's
/// `pthread_atfork` handlers do not run, so only a wipe-on-fork protects the
/// child. Async-signal-safe. Returns what `fork` returns.
///
/// # Safety
/// As `fork`: the child of a multithreaded process may only call
/// async-signal-safe functions until it execs or exits.
pub unsafe fn raw_fork() -> libc::pid_t {
    // SAFETY: the caller's guarantee; `clone` with these arguments is `fork`.
    unsafe {
        libc::syscall(
            libc::SYS_clone,
            libc::c_long::from(libc::SIGCHLD),
            0 as libc::c_long,
            0 as libc::c_long,
            0 as libc::c_long,
            0 as libc::c_long,
        ) as libc::pid_t
    }
}
