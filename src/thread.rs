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

/// An injection point: with `cfg(ratchet_rng_inspect)`, calls the test's hook
/// (`__inspect::set_injection_hook`) with `Point::$point`, so that a signal
/// handler lands exactly here. Each point's comment says what it may do there.
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

/// The next `K` bytes: from the buffer, else from the slow path, which fills an
/// array of its own so that this one stays in registers.
#[inline(always)]
fn next_array<const K: usize>() -> [u8; K] {
    let mut bytes = [0u8; K];
    if storage::take(&mut bytes) {
        bytes
    } else {
        next_array_slow()
    }
}

/// [`next_array`]'s slow path, out of line (see [`fill_slow_or_panic`]).
#[cold]
#[inline(never)]
fn next_array_slow<const K: usize>() -> [u8; K] {
    let mut bytes = [0u8; K];
    fill_slow_or_panic(&mut bytes);
    bytes
}

/// The infallible entry points' slow path and panic, out of line so that the
/// fast path (`storage::take`) inlined at the caller needs no saved registers.
#[cold]
#[inline(never)]
fn fill_slow_or_panic(dst: &mut [u8]) {
    if let Err(err) = storage::fill_slow(dst, false) {
        panic!(
            "ratchet-rng: cannot seed the thread-local generator: {}",
            err.with_cause()
        );
    }
}

/// A handle to this thread's generator: fast, cryptographically secure, seeded
/// from the operating system, and safe across `fork()`.
///
/// Get one with [`rng()`] (or [`thread_rng()`], or the `const fn`
/// [`ThreadRng::new`], for a `static`); it is a zero-sized token, so getting one
/// is free and keeping one is not needed. It implements the [`rand_core`] 0.10
/// traits (`TryRng<Error = Infallible>`, `TryCryptoRng`, hence `Rng` and
/// `CryptoRng`), and so does `&ThreadRng` (see "Forks and threads"), so it works
/// with `rand` 0.10:
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
/// [`ChaChaKeyErasureRng`](crate::ChaChaKeyErasureRng) otherwise; both erase
/// their key at every refill and wipe served bytes from their buffer. It is
/// seeded from the operating system on first use in each thread, and reseeded
/// after every [`RESEED_BYTES`] of output, after a fork, after a VM snapshot
/// restore or [`reseed_all_threads`], and on [`reseed`](Self::reseed). Its
/// stream is not reproducible (use a seeded generator for that).
///
/// # Forks and threads
/// The full statement is in [`guide::security`](crate::guide::security) ("The
/// thread-local generator"); in short:
///
/// **Threads.** Each thread has its own generator, seeded independently. The
/// handle holds no state, so no key or buffer crosses threads: every call is
/// served by the generator of the thread that makes it. A handle (`Send`,
/// `Sync`, `Clone`, `Default`) can therefore sit wherever `Send + Sync` is
/// required, and it draws through a shared reference, as `&File` reads: the
/// traits are implemented for `&ThreadRng` too, with the same behaviour. So a
/// handle can be a `static` ([`ThreadRng::new`] is a `const fn`), drawn from
/// on any thread:
///
/// ```
/// # if cfg!(all(target_family = "wasm", not(target_feature = "atomics"))) { return; } // no threads there
/// use rand::RngExt;
/// use ratchet_rng::ThreadRng;
///
/// static RNG: ThreadRng = ThreadRng::new();
///
/// let mut rng = &RNG;
/// let here: u64 = rng.random();
/// // Served by the spawned thread's own generator, seeded there.
/// let there: u64 = std::thread::spawn(|| (&RNG).random()).join().unwrap();
/// assert_ne!(here, there);
/// ```
///
/// or a field of a struct shared through an `Arc` by workers, drawn through `&`
/// (no `&mut`, no lock, no clone):
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
///         // `&ThreadRng` is a generator: it serves the calling thread.
///         (&self.rng).random()
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
/// **Forks.** Parent and child never serve the same byte, including bytes
/// buffered before the fork: every call reads the count of buffered bytes, which
/// a child finds zero (the kernel wipes the state's pages where it can; a
/// `pthread_atfork` handler and a `getpid()` check are the other layers), so
/// its first call reseeds from the OS. No call starts a process, so a process
/// that forbids `fork`, ignores `SIGCHLD` or reaps every child keeps working.
///
/// **Signals and reentrancy.** A call that finds the thread's state in use (a
/// signal handler, a custom `getrandom` backend, a global allocator, a
/// thread-local destructor) is served by the operating system, so nothing is
/// served twice or as zeros, and a fork from a signal handler in the middle of
/// a call is caught. On Linux and Android the free functions and the handle's
/// methods are async-signal-safe **once the thread has used its generator**: a
/// thread's first use allocates, and must not happen in a signal handler.
///
/// **Not covered:** `vfork()` and `clone(CLONE_VM)` children (they must not use
/// the generator); generators you own (a copy in a child continues the same
/// stream); a process or VM snapshot where no restore is detected: call
/// [`reseed_all_threads`] after a restore ([`backends()`](crate::backends) says
/// what this process watches).
///
/// **Thread exit.** The state is zeroized when the thread exits; later calls
/// (from another thread-local's destructor) are served by the OS.
///
/// # Panics
/// The infallible methods (`next_u32`, `next_u64`, `fill_bytes` and everything
/// `rand` builds on them; the `try_` methods, whose error type is `Infallible`;
/// [`fill`], [`u32()`], [`u64()`]) panic if the operating system's generator
/// fails when a seed is needed (first use in a thread, after a fork, after
/// thread-local destruction), with the message `ratchet-rng: cannot seed the
/// thread-local generator: the operating system's random number generator
/// failed: <the OsError>`; [`try_fill`] returns the error instead. After such a
/// failure nothing is served and the next call tries to seed again. Nothing
/// else panics: requests of any length are served (over [`RESEED_BYTES`] in
/// pieces, reseeding between them).
///
/// A failed *scheduled* reseed neither panics nor makes [`try_fill`] fail: the
/// current key, still erased at each refill, stays in use and the reseed is
/// retried after another [`RESEED_BYTES`]. A forced reseed
/// ([`reseed`](Self::reseed)) reports the error instead.
#[derive(Clone, Default)]
pub struct ThreadRng {
    /// Keeps the handle from being built outside the crate; it holds nothing.
    _private: (),
}

impl ThreadRng {
    /// A handle to the calling thread's generator, as [`rng()`] gives; a `const
    /// fn`, so a handle can be a `static`, drawn from through `&` on any thread:
    ///
    /// ```
    /// use rand::RngExt;
    /// use ratchet_rng::ThreadRng;
    ///
    /// static RNG: ThreadRng = ThreadRng::new();
    ///
    /// let mut rng = &RNG;
    /// let roll = rng.random_range(1..=6);
    /// assert!((1..=6).contains(&roll));
    /// ```
    #[inline]
    #[must_use]
    pub const fn new() -> Self {
        Self { _private: () }
    }

    /// Reseeds this thread's generator from the operating system now, discarding
    /// buffered output.
    ///
    /// Called reentrantly (a signal handler, a custom `getrandom` backend or a
    /// global allocator inside a call of this thread's generator), it returns
    /// `Ok(())` at once, and the interrupted call reseeds before it returns
    /// (keeping the current key if the operating system fails then, as after a
    /// failed scheduled reseed). In this thread's thread-local destruction it
    /// does nothing: every call is served by the OS then.
    ///
    /// # Errors
    /// [`OsError`] if the operating system's generator fails; the generator then
    /// goes on serving its current state, unless a seed is required anyway
    /// (first use in the thread, after a fork: nothing is served until then).
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

/// rand_core 0.10 (no feature needed): for rand 0.10. `Rng` and `CryptoRng`
/// follow.
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
        fill(dst);
        Ok(())
    }
}

/// rand_core 0.10 (no feature needed): for rand 0.10.
impl TryCryptoRng for ThreadRng {}

/// rand_core 0.10 (no feature needed): for rand 0.10. Through a shared
/// reference, the same as `ThreadRng`'s (the calling thread's generator), so a
/// `static` or a field behind an `Arc` draws without `&mut`.
impl TryRng for &ThreadRng {
    type Error = Infallible;

    #[inline]
    fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
        TryRng::try_next_u32(&mut ThreadRng::new())
    }

    #[inline]
    fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
        TryRng::try_next_u64(&mut ThreadRng::new())
    }

    #[inline]
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
        TryRng::try_fill_bytes(&mut ThreadRng::new(), dst)
    }
}

/// rand_core 0.10 (no feature needed): for rand 0.10. Through a shared
/// reference, as `ThreadRng`'s.
impl TryCryptoRng for &ThreadRng {}

/// Makes every thread's generator throw away what it has buffered and reseed
/// before it serves anything more: call it after a restore from a snapshot.
///
/// A restored snapshot (of a virtual machine or of a process) holds every
/// thread's key and buffered output as they were when it was taken, so two
/// restores would serve the same bytes. Call this in an after-restore hook (a
/// Lambda SnapStart runtime hook, a CRIU restore script, a VMM's guest agent)
/// before the program draws again, or whenever the process's memory may have
/// been seen or copied. Which restores are seen without it:
/// [`guide::security`](crate::guide::security), "VM snapshots".
///
/// **Async-signal-safe**: one atomic add, on any thread; it never fails nor
/// blocks. Every thread reseeds at its next call, threads blocked when it was
/// called included. A call it interrupted (from a signal handler) serves
/// nothing it took before, unless that call had already passed its last check
/// (its value was then already drawn).
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
    ThreadRng::new()
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
/// `fill` takes bytes only (as `getrandom::fill` does). For a slice or array
/// of any integer type, call `rand` 0.10's `RngExt::fill` on [`rng()`]: it
/// reads the generator's bytes as little-endian words, so a seeded generator
/// gives the same words on every platform. Single values: [`u32()`],
/// [`u64()`], or `rng().random::<T>()`.
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
/// // The halves are the generator's next 6 bytes, read little-endian:
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
/// If the operating system's generator fails when a seed is needed (see
/// [`ThreadRng`]); [`try_fill`] returns the error instead.
#[inline]
pub fn fill(dst: &mut [u8]) {
    if !storage::take(dst) {
        fill_slow_or_panic(dst);
    }
}

/// Fills `dst` from this thread's generator, or returns the operating system's
/// error if a seeding it needed failed.
///
/// # Errors
/// [`OsError`] when the operating system's generator fails while a seed is
/// *required* (first use in this thread, after a fork, after thread-local
/// destruction); `dst` is then all zeros and must not be used. A failed
/// *scheduled* reseed is not an error (see [`ThreadRng`]). Never panics.
#[inline]
pub fn try_fill(dst: &mut [u8]) -> Result<(), OsError> {
    if storage::take(dst) {
        Ok(())
    } else {
        storage::fill_slow(dst, false)
    }
}

/// A random `u32` from this thread's generator.
///
/// # Panics
/// If the operating system's generator fails when a seed is needed (see
/// [`ThreadRng`]).
#[inline]
#[must_use]
pub fn u32() -> u32 {
    u32::from_le_bytes(next_array())
}

/// A random `u64` from this thread's generator.
///
/// # Panics
/// If the operating system's generator fails when a seed is needed (see
/// [`ThreadRng`]).
#[inline]
#[must_use]
pub fn u64() -> u64 {
    u64::from_le_bytes(next_array())
}
