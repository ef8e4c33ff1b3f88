//! Fork detection: which protection this process has, and the OS mechanisms,
//! one file each (`fork/linux.rs`: `madvise` wipe-on-fork; `fork/bsd.rs`:
//! `minherit`; `fork/none.rs`: the other unix systems, which have no wipe;
//! `fork/atfork.rs`: the `pthread_atfork` epoch; `fork/miri.rs`: a stand-in
//! under Miri). This parent module is the only place that selects them.
//!
//! # Layers
//! 1. **Wipe on fork** (Linux and Android: `MADV_WIPEONFORK`, kernel 4.14+,
//!    believed only where the kernel refuses an unknown advice;
//!    FreeBSD and OpenBSD: `minherit` with `INHERIT_ZERO`). A forked child gets
//!    zero-filled pages in place of the thread states, however it was made.
//! 2. **`pthread_atfork`** (every unix): the child handler moves the fork
//!    epoch and zeroes every unwiped thread state (`storage.rs`). Registered
//!    at the first use where the wipe is absent or not believed; where it is
//!    believed (BoringSSL and AWS-LC register nothing there), at the first
//!    slow path that is not a thread's first use ([`second_layer`]), so that
//!    a process's first draw does not pay for it.
//! 3. **Process id**: compared on the slow path where there is no wipe.
//!
//! No layer starts a process: the environment is classified by the answers
//! to the advice (`fork/linux.rs` lists each environment and what protects it).

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

/// Keeps `page..page + len` out of core dumps where the system can (best
/// effort: the fork safety does not depend on it); true if accepted.
/// `unsafe`: `page..page + len` must be a private anonymous mapping the caller
/// owns.
#[cfg(unix)]
pub(crate) use wipe::advise_no_dump;

/// Asks the kernel to give a forked child zero-filled pages in place of
/// `page..page + len`; true if accepted and believed (`fork/linux.rs`), false
/// where the system has no such mechanism. With the inspection switch
/// ([`WIPE_VERDICT`]) set, `Some(false)` asks nothing and `Some(true)`
/// believes the advice's acceptance alone.
///
/// # Safety
/// `page..page + len` is a private anonymous mapping the caller owns.
#[cfg(unix)]
pub(crate) unsafe fn advise_wipe(page: *mut u8, len: usize) -> bool {
    #[cfg(ratchet_rng_inspect)]
    if let Some(verdict) = WIPE_VERDICT.with(core::cell::Cell::get) {
        // SAFETY: the caller's mapping.
        return verdict && unsafe { wipe::advise_wipe(page, len, true) };
    }
    // SAFETY: the caller's mapping.
    unsafe { wipe::advise_wipe(page, len, false) }
}

/// How forks are detected in this process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Protection {
    /// The states' pages are wiped in a forked child (the kernel accepted the
    /// advice and refused an unknown one). The fast path is open.
    Wipe,
    /// No wipe mechanism on this system; `pthread_atfork` is registered. The fast
    /// path is open; every slow path (once per buffer refill) also compares the
    /// process id.
    Epoch,
    /// A wipe mechanism should exist but is not believed here (an emulator, an
    /// old kernel), or `pthread_atfork` failed: every call takes the slow path
    /// and compares the process id.
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

/// This process's protection, decided on first use from `wipes` (whether the
/// calling thread's state's page is wiped in a forked child, as
/// [`advise_wipe`] answered for its slab), registering the `pthread_atfork`
/// handler with `on_child` as its hook unless the wipe is believed (or later,
/// for a thread whose slab could not be advised); later calls return the
/// decided value. An atomic rather than a `Once`: a fork while another thread holds a
/// `Once` would leave the child waiting forever.
///
/// Racing threads may each decide, and need not agree (with the inspection
/// switch [`WIPE_VERDICT`], which is per thread). The verdicts are merged with
/// `fetch_max` in [`CONSERVATIVE`]'s order, and each thread returns the merged
/// value, not its own: a process where any thread saw the wipe fail never goes
/// back to `Wipe`. The limit: a thread that returned `Wipe` before another
/// stored `PidCheck` has its fast path open until its next slow path (at most
/// one buffer), which reads the merged verdict and closes it.
pub(crate) fn protection(on_child: fn(), wipes: bool) -> Protection {
    if let Some(known) = decided() {
        if known == Protection::Wipe && !wipes {
            // A slab the kernel would not advise, in a process whose wipe is
            // believed: the hook zeroes its states in a libc child.
            second_layer(on_child);
        }
        return known;
    }
    let decided = decide(on_child, wipes);
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
    /// What this thread takes as the wipe's verdict instead of asking
    /// (`__inspect::simulate_wipe_verdict`): `Some(false)`, a test's stand-in
    /// for an emulator or a system without a believable wipe (no advice is
    /// asked); `Some(true)`, the advice's acceptance believed alone.
    pub(crate) static WIPE_VERDICT: core::cell::Cell<Option<bool>> =
        const { core::cell::Cell::new(None) };
}

/// This process's verdict so far, if decided.
pub(crate) fn decided() -> Option<Protection> {
    let cached = PROTECTION.load(Ordering::Acquire);
    CONSERVATIVE
        .get(usize::from(cached).wrapping_sub(1))
        .copied()
}

#[cfg(unix)]
fn decide(on_child: fn(), wipes: bool) -> Protection {
    #[cfg(ratchet_rng_inspect)]
    let wipes = WIPE_VERDICT.with(core::cell::Cell::get).unwrap_or(wipes);
    if wipe::HAS_WIPE && wipes {
        // The wipe covers the first use; the handler, a second layer here,
        // is registered at a later slow path ([`second_layer`]).
        return Protection::Wipe;
    }
    let registered = atfork::register(on_child);
    if !wipe::HAS_WIPE && registered {
        Protection::Epoch
    } else {
        Protection::PidCheck
    }
}

#[cfg(all(ratchet_rng_inspect, unix))]
pub(crate) use atfork::registered as handler_registered;

/// Registers the `pthread_atfork` handler (hook `on_child`) if it is not yet:
/// called by every slow path but a thread's first use, where [`protection`]
/// leaves it out if the wipe is believed (2–10 µs: it allocates in libc).
pub(crate) fn second_layer(on_child: fn()) {
    #[cfg(unix)]
    atfork::register(on_child);
    #[cfg(not(unix))]
    let _ = on_child;
}

#[cfg(not(unix))]
fn decide(_: fn(), _: bool) -> Protection {
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
