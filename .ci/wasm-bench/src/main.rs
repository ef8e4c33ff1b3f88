//! Throughput of ratchet-rng's generators on wasm32 beside their peers, built
//! by this one program: chacha20's `ChaCha8Rng` / `ChaCha12Rng` and RustCrypto's
//! TurboSHAKE256 / SHAKE256 readers. Each fills a 4 KiB buffer repeatedly for
//! at least `MIN_SECONDS` of the process's CPU time, in rounds
//! that take every generator in turn; the best round of each is reported in
//! MB/s (10^6 bytes per second), in one Markdown table with each of ours
//! beside its peer. A throughput report, not a test:
//! nothing here fails on a slow machine. `--quick` (CI) runs each generator
//! for a few milliseconds only: a smoke run, its figures meaningless.

use std::hint::black_box;

use ratchet_rng::rand_core::{Rng, SeedableRng};
use ratchet_rng::{ChaCha12KeyErasureRng, ChaChaKeyErasureRng, ShakeRng, TurboShakeRng};
use shake::{ExtendableOutput, Update, XofReader};

/// Bytes per `fill` call.
const CALL_BYTES: usize = 4096;
/// Wall time of one measurement, at least (`--quick`: CI's smoke run).
const MIN_SECONDS: f64 = 0.1;
const QUICK_MIN_SECONDS: f64 = 0.005;
/// Rounds; each measures every generator once, in turn, so that a busy
/// moment of the machine hits all of them alike. The best round is reported.
const ROUNDS: usize = 15;
const QUICK_ROUNDS: usize = 1;

/// The host's CPU time of this process, in nanoseconds: WASI's
/// `clock_time_get` on `CLOCK_PROCESS_CPUTIME_ID` (Node's WASI answers it
/// with the process's user + system time). CPU time, not wall time: on a
/// shared machine another process's burst then slows the figures less.
fn cpu_time_ns() -> u64 {
    /// WASI preview 1's `clockid::process_cputime_id`.
    const PROCESS_CPUTIME_ID: u32 = 2;
    #[link(wasm_import_module = "wasi_snapshot_preview1")]
    unsafe extern "C" {
        fn clock_time_get(id: u32, precision: u64, time: *mut u64) -> u16;
    }
    let mut time = 0u64;
    // SAFETY: `clock_time_get` writes one u64 through `time`, a valid,
    // aligned, writable u64; it has no other effect.
    let errno = unsafe { clock_time_get(PROCESS_CPUTIME_ID, 1, &mut time) };
    assert_eq!(errno, 0, "clock_time_get(process CPU time) failed");
    time
}

/// A generator under test: its name and a fill function.
type Subject = (&'static str, Box<dyn FnMut(&mut [u8])>);

/// MB/s of one measurement of `fill`: at least `min_seconds` of 4 KiB fills.
fn measure(fill: &mut dyn FnMut(&mut [u8]), buf: &mut [u8; CALL_BYTES], min_seconds: f64) -> f64 {
    let start = cpu_time_ns();
    let min_ns = (min_seconds * 1e9) as u64;
    let mut bytes = 0u64;
    let elapsed = loop {
        for _ in 0..16 {
            fill(black_box(&mut *buf));
        }
        bytes += 16 * CALL_BYTES as u64;
        let elapsed = cpu_time_ns() - start;
        if elapsed >= min_ns {
            break elapsed;
        }
    };
    bytes as f64 / (elapsed as f64 / 1e9) / 1e6
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let (rounds, min_seconds) = if quick {
        (QUICK_ROUNDS, QUICK_MIN_SECONDS)
    } else {
        (ROUNDS, MIN_SECONDS)
    };
    let simd128 = cfg!(target_feature = "simd128");

    let turbo_reader = {
        let mut xof = turboshake::TurboShake256::default();
        xof.update(&[7u8; 136]);
        xof.finalize_xof()
    };
    let shake_reader = {
        let mut xof = shake::Shake256::default();
        xof.update(&[7u8; 136]);
        xof.finalize_xof()
    };
    /// A `Subject` filling with `$rng.$method(buf)`; with a type only, an
    /// `Rng` of that type seeded with `seed_from_u64(1)`, filling with
    /// `fill_bytes`.
    macro_rules! subject {
        ($name:literal, $rng:expr, $method:ident) => {{
            let mut rng = $rng;
            let fill: Box<dyn FnMut(&mut [u8])> = Box::new(move |b: &mut [u8]| rng.$method(b));
            ($name, fill)
        }};
        ($name:literal, $seeded:ty) => {
            subject!($name, <$seeded>::seed_from_u64(1), fill_bytes)
        };
    }
    // Pairs: ours, then its peer.
    let mut subjects: Vec<Subject> = vec![
        subject!(
            "ratchet-rng `ChaChaKeyErasureRng` (8 rounds)",
            ChaChaKeyErasureRng
        ),
        subject!("chacha20 0.10 `ChaCha8Rng`", chacha20::ChaCha8Rng),
        subject!("ratchet-rng `ChaCha12KeyErasureRng`", ChaCha12KeyErasureRng),
        subject!("chacha20 0.10 `ChaCha12Rng`", chacha20::ChaCha12Rng),
        subject!("ratchet-rng `TurboShakeRng`", TurboShakeRng),
        subject!("turboshake 0.7 `TurboShake256` reader", turbo_reader, read),
        subject!("ratchet-rng `ShakeRng`", ShakeRng),
        subject!("shake 0.1 `Shake256` reader", shake_reader, read),
    ];

    let mut buf = [0u8; CALL_BYTES];
    // Warm-up: first refills, and the engine's optimising tier.
    for (_, fill) in &mut subjects {
        measure(fill, &mut buf, min_seconds);
    }
    let mut best = vec![0f64; subjects.len()];
    for _ in 0..rounds {
        for ((_, fill), best) in subjects.iter_mut().zip(&mut best) {
            *best = best.max(measure(fill, &mut buf, min_seconds));
        }
    }
    black_box(&buf);

    println!(
        "wasm32, simd128 {}; {CALL_BYTES}-byte fills, MB/s (10^6 B per CPU second), best of {rounds} rounds",
        if simd128 { "on" } else { "off" }
    );
    println!();
    println!("| generator | MB/s | ours / peer |");
    println!("|---|---:|---:|");
    for (pair, speeds) in subjects.chunks(2).zip(best.chunks(2)) {
        println!(
            "| {} | {:.0} | {:.2}x |",
            pair[0].0,
            speeds[0],
            speeds[0] / speeds[1]
        );
        println!("| {} | {:.0} | |", pair[1].0, speeds[1]);
    }
}
