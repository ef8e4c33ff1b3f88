//! Fast, cryptographically secure random number generators whose seeded streams
//! are a published contract: the same seed gives the same bytes on every platform
//! and backend, and in every version until the next breaking release (the
//! value-stability policy, in [`guide::streams`]).
//!
//! # Generators
//!
//! - [`TurboShakeRng`] and [`ShakeRng`]: TurboSHAKE256 / SHAKE256 sponges that
//!   ratchet every 1088 bytes, byte-compatible with the C++ RandomSHAKE. Seeded by
//!   a 136-byte [`SpongeSeed`] or, through `from_key`, by key material of any
//!   length.
//! - [`ChaChaKeyErasureRng`]: ChaCha8 with fast key erasure in the C2SP
//!   chacha8rand layout, byte-compatible with Go's `math/rand/v2` `ChaCha8`;
//!   [`ChaCha12KeyErasureRng`] and [`ChaCha20KeyErasureRng`] use 12 and 20 rounds.
//! - [`AesCtrPoolRng`]: AES-256-CTR with fast key erasure over a 4 KiB pool.
//! - `rng()` (feature `thread_rng`): this thread's generator, seeded
//!   from the OS, reseeded every `RESEED_BYTES`, never repeating across `fork()`;
//!   `fill`, `try_fill`, `u32` and `u64` are free functions over it.
//!
//! Seeded streams for parallel and resumable work:
//!
//! - [`SeedTree`]: a tree of derived keys; any node (`child(i)`,
//!   `child_label(b"..")`) seeds any generator, the same stream on every thread
//!   and machine, whatever the order ([`guide::derivation`], [`guide::parallel`]).
//! - Save and restore: `rng.save()` records a seeded generator's exact position
//!   as a [`SavedState`] (a secret: it gives the future output), and
//!   `G::restore(bytes)` continues byte for byte; bad input is a [`RestoreError`]
//!   ([`ChaChaKeyErasureRng::save`] writes Go's `MarshalBinary` bytes).
//!
//! # Cargo features
//!
//! - `thread_rng` (default): the thread-local generator; implies `sys_rng`, links
//!   `std`. Without it the crate is `#![no_std]` and allocates nothing.
//! - `sys_rng`: `from_os_rng()` / `try_from_os_rng()` on every generator, through
//!   `getrandom`.
//! - `rand_core_06`, `rand_core_09`: the `rand_core` 0.6 / 0.9 traits, for `rand`
//!   0.8 / 0.9 (below).
//! - `wasm_js`: the OS source on `wasm32-unknown-unknown` (browsers, Node.js)
//!   through `getrandom`'s `wasm_js` backend; implies `sys_rng`. For
//!   applications, never libraries ([`guide::wasm`]).
//! - `hazmat`: the raw primitives and constructors on an explicit backend, for
//!   tests, benches and fuzzing.
//! - `serde`: `Serialize` / `Deserialize` on every seeded generator and on
//!   [`SavedState`], as the bytes of `save()`; mind
//!   [its two warnings](guide::derivation#23-serde-the-same-bytes). `no_std`.
//! - `arbitrary`: `Arbitrary` (arbitrary 1.x) on every seeded generator, for fuzz
//!   cases with a generator field ([the rule](guide::streams#fuzz-cases)). Needs
//!   `std` (`arbitrary` does).
//!
//! # Traits
//!
//! Every generator implements the [`rand_core`] 0.10 traits (`TryRng<Error =
//! Infallible>`, `TryCryptoRng`, `SeedableRng`, hence `Rng` and `CryptoRng`; the
//! thread-local handle all but `SeedableRng`), so `rand` 0.10 uses it directly. The XOFs the sponges are built on are in [`xof`]; which SIMD
//! backend each primitive uses here is [`backends()`].
//!
//! A 136-byte seed is one rate block, and a 136-byte key is the same as
//! `from_seed`:
//!
//! ```
//! use ratchet_rng::{ShakeRng, rand_core::{Rng, SeedableRng}};
//!
//! let seed: [u8; 136] = core::array::from_fn(|i| i as u8);
//! let mut a = ShakeRng::from_seed(seed.into());
//! let mut b = ShakeRng::from_key(&seed);
//! assert_eq!(a.next_u64(), b.next_u64());
//! assert_eq!(a.next_u32(), 0x7017_6ebd); // RandomSHAKE's SHAKE256 stream
//! ```
//!
//! # Using with rand 0.9 and 0.8
//!
//! The features `rand_core_09` (for `rand` 0.9) and `rand_core_06` (for `rand`
//! 0.8) add those versions' `RngCore`, `CryptoRng` and `SeedableRng` to every
//! generator (`ThreadRng` and `&ThreadRng` get `RngCore` and `CryptoRng`),
//! forwarding to the same code: every version reads the same bytes, and `seed_from_u64(n)` gives the same
//! generator in all three. The die rolls below are those `rand` 0.10's
//! `random_range(1..=6)` gives (other samplers differ where `rand` changed its
//! algorithms, e.g. `shuffle` between 0.8 and 0.9). Here `rand` 0.9 and 0.8 are this crate's
//! dev-dependencies `rand09` and `rand08`; your code says `rand::`.
//!
//! ```
//! # #[cfg(feature = "rand_core_09")] fn main() {
//! use rand09::{Rng, SeedableRng};
//! use ratchet_rng::ChaChaKeyErasureRng;
//!
//! let mut rng = ChaChaKeyErasureRng::seed_from_u64(2024);
//! let rolls: Vec<u8> = (0..8).map(|_| rng.random_range(1..=6)).collect();
//! assert_eq!(rolls, [3, 2, 6, 5, 6, 2, 4, 5]);
//! # }
//! # #[cfg(not(feature = "rand_core_09"))] fn main() {}
//! ```
//!
//! ```
//! # #[cfg(feature = "rand_core_06")] fn main() {
//! use rand08::{Rng, SeedableRng};
//! use ratchet_rng::ChaChaKeyErasureRng;
//!
//! let mut rng = ChaChaKeyErasureRng::seed_from_u64(2024);
//! let rolls: Vec<u8> = (0..8).map(|_| rng.gen_range(1..=6)).collect();
//! assert_eq!(rolls, [3, 2, 6, 5, 6, 2, 4, 5]);
//! # }
//! # #[cfg(not(feature = "rand_core_06"))] fn main() {}
//! ```
//!
//! - Bring one version's traits into scope per module: with both `rand_core`
//!   0.10's and an older `RngCore` / `SeedableRng` imported, calls such as
//!   `seed_from_u64` or `next_u32` are ambiguous.
//! - `from_seed`, `from_rng` and `seed_from_u64` of the older traits give the 0.10
//!   streams. Their OS-seeded constructors (`from_entropy` in 0.6, `from_os_rng`
//!   in 0.9) exist when your `rand` enables them (0.8 and 0.9 do by default) and
//!   seed through their own `getrandom`; this crate's inherent `from_os_rng()`
//!   (feature `sys_rng`) is always there. The compat features add no other
//!   dependency and work in `no_std`.
//! - In rustdoc, each trait impl says which `rand_core` it is and the feature
//!   that adds it, as "rand_core 0.6 (`rand_core_06` feature): for rand 0.8".
//!
//! # Further reading
//!
//! The guides are modules of these docs ([`guide`]): [`guide::security`] (the
//! threat model: backtracking resistance, fork safety, zeroization, constant
//! time), [`guide::streams`] (the stream definitions and the value-stability
//! policy), [`guide::errors`] (bad input, errors and panics),
//! [`guide::derivation`] and [`guide::parallel`] (`SeedTree` and saved states),
//! [`guide::no_std`] (firmware), [`guide::wasm`], [`guide::clients`],
//! [`guide::performance`], [`guide::statistics`] and [`guide::changelog`].

#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs)]
// The public API marks every pure getter `#[must_use]` (issue 27); CI denies
// clippy warnings, so a new one without it fails there.
#![warn(clippy::must_use_candidate)]

#[cfg(any(test, feature = "thread_rng"))]
extern crate std;

#[cfg(ratchet_rng_inspect)]
#[doc(hidden)]
#[path = "inspect.rs"]
pub mod __inspect;
mod aes;
#[cfg(feature = "arbitrary")]
mod arbitrary_impls;
mod backend;
mod chacha;
#[cfg(any(feature = "rand_core_06", feature = "rand_core_09"))]
mod compat;
#[cfg(feature = "sys_rng")]
mod error;
#[cfg(doc)]
pub mod guide;
#[cfg(feature = "hazmat")]
pub mod hazmat;
mod keccak;
#[cfg(feature = "sys_rng")]
mod os;
mod rngs;
mod seed_tree;
#[cfg(feature = "serde")]
mod serde_impls;
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
pub use rngs::saved::{RestoreError, SAVED_STATE_MAX_BYTES, SavedState};
pub use rngs::shake::{SPONGE_SEED_BYTES, ShakeRng, SpongeSeed, TurboShakeRng};
pub use seed_tree::{SeedTree, SeedTreeRng};
#[cfg(feature = "thread_rng")]
pub use thread::{
    RESEED_BYTES, ThreadRng, fill, reseed_all_threads, rng, thread_rng, try_fill, u32, u64,
};

/// The README's code blocks, run as doctests (they assume the default features).
#[cfg(all(doctest, feature = "thread_rng"))]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
