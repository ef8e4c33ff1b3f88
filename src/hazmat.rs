//! Raw primitives and explicit backend selection, behind the `hazmat` feature.
//!
//! For tests, benches and fuzzing: run a primitive or a generator on an explicit
//! backend and compare it with `soft`. Nothing here is needed to use the
//! generators, and misuse (reusing a key period, a counter, a seed) is not
//! prevented.
//!
//! Backends are typed: [`Keccak`], [`ChaCha`] and [`Aes256`] values come only from
//! [`soft`](Keccak::soft), [`detect`](Keccak::detect), [`available`](Keccak::available)
//! or [`by_name`](Keccak::by_name), so holding one proves this CPU and build have
//! it, and the generators' `*_with_backend` constructors take them (they cannot
//! fail). Names (`Display`, `by_name`) are only for the edges: environment
//! variables, command lines, reports; they are those of
//! [`backends`](crate::backends).
//!
//! # Bad input
//! Nothing here panics on any run-time input: [`by_name`](Keccak::by_name) takes
//! any string and returns `None` for an unknown name (empty, wrong case, another
//! primitive's backend) as for a backend this CPU or build lacks; the kernels take slices of any
//! number of periods, pools or blocks, zero included (the key is then left
//! unchanged); [`Aes256::ctr_keystream`] takes any `u128` counter and wraps modulo
//! 2^128, and [`chacha_block`] any `u32` counter. Round counts are compile-time
//! parameters: one the primitive does not allow (Keccak outside `1..=24`, an odd
//! or zero ChaCha count) fails to compile.
//!
//! ```
//! use ratchet_rng::hazmat::Keccak;
//!
//! let mut reference = [1u64; 25];
//! Keccak::soft().permute::<12>(&mut reference);
//! for keccak in Keccak::available() {
//!     let mut state = [1u64; 25];
//!     keccak.permute::<12>(&mut state);
//!     assert_eq!(state, reference, "{}", keccak.name());
//! }
//! assert!(Keccak::by_name("no_such_backend").is_none());
//! ```

use core::fmt;

use crate::aes::{self, POOL_OUTPUT_BYTES};
use crate::backend::{AesBackend, ChaChaBackend, KeccakBackend};
use crate::chacha::{self, KEY_PERIOD_OUTPUT_BYTES};
use crate::keccak::{self, LANES, RATCHET_PERIOD_BYTES};
use crate::{
    AesCtrPoolRng, ChaCha12KeyErasureRng, ChaCha20KeyErasureRng, ChaChaKeyErasureRng, ShakeRng,
    SpongeSeed, TurboShakeRng,
};

macro_rules! backend_handle {
    ($(#[$doc:meta])* $name:ident($inner:ident)) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct $name(pub(crate) $inner);

        impl $name {
            /// The portable backend (always available).
            pub fn soft() -> Self {
                Self($inner::Soft)
            }

            /// The backend generators pick on this CPU.
            pub fn detect() -> Self {
                Self($inner::detect())
            }

            /// Every backend this CPU and build allow, `soft` first.
            pub fn available() -> impl Iterator<Item = Self> {
                $inner::available().map(Self)
            }

            /// The backend called `name`, if this CPU and build allow it; `None`
            /// for any other string (unknown, empty, differently cased). Never
            /// panics. The string edge (environment variables, command lines).
            pub fn by_name(name: &str) -> Option<Self> {
                $inner::from_name(name).map(Self)
            }

            /// Every name of this family, whether or not this CPU and build have
            /// the backend.
            pub const NAMES: &'static [&'static str] = $inner::NAMES;

            /// The backend's name.
            pub fn name(self) -> &'static str {
                self.0.name()
            }
        }

        impl fmt::Display for $name {
            /// The backend's name.
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

/// The `*_with_backend` constructors of a generator, on a typed backend: the
/// same stream as `from_seed` / `from_key` on every backend.
macro_rules! with_backend {
    ($($rng:ty: $backend:ident, $seed:ty;)*) => {$(
        impl $rng {
            #[doc = concat!("[`from_key`](", stringify!($rng), "::from_key) on `backend`: the same stream")]
            /// as on every other backend.
            pub fn from_key_with_backend(key: &[u8], backend: $backend) -> Self {
                Self::from_key_on(key, backend.0)
            }

            /// [`from_seed`](rand_core::SeedableRng::from_seed) on `backend`: the same stream
            /// as on every other backend.
            pub fn from_seed_with_backend(seed: $seed, backend: $backend) -> Self {
                Self::from_seed_on(seed, backend.0)
            }
        }
    )*};
}

backend_handle! {
    /// A Keccak-p\[1600\] backend.
    Keccak(KeccakBackend)
}

backend_handle! {
    /// A ChaCha backend (chacha8rand layout).
    ChaCha(ChaChaBackend)
}

backend_handle! {
    /// An AES-256 backend.
    Aes256(AesBackend)
}

with_backend! {
    TurboShakeRng: Keccak, SpongeSeed;
    ShakeRng: Keccak, SpongeSeed;
    ChaChaKeyErasureRng: ChaCha, [u8; 32];
    ChaCha12KeyErasureRng: ChaCha, [u8; 32];
    ChaCha20KeyErasureRng: ChaCha, [u8; 32];
    AesCtrPoolRng: Aes256, [u8; 32];
}

impl Keccak {
    /// Keccak-p\[1600, `ROUNDS`\] (the last `ROUNDS` rounds of Keccak-f\[1600\]).
    pub fn permute<const ROUNDS: usize>(self, state: &mut [u64; LANES]) {
        keccak::permute::<ROUNDS>(self.0, state);
    }

    /// One ratchet period of the sponge generators: 8 rate blocks of the squeezing
    /// `state` written to `out` (permuting after each), then the ratchet.
    pub fn squeeze_period<const ROUNDS: usize>(
        self,
        state: &mut [u64; LANES],
        out: &mut [u8; RATCHET_PERIOD_BYTES],
    ) {
        keccak::squeeze_period::<ROUNDS>(self.0, state, out);
    }
}

impl ChaCha {
    /// Consecutive chacha8rand key periods with `ROUNDS` rounds (8, 12 or 20):
    /// 992 output bytes each, `key` replaced by the next key after each. Every
    /// period uses block counters 0 to 15 afresh (no counter carries over), so
    /// any number of periods is fine; an empty `out` leaves `key` unchanged.
    pub fn key_periods<const ROUNDS: usize>(
        self,
        key: &mut [u32; 8],
        out: &mut [[u8; KEY_PERIOD_OUTPUT_BYTES]],
    ) {
        chacha::key_periods::<ROUNDS>(self.0, key, out);
    }
}

impl Aes256 {
    /// Consecutive `AesCtrPoolRng` pools: for each, the 4096-byte AES-256-CTR
    /// keystream under `key` from counter 0; bytes 0..32 replace `key`, the rest
    /// is written to the pool. Every pool restarts the counter at 0 (blocks 0 to
    /// 255), so any number of pools is fine; an empty `out` leaves `key` unchanged.
    pub fn fill_pools(self, key: &mut [u8; 32], out: &mut [[u8; POOL_OUTPUT_BYTES]]) {
        aes::fill_pools(self.0, key, out);
    }

    /// The AES-256-CTR keystream under `key` from `counter`: `out[i]` is
    /// AES-256 of the big-endian block `counter + i` (mod 2^128): any counter,
    /// `u128::MAX` included, wraps to 0 without panicking.
    pub fn ctr_keystream(self, key: &[u8; 32], counter: u128, out: &mut [[u8; 16]]) {
        aes::ctr_keystream(self.0, key, counter, out);
    }
}

/// One chacha8rand key period with `ROUNDS` rounds (8, 12 or 20) by the
/// 32-bit scalar kernel, on any target: 992 output bytes, `key` replaced by the
/// next key; the same bytes as `ChaCha::soft().key_periods` with one period.
/// The `soft` backend runs this kernel on 32-bit targets without SIMD
/// (Cortex-M, RISC-V rv32, wasm32 without `simd128`); this entry point lets a
/// 64-bit build check it too (constant-time tests under Valgrind, fuzzing).
pub fn chacha_key_period_scalar32<const ROUNDS: usize>(
    key: &mut [u32; 8],
    out: &mut [u8; KEY_PERIOD_OUTPUT_BYTES],
) {
    chacha::scalar32::key_period::<ROUNDS>(key, out);
}

/// Consecutive `AesCtrPoolRng` pools (as [`Aes256::fill_pools`]) by the
/// 32-bit fixsliced AES kernel, on any target: the kernel the `soft` backend
/// runs on 32-bit targets (Cortex-M, RISC-V rv32, i686); this entry point lets
/// a 64-bit build check it too (its stack scrub, constant-time tests).
pub fn aes_fill_pools_fixslice32(key: &mut [u8; 32], out: &mut [[u8; POOL_OUTPUT_BYTES]]) {
    aes::fixslice32::fill_pools(key, out);
}

/// The AES-256-CTR keystream (as [`Aes256::ctr_keystream`]) by the 32-bit
/// fixsliced AES kernel, on any target (see [`aes_fill_pools_fixslice32`]).
pub fn aes_ctr_keystream_fixslice32(key: &[u8; 32], counter: u128, out: &mut [[u8; 16]]) {
    aes::fixslice32::ctr_keystream(key, counter, out);
}

/// The RFC 8439 ChaCha block function with `ROUNDS` rounds (portable code):
/// 32-bit block counter (any value, `u32::MAX` included), 96-bit nonce, full
/// feed-forward.
#[must_use]
pub fn chacha_block<const ROUNDS: usize>(
    key: &[u32; 8],
    counter: u32,
    nonce: &[u32; 3],
) -> [u32; 16] {
    chacha::soft::block::<ROUNDS>(key, counter, nonce)
}
