//! The ChaCha and AES generators against other implementations, through the
//! public API:
//!
//! - `ChaChaKeyErasureRng` against Go itself: `tests/data/chacha8rand.txt`
//!   (copied unchanged from the project's shared vectors; its header says how Go
//!   produced it): the first 4096 `Read` bytes and 600 `Uint64` values for two
//!   seeds, whatever the call pattern.
//! - The chacha8rand layout for 8, 12 and 20 rounds against a composition of
//!   RustCrypto's `chacha20` stream ciphers: a standard ChaCha block is the
//!   chacha8rand block plus the feed-forward of the constant, counter and nonce
//!   words, so subtracting those and interleaving four blocks gives the layout.
//! - `AesCtrPoolRng` against RustCrypto's `aes` + `ctr` (`Ctr128BE<Aes256>`): each
//!   4096-byte pool is the CTR keystream from counter 0, split 32 / 4064, with
//!   key chaining.

use crate::common;

use chacha20::cipher::{KeyIvInit, StreamCipher};
use common::{field, hex, one_fill};
use ratchet_rng::rand_core::{Rng, SeedableRng};
use ratchet_rng::{
    AesCtrPoolRng, ChaCha12KeyErasureRng, ChaCha20KeyErasureRng, ChaChaKeyErasureRng,
};

const GO_FILE: &str = include_str!("data/chacha8rand.txt");

fn go_seed(name: &str) -> [u8; 32] {
    hex(field(GO_FILE, &format!("{name}_seed")))
        .try_into()
        .expect("32-byte seed")
}

#[test]
fn chacha8_matches_go_read() {
    for name in ["chacha8rand_seed_i", "chacha8rand_seed_de"] {
        let want = hex(field(GO_FILE, &format!("{name}_read4096")));
        assert_eq!(want.len(), 4096);
        for split in [4096usize, 1, 7, 991, 992, 993, 1000] {
            let mut rng = ChaChaKeyErasureRng::from_seed(go_seed(name));
            let mut got = Vec::new();
            while got.len() < 4096 {
                let n = split.min(4096 - got.len());
                got.extend(one_fill(&mut rng, n));
            }
            assert_eq!(got, want, "{name}, reads of {split}");
        }
    }
}

#[test]
fn chacha8_matches_go_uint64() {
    for name in ["chacha8rand_seed_i", "chacha8rand_seed_de"] {
        let want = hex(field(GO_FILE, &format!("{name}_uint64x600_le")));
        assert_eq!(want.len(), 600 * 8);
        let mut rng = ChaChaKeyErasureRng::from_seed(go_seed(name));
        for (i, bytes) in want.chunks_exact(8).enumerate() {
            let value = u64::from_le_bytes(bytes.try_into().unwrap());
            assert_eq!(rng.next_u64(), value, "{name} Uint64 #{i}");
        }
    }
}

/// "expand 32-byte k".
const SIGMA: [u32; 4] = [0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574];

/// `periods` key periods of the chacha8rand layout, built from a standard ChaCha
/// keystream `keystream(key, 1024 bytes from block 0, zero nonce)`.
fn chacha8rand_oracle(
    seed: [u8; 32],
    periods: usize,
    keystream: fn(&[u8; 32], &mut [u8]),
) -> Vec<u8> {
    let mut key = seed;
    let mut out = Vec::new();
    for _ in 0..periods {
        let mut ks = vec![0u8; 1024];
        keystream(&key, &mut ks);
        let words: Vec<u32> = ks
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
            .collect();
        let mut period = Vec::with_capacity(1024);
        for group in 0..4 {
            for w in 0..16 {
                for lane in 0..4 {
                    let block = 4 * group + lane;
                    let mut word = words[16 * block + w];
                    // Undo the feed-forward of everything but the key words.
                    match w {
                        0..=3 => word = word.wrapping_sub(SIGMA[w]),
                        12 => word = word.wrapping_sub(block as u32),
                        _ => {} // key words keep it; the nonce words are zero
                    }
                    period.extend_from_slice(&word.to_le_bytes());
                }
            }
        }
        out.extend_from_slice(&period[..992]);
        key = period[992..].try_into().unwrap();
    }
    out
}

fn keystream<C: KeyIvInit + StreamCipher>(key: &[u8; 32], out: &mut [u8]) {
    out.fill(0);
    let mut cipher = C::new_from_slices(key, &[0u8; 12]).expect("32-byte key, 12-byte nonce");
    cipher.apply_keystream(out);
}

#[test]
fn chacha_layout_matches_rustcrypto_composition() {
    for seed in [[0u8; 32], [0xde; 32], core::array::from_fn(|i| i as u8 * 3)] {
        let want = chacha8rand_oracle(seed, 3, keystream::<chacha20::ChaCha8>);
        assert_eq!(
            one_fill(&mut ChaChaKeyErasureRng::from_seed(seed), 3 * 992),
            want
        );
        let want = chacha8rand_oracle(seed, 3, keystream::<chacha20::ChaCha12>);
        assert_eq!(
            one_fill(&mut ChaCha12KeyErasureRng::from_seed(seed), 3 * 992),
            want
        );
        let want = chacha8rand_oracle(seed, 3, keystream::<chacha20::ChaCha20>);
        assert_eq!(
            one_fill(&mut ChaCha20KeyErasureRng::from_seed(seed), 3 * 992),
            want
        );
    }
}

/// `pools` pools of `AesCtrPoolRng` from RustCrypto's AES-256-CTR.
fn aes_pool_oracle(seed: [u8; 32], pools: usize) -> Vec<u8> {
    type Aes256Ctr = ctr::Ctr128BE<aes::Aes256>;
    let mut key = seed;
    let mut out = Vec::new();
    for _ in 0..pools {
        let mut pool = vec![0u8; 4096];
        let mut cipher = Aes256Ctr::new(&key.into(), &[0u8; 16].into());
        cipher.apply_keystream(&mut pool);
        key = pool[..32].try_into().unwrap();
        out.extend_from_slice(&pool[32..]);
    }
    out
}

#[test]
fn aes_pool_matches_rustcrypto_ctr() {
    for seed in [[0u8; 32], [0xde; 32], core::array::from_fn(|i| i as u8)] {
        let want = aes_pool_oracle(seed, 4);
        // One bulk request (pools generated straight into the caller's buffer)...
        assert_eq!(
            one_fill(&mut AesCtrPoolRng::from_seed(seed), 4 * 4064),
            want
        );
        // ... and through the pool, in small pieces.
        let mut rng = AesCtrPoolRng::from_seed(seed);
        let mut got = Vec::new();
        while got.len() < want.len() {
            got.extend_from_slice(&rng.next_u64().to_le_bytes());
        }
        assert_eq!(got, want);
    }
}
