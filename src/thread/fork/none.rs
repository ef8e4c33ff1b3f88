//! Other unix systems (macOS, NetBSD, illumos, ...): no wipe-on-fork or
//! no-dump advice this crate uses; the `pthread_atfork` epoch checks forks.
//! Systems without `fork` (Windows, WASI) need none.
//!
//! Under Miri on a unix target, which has neither `madvise` nor `minherit`
//! and cannot fork, every advice is accepted instead, as by Linux, so that
//! `storage.rs` runs its production path ([`Wipe`](super::Protection::Wipe))
//! on real mappings (`pages.rs`): no child can exist there to see the pages.

/// Whether this system has a wipe-on-fork mechanism (Miri on unix: as Linux).
pub(crate) const HAS_WIPE: bool = cfg!(all(miri, unix));

/// No wipe-on-fork advice here: false (Miri: accepted).
///
/// # Safety
/// `page..page + len` is memory the caller owns.
pub(crate) unsafe fn advise_wipe(page: *mut u8, len: usize, _: bool) -> bool {
    let _ = (page, len);
    HAS_WIPE
}

/// No core-dump advice here: false (Miri: accepted, it writes no core dump).
///
/// # Safety
/// As [`advise_wipe`].
pub(crate) unsafe fn advise_no_dump(page: *mut u8, len: usize) -> bool {
    let _ = (page, len);
    HAS_WIPE
}
