//! The generator inside the thread-local state: the refill core of the fastest
//! secure generator for this CPU ([`AesCtrPoolRng`](crate::AesCtrPoolRng)'s with
//! AES hardware, [`ChaChaKeyErasureRng`](crate::ChaChaKeyErasureRng)'s
//! otherwise), held as its bare key so that it can be seeded **in place**: the
//! operating system writes the seed straight into the state (no generator is
//! built on the stack and moved in), and an all-zero state, which is what a
//! forked child's wiped page holds, is a valid (unseeded) value.
#![forbid(unsafe_code)]

use zeroize::Zeroize;

use super::generation;
use crate::aes::{self, POOL_OUTPUT_BYTES};
use crate::backend::{AesBackend, ChaChaBackend};
use crate::chacha::{self, KEY_PERIOD_OUTPUT_BYTES};
use crate::error::OsError;
use crate::xof::TurboShake256;

/// Which core runs, decided by the CPU (cached detection).
enum Engine {
    Aes(AesBackend),
    ChaCha(ChaChaBackend),
}

fn engine() -> Engine {
    let aes = AesBackend::detect();
    if aes.has_hardware() {
        Engine::Aes(aes)
    } else {
        Engine::ChaCha(ChaChaBackend::detect())
    }
}

/// Bytes of stack below the caller's frame that [`scrub_stack_if_used`]
/// overwrites: more than the slow path's frames with the deepest refill
/// kernel's under them, and no more, so that a signal handler that draws (on an
/// alternate signal stack, say) needs little more stack than the refill itself.
/// Frames on x86_64 (rustc 1.95, release): `x86_vaes512::fill_pools` 3008 bytes
/// (key expansion inlined), `x86_vaes256` 1600, `x86_aesni` 504, the ChaCha
/// kernels under 512, the slow path's own frames above them about 200; painted
/// and measured, a `x86_vaes256` refill touches 2 KiB below `fill`'s frame.
/// `tests/residue.rs` fails if a kernel's spills outgrow it.
const SCRUB_BYTES: usize = 4096;

std::thread_local! {
    /// Set when this thread generated or reseeded since the last scrub: its
    /// stack below the slow path may hold copies of keys or output.
    static STACK_USED: core::cell::Cell<bool> = const { core::cell::Cell::new(false) };
}

/// After a slow-path call that generated or reseeded, overwrites the stack the
/// call used with zeros: the compiler spills registers and keeps temporaries
/// there (round keys, output blocks, in the kernels and in the code inlined
/// around them) that no zeroizing of variables reaches. Called by the slow
/// path's outer frame, right after its inner frames returned, so that this
/// frame covers theirs.
#[inline(never)]
pub(crate) fn scrub_stack_if_used() {
    if STACK_USED.try_with(|used| used.replace(false)) == Ok(true) {
        let mut area = [0u8; SCRUB_BYTES];
        // Makes the zeros observable, so that the stores are not optimised away.
        core::hint::black_box(&mut area);
    }
}

/// Marks this thread's stack as holding copies of secrets.
fn stack_used() {
    let _ = STACK_USED.try_with(|used| used.set(true));
}

/// TurboSHAKE256's domain byte for [`Generator::reseed`]'s mixing.
const MIX_DOMAIN: u8 = 0x52;

/// The OS generator's bytes for a reseed (the inspection builds can make every
/// process get the same ones: [`SAME_OS_SEEDS`]).
fn os_seed(seed: &mut [u8; 32]) -> Result<(), OsError> {
    #[cfg(ratchet_rng_inspect)]
    if SAME_OS_SEEDS.load(core::sync::atomic::Ordering::Relaxed) {
        seed.fill(0x5A);
        return Ok(());
    }
    crate::os::fill(seed)
}

/// Inspection builds: when set, every thread reseed takes the same 32 bytes
/// instead of the OS generator's: a test's stand-in for two clones whose guest
/// kernel has not reseeded yet.
#[cfg(ratchet_rng_inspect)]
pub(crate) static SAME_OS_SEEDS: core::sync::atomic::AtomicBool =
    core::sync::atomic::AtomicBool::new(false);

#[cfg(ratchet_rng_inspect)]
std::thread_local! {
    /// Inspection builds: this thread's successful reseeds.
    pub(crate) static RESEEDS: core::cell::Cell<u64> = const { core::cell::Cell::new(0) };
}

/// The keys; only the engine's is used. Zeroed: unseeded.
pub(crate) struct Generator {
    /// The AES-256 key of the next pool.
    aes_key: [u8; 32],
    /// The ChaCha8 key of the next key period.
    chacha_key: [u32; 8],
    /// Where a new seed lands first, so that a failed reseed leaves the current
    /// key intact; wiped as soon as it is installed.
    seed: [u8; 32],
}

impl Generator {
    /// The unseeded (all-zero) generator.
    #[cfg(test)]
    pub(crate) const fn new() -> Self {
        Self {
            aes_key: [0; 32],
            chacha_key: [0; 8],
            seed: [0; 32],
        }
    }

    /// Reseeds from the operating system, in place. On failure the current key
    /// stays as it was. With `mix` (a new generation: a VM restore, or
    /// `reseed_all_threads()`), the seed is TurboSHAKE256 of the OS bytes and
    /// of what differs between clones of one snapshot even when the OS
    /// generator does not yet ([`generation::clone_material`]).
    pub(crate) fn reseed(&mut self, mix: bool) -> Result<(), OsError> {
        stack_used();
        let result = os_seed(&mut self.seed);
        if result.is_ok() && mix {
            let mut material = [0u8; generation::MATERIAL_BYTES];
            let _ = generation::clone_material(&mut material);
            let Ok(mut hash) = TurboShake256::new(MIX_DOMAIN) else {
                unreachable!("0x52 is a valid domain byte")
            };
            hash.absorb(b"ratchet-rng thread reseed, new generation");
            hash.absorb(&self.seed);
            hash.absorb(&material);
            material.zeroize();
            hash.finalize().squeeze(&mut self.seed);
        }
        #[cfg(ratchet_rng_inspect)]
        if result.is_ok() {
            let _ = RESEEDS.try_with(|count| count.set(count.get() + 1));
        }
        if result.is_ok() {
            match engine() {
                Engine::Aes(_) => self.aes_key.copy_from_slice(&self.seed),
                Engine::ChaCha(_) => {
                    for (word, bytes) in
                        self.chacha_key.iter_mut().zip(self.seed.as_chunks::<4>().0)
                    {
                        *word = u32::from_le_bytes(*bytes);
                    }
                }
            }
        }
        self.seed.zeroize();
        result
    }

    /// The refill: [`generate`](Self::generate) takes multiples of it.
    pub(crate) fn refill_bytes() -> usize {
        match engine() {
            Engine::Aes(_) => POOL_OUTPUT_BYTES,
            Engine::ChaCha(_) => KEY_PERIOD_OUTPUT_BYTES,
        }
    }

    /// Writes the next `out.len()` bytes of the stream to `out`, erasing the key
    /// at every refill.
    ///
    /// # Panics
    /// If `out.len()` is not a multiple of [`refill_bytes`](Self::refill_bytes)
    /// (an internal invariant of the thread state: better a panic than a partly
    /// unwritten buffer).
    pub(crate) fn generate(&mut self, out: &mut [u8]) {
        fn whole<const N: usize>(out: &mut [u8]) -> &mut [[u8; N]] {
            let (refills, rest) = out.as_chunks_mut::<N>();
            assert!(rest.is_empty(), "ratchet-rng: partial thread-local refill");
            refills
        }
        match engine() {
            Engine::Aes(backend) => aes::fill_pools(backend, &mut self.aes_key, whole(out)),
            Engine::ChaCha(backend) => {
                chacha::key_periods::<8>(backend, &mut self.chacha_key, whole(out));
            }
        }
        stack_used();
    }

    /// A copy with the same keys (tests only: generators are not `Clone`).
    #[cfg(test)]
    pub(crate) fn twin(&self) -> Self {
        Self {
            aes_key: self.aes_key,
            chacha_key: self.chacha_key,
            seed: self.seed,
        }
    }

    /// Zeroes every key: unseeded again.
    pub(crate) fn wipe(&mut self) {
        self.aes_key.zeroize();
        self.chacha_key.zeroize();
        self.seed.zeroize();
    }
}
