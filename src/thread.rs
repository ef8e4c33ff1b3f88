//! The fork-safe thread-local generator: [`rng()`] / [`thread_rng()`] handles and the
//! free functions [`fill`], [`try_fill`], [`u32()`] and [`u64()`].
//!
//! Imports point one way, down this list:
//! - this file: the public API;
//! - `thread/storage.rs`: the thread-local slot, the state's page and its
//!   lifetime, the hot path, the in-use mark (the `unsafe`, fenced);
//! - `thread/state.rs`: the per-thread state and the reseed policy (safe code);
//! - `thread/generator.rs`: the generator, seeded in place (safe code);
//! - `thread/fork.rs` and `thread/fork/`: fork detection, one file per OS
//!   mechanism; `thread/pages.rs`: the slabs the states live in.

/// An injection point: with `cfg(ratchet_rng_inspect)`, calls the hook a test
/// registered (`__inspect::set_injection_hook`) with `Point::$point`, so that a
/// test can make a signal handler land exactly here; compiled out otherwise.
/// The points sit where a handler or a fork could land between two steps that
/// matter; each one's comment says what a handler may do there.
macro_rules! inject {
    ($point:ident) => {
        #[cfg(ratchet_rng_inspect)]
        crate::__inspect::inject(crate::__inspect::Point::$point);
    };
}

pub(crate) mod fork;
pub(crate) mod generation;
pub(crate) mod generator;
pub(crate) mod pages;
mod state;
pub(crate) mod storage;

use core::convert::Infallible;
use core::fmt;

use rand_core::{TryCryptoRng, TryRng};

use crate::error::OsError;
pub use state::RESEED_BYTES;

/// The result of an infallible entry point.
#[track_caller]
fn seeded<T>(result: Result<T, OsError>) -> T {
    match result {
        Ok(value) => value,
        Err(err) => panic!(
            "ratchet-rng: cannot seed the thread-local generator: {}",
            err.with_cause()
        ),
    }
}

/// The next `K` bytes: from the buffer on the fast path, else through
/// [`storage::fill_slow`].
#[inline(always)]
fn next_array<const K: usize>() -> [u8; K] {
    match storage::take::<K>() {
        Some(bytes) => bytes,
        None => next_array_slow(),
    }
}

/// [`next_array`]'s slow path, out of line (see [`fill_impl`]).
#[cold]
#[inline(never)]
fn next_array_slow<const K: usize>() -> [u8; K] {
    let mut bytes = [0u8; K];
    fill_slow_or_panic(&mut bytes);
    bytes
}

/// Fills `dst`: from the buffer on the fast path (the whole request buffered),
/// else through [`storage::fill_slow`] (first use, a fork, an empty buffer, a
/// request larger than what is buffered).
#[inline]
fn try_fill_impl(dst: &mut [u8]) -> Result<(), OsError> {
    if storage::take_into(dst) {
        Ok(())
    } else {
        storage::fill_slow(dst, false)
    }
}

/// [`try_fill_impl`] for the infallible entry points. The slow path and its
/// panic live in [`fill_slow_or_panic`], out of line, so that the fast path
/// inlined at the caller needs no saved registers.
#[inline]
fn fill_impl(dst: &mut [u8]) {
    if !storage::take_into(dst) {
        fill_slow_or_panic(dst);
    }
}

#[cold]
#[inline(never)]
fn fill_slow_or_panic(dst: &mut [u8]) {
    seeded(storage::fill_slow(dst, false));
}

/// A handle to this thread's generator: fast, cryptographically secure, seeded
/// from the operating system, and safe across `fork()`.
///
/// Get one with [`rng()`] (or [`thread_rng()`]); it is a zero-sized token, so
/// getting one is free and keeping one is not needed. It implements the
/// [`rand_core`] 0.10 traits (`TryRng<Error = Infallible>`, `TryCryptoRng`, hence
/// `Rng` and `CryptoRng`), so it works with `rand` 0.10:
///
/// ```
/// use rand::RngExt;
///
/// let roll = ratchet_rng::rng().random_range(1..=6);
/// assert!((1..=6).contains(&roll));
/// ```
///
/// # The generator
/// [`AesCtrPoolRng`](crate::AesCtrPoolRng) where the CPU has AES instructions,
/// [`ChaChaKeyErasureRng`](crate::ChaChaKeyErasureRng)
/// otherwise; both erase their key at every refill and wipe served bytes from
/// their buffer (backtracking resistance). It is seeded from the operating system
/// (`getrandom`) on first use in each thread, and reseeded after every
/// [`RESEED_BYTES`] (1 MiB) of output, after a fork, after a VM snapshot restore
/// or [`reseed_all_threads`], and on [`reseed`](Self::reseed).
/// Its stream is not reproducible (use a seeded generator for that).
///
/// # Forks and threads
/// The full statement, with the threat model, is in
/// [`guide::security`](crate::guide::security) ("The thread-local generator");
/// in short:
///
/// **Threads.** Each thread has its own generator, seeded independently. The
/// handle holds no state: it is zero-sized, `Send`, `Sync`, `Clone` and
/// `Default`, and every call is served by the generator of the thread that makes
/// it. A handle moved to another thread serves that thread's generator there;
/// several handles on one thread share that thread's generator. So a handle can
/// sit wherever `Send + Sync` is required, such as a field of a struct shared
/// through an `Arc` by worker threads:
///
/// ```
/// # if cfg!(all(target_family = "wasm", not(target_feature = "atomics"))) { return; } // no threads there
/// use std::sync::Arc;
/// use rand::RngExt;
///
/// // Shared by every worker: `Arc<T>` is `Send` only if `T` is `Send + Sync`.
/// struct TokenIssuer {
///     rng: ratchet_rng::ThreadRng,
/// }
///
/// impl TokenIssuer {
///     fn token(&self) -> [u8; 16] {
///         // A clone is free (zero-sized) and serves the calling thread.
///         self.rng.clone().random()
///     }
/// }
///
/// let issuer = Arc::new(TokenIssuer { rng: ratchet_rng::rng() });
/// let workers: Vec<_> = (0..4)
///     .map(|_| {
///         let issuer = Arc::clone(&issuer);
///         std::thread::spawn(move || issuer.token())
///     })
///     .collect();
/// let tokens: Vec<[u8; 16]> = workers.into_iter().map(|w| w.join().unwrap()).collect();
/// for (i, token) in tokens.iter().enumerate() {
///     assert!(tokens[i + 1..].iter().all(|other| other != token));
/// }
/// ```
///
/// or a `static`, and a handle moved into a thread:
///
/// ```
/// # if cfg!(all(target_family = "wasm", not(target_feature = "atomics"))) { return; } // no threads there
/// use std::sync::LazyLock;
/// use rand::Rng;
///
/// // `LazyLock<T>` is `Sync` only if `T` is `Send + Sync`.
/// static RNG: LazyLock<ratchet_rng::ThreadRng> = LazyLock::new(ratchet_rng::rng);
///
/// let mut here = RNG.clone();
/// let mut moved = RNG.clone();
/// // Served by the spawned thread's own generator, seeded there.
/// let there = std::thread::spawn(move || moved.next_u64()).join().unwrap();
/// assert_ne!(here.next_u64(), there);
/// ```
///
/// **Forks.** Parent and child never serve the same byte, including bytes
/// buffered before the fork: every call reads the count of buffered bytes, which
/// a child finds zero, so its first call reseeds from the OS. On Linux and
/// Android (kernel 4.14+) the state lives in pages marked `MADV_WIPEONFORK`
/// (FreeBSD, OpenBSD: `minherit(INHERIT_ZERO)`), which a child receives zeroed
/// however it was made (also by a raw `fork` / `clone` system call); a
/// `pthread_atfork` handler (registered at the first buffer refill there) is a
/// second layer, and the only one on other unix
/// systems, where each buffer refill also compares `getpid()` (a child made by a
/// raw system call there is caught at its next refill). Where the wipe does not
/// work (emulators such as qemu-user, old kernels) every call compares
/// `getpid()`, and the `pthread_atfork` handler zeroes every thread's state in
/// the child. No call starts a process: the wipe is believed where the kernel
/// accepts it and refuses an unknown advice (as BoringSSL checks), so a
/// process that forbids `fork`, ignores `SIGCHLD` or reaps every child keeps
/// working at full speed.
///
/// **Signals and reentrancy.** Every call marks the thread's state in use; a
/// call that finds it in use (from a signal handler, a custom `getrandom`
/// backend, a global allocator, a thread-local destructor) is served by the
/// operating system, so nothing is served twice or as zeros, and a fork from a
/// signal handler in the middle of a call is caught. On Linux and Android the
/// free functions and the handle's methods are async-signal-safe **once the
/// thread has used its generator**: the first use on a thread maps its state and
/// registers its destructor (which allocates), and must not happen in a signal
/// handler.
///
/// What is **not** covered:
/// - `vfork()` and `clone(CLONE_VM)` children share the parent's memory; they
///   may only call `exec` or `_exit` anyway, and must not use the generator.
/// - Where only the process id tells a child apart (no working wipe, a raw
///   system call), a `clone` into a new PID namespace can have its parent's pid.
/// - A snapshot of a whole process or virtual machine (CRIU, VM snapshots) is
///   not a fork. It is detected where the guest has a VMClock device with a VM
///   generation counter (Linux), and a CRIU restore where no VMClock page is
///   watched and the kernel has droppable mappings (Linux 6.11+, 64-bit);
///   elsewhere, call [`reseed_all_threads`] after a restore (see
///   [`guide::security`](crate::guide::security), "VM snapshots";
///   [`backends()`](crate::backends) says what this process watches).
/// - Generators you own (`ChaChaKeyErasureRng::from_os_rng()`, ...) are not
///   protected: a copy in a child continues the same stream.
///
/// **Thread exit.** The state is zeroized when the thread exits, and its slot
/// (in a slab of 64 that is never unmapped) is kept for a new thread. Used
/// later in the thread's teardown (from another thread-local's destructor) the
/// handle still works: each call is then served by the OS (slower, never a
/// repeat).
///
/// # Panics
/// The infallible methods (`next_u32`, `next_u64`, `fill_bytes` and everything
/// `rand` builds on them; also `try_next_u32`, `try_next_u64` and
/// `try_fill_bytes`, whose error type is `Infallible`; and the free functions
/// [`fill`], [`u32()`], [`u64()`]) panic if the operating system's generator fails when a seed is needed (first
/// use in a thread, after a fork, after thread-local destruction), with the
/// message `ratchet-rng: cannot seed the thread-local generator: the operating
/// system's random number generator failed: <the OsError>`; use [`try_fill`] to
/// get the error instead. After such a failure nothing is served and the next
/// call tries to seed again. Nothing else panics: requests of any length are
/// served, 0 bytes (which still runs the fork check) and more than 4 GiB
/// included (in pieces of at most [`RESEED_BYTES`], reseeding between them).
///
/// A failed *scheduled* reseed (after [`RESEED_BYTES`]) neither panics nor makes
/// [`try_fill`] fail: the current key stays in use (the generator still erases it
/// at each refill, so earlier output stays protected; only the recovery from a
/// captured state is postponed) and the reseed is retried after another
/// [`RESEED_BYTES`]. A forced reseed ([`reseed`](Self::reseed)) reports the
/// error instead.
///
/// # Security
/// `Debug` prints `ThreadRng { .. }` only. The handle holds no state, so neither
/// sending it to another thread nor sharing it copies a key or a buffer: the
/// state stays in the thread that drew it (see "Threads" above).
#[derive(Clone, Default)]
pub struct ThreadRng {
    /// Keeps the handle from being built outside the crate; it holds nothing.
    _private: (),
}

impl ThreadRng {
    /// Reseeds this thread's generator from the operating system now (and discards
    /// buffered output).
    ///
    /// # Errors
    /// [`OsError`] if the operating system's generator fails; the generator then
    /// keeps its current state and goes on serving it (unless it must reseed
    /// anyway: on first use in the thread or after a fork nothing is served until
    /// a seed is obtained).
    pub fn reseed(&mut self) -> Result<(), OsError> {
        storage::fill_slow(&mut [], true)
    }
}

impl fmt::Debug for ThreadRng {
    /// Prints the type name only: the state is secret.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ThreadRng { .. }")
    }
}

impl TryRng for ThreadRng {
    type Error = Infallible;

    #[inline]
    fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
        Ok(u32::from_le_bytes(next_array()))
    }

    #[inline]
    fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
        Ok(u64::from_le_bytes(next_array()))
    }

    #[inline]
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
        fill_impl(dst);
        Ok(())
    }
}

impl TryCryptoRng for ThreadRng {}

/// Makes every thread's generator throw away what it has buffered and reseed
/// before it serves anything more: call it after a restore from a snapshot.
///
/// A restored snapshot (a virtual machine's: Firecracker, QEMU/KVM, Hyper-V,
/// AWS Lambda SnapStart; or a process's: CRIU) holds every thread's key and
/// buffered output as they were when it was taken; two restores of one
/// snapshot would serve the same bytes. Call this:
/// - in an after-restore hook (a Lambda SnapStart runtime hook, a CRIU restore
///   script, a VMM's guest agent), before the restored program draws again;
/// - whenever you suspect the process's memory was seen or copied.
///
/// Where the guest has a VMClock device with a VM generation counter
/// (`/dev/vmclock0`, Linux 6.13+), a restore is detected without this call,
/// and so is a CRIU restore where no VMClock page is watched and the kernel
/// has droppable mappings (Linux 6.11+); see
/// [`guide::security`](crate::guide::security), "VM snapshots", for what is
/// guaranteed with and without them.
///
/// It returns at once: each thread reseeds at its next call, on every thread,
/// including threads blocked when it was called. A call it interrupted (from a
/// signal handler) serves nothing it took before, unless the call had already
/// passed its last check (it then returns the value it drew before, as a value
/// the program already held would be). The reseed mixes the OS generator's
/// bytes with the CPU's random source (RDSEED/RDRAND, RNDR), the VMClock
/// fields and the clocks, so that two clones differ even if the guest kernel
/// has not reseeded yet.
///
/// **Async-signal-safe**: one atomic add; it may be called from a signal
/// handler, and on any thread. It never fails and never blocks.
///
/// ```
/// let before = ratchet_rng::u64();
/// ratchet_rng::reseed_all_threads();
/// let after = ratchet_rng::u64(); // from a fresh key
/// # let _ = (before, after);
/// ```
pub fn reseed_all_threads() {
    generation::bump();
}

/// A handle to this thread's fork-safe generator (see [`ThreadRng`]).
///
/// ```
/// use rand::{Rng, RngExt};
///
/// let mut rng = ratchet_rng::rng();
/// let x: f64 = rng.random();
/// assert!((0.0..1.0).contains(&x));
/// let mut key = [0u8; 32];
/// rng.fill_bytes(&mut key);
/// ```
#[inline]
#[must_use]
pub fn rng() -> ThreadRng {
    ThreadRng::default()
}

/// The same as [`rng()`], under the name `rand` 0.8 used.
#[inline]
#[must_use]
pub fn thread_rng() -> ThreadRng {
    rng()
}

/// Fills `dst` from this thread's generator.
///
/// ```
/// let mut key = [0u8; 32];
/// ratchet_rng::fill(&mut key);
/// assert_ne!(key, [0u8; 32]);
/// ```
///
/// An empty `dst` returns at once (after the fork check); any length is served.
///
/// # Other types
/// `fill` takes bytes only (as `getrandom::fill` does); `rand`'s `fill` takes a
/// slice or array of any integer type. To fill those from this generator, call
/// `rand` 0.10's `RngExt::fill` on the handle, [`rng()`]: it reads the
/// generator's bytes as little-endian words, so a seeded generator gives the
/// same words on every platform. Single values: [`u32()`], [`u64()`], or
/// `rng().random::<T>()`.
///
/// ```
/// use rand::RngExt;
/// use ratchet_rng::ChaChaKeyErasureRng;
/// use ratchet_rng::rand_core::{Rng, SeedableRng};
///
/// let mut words = [0u32; 4];
/// ratchet_rng::rng().fill(&mut words);
/// assert_ne!(words, [0; 4]);
///
/// // The words are the generator's next 16 bytes, read little-endian:
/// let mut seeded = ChaChaKeyErasureRng::seed_from_u64(7);
/// let mut twin = ChaChaKeyErasureRng::seed_from_u64(7);
/// let mut halves = [0u16; 3];
/// seeded.fill(&mut halves);
/// let mut bytes = [0u8; 6];
/// twin.fill_bytes(&mut bytes);
/// assert_eq!(halves[2], u16::from_le_bytes([bytes[4], bytes[5]]));
/// ```
///
/// # Panics
/// If the operating system's generator fails when a seed is needed, with the
/// message `ratchet-rng: cannot seed the thread-local generator: ...` (see
/// [`ThreadRng`]); [`try_fill`] returns the error instead.
#[inline]
pub fn fill(dst: &mut [u8]) {
    fill_impl(dst);
}

/// Fills `dst` from this thread's generator, or returns the operating system's
/// error if seeding was needed (first use in this thread, after a fork) and
/// failed.
///
/// # Errors
/// [`OsError`] when the operating system's generator fails while a seed is
/// *required* (first use in this thread, after a fork, after thread-local
/// destruction); `dst` is then all zeros (nothing served before the failure
/// is left in it) and must not be used. A failed *scheduled* reseed is not an
/// error (see [`ThreadRng`]). Never panics.
#[inline]
pub fn try_fill(dst: &mut [u8]) -> Result<(), OsError> {
    try_fill_impl(dst)
}

/// A random `u32` from this thread's generator.
///
/// # Panics
/// If the operating system's generator fails when a seed is needed, with the
/// message `ratchet-rng: cannot seed the thread-local generator: ...` (see
/// [`ThreadRng`]).
#[inline]
#[must_use]
pub fn u32() -> u32 {
    u32::from_le_bytes(next_array())
}

/// A random `u64` from this thread's generator.
///
/// # Panics
/// If the operating system's generator fails when a seed is needed, with the
/// message `ratchet-rng: cannot seed the thread-local generator: ...` (see
/// [`ThreadRng`]).
#[inline]
#[must_use]
pub fn u64() -> u64 {
    u64::from_le_bytes(next_array())
}
