//! The API's contracts, one module per file: the backends against each other
//! (`backends`), bad input (`bad_input`), every buffer length (`length_sweep`),
//! save/restore (`save_restore`) and its `serde` form (`serde_checkpoints`,
//! feature `serde`), the `Arbitrary` generators (`arbitrary_cases`, feature
//! `arbitrary`), the XOFs' known answers (`xof_kat`) and the thread-local
//! generator (`thread_rng`; in a `static`, through `&ThreadRng`:
//! `thread_rng_static`). AddressSanitizer and Miri run these (by module: `cargo
//! test --test contracts -- thread_rng::`).
//!
//! One binary rather than nine: CI links every test binary in every configuration
//! (Cargo.toml's `autotests = false` says why). Each module states the features it
//! needs with `#![cfg]`.

mod common;

mod arbitrary_cases;
mod backends;
mod bad_input;
mod length_sweep;
mod save_restore;
mod serde_checkpoints;
mod thread_rng;
mod thread_rng_static;
mod xof_kat;
