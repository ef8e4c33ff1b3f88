//! Reproducible parallel Monte Carlo with `SeedTree`: estimate pi from 256 work
//! items of 20 000 points each, item `i` drawing from `root.child(i)`, on rayon
//! pools of 1, 2 and 8 threads and in reverse order. The estimate is the same to
//! the bit every time: no stream depends on which thread runs an item or when.
//!
//! `cargo run --release --example parallel`
//!
//! Across processes or machines it is the same: worker `w` of `n` runs the items
//! `i` with `i % n == w`, each from `SeedTree::new(key).child(i)`, and the results
//! are summed by item; nothing is shared at run time but the key.

// On WASM there are no threads (and rayon does not build): main only says so.
#![cfg_attr(target_family = "wasm", allow(dead_code, unused_imports))]

use rand::{Rng, RngExt};
use ratchet_rng::{ChaChaKeyErasureRng, SeedTree};
#[cfg(not(target_family = "wasm"))]
use rayon::prelude::*;

const ITEMS: u64 = 256;
const POINTS_PER_ITEM: u32 = 20_000;

/// Points of item `i` inside the quarter unit circle.
fn item(root: &SeedTree, i: u64) -> u64 {
    let mut rng: ChaChaKeyErasureRng = root.child(i).rng();
    (0..POINTS_PER_ITEM)
        .filter(|_| {
            let x: f64 = rng.random();
            let y: f64 = rng.random();
            x * x + y * y < 1.0
        })
        .count() as u64
}

/// Runs the job on `threads` worker threads (not on WASM: no threads there), the items in `reverse` order or
/// not; returns the estimate of pi.
#[cfg(not(target_family = "wasm"))]
fn estimate(root: &SeedTree, threads: usize, reverse: bool) -> f64 {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a rayon pool");
    let order: Vec<u64> = if reverse {
        (0..ITEMS).rev().collect()
    } else {
        (0..ITEMS).collect()
    };
    let mut per_item: Vec<(u64, u64)> =
        pool.install(|| order.par_iter().map(|&i| (i, item(root, i))).collect());
    // Sum in item order, so that even a floating-point reduction would not
    // depend on the schedule (here the counts are integers anyway).
    per_item.sort_unstable();
    let inside: u64 = per_item.iter().map(|&(_, n)| n).sum();
    4.0 * inside as f64 / (ITEMS * u64::from(POINTS_PER_ITEM)) as f64
}

#[cfg(target_family = "wasm")]
fn main() {
    println!("skipped: the parallel example needs threads (none on this target)");
}

#[cfg(not(target_family = "wasm"))]
fn main() {
    let root = SeedTree::new(b"ratchet-rng parallel example");
    let reference = estimate(&root, 1, false);
    println!("pi ~ {reference} (1 thread)");
    for (threads, reverse) in [(2, false), (8, false), (8, true), (1, true)] {
        let got = estimate(&root, threads, reverse);
        let order = if reverse { "reverse" } else { "forward" };
        println!("pi ~ {got} ({threads} threads, {order} order)");
        assert_eq!(
            got.to_bits(),
            reference.to_bits(),
            "the estimate must not depend on the threads or the order"
        );
    }
    // A quick look at one worker's node, as a separate process would derive it.
    let mut worker = SeedTree::new(b"ratchet-rng parallel example")
        .child(3)
        .rng::<ChaChaKeyErasureRng>();
    let mut here = root.child(3).rng::<ChaChaKeyErasureRng>();
    assert_eq!(worker.next_u64(), here.next_u64());
    assert!((reference - core::f64::consts::PI).abs() < 0.01);
    println!("bit-identical with 1, 2 and 8 threads and in reverse order");
}
