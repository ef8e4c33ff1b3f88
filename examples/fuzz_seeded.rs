//! Reproducible randomness for fuzz harnesses and simulations.
//!
//! A fuzz target often needs randomness beyond its input bytes (a random
//! workload, a shuffled schedule, random keys for the code under test). Taking it
//! from the OS or a thread-local generator makes crashes irreproducible; taking it
//! from a generator keyed by the input makes every run of the same input, on every
//! machine, do exactly the same thing:
//!
//! - `TurboShakeRng::from_key(data)`: keyed by the fuzzer's input bytes, any
//!   length (the stream is TurboSHAKE256(data) with a ratchet every 1088 bytes);
//! - `ChaChaKeyErasureRng::seed_from_u64(n)`: keyed by a case number, for
//!   simulations and property tests (64 bits are not a cryptographic key);
//! - with the `arbitrary` feature, a generator field of a `#[derive(Arbitrary)]`
//!   case (`fuzz_target!(|case: Case| ...)`): `from_seed` of the input's next
//!   seed-sized bytes, zero-padded (docs/STREAMS.md, "Fuzz cases"; the fuzz
//!   crate's `derived_case` target).
//!
//! Both are value-stable contracts (`docs/STREAMS.md`): the same key
//! gives the same bytes on every platform, backend and version of this crate.
//! This example checks that against the frozen streams in
//! `tests/data/golden_streams.txt`.
//!
//! `cargo run --example fuzz_seeded`

use rand::RngExt;
use rand::seq::SliceRandom;
use ratchet_rng::rand_core::{Rng, SeedableRng};
use ratchet_rng::{
    AesCtrPoolRng, ChaCha12KeyErasureRng, ChaCha20KeyErasureRng, ChaChaKeyErasureRng, ShakeRng,
    TurboShakeRng,
};

/// The frozen streams of the test suite.
const GOLDEN: &str = include_str!("../tests/data/golden_streams.txt");
/// The key whose `from_key` streams the golden file records (first 64 bytes).
const GOLDEN_KEY: &[u8] = b"ratchet-rng golden from_key";

/// What one fuzz case did: enough to see that two runs agree.
#[derive(Debug, PartialEq, Eq)]
struct CaseLog {
    first_bytes: [u8; 64],
    schedule: Vec<u8>,
    delays_us: Vec<u32>,
}

/// Shaped like a `cargo fuzz` target body (`fuzz_target!(|data: &[u8]| ...)`):
/// all randomness the case needs comes from a generator keyed by `data`.
fn run_case(data: &[u8]) -> CaseLog {
    let mut rng = TurboShakeRng::from_key(data);

    let mut first_bytes = [0u8; 64];
    rng.fill_bytes(&mut first_bytes);

    // E.g. an interleaving of 8 tasks, and a random delay for each: the code under
    // test would run them here. A crash input replays the same schedule. (The
    // bytes are this crate's contract; how `shuffle` and `random_range` turn them
    // into values is `rand`'s, stable within one `rand` minor version.)
    let mut schedule: Vec<u8> = (0..8).collect();
    schedule.shuffle(&mut rng);
    let delays_us = schedule.iter().map(|_| rng.random_range(0..1000)).collect();

    CaseLog {
        first_bytes,
        schedule,
        delays_us,
    }
}

/// The golden file's line `name: hex`, decoded.
fn golden(name: &str) -> Vec<u8> {
    let line = GOLDEN
        .lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(": "))
        .unwrap_or_else(|| panic!("{name} in golden_streams.txt"));
    (0..line.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&line[i..i + 2], 16).expect("hex"))
        .collect()
}

fn first_64<R: Rng>(mut rng: R) -> Vec<u8> {
    let mut out = vec![0u8; 64];
    rng.fill_bytes(&mut out);
    out
}

fn main() {
    // The same input gives the same case, every run; another input, another one.
    let log = run_case(GOLDEN_KEY);
    assert_eq!(log, run_case(GOLDEN_KEY));
    assert_ne!(log, run_case(b"another input"));
    println!("run_case({:?}):", String::from_utf8_lossy(GOLDEN_KEY));
    println!("  first bytes {:02x?}", &log.first_bytes[..8]);
    println!("  schedule    {:?}", log.schedule);
    println!("  delays (us) {:?}", log.delays_us);

    // ...on every platform and version: the bytes are the frozen ones.
    assert_eq!(log.first_bytes[..], golden("turboshake/from_key"));
    let frozen: [(&str, Vec<u8>); 6] = [
        ("turboshake", first_64(TurboShakeRng::from_key(GOLDEN_KEY))),
        ("shake", first_64(ShakeRng::from_key(GOLDEN_KEY))),
        (
            "chacha8",
            first_64(ChaChaKeyErasureRng::from_key(GOLDEN_KEY)),
        ),
        (
            "chacha12",
            first_64(ChaCha12KeyErasureRng::from_key(GOLDEN_KEY)),
        ),
        (
            "chacha20",
            first_64(ChaCha20KeyErasureRng::from_key(GOLDEN_KEY)),
        ),
        (
            "aes_ctr_pool",
            first_64(AesCtrPoolRng::from_key(GOLDEN_KEY)),
        ),
    ];
    for (name, bytes) in frozen {
        assert_eq!(bytes, golden(&format!("{name}/from_key")), "{name}");
        println!(
            "{name}::from_key: first u64 {:#018x} (golden)",
            u64::from_le_bytes(bytes[..8].try_into().unwrap())
        );
    }

    // A case number instead of bytes: `seed_from_u64` (rand_core expands the u64
    // into a 32-byte seed with PCG32, a documented, portable expansion).
    for case in 0..3u64 {
        let mut a = ChaChaKeyErasureRng::seed_from_u64(case);
        let mut b = ChaChaKeyErasureRng::seed_from_u64(case);
        let (x, y) = (a.next_u64(), b.next_u64());
        assert_eq!(x, y);
        println!("seed_from_u64({case}): first u64 {x:#018x}");
    }
}
