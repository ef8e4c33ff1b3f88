//! The process-wide generation: when it moves, every thread zeroes what it
//! has buffered and reseeds before it serves more (a VM snapshot restored, a
//! CRIU process restore, `reseed_all_threads()`; SECURITY.md, "VM snapshots").
//!
//! A generation is two words, compared for equality by every call (the fast
//! path's too): `explicit`, moved by `reseed_all_threads()`, and `vm`, the
//! VMClock page's counter (`generation/vmclock.rs`), else the droppable word
//! ([`DROPPABLE`]), else a constant. A thread whose page (`storage.rs`) records
//! another one reseeds on the slow path (see [`trusted`]).

use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};

#[path = "generation/hardware.rs"]
pub(crate) mod hardware;
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

/// [`Watch::vm_word`]'s target where nothing else is watched: never changes.
static NO_DEVICE: AtomicUsize = AtomicUsize::new(0);

/// The two words every call compares, side by side: one address to find.
#[repr(C, align(64))]
struct Watch {
    /// The VMClock page's `vm_generation_counter`, the droppable word or
    /// [`NO_DEVICE`]; set by the probe (or the hook), never unmapped.
    vm_word: AtomicPtr<AtomicUsize>,
    /// Moved by [`reseed_all_threads`](crate::reseed_all_threads).
    explicit: AtomicUsize,
}

static WATCH: Watch = Watch {
    vm_word: AtomicPtr::new((&raw const NO_DEVICE).cast_mut()),
    explicit: AtomicUsize::new(0),
};

/// A generation (see the module doc): raw words, compared for equality only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Generation {
    pub(crate) vm: usize,
    pub(crate) explicit: usize,
}

/// The current generation: three loads, no system call.
#[inline(always)]
pub(crate) fn current() -> Generation {
    let word = WATCH.vm_word.load(Ordering::Relaxed);
    // SAFETY: `vm_word` points at `NO_DEVICE`, the VMClock mapping or the
    // droppable word, each mapped and checked before it is stored and never
    // unmapped. The kernel may zero the droppable page at any time (a fork
    // child, memory pressure): the load then reads 0, a new generation.
    let vm = unsafe { (*word).load(Ordering::Relaxed) };
    Generation {
        vm,
        explicit: WATCH.explicit.load(Ordering::Relaxed),
    }
}

/// A new generation (see [`crate::reseed_all_threads`]).
pub(crate) fn bump() {
    WATCH.explicit.fetch_add(1, Ordering::Relaxed);
}

/// Whether `now` (just read) may be trusted: the [`probe`] is decided and
/// watches no VMClock page, or the page reads valid with `now`'s counter. If
/// not, the caller reseeds and keeps the fast path closed.
///
/// A droppable word read as 0 (dropped since the slow path re-armed it) is not
/// trusted: were it recorded with the fast path open, a restore, which leaves
/// the word 0 too, would compare equal and go unseen (issue 31); instead the
/// caller reseeds, and its next call re-arms the word and reseeds again.
pub(crate) fn trusted(now: Generation) -> bool {
    #[cfg(all(any(target_os = "linux", target_os = "android"), not(miri)))]
    if let Some(word) = watched_word() {
        return match vmclock::read_watched(word) {
            vmclock::View::Valid(counter) => {
                if UNSETTLED.load(Ordering::Relaxed) {
                    UNSETTLED.store(false, Ordering::Relaxed);
                    set_status(Status::Watched);
                }
                counter == now.vm
            }
            vmclock::View::Invalid => {
                // Watched unsettled, and now consistently no VMClock page:
                // unwatched (the generation moves: every thread reseeds). A
                // page once valid stays watched, untrusted while invalid.
                if UNSETTLED.swap(false, Ordering::Relaxed) {
                    WATCH
                        .vm_word
                        .store((&raw const NO_DEVICE).cast_mut(), Ordering::Relaxed);
                    set_status(Status::Refused(Refusal::NotVmClock));
                }
                false
            }
            vmclock::View::Torn => false,
        };
    }
    PROBE.load(Ordering::Relaxed) == DONE && !(now.vm == 0 && restore_word_watched())
}

/// The watched VMClock page's counter word, or `None` where none is watched.
fn watched_word() -> Option<*const AtomicUsize> {
    let word = WATCH.vm_word.load(Ordering::Relaxed);
    (!core::ptr::eq(word, &raw const NO_DEVICE)
        && !core::ptr::eq(word, DROPPABLE.load(Ordering::Relaxed)))
    .then_some(word.cast_const())
}

/// [`Watch::vm_word`] where no VMClock page is watched: a word alone in a
/// `MAP_DROPPABLE` page (Linux 6.11+, 64-bit), nonzero ([`arm`]). A fork, a
/// CRIU restore (such mappings come back empty) or memory pressure wipes it:
/// a new generation, at [`NO_DEVICE`]'s cost. Null where the kernel refused it.
static DROPPABLE: AtomicPtr<AtomicUsize> = AtomicPtr::new(core::ptr::null_mut());

/// Counts the droppable word's values (1, 3, 5, ...: never 0, never repeated,
/// so a re-armed word never matches a generation recorded before the wipe).
static ARMED: AtomicUsize = AtomicUsize::new(0);

/// `MAP_DROPPABLE` (`linux/mman.h`, not in every `libc`), for `MAP_PRIVATE`.
#[cfg(all(any(target_os = "linux", target_os = "android"), not(miri)))]
const MAP_DROPPABLE: libc::c_int = 0x08;

/// The droppable word, mapped and armed on first need; null if refused.
#[cfg(all(any(target_os = "linux", target_os = "android"), not(miri)))]
fn droppable_word() -> *mut AtomicUsize {
    #[cfg(ratchet_rng_inspect)]
    if inspect::NO_DROPPABLE.load(Ordering::Relaxed) {
        return core::ptr::null_mut();
    }
    let word = DROPPABLE.load(Ordering::Relaxed);
    if !word.is_null() {
        return word;
    }
    let len = super::pages::page_bytes();
    // SAFETY: a new anonymous mapping where the kernel chooses; failure is
    // `MAP_FAILED` (`EINVAL` before Linux 6.11 and on 32-bit systems).
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
    // Two probes at once (a child took over): the loser's page stays unused.
    let null = core::ptr::null_mut();
    match DROPPABLE.compare_exchange(null, word, Ordering::Relaxed, Ordering::Relaxed) {
        Ok(_) => {
            // A write first, not a read: one page fault, not two.
            arm(word);
            word
        }
        Err(theirs) => theirs,
    }
}

/// Re-arms the droppable word if it reads 0 (wiped). Called by every slow
/// path before it reads the generation, so that what it records is armed.
fn rearm(word: *mut AtomicUsize) {
    // SAFETY: `DROPPABLE`'s word: aligned, in a mapping never unmapped; the
    // kernel may zero it at any time (a read sees 0, a write faults it in).
    if unsafe { &*word }.load(Ordering::Relaxed) == 0 {
        arm(word);
    }
}

/// Writes the next [`ARMED`] value into the droppable word if it holds 0.
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
    /// Not readable by this process (`EACCES`, `EPERM`).
    PermissionDenied,
    /// A FIFO, a regular file, a directory, a socket, a symbolic link loop.
    NotCharDevice,
    /// Another character device (`/dev/null`, `/dev/zero`, a terminal).
    WrongDevice,
    /// Mapped, but no VMClock page with the VM generation counter.
    NotVmClock,
    /// Cannot be mapped (the kernel refused the `mmap`).
    CannotMap,
    /// Could not be opened or mapped for a reason that may pass (out of
    /// descriptors or memory, interrupted): retried, up to [`PROBES`] probes.
    CannotOpen,
}

impl Refusal {
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
    /// Watched, but torn at the probe: untrusted until a read finds it settled.
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

/// What watches for VM snapshot restores here ([`Status::name`]).
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

/// Whether the watched page was torn at its probe and has not settled since.
#[cfg_attr(
    any(miri, not(any(target_os = "linux", target_os = "android"))),
    allow(dead_code, reason = "no VMClock device here")
)]
static UNSETTLED: AtomicBool = AtomicBool::new(false);

/// [`PROBE`]: not probed (or due again).
const IDLE: usize = 0;
/// [`PROBE`]: done, found or not; never probed again.
const DONE: usize = 1;

/// [`PROBE`] while the process with id `pid` probes (one of its threads):
/// never [`IDLE`] nor [`DONE`].
fn busy(pid: u32) -> usize {
    (pid as usize) << 2 | 2
}

/// [`IDLE`], [`DONE`], or [`busy`] with the prober's process id, so that a
/// child forked mid-probe (which lacks the probing thread) takes it over.
static PROBE: AtomicUsize = AtomicUsize::new(IDLE);

/// Probes that failed in a way that may pass ([`Refusal::passes`]).
static FAILED_PROBES: AtomicUsize = AtomicUsize::new(0);

/// How many probes a process makes at most ([`Refusal::passes`]).
const PROBES: usize = 4;

#[cfg(all(any(target_os = "linux", target_os = "android"), not(miri)))]
use vmclock::Accept;

/// Watches `/dev/vmclock0` if `vmclock::attach` accepts it (torn: unsettled),
/// else the droppable word; once decided, only re-arms that word. Called by
/// every slow path (while another thread probes, [`trusted`] says no).
pub(crate) fn probe() {
    let seen = PROBE.load(Ordering::Relaxed);
    if seen == DONE {
        let word = WATCH.vm_word.load(Ordering::Relaxed);
        if !word.is_null() && core::ptr::eq(word, DROPPABLE.load(Ordering::Relaxed)) {
            rearm(word);
        }
        return;
    }
    let me = super::fork::process_id();
    if seen == busy(me) {
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

/// Whether the generation moved since the first probe was decided (or none
/// was): a thread's first use then takes the full mix, as a fresh page's
/// zeroed header says nothing about the generation.
pub(crate) fn moved(now: Generation) -> bool {
    now.explicit != 0
        || !STARTED.load(Ordering::Relaxed)
        || now.vm != START_VM.load(Ordering::Relaxed)
}

/// Set by the first decided probe, with [`START_VM`] (see [`moved`]).
static STARTED: AtomicBool = AtomicBool::new(false);

/// The VM word's value when the first probe was decided (see [`moved`]).
static START_VM: AtomicUsize = AtomicUsize::new(0);

/// One probe (see [`probe`]).
fn probe_now() -> Status {
    #[cfg(all(any(target_os = "linux", target_os = "android"), not(miri)))]
    {
        // Where the probe looks (the inspection hook may point it elsewhere).
        let (path, accept) = (c"/dev/vmclock0", Accept::Device);
        #[cfg(ratchet_rng_inspect)]
        let (path, accept) = inspect::probe_target().unwrap_or((path, accept));
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

/// Whether the fast path compares the droppable word.
fn restore_word_watched() -> bool {
    let word = WATCH.vm_word.load(Ordering::Relaxed);
    !word.is_null() && core::ptr::eq(word, DROPPABLE.load(Ordering::Relaxed))
}

/// Whether a VMClock page is watched.
#[cfg(ratchet_rng_inspect)]
pub(crate) fn watched() -> bool {
    watched_word().is_some()
}

/// Bytes of [`clone_material`]: the VMClock fields, the clocks, the CPU source.
pub(crate) const MATERIAL_BYTES: usize = 48 + 32 + 32;

/// What differs between clones of one snapshot when the OS generator does
/// not yet: the VMClock fields (zeros if none), the clocks, 32 bytes of the
/// CPU random source (if it passes the check). Hashed with the OS seed, so it
/// only adds entropy. Returns how many bytes of `out` were written (rest: 0).
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

/// The inspection hooks (`__inspect`) that steer the VMClock probe.
#[cfg(all(
    ratchet_rng_inspect,
    any(target_os = "linux", target_os = "android"),
    not(miri)
))]
pub(crate) mod inspect {
    use super::*;

    /// The path (and what may stand there) from [`probe_at`], leaked so
    /// that a probe (maybe in a forked child) allocates nothing.
    static PROBE_TARGET: std::sync::Mutex<Option<(&'static core::ffi::CStr, Accept)>> =
        std::sync::Mutex::new(None);

    /// Set by [`without_droppable`].
    pub(super) static NO_DROPPABLE: AtomicBool = AtomicBool::new(false);

    /// Where [`probe_at`] points the probe, if it was called.
    pub(super) fn probe_target() -> Option<(&'static core::ffi::CStr, Accept)> {
        *PROBE_TARGET
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Watches the VMClock page in the file at `path` as a probe would (the old
    /// mapping stays: a thread may read it); the process's own probe is skipped.
    pub(crate) fn watch_file(path: &core::ffi::CStr) -> Result<(), &'static str> {
        PROBE.store(DONE, Ordering::Relaxed);
        let attached = vmclock::attach(path, Accept::DeviceOrFile)
            .map_err(|refusal| Status::Refused(refusal).name())?;
        set_status(watch(&attached));
        Ok(())
    }

    /// Unwatches any page; the next slow path probes `path` (a regular file
    /// too with `file`) with a fresh retry budget.
    pub(crate) fn probe_at(path: std::ffi::CString, file: bool) {
        let accept = if file {
            Accept::DeviceOrFile
        } else {
            Accept::Device
        };
        *PROBE_TARGET
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) =
            Some((std::boxed::Box::leak(path.into_boxed_c_str()), accept));
        WATCH
            .vm_word
            .store((&raw const NO_DEVICE).cast_mut(), Ordering::Relaxed);
        UNSETTLED.store(false, Ordering::Relaxed);
        FAILED_PROBES.store(0, Ordering::Relaxed);
        STARTED.store(false, Ordering::Relaxed);
        set_status(Status::NotProbed);
        PROBE.store(IDLE, Ordering::Relaxed);
    }

    /// Zeroes the droppable page as a CRIU restore does; false if unwatched.
    pub(crate) fn drop_restore_page() -> bool {
        if !restore_word_watched() {
            return false;
        }
        let word = DROPPABLE.load(Ordering::Relaxed);
        let len = crate::thread::pages::page_bytes();
        // SAFETY: `word` starts the droppable mapping, `len` bytes; the page
        // then reads as zeros, as after the kernel's own drop.
        unsafe { libc::madvise(word.cast(), len, libc::MADV_DONTNEED) == 0 }
    }

    /// Makes later probes map no droppable page (one already mapped stays).
    pub(crate) fn without_droppable() {
        NO_DROPPABLE.store(true, Ordering::Relaxed);
    }

    /// Marks the probe busy in this process, as a child forked mid-probe sees it.
    pub(crate) fn probe_busy() {
        PROBE.store(busy(crate::thread::fork::process_id()), Ordering::Relaxed);
    }
}
