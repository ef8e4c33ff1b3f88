//! Fork detection: which protection this process has ([`Protection`]; the
//! layers: SECURITY.md, "Forks"), and the OS mechanisms, one file each,
//! selected here only: `fork/linux.rs` (which lists each environment and what
//! protects it), `fork/bsd.rs`, `fork/none.rs` (no wipe; a stand-in under
//! Miri), `fork/atfork.rs` (the `pthread_atfork` epoch). No layer starts a
//! process.

#[cfg(unix)]
pub(crate) mod atfork;
/// No `fork` here: no handler to register, and an epoch that never moves.
#[cfg(not(unix))]
mod atfork {
    pub(crate) fn register(_: fn()) -> bool {
        false
    }
    pub(crate) fn epoch() -> usize {
        0
    }
}

// The wipe mechanism: one file per kind of system, each named `wipe` here.
#[cfg(all(any(target_os = "freebsd", target_os = "openbsd"), not(miri)))]
#[path = "fork/bsd.rs"]
mod wipe;
#[cfg(all(any(target_os = "linux", target_os = "android"), not(miri)))]
#[path = "fork/linux.rs"]
mod wipe;
#[cfg(not(all(
    any(
        target_os = "linux",
        target_os = "android",
        target_os = "freebsd",
        target_os = "openbsd"
    ),
    not(miri)
)))]
#[path = "fork/none.rs"]
mod wipe;

use core::sync::atomic::{AtomicU8, Ordering};

/// Keeps `page..page + len` out of core dumps where it can (fork safety does
/// not rely on it); true if accepted. `unsafe`: as [`advise_wipe`].
pub(crate) use wipe::advise_no_dump;

/// Asks the kernel to give a forked child zero-filled pages in place of
/// `page..page + len`; true if accepted and believed (`fork/linux.rs`), false
/// where the system has no such mechanism or [`WIPE_VERDICT`] says so.
///
/// # Safety
/// `page..page + len` is memory the caller owns: on unix, a private
/// anonymous mapping.
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
    /// No wipe mechanism; `pthread_atfork` is registered. The fast path is
    /// open; every slow path (once per buffer refill) compares the process id.
    Epoch,
    /// A wipe is not believed (an emulator, an old kernel) or `pthread_atfork`
    /// failed: every call takes the slow path and compares the process id.
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

/// The verdicts, least conservative first: where two threads' verdicts
/// differ, the later one wins. Only `Wipe` and `PidCheck` (systems with a wipe
/// mechanism) or `Epoch` and `PidCheck` (without one) can meet.
const CONSERVATIVE: [Protection; 4] = [
    Protection::Wipe,
    Protection::Epoch,
    Protection::PidCheck,
    Protection::NoFork,
];

/// This process's protection, decided on first use from `wipes` (what
/// [`advise_wipe`] answered for the calling thread's slab), when the
/// `pthread_atfork` handler (hook `on_child`) is registered, whatever the
/// verdict. An atomic, not a `Once`: a fork while another thread holds a `Once`
/// would leave the child waiting forever. Racing threads need not agree (the
/// per-thread [`WIPE_VERDICT`]): each returns the verdicts merged by
/// `fetch_max` in [`CONSERVATIVE`]'s order, so none gets `Wipe` once one saw
/// the wipe fail; one that got it before keeps its fast path open until its
/// next slow path (at most one buffer).
pub(crate) fn protection(on_child: fn(), wipes: bool) -> Protection {
    if let Some(known) = decided() {
        return known;
    }
    let decided = decide(on_child, wipes);
    // Decided, not yet stored: another thread may decide and store here.
    inject!(DecideVerdict);
    let code = CONSERVATIVE
        .iter()
        .position(|&p| p == decided)
        .map_or(1, |i| i + 1) as u8;
    let merged = PROTECTION.fetch_max(code, Ordering::AcqRel).max(code);
    CONSERVATIVE[usize::from(merged) - 1]
}

#[cfg(ratchet_rng_inspect)]
std::thread_local! {
    /// What this thread takes as the wipe's verdict instead of asking
    /// (`__inspect::simulate_wipe_verdict`): `Some(false)`, no wipe believed
    /// and no advice asked; `Some(true)`, the advice's acceptance believed.
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

fn decide(on_child: fn(), wipes: bool) -> Protection {
    #[cfg(ratchet_rng_inspect)]
    let wipes = WIPE_VERDICT.with(core::cell::Cell::get).unwrap_or(wipes);
    if !cfg!(unix) {
        return Protection::NoFork;
    }
    // Registered here, at a first use, and never later: `pthread_atfork` takes
    // libc's lock, which `fork()` holds, so a signal handler that draws
    // during a fork would wait forever in it (issue 46). Where the wipe is
    // believed too, the handler catches a libc fork that a wipe faked by an
    // emulator or a seccomp filter misses, and zeroes an unadvised slab.
    let registered = atfork::register(on_child);
    if wipe::HAS_WIPE && wipes {
        Protection::Wipe
    } else if !wipe::HAS_WIPE && registered {
        Protection::Epoch
    } else {
        Protection::PidCheck
    }
}

/// The current fork epoch (moved in every libc-made child).
pub(crate) use atfork::epoch;

/// This process's id on unix (a system call: `getpid`); 0 elsewhere, where no
/// process forks and `std::process::id()` panics (on WASI and on
/// `wasm32-unknown-unknown`). Its limit (SECURITY.md, "Not covered"): a raw
/// `clone` into a new PID namespace may have its parent's id.
pub(crate) fn process_id() -> u32 {
    if cfg!(unix) { std::process::id() } else { 0 }
}
