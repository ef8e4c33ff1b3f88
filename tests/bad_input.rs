//! Bad input and the limits of the public API (issue 7, "Bad input and failure"):
//!
//! - `from_key(&[])` is a valid, deterministic stream, distinct from other keys;
//!   its known answers come from independent oracles (FIPS 202 / RFC 9861 for the
//!   sponges, RustCrypto's `turboshake` crate for the derived 32-byte seeds);
//! - zero-length requests, through every entry point and at every position
//!   (start, mid-buffer, just before / at / after a refill boundary), leave the
//!   stream where it was;
//! - out-of-range TurboSHAKE domain bytes: `InvalidDomainByte` (the exhaustive
//!   0..=255 check is the unit test in `src/xof.rs`; here: the error's contents
//!   and message, and that the 127 valid bytes really separate domains);
//! - seeds of the wrong length (`SpongeSeed::try_from`, `[u8; 32]::try_from`) and
//!   failing seed sources (`try_from_rng`) give errors, not panics;
//! - counters cannot wrap or repeat however much is read. Between refills a
//!   generator's whole state is its current key (ChaCha, AES) or Keccak state
//!   (sponges) plus a position in one buffer; every block counter restarts inside
//!   each refill. The tests check that, without reading 4 GiB, through `hazmat`:
//!   after `k` refills a ChaCha / AES generator continues exactly as `from_seed`
//!   of the key the kernel chain reaches (so no hidden period counter exists to
//!   wrap); each of those refills is the ChaCha blocks 0..15 / the AES-CTR blocks
//!   0..255 under its key, recomputed from the raw block functions; the sponge
//!   stream is the pure chain of `squeeze_period` from the absorbed state.
//!   Counters near `u32::MAX` / `u128::MAX` are exercised at kernel level in
//!   `src/chacha/soft.rs` and `src/aes/soft.rs` (and below through `hazmat`);
//! - a request of several MiB in one call equals many small ones, and no 16-byte
//!   block repeats in 4 MiB of any generator or of the thread-local generator
//!   (whose 3 MiB request crosses several reseed budgets);
//! - no panic from arbitrary input anywhere in the safe public API (proptest,
//!   every call under `catch_unwind`). The only panics the API documents are the
//!   infallible OS-seeding paths; `tests/os_failure.rs` lists them and makes each
//!   one fail through getrandom's custom backend.
#![cfg(feature = "hazmat")]

use crate::common;

use std::collections::HashSet;
use std::panic::{AssertUnwindSafe, catch_unwind};

use common::{one_fill, proptest_config};
use proptest::prelude::*;
use rand::RngExt;
use ratchet_rng::hazmat::{Aes256, ChaCha, Keccak, chacha_block};
use ratchet_rng::rand_core::{Rng, SeedableRng, TryRng};
use ratchet_rng::xof::{InvalidDomainByte, Shake256, TurboShake256, turboshake256};
use ratchet_rng::{
    AesCtrPoolRng, ChaCha12KeyErasureRng, ChaCha20KeyErasureRng, ChaChaKeyErasureRng,
    SPONGE_SEED_BYTES, ShakeRng, SpongeSeed, TurboShakeRng,
};
use shake::{ExtendableOutput, Update, XofReader};
use turboshake::CTurboShake256;

/// Bytes per refill: sponge ratchet period, ChaCha key period, AES pool output.
const SPONGE_REFILL: usize = 1088;
const CHACHA_REFILL: usize = 992;
const AES_REFILL: usize = 4064;

/// Runs `body` for every generator type, with its refill size.
macro_rules! for_each_generator {
    ($body:ident) => {
        $body!(TurboShakeRng, SPONGE_REFILL);
        $body!(ShakeRng, SPONGE_REFILL);
        $body!(ChaChaKeyErasureRng, CHACHA_REFILL);
        $body!(ChaCha12KeyErasureRng, CHACHA_REFILL);
        $body!(ChaCha20KeyErasureRng, CHACHA_REFILL);
        $body!(AesCtrPoolRng, AES_REFILL);
    };
}

/// The first 32 bytes of TurboSHAKE256(`msg`, `D`) from RustCrypto's
/// `turboshake` crate (an independent oracle).
fn oracle_turbo32<const D: u8>(msg: &[u8]) -> [u8; 32] {
    let mut h = CTurboShake256::<D>::default();
    h.update(msg);
    let mut out = [0u8; 32];
    h.finalize_xof().read(&mut out);
    out
}

// ---------------------------------------------------------------------------
// from_key(&[])
// ---------------------------------------------------------------------------

#[test]
fn empty_key_is_a_valid_deterministic_distinct_stream() {
    macro_rules! check {
        ($rng:ty, $refill:expr) => {{
            let len = 2 * $refill + 3;
            let a = one_fill(&mut <$rng>::from_key(&[]), len);
            assert_eq!(
                a,
                one_fill(&mut <$rng>::from_key(b""), len),
                "{}",
                stringify!($rng)
            );
            assert_ne!(a, vec![0u8; len]);
            for other in [&b"\0"[..], b"a", &[0u8; 32], &[0u8; 136]] {
                assert_ne!(
                    a,
                    one_fill(&mut <$rng>::from_key(other), len),
                    "{}: from_key(&[]) equals from_key({other:?})",
                    stringify!($rng)
                );
            }
            // Not the all-zero seed either.
            let zero = <$rng as SeedableRng>::Seed::default();
            assert_ne!(a, one_fill(&mut <$rng>::from_seed(zero), len));
        }};
    }
    for_each_generator!(check);

    // Known answers from independent sources. The sponges' first bytes are the
    // plain XOF of the empty message: FIPS 202 SHAKE256("") and RFC 9861
    // section 5 TurboSHAKE256(M = `00`^0, D = 0x1F).
    assert_eq!(
        one_fill(&mut ShakeRng::from_key(&[]), 8),
        [0x46, 0xb9, 0xdd, 0x2b, 0x0b, 0xa8, 0x8d, 0x13]
    );
    assert_eq!(
        one_fill(&mut TurboShakeRng::from_key(&[]), 8),
        [0x36, 0x7a, 0x32, 0x9d, 0xaf, 0xea, 0x87, 0x1c]
    );
    // The others are `from_seed` of TurboSHAKE256("", D)[..32], D as documented.
    let pairs: [(u64, u64); 4] = [
        (
            ChaChaKeyErasureRng::from_key(&[]).next_u64(),
            ChaChaKeyErasureRng::from_seed(oracle_turbo32::<0x08>(b"")).next_u64(),
        ),
        (
            ChaCha12KeyErasureRng::from_key(&[]).next_u64(),
            ChaCha12KeyErasureRng::from_seed(oracle_turbo32::<0x0C>(b"")).next_u64(),
        ),
        (
            ChaCha20KeyErasureRng::from_key(&[]).next_u64(),
            ChaCha20KeyErasureRng::from_seed(oracle_turbo32::<0x14>(b"")).next_u64(),
        ),
        (
            AesCtrPoolRng::from_key(&[]).next_u64(),
            AesCtrPoolRng::from_seed(oracle_turbo32::<0x41>(b"")).next_u64(),
        ),
    ];
    for (i, (got, want)) in pairs.into_iter().enumerate() {
        assert_eq!(got, want, "generator {i}");
    }
}

// ---------------------------------------------------------------------------
// Zero-length requests
// ---------------------------------------------------------------------------

/// Every way to ask for nothing.
fn ask_for_nothing<R: Rng>(rng: &mut R) {
    rng.fill_bytes(&mut []);
    rng.try_fill_bytes(&mut []).unwrap();
    let mut empty: [u8; 0] = [];
    rng.fill(&mut empty[..]);
    let mut empty_words: [u32; 0] = [];
    rng.fill(&mut empty_words[..]);
    rng.fill_bytes(&mut Vec::new());
}

#[test]
fn zero_length_requests_at_every_position_change_nothing() {
    macro_rules! check {
        ($rng:ty, $refill:expr) => {{
            let refill: usize = $refill;
            let total = 3 * refill + 64;
            let want = one_fill(&mut <$rng>::from_key(b"zero"), total);
            for pos in [
                0,
                1,
                3,
                8,
                refill / 2,
                refill - 8,
                refill - 1,
                refill,
                refill + 1,
                2 * refill - 4,
                2 * refill,
                3 * refill,
            ] {
                let mut rng = <$rng>::from_key(b"zero");
                let mut got = one_fill(&mut rng, pos);
                ask_for_nothing(&mut rng);
                // Then continue by integers and a fill, with more empty requests.
                got.extend_from_slice(&rng.next_u32().to_le_bytes());
                ask_for_nothing(&mut rng);
                got.extend_from_slice(&rng.next_u64().to_le_bytes());
                ask_for_nothing(&mut rng);
                let rest = total - got.len();
                got.extend(one_fill(&mut rng, rest));
                ask_for_nothing(&mut rng);
                assert_eq!(got, want, "{} at position {pos}", stringify!($rng));
            }
        }};
    }
    for_each_generator!(check);
}

#[test]
fn thread_local_zero_length_requests_succeed() {
    ratchet_rng::fill(&mut []);
    ratchet_rng::try_fill(&mut []).expect("an empty fill cannot fail once seeded");
    ask_for_nothing(&mut ratchet_rng::rng());
    // Still a working generator afterwards.
    let mut key = [0u8; 32];
    ratchet_rng::try_fill(&mut key).unwrap();
    assert_ne!(key, [0u8; 32]);
}

// ---------------------------------------------------------------------------
// TurboSHAKE domain bytes
// ---------------------------------------------------------------------------

#[test]
fn invalid_domain_bytes_are_reported_not_masked() {
    for d in [0x00u8, 0x80, 0x9F, 0xFF] {
        let err = TurboShake256::new(d).unwrap_err();
        assert_eq!(err, InvalidDomainByte(d));
        assert_eq!(turboshake256::<16>(b"x", d), Err(InvalidDomainByte(d)));
        let message = err.to_string();
        assert!(message.contains(&format!("{d:#04x}")), "{message}");
        assert!(message.contains("0x01..=0x7F"), "{message}");
        // `std::error::Error` is implemented, so `?` into a boxed error works.
        let boxed: Box<dyn std::error::Error> = Box::new(err);
        assert_eq!(boxed.to_string(), message);
    }
    // A byte with the top bit set is not silently reduced to the valid one
    // below it: 0x9F would otherwise act like 0x1F.
    assert!(TurboShake256::new(0x9F).is_err());
    assert_eq!(TurboShake256::default().domain(), 0x1F);
}

#[test]
fn every_valid_domain_byte_separates() {
    let outputs: HashSet<[u8; 16]> = (0x01..=0x7F)
        .map(|d| turboshake256::<16>(b"domain", d).expect("valid domain"))
        .collect();
    assert_eq!(outputs.len(), 127);
}

// ---------------------------------------------------------------------------
// Seed lengths and failing seed sources
// ---------------------------------------------------------------------------

#[test]
fn wrong_seed_lengths_are_errors() {
    let bytes: Vec<u8> = (0..300u32).map(|i| i as u8).collect();
    for len in [0, 1, 31, 32, 33, 135, 136, 137, 300] {
        let slice = &bytes[..len];
        assert_eq!(
            SpongeSeed::try_from(slice).is_ok(),
            len == SPONGE_SEED_BYTES,
            "SpongeSeed from {len} bytes"
        );
        // The 32-byte seeds are plain arrays: core's `TryFrom<&[u8]>`.
        assert_eq!(<[u8; 32]>::try_from(slice).is_ok(), len == 32);
    }
    // A 136-byte slice seed is `from_key` of the same bytes.
    let seed = SpongeSeed::try_from(&bytes[..136]).unwrap();
    assert_eq!(
        ShakeRng::from_seed(seed).next_u64(),
        ShakeRng::from_key(&bytes[..136]).next_u64()
    );
    // A 32-byte key given to `from_key` is hashed, not used as the seed.
    let key: [u8; 32] = bytes[..32].try_into().unwrap();
    assert_ne!(
        ChaChaKeyErasureRng::from_key(&key).next_u64(),
        ChaChaKeyErasureRng::from_seed(key).next_u64()
    );
}

/// A seed source that fails (after serving `ok_bytes`).
struct FailingSource {
    ok_bytes: usize,
}

#[derive(Debug, PartialEq)]
struct SourceFailed(u32);

impl std::fmt::Display for SourceFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "seed source failed ({})", self.0)
    }
}

impl std::error::Error for SourceFailed {}

impl TryRng for FailingSource {
    type Error = SourceFailed;

    fn try_next_u32(&mut self) -> Result<u32, SourceFailed> {
        Err(SourceFailed(32))
    }

    fn try_next_u64(&mut self) -> Result<u64, SourceFailed> {
        Err(SourceFailed(64))
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), SourceFailed> {
        if dst.len() <= self.ok_bytes {
            self.ok_bytes -= dst.len();
            dst.fill(0x42);
            Ok(())
        } else {
            Err(SourceFailed(dst.len() as u32))
        }
    }
}

#[test]
fn try_from_rng_returns_the_source_error() {
    macro_rules! check {
        ($rng:ty, $refill:expr) => {{
            let seed_len = <$rng as SeedableRng>::Seed::default().as_ref().len();
            for ok_bytes in [0, 1, seed_len - 1] {
                let result = <$rng>::try_from_rng(&mut FailingSource { ok_bytes });
                assert_eq!(
                    result.err(),
                    Some(SourceFailed(seed_len as u32)),
                    "{}",
                    stringify!($rng)
                );
            }
            // A source that can serve the seed seeds (and no more is read).
            let mut source = FailingSource { ok_bytes: seed_len };
            let mut rng = <$rng>::try_from_rng(&mut source).expect("enough bytes");
            assert_eq!(source.ok_bytes, 0);
            let _ = rng.next_u64();
            // The generators are infallible sources themselves: `try_fork`
            // always succeeds.
            let mut parent = <$rng>::from_key(b"parent");
            let _child: $rng = parent.try_fork().unwrap();
        }};
    }
    for_each_generator!(check);
}

// ---------------------------------------------------------------------------
// Counters: no wrap, no repeat, without reading 4 GiB
// ---------------------------------------------------------------------------

/// `u32` words to little-endian key bytes.
fn key_bytes(words: &[u32; 8]) -> [u8; 32] {
    let mut out = [0u8; 32];
    for (chunk, word) in out.chunks_exact_mut(4).zip(words) {
        chunk.copy_from_slice(&word.to_le_bytes());
    }
    out
}

/// One chacha8rand key period rebuilt from the RFC 8439 block function: block
/// counters 0..16 (nonce 0), feed-forward removed from the non-key words,
/// groups of 4 blocks interleaved word by word. Returns (992 output bytes, next
/// key).
fn chacha8rand_period<const ROUNDS: usize>(key: &[u32; 8]) -> (Vec<u8>, [u32; 8]) {
    const CONSTANTS: [u32; 4] = [0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574];
    let mut bytes = vec![0u8; 1024];
    for counter in 0u32..16 {
        let mut block = chacha_block::<ROUNDS>(key, counter, &[0; 3]);
        for (w, c) in CONSTANTS.iter().enumerate() {
            block[w] = block[w].wrapping_sub(*c);
        }
        block[12] = block[12].wrapping_sub(counter);
        let (group, lane) = (counter as usize / 4, counter as usize % 4);
        for (w, word) in block.iter().enumerate() {
            let at = 256 * group + 16 * w + 4 * lane;
            bytes[at..at + 4].copy_from_slice(&word.to_le_bytes());
        }
    }
    let next = core::array::from_fn(|i| {
        u32::from_le_bytes(bytes[992 + 4 * i..992 + 4 * i + 4].try_into().unwrap())
    });
    bytes.truncate(992);
    (bytes, next)
}

fn chacha_counters_restart_every_period<const ROUNDS: usize, R>(from_seed: fn([u8; 32]) -> R)
where
    R: Rng,
{
    const PERIODS: usize = 1500;
    let seed: [u8; 32] = core::array::from_fn(|i| (i as u8).wrapping_mul(29) ^ 0x5c);
    let mut key: [u32; 8] =
        core::array::from_fn(|i| u32::from_le_bytes(seed[4 * i..4 * i + 4].try_into().unwrap()));
    // The generator: PERIODS periods in one request (after a 3-byte read, so
    // the buffered and the direct paths both run).
    let mut rng = from_seed(seed);
    let stream = one_fill(&mut rng, 3);
    let stream = [stream, one_fill(&mut rng, PERIODS * 992 - 3)].concat();
    // The kernel chain through hazmat, checked period by period (a sample of
    // them) against the raw block function with counters 0..15.
    let mut periods = vec![[0u8; 992]; PERIODS];
    ChaCha::soft().key_periods::<ROUNDS>(&mut key.clone(), &mut periods);
    assert!(
        stream == periods.as_flattened(),
        "ChaCha{ROUNDS}: generator vs kernel chain"
    );
    for (p, period) in periods.iter().enumerate() {
        if p < 3 || p % 499 == 0 || p == PERIODS - 1 {
            let (want, next) = chacha8rand_period::<ROUNDS>(&key);
            assert!(
                period[..] == want[..],
                "ChaCha{ROUNDS}: period {p} vs blocks 0..15"
            );
            key = next;
        } else {
            let mut one = [[0u8; 992]];
            ChaCha::soft().key_periods::<ROUNDS>(&mut key, &mut one);
        }
    }
    // The state after PERIODS periods is the key and nothing else: the generator
    // continues exactly as a fresh `from_seed(key)` (no hidden period counter
    // that could wrap after 2^32 blocks or 4 GiB).
    let mut fresh = from_seed(key_bytes(&key));
    assert_eq!(one_fill(&mut rng, 2000), one_fill(&mut fresh, 2000));
}

#[test]
fn chacha_state_between_periods_is_the_key_only() {
    chacha_counters_restart_every_period::<8, _>(ChaChaKeyErasureRng::from_seed);
    chacha_counters_restart_every_period::<12, _>(ChaCha12KeyErasureRng::from_seed);
    chacha_counters_restart_every_period::<20, _>(ChaCha20KeyErasureRng::from_seed);
}

#[test]
fn aes_state_between_pools_is_the_key_only() {
    const POOLS: usize = 400;
    let mut key: [u8; 32] = core::array::from_fn(|i| (i as u8).wrapping_mul(77) ^ 0xa3);
    let mut rng = AesCtrPoolRng::from_seed(key);
    let stream = one_fill(&mut rng, 5);
    let stream = [stream, one_fill(&mut rng, POOLS * AES_REFILL - 5)].concat();
    let mut pools = vec![[0u8; AES_REFILL]; POOLS];
    Aes256::soft().fill_pools(&mut key.clone(), &mut pools);
    assert!(stream == pools.as_flattened(), "generator vs kernel chain");
    // Every pool is the CTR keystream of blocks 0..255 under its own key.
    for (p, pool) in pools.iter().enumerate() {
        let mut blocks = [[0u8; 16]; 256];
        Aes256::soft().ctr_keystream(&key, 0, &mut blocks);
        let keystream = blocks.as_flattened();
        assert!(pool[..] == keystream[32..], "pool {p}: CTR from counter 0");
        key.copy_from_slice(&keystream[..32]);
    }
    // The generator after POOLS pools is `from_seed` of the chained key.
    let mut fresh = AesCtrPoolRng::from_seed(key);
    assert_eq!(one_fill(&mut rng, 9000), one_fill(&mut fresh, 9000));
}

#[test]
fn ctr_counter_wraps_through_hazmat() {
    // Cross-checked against the wrap-free computation: block `u128::MAX + 1`
    // is block 0.
    let key = [0x3c; 32];
    for aes in Aes256::available() {
        let mut high = [[0u8; 16]; 3];
        aes.ctr_keystream(&key, u128::MAX - 1, &mut high);
        let mut low = [[0u8; 16]; 1];
        aes.ctr_keystream(&key, 0, &mut low);
        assert_eq!(high[2], low[0], "{}", aes.name());
        assert_ne!(high[0], high[1]);
    }
    // ChaCha's 32-bit block counter: any value is a valid single block.
    let a = chacha_block::<20>(&[1; 8], u32::MAX, &[0; 3]);
    let b = chacha_block::<20>(&[1; 8], 0, &[0; 3]);
    assert_ne!(a, b);
}

#[test]
fn sponge_stream_is_the_pure_period_chain() {
    const PERIODS: usize = 1500;
    fn check<const ROUNDS: usize>(stream: &[u8]) {
        // The absorbed state of a 136-byte seed (one rate block): xor the seed
        // into the rate, permute; pad (domain 0x1F first, 0x80 last), permute.
        let seed: [u8; 136] = core::array::from_fn(|i| (i as u8).wrapping_mul(13) ^ 0x71);
        let mut state = [0u64; 25];
        for (lane, bytes) in state.iter_mut().zip(seed.chunks_exact(8)) {
            *lane ^= u64::from_le_bytes(bytes.try_into().unwrap());
        }
        Keccak::soft().permute::<ROUNDS>(&mut state);
        state[0] ^= 0x1F;
        state[16] ^= 0x80 << 56;
        Keccak::soft().permute::<ROUNDS>(&mut state);
        let mut out = [0u8; SPONGE_REFILL];
        for (p, chunk) in stream.chunks_exact(SPONGE_REFILL).enumerate() {
            Keccak::soft().squeeze_period::<ROUNDS>(&mut state, &mut out);
            assert!(chunk == out, "Keccak-p[1600, {ROUNDS}]: period {p}");
        }
    }
    let seed: [u8; 136] = core::array::from_fn(|i| (i as u8).wrapping_mul(13) ^ 0x71);
    let mut turbo = TurboShakeRng::from_seed(seed.into());
    check::<12>(&one_fill(&mut turbo, PERIODS * SPONGE_REFILL));
    let mut shake = ShakeRng::from_seed(seed.into());
    let head = one_fill(&mut shake, 1);
    check::<24>(&[head, one_fill(&mut shake, PERIODS * SPONGE_REFILL - 1)].concat());
}

// ---------------------------------------------------------------------------
// Several MiB at once; no repeated block
// ---------------------------------------------------------------------------

/// All 16-byte blocks of `bytes` are distinct.
fn assert_no_repeated_block(bytes: &[u8], what: &str) {
    let mut seen = HashSet::with_capacity(bytes.len() / 16);
    for (i, block) in bytes.chunks_exact(16).enumerate() {
        let block: [u8; 16] = block.try_into().unwrap();
        assert!(seen.insert(block), "{what}: 16-byte block {i} repeats");
    }
}

#[test]
fn multi_mib_request_equals_small_ones_and_never_repeats() {
    const LEN: usize = (4 << 20) + 13;
    macro_rules! check {
        ($rng:ty, $refill:expr) => {{
            let mut a = <$rng>::from_key(b"big");
            let mut b = <$rng>::from_key(b"big");
            let _ = a.next_u32();
            let _ = b.next_u32();
            let big = one_fill(&mut a, LEN);
            let mut small = Vec::with_capacity(LEN);
            while small.len() < LEN {
                let n = (LEN - small.len()).min(65_537);
                small.extend(one_fill(&mut b, n));
            }
            assert!(big == small, "{}: one request vs many", stringify!($rng));
            assert_eq!(a.next_u64(), b.next_u64());
            assert_no_repeated_block(&big, stringify!($rng));
        }};
    }
    for_each_generator!(check);
}

#[test]
fn thread_local_request_across_reseed_budgets_never_repeats() {
    let len = 3 * ratchet_rng::RESEED_BYTES + 5;
    let mut big = vec![0u8; len];
    ratchet_rng::try_fill(&mut big).expect("OS entropy");
    assert_no_repeated_block(&big, "thread-local generator");
}

// ---------------------------------------------------------------------------
// No panic from arbitrary input
// ---------------------------------------------------------------------------

/// Runs `f`, failing the property (not the process) if it panics.
fn no_panic<T>(what: &str, f: impl FnOnce() -> T) -> Result<T, TestCaseError> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|_| TestCaseError::fail(format!("{what} panicked")))
}

/// Backend names: real ones of every primitive, near misses, and any string.
/// The string edge of the typed backends: a generator on the backend called
/// `name` (through its family's `by_name`), keyed and seeded; `None` when no
/// backend of its family has that name here.
trait OnNamedBackend: SeedableRng {
    fn on_named_backend(key: &[u8], seed: Self::Seed, name: &str) -> Option<(Self, Self)>;
}

macro_rules! on_named_backend {
    ($($rng:ty: $family:ident),* $(,)?) => {$(
        impl OnNamedBackend for $rng {
            fn on_named_backend(key: &[u8], seed: Self::Seed, name: &str) -> Option<(Self, Self)> {
                let backend = $family::by_name(name)?;
                Some((
                    <$rng>::from_key_with_backend(key, backend),
                    <$rng>::from_seed_with_backend(seed, backend),
                ))
            }
        }
    )*};
}

on_named_backend!(
    TurboShakeRng: Keccak,
    ShakeRng: Keccak,
    ChaChaKeyErasureRng: ChaCha,
    ChaCha12KeyErasureRng: ChaCha,
    ChaCha20KeyErasureRng: ChaCha,
    AesCtrPoolRng: Aes256,
);

fn backend_name() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "soft",
            "x86_avx2",
            "x86_avx512",
            "aarch64_sha3",
            "aarch64_neon",
            "x86_aesni",
            "x86_vaes256",
            "x86_vaes512",
            "aarch64_aes",
            "",
            "SOFT",
            "soft ",
            "soft\0",
        ])
        .prop_map(String::from),
        any::<String>(),
    ]
}

/// Reads `lengths` through fill, integers and `rand` sampling.
fn read_everything<R: Rng>(rng: &mut R, lengths: &[usize]) -> usize {
    let mut total = 0;
    for &n in lengths {
        total += one_fill(rng, n).len();
        let _ = rng.next_u32();
        let _ = rng.next_u64();
        let _ = rng.try_next_u64();
        let _: f64 = rng.random();
        let _ = rng.random_range(0..=u64::MAX);
        let _ = rng.random_range(1..=n.max(1));
        let _ = rng.random_bool(0.5);
    }
    total
}

proptest! {
    #![proptest_config(proptest_config(64))]

    #[test]
    fn generators_never_panic(
        key in proptest::collection::vec(any::<u8>(), 0..300),
        lengths in proptest::collection::vec(0usize..=3 * AES_REFILL, 0..6),
        backend in backend_name(),
        state in any::<u64>(),
    ) {
        macro_rules! check {
            ($rng:ty, $refill:expr) => {{
                let name = stringify!($rng);
                no_panic(name, || {
                    read_everything(&mut <$rng>::from_key(&key), &lengths);
                    read_everything(&mut <$rng>::seed_from_u64(state), &lengths);
                    let mut parent = <$rng>::from_key(&key);
                    read_everything(&mut <$rng>::from_rng(&mut parent), &lengths);
                    read_everything(&mut parent.fork(), &lengths);
                    let mut seed = <$rng as SeedableRng>::Seed::default();
                    for (dst, src) in seed.as_mut().iter_mut().zip(key.iter().cycle()) {
                        *dst = *src;
                    }
                    if let Some((mut keyed, mut seeded)) =
                        <$rng>::on_named_backend(&key, seed.clone(), &backend)
                    {
                        read_everything(&mut keyed, &lengths);
                        read_everything(&mut seeded, &lengths);
                    }
                    let _ = format!("{:?}", <$rng>::from_seed(seed));
                })?;
            }};
        }
        for_each_generator!(check);
    }

    #[test]
    fn xofs_never_panic(
        domain in any::<u8>(),
        input in proptest::collection::vec(any::<u8>(), 0..600),
        splits in proptest::collection::vec(0usize..700, 0..5),
    ) {
        let valid = no_panic("TurboShake256::new", || TurboShake256::new(domain).is_ok())?;
        prop_assert_eq!(valid, (0x01..=0x7F).contains(&domain));
        prop_assert_eq!(
            no_panic("turboshake256", || turboshake256::<64>(&input, domain).is_ok())?,
            valid
        );
        no_panic("absorb / squeeze", || {
            let mut shake = Shake256::new();
            let mut turbo = TurboShake256::new(domain).unwrap_or_default();
            for chunk in input.chunks(splits.first().copied().unwrap_or(1).max(1)) {
                shake.absorb(chunk);
                turbo.absorb(chunk);
                shake.absorb(&[]);
            }
            let (mut shake, mut turbo) = (shake.finalize(), turbo.finalize());
            for &n in &splits {
                let mut out = vec![0u8; n];
                shake.squeeze(&mut out);
                turbo.squeeze(&mut out);
                shake.squeeze(&mut []);
            }
        })?;
    }

    #[test]
    fn hazmat_never_panics(
        name in backend_name(),
        counter in prop_oneof![any::<u128>(), (0u128..40).prop_map(|d| u128::MAX - d)],
        block_counter in any::<u32>(),
        nonce in any::<[u32; 3]>(),
        key in any::<[u8; 32]>(),
        words in any::<[u32; 8]>(),
        blocks in 0usize..40,
        periods in 0usize..3,
        seed_len in 0usize..300,
    ) {
        no_panic("hazmat", || {
            let keccak = Keccak::by_name(&name);
            let chacha = ChaCha::by_name(&name);
            let aes = Aes256::by_name(&name);
            if let Some(keccak) = keccak {
                let mut state = [0x55u64; 25];
                keccak.permute::<1>(&mut state);
                keccak.permute::<24>(&mut state);
                let mut out = [0u8; SPONGE_REFILL];
                keccak.squeeze_period::<12>(&mut state, &mut out);
            }
            if let Some(chacha) = chacha {
                let mut key = words;
                let mut out = vec![[0u8; CHACHA_REFILL]; periods];
                chacha.key_periods::<8>(&mut key, &mut out);
                if periods == 0 {
                    assert_eq!(key, words, "empty key_periods changed the key");
                }
            }
            if let Some(aes) = aes {
                let mut out = vec![[0u8; 16]; blocks];
                aes.ctr_keystream(&key, counter, &mut out);
                let mut k = key;
                let mut pools = vec![[0u8; AES_REFILL]; periods];
                aes.fill_pools(&mut k, &mut pools);
                if periods == 0 {
                    assert_eq!(k, key, "empty fill_pools changed the key");
                }
            }
            let _ = chacha_block::<8>(&words, block_counter, &nonce);
            let _ = chacha_block::<20>(&words, block_counter, &nonce);
            let bytes = vec![0u8; seed_len];
            let _ = SpongeSeed::try_from(&bytes[..]);
            let _ = <[u8; 32]>::try_from(&bytes[..]);
        })?;
    }
}
