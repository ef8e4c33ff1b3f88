//! Under Miri (`cfg(miri)`, any unix target): the interpreter has neither
//! `madvise` nor `minherit`, and cannot fork. No child can ever see this
//! process's pages, so a wipe-on-fork holds without being asked for; this
//! stand-in answers as a Linux kernel with `MADV_WIPEONFORK` does (accepted,
//! and believed), so that `storage.rs` runs exactly its production path there: protection
//! [`Wipe`](super::Protection::Wipe), the fast path open, the in-use mark,
//! the `live` re-check, `take` and `serve`. The pages themselves are real
//! mappings (`pages.rs`).

/// As on Linux: the system has a wipe-on-fork mechanism.
pub(crate) const HAS_WIPE: bool = true;

/// Accepted, as by Linux: no child can exist under Miri to see the pages.
///
/// # Safety
/// As on the real systems: `page..page + len` is a private anonymous mapping
/// the caller owns (nothing is done with it here).
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
