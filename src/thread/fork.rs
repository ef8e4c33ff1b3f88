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

/// `Protection` as decided by [`protection`], cached: 0 = not decided yet, else
/// the 1-based index in [`CONSERVATIVE`].
static PROTECTION: AtomicU8 = AtomicU8::new(0);

/// The verdicts, least conservative first: where two threads' verdicts differ,
/// the later one in this list wins. Only `Wipe` and `PidCheck` (systems with a
/// wipe mechanism) or `Epoch` and `PidCheck` (without one) can meet; `NoFork`
/// is alone.
const CONSERVATIVE: [Protection; 4] = [
    Protection::Wipe,
    Protection::Epoch,
    Protection::PidCheck,
    Protection::NoFork,
];

/// This process's protection, decided (and probed) on first use, when the
/// `pthread_atfork` handler is registered with `on_child` as its hook. An
/// atomic rather than a `Once`: a fork while another thread holds a `Once`
/// would leave the child waiting forever.
///
/// Racing threads may each decide, and need not agree: seccomp filters are per
/// thread, so a thread under one cannot probe and trusts the kernel's word
/// (`Wipe`), while another probes and may see the wipe fail (`PidCheck`, under
/// an emulator). The verdicts are merged with `fetch_max` in [`CONSERVATIVE`]'s
/// order, and each thread returns the merged value, not its own: a process
/// where any thread saw the wipe fail never goes back to `Wipe`. The limit: a
/// thread that returned `Wipe` before another stored `PidCheck` has its fast
/// path open until its next slow path (at most one buffer), which reads the
/// merged verdict and closes it.
pub(crate) fn protection(on_child: fn()) -> Protection {
    let cached = PROTECTION.load(Ordering::Acquire);
    if let Some(&known) = CONSERVATIVE.get(usize::from(cached).wrapping_sub(1)) {
        return known;
    }
    let decided = decide(on_child);
    // Decided, not yet stored: another thread may decide and store here (the
    // injection tests hold this thread here while one does).
    inject!(DecideVerdict);
    let code = CONSERVATIVE
        .iter()
        .position(|&p| p == decided)
        .map_or(1, |i| i + 1) as u8;
    let merged = PROTECTION.fetch_max(code, Ordering::AcqRel).max(code);
    CONSERVATIVE[usize::from(merged) - 1]
}

#[cfg(all(ratchet_rng_inspect, unix))]
std::thread_local! {
    /// What `decide` takes as the wipe probe's answer on this thread instead of
    /// probing (`__inspect::simulate_wipe_verdict`): a test's stand-in for an
    /// emulator that accepts the advice without applying it.
    pub(crate) static WIPE_VERDICT: core::cell::Cell<Option<bool>> =
        const { core::cell::Cell::new(None) };
}

/// The wipe probe's answer (see [`WIPE_VERDICT`] for the inspection builds).
#[cfg(unix)]
fn wipe_works() -> bool {
    #[cfg(ratchet_rng_inspect)]
    if let Some(verdict) = WIPE_VERDICT.with(core::cell::Cell::get) {
        return verdict;
    }
    wipe::wipe_works()
}

/// This process's verdict so far, if decided (inspection hook).
#[cfg(ratchet_rng_inspect)]
pub(crate) fn decided() -> Option<Protection> {
    let cached = PROTECTION.load(Ordering::Acquire);
    CONSERVATIVE
        .get(usize::from(cached).wrapping_sub(1))
        .copied()
}

#[cfg(unix)]
fn decide(on_child: fn()) -> Protection {
    let registered = atfork::register(on_child);
    if wipe::HAS_WIPE {
        // The epoch is a second layer here; the wipe decides.
        if wipe_works() {
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
