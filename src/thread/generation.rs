//! The process-wide generation: what makes every thread throw away the bytes it
//! has buffered and reseed before it serves anything more, when the whole
//! process may have been duplicated in a way no `fork` check sees (a virtual
//! machine snapshot restored, twice maybe; a CRIU-style process restore).
//!
//! A generation is two words, compared for equality by every call on every
//! thread (the fast path included, under the in-use mark, after it copied its
//! bytes and before it returns them):
//! - `explicit`, a counter this process keeps, moved by
//!   [`reseed_all_threads`] (one atomic add: async-signal-safe);
//! - `vm`, a load from the VMClock device's page (`/dev/vmclock0`, Linux:
//!   `vm_generation_counter`, which the hypervisor changes on every snapshot
//!   restore), mapped read-only once per process (`generation/vmclock.rs`);
//!   where there is no such device, a word in a droppable page, which a CRIU
//!   restore (and a fork) leaves 0 ([`DROPPABLE`]; Linux 6.11+), or else a
//!   constant.
//!
//! Each thread's page records the generation its generator was seeded under
//! (`storage.rs`); a call that finds another one takes the slow path, which
//! zeroes the buffer and reseeds, mixing in what differs between clones
//! ([`clone_material`]: a CPU random source, the VMClock fields, clocks), since
//! right after a restore the guest kernel's generator may not have reseeded
//! yet and two clones asking it at once can get the same bytes.
//!
//! The slow path trusts the VMClock page only when a seqlock read finds it
//! valid (magic, the generation-counter flag, an even and unchanged
//! `seq_count`) and its counter equal to what the fast path compares; otherwise
//! it reseeds on every call and keeps the fast path closed.
//!
//! The device is probed on the slow path until the probe is decided ([`probe`]:
//! hostile files at its path refused by `fstat`, a page torn at the probe
//! watched unsettled, failures that may pass retried a bounded number of
//! times); until then no call serves from a buffer. What was found is
//! `backends().vm_generation()` and `.process_restore()`.

use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};

#[path = "generation/hardware.rs"]
mod hardware;
// Under Miri (which cannot map a device) only the module's unit test of the
// seqlock read runs.
#[cfg(any(
    all(any(target_os = "linux", target_os = "android"), not(miri)),
    all(test, miri, target_os = "linux")
))]
#[cfg_attr(
    miri,
    allow(dead_code, reason = "under Miri only the seqlock read is tested")
)]
#[path = "generation/vmclock.rs"]
mod vmclock;

/// What [`Watch::vm_word`] points at where no VMClock page is mapped: never
/// changes.
static NO_DEVICE: AtomicUsize = AtomicUsize::new(0);

/// The two words behind every call's check, side by side: one address for the
/// fast path to find.
#[repr(C, align(64))]
struct Watch {
    /// The word of the VMClock page that holds (the low bytes of)
    /// `vm_generation_counter`, the droppable word (its own `MAP_DROPPABLE`
    /// page, which the kernel zeroes in a fork child and CRIU leaves empty in
    /// a restored process; re-armed by the slow path), or [`NO_DEVICE`]. Set
    /// once per process (or by the inspection hook); no page is ever unmapped.
    vm_word: AtomicPtr<AtomicUsize>,
    /// Moved by [`reseed_all_threads`](crate::reseed_all_threads).
    explicit: AtomicUsize,
}

static WATCH: Watch = Watch {
    vm_word: AtomicPtr::new((&raw const NO_DEVICE).cast_mut()),
    explicit: AtomicUsize::new(0),
};

/// The generation a thread's generator was seeded under (see the module doc).
/// Raw words, compared for equality only: the VMClock counter is little-endian
/// in its page, and on a 32-bit system only its low half is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Generation {
    pub(crate) vm: usize,
    pub(crate) explicit: usize,
}

/// The current generation: two loads (three with the page pointer), no system
/// call.
#[inline(always)]
pub(crate) fn current() -> Generation {
    let word = WATCH.vm_word.load(Ordering::Relaxed);
    // SAFETY: `vm_word` holds `NO_DEVICE`, a word of the read-only VMClock
    // mapping, or the droppable word; each mapping is made and checked before
    // its address is stored and never unmapped, so the word is valid for
    // atomic reads for the rest of the process. The kernel may zero the
    // droppable page at any time (a fork child, memory pressure): an atomic
    // load then reads 0, a new generation, never anything invalid.
    let vm = unsafe { (*word).load(Ordering::Relaxed) };
    Generation {
        vm,
        explicit: WATCH.explicit.load(Ordering::Relaxed),
    }
}

/// A new generation: every thread's next call discards what it buffered and
/// reseeds (see [`crate::reseed_all_threads`]). One atomic add.
pub(crate) fn bump() {
    WATCH.explicit.fetch_add(1, Ordering::Relaxed);
}

/// Whether `now` (read by the caller just before) may be trusted: the probe
/// has settled and watches no VMClock page, or a consistent read of the
/// watched page finds it valid with the counter `now` holds. `false`: the
/// caller must reseed and keep the fast path closed (also while a probe is in
/// progress or due again: no thread serves from a buffer before the watch is
/// decided).
///
/// A droppable word read as 0 is never trusted: its page was dropped after
/// the slow path re-armed it ([`probe`]) and before the caller read it. Were
/// that 0 recorded with the fast path open, a process restore, which leaves
/// the word 0 too, would compare equal and go unseen (issue 31); instead the
/// caller reseeds, and its next call re-arms the word and reseeds again.
pub(crate) fn trusted(now: Generation) -> bool {
    let Some(word) = watched_word() else {
        return PROBE.load(Ordering::Relaxed) == DONE && !(now.vm == 0 && restore_word_watched());
    };
    #[cfg(all(any(target_os = "linux", target_os = "android"), not(miri)))]
    {
        match vmclock::read_watched(word) {
            vmclock::View::Valid(fields) => {
                if UNSETTLED.load(Ordering::Relaxed) {
                    UNSETTLED.store(false, Ordering::Relaxed);
                    set_status(Status::Watched);
                }
                fields.generation_word == now.vm
            }
            vmclock::View::Invalid => {
                // A page watched unsettled (torn at its probe) whose first
                // consistent read shows it is no VMClock page: not watched
                // after all (every thread's next call sees the generation
                // move and reseeds). A page once valid stays watched, and
                // untrusted while invalid.
                if UNSETTLED.swap(false, Ordering::Relaxed) {
                    WATCH
                        .vm_word
                        .store((&raw const NO_DEVICE).cast_mut(), Ordering::Relaxed);
                    set_status(Status::Refused(Refusal::NotVmClock));
                }
                false
            }
            vmclock::View::Torn => false,
        }
    }
    #[cfg(not(all(any(target_os = "linux", target_os = "android"), not(miri))))]
    {
        let _ = (now, word);
        false
    }
}

/// The watched VMClock page's counter word, or `None` where none is watched.
fn watched_word() -> Option<*const AtomicUsize> {
    let word = WATCH.vm_word.load(Ordering::Relaxed);
    (!core::ptr::eq(word, &raw const NO_DEVICE)
        && !core::ptr::eq(word, DROPPABLE.load(Ordering::Relaxed)))
    .then_some(word.cast_const())
}

// --- process restores (CRIU): a word in a droppable page -----------------------

/// Where no VMClock page is watched, [`Watch::vm_word`] points here (Linux
/// 6.11+, 64-bit): a word alone in a page mapped `MAP_DROPPABLE`, which holds
/// a nonzero value the process wrote. A forked child sees the page wiped, and
/// so does a process that CRIU restored: CRIU does not dump the pages of a
/// droppable mapping (its `mem.c`), and restores the mapping empty. The word
/// then reads 0, a new generation for every thread's next call, on the fast
/// path too, at no cost (the same one load as [`NO_DEVICE`]). The kernel may
/// also drop the page under memory pressure: one needless reseed per thread.
/// The slow path re-arms the word ([`rearm`]). Null where the kernel refused
/// the mapping (before 6.11, 32-bit): then nothing in the process sees a
/// restore (call `reseed_all_threads()`).
static DROPPABLE: AtomicPtr<AtomicUsize> = AtomicPtr::new(core::ptr::null_mut());

/// Values written into the droppable word: 1, 3, 5, ... (never 0, never one
/// written before in this process's history, so that a re-armed word never
/// matches what a thread recorded before the wipe).
static ARMED: AtomicUsize = AtomicUsize::new(0);

/// `MAP_DROPPABLE` (`linux/mman.h`; not in every `libc` release): a mapping
/// type of its own, private, in place of `MAP_PRIVATE`.
#[cfg(all(any(target_os = "linux", target_os = "android"), not(miri)))]
const MAP_DROPPABLE: libc::c_int = 0x08;

/// The droppable word, mapped and armed on first need; null if the kernel
/// refuses the mapping.
#[cfg(all(any(target_os = "linux", target_os = "android"), not(miri)))]
fn droppable_word() -> *mut AtomicUsize {
    #[cfg(ratchet_rng_inspect)]
    if NO_DROPPABLE.load(Ordering::Relaxed) {
        return core::ptr::null_mut();
    }
    let word = DROPPABLE.load(Ordering::Relaxed);
    if !word.is_null() {
        return word;
    }
    let len = super::pages::page_bytes();
    // SAFETY: a new private anonymous mapping at an address the kernel
    // chooses; failure is `MAP_FAILED` (`EINVAL` before Linux 6.11 and on
    // 32-bit systems).
    let page = unsafe {
        libc::mmap(
            core::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            MAP_DROPPABLE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if page == libc::MAP_FAILED {
        return core::ptr::null_mut();
    }
    let word = page.cast::<AtomicUsize>();
    // Two probes at once (a child that took over its parent's): one wins, the
    // other page stays mapped and unused.
    match DROPPABLE.compare_exchange(
        core::ptr::null_mut(),
        word,
        Ordering::Relaxed,
        Ordering::Relaxed,
    ) {
        Ok(_) => {
            // Armed by a write, not a read first: one page fault, not two
            // (a read would map the zero page, the write then copy it).
            arm(word);
            word
        }
        Err(theirs) => theirs,
    }
}

/// Writes a new armed value into the droppable word if it reads 0 (wiped: a
/// fork, a restore, or memory pressure). Called by every slow path before it
/// reads the generation, so that the generation it records is armed.
fn rearm(word: *mut AtomicUsize) {
    // SAFETY: `word` is `DROPPABLE`'s: the start of a read-write mapping that
    // is never unmapped, aligned; the kernel may zero it at any time, which
    // an atomic read sees as 0 and a write faults back in.
    if unsafe { &*word }.load(Ordering::Relaxed) == 0 {
        arm(word);
    }
}

/// Writes a new armed value into the droppable word if it holds 0 (one
/// compare-and-swap: a write access).
fn arm(word: *mut AtomicUsize) {
    // SAFETY: as in `rearm`.
    let word = unsafe { &*word };
    let value = ARMED.fetch_add(1, Ordering::Relaxed) << 1 | 1;
    let _ = word.compare_exchange(0, value, Ordering::Relaxed, Ordering::Relaxed);
}

/// Why the VMClock device is not watched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// No such file (`ENOENT`, `ENODEV`, `ENXIO`, `ENOTDIR`).
    Absent,
    /// Not readable by this process (`EACCES`, `EPERM`): the device is often
    /// root-only (`crw-------`).
    PermissionDenied,
    /// A FIFO, a regular file, a directory, a socket, a symbolic link loop.
    NotCharDevice,
    /// A character device other than a misc device without a size
    /// (`/dev/null`, `/dev/zero`, a terminal).
    WrongDevice,
    /// Mapped, but no VMClock page with the VM generation counter.
    NotVmClock,
    /// Cannot be mapped (the kernel refused the `mmap`).
    CannotMap,
    /// Could not be opened or mapped for a reason that may pass (out of
    /// descriptors or memory, interrupted): retried on later slow paths, up
    /// to [`PROBES`] probes.
    CannotOpen,
}

impl Refusal {
    /// The refusal an `open` failing with `errno` means.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    #[cfg_attr(miri, allow(dead_code, reason = "no device under Miri"))]
    fn from_errno(errno: libc::c_int) -> Self {
        match errno {
            libc::ENOENT | libc::ENODEV | libc::ENXIO | libc::ENOTDIR => Self::Absent,
            libc::EACCES | libc::EPERM => Self::PermissionDenied,
            libc::ELOOP => Self::NotCharDevice,
            _ => Self::CannotOpen,
        }
    }

    /// The refusal an `mmap` failing with `errno` means.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    #[cfg_attr(miri, allow(dead_code, reason = "no device under Miri"))]
    fn from_map_errno(errno: libc::c_int) -> Self {
        match errno {
            libc::ENOMEM | libc::EAGAIN | libc::EINTR => Self::CannotOpen,
            _ => Self::CannotMap,
        }
    }

    /// Whether a later probe may find otherwise.
    fn passes(self) -> bool {
        self == Self::CannotOpen
    }
}

/// What the probe of the VMClock device found (see [`vm_generation_status`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    /// Not probed yet (no thread has used `rng()`), or being probed.
    NotProbed,
    /// Watched: a valid VMClock page with the generation counter.
    Watched,
    /// Watched, but being updated at the probe (odd `seq_count`): untrusted
    /// (every call reseeds) until a read finds it settled.
    Unsettled,
    /// Not watched, and why.
    Refused(Refusal),
    /// Not watched: a probe failed in a way that may pass; tried again.
    Retrying,
    /// No VMClock on this system (not Linux, or Miri).
    Unsupported,
}

impl Status {
    const ALL: [Self; 12] = [
        Self::NotProbed,
        Self::Watched,
        Self::Unsettled,
        Self::Refused(Refusal::Absent),
        Self::Refused(Refusal::PermissionDenied),
        Self::Refused(Refusal::NotCharDevice),
        Self::Refused(Refusal::WrongDevice),
        Self::Refused(Refusal::NotVmClock),
        Self::Refused(Refusal::CannotMap),
        Self::Refused(Refusal::CannotOpen),
        Self::Retrying,
        Self::Unsupported,
    ];

    fn name(self) -> &'static str {
        match self {
            Self::NotProbed => "not probed yet",
            Self::Watched => "vmclock",
            Self::Unsettled => {
                "vmclock (being updated at the probe: every call reseeds until it settles)"
            }
            Self::Refused(Refusal::Absent) => "none: no /dev/vmclock0",
            Self::Refused(Refusal::PermissionDenied) => {
                "none: /dev/vmclock0 not readable (permission denied)"
            }
            Self::Refused(Refusal::NotCharDevice) => {
                "none: /dev/vmclock0 is not a character device"
            }
            Self::Refused(Refusal::WrongDevice) => "none: /dev/vmclock0 is not the VMClock device",
            Self::Refused(Refusal::NotVmClock) => {
                "none: /dev/vmclock0 has no valid VMClock page with a VM generation counter"
            }
            Self::Refused(Refusal::CannotMap) => "none: /dev/vmclock0 cannot be mapped",
            Self::Refused(Refusal::CannotOpen) => {
                "none: /dev/vmclock0 could not be opened or mapped (tried several times)"
            }
            Self::Retrying => "probing: /dev/vmclock0 could not be opened or mapped yet",
            Self::Unsupported => "none: no VMClock device on this system",
        }
    }
}

/// The last [`Status`], as its index in [`Status::ALL`].
static STATUS: AtomicUsize = AtomicUsize::new(0);

fn set_status(status: Status) {
    let index = Status::ALL.iter().position(|s| *s == status).unwrap_or(0);
    STATUS.store(index, Ordering::Relaxed);
}

/// What watches for VM snapshot restores in this process: `"vmclock"` when
/// the VMClock device's generation counter is watched; otherwise why not
/// (`"none: ..."`); `"not probed yet"` before the first use of `rng()`.
pub(crate) fn vm_generation_status() -> &'static str {
    Status::ALL
        .get(STATUS.load(Ordering::Relaxed))
        .copied()
        .unwrap_or(Status::NotProbed)
        .name()
}

/// What tells this process of a CRIU restore (see [`DROPPABLE`]).
pub(crate) fn process_restore_status() -> &'static str {
    if watched_word().is_some() {
        "none: the VMClock device is mapped (CRIU refuses to dump such a process)"
    } else if restore_word_watched() {
        "droppable page"
    } else if PROBE.load(Ordering::Relaxed) == DONE {
        "none: no MAP_DROPPABLE here (Linux 6.11+, 64-bit)"
    } else {
        "not probed yet"
    }
}

/// Whether the watched page has had no consistent read yet (its probe found
/// it being updated).
#[cfg_attr(
    any(miri, not(any(target_os = "linux", target_os = "android"))),
    allow(dead_code, reason = "no VMClock device here")
)]
static UNSETTLED: AtomicBool = AtomicBool::new(false);

/// [`PROBE`]: not probed (or due again).
const IDLE: usize = 0;
/// [`PROBE`]: done, found or not; never probed again.
const DONE: usize = 1;

/// This process's id where a process can fork (a constant elsewhere: WASI
/// has no process id, and `std::process::id` panics there).
fn process_id() -> u32 {
    #[cfg(unix)]
    {
        // SAFETY: `getpid` has no preconditions and cannot fail.
        u32::try_from(unsafe { libc::getpid() }).unwrap_or(1)
    }
    #[cfg(not(unix))]
    {
        1
    }
}

/// [`PROBE`] while the process with id `pid` probes (one of its threads).
fn busy(pid: u32) -> usize {
    (pid as usize) << 1
}

/// [`IDLE`], [`DONE`], or [`busy`] with the prober's process id. The id lets
/// a child forked while a thread of its parent was probing (the child has
/// no such thread) see that the probe will never end in it, and take it over.
static PROBE: AtomicUsize = AtomicUsize::new(IDLE);

/// Probes that failed in a way that may pass ([`Refusal::passes`]).
static FAILED_PROBES: AtomicUsize = AtomicUsize::new(0);

/// How many probes a process makes at most: a failure that may pass (out of
/// descriptors, interrupted) is retried on later slow paths, this many times
/// in all.
const PROBES: usize = 4;

/// Where the probe looks (the inspection hook may point it elsewhere).
#[cfg(all(
    any(target_os = "linux", target_os = "android"),
    not(miri),
    not(ratchet_rng_inspect)
))]
fn probe_target() -> (&'static core::ffi::CStr, Accept) {
    (c"/dev/vmclock0", Accept::Device)
}

#[cfg(all(any(target_os = "linux", target_os = "android"), not(miri)))]
use vmclock::Accept;

/// Maps `/dev/vmclock0` and watches its counter, if it exists, is readable,
/// is the VMClock device and its page is a VMClock page with the generation
/// counter (being updated at the probe is not a reason to give up: the page
/// is then watched and untrusted until a read finds it settled). Called on
/// every slow path until the probe is done: one relaxed load once it is.
/// While one thread probes, the others' slow paths find the generation
/// untrusted ([`trusted`]): they reseed and keep their fast path closed.
pub(crate) fn probe() {
    let seen = PROBE.load(Ordering::Relaxed);
    if seen == DONE {
        let word = WATCH.vm_word.load(Ordering::Relaxed);
        if !word.is_null() && core::ptr::eq(word, DROPPABLE.load(Ordering::Relaxed)) {
            rearm(word);
        }
        return;
    }
    let me = process_id();
    if seen != IDLE && seen == busy(me) {
        // Another thread of this process is probing.
        return;
    }
    // Idle, or busy in another process: this is a child forked while a
    // thread of the parent probed, and that probe will not end here.
    if PROBE
        .compare_exchange(seen, busy(me), Ordering::Relaxed, Ordering::Relaxed)
        .is_err()
    {
        return;
    }
    set_status(Status::NotProbed);
    let status = probe_now();
    set_status(status);
    let again = status == Status::Retrying;
    if !again && !STARTED.swap(true, Ordering::Relaxed) {
        // Before `DONE`: a thread that finds the probe done finds this set.
        START_VM.store(current().vm, Ordering::Relaxed);
    }
    PROBE.store(if again { IDLE } else { DONE }, Ordering::Relaxed);
}

/// Whether the process's generation has moved since its first probe was
/// decided: `reseed_all_threads()` was called, the VMClock counter changed,
/// or the droppable word was wiped (a restore, a fork) and re-armed. A
/// thread's first use in a generation that moved is mixed as any seeding
/// after a new generation; a plain first use is not (a fresh page's zeroed
/// header says nothing about the generation). `true` while no probe has
/// been decided (the caller reseeds then anyway).
pub(crate) fn moved(now: Generation) -> bool {
    now.explicit != 0
        || !STARTED.load(Ordering::Relaxed)
        || now.vm != START_VM.load(Ordering::Relaxed)
}

/// Set by the first decided probe, with [`START_VM`] (see [`moved`]).
static STARTED: AtomicBool = AtomicBool::new(false);

/// The VM word's value when the first probe was decided: the VMClock
/// counter, the droppable word's first armed value, or [`NO_DEVICE`]'s.
static START_VM: AtomicUsize = AtomicUsize::new(0);

/// One probe (see [`probe`]).
fn probe_now() -> Status {
    #[cfg(all(any(target_os = "linux", target_os = "android"), not(miri)))]
    {
        let (path, accept) = probe_target();
        match vmclock::attach(path, accept) {
            Ok(attached) => watch(&attached),
            Err(refusal)
                if refusal.passes()
                    && FAILED_PROBES.fetch_add(1, Ordering::Relaxed) + 1 < PROBES =>
            {
                Status::Retrying
            }
            Err(refusal) => {
                // No device: process restores are still seen where the
                // kernel has droppable mappings.
                let word = droppable_word();
                if !word.is_null() {
                    WATCH.vm_word.store(word, Ordering::Relaxed);
                }
                Status::Refused(refusal)
            }
        }
    }
    #[cfg(not(all(any(target_os = "linux", target_os = "android"), not(miri))))]
    {
        let _ = (&FAILED_PROBES, PROBES, Refusal::passes);
        Status::Unsupported
    }
}

/// Watches the page [`vmclock::attach`] mapped.
#[cfg(all(any(target_os = "linux", target_os = "android"), not(miri)))]
fn watch(attached: &vmclock::Attached) -> Status {
    UNSETTLED.store(!attached.settled, Ordering::Relaxed);
    WATCH
        .vm_word
        .store(attached.word.cast_mut(), Ordering::Relaxed);
    if attached.settled {
        Status::Watched
    } else {
        Status::Unsettled
    }
}

/// Whether the droppable word (process restores) is what the fast path
/// compares.
fn restore_word_watched() -> bool {
    let word = WATCH.vm_word.load(Ordering::Relaxed);
    !word.is_null() && core::ptr::eq(word, DROPPABLE.load(Ordering::Relaxed))
}

/// Whether a VMClock page is watched.
#[cfg(ratchet_rng_inspect)]
pub(crate) fn watched() -> bool {
    watched_word().is_some()
}

/// Watches the VMClock page in the file at `path` (a test's stand-in for the
/// device) instead of whatever is watched, if it is valid (or being updated:
/// then unsettled, as a probe would); the process's own probe is then
/// skipped. The old mapping is left mapped (a thread may be reading it).
#[cfg(all(
    ratchet_rng_inspect,
    any(target_os = "linux", target_os = "android"),
    not(miri)
))]
pub(crate) fn inspect_watch(path: &core::ffi::CStr) -> Result<(), &'static str> {
    PROBE.store(DONE, Ordering::Relaxed);
    let attached = vmclock::attach(path, Accept::DeviceOrFile)
        .map_err(|refusal| Status::Refused(refusal).name())?;
    set_status(watch(&attached));
    Ok(())
}

/// The path (and what may stand there) the next probe looks at, set by
/// [`inspect_probe_at`]; `/dev/vmclock0` otherwise. Leaked when set (a test
/// sets a handful), so that a probe (maybe in a forked child) allocates
/// nothing.
#[cfg(all(
    ratchet_rng_inspect,
    any(target_os = "linux", target_os = "android"),
    not(miri)
))]
static PROBE_TARGET: std::sync::Mutex<Option<(&'static core::ffi::CStr, bool)>> =
    std::sync::Mutex::new(None);

#[cfg(all(
    ratchet_rng_inspect,
    any(target_os = "linux", target_os = "android"),
    not(miri)
))]
fn probe_target() -> (&'static core::ffi::CStr, Accept) {
    let target = *PROBE_TARGET
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    match target {
        Some((path, true)) => (path, Accept::DeviceOrFile),
        Some((path, false)) => (path, Accept::Device),
        None => (c"/dev/vmclock0", Accept::Device),
    }
}

/// Unwatches any page and makes the next slow path probe `path` as it would
/// `/dev/vmclock0` (a regular file accepted only with `file`), with a fresh
/// retry budget.
#[cfg(all(
    ratchet_rng_inspect,
    any(target_os = "linux", target_os = "android"),
    not(miri)
))]
pub(crate) fn inspect_probe_at(path: std::ffi::CString, file: bool) {
    *PROBE_TARGET
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner) =
        Some((std::boxed::Box::leak(path.into_boxed_c_str()), file));
    WATCH
        .vm_word
        .store((&raw const NO_DEVICE).cast_mut(), Ordering::Relaxed);
    UNSETTLED.store(false, Ordering::Relaxed);
    FAILED_PROBES.store(0, Ordering::Relaxed);
    STARTED.store(false, Ordering::Relaxed);
    set_status(Status::NotProbed);
    PROBE.store(IDLE, Ordering::Relaxed);
}

/// What a CRIU restore does to the droppable word's page (its pages are not
/// dumped, so the restored mapping is empty): zeroes it. False where there is
/// no such page (the kernel refused `MAP_DROPPABLE`, or a VMClock page is
/// watched instead).
#[cfg(all(
    ratchet_rng_inspect,
    any(target_os = "linux", target_os = "android"),
    not(miri)
))]
pub(crate) fn inspect_drop_restore_page() -> bool {
    let word = DROPPABLE.load(Ordering::Relaxed);
    if word.is_null() || !core::ptr::eq(WATCH.vm_word.load(Ordering::Relaxed), word) {
        return false;
    }
    let len = super::pages::page_bytes();
    // SAFETY: `word` is the start of the droppable mapping, `len` bytes;
    // `MADV_DONTNEED` on a private anonymous mapping gives zero-filled pages
    // on the next touch, as the kernel's own drop does.
    unsafe { libc::madvise(word.cast(), len, libc::MADV_DONTNEED) == 0 }
}

/// Set by [`inspect_without_droppable`]: the probe maps no droppable page, as
/// on a kernel without them.
#[cfg(all(
    ratchet_rng_inspect,
    any(target_os = "linux", target_os = "android"),
    not(miri)
))]
static NO_DROPPABLE: AtomicBool = AtomicBool::new(false);

/// Makes the probes that follow map no droppable page, as on a kernel before
/// 6.11 (a page already mapped stays).
#[cfg(all(
    ratchet_rng_inspect,
    any(target_os = "linux", target_os = "android"),
    not(miri)
))]
pub(crate) fn inspect_without_droppable() {
    NO_DROPPABLE.store(true, Ordering::Relaxed);
}

/// Marks the probe as in progress in this process (as if another thread were
/// inside it): what a child forked at that moment inherits.
#[cfg(all(
    ratchet_rng_inspect,
    any(target_os = "linux", target_os = "android"),
    not(miri)
))]
pub(crate) fn inspect_probe_busy() {
    PROBE.store(busy(process_id()), Ordering::Relaxed);
}

/// Bytes of [`clone_material`]: the VMClock fields, the clocks, the CPU source.
pub(crate) const MATERIAL_BYTES: usize = 48 + 32 + 32;

/// What differs between two clones of one snapshot even when the OS generator
/// does not yet, in this order: the VMClock page's changing fields (disruption
/// marker, flags, counter value, time, generation counter; zeros where no
/// page is watched), the clocks (realtime, monotonic, boot time, the CPU's
/// cycle counter), and 32 bytes from the CPU's random source (RDSEED, else
/// RDRAND, on x86_64; RNDR on aarch64; detected at run time; left out where
/// there is none or its output fails the sanity check). Mixed with the OS
/// seed by a hash, so that it can only add entropy. Returns how many bytes of
/// `out` were written (the rest stays zero).
pub(crate) fn clone_material(out: &mut [u8; MATERIAL_BYTES]) -> usize {
    let (device, rest) = out.split_at_mut(48);
    #[cfg(all(any(target_os = "linux", target_os = "android"), not(miri)))]
    if let Some(word) = watched_word() {
        vmclock::material(word, device);
    }
    #[cfg(not(all(any(target_os = "linux", target_os = "android"), not(miri))))]
    let _ = device;
    let (clocks, head) = rest.split_at_mut(32);
    hardware::clocks(clocks);
    let mut bytes = [0u8; 32];
    let source = hardware::fill(&mut bytes);
    head.copy_from_slice(&bytes);
    zeroize::Zeroize::zeroize(&mut bytes);
    if source.is_some() {
        MATERIAL_BYTES
    } else {
        48 + 32
    }
}

/// The CPU's cycle counter and the monotonic clock's nanoseconds (0 where one
/// is missing): the two cheapest readings that differ between clones.
pub(crate) fn cheap_clocks() -> [u64; 2] {
    hardware::cheap_clocks()
}

/// The CPU random source [`clone_material`] uses on this machine, if any
/// (`None` too when its output fails the sanity check).
#[cfg(ratchet_rng_inspect)]
pub(crate) fn hardware_source() -> Option<&'static str> {
    hardware::fill(&mut [0; 32])
}

/// Makes the CPU source "return" `words` (`None`: its own output again).
#[cfg(ratchet_rng_inspect)]
pub(crate) fn inject_cpu_random(words: Option<[u64; 4]>) {
    hardware::inject(words);
}
