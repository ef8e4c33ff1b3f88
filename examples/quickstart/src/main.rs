//! The README's demo: every generator from a fixed seed (reproducible) and from the
//! OS (not), sampled through `rand` 0.10 and timed; then `ratchet_rng::rng()` beside
//! `rand::rng()`, first call and per call.
//!
//! `cargo run --release -p quickstart`
//!
//! Where no thread can be spawned (`wasm32-wasip1`), the first calls are timed on
//! the main thread and the demo says what it did not time; it exits 0 there too
//! (CI runs it under Node's WASI).

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

/// Prints one generator's lines, each starting with its name: draws from `fixed`
/// (seeded with a fixed seed: the same on every run and platform) and from
/// `os_seeded` (different on every run), then `fixed`'s throughput.
fn demo<R: Rng + SeedableRng>(name: &str, os_seeded: &mut R, fixed: &mut R) {
    let (u64_, u32_) = (fixed.next_u64(), fixed.next_u32());
    let die: u8 = fixed.random_range(1..=6);
    let unit: f64 = fixed.random();
    let mut deck: Vec<u8> = (1..=10).collect();
    deck.shuffle(fixed);
    println!(
        "{name:<22} fixed seed, reproducible: u64 {u64_:#018x}, u32 {u32_:#010x}, \
         die {die}, float {unit:.6}, shuffle {deck:?}"
    );
    println!(
        "{name:<22} OS seed, not reproducible: u64 {:#018x}, u32 {:#010x}",
        os_seeded.next_u64(),
        os_seeded.next_u32()
    );
    println!(
        "{name:<22} throughput: {:.0} MiB/s (64 KiB fills)",
        throughput(fixed, Duration::from_millis(300))
    );
}

/// The time of one call of `first`.
fn time_call(first: fn() -> u64) -> Duration {
    let start = Instant::now();
    black_box(first());
    start.elapsed()
}

/// The time of `first()` on a thread of its own (the thread's first call), or
/// the error that kept the thread from being spawned (`wasm32-wasip1` has no
/// threads).
fn first_call_on_new_thread(first: fn() -> u64) -> std::io::Result<Duration> {
    let thread = std::thread::Builder::new().spawn(move || time_call(first))?;
    Ok(thread.join().expect("the measuring thread does not panic"))
}

/// Nanoseconds per call of `next` over `calls` calls.
fn per_call_ns(calls: u32, mut next: impl FnMut() -> u64) -> f64 {
    let start = Instant::now();
    for _ in 0..calls {
        black_box(next());
    }
    start.elapsed().as_nanos() as f64 / f64::from(calls)
}

fn main() {
    let seed136: [u8; 136] = core::array::from_fn(|i| i as u8);
    let seed32: [u8; 32] = core::array::from_fn(|i| i as u8);
    println!(
        "fixed seeds: bytes [0, 1, 2, ..., 135] for the sponges (a SpongeSeed: \
         TurboShakeRng::from_seed(seed.into())), [0, 1, 2, ..., 31] for the others"
    );
    println!(
        "TurboShakeRng: TurboSHAKE256 sponge, ratchet every 1088 bytes (RandomSHAKE-compatible)\n\
         ShakeRng: the same on SHAKE256\n\
         ChaChaKeyErasureRng: ChaCha8, fast key erasure (Go chacha8rand-compatible); \
         ChaCha12/20: 12/20 rounds\n\
         AesCtrPoolRng: AES-256-CTR, fast key erasure over a 4 KiB pool\n"
    );
    demo(
        "TurboShakeRng",
        &mut TurboShakeRng::from_os_rng(),
        &mut TurboShakeRng::from_seed(seed136.into()),
    );
    demo(
        "ShakeRng",
        &mut ShakeRng::from_os_rng(),
        &mut ShakeRng::from_seed(seed136.into()),
    );
    demo(
        "ChaChaKeyErasureRng",
        &mut ChaChaKeyErasureRng::from_os_rng(),
        &mut ChaChaKeyErasureRng::from_seed(seed32),
    );
    demo(
        "ChaCha12KeyErasureRng",
        &mut ChaCha12KeyErasureRng::from_os_rng(),
        &mut ChaCha12KeyErasureRng::from_seed(seed32),
    );
    demo(
        "ChaCha20KeyErasureRng",
        &mut ChaCha20KeyErasureRng::from_os_rng(),
        &mut ChaCha20KeyErasureRng::from_seed(seed32),
    );
    demo(
        "AesCtrPoolRng",
        &mut AesCtrPoolRng::from_os_rng(),
        &mut AesCtrPoolRng::from_seed(seed32),
    );
    let mut baseline = rand::rngs::StdRng::seed_from_u64(0);
    println!(
        "{:<22} throughput: {:.0} MiB/s (64 KiB fills; rand's ChaCha12, for comparison)",
        "rand StdRng",
        throughput(&mut baseline, Duration::from_millis(300))
    );
    println!(
        "why the sponges are slower: each 136 bytes cost a Keccak-p[1600] permutation \
         (12 rounds for TurboSHAKE256, 24 for SHAKE256), where ChaCha and AES run a block \
         cipher on many blocks at once with SIMD or AES instructions; the sponges rest on \
         SHAKE's security as a hash rather than a cipher's, and take keys of any length\n"
    );

    // The thread-local generators, seeded from the OS: never reproducible. The
    // first call on a thread seeds it; the process's first also sets up what
    // every thread shares. Without threads, the process's first call is the
    // main thread's (nothing above called either generator).
    let firsts: [fn() -> u64; 2] = [|| ratchet_rng::rng().next_u64(), || rand::rng().next_u64()];
    let first = firsts.map(|f| first_call_on_new_thread(f).unwrap_or_else(|_| time_call(f)));
    let again = firsts.map(first_call_on_new_thread);
    if let Err(err) = &again[0] {
        println!(
            "no threads here ({err}): the first calls below are the main thread's; \
             a new thread's first call is not timed"
        );
    }
    const CALLS: u32 = 10_000_000;
    let (mut ours, mut theirs) = (ratchet_rng::rng(), rand::rng());
    let per_u64 = [
        per_call_ns(CALLS, || ours.next_u64()),
        per_call_ns(CALLS, || theirs.next_u64()),
    ];
    let per_die = [
        per_call_ns(CALLS, || ours.random_range(1..=6)),
        per_call_ns(CALLS, || theirs.random_range(1..=6)),
    ];
    for (i, name) in ["ratchet_rng::rng()", "rand::rng()"]
        .into_iter()
        .enumerate()
    {
        let on_new_thread = match &again[i] {
            Ok(time) => format!(", {:.1} µs on a new thread", time.as_secs_f64() * 1e6),
            Err(_) => " (on a new thread: not timed, no threads)".to_string(),
        };
        println!(
            "{name:<22} OS seed, not reproducible: first call {:.1} µs in this process\
             {on_new_thread}; per call {:.1} ns (next_u64), {:.1} ns (random_range(1..=6))",
            first[i].as_secs_f64() * 1e6,
            per_u64[i],
            per_die[i]
        );
    }
}
