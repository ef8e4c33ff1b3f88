//! Where each thread's state lives, who may touch it when, and its lifetime: all
//! of the thread-local generator's `unsafe` code that is not an OS call.
//!
//! Each thread's [`State`] and [`Buffer`] live in a slab's slot (`pages.rs`) as
//! a [`Page`] and a [`BufferPage`], each after a [`Header`]; the fast path's
//! gate ([`SLOT`]) is the header of the piece that holds the unread bytes.
//!
//! # In use: reentrancy and signals
//! The in-use mark is the low bit of [`SLOT`] (a thread-local, copied, not
//! wiped, into a forked child). Every call reads `SLOT` and, if the mark is
//! clear, sets it; only then does it read [`PAGE`], `left` or the state, and it
//! clears the mark (writing the gate) when it is done. A call that finds the
//! mark set (a signal handler, a custom `getrandom` backend, a global allocator
//! or a thread-local destructor inside the slow path) never touches the state:
//! the operating system serves it, as glibc's vDSO `getrandom` does.
//!
//! A signal handler that lands between the read of `SLOT` and the mark (one
//! window per entry point) runs a whole call, which may create, seed or refill
//! the page and open or close the gate. The interrupted call then sets the mark
//! over the value it read (still [`CLOSED`] or this thread's page, which
//! outlives the call) and reads `PAGE` and `left` only after it, so it sees all
//! the handler left. The gate it writes back at its end at worst closes one the
//! handler opened (the next call takes the slow path) or reopens one the
//! handler closed over the same page, whose `left` still says what may be
//! served. In the thread-exit destructor ([`Owner`]), a handler runs a whole
//! call before the first store, which sets the mark for good: no later call on
//! this thread reaches the page, which is then wiped and released.
//!
//! Nothing is served twice and no `&mut` aliases. [`set_slot`] and [`set_page`]
//! are fenced on both sides, so the compiler (to which a signal handler is
//! invisible) moves no state access across the mark or the page pointer. Each
//! window has an injection point (`inject!`), tested by `tests/injection.rs`.
//!
//! # A fork or a new generation in the middle of a call
//! A signal handler may fork, or move the generation (`generation.rs`, as a VM
//! restore does), while the call it interrupted is half done; a forked child
//! resumes that call over a page the kernel wiped (or the `pthread_atfork` hook
//! closed). So every call, after its last store to the state and before it
//! clears the mark, re-checks the header's `live` (which a wipe or the hook
//! zeroes) and generation; on a difference it closes the fast path (`left = 0`)
//! and the slow path serves afresh, reseeding with the clone material mixed in.
//! A fork or a restore after that check duplicates a value already drawn.

use core::cell::Cell;
use core::ptr;
use core::sync::atomic::{AtomicUsize, Ordering, compiler_fence};

use std::thread_local;

use super::fork;
use super::generation::{self, Generation};
use super::pages::Stride;
use super::state::{BUFFER_BYTES, Buffer, State};
use crate::error::OsError;

/// `live`'s value while the page may be served from (a wiped page reads 0).
const LIVE: usize = 0x11FE_11FE;

/// The start of a piece, which the hot path reads: one cache line, so that the
/// unread bytes follow at the same offset in both pieces. Atomics (`Relaxed`):
/// a signal handler on this thread may read them between any two instructions.
#[repr(C, align(64))]
struct Header {
    /// How many of the bytes after this header are unread (at most
    /// [`BUFFER_BYTES`]); 0 in [`CLOSED`], a fresh page and a page a fork wiped.
    left: AtomicUsize,
    /// [`LIVE`] while a fork has not happened since the slow path last took the
    /// page; zeroed by a wipe-on-fork and by the `pthread_atfork` hook.
    live: AtomicUsize,
    /// The process-wide generation (`generation.rs`) the state was seeded
    /// under: its two words, written by the slow path only.
    vm: AtomicUsize,
    explicit: AtomicUsize,
}

impl Header {
    /// Whether the state may still be served from: no fork since the slow path
    /// took the page (`live`), and the generation the state was seeded under.
    #[inline(always)]
    fn still_valid(&self) -> bool {
        let now = generation::current();
        (self.live.load(Ordering::Relaxed) ^ LIVE
            | self.vm.load(Ordering::Relaxed) ^ now.vm
            | self.explicit.load(Ordering::Relaxed) ^ now.explicit)
            == 0
    }

    /// Records the generation the state was (re)seeded under.
    fn record(&self, seeded: Generation) {
        self.vm.store(seeded.vm, Ordering::Relaxed);
        self.explicit.store(seeded.explicit, Ordering::Relaxed);
    }

    /// Whether the state was seeded under `now`.
    fn seeded_under(&self, now: Generation) -> bool {
        self.vm.load(Ordering::Relaxed) == now.vm
            && self.explicit.load(Ordering::Relaxed) == now.explicit
    }
}

/// A thread's page: the header, then the state, whose short first batch comes
/// first. `repr(C)`: a pointer to the page is a pointer to its header.
#[repr(C)]
struct Page {
    header: Header,
    state: State,
}

/// A thread's buffer, after its own header.
#[repr(C)]
struct BufferPage {
    header: Header,
    buffer: Buffer,
}

const _: () = assert!(
    core::mem::offset_of!(Page, state) + core::mem::offset_of!(State, short) == size_of::<Header>()
        && core::mem::offset_of!(BufferPage, buffer) == size_of::<Header>()
);

/// The gate of a thread whose fast path is closed: no state yet, a state whose
/// every call must take the slow path ([`fork::Protection::PidCheck`]), or a destroyed
/// one. Never written: the fast path writes only after finding `left >= 1`.
static CLOSED: Header = Header {
    left: AtomicUsize::new(0),
    live: AtomicUsize::new(LIVE),
    vm: AtomicUsize::new(0),
    explicit: AtomicUsize::new(0),
};

/// The in-use mark: the low bit of [`SLOT`] (headers are word-aligned).
const IN_USE: usize = 1;

thread_local! {
    /// The fast path's gate, the one thread-local the hot path reads: a header
    /// of this thread's pieces, else [`CLOSED`]; its low bit is the in-use mark.
    static SLOT: Cell<*const Header> = const { Cell::new(&raw const CLOSED) };

    /// This thread's page: null before it is created (and while it is),
    /// [`destroyed`] once this thread's thread-locals are being destroyed.
    static PAGE: Cell<*mut Page> = const { Cell::new(ptr::null_mut()) };

    /// This thread's buffer, set before [`PAGE`], read only where `PAGE` is a
    /// page; not in the page, so that a wipe does not erase it.
    static BUFFER: Cell<*mut BufferPage> = const { Cell::new(ptr::null_mut()) };

    /// What the kernel accepted for this thread's page's slab: wiped in a forked
    /// child, kept out of core dumps (not in the page, as [`BUFFER`]).
    static ADVICE: Cell<(bool, bool)> = const { Cell::new((false, false)) };

    /// Frees this thread's page when the thread exits.
    static OWNER: Owner = const { Owner };
}

/// `PAGE` once the page was freed in thread-local destruction: a marker
/// address, compared and never dereferenced.
fn destroyed() -> *mut Page {
    static MARK: u8 = 0;
    ptr::from_ref(&MARK).cast_mut().cast()
}

/// Whether `page` is a page (not null nor [`destroyed`]).
fn is_page(page: *mut Page) -> bool {
    !page.is_null() && page != destroyed()
}

/// Whether the in-use mark is set in `slot`.
fn in_use(slot: *const Header) -> bool {
    slot.addr() & IN_USE != 0
}

/// Sets `SLOT`, which also sets or clears the in-use mark; fenced on both sides.
#[inline(always)]
fn set_slot(slot: *const Header) {
    compiler_fence(Ordering::SeqCst);
    let _ = SLOT.try_with(|cell| cell.set(slot));
    compiler_fence(Ordering::SeqCst);
}

/// Bits of [`SLOT`] beside the in-use mark, which what runs inside a call (the
/// fork hook, a reentrant call) leaves for it, done as it releases the mark:
/// the hook's wipe (a child forked from a signal handler mid-call keeps none of
/// its parent's next output, even from a fork after its last check: issue 46).
const WIPE_PENDING: usize = 2;
/// A reentrant `reseed()`.
const RESEED_PENDING: usize = 4;

/// Clears the in-use mark, writing `gate` to [`SLOT`] (fenced as [`set_slot`]);
/// then does what was left for this call ([`pending`]).
#[inline(always)]
fn release(gate: *const Header) {
    compiler_fence(Ordering::SeqCst);
    let held = SLOT.try_with(|cell| cell.replace(gate)).unwrap_or(gate);
    compiler_fence(Ordering::SeqCst);
    if held.addr() & (WIPE_PENDING | RESEED_PENDING) != 0 {
        pending(held);
    }
}

/// Leaves `bit` ([`WIPE_PENDING`], [`RESEED_PENDING`]) for the call that holds
/// the mark, beside any bit already left: `SLOT` is read again here, as a
/// handler nested since the caller read it may have left one.
fn leave_pending(bit: usize) {
    if let Ok(held) = SLOT.try_with(Cell::get) {
        set_slot(held.map_addr(|a| a | bit));
    }
}

/// What a reentrant call left for the call that held the mark ([`release`]).
/// A failed reseed keeps the current key, as a failed scheduled one does.
#[cold]
#[inline(never)]
fn pending(held: *const Header) {
    if held.addr() & WIPE_PENDING != 0 {
        close_in_child();
    }
    if held.addr() & RESEED_PENDING != 0 {
        let _ = fill_slow(&mut [], true);
    }
}

/// Sets `PAGE` and returns what it held (null when it cannot be reached: never,
/// as it has no destructor). Fenced on both sides, as [`set_slot`].
#[inline(always)]
fn set_page(page: *mut Page) -> *mut Page {
    compiler_fence(Ordering::SeqCst);
    let old = PAGE
        .try_with(|cell| cell.replace(page))
        .unwrap_or(ptr::null_mut());
    compiler_fence(Ordering::SeqCst);
    old
}

/// The hot path of every entry point, and its fork check: serves `dst` from the
/// end of this thread's unread bytes, wiping them there, if the fast path is
/// open, the state not in use and the buffer holds all of `dst` (a forked child
/// finds `left == 0`: wiped, or zeroed by the `pthread_atfork` hook); false
/// otherwise (then call [`fill_slow`]), for an empty `dst` too when nothing is
/// buffered.
#[inline(always)]
pub(crate) fn take(dst: &mut [u8]) -> bool {
    let slot = SLOT.with(Cell::get);
    // A handler here runs a whole call (the mark is clear); `slot` stays
    // `CLOSED` or this thread's page.
    inject!(TakeSlotRead);
    if in_use(slot) {
        return false;
    }
    set_slot(slot.map_addr(|a| a | IN_USE));
    // SAFETY: `slot` was read with the mark clear: `CLOSED` or the header of
    // this thread's page, which lives until its `Owner` is dropped, never
    // inside this call; only its atomics are read, `left` under the mark.
    let header = unsafe { &*slot };
    let left = header.left.load(Ordering::Relaxed);
    if !fits(dst.len(), left) {
        release(slot);
        return false;
    }
    // The unread bytes follow the header (`Page` and `BufferPage` put them
    // there); the last `dst.len()` of them, from `x` on, are served.
    let x = left - dst.len();
    let start = slot.wrapping_add(1).cast::<u8>().cast_mut().wrapping_add(x);
    // SAFETY: `left >= 1`, so `slot` is this thread's piece, not `CLOSED`,
    // with its slab's provenance (stored from a piece pointer); the mark, set
    // before `left` was read, keeps handlers off its unread bytes; the gate is
    // the piece whose `left` counts the bytes after its header, so `x..left`
    // lies there (at most `BUFFER_BYTES`; a page's count is at most its short
    // batch's), and `dst` is the caller's memory, which cannot overlap the
    // slab (nothing hands it out).
    let src = unsafe { core::slice::from_raw_parts_mut(start, left - x) };
    crate::rngs::buffer::move_out(dst, src);
    // A handler here is served by the OS. In a child it forks, the store below
    // writes this call's stale `left` into the wiped page: only the re-check
    // that follows keeps the child from reopening the fast path over it.
    inject!(TakeCopied);
    header.left.store(x, Ordering::Relaxed);
    compiler_fence(Ordering::SeqCst);
    // A handler here is served by the OS; a fork or a `reseed_all_threads()`
    // it makes is caught below, as a VM restore is.
    inject!(TakeBeforeLive);
    if !header.still_valid() {
        stale_during(header, slot);
        return false;
    }
    // A fork or a VM snapshot here duplicates a value already drawn; the
    // child's next call finds `left == 0` (a clone: a new generation).
    inject!(TakeAfterLive);
    release(slot);
    true
}

/// Whether `left` unread bytes serve a request of `len`: `max(1, len) <= left
/// <= BUFFER_BYTES` (nothing is served from an empty buffer, nor from a count
/// no buffer holds), in one unsigned compare when `len` is a constant (a
/// `left` below the least wraps past the room).
#[inline(always)]
fn fits(len: usize, left: usize) -> bool {
    let least = len.max(1);
    BUFFER_BYTES
        .checked_sub(least)
        .is_some_and(|room| left.wrapping_sub(least) <= room)
}

/// A fork or a new generation during a fast-path call: closes the fast path
/// and releases the mark; the slow path then zeroes the buffer and reseeds.
#[cold]
#[inline(never)]
fn stale_during(header: &Header, slot: *const Header) {
    header.left.store(0, Ordering::Relaxed);
    release(slot);
}

/// The slow path: creates the state, or reseeds (after a fork, a new
/// generation, or because `force` asks), then fills `dst` (any length). A
/// reentrant call, and any call with no usable state (thread-local
/// destruction, no memory), is served by the operating system.
///
/// # Errors
/// The OS error when seeding is required (first use, after a fork, `force`, or
/// the OS fallback) and the OS generator fails.
#[cold]
#[inline(never)]
pub(crate) fn fill_slow(dst: &mut [u8], force: bool) -> Result<(), OsError> {
    let outer = super::generator::enter_stack();
    let result = serve_slow(dst, force);
    // A failure may come after a first pass moved bytes into `dst` (a fork or
    // a new generation seen at the re-check, then the reseed failed): those
    // bytes belong to a state that was forgotten, so none is handed back.
    if result.is_err() {
        zeroize::Zeroize::zeroize(dst);
    }
    super::generator::scrub_stack_if_used(outer);
    result
}

/// [`fill_slow`] in its own frame, under the one that scrubs the stack.
#[inline(never)]
fn serve_slow(dst: &mut [u8], force: bool) -> Result<(), OsError> {
    let Ok(slot) = SLOT.try_with(Cell::get) else {
        return crate::os::fill(dst);
    };
    // A handler here runs a whole call, a thread's first use included (it
    // creates and seeds the page): `PAGE` is read only under the mark, below.
    inject!(SlowSlotRead);
    if in_use(slot) {
        if force {
            // A reentrant `reseed()`: done as the interrupted call ends.
            leave_pending(RESEED_PENDING);
        }
        return crate::os::fill(dst);
    }
    set_slot(slot.map_addr(|a| a | IN_USE));
    // From here on, a handler is served by the OS.
    inject!(SlowMarked);
    let page = PAGE.try_with(Cell::get).unwrap_or(destroyed());
    inject!(SlowPageRead);
    // No page yet: a first use (the lite mix, unless the generation moved).
    let mut first_use = page.is_null();
    let page = if first_use { create_page() } else { Some(page) };
    // The OS serves with no page (`create_page` failed: no memory, or in
    // thread-local destruction, now or before; thread exit otherwise leaves the
    // mark set, caught above) or no `BUFFER` (Windows, in that destruction).
    let buffer = BUFFER.try_with(Cell::get).unwrap_or(ptr::null_mut());
    let Some(page) = page.filter(|&p| p != destroyed() && !buffer.is_null()) else {
        release(slot);
        return crate::os::fill(dst);
    };
    // Probes for the VMClock page until that is decided (then one load).
    generation::probe();
    // The droppable word re-armed, the generation not yet read: the kernel
    // may drop its page here (memory pressure), and a restore too; the read
    // below then finds 0, which `trusted` refuses.
    inject!(SlowProbed);
    let (wipes, _) = ADVICE.try_with(Cell::get).unwrap_or_default();
    let protection = fork::protection(close_in_child, wipes);
    let fast = protection.fast_path(wipes);
    // Where the fast path is closed (no working wipe), every call comes here and
    // compares the process id; with the epoch alone, once per buffer refill.
    let check_pid = protection.checks_pid() || !fast;
    let mut trusted;
    let (result, gate) = loop {
        // SAFETY: this thread's pieces, read from `PAGE` and `BUFFER` (or
        // created) under the mark, which live until `Owner` is dropped, never
        // inside this call; only their headers' atomics are read through these
        // shared references, and no `&mut` covers a header.
        let (header, buffer_header) = unsafe { (&(*page).header, &(*buffer).header) };
        header.live.store(LIVE, Ordering::Relaxed);
        compiler_fence(Ordering::SeqCst);
        // The generation now, and whether the state was seeded under it (a
        // VMClock page that cannot be trusted counts as a new one every call).
        let now = generation::current();
        trusted = generation::trusted(now);
        // A fresh page's zeroed header records no generation: at a first use,
        // whether the process's generation moved decides.
        let stale = !trusted
            || if first_use {
                generation::moved(now)
            } else {
                !header.seeded_under(now)
            };
        // A handler's `reseed_all_threads()` here is caught by the re-check.
        inject!(SlowGenerationRead);
        // SAFETY: this thread's page and buffer, held in use by this call
        // since before `PAGE` was read: no other reference to its state or
        // buffer exists (reentrant calls see the mark and keep off; the fast
        // path reaches only the unread bytes, and only under the mark).
        let (state, buf) = unsafe { (&mut (*page).state, &mut (*buffer).buffer) };
        let was_used = state.buffer_used();
        let mut left = unread_count(state, header, buffer_header);
        let result = state.serve(buf, &mut left, dst, force, check_pid, stale, first_use);
        if result.is_ok() {
            header.record(now);
        }
        let in_buffer = !state.unread_in_short() && state.buffer_used();
        // As at `TakeCopied`: a fork here stores this call's `left` into the
        // child's page; the child finds `live` zeroed below and starts over.
        inject!(SlowServed);
        if in_buffer {
            buffer_header.live.store(LIVE, Ordering::Relaxed);
            buffer_header.record(now);
            header.left.store(0, Ordering::Relaxed);
            buffer_header.left.store(left, Ordering::Relaxed);
        } else {
            if was_used {
                buffer_header.left.store(0, Ordering::Relaxed);
            }
            header.left.store(left, Ordering::Relaxed);
        }
        compiler_fence(Ordering::SeqCst);
        // Not yet published to the fast path: a handler here is served by the
        // OS; a child forked here finds `live` zeroed below and starts over.
        inject!(SlowBeforeLive);
        let live = header.live.load(Ordering::Relaxed) == LIVE
            && (!in_buffer || buffer_header.live.load(Ordering::Relaxed) == LIVE)
            && generation::current() == now;
        // A fork here (after the re-check) duplicates a call that has finished
        // with the state; the child's next call finds `left == 0`.
        inject!(SlowAfterLive);
        if live {
            // The gate for the calls that follow: the piece that holds the
            // unread bytes (a raw pointer from the slab, which reaches them).
            let holder = if in_buffer {
                buffer.cast_const().cast::<Header>()
            } else if state.unread_in_short() {
                page.cast_const().cast::<Header>()
            } else {
                &raw const CLOSED
            };
            break (result, holder);
        }
        // Forked during this call (this is the child), or the generation
        // moved: the state may hold another process's bytes. Forget it and
        // serve afresh, with the full mix (unseeded, and not a first use).
        state.forget(buf, &mut left);
        header.left.store(0, Ordering::Relaxed);
        if was_used || in_buffer {
            buffer_header.left.store(0, Ordering::Relaxed);
        }
        first_use = false;
    };
    #[cfg(ratchet_rng_inspect)]
    crate::__inspect::first_use_done();
    // Open or close the gate for the calls that follow; clears the mark.
    release(if fast && trusted && result.is_ok() {
        gate
    } else {
        &raw const CLOSED
    });
    result
}

/// How many bytes `state` has unread: the count in the header (`page`'s or
/// `buffer`'s) of the piece that holds them; the other one's is 0. A buffer
/// never written is not touched (faulted in).
fn unread_count(state: &State, page: &Header, buffer: &Header) -> usize {
    if state.unread_in_short() {
        page.left.load(Ordering::Relaxed)
    } else if state.buffer_used() {
        buffer.left.load(Ordering::Relaxed)
    } else {
        0
    }
}

/// Creates this thread's page, its state unseeded; `None` in thread-local
/// destruction or without memory. Called under the mark, so a reentrant call
/// from inside (registering the destructor may allocate) is served by the OS.
fn create_page() -> Option<*mut Page> {
    // Registers the page's destructor first; fails in thread-local destruction.
    if OWNER.try_with(|_| ()).is_err() {
        set_page(destroyed());
        return None;
    }
    // What a later call (maybe a signal handler's) would otherwise be first
    // to do, and must not: it is not async-signal-safe.
    #[cfg(target_arch = "x86_64")]
    crate::backend::x86_cpu::look_up_cpuid_table();
    let ((page, buffer), advice) = super::pages::take(stride())?;
    let page = page.cast::<Page>();
    // Taken from a slab, not yet this thread's: a handler here is served by the
    // OS (the caller holds the mark), so no second page is taken.
    inject!(PageMapped);
    let _ = ADVICE.try_with(|cell| cell.set(advice));
    let _ = BUFFER.try_with(|cell| cell.set(buffer.cast()));
    set_page(page);
    // Published in `PAGE`, not yet seeded: a handler is still served by the OS.
    inject!(PagePublished);
    Some(page)
}

/// A slot's two pieces: the page (several to a 4 KiB page) and the buffer,
/// each a multiple of 64 bytes (their `Header` is aligned to 64).
fn stride() -> Stride {
    Stride {
        state: size_of::<Page>(),
        buffer: size_of::<BufferPage>(),
    }
}

/// See [`OWNER`].
struct Owner;

impl Drop for Owner {
    fn drop(&mut self) {
        // Thread-local destructors do not run inside a call of this module. A
        // handler here runs a whole call over the page (still this thread's).
        inject!(DropEntered);
        // Closed and in use for good: from this store on, every call on this
        // thread is served by the OS, and none reads `PAGE` or reopens the
        // gate. So this is the first store, before `PAGE` is touched.
        set_slot((&raw const CLOSED).map_addr(|a| a | IN_USE));
        // A handler here is served by the OS.
        inject!(DropClosed);
        let page = set_page(destroyed());
        inject!(DropPageTaken);
        if is_page(page) {
            // SAFETY: this thread's page, which no call can reach any more: the
            // mark is set for good (above, fenced, so not sunk below these
            // writes), `PAGE` says "destroyed", and a handler that ran before
            // the mark finished its call. Its buffer is found from the slab:
            // on Windows `BUFFER` may read null by now.
            unsafe {
                let buffer = super::pages::buffer_of(page.cast(), stride()).cast::<BufferPage>();
                let used = (*page).state.release(&mut (*buffer).buffer);
                let headers = [&(*page).header, &(*buffer).header];
                // A buffer never written is not touched (faulted in) now.
                for header in &headers[..1 + usize::from(used)] {
                    header.left.store(0, Ordering::Relaxed);
                    header.live.store(0, Ordering::Relaxed);
                    header.record(Generation { vm: 0, explicit: 0 });
                }
            }
            // Wiped, not yet released: a handler is served by the OS.
            inject!(DropWiped);
            super::pages::give(page.cast(), stride());
        }
    }
}

/// The `pthread_atfork` child hook: closes the fast path of the thread that
/// forked (the child's only thread) and wipes its state under the in-use mark,
/// the key too where the kernel did not wipe the page, so that the child holds
/// nothing the parent serves or will serve; where the kernel wipes nothing, it
/// zeroes the states the parent's other threads left (`pages.rs`). A call the
/// fork interrupted (from a signal handler) holds the mark: it starts over if
/// it resumes before its re-check (`live` is zeroed), and does this wipe as it
/// releases the mark ([`WIPE_PENDING`]). The epoch, moved by the handler, makes
/// the next slow path reseed.
fn close_in_child() {
    let (Ok(slot), Ok(page)) = (SLOT.try_with(Cell::get), PAGE.try_with(Cell::get)) else {
        return;
    };
    // Read before the mark (a mark found set is respected below). A handler
    // here runs a whole call: with a wiped page (or no fast path) it reseeds
    // (the epoch moved before this hook); its buffer is discarded below.
    inject!(ChildHookRead);
    super::pages::zero_unwiped(stride(), page.cast());
    let buffer = BUFFER.try_with(Cell::get).unwrap_or(ptr::null_mut());
    if !is_page(page) || buffer.is_null() {
        return;
    }
    // SAFETY: this thread's pieces (the child's only thread, whose `Owner` has
    // not run: `PAGE` would say "destroyed"; `BUFFER` was set with it); atomics
    // only through these references. One count is 0 (the other piece's).
    let mut left = unsafe {
        let headers = [&(*page).header, &(*buffer).header];
        headers
            .iter()
            .for_each(|h| h.live.store(0, Ordering::Relaxed));
        headers
            .iter()
            .map(|h| h.left.swap(0, Ordering::Relaxed))
            .max()
            .unwrap_or(0)
    };
    if in_use(slot) {
        // The interrupted call holds the state: it wipes it as it releases
        // the mark.
        leave_pending(WIPE_PENDING);
        return;
    }
    set_slot(slot.map_addr(|a| a | IN_USE));
    let (wiped, _) = ADVICE.try_with(Cell::get).unwrap_or_default();
    // SAFETY: this thread's page, not in use when `slot` was read (a handler
    // that landed between that read and the mark ran a whole call and left no
    // reference behind): no reference to its state is live, and the mark keeps
    // reentrant calls off. A wiped page has nothing but what such a handler
    // buffered (its key is the child's own): not faulted in again by a wipe.
    unsafe {
        let buffer = &mut (*buffer).buffer;
        if wiped {
            (*page).state.discard(buffer, &mut left);
        } else {
            (*page).state.wipe(buffer);
        }
    }
    set_slot(slot);
}

/// What the inspection hook reports about this thread's state.
#[cfg(ratchet_rng_inspect)]
pub(crate) struct Inspected {
    /// Address and length of the page, and of the buffer.
    pub(crate) page: (usize, usize),
    pub(crate) buffer: (usize, usize),
    /// Wiped in a forked child; kept out of core dumps.
    pub(crate) advice: (bool, bool),
    /// Addresses and lengths of the key material and of the unread output.
    pub(crate) secrets: [(usize, usize); 2],
}

/// This thread's state, created and seeded if needed (with `seed`; else as it
/// is, `None` before a first use); `None` when it cannot exist (thread-local
/// destruction, no memory, OS seeding failed).
#[cfg(ratchet_rng_inspect)]
pub(crate) fn inspect(seed: bool) -> Option<Inspected> {
    if seed {
        fill_slow(&mut [], false).ok()?;
    }
    let page = PAGE.try_with(Cell::get).ok().filter(|&p| is_page(p))?;
    let buffer = BUFFER.try_with(Cell::get).ok()?;
    // SAFETY: this thread's live page and buffer, not in use (no call of this
    // module is in progress on this thread); read only.
    let [key, unread] = unsafe {
        let left = unread_count(&(*page).state, &(*page).header, &(*buffer).header);
        (*page).state.secret_ranges(&(*buffer).buffer, left)
    };
    Some(Inspected {
        page: (page.addr(), stride().state),
        buffer: (buffer.addr(), stride().buffer),
        advice: ADVICE.try_with(Cell::get).unwrap_or_default(),
        secrets: [(key.start, key.len()), (unread.start, unread.len())],
    })
}

/// Every slot of every slab (its page's and buffer's addresses), whether it
/// is free, and the lengths of a page and of a buffer.
#[cfg(ratchet_rng_inspect)]
pub(crate) fn inspect_slots() -> (std::vec::Vec<((usize, usize), bool)>, (usize, usize)) {
    let stride = stride();
    (super::pages::audit(stride), (stride.state, stride.buffer))
}

/// Whether this thread's fast path is open (`SLOT` a header, not in use).
#[cfg(ratchet_rng_inspect)]
pub(crate) fn inspect_gate_open() -> bool {
    SLOT.try_with(Cell::get)
        .is_ok_and(|slot| !in_use(slot) && slot != &raw const CLOSED)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// At least eight states to a 4 KiB page: a new thread's first use then
    /// usually finds its page faulted in by a neighbour's.
    #[test]
    fn eight_states_share_a_page() {
        assert!(size_of::<Page>() <= 512, "{} bytes", size_of::<Page>());
    }

    /// `pages.rs` places slot `i`'s pieces `i` strides into the slab: whole
    /// cache lines keep every `Header` aligned (it is aligned to 64).
    #[test]
    fn pieces_are_whole_cache_lines() {
        assert_eq!(size_of::<Page>() % 64, 0);
        assert_eq!(size_of::<BufferPage>() % 64, 0);
    }

    #[test]
    fn closed_gate_never_takes_the_fast_path() {
        assert_eq!(CLOSED.left.load(Ordering::Relaxed), 0);
        assert!(!fits(1, 0) && !fits(8, 0) && !fits(0, 0));
    }

    #[test]
    fn fits_accepts_exactly_the_held_bytes() {
        assert!(fits(8, 8) && fits(0, 1) && fits(1, BUFFER_BYTES));
        assert!(fits(BUFFER_BYTES, BUFFER_BYTES) && fits(4, BUFFER_BYTES));
        assert!(!fits(8, 7) && !fits(BUFFER_BYTES + 1, BUFFER_BYTES));
        assert!(!fits(1, BUFFER_BYTES + 1) && !fits(0, BUFFER_BYTES + 1));
        assert!(!fits(8, usize::MAX) && !fits(usize::MAX, usize::MAX));
        assert!(!fits(usize::MAX, 3));
    }
}
