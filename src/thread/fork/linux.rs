//! Linux and Android: `madvise(MADV_WIPEONFORK)` (kernel 4.14+) gives a forked
//! child zero-filled pages, however it was made (`fork()`, or a raw `fork` /
//! `clone` system call); `MADV_DONTDUMP` keeps them out of core dumps.
//!
//! # Classifying the environment: no child, no `/proc`
//! The advice is asked once per slab of thread states (`pages.rs`), and the
//! first slab also classifies the process, as BoringSSL and AWS-LC do: an
//! advice no kernel knows, `madvise(slab, len, -1)`, must fail with `EINVAL`
//! before `MADV_WIPEONFORK`'s success is believed. Each environment:
//! - **A kernel with wipe-on-fork** (4.14+), whatever seccomp filter,
//!   `SIGCHLD` disposition or reaper the process has: `-1` is refused with
//!   `EINVAL`, the advice accepted: the pages are wiped in every child, raw
//!   `clone` ones too ([`Wipe`](super::Protection::Wipe)). No system call is
//!   made that a sandbox forbids: two `madvise` (and one for the dump).
//! - **An emulator that accepts any advice** (qemu-user 7.2 answers 0 to `-1`
//!   and ignores `MADV_WIPEONFORK`: a child sees the page unwiped): `-1`
//!   accepted, so nothing it says is believed ([`PidCheck`](super::Protection::PidCheck)):
//!   every call compares the process id, and the `pthread_atfork` hook wipes
//!   the states in a libc child.
//! - **A kernel without wipe-on-fork** (before 4.14), or a filter that fails
//!   `madvise`: the advice is refused, `PidCheck` as above.
//! - **A filter or emulator that fakes success for every `madvise`**: `-1`
//!   accepted, `PidCheck`.
//!
//! The limit: an emulator that refuses unknown advice with `EINVAL` *and*
//! accepts `MADV_WIPEONFORK` without applying it is believed (none is known);
//! a fork through libc is still caught there by the `pthread_atfork` hook once
//! it is registered (at the first buffer refill, `fork.rs`), a raw `clone` is
//! not, and such a child would also share the seed reserve (`pages.rs`: new
//! threads' first seeds, served only under `Wipe`) with its parent.
//!
//! `MAP_DROPPABLE` (Linux 6.11+, which implies wipe-on-fork) is not used for
//! the states: the kernel may drop such a page under memory pressure in the
//! middle of a refill, and a kernel that has it answers the two probes above
//! anyway.

/// Whether this system has a wipe-on-fork mechanism at all.
pub(crate) const HAS_WIPE: bool = true;

/// Asks the kernel to give a forked child zero-filled pages in place of
/// `page..page + len`; true if accepted by a kernel that refuses an advice it
/// does not know (`-1`: then the acceptance is believed), or, with `believe`
/// (the inspection switch), accepted at all.
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
