//! `rand` 0.8 through the `rand_core_06` feature: the generators implement
//! `rand_core` 0.6's `RngCore`, `CryptoRng` and `SeedableRng`, so `rand` 0.8's
//! `Rng` methods, `distributions` and `seq` work on them unchanged, and the
//! streams are the ones the `rand_core` 0.10 traits give.
//!
//! In a project on `rand` 0.8 the dependencies are
//! `rand = "0.8"` and `ratchet-rng = { version = "0.1", features = ["rand_core_06"] }`,
//! and the code says `rand::...`; this example says `rand08::...` because that is
//! the name of the crate's `rand` 0.8 dev-dependency.
//!
//! `cargo run --example rand08 --features rand_core_06`

use rand08::distributions::{Alphanumeric, Bernoulli, Distribution, Uniform, WeightedIndex};
use rand08::seq::SliceRandom;
use rand08::{CryptoRng, Rng, RngCore, SeedableRng};
use ratchet_rng::{ChaChaKeyErasureRng, TurboShakeRng};

/// Something from a library still on `rand` 0.8 that asks for a secure generator.
fn session_token<R: CryptoRng + RngCore>(rng: &mut R) -> String {
    rng.sample_iter(&Alphanumeric)
        .take(24)
        .map(char::from)
        .collect()
}

/// Samples `rand` 0.8's distributions from `rng` and prints what it drew.
fn show<R: Rng>(rng: &mut R) {
    let die = Uniform::new_inclusive(1u8, 6);
    let rolls: Vec<u8> = die.sample_iter(&mut *rng).take(12).collect();
    println!("  12 die rolls:          {rolls:?}");
    println!(
        "  gen_range(0..1000):    {}; gen::<f64>(): {:.6}",
        rng.gen_range(0u32..1000),
        rng.r#gen::<f64>()
    );
    let coin = Bernoulli::new(0.3).expect("0 <= p <= 1");
    let heads = (0..10_000).filter(|_| coin.sample(rng)).count();
    println!("  Bernoulli(0.3):        {heads} of 10 000 true");
    let prizes = ["nothing", "a pen", "a bicycle"];
    let weights = WeightedIndex::new([6, 3, 1]).expect("positive weights");
    let won: Vec<&str> = (0..5).map(|_| prizes[weights.sample(rng)]).collect();
    println!("  weighted prizes:       {won:?}");
    let mut deck: Vec<u8> = (1..=13).collect();
    deck.shuffle(rng);
    println!(
        "  a shuffled suit:       {deck:?}; a chosen card: {}",
        deck.choose(rng).expect("not empty")
    );
}

fn main() {
    println!("ChaChaKeyErasureRng::seed_from_u64(2024) through rand 0.8 (the same on every run):");
    show(&mut ChaChaKeyErasureRng::seed_from_u64(2024));

    // One `u64` gives one stream whichever trait version seeds it.
    let mut old = <ChaChaKeyErasureRng as rand08::SeedableRng>::seed_from_u64(7);
    let mut new = <ChaChaKeyErasureRng as ratchet_rng::rand_core::SeedableRng>::seed_from_u64(7);
    let (a, b) = (
        RngCore::next_u64(&mut old),
        ratchet_rng::rand_core::Rng::next_u64(&mut new),
    );
    println!("\nseed_from_u64(7), first u64: rand_core 0.6 {a:#018x}, rand_core 0.10 {b:#018x}");
    assert_eq!(a, b);

    println!(
        "\na rand 0.8 API taking a CryptoRng, fed a TurboShakeRng seeded from the OS: {}",
        session_token(&mut TurboShakeRng::from_os_rng())
    );

    println!("\nratchet_rng::rng() through rand 0.8 (OS-seeded, different every run):");
    show(&mut ratchet_rng::rng());
}
