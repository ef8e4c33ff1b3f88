//! The thread-local state's generator: the refill core of
//! [`AesCtrPoolRng`](crate::AesCtrPoolRng) with AES hardware, else of
//! [`ChaChaKeyErasureRng`](crate::ChaChaKeyErasureRng), held as its bare key:
//! the OS seeds it **in place** (no generator is moved in), and all zeros (a
//! forked child's wiped page) is a valid unseeded value.
#![forbid(unsafe_code)]

use zeroize::Zeroize;

use super::generation;
use crate::aes::{self, POOL_OUTPUT_BYTES};
use crate::backend::{AesBackend, ChaChaBackend, KeccakBackend};
use crate::chacha::{self, KEY_PERIOD_OUTPUT_BYTES};
use crate::error::OsError;
use crate::keccak;

/// Which core runs, decided by the CPU (cached detection); the AES engine
/// holds the backend for a few blocks (pools ask for [`AesBackend::detect`]'s).
enum Engine {
    Aes(AesBackend),
    ChaCha(ChaChaBackend),
}

fn engine() -> Engine {
    let aes = AesBackend::for_few_blocks();
    if aes.has_hardware() {
        Engine::Aes(aes)
    } else {
        Engine::ChaCha(ChaChaBackend::detect())
    }
}

/// Bytes of stack below the caller's frame that [`scrub_stack_if_used`]
/// overwrites after a refill: the slow path's frames with the deepest refill
/// kernel's under them (`x86_vaes512`, about 3 KiB), and no more, so that a
/// signal handler that draws needs little more stack than the refill itself.
/// `tests/residue.rs` fails if a kernel's spills outgrow it.
const SCRUB_BYTES: usize = 4096;

/// Bytes [`scrub_stack_if_used`] overwrites after a [`Depth::Shallow`] call (a
/// thread's first small request: the OS read, the lite mix and sixteen AES
/// blocks on AES-NI or ARMv8 AES), which reaches less deep than a refill;
/// scrubbing [`SCRUB_BYTES`] there would slow a first use (cold stack).
const SHALLOW_SCRUB_BYTES: usize = 2048;

/// How deep the secrets a slow-path call left on the stack may lie.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Depth {
    /// Nothing generated or reseeded since the last scrub.
    Clean,
    /// A reseed without the full mix, a short batch: [`SHALLOW_SCRUB_BYTES`].
    Shallow,
    /// A refill, the full mix: [`SCRUB_BYTES`].
    Deep,
}

std::thread_local! {
    /// How deep this thread's stack may hold secrets since the last scrub.
    static STACK_USED: core::cell::Cell<Depth> = const { core::cell::Cell::new(Depth::Clean) };
}

/// Called as a slow-path call begins: takes what this thread's stack may hold
/// so far (an interrupted call's secrets, when this call is a signal handler's
/// or another reentrant one's) and leaves the mark clean for this call. Give
/// it back to [`scrub_stack_if_used`]: a reentrant call then scrubs only what
/// it used, and the call it interrupted still scrubs its own (issue 46).
pub(crate) fn enter_stack() -> Depth {
    STACK_USED
        .try_with(|used| used.replace(Depth::Clean))
        .unwrap_or(Depth::Clean)
}

/// Zeroes the stack a slow-path call that generated or reseeded used: spilled
/// registers and temporaries (round keys, output blocks) that no zeroizing of
/// variables reaches; then puts back `outer`, what [`enter_stack`] took at the
/// call's start. Called by the slow path's outer frame right after its inner
/// frames returned, so that this frame covers theirs. Each depth zeroes an
/// array in a frame of its own right below this one: in one frame, the
/// shallow array could be laid out below the stack it must cover.
#[inline(never)]
pub(crate) fn scrub_stack_if_used(outer: Depth) {
    #[inline(never)]
    fn scrub<const BYTES: usize>() {
        let mut area = [0u8; BYTES];
        // Makes the zeros observable, so that the stores are not optimised away.
        core::hint::black_box(&mut area);
    }
    match STACK_USED.try_with(|used| used.replace(outer)) {
        Ok(Depth::Deep) => scrub::<SCRUB_BYTES>(),
        Ok(Depth::Shallow) => scrub::<SHALLOW_SCRUB_BYTES>(),
        _ => {}
    }
}

/// Marks this thread's stack as holding copies of secrets down to `depth`.
fn stack_used(depth: Depth) {
    let _ = STACK_USED.try_with(|used| used.set(used.get().max(depth)));
}

/// TurboSHAKE256's domain byte for [`Generator::reseed`]'s mixing.
const MIX_DOMAIN: u8 = 0x52;

/// TurboSHAKE256 (RFC 9861) of the concatenated `parts`, domain byte
/// [`MIX_DOMAIN`], 32 bytes out, on this CPU's Keccak backend, faster than the
/// portable one of `xof::TurboShake256` (`tests` check they agree). Byte by
/// byte into the lanes: no branch or index depends on the data.
fn mix_hash(parts: &[&[u8]], out: &mut [u8; 32]) {
    const RATE: usize = 136;
    let backend = KeccakBackend::detect();
    let mut state = [0u64; 25];
    let mut at = 0;
    for &byte in parts.iter().flat_map(|part| part.iter()) {
        state[at / 8] ^= u64::from(byte) << (8 * (at % 8));
        at += 1;
        if at == RATE {
            keccak::permute::<12>(backend, &mut state);
            at = 0;
        }
    }
    state[at / 8] ^= u64::from(MIX_DOMAIN) << (8 * (at % 8));
    state[(RATE - 1) / 8] ^= 0x80 << (8 * ((RATE - 1) % 8));
    keccak::permute::<12>(backend, &mut state);
    for (chunk, lane) in out.chunks_exact_mut(8).zip(&state) {
        chunk.copy_from_slice(&lane.to_le_bytes());
    }
    state.zeroize();
}

/// The ChaCha engine's [`Mix::Lite`]: the new key is the ChaCha20 block under
/// the OS bytes `seed`, with the clocks as its 96-bit nonce and 32-bit counter
/// (the counter folds in their high halves).
fn chacha_lite_mix(seed: &mut [u8; 32], [cycles, monotonic]: [u64; 2]) {
    let mut key = [0u32; 8];
    for (word, bytes) in key.iter_mut().zip(seed.as_chunks::<4>().0) {
        *word = u32::from_le_bytes(*bytes);
    }
    let counter = (monotonic ^ monotonic >> 32 ^ cycles >> 32) as u32;
    let nonce = [cycles as u32, (cycles >> 32) as u32, monotonic as u32];
    let mut out = chacha::soft::block::<20>(&key, counter, &nonce);
    for (bytes, word) in seed.chunks_exact_mut(4).zip(&out) {
        bytes.copy_from_slice(&word.to_le_bytes());
    }
    key.zeroize();
    out.zeroize();
}

/// The AES engine's [`Mix::Lite`]: the clocks, kept beside the key (the OS
/// bytes) and used once, by whichever output comes first. A short batch
/// ([`Generator::generate_short`]) takes them as its nonce: clones with equal
/// OS bytes and different clocks read one key's permutation at disjoint inputs,
/// with one key expansion in all. Pools ([`Generator::generate`], counters from
/// 0 under each key) first replace the key ([`mix_key`](Self::mix_key)). Not
/// secret, but zeroed with the key; all zeros: nothing pending.
#[derive(Clone, Copy, Default)]
struct LiteClocks {
    clocks: [u64; 2],
    pending: bool,
}

impl LiteClocks {
    /// The short batch's first counter block: the cycle counter in the top 64
    /// bits, the monotonic clock folded to 32 bits below it, block counter 0.
    fn nonce(self) -> u128 {
        let [cycles, monotonic] = self.clocks;
        u128::from(cycles) << 64 | u128::from((monotonic ^ monotonic >> 32) as u32) << 32
    }

    /// The key for output other than a short batch: two blocks of AES-256-CTR
    /// keystream under `key` from the clocks' 128-bit counter.
    fn mix_key(self, backend: AesBackend, key: &mut [u8; 32]) {
        let [cycles, monotonic] = self.clocks;
        let mut blocks = [[0u8; 16]; 2];
        let counter = u128::from(cycles) << 64 | u128::from(monotonic);
        aes::ctr_keystream(backend, key, counter, &mut blocks);
        key.copy_from_slice(blocks.as_flattened());
        blocks.zeroize();
    }
}

/// The OS generator's bytes for a reseed; at a thread's `first` seeding, from
/// the process's seed reserve where it serves (`pages.rs`).
fn os_seed(seed: &mut [u8; 32], first: bool) -> Result<(), OsError> {
    #[cfg(ratchet_rng_inspect)]
    if FAIL_OS_SEEDS.load(core::sync::atomic::Ordering::Relaxed) {
        return Err(OsError::new(getrandom::Error::UNSUPPORTED));
    }
    #[cfg(ratchet_rng_inspect)]
    if SAME_OS_SEEDS.load(core::sync::atomic::Ordering::Relaxed) {
        seed.fill(0x5A);
        return Ok(());
    }
    if first && super::pages::reserved_seed(seed) {
        return Ok(());
    }
    crate::os::fill(seed)
}

/// Inspection builds: when set, every thread reseed takes the same 32 bytes,
/// standing in for two clones whose guest kernel has not reseeded yet.
#[cfg(ratchet_rng_inspect)]
pub(crate) static SAME_OS_SEEDS: core::sync::atomic::AtomicBool =
    core::sync::atomic::AtomicBool::new(false);

/// Inspection builds: when set, every thread reseed fails as if the OS
/// generator did (the OS fallback for reentrant calls is not affected).
#[cfg(ratchet_rng_inspect)]
pub(crate) static FAIL_OS_SEEDS: core::sync::atomic::AtomicBool =
    core::sync::atomic::AtomicBool::new(false);

#[cfg(ratchet_rng_inspect)]
std::thread_local! {
    /// Inspection builds: this thread's successful reseeds by [`Mix`].
    pub(crate) static MIXES: core::cell::Cell<[u64; 3]> = const { core::cell::Cell::new([0; 3]) };
    /// Inspection builds: this thread's full mixes whose hashed material held
    /// the CPU random source's 32 bytes (not all zeros).
    pub(crate) static CPU_RANDOM_MIXES: core::cell::Cell<u64> = const { core::cell::Cell::new(0) };
}

/// What a reseed mixes into the OS bytes (see [`Generator::reseed`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mix {
    /// Nothing: a scheduled reseed, or one `reseed()` asked for, with no new
    /// generation nor fork since the last seeding.
    None,
    /// A thread's first use in a generation the process has not seen move: the
    /// cycle counter and the monotonic clock through the engine's cipher keyed
    /// by the OS bytes ([`chacha_lite_mix`], [`LiteClocks`]). No hash and no CPU
    /// source: a first use cannot afford them (SECURITY.md).
    Lite,
    /// Everything, the CPU random source (RDSEED/RDRAND/RNDR) included: any
    /// seeding after a new generation or a fork, wherever it was seen.
    Full,
}

/// AES blocks in a [`Generator::generate_short`] batch: two for the next key,
/// fourteen (224 bytes) of output, more than most first requests need.
pub(crate) const SHORT_BLOCKS: usize = 16;

/// Bytes in a [`Generator::generate_short`] batch (key included).
pub(crate) const SHORT_BYTES: usize = SHORT_BLOCKS * 16;

/// The keys; only the engine's is used. Zeroed (tests' `default()`): unseeded.
#[cfg_attr(test, derive(Clone, Default))]
pub(crate) struct Generator {
    /// The AES-256 key of the next pool.
    aes_key: [u8; 32],
    /// The ChaCha8 key of the next key period.
    chacha_key: [u32; 8],
    /// Where a new seed lands first, so that a failed reseed leaves the current
    /// key intact; wiped as soon as it is installed.
    seed: [u8; 32],
    /// The AES engine's first-use mix, until the key's first output.
    lite: LiteClocks,
}

impl Generator {
    /// Reseeds from the operating system, in place; on failure the current key
    /// stays as it was. [`Mix::Full`] hashes the OS bytes with what differs
    /// between clones ([`generation::clone_material`]); [`Mix::Lite`] applies
    /// two clocks: at once for the ChaCha engine ([`chacha_lite_mix`]), with
    /// the key's first output for the AES engine ([`LiteClocks`]).
    pub(crate) fn reseed(&mut self, mix: Mix) -> Result<(), OsError> {
        stack_used(if mix == Mix::Full {
            Depth::Deep
        } else {
            Depth::Shallow
        });
        let result = os_seed(&mut self.seed, mix == Mix::Lite);
        let mut lite_pending = false;
        if result.is_ok() && mix == Mix::Lite {
            let clocks = generation::hardware::cheap_clocks();
            match engine() {
                Engine::Aes(_) => {
                    self.lite.clocks = clocks;
                    lite_pending = true;
                }
                Engine::ChaCha(_) => chacha_lite_mix(&mut self.seed, clocks),
            }
        }
        if result.is_ok() && mix == Mix::Full {
            let mut material = [0u8; generation::MATERIAL_BYTES];
            let used = generation::clone_material(&mut material);
            // Declared mutable where it is made, so that the wipe below
            // zeroes this copy in place, not a moved copy of it.
            let mut os = self.seed;
            let hashed = &material[..used];
            mix_hash(&[b"ratchet-rng mix", &os, hashed], &mut self.seed);
            #[cfg(ratchet_rng_inspect)]
            if hashed
                .get(generation::MATERIAL_BYTES - 32..)
                .is_some_and(|cpu| cpu.iter().any(|b| *b != 0))
            {
                let _ = CPU_RANDOM_MIXES.try_with(|count| count.set(count.get() + 1));
            }
            os.zeroize();
            material.zeroize();
        }
        #[cfg(ratchet_rng_inspect)]
        if result.is_ok() {
            let _ = MIXES.try_with(|counts| {
                let mut c = counts.get();
                c[mix as usize] += 1;
                counts.set(c);
            });
        }
        if result.is_ok() {
            match engine() {
                Engine::Aes(_) => {
                    self.aes_key.copy_from_slice(&self.seed);
                    self.lite.pending = lite_pending;
                }
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
    /// If `out.len()` is not a multiple of [`refill_bytes`](Self::refill_bytes):
    /// an internal invariant, better a panic than a partly unwritten buffer.
    pub(crate) fn generate(&mut self, out: &mut [u8]) {
        fn whole<const N: usize>(out: &mut [u8]) -> &mut [[u8; N]] {
            let (refills, rest) = out.as_chunks_mut::<N>();
            assert!(rest.is_empty(), "ratchet-rng: partial thread-local refill");
            refills
        }
        match engine() {
            Engine::Aes(backend) => {
                if self.lite.pending {
                    self.lite.mix_key(backend, &mut self.aes_key);
                    self.lite.pending = false;
                }
                aes::fill_pools(AesBackend::detect(), &mut self.aes_key, whole(out));
            }
            Engine::ChaCha(backend) => {
                chacha::key_periods::<8>(backend, &mut self.chacha_key, whole(out));
            }
        }
        stack_used(Depth::Deep);
    }

    /// Output bytes of a [`generate_short`](Self::generate_short) batch: the AES
    /// engine's; `None` for ChaCha, whose key period is already short.
    pub(crate) fn short_output_bytes() -> Option<usize> {
        match engine() {
            Engine::Aes(_) => Some(SHORT_BYTES - 32),
            Engine::ChaCha(_) => None,
        }
    }

    /// A short refill for a thread's first request ([`SHORT_BLOCKS`] AES blocks,
    /// not a pool): the AES-256-CTR keystream under the key from counter 0, or
    /// from the pending clocks' nonce ([`LiteClocks`]); its last 32 bytes become
    /// the next key and are zeroed in `out` before anything is served. A ChaCha
    /// engine leaves `out` untouched.
    pub(crate) fn generate_short(&mut self, out: &mut [u8; SHORT_BYTES]) {
        if let Engine::Aes(backend) = engine() {
            let (blocks, _) = out.as_chunks_mut::<16>();
            let counter = if self.lite.pending {
                self.lite.nonce()
            } else {
                0
            };
            self.lite.pending = false;
            aes::ctr_keystream(backend, &self.aes_key, counter, blocks);
            let (_, next) = out.split_last_chunk_mut::<32>().expect("longer than a key");
            self.aes_key.copy_from_slice(next);
            next.zeroize();
            stack_used(Depth::Shallow);
        }
    }

    /// Zeroes every key: unseeded again.
    pub(crate) fn wipe(&mut self) {
        self.aes_key.zeroize();
        self.chacha_key.zeroize();
        self.seed.zeroize();
        self.lite.clocks.zeroize();
        self.lite.pending = false;
    }
}

#[cfg(test)]
#[allow(clippy::field_reassign_with_default, reason = "zeroed, then keyed")]
mod tests {
    use super::*;
    use crate::xof::TurboShake256;

    /// The short batch is the portable AES-256-CTR keystream from counter 0;
    /// its last two blocks are the next batch's key, zeroed in `out`.
    #[test]
    fn short_batch_is_the_keystream_with_its_key_erased() {
        if Generator::short_output_bytes().is_none() {
            return;
        }
        let mut generator = Generator::default();
        generator.aes_key = core::array::from_fn(|i| (i * 37 + 5) as u8);
        let mut key = generator.aes_key;
        for round in 0..2 {
            let mut expected = [[0u8; 16]; SHORT_BLOCKS];
            aes::soft::ctr_keystream(&aes::soft::expand_key(&key), 0, &mut expected);
            let expected = expected.as_flattened();
            let mut out = [0xEEu8; SHORT_BYTES];
            generator.generate_short(&mut out);
            let output = SHORT_BYTES - 32;
            assert_eq!(Generator::short_output_bytes(), Some(output));
            assert_eq!(out[..output], expected[..output], "round {round}");
            assert_eq!(out[output..], [0u8; 32], "the next key left in the output");
            assert_eq!(generator.aes_key[..], expected[output..], "round {round}");
            assert_ne!(generator.aes_key, key, "the old key kept");
            key = generator.aes_key;
        }
    }

    /// With the clocks pending, a short batch is the portable keystream from
    /// the clocks' nonce (other clocks, other blocks), and pools run under the
    /// key the clocks' keystream replaced; either uses the mix once.
    #[test]
    fn first_use_mix_is_the_short_batch_nonce_or_a_new_key() {
        if Generator::short_output_bytes().is_none() {
            return;
        }
        let key: [u8; 32] = core::array::from_fn(|i| (i * 11 + 1) as u8);
        let lite = |clocks| LiteClocks {
            clocks,
            pending: true,
        };
        let short = |clocks: [u64; 2]| {
            let mut generator = Generator::default();
            generator.aes_key = key;
            generator.lite = lite(clocks);
            let mut out = [0u8; SHORT_BYTES];
            generator.generate_short(&mut out);
            assert!(!generator.lite.pending, "the mix used twice");
            out
        };
        let clocks = [0x0123_4567_89AB_CDEF, 0xFEDC_BA98_7654_3210];
        let nonce =
            0x0123_4567_89AB_CDEF_u128 << 64 | u128::from(0xFEDC_BA98_u32 ^ 0x7654_3210) << 32;
        assert_eq!(lite(clocks).nonce(), nonce);
        let mut expected = [[0u8; 16]; SHORT_BLOCKS];
        aes::soft::ctr_keystream(&aes::soft::expand_key(&key), nonce, &mut expected);
        let output = SHORT_BYTES - 32;
        let out = short(clocks);
        assert_eq!(out[..output], expected.as_flattened()[..output]);
        for other in [
            [clocks[0] + 1, clocks[1]],
            [clocks[0], clocks[1] + 1],
            [0, 0],
        ] {
            let theirs = short(other);
            for (a, b) in out[..output].chunks(16).zip(theirs[..output].chunks(16)) {
                assert_ne!(a, b, "clocks {other:x?}: a block repeated");
            }
        }
        // Pools: the key becomes the clocks' keystream under the OS bytes.
        let pool = Generator::refill_bytes();
        let mut generator = Generator::default();
        generator.aes_key = key;
        generator.lite = lite(clocks);
        let mut ours = std::vec![0u8; pool];
        generator.generate(&mut ours);
        assert!(!generator.lite.pending, "the mix used twice");
        let mut mixed = [[0u8; 16]; 2];
        let counter = u128::from(clocks[0]) << 64 | u128::from(clocks[1]);
        aes::soft::ctr_keystream(&aes::soft::expand_key(&key), counter, &mut mixed);
        let mut twin = Generator::default();
        twin.aes_key.copy_from_slice(mixed.as_flattened());
        let mut theirs = std::vec![0u8; pool];
        twin.generate(&mut theirs);
        assert_eq!(ours, theirs);
    }

    /// `mix_hash` is TurboSHAKE256 (the crate's portable one) at the lengths
    /// the mix uses and across the rate boundary.
    #[test]
    fn mix_hash_is_turboshake256() {
        let data: std::vec::Vec<u8> = (0..400u32).map(|i| (i * 7 + 3) as u8).collect();
        for len in [0, 1, 127, 134, 135, 136, 137, 159, 271, 272, 273, 400] {
            let (a, b) = data[..len].split_at(len / 3);
            let mut ours = [0u8; 32];
            mix_hash(&[a, b], &mut ours);
            let mut hash = TurboShake256::new(MIX_DOMAIN).unwrap();
            hash.absorb(&data[..len]);
            let mut theirs = [0u8; 32];
            hash.finalize().squeeze(&mut theirs);
            assert_eq!(ours, theirs, "length {len}");
        }
    }
}
