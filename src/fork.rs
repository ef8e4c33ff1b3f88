//! Storage of the thread-local generator's state, and fork detection. All of the
//! thread-local generator's `unsafe` code lives in this module.
//!
//! # Where the state lives
//! Each thread's state ([`State`]: a small header, the fork-detection fields and the
//! generator) lives in its own allocation: on unix its own anonymous `mmap`ed
//! page(s), so that the kernel can be told what a forked child must see there. A
//! `const`-initialised thread-local [`SLOT`] points to it, or to one of two static
//! headers that mean "not created yet" ([`UNINIT`]) and "this thread's thread-locals
//! are being destroyed" ([`DESTROYED`]). A second thread-local, [`OWNER`], exists only
//! for its destructor, which frees the state when the thread exits.
//!
//! # The hot path
//! [`with_fast`] is one thread-local read (a plain `fs:`/`tpidr` access: the slot is
//! `const`-initialised and has no destructor), then one compare of the header's
//! `tag` with the process's fork epoch (plus the reseed budget, in the same cache
//! line), then the generator's own buffered read. The static headers and a wiped
//! page have `tag == 0`, and the epoch is never 0, so one compare rejects all of:
//! no state yet, destroyed, wiped by a fork, forked through `fork()`, and states
//! that must take the slow path on every call (the fallback below).
//!
//! # Fork detection, in layers
//! 1. **Wipe on fork** (Linux and Android: `madvise(MADV_WIPEONFORK)`, kernel 4.14+;
//!    FreeBSD: `minherit(INHERIT_ZERO)`; OpenBSD: `minherit(MAP_INHERIT_ZERO)`). The
//!    kernel gives a forked child zero-filled pages in place of the state. It sees
//!    every child that has its own copy of memory, however it was made: `fork()`,
//!    or a raw `fork` / `clone` system call that bypasses libc. The advice stays on
//!    the mapping in the child, so grandchildren are covered too.
//! 2. **Fork epoch**: a `pthread_atfork` child handler increments [`FORK_EPOCH`];
//!    a state whose `tag` is an older epoch takes the slow path and reseeds. It
//!    covers every `fork()` through libc, on every unix.
//! 3. **Process id**: the slow path also compares the process id recorded at
//!    seeding with `getpid()`.
//!
//! The wipe is *probed* once per process (see [`wipe_works`]): emulators such as
//! qemu-user accept `madvise` advice they do not implement, and an old kernel
//! rejects it. Where a wipe mechanism should exist but the probe fails, or where
//! `pthread_atfork` cannot be registered, [`Protection::PidCheck`] keeps `tag` at
//! 0, so that *every* call takes the slow path and compares `getpid()` (and the
//! epoch): slower (one system call per call) but never a repeat. Other unix systems
//! (macOS, NetBSD, illumos, ...) rely on layer 2 and check layer 3 on each slow
//! path. Without unix there is no `fork`.

use core::cell::Cell;
use core::mem::MaybeUninit;
use core::ptr;
use core::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

use std::thread_local;

use crate::OsError;
use crate::thread::{Generator, RESEED_BYTES};

// ---------------------------------------------------------------------------
// The fork epoch (layer 2)
// ---------------------------------------------------------------------------

/// Incremented in the child of every `fork()` made through libc (where the
/// `pthread_atfork` handler could be registered). Never 0: 0 is the `tag` of
/// states that must not take the fast path.
static FORK_EPOCH: AtomicUsize = AtomicUsize::new(1);

/// The current fork epoch.
#[inline(always)]
fn epoch() -> usize {
    FORK_EPOCH.load(Ordering::Relaxed)
}

/// The `pthread_atfork` child handler. It runs in the child, which has a single
/// thread at that point, and touches only an atomic (async-signal-safe).
#[cfg(unix)]
extern "C" fn bump_epoch_in_child() {
    let next = FORK_EPOCH.load(Ordering::Relaxed).wrapping_add(1);
    FORK_EPOCH.store(if next == 0 { 1 } else { next }, Ordering::Relaxed);
}

/// Registers [`bump_epoch_in_child`]; true if it is registered. Two threads racing
/// here may both register it: the epoch then moves by two per fork, which is as
/// good (only "changed" matters).
#[cfg(unix)]
fn register_atfork() -> bool {
    use core::sync::atomic::AtomicBool;
    static REGISTERED: AtomicBool = AtomicBool::new(false);
    if REGISTERED.load(Ordering::Acquire) {
        return true;
    }
    // SAFETY: the handler is a plain `extern "C" fn` with no arguments that lives
    // for the whole program and touches only an atomic.
    let rc = unsafe { libc::pthread_atfork(None, None, Some(bump_epoch_in_child)) };
    if rc == 0 {
        REGISTERED.store(true, Ordering::Release);
    }
    rc == 0
}

// ---------------------------------------------------------------------------
// Which protection this process has (decided once)
// ---------------------------------------------------------------------------

/// How forks are detected in this process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Protection {
    /// The state's pages are wiped in a forked child (probed), and the epoch is a
    /// second layer: the fast path is allowed.
    Wipe,
    /// No wipe mechanism on this system; `pthread_atfork` is registered: the fast
    /// path is allowed, and every slow path also checks `getpid()`.
    Epoch,
    /// A wipe mechanism should exist but does not work here (or `pthread_atfork`
    /// failed): every call takes the slow path and checks `getpid()`.
    PidCheck,
    /// Not unix: no `fork`.
    NoFork,
}

/// `Protection` as decided by [`protection`], cached (0 = not decided yet).
static PROTECTION: AtomicU8 = AtomicU8::new(0);

/// This process's protection, decided (and probed) on first use. Racing threads may
/// each decide; they reach the same answer. An atomic rather than a `Once`: a fork
/// while another thread holds a `Once` would leave the child waiting forever.
fn protection() -> Protection {
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
    let decided = decide_protection();
    let code = ALL.iter().position(|&p| p == decided).map_or(0, |i| i + 1);
    PROTECTION.store(code as u8, Ordering::Release);
    decided
}

#[cfg(unix)]
fn decide_protection() -> Protection {
    let atfork = register_atfork();
    if HAS_WIPE_MECHANISM {
        if wipe_works() {
            Protection::Wipe
        } else {
            Protection::PidCheck
        }
    } else if atfork {
        Protection::Epoch
    } else {
        Protection::PidCheck
    }
}

#[cfg(not(unix))]
fn decide_protection() -> Protection {
    Protection::NoFork
}

// ---------------------------------------------------------------------------
// Pages (unix): mapping, advice, the probe
// ---------------------------------------------------------------------------

/// Whether this system has a wipe-on-fork mechanism that [`advise_wipe`] uses.
#[cfg(unix)]
const HAS_WIPE_MECHANISM: bool = cfg!(any(
    target_os = "linux",
    target_os = "android",
    target_os = "freebsd",
    target_os = "openbsd"
));

/// The system's page size.
#[cfg(unix)]
fn page_bytes() -> usize {
    // SAFETY: `sysconf` only reads a system value; `_SC_PAGESIZE` is a valid name.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(page).unwrap_or(4096).max(4096)
}

/// A new private, anonymous, zero-filled read-write mapping of `len` bytes.
#[cfg(unix)]
fn map(len: usize) -> Option<*mut u8> {
    // SAFETY: a new anonymous mapping at an address the kernel chooses: no memory
    // we (or anyone) own is affected; failure is reported as `MAP_FAILED`.
    let page = unsafe {
        libc::mmap(
            ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANON,
            -1,
            0,
        )
    };
    (page != libc::MAP_FAILED).then_some(page.cast::<u8>())
}

/// Unmaps what [`map`] returned.
///
/// # Safety
/// `page` and `len` are a mapping from [`map`], not used afterwards.
#[cfg(unix)]
unsafe fn unmap(page: *mut u8, len: usize) {
    // SAFETY: the caller guarantees `page..page + len` is our mapping, unused from
    // now on. A failure can only leak the mapping.
    let _ = unsafe { libc::munmap(page.cast(), len) };
}

/// Asks the kernel to give a forked child zero-filled pages in place of
/// `page..page + len`; true if the advice was accepted (which the probe does not
/// take for proof).
#[cfg(unix)]
fn advise_wipe(page: *mut u8, len: usize) -> bool {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        // SAFETY: `page..page + len` is a private anonymous mapping we own (`map`);
        // the advice changes only what a forked child sees there.
        unsafe { libc::madvise(page.cast(), len, libc::MADV_WIPEONFORK) == 0 }
    }
    #[cfg(target_os = "freebsd")]
    {
        // SAFETY: as above: our own mapping; only a child's view changes.
        unsafe { libc::minherit(page.cast(), len, libc::INHERIT_ZERO) == 0 }
    }
    #[cfg(target_os = "openbsd")]
    {
        // SAFETY: as above: our own mapping; only a child's view changes.
        unsafe { libc::minherit(page.cast(), len, libc::MAP_INHERIT_ZERO) == 0 }
    }
    #[cfg(not(any(
        target_os = "linux",
        target_os = "android",
        target_os = "freebsd",
        target_os = "openbsd"
    )))]
    {
        let _ = (page, len);
        false
    }
}

/// Keeps `page..page + len` out of core dumps, where the system can (best effort:
/// the fork safety does not depend on it); true if the advice was accepted. The
/// result is recorded in the state, for the `hazmat` report that tests check.
#[cfg(unix)]
fn advise_no_dump(page: *mut u8, len: usize) -> bool {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        // SAFETY: our own anonymous mapping; the advice only affects core dumps.
        unsafe { libc::madvise(page.cast(), len, libc::MADV_DONTDUMP) == 0 }
    }
    #[cfg(target_os = "freebsd")]
    {
        // SAFETY: our own anonymous mapping; the advice only affects core dumps.
        unsafe { libc::madvise(page.cast(), len, libc::MADV_NOCORE) == 0 }
    }
    #[cfg(not(any(target_os = "linux", target_os = "android", target_os = "freebsd")))]
    {
        let _ = (page, len);
        false
    }
}

/// The probe: does a forked child really see a wipe-advised page as zeros? Some
/// emulators (qemu-user) accept the advice and ignore it. Forks a child once per
/// process; the child reads one byte and `_exit`s (both async-signal-safe, as a
/// child of a multi-threaded process requires), and reports through its exit
/// status. Any failure (no `fork` allowed, the child reaped elsewhere, a signal)
/// counts as "does not work": the fallback is safe, only slower.
#[cfg(unix)]
fn wipe_works() -> bool {
    let len = page_bytes();
    let Some(page) = map(len) else {
        return false;
    };
    let works = advise_wipe(page, len) && {
        // SAFETY: `page` is a fresh read-write mapping of at least one byte.
        unsafe { page.write_volatile(0xA5) };
        child_sees_zero(page)
    };
    // SAFETY: our mapping from `map` above, not used after this.
    unsafe { unmap(page, len) };
    works
}

/// Forks a child that exits with status 0 iff it reads 0 at `page`.
#[cfg(unix)]
fn child_sees_zero(page: *const u8) -> bool {
    // SAFETY: `fork` has no memory-safety preconditions; the child below only reads
    // memory and calls `_exit` (async-signal-safe).
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        // SAFETY: the child inherits the mapping (wiped or not): a valid one-byte read.
        let byte = unsafe { page.read_volatile() };
        // SAFETY: `_exit` ends the child at once, running no handlers or destructors
        // of the parent's state.
        unsafe { libc::_exit(i32::from(byte != 0)) }
    }
    if pid < 0 {
        return false;
    }
    let mut status: libc::c_int = 0;
    loop {
        // SAFETY: `status` is a valid out-pointer; `pid` is our own child.
        let rc = unsafe { libc::waitpid(pid, &mut status, 0) };
        if rc == pid {
            return libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
        }
        let interrupted = std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR);
        if rc != -1 || !interrupted {
            return false;
        }
    }
}

// ---------------------------------------------------------------------------
// The per-thread state
// ---------------------------------------------------------------------------

/// The part of the state the hot path reads; also the whole of the two static
/// placeholders. `repr(C)` and first in [`State`], so a pointer to either is a
/// pointer to a `Header`.
#[repr(C)]
struct Header {
    /// Equal to the current fork epoch iff the fast path may serve from this state:
    /// 0 in the placeholders, in a wiped page, and in states that must always take
    /// the slow path.
    tag: usize,
    /// Output bytes left before the next scheduled reseed.
    remaining: usize,
}

/// `seeded`'s value while the generator is initialised (any nonzero pattern: a
/// wiped page reads 0).
const SEEDED: usize = 0x5EED_5EED;

/// A thread's state.
#[repr(C)]
struct State {
    header: Header,
    /// [`SEEDED`] while `generator` holds a value; 0 in a page a fork wiped.
    seeded: usize,
    /// Whether this state's pages are wiped in a forked child.
    wipes: bool,
    /// Whether the kernel accepted keeping this state's pages out of core dumps.
    no_dump: bool,
    /// The fork epoch and process id at the last seeding.
    epoch: usize,
    pid: u32,
    /// The generator; its bytes are zeros (not a valid value) after a wipe.
    generator: MaybeUninit<Generator>,
}

/// "No state yet on this thread". Distinct contents make sure the two statics
/// have distinct addresses.
static UNINIT: Header = Header {
    tag: 0,
    remaining: 0,
};

/// "This thread's state was freed (thread-locals are being destroyed)".
static DESTROYED: Header = Header {
    tag: 0,
    remaining: 1,
};

fn uninit() -> *mut Header {
    ptr::addr_of!(UNINIT).cast_mut()
}

fn destroyed() -> *mut Header {
    ptr::addr_of!(DESTROYED).cast_mut()
}

thread_local! {
    /// This thread's state: [`UNINIT`], [`DESTROYED`] or a live [`State`] that only
    /// this thread uses. The static placeholders are only ever read.
    static SLOT: Cell<*mut Header> = const { Cell::new(ptr::addr_of!(UNINIT).cast_mut()) };

    /// Frees this thread's state when the thread exits.
    static OWNER: Owner = const { Owner };
}

/// See [`OWNER`].
struct Owner;

impl Drop for Owner {
    fn drop(&mut self) {
        let Ok(slot) = SLOT.try_with(|slot| slot.replace(destroyed())) else {
            return;
        };
        if slot != uninit() && slot != destroyed() {
            let state = slot.cast::<State>();
            // SAFETY: not a placeholder, so a live state of this thread, which no
            // one can reach any more (the slot now says "destroyed").
            unsafe { free_state(state) };
        }
    }
}

/// Allocates room for a state (uninitialised); also returns whether it will be
/// wiped in a forked child, and whether it is kept out of core dumps.
#[cfg(unix)]
fn alloc_state(protection: Protection) -> Option<(*mut State, bool, bool)> {
    let len = state_bytes();
    let page = map(len)?;
    let wipes = protection == Protection::Wipe && advise_wipe(page, len);
    let no_dump = advise_no_dump(page, len);
    Some((page.cast::<State>(), wipes, no_dump))
}

#[cfg(not(unix))]
fn alloc_state(_: Protection) -> Option<(*mut State, bool, bool)> {
    let state = std::boxed::Box::<State>::new_uninit();
    Some((
        std::boxed::Box::into_raw(state).cast::<State>(),
        false,
        false,
    ))
}

/// The length of a state's allocation: whole pages on unix.
fn state_bytes() -> usize {
    #[cfg(unix)]
    {
        size_of::<State>().next_multiple_of(page_bytes())
    }
    #[cfg(not(unix))]
    {
        size_of::<State>()
    }
}

/// Drops the generator (which zeroizes it) if it holds one, and frees the state.
///
/// # Safety
/// `state` comes from [`alloc_state`] and is not used afterwards; its `seeded`
/// field is initialised.
unsafe fn free_state(state: *mut State) {
    // SAFETY: `state` is valid and exclusively ours (caller); `seeded == SEEDED`
    // means the generator is initialised.
    unsafe {
        if (*state).seeded == SEEDED {
            (*state).generator.assume_init_drop();
        }
    }
    #[cfg(unix)]
    {
        // SAFETY: the mapping `alloc_state` made (same length), not used after this.
        unsafe { unmap(state.cast::<u8>(), state_bytes()) };
    }
    #[cfg(not(unix))]
    {
        // SAFETY: the box `alloc_state` leaked; the generator is already dropped
        // and `MaybeUninit` drops nothing.
        drop(unsafe { std::boxed::Box::from_raw(state.cast::<MaybeUninit<State>>()) });
    }
}

/// Creates this thread's state, seeded; `None` when it cannot be created (the
/// thread's thread-locals are being destroyed, or no memory): the caller then
/// draws from the OS.
fn create_state() -> Option<Result<*mut State, OsError>> {
    // The destructor that frees the state must be registered first; it cannot be
    // once this thread's thread-locals are being destroyed.
    if OWNER.try_with(|_| ()).is_err() {
        let _ = SLOT.try_with(|slot| slot.set(destroyed()));
        return None;
    }
    let protection = protection();
    let (state, wipes, no_dump) = alloc_state(protection)?;
    let generator = match Generator::from_os() {
        Ok(generator) => generator,
        Err(err) => {
            // SAFETY: `seeded` is initialised to "not seeded" before `free_state`
            // reads it; `state` is valid for writes (just allocated).
            unsafe {
                ptr::addr_of_mut!((*state).seeded).write(0);
                free_state(state);
            }
            return Some(Err(err));
        }
    };
    let epoch = epoch();
    let fast = match protection {
        Protection::Wipe => wipes,
        Protection::Epoch | Protection::NoFork => true,
        Protection::PidCheck => false,
    };
    // SAFETY: `state` is freshly allocated, aligned for `State` (a page, or a box)
    // and valid for writes of one.
    unsafe {
        state.write(State {
            header: Header {
                tag: if fast { epoch } else { 0 },
                remaining: RESEED_BYTES,
            },
            seeded: SEEDED,
            wipes,
            no_dump,
            epoch,
            pid: std::process::id(),
            generator: MaybeUninit::new(generator),
        });
    }
    if SLOT.try_with(|slot| slot.set(state.cast())).is_err() {
        // SAFETY: just initialised, and nothing else points to it.
        unsafe { free_state(state) };
        return None;
    }
    Some(Ok(state))
}

impl State {
    /// The slow path on a live state: detects a fork (any layer), reseeds when a
    /// fork, the budget or `force` requires it, then serves `bytes` with `f`.
    fn serve<R>(
        &mut self,
        bytes: usize,
        force: bool,
        f: impl FnOnce(&mut Generator) -> R,
    ) -> Result<R, OsError> {
        let wiped = self.seeded != SEEDED;
        let pid = std::process::id();
        let forked = wiped || self.epoch != epoch() || self.pid != pid;
        if forked || force || self.header.remaining < bytes {
            match Generator::from_os() {
                Ok(fresh) => {
                    if wiped {
                        // The zeros are not a generator value: overwrite, no drop.
                        self.generator.write(fresh);
                        // Only a wiping page reads as zeros here.
                        self.wipes = true;
                        self.seeded = SEEDED;
                    } else {
                        // SAFETY: `seeded == SEEDED`: the generator is initialised.
                        let old = unsafe { self.generator.assume_init_mut() };
                        // Drops (and so zeroizes) the old generator.
                        *old = fresh;
                    }
                    let fast = match protection() {
                        Protection::Wipe => self.wipes,
                        Protection::Epoch | Protection::NoFork => true,
                        Protection::PidCheck => false,
                    };
                    self.epoch = epoch();
                    self.pid = pid;
                    self.header.tag = if fast { self.epoch } else { 0 };
                    self.header.remaining = RESEED_BYTES;
                }
                // Never serve a stream another process also has.
                Err(err) if forked => {
                    self.header.tag = 0;
                    return Err(err);
                }
                Err(err) if force => return Err(err),
                // A scheduled reseed failed: the current key is still good (and
                // erased as it goes); try again after another budget.
                Err(_) => self.header.remaining = RESEED_BYTES,
            }
        }
        debug_assert!(bytes <= self.header.remaining);
        self.header.remaining -= bytes;
        // SAFETY: seeded (just now, or `seeded == SEEDED` and not wiped).
        Ok(f(unsafe { self.generator.assume_init_mut() }))
    }
}

// ---------------------------------------------------------------------------
// The entry points
// ---------------------------------------------------------------------------

/// The hot path: serves `bytes` (at most [`RESEED_BYTES`]) with `f` from this
/// thread's generator if it exists, no fork happened since it was seeded and its
/// budget allows; `None` otherwise (then call [`with_slow`]). `f` must not use the
/// thread-local generator.
#[inline(always)]
pub(crate) fn with_fast<R>(bytes: usize, f: impl FnOnce(&mut Generator) -> R) -> Option<R> {
    let slot = SLOT.try_with(Cell::get).ok()?;
    // SAFETY: `slot` points to a placeholder static or to this thread's live state,
    // whose first field is a `Header` (`repr(C)`); both are valid for reads while
    // this thread runs, and nothing writes them during this call.
    let header = unsafe { &*slot };
    if header.tag != epoch() || header.remaining < bytes {
        return None;
    }
    // SAFETY: a nonzero `tag` is only ever stored in a live state (the placeholders
    // and wiped pages hold 0, the epoch is never 0): `slot` is a `State`.
    // It is used by this thread only (the handle is `!Send`; signal handlers are
    // excluded in the docs), and no other reference to it is live.
    let state = unsafe { &mut *slot.cast::<State>() };
    state.header.remaining -= bytes;
    // SAFETY: a nonzero `tag` is only stored while the generator is initialised
    // (set after seeding; a wipe zeroes the tag with the generator).
    Some(f(unsafe { state.generator.assume_init_mut() }))
}

/// The hot path of a fill: like [`with_fast`], but serves as much of `want` bytes
/// as the reseed budget allows now, `n = min(want, remaining)`, with `f(generator,
/// n)`, and returns `n`. `None` (then call [`with_slow`]) when [`with_fast`] would
/// refuse, or when the budget is spent and `want > 0`; `Some(0)` for `want == 0`
/// after the fork check. `f` must not use the thread-local generator.
#[inline(always)]
pub(crate) fn with_fast_upto(want: usize, f: impl FnOnce(&mut Generator, usize)) -> Option<usize> {
    let slot = SLOT.try_with(Cell::get).ok()?;
    // SAFETY: as in `with_fast`: a placeholder static or this thread's live state,
    // both starting with a `Header`, valid for reads and not written during this call.
    let header = unsafe { &*slot };
    let n = want.min(header.remaining);
    if header.tag != epoch() || (n == 0 && want != 0) {
        return None;
    }
    // SAFETY: as in `with_fast`: a nonzero `tag` (equal to the epoch) is only stored
    // in a live state of this thread, with no other reference to it live.
    let state = unsafe { &mut *slot.cast::<State>() };
    state.header.remaining -= n;
    // SAFETY: as in `with_fast`: a nonzero `tag` means the generator is initialised.
    f(unsafe { state.generator.assume_init_mut() }, n);
    Some(n)
}

/// Bench only (`RATCHET_RNG_BENCH=1`): [`with_fast`] for an 8-byte read *without
/// the fork check* (no `tag` / epoch compare), to measure what that check costs.
/// Not fork-safe. The budget compare still tells a live state from the
/// placeholders and a wiped page (their `remaining` is below 8).
#[cfg(ratchet_rng_bench)]
#[inline(always)]
pub(crate) fn with_fast_no_fork_check_u64(f: impl FnOnce(&mut Generator) -> u64) -> Option<u64> {
    let slot = SLOT.try_with(Cell::get).ok()?;
    // SAFETY: as in `with_fast`: a placeholder or this thread's live state.
    let header = unsafe { &*slot };
    if header.remaining < 8 {
        return None;
    }
    // SAFETY: `remaining >= 8` only in a live, seeded state (the placeholders hold 0
    // and 1, a wiped page 0, and the field is written only after seeding).
    let state = unsafe { &mut *slot.cast::<State>() };
    state.header.remaining -= 8;
    // SAFETY: as above: seeded.
    Some(f(unsafe { state.generator.assume_init_mut() }))
}

/// The slow path: creates the state, or detects a fork and reseeds, or reseeds
/// because the budget is spent or `force` asks, then serves `bytes` (at most
/// [`RESEED_BYTES`]) with `f`. Where there is no usable state (during or after
/// thread-local destruction, or no memory), `f` runs on a generator freshly seeded
/// from the OS and dropped (zeroized) after. `f` must not use the thread-local
/// generator.
///
/// # Errors
/// The OS error when seeding is required (first use, after a fork, `force`, or the
/// OS fallback) and the OS generator fails.
#[cold]
#[inline(never)]
pub(crate) fn with_slow<R>(
    bytes: usize,
    force: bool,
    f: impl FnOnce(&mut Generator) -> R,
) -> Result<R, OsError> {
    debug_assert!(bytes <= RESEED_BYTES);
    let mut slot = match SLOT.try_with(Cell::get) {
        Ok(slot) => slot,
        Err(_) => return with_fresh(f),
    };
    if slot == destroyed() {
        return with_fresh(f);
    }
    if slot == uninit() {
        match create_state() {
            Some(Ok(state)) => slot = state.cast(),
            Some(Err(err)) => return Err(err),
            None => return with_fresh(f),
        }
    }
    // SAFETY: not a placeholder: this thread's live state, used by this thread only,
    // with no other reference to it live (see `with_fast`).
    let state = unsafe { &mut *slot.cast::<State>() };
    state.serve(bytes, force, f)
}

/// Where this thread's state lives and what the kernel was told about it (the
/// `hazmat` report; see `hazmat::ThreadStatePages`): the address and length of
/// its allocation, whether it is wiped in a forked child, whether the advice to
/// keep it out of core dumps was accepted. Creates the state if needed; `None`
/// when it cannot exist (thread-local destruction, no memory, OS seeding failed).
#[cfg(feature = "hazmat")]
pub(crate) fn this_thread_state() -> Option<(usize, usize, bool, bool)> {
    with_slow(0, false, |_| ()).ok()?;
    let slot = SLOT.try_with(Cell::get).ok()?;
    if slot == uninit() || slot == destroyed() {
        return None;
    }
    // SAFETY: not a placeholder: this thread's live state (see `with_slow`); only
    // two plain fields are read, with no reference to the state live elsewhere.
    let (wipes, no_dump) = unsafe {
        let state = slot.cast::<State>();
        ((*state).wipes, (*state).no_dump)
    };
    Some((slot as usize, state_bytes(), wipes, no_dump))
}

/// Runs `f` on a generator seeded from the OS for this call only.
fn with_fresh<R>(f: impl FnOnce(&mut Generator) -> R) -> Result<R, OsError> {
    let mut generator = Generator::from_os()?;
    Ok(f(&mut generator))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protection_is_decided_once_and_cached() {
        let first = protection();
        assert_eq!(protection(), first);
        #[cfg(all(unix, not(any(target_os = "linux", target_os = "android"))))]
        assert_ne!(first, Protection::NoFork);
    }

    /// `cargo test --lib reports -- --nocapture` shows which layer this machine
    /// got (qemu-user: the probe decides).
    #[test]
    fn reports_the_protection_in_use() {
        let protection = protection();
        std::eprintln!("fork protection in this process: {protection:?}");
        #[cfg(any(target_os = "linux", target_os = "android"))]
        assert!(matches!(
            protection,
            Protection::Wipe | Protection::PidCheck
        ));
    }

    #[test]
    fn epoch_is_never_zero() {
        assert_ne!(epoch(), 0);
    }

    #[test]
    fn placeholders_never_take_the_fast_path() {
        assert_eq!(UNINIT.tag, 0);
        assert_eq!(DESTROYED.tag, 0);
        assert_ne!(uninit(), destroyed());
    }
}
