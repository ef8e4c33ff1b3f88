//! The memory the thread states live in: slabs of [`SLOTS`] slots, each slab
//! one mapping (unix: anonymous, so that the kernel can be told what a forked
//! child sees there; elsewhere a zeroed allocation), advised once when it is
//! made (`fork.rs`) and never released. A thread takes a free slot and gives
//! it back, wiped, when it exits: a new thread's first call makes no system
//! call unless every slab is full. Lock-free (one bit per slot), so a fork at
//! any point leaves the child a consistent picture: the slots of the parent's
//! other threads stay taken. The first slab's slot 0 holds the seed reserve
//! ([`reserved_seed`]).

use core::ptr;
use core::sync::atomic::{AtomicPtr, AtomicUsize, Ordering, compiler_fence};

/// States per slab: one bit each in the word [`Slab::taken`] (no `AtomicU64`).
const SLOTS: usize = usize::BITS as usize;

/// At most this many slabs: a thread beyond them is served by the OS.
const MAX_SLABS: usize = 1024;

struct Slab {
    /// The mapping (null: not made yet), with what the kernel accepted for the
    /// whole slab in its low bits ([`WIPED`], [`NOT_DUMPED`]; the mapping is
    /// page-aligned): one word, so that the advice read is always the
    /// published mapping's, never a racing thread's that lost (issue 46).
    base: AtomicPtr<u8>,
    /// Bit `i`: slot `i` is held by a thread.
    taken: AtomicUsize,
}

/// [`Slab::base`]'s bit 0: the slab is wiped in a forked child.
const WIPED: usize = 1;
/// [`Slab::base`]'s bit 1: the slab is kept out of core dumps.
const NOT_DUMPED: usize = 2;

impl Slab {
    /// The published mapping and its advice bits, if the slab is made.
    fn published(&self) -> Option<(*mut u8, usize)> {
        let tagged = self.base.load(Ordering::Acquire);
        let advice = tagged.addr() & (WIPED | NOT_DUMPED);
        (!tagged.is_null()).then(|| (tagged.map_addr(|a| a & !(WIPED | NOT_DUMPED)), advice))
    }
}

/// The first slab's slot 0 is never a thread's: its state's bytes hold the
/// seed reserve (in a page already faulted in), its buffer is never touched.
static SLABS: [Slab; MAX_SLABS] = {
    let mut slabs = [const {
        Slab {
            base: AtomicPtr::new(ptr::null_mut()),
            taken: AtomicUsize::new(0),
        }
    }; MAX_SLABS];
    slabs[0].taken = AtomicUsize::new(1);
    slabs
};

/// Seeds fetched from the OS at once for the reserve (one `getrandom` call
/// of 256 bytes: at most 256 bytes never come back short on Linux).
const RESERVE_SEEDS: usize = 8;

/// The seed reserve, so that most new threads make no system call: OS seeds,
/// each for one thread's first seeding, wiped as taken (and in a forked child,
/// with the slab). All zeros is a valid value: empty.
#[repr(C, align(64))]
struct Reserve {
    /// 1 while a thread refills or takes (any other caller asks the OS).
    busy: AtomicUsize,
    /// [`LIVE`] from a refill on; a fork's wipe zeroes it.
    live: AtomicUsize,
    /// Seeds not yet taken: `seeds[..left]` (every other seed is zeros).
    left: AtomicUsize,
    seeds: [[u8; 32]; RESERVE_SEEDS],
}

/// [`Reserve::live`]'s value (any nonzero pattern: a wiped page reads 0).
const LIVE: usize = 0x5EED_11FE;

/// The first slab's reserve, set when that slab is published (null before).
static RESERVE: AtomicPtr<Reserve> = AtomicPtr::new(ptr::null_mut());

/// The system's page size (at least 4 KiB; 4 KiB where it is not asked).
pub(crate) fn page_bytes() -> usize {
    #[cfg(unix)]
    // SAFETY: `sysconf` only reads a system value; `_SC_PAGESIZE` is valid.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    #[cfg(not(unix))]
    let page = 4096;
    usize::try_from(page).unwrap_or(4096).max(4096)
}

/// A slot: the addresses of its state and of its buffer.
pub(crate) type Slot = (*mut u8, *mut u8);

/// A slot's two pieces: `state` and `buffer` bytes (multiples of 64).
#[derive(Clone, Copy)]
pub(crate) struct Stride {
    pub(crate) state: usize,
    pub(crate) buffer: usize,
}

/// Slot `slot`'s state and buffer in the slab at `base`: the states packed
/// from the slab's start (several to a page), the buffers after them.
fn slot_at(base: *mut u8, slot: usize, stride: Stride) -> Slot {
    (
        base.wrapping_add(slot * stride.state),
        base.wrapping_add(SLOTS * stride.state + slot * stride.buffer),
    )
}

/// A new zero-filled read-write mapping of `len` bytes (no `MAP_POPULATE`: a
/// page is faulted in by its first user); on Linux `MAP_NORESERVE` too, so
/// that it is not merged into a neighbour that the advice would split out
/// again (docs/PERFORMANCE.md): the flag changes only the commit charge.
#[cfg(unix)]
fn map(len: usize) -> Option<*mut u8> {
    // (Not under Miri, whose `mmap` takes no other flag.)
    #[cfg(all(any(target_os = "linux", target_os = "android"), not(miri)))]
    const UNMERGED: libc::c_int = libc::MAP_NORESERVE;
    #[cfg(not(all(any(target_os = "linux", target_os = "android"), not(miri))))]
    const UNMERGED: libc::c_int = 0;
    // SAFETY: a new anonymous mapping where the kernel chooses: no memory we
    // (or anyone) own is affected; failure is reported as `MAP_FAILED`.
    let page = unsafe {
        libc::mmap(
            ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANON | UNMERGED,
            -1,
            0,
        )
    };
    (page != libc::MAP_FAILED).then_some(page.cast::<u8>())
}

#[cfg(not(unix))]
fn map(len: usize) -> Option<*mut u8> {
    let layout = std::alloc::Layout::from_size_align(len, 4096).ok()?;
    // SAFETY: `len` is not zero; null (no memory) is handled.
    let page = unsafe { std::alloc::alloc_zeroed(layout) };
    (!page.is_null()).then_some(page)
}

/// Releases what [`map`] returned (a slab that lost the race to be published).
///
/// # Safety
/// `page..page + len` is a mapping from [`map`], not used afterwards.
unsafe fn unmap(page: *mut u8, len: usize) {
    // SAFETY: the caller's guarantee. A failure can only leak the mapping.
    #[cfg(unix)]
    let _ = unsafe { libc::munmap(page.cast(), len) };
    #[cfg(not(unix))]
    // SAFETY: the caller's guarantee; the layout `map` used.
    unsafe {
        std::alloc::dealloc(
            page,
            std::alloc::Layout::from_size_align_unchecked(len, 4096),
        );
    }
}

/// Makes `slab`'s mapping (the first slab ever also classifies the process:
/// `fork::advise_wipe`), or takes the one another thread published first; with
/// the published one's advice bits.
fn base(slab: &Slab, stride: Stride) -> Option<(*mut u8, usize)> {
    if let Some(published) = slab.published() {
        return Some(published);
    }
    // Every slot's state, then every slot's buffer, in whole pages.
    let len = (SLOTS * (stride.state + stride.buffer)).next_multiple_of(page_bytes());
    let mine = map(len)?;
    // SAFETY: `mine..mine + len` is the fresh slab made above (`map`).
    let advice = unsafe {
        (usize::from(super::fork::advise_wipe(mine, len)) * WIPED)
            | (usize::from(super::fork::advise_no_dump(mine, len)) * NOT_DUMPED)
    };
    // Advised, not yet published: another thread may publish its own here.
    inject!(SlabAdvised);
    let tagged = mine.map_addr(|a| a | advice);
    match slab
        .base
        .compare_exchange(ptr::null_mut(), tagged, Ordering::AcqRel, Ordering::Acquire)
    {
        Ok(_) => {
            if ptr::eq(slab, &SLABS[0]) && size_of::<Reserve>() <= stride.state {
                RESERVE.store(mine.cast(), Ordering::Release);
            }
            Some((mine, advice))
        }
        Err(_) => {
            // SAFETY: ours, never published.
            unsafe { unmap(mine, len) };
            // The winner's mapping and its advice, not ours.
            slab.published()
        }
    }
}

/// A free slot (its state and its buffer, all zeros), taken for the calling
/// thread, and its slab's advice: (wiped in a forked child, kept out of core
/// dumps). `None` when every slab is full or no slab can be made.
pub(crate) fn take(stride: Stride) -> Option<(Slot, (bool, bool))> {
    for slab in &SLABS {
        let mut taken = slab.taken.load(Ordering::Relaxed);
        while taken != usize::MAX {
            let (base, advice) = base(slab, stride)?;
            let slot = (!taken).trailing_zeros();
            match slab.taken.compare_exchange_weak(
                taken,
                taken | 1 << slot,
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => {
                    // `slot < SLOTS`: inside the slab.
                    let slot = slot_at(base, slot as usize, stride);
                    return Some((slot, (advice & WIPED != 0, advice & NOT_DUMPED != 0)));
                }
                Err(now) => taken = now,
            }
        }
    }
    None
}

/// Fills `seed` with 32 OS bytes no one else took, wiped in the reserve
/// (refilled when empty); true if it did. False (the caller asks the OS) with
/// no first slab yet, a protection that is neither that slab's believed wipe
/// (every child finds it zero) nor `NoFork`, another thread in it, a fork in
/// the middle (the child publishes nothing), or an OS failure. For a thread's
/// first seeding in a generation that never moved only (`Mix::Lite`).
pub(crate) fn reserved_seed(seed: &mut [u8; 32]) -> bool {
    let reserve = RESERVE.load(Ordering::Acquire);
    let believed = match super::fork::decided() {
        Some(super::fork::Protection::Wipe) => SLABS[0]
            .published()
            .is_some_and(|(_, advice)| advice & WIPED != 0),
        Some(super::fork::Protection::NoFork) => true,
        _ => false,
    };
    // SAFETY: the first slab's reserve: in its mapping, never unmapped, and
    // aligned (at the slab's start, slot 0's state). Shared
    // references to its atomics; its seeds only under `busy`.
    let Some((busy, live, left)) = (believed && !reserve.is_null())
        .then(|| unsafe { (&(*reserve).busy, &(*reserve).live, &(*reserve).left) })
    else {
        return false;
    };
    if busy.swap(1, Ordering::Acquire) != 0 {
        return false;
    }
    // The seeds, held: no other thread touches them. Reached through this raw
    // pointer, each reference made from it ending before the next injection
    // point, so that the fork hook (`zero_unwiped`), which may run inside this
    // call in a child forked from a signal handler, writes where no reference
    // is live (issue 46).
    // SAFETY: as above.
    let seeds = unsafe { &raw mut (*reserve).seeds };
    let mut n = left.load(Ordering::Relaxed);
    if n == 0 || n > RESERVE_SEEDS {
        live.store(LIVE, Ordering::Relaxed);
        // SAFETY: held; this reference ends with the statement.
        if crate::os::fill(unsafe { (*seeds).as_flattened_mut() }).is_err() {
            // SAFETY: as above.
            zeroize::Zeroize::zeroize(unsafe { (*seeds).as_flattened_mut() });
            busy.store(0, Ordering::Release);
            return false;
        }
        n = RESERVE_SEEDS;
        compiler_fence(Ordering::SeqCst);
        // Filled, not published: a child forked here must not publish.
        inject!(ReserveFilled);
    }
    n -= 1;
    // SAFETY: held, `n < RESERVE_SEEDS`; the reference ends with the block.
    unsafe {
        let taken = &mut (*seeds)[n];
        seed.copy_from_slice(taken);
        zeroize::Zeroize::zeroize(taken);
    }
    left.store(n, Ordering::Relaxed);
    compiler_fence(Ordering::SeqCst);
    // A child forked from here on finds its reserve wiped and `left == 0`.
    inject!(ReserveTaken);
    // A child forked since the refill began: its reserve was wiped, so what
    // it stored above and took is not the OS's.
    let taken = live.load(Ordering::Relaxed) == LIVE;
    if !taken {
        left.store(0, Ordering::Relaxed);
        zeroize::Zeroize::zeroize(seed);
    }
    #[cfg(ratchet_rng_inspect)]
    if taken {
        let print = u64::from_le_bytes(*seed.first_chunk().expect("32 bytes"));
        let _ = RESERVED_TAKES.try_with(|takes| takes.set((takes.get().0 + 1, print)));
    }
    busy.store(0, Ordering::Release);
    taken
}

#[cfg(ratchet_rng_inspect)]
std::thread_local! {
    /// This thread's reserve takes and the last one's fingerprint (inspection).
    pub(crate) static RESERVED_TAKES: core::cell::Cell<(u64, u64)> =
        const { core::cell::Cell::new((0, 0)) };
}

/// The reserve's seeds not yet taken, and how many are all zeros (inspection:
/// read holding `busy` as `reserved_seed` does; `(0, 0)` while another does).
#[cfg(ratchet_rng_inspect)]
pub(crate) fn reserve_audit() -> (usize, usize) {
    let r = RESERVE.load(Ordering::Acquire);
    // SAFETY: as in `reserved_seed`; the seeds read only while held.
    if r.is_null() || unsafe { (*r).busy.swap(1, Ordering::Acquire) } != 0 {
        return (0, 0);
    }
    // SAFETY: held.
    let (left, seeds) = unsafe { ((*r).left.load(Ordering::Relaxed), &(*r).seeds) };
    let left = left.min(RESERVE_SEEDS);
    let zeros = seeds[..left].iter().filter(|s| **s == [0; 32]).count();
    // SAFETY: as above.
    unsafe { (*r).busy.store(0, Ordering::Release) };
    (left, zeros)
}

/// Gives back the slot whose state is at `state` (wiped, no longer used).
pub(crate) fn give(state: *mut u8, stride: Stride) {
    if let Some((slab, slot, _)) = slots(stride).find(|&(_, _, (at, _))| at == state) {
        slab.taken.fetch_and(!(1 << slot), Ordering::Release);
    }
}

/// The buffer of the slot whose state is at `state` (null if none is).
pub(crate) fn buffer_of(state: *mut u8, stride: Stride) -> *mut u8 {
    slots(stride)
        .find(|&(_, _, (at, _))| at == state)
        .map_or(ptr::null_mut(), |(_, _, (_, buffer))| buffer)
}

/// Every thread slot (not the reserve's) of every slab made, with its slab.
fn slots(stride: Stride) -> impl Iterator<Item = (&'static Slab, usize, Slot)> {
    SLABS
        .iter()
        .map_while(|slab| Some((slab, slab.published()?.0)))
        .flat_map(move |(slab, base)| {
            let first = usize::from(ptr::eq(slab, &SLABS[0]));
            (first..SLOTS).map(move |slot| (slab, slot, slot_at(base, slot, stride)))
        })
}

/// In a forked child (one thread, in the `pthread_atfork` handler): zeroes
/// every slot held but the forking thread's (its state at `except`) in each
/// slab the kernel does not wipe, and the seed reserve whatever its slab's
/// advice (a believed wipe may not happen: an older CRIU's restore). No
/// allocation, no lock.
pub(crate) fn zero_unwiped(stride: Stride, except: *mut u8) {
    let reserve = RESERVE.load(Ordering::Acquire);
    if !reserve.is_null() {
        // SAFETY: the first slab's reserve (see `reserved_seed`); the child's
        // only thread. A call of `reserved_seed` this hook interrupted (a
        // handler forked inside it) holds the seeds through a raw pointer
        // only, no reference across its injection points; it finds `live`
        // zeroed and takes nothing.
        unsafe { reserve.cast::<u8>().write_bytes(0, size_of::<Reserve>()) };
    }
    for (slab, slot, (state, buffer)) in slots(stride) {
        let held = slab.taken.load(Ordering::Relaxed) & 1 << slot != 0;
        let wiped = slab
            .published()
            .is_some_and(|(_, advice)| advice & WIPED != 0);
        if held && state != except && !wiped {
            // SAFETY: a slot of a live slab (never unmapped), its two pieces
            // of their strides' bytes, held by a thread that does not exist
            // in this process.
            unsafe {
                state.write_bytes(0, stride.state);
                buffer.write_bytes(0, stride.buffer);
            }
        }
    }
}

/// Every slot made: its state's and buffer's addresses, and whether it is free.
#[cfg(ratchet_rng_inspect)]
pub(crate) fn audit(stride: Stride) -> std::vec::Vec<((usize, usize), bool)> {
    slots(stride)
        .map(|(slab, slot, (state, buffer))| {
            (
                (state.addr(), buffer.addr()),
                slab.taken.load(Ordering::Relaxed) & 1 << slot == 0,
            )
        })
        .collect()
}
