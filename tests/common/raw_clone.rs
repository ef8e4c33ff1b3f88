//! A fork as a raw `clone` system call, bypassing libc (no `pthread_atfork`
//! handler runs). Linux and Android only; it uses nothing but `libc`.
//!
//! Included by `tests/common/raw_fork.rs` (the library itself no longer makes
//! any child: it was its wipe probe's, issue 34).
//!
//! # The argument order
//! The kernel's `clone` takes `(flags, newsp, parent_tid, child_tid, tls)`
//! (x86_64 and the generic order), `(flags, newsp, parent_tid, tls, child_tid)`
//! where the kernel is built with `CLONE_BACKWARDS` (i386, arm, powerpc, mips,
//! ...), `(flags, newsp, stack_size, parent_tid, child_tid, tls)` with
//! `CLONE_BACKWARDS3` (microblaze), and `(newsp, flags, parent_tid, child_tid,
//! tls)` with `CLONE_BACKWARDS2` (s390 and cris). Here every argument but the
//! flags is 0 (no new stack: the child runs on its copy of this one), so only the
//! place of the flags matters: first everywhere, second on s390x.
//!
//! On sparc the kernel gives the child the *parent's* pid in the return register
//! and marks the child in a second register, which `syscall(2)` does not return:
//! the two could not be told apart, so there is no raw fork there.

/// The first two arguments of a fork-like `clone` with `flags`: the flags and
/// a null new stack pointer, in this architecture's order.
fn flags_and_stack(flags: libc::c_long) -> [libc::c_long; 2] {
    if cfg!(target_arch = "s390x") {
        [0, flags]
    } else {
        [flags, 0]
    }
}

/// `fork` as a raw `clone` system call: no flag but the exit signal
/// `exit_signal` (0: none, the child is then waited for only with `__WALL` or
/// `__WCLONE`), so a copy of the address space. Returns what `fork` returns: the
/// child's id in the parent, 0 in the child, -1 on failure (`errno` set), and -1
/// with `errno` untouched on sparc (see the module documentation).
///
/// # Safety
/// As `fork`: the child of a multi-threaded process may only call
/// async-signal-safe functions until it execs or exits.
pub(crate) unsafe fn fork(exit_signal: libc::c_int) -> libc::pid_t {
    if cfg!(any(target_arch = "sparc", target_arch = "sparc64")) {
        return -1;
    }
    let [first, second] = flags_and_stack(libc::c_long::from(exit_signal));
    // SAFETY: the caller's guarantee; a `clone` with these arguments is a fork
    // (no shared memory, no new stack, no tid or tls pointer written).
    let pid = unsafe {
        libc::syscall(
            libc::SYS_clone,
            first,
            second,
            0 as libc::c_long,
            0 as libc::c_long,
            0 as libc::c_long,
        )
    };
    // A pid fits a `pid_t`; anything else is not a pid.
    libc::pid_t::try_from(pid).unwrap_or(-1)
}
