//! The thread-local generator through its public API: threads, thread-local
//! destruction, `rand` integration, redacted `Debug`. (Fork tests: `tests/fork.rs`.)
//!
//! Under Miri (`cfg(miri)`: seconds per KiB of ChaCha8) the counts are
//! scaled down: fewer threads, and draws that fit a thread's first refill
//! (992 bytes of ChaCha8 right after seeding), except for the large request,
//! which goes past the refill size and refills the whole buffer, but not past
//! the reseed budget (1 MiB).
#![cfg(feature = "thread_rng")]

use std::cell::Cell;
use std::collections::HashSet;
use std::sync::Mutex;

use rand::{Rng, RngExt};
use ratchet_rng::{RESEED_BYTES, ThreadRng};

#[test]
#[cfg_attr(
    all(target_family = "wasm", not(target_feature = "atomics")),
    ignore = "spawns threads: none on this target"
)]
fn sixty_four_threads_give_no_duplicate_u64() {
    const THREADS: usize = if cfg!(miri) { 3 } else { 64 };
    const PER_THREAD: usize = if cfg!(miri) { 100 } else { 10_000 };
    let outputs: Vec<Vec<u64>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..THREADS)
            .map(|i| {
                scope.spawn(move || {
                    // Mix the entry points; all read the same thread-local stream.
                    let mut rng = ratchet_rng::rng();
                    (0..PER_THREAD)
                        .map(|j| match (i + j) % 3 {
                            0 => ratchet_rng::u64(),
                            1 => rng.next_u64(),
                            _ => {
                                let mut b = [0u8; 8];
                                ratchet_rng::fill(&mut b);
                                u64::from_le_bytes(b)
                            }
                        })
                        .collect()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut seen = HashSet::with_capacity(THREADS * PER_THREAD);
    for v in outputs.iter().flatten() {
        assert!(seen.insert(*v), "duplicate u64 {v:#x}");
    }
    assert_eq!(seen.len(), THREADS * PER_THREAD);
}

#[test]
fn debug_shows_no_state() {
    let rng = ratchet_rng::rng();
    assert_eq!(format!("{rng:?}"), "ThreadRng { .. }");
    assert_eq!(
        format!("{:#?}", ratchet_rng::thread_rng()),
        "ThreadRng { .. }"
    );
}

/// The handle is a zero-sized token (issue 34): it holds no state, so it can be
/// `Send + Sync` and sit in a struct shared across threads, and it keeps the
/// `CryptoRng` traits of every `rand_core` line the crate supports.
#[test]
fn handle_is_zero_sized_send_sync_clone_default_and_crypto() {
    fn traits<T: Send + Sync + Clone + Default + Unpin + 'static>() {}
    fn crypto<T: rand::CryptoRng + Send + Sync>() {}
    traits::<ThreadRng>();
    crypto::<ThreadRng>();
    #[cfg(feature = "rand_core_09")]
    {
        fn crypto09<T: rand09::CryptoRng + rand09::RngCore + Send + Sync>() {}
        crypto09::<ThreadRng>();
    }
    #[cfg(feature = "rand_core_06")]
    {
        fn crypto06<T: rand08::CryptoRng + rand08::RngCore + Send + Sync>() {}
        crypto06::<ThreadRng>();
    }
    assert_eq!(size_of::<ThreadRng>(), 0);
    assert_eq!(align_of::<ThreadRng>(), 1);
}

#[test]
fn works_with_rand() {
    let mut rng = ratchet_rng::rng();
    let mut counts = [0u32; 6];
    // Each face ~1000 (~20 under Miri); 700 is > 9 standard deviations away
    // (3 or fewer of one face under Miri: about one run in 200,000).
    let (rolls, least) = if cfg!(miri) { (120, 3) } else { (6_000, 700) };
    for _ in 0..rolls {
        let roll: usize = rng.random_range(1..=6);
        counts[roll - 1] += 1;
    }
    assert!(counts.iter().all(|&c| c > least), "{counts:?}");
    fn crypto<R: rand::CryptoRng>(_: &R) {}
    crypto(&rng);
}

#[test]
fn free_functions_read_distinct_output() {
    let mut a = [0u8; 100];
    let mut b = [0u8; 100];
    ratchet_rng::fill(&mut a);
    ratchet_rng::try_fill(&mut b).unwrap();
    assert_ne!(a, b);
    assert_ne!(a, [0; 100]);
    ratchet_rng::fill(&mut []);
    let n = if cfg!(miri) { 150 } else { 1000 };
    let xs: HashSet<u32> = (0..n).map(|_| ratchet_rng::u32()).collect();
    assert!(xs.len() >= n - 1);
}

#[test]
fn reseed_and_large_requests() {
    let mut rng = ratchet_rng::rng();
    rng.reseed().unwrap();
    // Larger than the reseed budget, odd length: crosses budget and piece edges
    // (under Miri: whole refills straight into the request, then a tail).
    let len = if cfg!(miri) {
        4096 + 777
    } else {
        2 * RESEED_BYTES + 777
    };
    let mut big = vec![0u8; len];
    rng.fill_bytes(&mut big);
    // No 16-byte block of a random megabyte-sized output is zero.
    assert!(big.chunks(16).all(|c| c.iter().any(|&b| b != 0)));
    let halves: HashSet<&[u8]> = big.chunks_exact(64).collect();
    assert_eq!(halves.len(), big.len() / 64);
}

/// `reseed_all_threads()` through the public API, on every platform the suite
/// runs on (its buffer-level property needs the inspection build:
/// `tests/vm_generation.rs`): every entry point keeps serving distinct, nonzero
/// values across it, with the reseed it forces (which mixes the CPU source and
/// the clocks in) on this thread and on another.
#[test]
fn reseed_all_threads_then_every_entry_point_serves() {
    const N: usize = if cfg!(miri) { 8 } else { 2_000 };
    fn draw(out: &mut Vec<u64>) {
        let mut rng = ratchet_rng::rng();
        for i in 0..N {
            out.push(match i % 4 {
                0 => ratchet_rng::u64(),
                1 => u64::from(ratchet_rng::u32()) << 32 | u64::from(ratchet_rng::u32()),
                2 => {
                    let mut b = [0u8; 8];
                    ratchet_rng::fill(&mut b);
                    u64::from_le_bytes(b)
                }
                _ => rng.next_u64(),
            });
        }
    }
    let mut values = Vec::new();
    draw(&mut values);
    ratchet_rng::reseed_all_threads();
    draw(&mut values);
    if !cfg!(all(target_family = "wasm", not(target_feature = "atomics"))) {
        let other = std::thread::spawn(|| {
            let mut values = Vec::new();
            draw(&mut values);
            ratchet_rng::reseed_all_threads();
            draw(&mut values);
            values
        });
        values.extend(other.join().unwrap());
    }
    ratchet_rng::reseed_all_threads();
    draw(&mut values);
    let distinct: HashSet<u64> = values.iter().copied().collect();
    assert_eq!(distinct.len(), values.len(), "a value repeated");
    assert!(!values.contains(&0), "a zero value");
}

/// Outputs produced while thread-locals are being destroyed, by the test's own
/// thread-local destructors.
static FROM_DESTRUCTORS: Mutex<Vec<[u8; 32]>> = Mutex::new(Vec::new());

struct UsesRngOnDrop;

impl Drop for UsesRngOnDrop {
    fn drop(&mut self) {
        let mut out = [0u8; 32];
        ratchet_rng::fill(&mut out);
        let mut rng: ThreadRng = ratchet_rng::rng();
        let more = rng.next_u64();
        assert_ne!(more, 0);
        FROM_DESTRUCTORS.lock().unwrap().push(out);
    }
}

thread_local! {
    static BEFORE: Cell<Option<UsesRngOnDrop>> = const { Cell::new(None) };
    static AFTER: Cell<Option<UsesRngOnDrop>> = const { Cell::new(None) };
}

#[test]
#[cfg_attr(
    all(target_family = "wasm", not(target_feature = "atomics")),
    ignore = "spawns threads: none on this target"
)]
fn usable_during_and_after_thread_local_destruction() {
    let threads: Vec<_> = (0..if cfg!(miri) { 2 } else { 8 })
        .map(|_| {
            std::thread::spawn(|| {
                // Registered before the generator's own thread-locals: destroyed
                // after them (destructors run in reverse order), so it uses the
                // handle after the state was freed.
                BEFORE.with(|c| c.set(Some(UsesRngOnDrop)));
                let _ = ratchet_rng::u64();
                // Registered after: destroyed before the generator's state.
                AFTER.with(|c| c.set(Some(UsesRngOnDrop)));
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let outs = FROM_DESTRUCTORS.lock().unwrap();
    assert_eq!(outs.len(), if cfg!(miri) { 4 } else { 16 });
    let distinct: HashSet<_> = outs.iter().collect();
    assert_eq!(distinct.len(), outs.len(), "an output repeated");
}
