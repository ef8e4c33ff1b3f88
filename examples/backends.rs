//! Prints the backend each primitive uses on this CPU, one `primitive: name` line
//! each: `cargo run --example backends`.

fn main() {
    println!("{}", ratchet_rng::backends());
}
