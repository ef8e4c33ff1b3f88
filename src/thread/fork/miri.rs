//! Under Miri (any unix target), which has neither `madvise` nor `minherit`
//! and cannot fork: a stand-in that answers as Linux does, so that
//! `storage.rs` runs its production path ([`Wipe`](super::Protection::Wipe))
//! on real mappings (`pages.rs`).

/// As on Linux: the system has a wipe-on-fork mechanism.
pub(crate) const HAS_WIPE: bool = true;

/// Accepted, as by Linux: no child can exist under Miri to see the pages.
///
/// # Safety
/// `page..page + len` is a private anonymous mapping the caller owns.
pub(crate) unsafe fn advise_wipe(page: *mut u8, len: usize, _: bool) -> bool {
    let _ = (page, len);
    true
}

/// Accepted, as by Linux: Miri writes no core dump.
///
/// # Safety
/// As [`advise_wipe`].
pub(crate) unsafe fn advise_no_dump(page: *mut u8, len: usize) -> bool {
    let _ = (page, len);
    true
}
