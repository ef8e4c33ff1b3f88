//! ratchet-rng on `wasm32-unknown-unknown` in Node, the OS source being
//! `crypto.getRandomValues` (the `wasm_js` feature): seeded streams are the golden
//! ones, OS-seeded generators and the thread-local generator work.
#![cfg(target_arch = "wasm32")]

use std::collections::HashSet;

use ratchet_rng::rand_core::{Rng, SeedableRng};
use ratchet_rng::{
    AesCtrPoolRng, ChaCha12KeyErasureRng, ChaCha20KeyErasureRng, ChaChaKeyErasureRng, RESEED_BYTES,
    ShakeRng, TurboShakeRng,
};
use wasm_bindgen_test::wasm_bindgen_test;

/// The value-stability contract, from the main crate's tests (frozen there).
const GOLDEN: &str = include_str!("../../../tests/data/golden_streams.txt");

/// The bytes of the line `name: hex` of the golden file.
fn golden(name: &str) -> Vec<u8> {
    let hex = GOLDEN
        .lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(": "))
        .unwrap_or_else(|| panic!("no golden line {name}"));
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex digit"))
        .collect()
}

/// The golden file's seeds: byte `i` of the seed named `zero`, `iota` or `de`.
fn seed_byte(seed: &str, i: usize) -> u8 {
    match seed {
        "zero" => 0x00,
        "iota" => i as u8,
        "de" => 0xde,
        _ => unreachable!("unknown seed {seed}"),
    }
}

/// Checks `G`'s three seeded golden streams (4096 bytes each, read in uneven
/// pieces so that the buffering is exercised too) and its `from_key` line.
fn check_golden<G: Rng + SeedableRng>(name: &str, from_key: fn(&[u8]) -> G) {
    for seed_name in ["zero", "iota", "de"] {
        let expected = golden(&format!("{name}/{seed_name}"));
        assert_eq!(expected.len(), 4096);
        let mut seed = G::Seed::default();
        for (i, b) in seed.as_mut().iter_mut().enumerate() {
            *b = seed_byte(seed_name, i);
        }
        let mut rng = G::from_seed(seed);
        let mut got = Vec::with_capacity(expected.len());
        let mut piece = 1;
        while got.len() < expected.len() {
            let mut buf = vec![0u8; piece.min(expected.len() - got.len())];
            rng.fill_bytes(&mut buf);
            got.extend_from_slice(&buf);
            piece = piece * 3 + 1;
        }
        assert!(got == expected, "{name}/{seed_name}: not the golden stream");
    }
    let expected = golden(&format!("{name}/from_key"));
    let mut got = vec![0u8; expected.len()];
    from_key(b"ratchet-rng golden from_key").fill_bytes(&mut got);
    assert!(got == expected, "{name}/from_key: not the golden stream");
}

#[wasm_bindgen_test]
fn seeded_generators_give_the_golden_streams() {
    check_golden("turboshake", TurboShakeRng::from_key);
    check_golden("shake", ShakeRng::from_key);
    check_golden("chacha8", ChaChaKeyErasureRng::from_key);
    check_golden("chacha12", ChaCha12KeyErasureRng::from_key);
    check_golden("chacha20", ChaCha20KeyErasureRng::from_key);
    check_golden("aes_ctr_pool", AesCtrPoolRng::from_key);
}

#[wasm_bindgen_test]
fn the_portable_backends_serve_wasm() {
    // No SIMD backend exists for wasm32: every family is on its portable code.
    let backends = ratchet_rng::backends().to_string();
    assert_eq!(backends.lines().count(), 3, "{backends}");
    for line in backends.lines() {
        assert!(line.ends_with(": soft"), "not portable on wasm32: {line}");
    }
}

/// `n` outputs of 16 bytes from `next`; asserts that none repeats and none is zero.
fn distinct_outputs(n: usize, mut next: impl FnMut() -> [u8; 16]) {
    let mut seen = HashSet::new();
    for _ in 0..n {
        let out = next();
        assert_ne!(out, [0; 16], "zeros served");
        assert!(seen.insert(out), "an output repeated");
    }
}

#[wasm_bindgen_test]
fn os_seeded_generators_work() {
    // Each generator seeded from crypto.getRandomValues: distinct seeds give
    // distinct streams (a constant or failing source would not).
    distinct_outputs(16, || {
        let mut out = [0u8; 16];
        ChaChaKeyErasureRng::from_os_rng().fill_bytes(&mut out);
        out
    });
    distinct_outputs(16, || {
        let mut out = [0u8; 16];
        AesCtrPoolRng::try_from_os_rng()
            .expect("OS source")
            .fill_bytes(&mut out);
        out
    });
    distinct_outputs(16, || {
        let mut out = [0u8; 16];
        TurboShakeRng::from_os_rng().fill_bytes(&mut out);
        out
    });
}

#[wasm_bindgen_test]
fn thread_local_generator_works() {
    let mut rng = ratchet_rng::rng();
    distinct_outputs(1000, || {
        let mut out = [0u8; 16];
        rng.fill_bytes(&mut out);
        out
    });
    distinct_outputs(1000, || {
        let mut out = [0u8; 16];
        out[..8].copy_from_slice(&ratchet_rng::u64().to_le_bytes());
        out[8..12].copy_from_slice(&ratchet_rng::u32().to_le_bytes());
        out[12..].copy_from_slice(&ratchet_rng::rng().next_u32().to_le_bytes());
        out
    });
    distinct_outputs(1000, || {
        let mut out = [0u8; 16];
        ratchet_rng::fill(&mut out);
        out
    });
    distinct_outputs(1000, || {
        let mut out = [0u8; 16];
        ratchet_rng::try_fill(&mut out).expect("OS source");
        out
    });
    // Past the reseed budget: the generator reseeds from the OS source mid-request.
    let mut big = vec![0u8; RESEED_BYTES + 4096];
    ratchet_rng::fill(&mut big);
    distinct_outputs(1, || {
        let mut out = [0u8; 16];
        out.copy_from_slice(&big[big.len() - 16..]);
        out
    });
    let blocks: HashSet<&[u8]> = big.chunks_exact(64).collect();
    assert_eq!(blocks.len(), big.len() / 64, "a 64-byte block repeated");
    assert_eq!(format!("{rng:?}"), "ThreadRng { .. }");
}
