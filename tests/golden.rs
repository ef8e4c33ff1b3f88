//! Golden streams: the value-stability contract of every generator.
//!
//! `tests/data/golden_streams.txt` holds the first 4096 bytes of each generator
//! for three fixed seeds, and the first 64 bytes of `from_key` for a fixed key.
//! The file was written once by `write_golden_file` below (run by hand, see its
//! doc) and is frozen: if any line stops matching, a seeded stream changed, which
//! is a breaking change, and this test fails.
//!
//! Where another implementation defines a stream, the golden bytes are also
//! checked against it here, so the file cannot freeze a wrong stream: the sponge
//! generators against RandomSHAKE (`randomshake.txt`), `ChaChaKeyErasureRng`
//! against Go (`chacha8rand.txt`). ChaCha12/20 and AES are checked against
//! RustCrypto compositions in `reference_streams.rs`.

use crate::common;

use std::fmt::Write as _;

use common::{field, hex};
use ratchet_rng::rand_core::{Rng, SeedableRng};
use ratchet_rng::{
    AesCtrPoolRng, ChaCha12KeyErasureRng, ChaCha20KeyErasureRng, ChaChaKeyErasureRng, ShakeRng,
    TurboShakeRng,
};

const GOLDEN: &str = include_str!("data/golden_streams.txt");
const GOLDEN_PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/golden_streams.txt");

/// Bytes of each seeded stream kept.
const STREAM_BYTES: usize = 4096;
/// Bytes of each `from_key` stream kept.
const FROM_KEY_BYTES: usize = 64;
/// The `from_key` key.
const KEY: &[u8] = b"ratchet-rng golden from_key";

/// Byte `i` of a seed of any length.
type SeedPattern = fn(usize) -> u8;

/// The seeds, by name.
const SEEDS: [(&str, SeedPattern); 3] =
    [("zero", |_| 0x00), ("iota", |i| i as u8), ("de", |_| 0xde)];

fn first_bytes<R: Rng>(mut rng: R, len: usize) -> Vec<u8> {
    let mut out = vec![0u8; len];
    rng.fill_bytes(&mut out);
    out
}

fn seeded<R: Rng + SeedableRng>(pattern: SeedPattern) -> R {
    let mut seed = R::Seed::default();
    for (i, b) in seed.as_mut().iter_mut().enumerate() {
        *b = pattern(i);
    }
    R::from_seed(seed)
}

/// Every (line name, bytes) the golden file pins, computed now.
fn current_lines() -> Vec<(String, Vec<u8>)> {
    fn lines_for<R: Rng + SeedableRng>(
        name: &str,
        from_key: fn(&[u8]) -> R,
        out: &mut Vec<(String, Vec<u8>)>,
    ) {
        for (seed_name, pattern) in SEEDS {
            out.push((
                format!("{name}/{seed_name}"),
                first_bytes(seeded::<R>(pattern), STREAM_BYTES),
            ));
        }
        out.push((
            format!("{name}/from_key"),
            first_bytes(from_key(KEY), FROM_KEY_BYTES),
        ));
    }
    let mut out = Vec::new();
    lines_for("turboshake", TurboShakeRng::from_key, &mut out);
    lines_for("shake", ShakeRng::from_key, &mut out);
    lines_for("chacha8", ChaChaKeyErasureRng::from_key, &mut out);
    lines_for("chacha12", ChaCha12KeyErasureRng::from_key, &mut out);
    lines_for("chacha20", ChaCha20KeyErasureRng::from_key, &mut out);
    lines_for("aes_ctr_pool", AesCtrPoolRng::from_key, &mut out);
    out
}

#[test]
fn every_generator_matches_its_golden_stream() {
    let lines = current_lines();
    let pinned = GOLDEN.lines().filter(|l| !l.starts_with('#')).count();
    assert_eq!(
        pinned,
        lines.len(),
        "golden file has a missing or extra line"
    );
    for (name, bytes) in lines {
        assert!(
            hex(field(GOLDEN, &name)) == bytes,
            "{name}: the stream changed; a changed stream is a breaking change"
        );
    }
}

#[test]
fn golden_streams_agree_with_other_implementations() {
    let randomshake = include_str!("data/randomshake.txt");
    let go = include_str!("data/chacha8rand.txt");
    for (ours, theirs) in [
        (
            "turboshake/iota",
            field(randomshake, "turboshake256_seed_i_bytes4352"),
        ),
        (
            "turboshake/de",
            field(randomshake, "turboshake256_seed_de_bytes4352"),
        ),
        (
            "shake/iota",
            field(randomshake, "shake256_seed_i_bytes4352"),
        ),
        ("shake/de", field(randomshake, "shake256_seed_de_bytes4352")),
        ("chacha8/iota", field(go, "chacha8rand_seed_i_read4096")),
        ("chacha8/de", field(go, "chacha8rand_seed_de_read4096")),
    ] {
        assert_eq!(
            hex(field(GOLDEN, ours)),
            hex(theirs)[..STREAM_BYTES],
            "{ours}"
        );
    }
}

/// Rewrites the golden file from the current code. Only for adding a generator
/// (never to "fix" a failing golden test): run
/// `cargo test --test outputs -- --ignored --exact golden::write_golden_file`, then review
/// the diff: existing lines must not change.
#[test]
#[ignore = "writes tests/data/golden_streams.txt; run by hand only"]
fn write_golden_file() {
    let mut text = String::from(
        "# ratchet-rng golden streams: the value-stability contract of every generator.\n\
         # Written by ratchet-rng 0.1.0's `write_golden_file` in tests/golden.rs\n\
         # (`cargo test --test outputs -- --ignored --exact golden::write_golden_file`) from the code\n\
         # whose streams are checked against RandomSHAKE's vectors (sponges), Go's\n\
         # math/rand/v2 ChaCha8 vectors (chacha8) and RustCrypto compositions (chacha12,\n\
         # chacha20, aes_ctr_pool). Frozen: a line that changes is a breaking change.\n\
         # GEN/SEED: the first 4096 bytes of GEN::from_seed(seed), where seed (136 bytes for\n\
         # turboshake/shake, 32 for the others) is zero = all 0x00, iota = bytes 0, 1, 2, ...,\n\
         # de = all 0xde. GEN/from_key: the first 64 bytes of\n\
         # GEN::from_key(b\"ratchet-rng golden from_key\").\n",
    );
    for (name, bytes) in current_lines() {
        write!(text, "{name}: ").unwrap();
        for b in bytes {
            write!(text, "{b:02x}").unwrap();
        }
        text.push('\n');
    }
    std::fs::write(GOLDEN_PATH, text).expect("write golden file");
}

/// The `SeedTree` streams are part of the contract too: every generator line of
/// `seed_tree_vectors.txt` (`GEN "PATH": HEX`, the first 64 bytes of GEN at the
/// node of PATH under the root key below) must hold. `tests/seed_tree.rs` holds
/// the same file to an independent implementation of docs/DERIVATION.md.
#[test]
fn seed_tree_streams_match_their_vectors() {
    use ratchet_rng::SeedTree;
    const VECTORS: &str = include_str!("data/seed_tree_vectors.txt");
    let mut checked = 0;
    for line in VECTORS.lines().filter(|l| !l.starts_with('#')) {
        let (head, value) = line.split_once(": ").expect("`GEN \"PATH\": HEX`");
        let (generator, path) = head.split_once(' ').expect("`GEN \"PATH\"`");
        if generator == "node" {
            continue;
        }
        let mut node = SeedTree::new(b"ratchet-rng seed tree vectors");
        for step in path.trim_matches('"').split('/').filter(|s| !s.is_empty()) {
            node = match step.strip_prefix("label:") {
                Some(label) => node.child_label(label.as_bytes()),
                None => node.child(step.parse().expect("index")),
            };
        }
        let got = match generator {
            "turboshake" => first_bytes(node.rng::<TurboShakeRng>(), 64),
            "shake" => first_bytes(node.rng::<ShakeRng>(), 64),
            "chacha8" => first_bytes(node.rng::<ChaChaKeyErasureRng>(), 64),
            "chacha12" => first_bytes(node.rng::<ChaCha12KeyErasureRng>(), 64),
            "chacha20" => first_bytes(node.rng::<ChaCha20KeyErasureRng>(), 64),
            "aes_ctr_pool" => first_bytes(node.rng::<AesCtrPoolRng>(), 64),
            other => panic!("unknown generator {other}"),
        };
        assert_eq!(got, hex(value), "{generator} {path}");
        checked += 1;
    }
    assert_eq!(checked, 36);
}
