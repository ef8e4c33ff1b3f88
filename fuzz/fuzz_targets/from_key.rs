//! `from_key` with arbitrary key bytes: it never panics, it is deterministic, and
//! each generator's stream is the one `docs/STREAMS.md` defines,
//! checked against RustCrypto's SHAKE256 / TurboSHAKE256 (an independent Keccak):
//!
//! - `ShakeRng::from_key(k)` / `TurboShakeRng::from_key(k)`: the first 1088 bytes
//!   are SHAKE256(k) / TurboSHAKE256(k, 0x1F); a 136-byte key equals `from_seed`.
//! - `ChaCha{,12,20}KeyErasureRng::from_key(k)` and `AesCtrPoolRng::from_key(k)`:
//!   `from_seed` of the first 32 bytes of TurboSHAKE256(k, D), D = 0x08, 0x0C,
//!   0x14, 0x41.
//!
//! Input layout: byte 0 selects the generator (mod 6), byte 1 and 2 give the read
//! length (little-endian, mod 3 * 1088 + 1, so reads cross the first ratchet),
//! the rest is the key.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ratchet_rng::rand_core::{Rng, SeedableRng};
use ratchet_rng::{
    AesCtrPoolRng, ChaCha12KeyErasureRng, ChaCha20KeyErasureRng, ChaChaKeyErasureRng, ShakeRng,
    SpongeSeed, TurboShakeRng,
};

#[path = "../../tests/common/oracle.rs"]
mod oracle;
use oracle::{shake256, turboshake256};

/// Output bytes of the sponge generators before the first ratchet.
const FIRST_PERIOD_BYTES: usize = 1088;
/// The sponge generators' seed: one rate block.
const SPONGE_SEED_BYTES: usize = 136;

fn read<R: Rng>(mut rng: R, len: usize) -> Vec<u8> {
    let mut out = vec![0u8; len];
    rng.fill_bytes(&mut out);
    out
}

/// The first `len` bytes of `from_key(key)`, checked to be the same twice.
fn read_from_key<R: Rng>(from_key: fn(&[u8]) -> R, key: &[u8], len: usize) -> Vec<u8> {
    let got = read(from_key(key), len);
    assert_eq!(
        got,
        read(from_key(key), len),
        "from_key is not deterministic"
    );
    got
}

/// A 32-byte-key generator: deterministic, and `from_seed` of the derived seed.
fn check_derived<R: Rng + SeedableRng<Seed = [u8; 32]>>(
    from_key: fn(&[u8]) -> R,
    domain: u8,
    key: &[u8],
    len: usize,
) {
    let got = read_from_key(from_key, key, len);
    let seed: [u8; 32] = turboshake256(key, domain, 32).try_into().unwrap();
    assert_eq!(
        got,
        read(R::from_seed(seed), len),
        "seed is not TurboSHAKE256(key, D)[..32]"
    );
}

/// A sponge generator: deterministic, the XOF for the first period, and
/// `from_seed` for a one-block key.
fn check_sponge<R: Rng + SeedableRng<Seed = SpongeSeed>>(
    from_key: fn(&[u8]) -> R,
    xof: impl Fn(&[u8], usize) -> Vec<u8>,
    key: &[u8],
    len: usize,
) {
    let got = read_from_key(from_key, key, len);
    let first = len.min(FIRST_PERIOD_BYTES);
    assert_eq!(
        got[..first],
        xof(key, first)[..],
        "first period is not the XOF"
    );
    if let Ok(block) = <[u8; SPONGE_SEED_BYTES]>::try_from(key) {
        assert_eq!(
            got,
            read(R::from_seed(block.into()), len),
            "from_key != from_seed"
        );
    }
}

fuzz_target!(|data: &[u8]| {
    let [which, len_lo, len_hi, key @ ..] = data else {
        return;
    };
    let len = usize::from(u16::from_le_bytes([*len_lo, *len_hi])) % (3 * FIRST_PERIOD_BYTES + 1);
    match which % 6 {
        0 => check_sponge(
            TurboShakeRng::from_key,
            |k, n| turboshake256(k, 0x1F, n),
            key,
            len,
        ),
        1 => check_sponge(ShakeRng::from_key, shake256, key, len),
        2 => check_derived(ChaChaKeyErasureRng::from_key, 0x08, key, len),
        3 => check_derived(ChaCha12KeyErasureRng::from_key, 0x0C, key, len),
        4 => check_derived(ChaCha20KeyErasureRng::from_key, 0x14, key, len),
        _ => check_derived(AesCtrPoolRng::from_key, 0x41, key, len),
    }
});
