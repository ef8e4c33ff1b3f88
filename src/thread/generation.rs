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
//!   restore), mapped read-only once per process (`generation/vmclock.rs`); a
//!   constant where there is no such device.
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

use core::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

#[path = "generation/hardware.rs"]
mod hardware;
#[cfg(all(any(target_os = "linux", target_os = "android"), not(miri)))]
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
    /// `vm_generation_counter`, or [`NO_DEVICE`]. Set once per process (or by
    /// the inspection hook); the page is never unmapped.
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
    // SAFETY: `vm_word` holds `NO_DEVICE` or a word of a read-only mapping that
    // is never unmapped (set only after the mapping was made and checked);
    // either is valid for atomic reads for the rest of the process.
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

/// Whether `now` (read by the caller just before) may be trusted: no VMClock
/// page is watched, or a consistent read of it finds it valid with the counter
/// `now` holds. `false`: the caller must reseed and keep the fast path closed.
pub(crate) fn trusted(now: Generation) -> bool {
    let Some(word) = watched_word() else {
        return true;
    };
    #[cfg(all(any(target_os = "linux", target_os = "android"), not(miri)))]
    {
        vmclock::read_watched(word).is_some_and(|fields| fields.generation_word == now.vm)
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
    (!core::ptr::eq(word, &raw const NO_DEVICE)).then_some(word.cast_const())
}

/// Not probed / being probed by one thread / done (found or not).
static PROBE: AtomicUsize = AtomicUsize::new(0);

/// Maps `/dev/vmclock0` and watches its counter, once per process, if it
/// exists, is readable, and is a valid VMClock page with the generation
/// counter; nothing otherwise (and nothing on other systems). Threads that
/// race past this while one probes go on unwatched: the watch starting later
/// makes each of them reseed once more, nothing worse.
pub(crate) fn probe_once() {
    if PROBE.load(Ordering::Relaxed) != 0
        || PROBE
            .compare_exchange(0, 1, Ordering::Relaxed, Ordering::Relaxed)
            .is_err()
    {
        return;
    }
    #[cfg(all(any(target_os = "linux", target_os = "android"), not(miri)))]
    if let Ok(word) = vmclock::attach(c"/dev/vmclock0") {
        WATCH.vm_word.store(word.cast_mut(), Ordering::Relaxed);
    }
    PROBE.store(2, Ordering::Relaxed);
}

/// Whether a VMClock page is watched.
#[cfg(ratchet_rng_inspect)]
pub(crate) fn watched() -> bool {
    watched_word().is_some()
}

/// Watches the VMClock page in the file at `path` (a test's stand-in for the
/// device) instead of whatever is watched, if it is valid; the process's own
/// probe is then skipped. The old mapping is left mapped (a thread may be
/// reading it).
#[cfg(all(ratchet_rng_inspect, any(target_os = "linux", target_os = "android")))]
pub(crate) fn inspect_watch(path: &core::ffi::CStr) -> Result<(), &'static str> {
    PROBE.store(2, Ordering::Relaxed);
    let word = vmclock::attach(path)?;
    WATCH.vm_word.store(word.cast_mut(), Ordering::Relaxed);
    Ok(())
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
