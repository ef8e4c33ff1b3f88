//! Every backend this CPU has equals `soft` on arbitrary inputs, through the
//! `hazmat` API: the raw primitives (Keccak-p permutation and squeeze periods,
//! ChaCha key periods, AES-256 CTR keystream at any counter including across the
//! 2^128 wrap, AES pools) and every generator constructed on an explicit backend.
//! Which backends run depends on the CPU and the build switches; `soft` is always
//! the reference.
//!
//! Input layout: byte 0 selects the check (mod 9), byte 1 is a size parameter,
//! the rest is the check's material (state, key, counter, generator key), read
//! with zero padding when the input is short.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ratchet_rng::hazmat::{Aes256, ChaCha, Keccak};
use ratchet_rng::rand_core::Rng;
use ratchet_rng::{
    AesCtrPoolRng, ChaCha12KeyErasureRng, ChaCha20KeyErasureRng, ChaChaKeyErasureRng, ShakeRng,
    TurboShakeRng,
};

/// Keccak-p[1600] lanes.
const LANES: usize = 25;
/// A sponge generator's output per ratchet period.
const RATCHET_PERIOD_BYTES: usize = 1088;
/// A chacha8rand key period's output (1024 bytes minus the next key).
const KEY_PERIOD_OUTPUT_BYTES: usize = 992;
/// An AES pool's output (4096 bytes minus the next key).
const POOL_OUTPUT_BYTES: usize = 4064;

/// Reads fixed-size material from the input, zero-padded past its end.
struct Material<'a>(&'a [u8]);

impl Material<'_> {
    fn bytes<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0u8; N];
        let n = N.min(self.0.len());
        out[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        out
    }

    fn keccak_state(&mut self) -> [u64; LANES] {
        core::array::from_fn(|_| u64::from_le_bytes(self.bytes()))
    }
}

fn keccak_permute<const ROUNDS: usize>(state: [u64; LANES]) {
    let mut want = state;
    Keccak::soft().permute::<ROUNDS>(&mut want);
    for keccak in Keccak::available() {
        let mut got = state;
        keccak.permute::<ROUNDS>(&mut got);
        assert_eq!(got, want, "Keccak-p[{ROUNDS}] on {}", keccak.name());
    }
}

fn keccak_squeeze<const ROUNDS: usize>(state: [u64; LANES], periods: usize) {
    let run = |keccak: Keccak| {
        let mut state = state;
        let mut out = vec![[0u8; RATCHET_PERIOD_BYTES]; periods];
        for period in &mut out {
            keccak.squeeze_period::<ROUNDS>(&mut state, period);
        }
        (state, out)
    };
    let want = run(Keccak::soft());
    for keccak in Keccak::available() {
        assert!(
            run(keccak) == want,
            "squeeze_period::<{ROUNDS}> on {}",
            keccak.name()
        );
    }
}

fn chacha_periods<const ROUNDS: usize>(key: [u8; 32], periods: usize) {
    let key: [u32; 8] = core::array::from_fn(|i| {
        u32::from_le_bytes([key[4 * i], key[4 * i + 1], key[4 * i + 2], key[4 * i + 3]])
    });
    let run = |chacha: ChaCha| {
        let mut key = key;
        let mut out = vec![[0u8; KEY_PERIOD_OUTPUT_BYTES]; periods];
        chacha.key_periods::<ROUNDS>(&mut key, &mut out);
        (key, out)
    };
    let want = run(ChaCha::soft());
    for chacha in ChaCha::available() {
        assert!(
            run(chacha) == want,
            "ChaCha{ROUNDS} key_periods on {}",
            chacha.name()
        );
    }
}

fn aes_ctr(key: [u8; 32], counter: u128, blocks: usize) {
    let run = |aes: Aes256| {
        let mut out = vec![[0u8; 16]; blocks];
        aes.ctr_keystream(&key, counter, &mut out);
        out
    };
    let want = run(Aes256::soft());
    for aes in Aes256::available() {
        assert!(
            run(aes) == want,
            "ctr_keystream at {counter:#x} on {}",
            aes.name()
        );
    }
}

fn aes_pools(key: [u8; 32], pools: usize) {
    let run = |aes: Aes256| {
        let mut key = key;
        let mut out = vec![[0u8; POOL_OUTPUT_BYTES]; pools];
        aes.fill_pools(&mut key, &mut out);
        (key, out)
    };
    let want = run(Aes256::soft());
    for aes in Aes256::available() {
        assert!(run(aes) == want, "fill_pools on {}", aes.name());
    }
}

/// A generator on every available backend: the same `reads` give the same bytes.
fn generator<B: Copy + core::fmt::Display, R: Rng>(
    soft: B,
    available: impl Iterator<Item = B>,
    make: impl Fn(B) -> R,
    reads: &[usize],
) {
    let read = |mut rng: R| {
        let mut out = Vec::new();
        for &len in reads {
            let start = out.len();
            out.resize(start + len, 0);
            rng.fill_bytes(&mut out[start..]);
        }
        out
    };
    let want = read(make(soft));
    for backend in available {
        assert!(
            read(make(backend)) == want,
            "generator on {backend} differs from soft"
        );
    }
}

fuzz_target!(|data: &[u8]| {
    let [which, size, rest @ ..] = data else {
        return;
    };
    let size = usize::from(*size);
    let mut m = Material(rest);
    match which % 9 {
        0 => {
            let state = m.keccak_state();
            keccak_permute::<12>(state);
            keccak_permute::<24>(state);
        }
        1 => {
            let state = m.keccak_state();
            keccak_squeeze::<12>(state, 1 + size % 3);
            keccak_squeeze::<24>(state, 1 + size % 3);
        }
        // 1..=20 key periods: across the AVX2 (2) and AVX-512 (4 groups) batches.
        2 => chacha_periods::<8>(m.bytes(), 1 + size % 20),
        3 => chacha_periods::<12>(m.bytes(), 1 + size % 20),
        4 => chacha_periods::<20>(m.bytes(), 1 + size % 20),
        5 => {
            // Half the cases start within 64 blocks below the 2^128 wrap.
            let key = m.bytes();
            let raw = u128::from_le_bytes(m.bytes());
            let counter = if size & 0x80 != 0 {
                u128::MAX - (raw % 64)
            } else {
                raw
            };
            aes_ctr(key, counter, size % 70);
        }
        6 => aes_pools(m.bytes(), 1 + size % 3),
        7 | 8 => {
            // Generators keyed by the rest of the input, read in pieces whose
            // lengths come from the key bytes (up to ~2 refills each).
            let key = m.0;
            let reads: Vec<usize> = key
                .chunks(2)
                .take(1 + size % 8)
                .map(|c| usize::from(c[0]) * 37 + usize::from(*c.last().unwrap()))
                .collect();
            match (which % 9 == 7, size % 3) {
                (true, 0) => generator(
                    Keccak::soft(),
                    Keccak::available(),
                    |b| TurboShakeRng::from_key_with_backend(key, b),
                    &reads,
                ),
                (true, 1) => generator(
                    Keccak::soft(),
                    Keccak::available(),
                    |b| ShakeRng::from_key_with_backend(key, b),
                    &reads,
                ),
                (true, _) => generator(
                    Aes256::soft(),
                    Aes256::available(),
                    |b| AesCtrPoolRng::from_key_with_backend(key, b),
                    &reads,
                ),
                (false, 0) => generator(
                    ChaCha::soft(),
                    ChaCha::available(),
                    |b| ChaChaKeyErasureRng::from_key_with_backend(key, b),
                    &reads,
                ),
                (false, 1) => generator(
                    ChaCha::soft(),
                    ChaCha::available(),
                    |b| ChaCha12KeyErasureRng::from_key_with_backend(key, b),
                    &reads,
                ),
                (false, _) => generator(
                    ChaCha::soft(),
                    ChaCha::available(),
                    |b| ChaCha20KeyErasureRng::from_key_with_backend(key, b),
                    &reads,
                ),
            }
        }
        _ => unreachable!(),
    }
});
