#![no_std]
#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs)]

#[cfg(any(test, feature = "std"))]
extern crate std;

mod backend;
mod keccak;
mod rngs;
pub mod xof;

pub use rand_core;
#[cfg(feature = "os-rng")]
pub use rngs::OsError;
pub use rngs::shake::{SPONGE_SEED_BYTES, ShakeRng, SpongeSeed, TurboShakeRng};
