//! Anonymous page mappings (unix): what the thread states and the wipe probe
//! live in, so that the kernel can be told what a forked child sees there.

use core::ptr;

/// The system's page size.
pub(crate) fn page_bytes() -> usize {
    // SAFETY: `sysconf` only reads a system value; `_SC_PAGESIZE` is a valid name.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(page).unwrap_or(4096).max(4096)
}

/// Maps the pages at once (one system call instead of a page fault per page on
/// first touch) where the system can. Not under Miri, whose `mmap` accepts
/// exactly `MAP_PRIVATE | MAP_ANONYMOUS` (the mapping is the same otherwise).
#[cfg(all(any(target_os = "linux", target_os = "android"), not(miri)))]
const POPULATE: libc::c_int = libc::MAP_POPULATE;
#[cfg(any(not(any(target_os = "linux", target_os = "android")), miri))]
const POPULATE: libc::c_int = 0;

/// A new private, anonymous, zero-filled read-write mapping of `len` bytes.
pub(crate) fn map(len: usize) -> Option<*mut u8> {
    // SAFETY: a new anonymous mapping at an address the kernel chooses: no memory
    // we (or anyone) own is affected; failure is reported as `MAP_FAILED`.
    let page = unsafe {
        libc::mmap(
            ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANON | POPULATE,
            -1,
            0,
        )
    };
    (page != libc::MAP_FAILED).then_some(page.cast::<u8>())
}

/// Unmaps what [`map`] returned.
///
/// # Safety
/// `page` and `len` are a mapping from [`map`], not used afterwards.
pub(crate) unsafe fn unmap(page: *mut u8, len: usize) {
    // SAFETY: the caller guarantees `page..page + len` is our mapping, unused from
    // now on. A failure can only leak the mapping.
    let _ = unsafe { libc::munmap(page.cast(), len) };
}
