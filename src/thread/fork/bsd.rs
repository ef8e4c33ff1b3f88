//! FreeBSD and OpenBSD: `minherit(INHERIT_ZERO)` gives a forked child
//! zero-filled pages; FreeBSD's `MADV_NOCORE` keeps them out of core dumps.

/// Whether this system has a wipe-on-fork mechanism at all.
pub(crate) const HAS_WIPE: bool = true;

/// Asks the kernel to give a forked child zero-filled pages in place of
/// `page..page + len`; true if accepted. No emulator is known to accept
/// `minherit` without applying it, so the kernel's acceptance is believed.
///
/// # Safety
/// `page..page + len` is a private anonymous mapping the caller owns.
pub(crate) unsafe fn advise_wipe(page: *mut u8, len: usize, _: bool) -> bool {
    #[cfg(target_os = "freebsd")]
    let inherit = libc::INHERIT_ZERO;
    #[cfg(target_os = "openbsd")]
    let inherit = libc::MAP_INHERIT_ZERO;
    // SAFETY: the caller's mapping; only a child's view of it changes.
    unsafe { libc::minherit(page.cast(), len, inherit) == 0 }
}

/// Keeps `page..page + len` out of core dumps (FreeBSD); true if accepted.
///
/// # Safety
/// As [`advise_wipe`].
pub(crate) unsafe fn advise_no_dump(page: *mut u8, len: usize) -> bool {
    #[cfg(target_os = "freebsd")]
    {
        // SAFETY: the caller's mapping; the advice only affects core dumps.
        unsafe { libc::madvise(page.cast(), len, libc::MADV_NOCORE) == 0 }
    }
    #[cfg(not(target_os = "freebsd"))]
    {
        let _ = (page, len);
        false
    }
}
