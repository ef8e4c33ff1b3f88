//! Prints the backend each primitive uses on this CPU, and (with the `hazmat`
//! feature) every backend this CPU and build could use:
//!
//! ```sh
//! cargo run --example backends --features hazmat
//! ```
//!
//! Backend names are the crate's string edge (CI's `RATCHET_RNG_EXPECT_BACKENDS`
//! uses the same spelling); in code, backends are typed (`ratchet_rng::hazmat`).

fn main() {
    let chosen = ratchet_rng::backends();
    println!("chosen on this CPU:\n{chosen}");
    #[cfg(feature = "hazmat")]
    {
        use ratchet_rng::hazmat::{Aes256, ChaCha, Keccak};
        let list = |names: Vec<String>| names.join(", ");
        println!("\navailable (every one is tested against soft):");
        println!(
            "keccak: {}",
            list(Keccak::available().map(|b| b.to_string()).collect())
        );
        println!(
            "chacha: {}",
            list(ChaCha::available().map(|b| b.to_string()).collect())
        );
        println!(
            "aes: {}",
            list(Aes256::available().map(|b| b.to_string()).collect())
        );
        // The chosen backend is always among the available ones.
        assert!(Keccak::available().any(|b| b.name() == chosen.keccak()));
        assert!(ChaCha::available().any(|b| b.name() == chosen.chacha()));
        assert!(Aes256::available().any(|b| b.name() == chosen.aes()));
    }
}
