//! Storage of the thread-local generator's state, and fork detection. All of the
//! thread-local generator's `unsafe` code lives in this module.
//!
//! # Where the state lives
//! Each thread's state ([`State`]: the count of unread bytes, the output buffer,
//! the reseed budget, the fork-detection fields and the generator) lives in its
//! own allocation: on unix its own anonymous `mmap`ed page(s), so that the kernel
//! can be told what a forked child must see there. Two `const`-initialised
//! thread-locals point to it: [`SLOT`], the fast path's gate, and [`STATE`], the
//! slow path's. A third, [`OWNER`], exists only for its destructor, which frees the
//! state when the thread exits.
//!
//! # The hot path
//! [`take`] / [`take_into`] are one thread-local read (a plain `fs:`/`tpidr`
//! access: the slot is `const`-initialised and has no destructor), one load and
//! compare of the count of unread bytes `left`, the copy out of the buffer and its
//! wipe, and the store of the new count: one read-modify-write per call. There is
//! no separate fork compare: every fork layer acts on that same count, so it *is*
//! the fork check. A forked child finds `left == 0` (its page wiped by the
//! kernel, or its count zeroed by the `pthread_atfork` handler), as do a thread
//! with no state yet, a destroyed state, and states that must take the slow path
//! on every call (their gate is the static [`CLOSED`] header); its first call
//! goes to [`fill_slow`], which compares the epoch and the process id and
//! reseeds. The reseed budget is charged there too, when the generator produces
//! output (a refill of the buffer, or whole refills straight into a large
//! request), not per call.
//!
//! # Fork detection, in layers
//! 1. **Wipe on fork** (Linux and Android: `madvise(MADV_WIPEONFORK)`, kernel 4.14+;
//!    FreeBSD: `minherit(INHERIT_ZERO)`; OpenBSD: `minherit(MAP_INHERIT_ZERO)`). The
//!    kernel gives a forked child zero-filled pages in place of the state. It sees
//!    every child that has its own copy of memory, however it was made: `fork()`,
//!    or a raw `fork` / `clone` system call that bypasses libc. The advice stays on
//!    the mapping in the child, so grandchildren are covered too.
//! 2. **`pthread_atfork`**: the child handler increments [`FORK_EPOCH`] and, in the
//!    thread that forked (the child's only thread), wipes the buffer and zeroes
//!    `left`; the slow path then sees a stale epoch and reseeds. It covers every
//!    `fork()` through libc, on every unix.
//! 3. **Process id**: the slow path also compares the process id recorded at
//!    seeding with `getpid()`.
//!
//! The wipe is *probed* once per process (see [`wipe_works`]): emulators such as
//! qemu-user accept `madvise` advice they do not implement, and an old kernel
//! rejects it. Where a wipe mechanism should exist but the probe fails, or where
//! `pthread_atfork` cannot be registered, [`Protection::PidCheck`] keeps the gate
//! closed, so that *every* call takes the slow path and compares `getpid()` (and
//! the epoch): slower (one system call per call) but never a repeat. Other unix
//! systems (macOS, NetBSD, illumos, ...) rely on layer 2 and check layer 3 on each
//! slow path. Without unix there is no `fork`.

use core::cell::Cell;
use core::mem::MaybeUninit;
use core::ptr;
use core::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

use std::thread_local;

use zeroize::Zeroize;

use crate::OsError;
use crate::rngs::buffer::move_out;
use crate::thread::{BUFFER_BYTES, Generator, RESEED_BYTES};

// ---------------------------------------------------------------------------
// The fork epoch (layer 2)
// ---------------------------------------------------------------------------

/// Incremented in the child of every `fork()` made through libc (where the
/// `pthread_atfork` handler could be registered); compared on the slow path.
static FORK_EPOCH: AtomicUsize = AtomicUsize::new(0);

/// The current fork epoch.
fn epoch() -> usize {
    FORK_EPOCH.load(Ordering::Relaxed)
}

/// The `pthread_atfork` child handler. It runs in the child, which has a single
/// thread at that point (the one that forked), and does only plain memory writes:
/// it moves the epoch and closes that thread's fast path. Reaching that thread's
/// state reads a `const`-initialised thread-local with no destructor, a plain
/// TLS access where the crate is linked into the executable; only in a library
/// loaded with `dlopen` (dynamic TLS) can a thread's first access allocate its TLS
/// block, which glibc and macOS support in a fork child.
#[cfg(unix)]
extern "C" fn bump_epoch_in_child() {
    FORK_EPOCH.fetch_add(1, Ordering::Relaxed);
    close_in_child();
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

/// The part of the state the hot path reads: also the whole of the static
/// [`CLOSED`] gate. `repr(C)` and first in [`State`], so a pointer to a `State` is
/// a pointer to its `Header`.
#[repr(C)]
struct Header {
    /// Unread bytes at the start of the state's buffer (at most
    /// [`BUFFER_BYTES`]); 0 in [`CLOSED`] and in a page a fork wiped, and set to 0
    /// in the child by the `pthread_atfork` handler.
    left: usize,
}

/// The gate of a thread whose fast path is closed: no state yet, a state whose
/// every call must take the slow path ([`Protection::PidCheck`]), or a destroyed
/// one. Never written (every write follows a check of `left >= 1`).
static CLOSED: Header = Header { left: 0 };

fn closed() -> *mut Header {
    ptr::addr_of!(CLOSED).cast_mut()
}

/// The output buffer, cache-line aligned: requests of 16, 32 or 64 bytes then
/// never straddle two lines.
#[repr(C, align(64))]
struct Buffer([u8; BUFFER_BYTES]);

impl core::ops::Deref for Buffer {
    type Target = [u8; BUFFER_BYTES];
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl core::ops::DerefMut for Buffer {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

/// `seeded`'s value while the generator is initialised (any nonzero pattern: a
/// wiped page reads 0).
const SEEDED: usize = 0x5EED_5EED;

/// A thread's state.
#[repr(C)]
struct State {
    header: Header,
    /// Output not yet served is `buf[..header.left]`, served from its end (the
    /// thread's stream has no order to keep); every other byte is zero (wiped as
    /// it was served).
    buf: Buffer,
    /// Bytes the generator may still produce before its scheduled reseed.
    budget: usize,
    /// [`SEEDED`] while `generator` holds a value; 0 in a page a fork wiped.
    seeded: usize,
    /// Whether the fast path may serve from this state ([`SLOT`] points here).
    fast: bool,
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

thread_local! {
    /// The fast path's gate: this thread's live [`State`] when the fast path may
    /// serve from it, else [`CLOSED`]. The one thread-local the hot path reads.
    static SLOT: Cell<*mut Header> = const { Cell::new(ptr::addr_of!(CLOSED).cast_mut()) };

    /// This thread's state for the slow path: null before it is created,
    /// [`destroyed`] once this thread's thread-locals are being destroyed.
    static STATE: Cell<*mut State> = const { Cell::new(ptr::null_mut()) };

    /// Frees this thread's state when the thread exits.
    static OWNER: Owner = const { Owner };
}

/// `STATE`'s value once the state was freed in thread-local destruction (an
/// address compared, never dereferenced).
fn destroyed() -> *mut State {
    static MARK: u8 = 0;
    ptr::addr_of!(MARK).cast_mut().cast()
}

/// See [`OWNER`].
struct Owner;

impl Drop for Owner {
    fn drop(&mut self) {
        let _ = SLOT.try_with(|slot| slot.set(closed()));
        let Ok(state) = STATE.try_with(|cell| cell.replace(destroyed())) else {
            return;
        };
        if !state.is_null() && state != destroyed() {
            // SAFETY: a live state of this thread, which no one can reach any more
            // (the gate is closed and `STATE` says "destroyed").
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
#[cfg_attr(
    not(unix),
    allow(dead_code, reason = "used by the unix paths and the state report only")
)]
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

/// Wipes the buffer, drops the generator (which zeroizes it) if it holds one, and
/// frees the state.
///
/// # Safety
/// `state` comes from [`alloc_state`] and is not used afterwards; its `seeded`
/// field and buffer are initialised.
unsafe fn free_state(state: *mut State) {
    // SAFETY: `state` is valid and exclusively ours (caller); `seeded == SEEDED`
    // means the generator is initialised.
    unsafe {
        (*state).buf.zeroize();
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

/// This process's id on unix, where a fork gives the child a new one; 0 elsewhere,
/// where no process forks ([`Protection::NoFork`]) and `std::process::id()` may
/// not exist: it panics on WASI and on `wasm32-unknown-unknown`.
fn process_id() -> u32 {
    #[cfg(unix)]
    {
        std::process::id()
    }
    #[cfg(not(unix))]
    {
        0
    }
}

/// Whether the fast path may serve from a state seeded under `protection`, whose
/// pages are wiped in a child iff `wipes`.
fn fast_allowed(protection: Protection, wipes: bool) -> bool {
    match protection {
        Protection::Wipe => wipes,
        Protection::Epoch | Protection::NoFork => true,
        Protection::PidCheck => false,
    }
}

/// Creates this thread's state, seeded (its buffer empty); `None` when it cannot
/// be created (the thread's thread-locals are being destroyed, or no memory): the
/// caller then draws from the OS.
fn create_state() -> Option<Result<*mut State, OsError>> {
    // The destructor that frees the state must be registered first; it cannot be
    // once this thread's thread-locals are being destroyed.
    if OWNER.try_with(|_| ()).is_err() {
        let _ = STATE.try_with(|cell| cell.set(destroyed()));
        return None;
    }
    let protection = protection();
    let (state, wipes, no_dump) = alloc_state(protection)?;
    let generator = match Generator::from_os() {
        Ok(generator) => generator,
        Err(err) => {
            // SAFETY: `seeded` and the buffer are initialised before `free_state`
            // reads them; `state` is valid for writes (just allocated).
            unsafe {
                ptr::addr_of_mut!((*state).seeded).write(0);
                ptr::addr_of_mut!((*state).buf).write(Buffer([0; BUFFER_BYTES]));
                free_state(state);
            }
            return Some(Err(err));
        }
    };
    let epoch = epoch();
    // SAFETY: `state` is freshly allocated, aligned for `State` (a page, or a box)
    // and valid for writes of one.
    unsafe {
        state.write(State {
            header: Header { left: 0 },
            buf: Buffer([0; BUFFER_BYTES]),
            budget: RESEED_BYTES,
            seeded: SEEDED,
            fast: fast_allowed(protection, wipes),
            wipes,
            no_dump,
            epoch,
            pid: process_id(),
            generator: MaybeUninit::new(generator),
        });
    }
    if STATE.try_with(|cell| cell.set(state)).is_err() {
        // SAFETY: just initialised, and nothing else points to it.
        unsafe { free_state(state) };
        return None;
    }
    Some(Ok(state))
}

impl State {
    /// Detects a fork (any layer) and reseeds when a fork or `force` requires it.
    /// On a fork whose reseed fails, nothing may be served: the buffer is wiped
    /// and the error returned.
    ///
    /// The process id (a system call) is compared where the fast path is closed
    /// (the [`Protection::PidCheck`] fallback: every call comes here) and on a
    /// forced reseed; with the fast path open, a fork has already been caught by
    /// the wipe or the epoch, and this runs once per buffer refill.
    fn check(&mut self, force: bool) -> Result<(), OsError> {
        let wiped = self.seeded != SEEDED;
        let pid = if self.fast && !force && !wiped {
            self.pid
        } else {
            process_id()
        };
        let forked = wiped || self.epoch != epoch() || self.pid != pid;
        if !(forked || force) {
            return Ok(());
        }
        // Nothing buffered before a fork or a forced reseed is ever served.
        self.discard_buffer();
        match Generator::from_os() {
            Ok(fresh) => {
                if wiped {
                    // The zeros are not a generator value: overwrite, no drop.
                    self.generator.write(fresh);
                    // Only a wiping page reads as zeros here; the advice stays on
                    // the mapping in the child.
                    self.wipes = true;
                    #[cfg(unix)]
                    {
                        self.no_dump = advise_no_dump(ptr::from_mut(self).cast(), state_bytes());
                    }
                    self.seeded = SEEDED;
                } else {
                    // SAFETY: `seeded == SEEDED`: the generator is initialised.
                    let old = unsafe { self.generator.assume_init_mut() };
                    // Drops (and so zeroizes) the old generator.
                    *old = fresh;
                }
                self.fast = fast_allowed(protection(), self.wipes);
                self.epoch = epoch();
                self.pid = pid;
                self.budget = RESEED_BYTES;
                Ok(())
            }
            // Never serve a stream another process also has: `seeded` stays as it
            // is (0 after a wipe) or the epoch / pid stay stale, so the next call
            // tries again.
            Err(err) => Err(err),
        }
    }

    /// Zeroes the unread bytes (and so the whole buffer) and closes the fast path
    /// until the next refill.
    fn discard_buffer(&mut self) {
        self.buf.zeroize();
        self.header.left = 0;
    }

    /// Lets `generator` produce `out.len()` bytes (a multiple of its refill, at
    /// most [`RESEED_BYTES`]) into `out`, reseeding it first if `budget` does not
    /// cover them. A failed scheduled reseed keeps the current key (which the
    /// generator erases at each refill anyway) and tries again a budget later.
    /// Takes the two fields rather than `self`, so that `out` may be the buffer.
    fn generate(budget: &mut usize, generator: &mut Generator, out: &mut [u8]) {
        if *budget < out.len() {
            if let Ok(fresh) = Generator::from_os() {
                // Drops (and so zeroizes) the old generator.
                *generator = fresh;
            }
            *budget = RESEED_BYTES;
        }
        *budget -= out.len();
        generator.generate(out);
    }

    /// Serves `dst` after [`check`](Self::check): the buffered bytes first, then
    /// whole refills generated straight into `dst` (in pieces of at most
    /// [`RESEED_BYTES`]), then the tail from a refilled buffer.
    fn fill(&mut self, dst: &mut [u8]) {
        // 1. What is buffered.
        let left = self.header.left;
        let n = dst.len().min(left);
        let (now, rest) = dst.split_at_mut(n);
        move_out(now, &mut self.buf[left - n..left]);
        self.header.left = left - n;
        if rest.is_empty() {
            return;
        }
        // 2. Whole refills, straight into `rest`.
        // SAFETY: only called after `check`: the generator is initialised.
        let generator = unsafe { self.generator.assume_init_mut() };
        let refill = generator.refill_bytes();
        let whole = rest.len() / refill * refill;
        let (direct, tail) = rest.split_at_mut(whole);
        for piece in direct.chunks_mut(RESEED_BYTES / refill * refill) {
            Self::generate(&mut self.budget, generator, piece);
        }
        // 3. The tail (shorter than a refill) from a refilled buffer.
        if !tail.is_empty() {
            let fresh = BUFFER_BYTES / refill * refill;
            let unread = &mut self.buf[..fresh];
            Self::generate(&mut self.budget, generator, unread);
            let left = fresh - tail.len();
            move_out(tail, &mut unread[left..]);
            self.header.left = left;
        }
    }
}

// ---------------------------------------------------------------------------
// The entry points
// ---------------------------------------------------------------------------

/// Where the last `K` of `left` unread bytes start, if the buffer holds them:
/// `x = left - K` when `K <= left <= BUFFER_BYTES`, found with one unsigned
/// compare (a `left` below `K` wraps past the bound), which also proves
/// `x + K <= BUFFER_BYTES` for the slice that follows.
#[inline(always)]
fn last_k<const K: usize>(left: usize) -> Option<usize> {
    const { assert!(K >= 1 && K <= BUFFER_BYTES) };
    let x = left.wrapping_sub(K);
    (x <= BUFFER_BYTES - K).then_some(x)
}

/// The hot path of `u32()` / `u64()`: the last `K` unread bytes of this thread's
/// buffer, wiped there, if the fast path is open and the buffer holds them;
/// `None` otherwise (then call [`fill_slow`]).
///
/// This is the whole fork check: a forked child finds `left == 0` (its page
/// wiped by the kernel, or zeroed by the `pthread_atfork` handler), so its first
/// call takes the slow path, which compares the epoch and the process id.
#[inline(always)]
pub(crate) fn take<const K: usize>() -> Option<[u8; K]> {
    let slot = SLOT.with(Cell::get);
    // SAFETY: `slot` is `CLOSED` or this thread's live state, whose first field is
    // its `Header` (`repr(C)`); both are valid for reads while this thread runs,
    // and nothing else writes them during this call.
    let left = unsafe { (*slot).left };
    let x = last_k::<K>(left)?;
    // SAFETY: `left >= K >= 1`, so `slot` is not `CLOSED`: it is this thread's live
    // `State`, used by this thread only (the handle is `!Send`; signal handlers
    // are excluded in the docs), with no other reference to it live.
    let state = unsafe { &mut *slot.cast::<State>() };
    let src = &mut state.buf[x..x + K];
    let mut out = [0u8; K];
    out.copy_from_slice(src);
    src.fill(0);
    state.header.left = x;
    Some(out)
}

/// The hot path of a fill: serves `dst` from the end of this thread's unread
/// bytes, wiping what it serves, if the fast path is open and the buffer holds
/// all of it; false otherwise (then call [`fill_slow`]). The fork check is as in
/// [`take`]; an empty `dst` with the gate closed or the buffer empty goes to the
/// slow path too (which seeds, or reseeds after a fork).
#[inline(always)]
pub(crate) fn take_into(dst: &mut [u8]) -> bool {
    let slot = SLOT.with(Cell::get);
    // SAFETY: as in `take`: `CLOSED` or this thread's live state.
    let left = unsafe { (*slot).left };
    if left == 0 {
        return false;
    }
    // SAFETY: as in `take`: `left >= 1`, so a live state of this thread, with no
    // other reference to it live.
    let state = unsafe { &mut *slot.cast::<State>() };
    // `x <= left` iff `dst.len() <= left` (else `x` wraps); `get_mut` checks that
    // and `left <= BUFFER_BYTES`.
    let x = left.wrapping_sub(dst.len());
    let Some(src) = state.buf.get_mut(x..left) else {
        return false;
    };
    state.header.left = x;
    // Last, so that a long copy is a tail call: nothing is live after it.
    move_out(dst, src);
    true
}

/// The slow path: creates the state, or detects a fork and reseeds, or reseeds
/// because `force` asks, then fills `dst` (any length; the budget's scheduled
/// reseeds happen inside). Where there is no usable state (during or after
/// thread-local destruction, or no memory), `dst` is filled by a generator
/// freshly seeded from the OS and dropped (zeroized) after.
///
/// # Errors
/// The OS error when seeding is required (first use, after a fork, `force`, or the
/// OS fallback) and the OS generator fails.
#[cold]
#[inline(never)]
pub(crate) fn fill_slow(dst: &mut [u8], force: bool) -> Result<(), OsError> {
    let mut state = match STATE.try_with(Cell::get) {
        Ok(state) if state != destroyed() => state,
        _ => return Generator::fill_fresh(dst),
    };
    if state.is_null() {
        match create_state() {
            Some(Ok(created)) => state = created,
            Some(Err(err)) => return Err(err),
            None => return Generator::fill_fresh(dst),
        }
    }
    // SAFETY: neither null nor destroyed: this thread's live state, used by this
    // thread only, with no other reference to it live (see `take`).
    let state = unsafe { &mut *state };
    let result = state.check(force);
    if result.is_ok() {
        state.fill(dst);
    }
    // Open or close the gate for the calls that follow.
    let gate = if state.fast && result.is_ok() {
        ptr::from_mut(&mut state.header)
    } else {
        closed()
    };
    let _ = SLOT.try_with(|slot| slot.set(gate));
    result
}

/// The `pthread_atfork` child handler's second job: closes the fast path of the
/// thread that forked (the child's only thread) and wipes its buffer, so that no
/// byte the parent may also serve stays in the child, wiped pages or not. Found
/// through [`STATE`], not the gate: the [`Protection::PidCheck`] fallback keeps
/// the gate closed while the buffer holds output.
#[cfg(unix)]
fn close_in_child() {
    let Ok(state) = STATE.try_with(Cell::get) else {
        return;
    };
    if !state.is_null() && state != destroyed() {
        // SAFETY: neither null nor destroyed: this thread's live state. The
        // handler runs in the child's only thread, inside `fork()`, which our
        // code never calls while it holds a reference to the state.
        unsafe { (*state).discard_buffer() };
    }
}

/// Where this thread's state lives and what the kernel was told about it (the
/// `hazmat` report; see `hazmat::ThreadStatePages`): the address and length of
/// its allocation, whether it is wiped in a forked child, whether the advice to
/// keep it out of core dumps was accepted. Creates the state if needed; `None`
/// when it cannot exist (thread-local destruction, no memory, OS seeding failed).
#[cfg(feature = "hazmat")]
pub(crate) fn this_thread_state() -> Option<(usize, usize, bool, bool)> {
    fill_slow(&mut [], false).ok()?;
    let state = STATE.try_with(Cell::get).ok()?;
    if state.is_null() || state == destroyed() {
        return None;
    }
    // SAFETY: neither null nor destroyed: this thread's live state (see
    // `fill_slow`); only two plain fields are read, with no reference to the state
    // live elsewhere.
    let (wipes, no_dump) = unsafe { ((*state).wipes, (*state).no_dump) };
    Some((state as usize, state_bytes(), wipes, no_dump))
}

/// Bench only (`RATCHET_RNG_BENCH=1`): [`take`]'s buffered read on a buffer that
/// lives in a plain thread-local instead of its own wipe-on-fork page, and that
/// no fork handler closes: the same hot path without fork protection, for
/// `benches/thread_rng.rs` to show what the protection costs. Refilled from the
/// real (fork-safe) generator. Not fork-safe itself; not part of the API.
#[cfg(ratchet_rng_bench)]
#[inline(always)]
pub(crate) fn bench_u64_without_fork_protection() -> u64 {
    use core::cell::UnsafeCell;
    struct Unprotected {
        left: usize,
        buf: [u8; BUFFER_BYTES],
    }
    thread_local! {
        static UNPROTECTED: UnsafeCell<Unprotected> =
            const { UnsafeCell::new(Unprotected { left: 0, buf: [0; BUFFER_BYTES] }) };
    }
    let cell = UNPROTECTED.with(UnsafeCell::get);
    // SAFETY: this thread's own thread-local, no other reference to it live (the
    // refill below calls into the real generator, which never touches it).
    let local = unsafe { &mut *cell };
    let x = match last_k::<8>(local.left) {
        Some(x) => x,
        None => {
            if fill_slow(&mut local.buf, false).is_err() {
                return 0;
            }
            BUFFER_BYTES - 8
        }
    };
    let src = &mut local.buf[x..x + 8];
    let mut out = [0u8; 8];
    out.copy_from_slice(src);
    src.fill(0);
    local.left = x;
    u64::from_le_bytes(out)
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
    fn closed_gate_never_takes_the_fast_path() {
        assert_eq!(CLOSED.left, 0);
        assert_eq!(last_k::<1>(0), None);
        assert_eq!(last_k::<8>(0), None);
        assert_ne!(closed().cast::<State>(), destroyed());
    }

    #[test]
    fn last_k_accepts_exactly_the_held_bytes() {
        assert_eq!(last_k::<8>(8), Some(0));
        assert_eq!(last_k::<8>(7), None);
        assert_eq!(last_k::<4>(BUFFER_BYTES), Some(BUFFER_BYTES - 4));
        assert_eq!(last_k::<BUFFER_BYTES>(BUFFER_BYTES), Some(0));
        assert_eq!(last_k::<1>(BUFFER_BYTES + 1), None);
        assert_eq!(last_k::<8>(usize::MAX), None);
    }
}
