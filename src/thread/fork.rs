//! Fork detection: which protection this process has, and the OS mechanisms,
//! one file each (`fork/linux.rs`: `madvise` wipe-on-fork; `fork/bsd.rs`:
//! `minherit`; `fork/none.rs`: the other unix systems, which have no wipe;
//! `fork/atfork.rs`: the `pthread_atfork` epoch; `fork/miri.rs`: a stand-in
//! under Miri). This parent module is the only place that selects them.
//!
//! # Layers
//! 1. **Wipe on fork** (Linux and Android: `MADV_WIPEONFORK`, kernel 4.14+;
//!    FreeBSD and OpenBSD: `minherit` with `INHERIT_ZERO`). A forked child gets
//!    zero-filled pages in place of the thread states, however it was made.
//! 2. **`pthread_atfork`** (every unix): the child handler moves the fork epoch
//!    and closes the forking thread's fast path (see `storage.rs`).
//! 3. **Process id**: compared on the slow path where there is no wipe.

#[cfg(unix)]
mod atfork;

// The wipe mechanism: one file per kind of system, each named `wipe` here;
// under Miri, which runs none of them (no `madvise`, no fork), a stand-in that
// answers as Linux does, so that the storage runs its production path.
#[cfg(all(any(target_os = "freebsd", target_os = "openbsd"), not(miri)))]
#[path = "fork/bsd.rs"]
mod wipe;
#[cfg(all(any(target_os = "linux", target_os = "android"), not(miri)))]
#[path = "fork/linux.rs"]
mod wipe;
#[cfg(all(
    unix,
    not(miri),
    not(any(
        target_os = "linux",
        target_os = "android",
        target_os = "freebsd",
        target_os = "openbsd"
    ))
))]
#[path = "fork/none.rs"]
mod wipe;
#[cfg(all(unix, miri))]
#[path = "fork/miri.rs"]
mod wipe;

use core::sync::atomic::{AtomicU8, Ordering};

/// Asks the kernel to give a forked child zero-filled pages in place of
/// `page..page + len`; true if accepted, false where the system has no such
/// mechanism. Keeps `page..page + len` out of core dumps where the system can
/// (best effort: the fork safety does not depend on it); true if accepted.
///
/// Both are `unsafe`: `page..page + len` must be a private anonymous mapping
/// the caller owns.
#[cfg(unix)]
pub(crate) use wipe::{advise_no_dump, advise_wipe};

/// How forks are detected in this process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Protection {
    /// The states' pages are wiped in a forked child (the kernel accepted the
    /// advice, and the probe did not show otherwise); the epoch is a second layer.
    /// The fast path is open.
    Wipe,
    /// No wipe mechanism on this system; `pthread_atfork` is registered. The fast
    /// path is open; every slow path (once per buffer refill) also compares the
    /// process id.
    Epoch,
    /// A wipe mechanism should exist but does not work here (an emulator, an old
    /// kernel), or `pthread_atfork` failed: every call takes the slow path and
    /// compares the process id.
    PidCheck,
    /// Not unix: no `fork`.
    NoFork,
}

impl Protection {
    /// Whether the fast path may serve from a state whose pages are wiped in a
    /// child iff `wipes`.
    pub(crate) fn fast_path(self, wipes: bool) -> bool {
        match self {
            Self::Wipe => wipes,
            Self::Epoch | Self::NoFork => true,
            Self::PidCheck => false,
        }
    }

    /// Whether every slow path compares the process id (no wipe to rely on).
    pub(crate) fn checks_pid(self) -> bool {
        matches!(self, Self::Epoch | Self::PidCheck)
    }
}

/// `Protection` as decided by [`protection`], cached (0 = not decided yet).
static PROTECTION: AtomicU8 = AtomicU8::new(0);

/// This process's protection, decided (and probed) on first use, when the
/// `pthread_atfork` handler is registered with `on_child` as its hook. Racing
/// threads may each decide; they reach the same answer. An atomic rather than a
/// `Once`: a fork while another thread holds a `Once` would leave the child
/// waiting forever.
pub(crate) fn protection(on_child: fn()) -> Protection {
    const ALL: [Protection; 4] = [
        Protection::Wipe,
        Protection::Epoch,
        Protection::PidCheck,
        Protection::NoFork,
    ];
    let cached = PROTECTION.load(Ordering::Acquire);
    if let Some(&known) = ALL.get(usize::from(cached).wrapping_sub(1)) {
        return known;
    }
    let decided = decide(on_child);
    let code = ALL.iter().position(|&p| p == decided).map_or(0, |i| i + 1);
    PROTECTION.store(code as u8, Ordering::Release);
    decided
}

#[cfg(unix)]
fn decide(on_child: fn()) -> Protection {
    let registered = atfork::register(on_child);
    if wipe::HAS_WIPE {
        // The epoch is a second layer here; the wipe decides.
        if wipe::wipe_works() {
            Protection::Wipe
        } else {
            Protection::PidCheck
        }
    } else if registered {
        Protection::Epoch
    } else {
        Protection::PidCheck
    }
}

#[cfg(not(unix))]
fn decide(_: fn()) -> Protection {
    Protection::NoFork
}

/// The current fork epoch (moved in every libc-made child).
pub(crate) fn epoch() -> usize {
    #[cfg(unix)]
    {
        atfork::epoch()
    }
    #[cfg(not(unix))]
    {
        0
    }
}

/// This process's id on unix (a system call: `getpid`), where a fork gives the
/// child a new one; 0 elsewhere, where no process forks and `std::process::id()`
/// may not exist: it panics on WASI and on `wasm32-unknown-unknown`.
///
/// Its limit: a child made by a raw `clone` into a new PID namespace is pid 1
/// there, as its parent may be in its own namespace; where the fork check
/// relies on the process id alone (no wipe, no `pthread_atfork` for raw system
/// calls) such a child is not told apart.
pub(crate) fn process_id() -> u32 {
    #[cfg(unix)]
    {
        std::process::id()
    }
    #[cfg(not(unix))]
    {
        0
    }
}
