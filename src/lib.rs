#![no_std]
#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs)]

#[cfg(any(test, feature = "thread_rng"))]
extern crate std;

#[cfg(ratchet_rng_inspect)]
#[doc(hidden)]
#[path = "inspect.rs"]
pub mod __inspect;
mod aes;
mod backend;
mod chacha;
#[cfg(any(feature = "rand_core_06", feature = "rand_core_09"))]
mod compat;
#[cfg(feature = "sys_rng")]
mod error;
#[cfg(feature = "hazmat")]
pub mod hazmat;
mod keccak;
mod rngs;
#[cfg(feature = "thread_rng")]
mod thread;
pub mod xof;

pub use backend::{Backends, backends};
#[cfg(feature = "sys_rng")]
pub use error::OsError;
pub use rand_core;
pub use rngs::aes_ctr_pool::AesCtrPoolRng;
pub use rngs::chacha_key_erasure::{
    ChaCha12KeyErasureRng, ChaCha20KeyErasureRng, ChaChaKeyErasureRng,
};
pub use rngs::shake::{SPONGE_SEED_BYTES, ShakeRng, SpongeSeed, TurboShakeRng};
#[cfg(feature = "thread_rng")]
pub use thread::{RESEED_BYTES, ThreadRng, fill, rng, thread_rng, try_fill, u32, u64};
