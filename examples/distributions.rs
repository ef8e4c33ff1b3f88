//! Sampling with `rand` 0.10 (and `rand_distr` 0.6, its companion for
//! non-uniform distributions) from a generator of this crate: uniform integers
//! and floats, a normal distribution, Bernoulli trials, a weighted choice, a
//! shuffle and a choice from a slice.
//!
//! The first run uses a `ChaChaKeyErasureRng` seeded with a fixed `u64`: its
//! lines are the same on every run and platform. The second uses the
//! thread-local generator, `ratchet_rng::rng()`, seeded by the OS: different
//! every run.
//!
//! `cargo run --release --example distributions`

use rand::distr::{Distribution, Uniform};
use rand::seq::{IndexedRandom, SliceRandom};
use rand::{Rng, RngExt, SeedableRng};
use rand_distr::Normal;
use ratchet_rng::ChaChaKeyErasureRng;

/// Samples each distribution from `rng` and prints what it drew.
fn show<R: Rng>(rng: &mut R) {
    // Uniform integers: a die through a `Uniform` (set up once, sampled often)
    // and a one-off range.
    let die = Uniform::new_inclusive(1u8, 6).expect("1 <= 6");
    let rolls: Vec<u8> = (0..12).map(|_| die.sample(rng)).collect();
    println!("  12 die rolls:              {rolls:?}");
    println!(
        "  random_range(0..1000):     {}",
        rng.random_range(0u32..1000)
    );

    // Uniform floats: `random::<f64>()` is in [0, 1); a `Uniform` in any range.
    let unit: f64 = rng.random();
    let angle = Uniform::new(-180.0f64, 180.0).expect("finite, non-empty range");
    println!(
        "  a float in [0, 1):         {unit:.6}; an angle in [-180, 180): {:.3}",
        angle.sample(rng)
    );

    // Normal: IQ-style scores, and the sample mean and standard deviation of
    // 100 000 draws (close to 100 and 15).
    let normal = Normal::new(100.0f64, 15.0).expect("finite mean, positive deviation");
    let scores: Vec<String> = (0..5)
        .map(|_| format!("{:.1}", normal.sample(rng)))
        .collect();
    let draws: Vec<f64> = (0..100_000).map(|_| normal.sample(rng)).collect();
    let mean = draws.iter().sum::<f64>() / draws.len() as f64;
    let var = draws.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (draws.len() - 1) as f64;
    println!(
        "  Normal(100, 15):           {}  (100 000 draws: mean {mean:.2}, std dev {:.2})",
        scores.join(", "),
        var.sqrt()
    );

    // Bernoulli trials: heads with probability 0.3.
    let heads = (0..10_000).filter(|_| rng.random_bool(0.3)).count();
    println!("  random_bool(0.3):          {heads} of 10 000 true");

    // Choices: uniform from a slice, weighted from a slice.
    let colours = ["red", "green", "blue", "yellow"];
    let pick = colours.choose(rng).expect("not empty");
    let prizes = [("nothing", 6), ("a pen", 3), ("a bicycle", 1)];
    let prize = prizes
        .choose_weighted(rng, |p| p.1)
        .expect("positive weights");
    println!(
        "  choose a colour:           {pick}; a weighted prize: {}",
        prize.0
    );

    // A shuffle (Fisher-Yates).
    let mut deck: Vec<u8> = (1..=13).collect();
    deck.shuffle(rng);
    println!("  a shuffled suit:           {deck:?}");
}

fn main() {
    println!("ChaChaKeyErasureRng::seed_from_u64(2024) (the same on every run):");
    show(&mut ChaChaKeyErasureRng::seed_from_u64(2024));

    println!("\nratchet_rng::rng() (OS-seeded, different every run):");
    show(&mut ratchet_rng::rng());
}
