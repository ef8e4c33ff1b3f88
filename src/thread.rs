//! The fork-safe thread-local generator: [`rng()`] / [`thread_rng()`] handles and the
//! free functions [`fill`], [`try_fill`], [`u32()`] and [`u64()`].
//!
//! The state's storage and fork detection are in `fork.rs` (all the `unsafe` is
//! there); this module chooses the generator and holds the public API.

use core::convert::Infallible;
use core::fmt;
use core::marker::PhantomData;

use rand_core::{Rng, SeedableRng, TryCryptoRng, TryRng};

use zeroize::Zeroize;

use crate::aes::POOL_OUTPUT_BYTES;
use crate::backend::{AesBackend, ChaChaBackend};
use crate::chacha::KEY_PERIOD_OUTPUT_BYTES;
use crate::fork;
use crate::rngs::aes_ctr_pool::AesPoolCore;
use crate::rngs::buffer::BlockCore;
use crate::rngs::chacha_key_erasure::ChaChaCore;
use crate::{AesCtrPoolRng, ChaChaKeyErasureRng, OsError};

/// Output bytes after which the thread-local generator reseeds itself from the
/// operating system: 1 MiB.
///
/// Why 1 MiB: both generators already erase their key at every refill, so a state
/// captured later reveals no earlier output without any reseed; reseeding adds
/// *recovery*, bounding how much future output a captured state predicts. 1 MiB
/// keeps that window under a millisecond of bulk output, while a reseed (one
/// `getrandom` call for 32 bytes plus a key setup, a few microseconds) stays at
/// about 1 % of the time to produce 1 MiB even at several GB/s (AES hardware), and
/// far less on the portable backends. `rand`'s `ThreadRng` reseeds every 64 KiB;
/// its ChaCha12 block generator does not erase its key, ours do, so a longer period
/// costs no backtracking resistance.
///
/// The budget is charged when the generator *produces* output (a refill of the
/// thread's buffer, or whole refills generated straight into a large request), so
/// no seed ever produces more than `RESEED_BYTES`; a request larger than that is
/// served in pieces, reseeding between them.
pub const RESEED_BYTES: usize = 1 << 20;

/// Generator refills (AES pools) per refill of the thread state's buffer.
const REFILLS_PER_BUFFER: usize = 2;

/// The thread state's output buffer: [`REFILLS_PER_BUFFER`] AES pools' output
/// (4064 bytes each), which also holds 8 ChaCha key periods (992 bytes each).
/// One refill call for two pools lets the AES kernel overlap the second pool's
/// key expansion with the first pool's blocks; more pools measured no faster
/// (`next_u64`: 2, 4 and 8 pools within the noise) and cost a page each.
pub(crate) const BUFFER_BYTES: usize = REFILLS_PER_BUFFER * POOL_OUTPUT_BYTES;

const _: () = assert!(BUFFER_BYTES >= KEY_PERIOD_OUTPUT_BYTES && RESEED_BYTES >= BUFFER_BYTES);

/// The generator inside the thread-local state: the core of the fastest secure
/// generator for this CPU, [`AesCtrPoolRng`]'s or [`ChaChaKeyErasureRng`]'s. The
/// thread state does its own buffering, so it holds the bare core: it asks only
/// for whole refills, which the core writes straight into the state's buffer or
/// the caller's memory.
pub(crate) enum Generator {
    /// With AES hardware: `AesCtrPoolRng`'s core.
    Aes(AesPoolCore),
    /// Otherwise (the portable AES is slower than the portable ChaCha):
    /// `ChaChaKeyErasureRng`'s core.
    ChaCha(ChaChaCore<8>),
}

impl Generator {
    /// A generator seeded by the operating system.
    pub(crate) fn from_os() -> Result<Self, OsError> {
        let mut seed = [0u8; 32];
        let result = crate::error::os_fill(&mut seed).map(|()| {
            if AesBackend::detect().has_hardware() {
                Self::Aes(AesPoolCore::new(&seed))
            } else {
                Self::ChaCha(ChaChaCore::new(&seed, ChaChaBackend::detect()))
            }
        });
        seed.zeroize();
        result
    }

    /// The generator's refill: [`generate`](Self::generate) takes multiples of it.
    pub(crate) fn refill_bytes(&self) -> usize {
        match self {
            Self::Aes(_) => POOL_OUTPUT_BYTES,
            Self::ChaCha(_) => KEY_PERIOD_OUTPUT_BYTES,
        }
    }

    /// Writes the next `out.len()` bytes of the stream to `out`.
    ///
    /// # Panics
    /// If `out.len()` is not a multiple of [`refill_bytes`](Self::refill_bytes)
    /// (an internal invariant of the thread state: better a panic than a
    /// partly unwritten buffer).
    pub(crate) fn generate(&mut self, out: &mut [u8]) {
        fn whole<const N: usize>(out: &mut [u8]) -> &mut [[u8; N]] {
            let (refills, rest) = out.as_chunks_mut::<N>();
            assert!(rest.is_empty(), "ratchet-rng: partial thread-local refill");
            refills
        }
        match self {
            Self::Aes(core) => core.generate_many(whole(out)),
            Self::ChaCha(core) => core.generate_many(whole(out)),
        }
    }

    /// Fills `dst` (any length) from a generator seeded from the OS for this call
    /// only, and dropped (zeroized) after.
    pub(crate) fn fill_fresh(dst: &mut [u8]) -> Result<(), OsError> {
        if AesBackend::detect().has_hardware() {
            AesCtrPoolRng::try_from_rng(&mut crate::error::OsRng)?.fill_bytes(dst);
        } else {
            ChaChaKeyErasureRng::try_from_rng(&mut crate::error::OsRng)?.fill_bytes(dst);
        }
        Ok(())
    }
}

/// The result of an infallible entry point.
#[track_caller]
fn seeded<T>(result: Result<T, OsError>) -> T {
    match result {
        Ok(value) => value,
        Err(err) => panic!("ratchet-rng: cannot seed the thread-local generator: {err}"),
    }
}

/// The next `K` bytes: from the buffer on the fast path, else through
/// [`fork::fill_slow`].
#[inline(always)]
fn next_array<const K: usize>() -> [u8; K] {
    match fork::take::<K>() {
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
/// else through [`fork::fill_slow`] (first use, a fork, an empty buffer, a
/// request larger than what is buffered).
#[inline]
fn try_fill_impl(dst: &mut [u8]) -> Result<(), OsError> {
    if fork::take_into(dst) {
        Ok(())
    } else {
        fork::fill_slow(dst, false)
    }
}

/// [`try_fill_impl`] for the infallible entry points. The slow path and its
/// panic live in [`fill_slow_or_panic`], out of line, so that the fast path
/// inlined at the caller needs no saved registers.
#[inline]
fn fill_impl(dst: &mut [u8]) {
    if !fork::take_into(dst) {
        fill_slow_or_panic(dst);
    }
}

#[cold]
#[inline(never)]
fn fill_slow_or_panic(dst: &mut [u8]) {
    seeded(fork::fill_slow(dst, false));
}

/// Bench only (built with `RATCHET_RNG_BENCH=1`): [`u64()`]'s buffered read from a
/// buffer in a plain thread-local, with no fork protection at all, so that
/// `benches/thread_rng.rs` can show what the protection costs. Not fork-safe;
/// not part of the API.
#[cfg(ratchet_rng_bench)]
#[doc(hidden)]
#[inline]
#[must_use]
pub fn __bench_u64_without_fork_check() -> u64 {
    fork::bench_u64_without_fork_protection()
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
/// [`AesCtrPoolRng`] where the CPU has AES instructions, [`ChaChaKeyErasureRng`]
/// otherwise; both erase their key at every refill and wipe served bytes from
/// their buffer (backtracking resistance). It is seeded from the operating system
/// (`getrandom`) on first use in each thread, and reseeded after every
/// [`RESEED_BYTES`] (1 MiB) of output, after a fork, and on [`reseed`](Self::reseed).
/// Its stream is not reproducible (use a seeded generator for that).
///
/// # Forks and threads
/// **Threads.** Each thread has its own generator, seeded independently; the
/// handle is `!Send` and `!Sync`, so one thread's handle cannot reach another's
/// generator. Several handles on one thread share that thread's generator.
///
/// **Forks.** On every call, before any output is produced, the handle checks
/// that the process has not forked since the generator was seeded; a forked
/// child reseeds from the OS before its first output, so parent and child never
/// share output, including bytes that were already buffered before the fork.
/// The check is the count of buffered bytes that every call reads anyway: each
/// layer below sets it to zero in a child, which sends the child's first call to
/// the slow path, where the reseed happens:
/// - Linux and Android (kernel 4.14+): the state lives in its own pages marked
///   `MADV_WIPEONFORK` (and `MADV_DONTDUMP`), which a forked child receives
///   zeroed. This catches every child with its own copy of memory, also those made
///   by a raw `fork` / `clone` system call that bypasses libc. Because emulators
///   (qemu-user) accept this advice without honouring it, the first use in a
///   process checks that it works by forking a short-lived child once, which
///   reads one byte and exits.
/// - FreeBSD and OpenBSD: the same with `minherit(INHERIT_ZERO)`.
/// - Every unix: a `pthread_atfork` child handler (the second layer) wipes the
///   forking thread's buffer, zeroes its count and moves a fork epoch, which the
///   slow path compares with the one at seeding.
/// - Where a wipe mechanism should exist but the probe shows it does not work
///   (old kernels, emulators) every call compares `getpid()`: slower (a system call
///   per call), never a repeat. On other unix systems (macOS, NetBSD, ...) a child
///   is detected through `pthread_atfork`, i.e. if it was made by libc's `fork()`
///   (a raw system call is not covered there).
///
/// What is **not** covered:
/// - `vfork()` and `clone(CLONE_VM)` children share the parent's memory; they
///   may only call `exec` or `_exit` anyway, and must not use the generator.
/// - The handle is not async-signal-safe: do not use it in a signal handler (an
///   interrupted call on the same thread would be re-entered).
/// - A snapshot or clone of a whole process or virtual machine (CRIU, VM
///   snapshots) is not a fork and is not detected.
/// - Generators you own (`ChaChaKeyErasureRng::from_os_rng()`, ...) are not
///   protected: a copy in a child continues the same stream.
///
/// **Thread exit.** The state is zeroized and unmapped when the thread exits. Used
/// later in the thread's teardown (from another thread-local's destructor) the
/// handle still works: each call then draws a generator freshly seeded from the OS
/// (slower, never a repeat).
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
/// `Debug` prints `ThreadRng { .. }` only. The handle is `!Send`: it cannot be
/// moved to another thread:
///
/// ```compile_fail
/// fn send<T: Send>(_: T) {}
/// send(ratchet_rng::rng());
/// ```
///
/// ```compile_fail
/// fn sync<T: Sync>(_: T) {}
/// sync(ratchet_rng::rng());
/// ```
#[derive(Clone, Default)]
pub struct ThreadRng {
    /// Makes the handle `!Send` and `!Sync`.
    _not_send: PhantomData<*const ()>,
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
        fork::fill_slow(&mut [], true)
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
/// destruction); `dst` is then left partly or wholly unchanged and must not be
/// used. A failed *scheduled* reseed is not an error (see [`ThreadRng`]). Never
/// panics.
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::format;

    #[test]
    fn debug_shows_no_state() {
        assert_eq!(format!("{:?}", rng()), "ThreadRng { .. }");
    }

    #[test]
    fn reseed_changes_the_stream_and_budget_reseeds() {
        let mut rng = rng();
        let a = rng.next_u64();
        rng.reseed().unwrap();
        assert_ne!(a, rng.next_u64());
        // Spend more than a budget through every path.
        let mut big = std::vec![0u8; RESEED_BYTES + 12_345];
        fill(&mut big);
        for _ in 0..(RESEED_BYTES / 8 + 10) {
            let _ = u64();
        }
        assert_ne!(u32(), u32());
    }
}
