//! Throughput of ratchet-rng's generators on wasm32 beside their peers, built
//! by this one program: chacha20's `ChaCha8Rng` / `ChaCha12Rng` and RustCrypto's
//! TurboSHAKE256 / SHAKE256 readers. Each fills a 4 KiB buffer repeatedly for
//! at least `MIN_SECONDS` of wall time (the WASI monotonic clock) and reports
//! MB/s (10^6 bytes per second), best of `ROUNDS` rounds, in one Markdown table
//! with each generator's ratio to its peer. A throughput report, not a test:
//! nothing here fails on a slow machine. `--quick` (CI) runs each generator
//! for a few milliseconds only: a smoke run, its figures meaningless.

use std::hint::black_box;
use std::time::{Duration, Instant};

use ratchet_rng::rand_core::{Rng, SeedableRng};
use ratchet_rng::{ChaCha12KeyErasureRng, ChaChaKeyErasureRng, ShakeRng, TurboShakeRng};
use shake::{ExtendableOutput, Update, XofReader};

/// Bytes per `fill` call.
const CALL_BYTES: usize = 4096;
/// Wall time of one round, at least (`--quick`: CI's smoke run).
const MIN_SECONDS: f64 = 0.3;
const QUICK_MIN_SECONDS: f64 = 0.01;
/// Rounds per generator; the best is reported.
const ROUNDS: usize = 5;

/// MB/s of `fill`, best of [`ROUNDS`] rounds of at least [`MIN_SECONDS`].
fn throughput(mut fill: impl FnMut(&mut [u8])) -> f64 {
    let min_seconds = if std::env::args().any(|a| a == "--quick") {
        QUICK_MIN_SECONDS
    } else {
        MIN_SECONDS
    };
    let mut buf = [0u8; CALL_BYTES];
    // Warm-up: first refills, code paths compiled by the engine's tiers.
    for _ in 0..256 {
        fill(&mut buf);
    }
    let mut best: f64 = 0.0;
    for _ in 0..ROUNDS {
        let start = Instant::now();
        let mut bytes = 0u64;
        while start.elapsed() < Duration::from_secs_f64(min_seconds) {
            for _ in 0..64 {
                fill(black_box(&mut buf));
            }
            bytes += 64 * CALL_BYTES as u64;
        }
        let mb_per_s = bytes as f64 / start.elapsed().as_secs_f64() / 1e6;
        best = best.max(mb_per_s);
    }
    black_box(&buf);
    best
}

fn main() {
    let simd128 = cfg!(target_feature = "simd128");
    println!(
        "wasm32, simd128 {}; {CALL_BYTES}-byte fill_bytes, MB/s, best of {ROUNDS}",
        if simd128 { "on" } else { "off" }
    );
    println!();
    println!("| generator | MB/s | vs peer |");
    println!("|---|---:|---:|");

    let mut chacha8 = ChaChaKeyErasureRng::seed_from_u64(1);
    let ours8 = throughput(|b| chacha8.fill_bytes(b));
    let mut chacha12 = ChaCha12KeyErasureRng::seed_from_u64(1);
    let ours12 = throughput(|b| chacha12.fill_bytes(b));
    let mut peer8 = chacha20::ChaCha8Rng::seed_from_u64(1);
    let peer8 = throughput(|b| peer8.fill_bytes(b));
    let mut peer12 = chacha20::ChaCha12Rng::seed_from_u64(1);
    let peer12 = throughput(|b| peer12.fill_bytes(b));

    let mut turbo = TurboShakeRng::seed_from_u64(1);
    let ours_turbo = throughput(|b| turbo.fill_bytes(b));
    let mut shake_rng = ShakeRng::seed_from_u64(1);
    let ours_shake = throughput(|b| shake_rng.fill_bytes(b));
    let mut turbo_reader = {
        let mut xof = turboshake::TurboShake256::default();
        xof.update(&[7u8; 136]);
        xof.finalize_xof()
    };
    let peer_turbo = throughput(|b| turbo_reader.read(b));
    let mut shake_reader = {
        let mut xof = shake::Shake256::default();
        xof.update(&[7u8; 136]);
        xof.finalize_xof()
    };
    let peer_shake = throughput(|b| shake_reader.read(b));

    let row = |name: &str, mb: f64, peer: Option<f64>| match peer {
        Some(p) => println!("| {name} | {mb:.0} | {:.2}x |", mb / p),
        None => println!("| {name} | {mb:.0} | |"),
    };
    row(
        "ratchet-rng `ChaChaKeyErasureRng` (8 rounds)",
        ours8,
        Some(peer8),
    );
    row("chacha20 0.10 `ChaCha8Rng`", peer8, None);
    row("ratchet-rng `ChaCha12KeyErasureRng`", ours12, Some(peer12));
    row("chacha20 0.10 `ChaCha12Rng`", peer12, None);
    row("ratchet-rng `TurboShakeRng`", ours_turbo, Some(peer_turbo));
    row("turboshake 0.7 `TurboShake256` reader", peer_turbo, None);
    row("ratchet-rng `ShakeRng`", ours_shake, Some(peer_shake));
    row("shake 0.1 `Shake256` reader", peer_shake, None);
}
