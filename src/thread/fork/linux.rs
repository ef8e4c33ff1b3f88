//! Linux and Android: `madvise(MADV_WIPEONFORK)` (kernel 4.14+) gives a forked
//! child zero-filled pages, however it was made (`fork()`, or a raw `fork` /
//! `clone` system call); `MADV_DONTDUMP` keeps them out of core dumps.
//!
//! # Classifying the environment: no child, no `/proc`
//! The first slab's advice (`pages.rs`) also classifies the process, as
//! BoringSSL and AWS-LC do: `madvise(slab, len, -1)`, an advice no kernel
//! knows, must fail with `EINVAL` before `MADV_WIPEONFORK`'s success counts.
//! - **A kernel with wipe-on-fork**, under any seccomp filter, `SIGCHLD`
//!   disposition or reaper (only `madvise` is called): `-1` refused, the
//!   advice accepted: [`Wipe`](super::Protection::Wipe), every child wiped.
//! - **An emulator or a filter that accepts any advice** (qemu-user, which
//!   ignores the wipe): `-1` accepted: [`PidCheck`](super::Protection::PidCheck),
//!   every call compares the process id, and the `pthread_atfork` hook zeroes
//!   the states in a libc child.
//! - **A kernel without wipe-on-fork, or a filter that fails `madvise`**: the
//!   advice refused: `PidCheck`.
//!
//! The limit: an emulator or a seccomp filter that refuses unknown advice
//! *and* fakes the wipe is believed; the `pthread_atfork` hook, registered by
//! the process's first use, still catches a libc fork there, not a raw
//! `clone`, whose child would also share the seed reserve (`pages.rs`) with
//! its parent.
//!
//! Not `MAP_DROPPABLE` (Linux 6.11+): the kernel may drop such a page in the
//! middle of a refill, and a kernel with it passes the probes above anyway.

/// Whether this system has a wipe-on-fork mechanism at all.
pub(crate) const HAS_WIPE: bool = true;

/// Asks for `MADV_WIPEONFORK` on `page..page + len`; true if accepted by a
/// kernel that refuses the unknown advice `-1` or, with `believe` (the
/// inspection switch), accepted at all.
///
/// # Safety
/// `page..page + len` is a private anonymous mapping the caller owns.
pub(crate) unsafe fn advise_wipe(page: *mut u8, len: usize, believe: bool) -> bool {
    // SAFETY: the caller's mapping; an invalid advice changes nothing, and
    // `MADV_WIPEONFORK` changes only what a forked child sees there.
    unsafe {
        (believe
            || libc::madvise(page.cast(), len, -1) != 0
                && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINVAL))
            && libc::madvise(page.cast(), len, libc::MADV_WIPEONFORK) == 0
    }
}

/// Keeps `page..page + len` out of core dumps; true if accepted.
///
/// # Safety
/// As [`advise_wipe`].
pub(crate) unsafe fn advise_no_dump(page: *mut u8, len: usize) -> bool {
    // SAFETY: the caller's mapping; the advice only affects core dumps.
    unsafe { libc::madvise(page.cast(), len, libc::MADV_DONTDUMP) == 0 }
}
