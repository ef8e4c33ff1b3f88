//! The README's demo: seed each generator (from the OS and from a fixed seed),
//! sample through `rand` 0.10, and measure throughput.
//!
//! `cargo run --release -p quickstart`

use std::hint::black_box;
use std::time::{Duration, Instant};

use rand::seq::SliceRandom;
use rand::{Rng, RngExt, SeedableRng};
use ratchet_rng::{
    AesCtrPoolRng, ChaCha12KeyErasureRng, ChaCha20KeyErasureRng, ChaChaKeyErasureRng, ShakeRng,
    TurboShakeRng,
};

/// Fills a 64 KiB buffer repeatedly for about `budget` and returns MiB/s.
fn throughput<R: Rng>(rng: &mut R, budget: Duration) -> f64 {
    let mut buf = vec![0u8; 64 * 1024];
    let start = Instant::now();
    let mut bytes = 0u64;
    while start.elapsed() < budget {
        rng.fill_bytes(black_box(&mut buf));
        bytes += buf.len() as u64;
    }
    bytes as f64 / start.elapsed().as_secs_f64() / (1024.0 * 1024.0)
}

fn demo<R: Rng + SeedableRng>(name: &str, os_seeded: &mut R, fixed: &mut R) {
    println!("{name}");
    println!(
        "  OS-seeded:   u64 {:#018x}, u32 {:#010x}",
        os_seeded.next_u64(),
        os_seeded.next_u32()
    );
    println!(
        "  fixed seed:  u64 {:#018x}, u32 {:#010x}  (the same on every run and platform)",
        fixed.next_u64(),
        fixed.next_u32()
    );
    let die: u8 = os_seeded.random_range(1..=6);
    let unit: f64 = os_seeded.random();
    let mut deck: Vec<u8> = (1..=10).collect();
    deck.shuffle(os_seeded);
    println!("  a die roll {die}, a float in [0, 1) {unit:.6}, a shuffle {deck:?}");
    println!(
        "  throughput: {:.0} MiB/s (64 KiB fills)",
        throughput(fixed, Duration::from_millis(300))
    );
}

fn main() {
    let seed136: [u8; 136] = core::array::from_fn(|i| i as u8);
    let seed32: [u8; 32] = core::array::from_fn(|i| i as u8);
    demo(
        "TurboShakeRng (TurboSHAKE256 sponge with ratchet, RandomSHAKE-compatible)",
        &mut TurboShakeRng::from_os_rng(),
        &mut TurboShakeRng::from_seed(seed136.into()),
    );
    demo(
        "ShakeRng (SHAKE256 sponge with ratchet, RandomSHAKE-compatible)",
        &mut ShakeRng::from_os_rng(),
        &mut ShakeRng::from_seed(seed136.into()),
    );
    demo(
        "ChaChaKeyErasureRng (ChaCha8 fast key erasure, Go chacha8rand-compatible)",
        &mut ChaChaKeyErasureRng::from_os_rng(),
        &mut ChaChaKeyErasureRng::from_seed(seed32),
    );
    demo(
        "ChaCha12KeyErasureRng (the same layout, 12 rounds)",
        &mut ChaCha12KeyErasureRng::from_os_rng(),
        &mut ChaCha12KeyErasureRng::from_seed(seed32),
    );
    demo(
        "ChaCha20KeyErasureRng (the same layout, 20 rounds)",
        &mut ChaCha20KeyErasureRng::from_os_rng(),
        &mut ChaCha20KeyErasureRng::from_seed(seed32),
    );
    demo(
        "AesCtrPoolRng (AES-256-CTR fast key erasure over a 4 KiB pool)",
        &mut AesCtrPoolRng::from_os_rng(),
        &mut AesCtrPoolRng::from_seed(seed32),
    );
    let mut baseline = rand::rngs::StdRng::seed_from_u64(0);
    println!(
        "baseline rand::rngs::StdRng: {:.0} MiB/s (64 KiB fills)",
        throughput(&mut baseline, Duration::from_millis(300))
    );
}
