//! Other unix systems (macOS, NetBSD, illumos, ...): no wipe-on-fork or
//! no-dump advice this crate uses; the `pthread_atfork` epoch checks forks.

/// Whether this system has a wipe-on-fork mechanism at all.
pub(crate) const HAS_WIPE: bool = false;

/// No wipe-on-fork advice here: false.
///
/// # Safety
/// `page..page + len` is a private anonymous mapping the caller owns.
pub(crate) unsafe fn advise_wipe(page: *mut u8, len: usize, _: bool) -> bool {
    let _ = (page, len);
    false
}

/// No core-dump advice here: false.
///
/// # Safety
/// As [`advise_wipe`].
pub(crate) unsafe fn advise_no_dump(page: *mut u8, len: usize) -> bool {
    let _ = (page, len);
    false
}
