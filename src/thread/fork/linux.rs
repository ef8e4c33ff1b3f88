//! Linux and Android: `madvise(MADV_WIPEONFORK)` (kernel 4.14+) gives a forked
//! child zero-filled pages, however it was made (`fork()`, or a raw `fork` /
//! `clone` system call); `MADV_DONTDUMP` keeps them out of core dumps.
//!
//! # The probe, and sandboxes
//! Emulators such as qemu-user accept `MADV_WIPEONFORK` without applying it, so
//! the first use in a process checks that a child really sees a wiped page. The
//! check must neither kill nor slow a sandboxed process, nor be stolen by its
//! reaper, so:
//! - the child is made by a raw `clone` with **no exit signal** (under qemu-user,
//!   which refuses that, an ordinary one): no `SIGCHLD` is
//!   sent (a handler or `SIGCHLD = SIG_IGN` does not matter: such a child is
//!   never reaped automatically), and only a wait with `__WALL` (or `__WCLONE`)
//!   sees it, so an application's `waitpid(-1, ..)` reaper cannot take it;
//! - when `/proc/thread-self/status` shows a seccomp filter (`Seccomp: 2`), or cannot be
//!   read, there is no probe: a filter may kill the process on `clone`. Then, and
//!   whenever the probe cannot run or gives no clear answer (`clone` refused, the
//!   child killed), the kernel's acceptance of the advice is trusted: a kernel
//!   without wipe-on-fork (before 4.14) rejects it with `EINVAL`. Only a child
//!   that reads the page and finds it *not* wiped makes the answer "no".
//!
//! The limit: an emulator that lies about the advice *and* runs under a seccomp
//! filter (or without a readable `/proc`) is taken at its word; a fork through
//! libc is still caught there by the `pthread_atfork` layer.

/// Whether this system has a wipe-on-fork mechanism at all.
pub(crate) const HAS_WIPE: bool = true;

use crate::thread::pages;

// The raw `clone` of the probe, shared with the tests (`tests/common/raw_fork.rs`).
#[path = "raw_clone.rs"]
mod raw_clone;

/// Asks the kernel to give a forked child zero-filled pages in place of
/// `page..page + len`; true if accepted (not proof: see [`wipe_works`]).
///
/// # Safety
/// `page..page + len` is a private anonymous mapping the caller owns.
pub(crate) unsafe fn advise_wipe(page: *mut u8, len: usize) -> bool {
    // SAFETY: the caller's mapping; the advice changes only what a forked child
    // sees there.
    unsafe { libc::madvise(page.cast(), len, libc::MADV_WIPEONFORK) == 0 }
}

/// Keeps `page..page + len` out of core dumps; true if accepted.
///
/// # Safety
/// As [`advise_wipe`].
pub(crate) unsafe fn advise_no_dump(page: *mut u8, len: usize) -> bool {
    // SAFETY: the caller's mapping; the advice only affects core dumps.
    unsafe { libc::madvise(page.cast(), len, libc::MADV_DONTDUMP) == 0 }
}

/// Whether a forked child sees wipe-advised pages as zeros (see the module
/// documentation for when this is probed and when the kernel is trusted).
pub(crate) fn wipe_works() -> bool {
    let len = pages::page_bytes();
    let Some(page) = pages::map(len) else {
        return false;
    };
    // SAFETY: `page..page + len` is the fresh private mapping made above.
    let works = unsafe { advise_wipe(page, len) } && {
        // SAFETY: `page` is a fresh read-write mapping of at least one byte.
        unsafe { page.write_volatile(0xA5) };
        if seccomp_filtered() {
            true
        } else {
            // qemu-user refuses a `clone` without exit signal: then an ordinary
            // one (its child is a plain child: `SIG_IGN` or a reaper may take
            // it, which leaves the answer unclear, so trusted).
            child_sees_zero(page, 0)
                .or_else(|| child_sees_zero(page, libc::SIGCHLD))
                .unwrap_or(true)
        }
    };
    // SAFETY: our mapping from `map` above, not used after this.
    unsafe { pages::unmap(page, len) };
    works
}

/// True when this thread's `/proc/thread-self/status` (filters are per
/// thread; `/proc/self/status` before Linux 3.17) says a seccomp filter is
/// active (`Seccomp:` 2) or cannot be read. Reads into the stack with
/// `open`/`read` (no allocation).
fn seccomp_filtered() -> bool {
    const PATHS: [&[u8]; 2] = [b"/proc/thread-self/status\0", b"/proc/self/status\0"];
    const KEY: &[u8] = b"\nSeccomp:\t";
    let mut fd = -1;
    for path in PATHS {
        // SAFETY: a NUL-terminated path; the flags ask for nothing but reading.
        fd = unsafe { libc::open(path.as_ptr().cast(), libc::O_RDONLY | libc::O_CLOEXEC) };
        if fd >= 0 {
            break;
        }
    }
    if fd < 0 {
        return true;
    }
    let mut text = [0u8; 8192];
    let mut len = 0;
    while len < text.len() {
        // SAFETY: `text[len..]` is valid for writes of its length; `fd` is ours.
        let n = unsafe { libc::read(fd, text[len..].as_mut_ptr().cast(), text.len() - len) };
        match usize::try_from(n) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(_) if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) => {}
            Err(_) => break,
        }
    }
    // SAFETY: our descriptor, closed once.
    unsafe { libc::close(fd) };
    let text = &text[..len];
    match text.windows(KEY.len()).position(|w| w == KEY) {
        // 0: no seccomp; 1: strict mode (then this read would have killed us
        // already); 2: a filter.
        Some(at) => text.get(at + KEY.len()) != Some(&b'0'),
        None => len == 0,
    }
}

/// Clones a child with exit signal `exit_signal` (0: none) that exits with
/// status 0 iff it reads 0 at `page`, and waits for it with `__WALL`. `None` when
/// there is no clear answer (the clone refused, the child killed or gone).
fn child_sees_zero(page: *const u8, exit_signal: libc::c_int) -> Option<bool> {
    // SAFETY: the child below only reads memory and calls `_exit`
    // (async-signal-safe), as a child of a multi-threaded process must.
    let pid = unsafe { raw_clone::fork(exit_signal) };
    if pid == 0 {
        // SAFETY: the child inherits the mapping (wiped or not): a valid read.
        let byte = unsafe { page.read_volatile() };
        // SAFETY: `_exit` ends the child at once, running nothing of the parent's.
        unsafe { libc::_exit(i32::from(byte != 0)) }
    }
    if pid <= 0 {
        return None;
    }
    let mut status: libc::c_int = 0;
    loop {
        // SAFETY: `status` is a valid out-pointer; `pid` is our own child.
        let rc = unsafe { libc::waitpid(pid, &mut status, libc::__WALL) };
        if rc == pid {
            return libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status) == 0);
        }
        if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return None;
        }
    }
}
