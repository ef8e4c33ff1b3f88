//! Empty: the checks are in `tests/` (see Cargo.toml).
#![no_std]
