//! The thread-local handle in a `static`, drawn through `&ThreadRng` (issue 47):
//! `ThreadRng::new()` is a `const fn`, and the `rand_core` 0.10 traits (and, behind
//! their features, the 0.9 and 0.6 ones) are implemented for `&ThreadRng`, serving
//! the calling thread's generator as `ThreadRng` does. What shows it here: draws
//! through a shared reference, on one thread and on several, through every trait
//! version and interleaved with the free functions, are all distinct (a reference
//! that served a fixed or shared stream would repeat values across threads or
//! calls), and the bounds `rand` 0.8, 0.9 and 0.10 put on a cryptographic
//! generator hold for `&ThreadRng`.
//!
//! Not in the `thread_rng` module, so that Miri's filter (`thread_rng::`) leaves
//! it out: the impls for `&ThreadRng` are safe code that forwards to `ThreadRng`'s.
#![cfg(feature = "thread_rng")]

use std::collections::HashSet;
use std::sync::Arc;

use rand::{Rng, RngExt, TryRng};
use ratchet_rng::ThreadRng;

/// A handle in a `static`: `new` is a `const fn`.
static RNG: ThreadRng = ThreadRng::new();

/// A service shared through an `Arc`: its handle draws through `&self`.
struct Service {
    rng: ThreadRng,
}

impl Service {
    fn token(&self) -> u64 {
        (&self.rng).random()
    }
}

/// `count` rounds of draws through `&RNG`, `&Service::rng` and every trait version
/// this build has, each read as `u64`s.
fn draw_through_shared_references(service: &Service, count: usize) -> Vec<u64> {
    let mut out = Vec::new();
    for _ in 0..count {
        let mut rng = &RNG;
        out.push(rng.random::<u64>());
        out.push(rng.next_u64());
        out.push((u64::from(rng.next_u32()) << 32) | u64::from(rng.next_u32()));
        let Ok(x) = rng.try_next_u64();
        out.push(x);
        let mut bytes = [0u8; 16];
        rng.fill_bytes(&mut bytes);
        out.extend(
            bytes
                .chunks_exact(8)
                .map(|b| u64::from_le_bytes(b.try_into().unwrap())),
        );
        out.push(service.token());
        out.push(ratchet_rng::u64());
        #[cfg(feature = "rand_core_09")]
        {
            use rand09::{RngCore, TryRngCore};
            out.push(RngCore::next_u64(&mut rng));
            let mut bytes = [0u8; 8];
            let Ok(()) = TryRngCore::try_fill_bytes(&mut rng, &mut bytes);
            out.push(u64::from_le_bytes(bytes));
            out.push(rand09::Rng::random(&mut rng));
        }
        #[cfg(feature = "rand_core_06")]
        {
            use rand08::RngCore;
            out.push(RngCore::next_u64(&mut rng));
            let mut bytes = [0u8; 8];
            RngCore::try_fill_bytes(&mut rng, &mut bytes).unwrap();
            out.push(u64::from_le_bytes(bytes));
            out.push(rand08::Rng::r#gen(&mut rng));
        }
    }
    out
}

fn assert_distinct(values: &[u64]) {
    let mut seen = HashSet::with_capacity(values.len());
    for v in values {
        assert!(
            seen.insert(*v),
            "a value served twice through `&ThreadRng`: {v:#x}"
        );
    }
}

#[test]
fn a_static_handle_draws_through_a_shared_reference() {
    let service = Service {
        rng: ratchet_rng::rng(),
    };
    assert_distinct(&draw_through_shared_references(&service, 200));
}

#[test]
#[cfg_attr(
    all(target_family = "wasm", not(target_feature = "atomics")),
    ignore = "spawns threads: none on this target"
)]
fn a_static_handle_draws_through_a_shared_reference_on_every_thread() {
    const THREADS: usize = 8;
    let service = Arc::new(Service {
        rng: ratchet_rng::rng(),
    });
    let mut all: Vec<u64> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..THREADS)
            .map(|_| {
                let service = Arc::clone(&service);
                scope.spawn(move || draw_through_shared_references(&service, 200))
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap())
            .collect()
    });
    all.extend(draw_through_shared_references(&service, 200));
    assert_distinct(&all);
}

/// The bounds `rand` 0.10, 0.9 and 0.8 put on a cryptographic generator, for a
/// shared reference to the handle, and a `rand` sampler's answer through it.
#[test]
fn a_shared_reference_is_a_crypto_rng_of_every_version() {
    fn crypto<R: rand::CryptoRng + Send + Sync + Copy>(_: R) {}
    crypto(&RNG);
    #[cfg(feature = "rand_core_09")]
    {
        fn crypto09<R: rand09::CryptoRng + rand09::TryCryptoRng + Send + Sync>(_: R) {}
        crypto09(&RNG);
    }
    #[cfg(feature = "rand_core_06")]
    {
        fn crypto06<R: rand08::CryptoRng + rand08::RngCore + Send + Sync>(_: R) {}
        crypto06(&RNG);
    }
    let mut counts = [0u32; 6];
    for _ in 0..6_000 {
        counts[(&RNG).random_range(0..6)] += 1;
    }
    // Each face ~1000; 700 is > 9 standard deviations away.
    assert!(counts.iter().all(|&c| c > 700), "{counts:?}");
}
