//! Test-only introspection of secret state, compiled only with
//! `RATCHET_RNG_INSPECT=1` (or `--cfg ratchet_rng_inspect`): a cfg set by whoever
//! runs the build, never a feature a dependency could enable. Hidden from the
//! docs; not part of the API. Everything here exposes secrets: tests only.

// ---------------------------------------------------------------------------
// thread
// ---------------------------------------------------------------------------

/// Where this thread's generator state (the thread-local generator behind
/// [`rng()`](crate::rng)) lives, and what the kernel accepted about it.
#[cfg(feature = "thread_rng")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadStatePages {
    /// The address of the state's allocation (on unix: the start of its own
    /// anonymous mapping, as `/proc/self/smaps` lists it on Linux).
    pub address: usize,
    /// Its length in bytes (whole pages on unix).
    pub len: usize,
    /// The pages are given zero-filled to a forked child (the wipe advice was
    /// accepted, and the once-per-process check did not show otherwise).
    pub wipe_on_fork: bool,
    /// The advice to keep the pages out of core dumps (`MADV_DONTDUMP` /
    /// `MADV_NOCORE`) was accepted.
    pub dont_dump: bool,
    /// Address and length of the generator's key material inside the pages.
    pub key: (usize, usize),
    /// Address and length of the unread (future) output inside the pages.
    pub unread: (usize, usize),
}

/// This thread's generator state, created and seeded if needed; `None` when it
/// cannot exist (thread-local destruction, OS failure). The addresses are for
/// tests that read the state between calls on this thread.
#[cfg(feature = "thread_rng")]
pub fn thread_state_pages() -> Option<ThreadStatePages> {
    let seen = crate::thread::storage::inspect()?;
    Some(ThreadStatePages {
        address: seen.page.0,
        len: seen.page.1,
        wipe_on_fork: seen.advice.0,
        dont_dump: seen.advice.1,
        key: seen.secrets[0],
        unread: seen.secrets[1],
    })
}
