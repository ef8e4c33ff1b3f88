//! `rand` 0.8 and 0.9 through the compatibility features, one module per line:
//! `compat_rand08` (feature `rand_core_06`) and `compat_rand09` (feature
//! `rand_core_09`). Each module states its feature with `#![cfg]`, so a build
//! with one feature runs that line alone: `cargo test --features rand_core_06
//! --test compat`.
//!
//! One binary rather than two: CI links every test binary in every
//! configuration (Cargo.toml's `autotests = false` says why).

mod common;

mod compat_rand08;
mod compat_rand09;
