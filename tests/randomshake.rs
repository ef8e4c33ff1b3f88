//! `ShakeRng` / `TurboShakeRng` against vectors produced by the C++ library
//! RandomSHAKE itself: `tests/data/randomshake.txt`, copied unchanged from the
//! project's shared vectors (its header names the RandomSHAKE and sha3 commits).
//!
//! For each XOF and each of two seeds the file has the first 4352 bytes (four
//! ratchet periods) from one `generate()` call; for TurboSHAKE256 and the seed
//! `00 01 .. 87` it also has 600 `u32` and 600 `u64` values from RandomSHAKE's
//! integer interface. Every one must match, whatever the call pattern.

use crate::common;

use common::{field, hex};
use ratchet_rng::rand_core::{Rng, SeedableRng};
use ratchet_rng::{ShakeRng, SpongeSeed, TurboShakeRng};

const FILE: &str = include_str!("data/randomshake.txt");

fn seed(name: &str) -> SpongeSeed {
    let bytes: [u8; 136] = hex(field(FILE, &format!("{name}_seed")))
        .try_into()
        .expect("136-byte seed");
    bytes.into()
}

fn expected_bytes(name: &str) -> Vec<u8> {
    let v = hex(field(FILE, &format!("{name}_bytes4352")));
    assert_eq!(v.len(), 4352);
    v
}

/// Reads `len` bytes with `fill_bytes` calls of the given sizes, cycled.
fn read_in_chunks<R: Rng>(rng: &mut R, len: usize, sizes: &[usize]) -> Vec<u8> {
    let mut out = vec![0u8; len];
    let mut at = 0;
    for &size in sizes.iter().cycle() {
        if at == len {
            break;
        }
        let end = (at + size).min(len);
        rng.fill_bytes(&mut out[at..end]);
        at = end;
    }
    out
}

const SPLITS: [&[usize]; 7] = [
    &[4352],
    &[1],
    &[7, 13],
    &[135, 136, 137],
    &[1087, 1, 1088, 1089],
    &[2176, 0, 2176],
    &[4000, 352],
];

fn check_stream<R: Rng + SeedableRng<Seed = SpongeSeed>>(name: &str) {
    let want = expected_bytes(name);
    for split in SPLITS {
        let mut rng = R::from_seed(seed(name));
        assert_eq!(
            read_in_chunks(&mut rng, 4352, split),
            want,
            "{name} split {split:?}"
        );
    }
    // Interleaved integer reads see the same stream.
    let mut rng = R::from_seed(seed(name));
    let mut got = Vec::new();
    while got.len() + 15 <= want.len() {
        got.extend_from_slice(&rng.next_u32().to_le_bytes());
        got.extend_from_slice(&rng.next_u64().to_le_bytes());
        let mut three = [0u8; 3];
        rng.fill_bytes(&mut three);
        got.extend_from_slice(&three);
    }
    assert_eq!(got, want[..got.len()], "{name} interleaved");
}

#[test]
fn turboshake256_seed_i_bytes() {
    check_stream::<TurboShakeRng>("turboshake256_seed_i");
}

#[test]
fn turboshake256_seed_de_bytes() {
    check_stream::<TurboShakeRng>("turboshake256_seed_de");
}

#[test]
fn shake256_seed_i_bytes() {
    check_stream::<ShakeRng>("shake256_seed_i");
}

#[test]
fn shake256_seed_de_bytes() {
    check_stream::<ShakeRng>("shake256_seed_de");
}

fn hex_values(name: &str) -> Vec<u64> {
    let values: Vec<u64> = field(FILE, name)
        .split(',')
        .map(|v| u64::from_str_radix(v.trim(), 16).expect("hex value"))
        .collect();
    assert_eq!(values.len(), 600);
    values
}

#[test]
fn turboshake256_seed_i_u64_values() {
    let mut rng = TurboShakeRng::from_seed(seed("turboshake256_seed_i"));
    for (i, want) in hex_values("turboshake256_seed_i_u64x600")
        .into_iter()
        .enumerate()
    {
        assert_eq!(rng.next_u64(), want, "u64 #{i}");
    }
}

#[test]
fn turboshake256_seed_i_u32_values() {
    let mut rng = TurboShakeRng::from_seed(seed("turboshake256_seed_i"));
    for (i, want) in hex_values("turboshake256_seed_i_u32x600")
        .into_iter()
        .enumerate()
    {
        assert_eq!(u64::from(rng.next_u32()), want, "u32 #{i}");
    }
}

#[test]
fn from_key_with_the_seed_bytes_is_the_same_stream() {
    let key = hex(field(FILE, "shake256_seed_i_seed"));
    let mut rng = ShakeRng::from_key(&key);
    assert_eq!(
        read_in_chunks(&mut rng, 4352, &[4352]),
        expected_bytes("shake256_seed_i")
    );
}
