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

/// The Keccak backend the sponge generators take on the aarch64 core whose
/// MIDR_EL1 is `midr_el1`, where the core has (`has_sha3`) or lacks the
/// ARMv8.2 SHA3 extension: `"soft"` (the portable kernel) or
/// `"aarch64_sha3"`. A pure function of its arguments, on every target, so
/// that the choice can be tested anywhere; on aarch64 the crate asks it with
/// the running core's MIDR_EL1 (read once per process: the kernel's emulated
/// `mrs` on Linux and Android, else its `sysfs` copy; on Apple's systems "an
/// Apple core"; elsewhere none, which is an unknown core).
///
/// Only the implementer code (bits 31:24) and the part number (bits 15:4)
/// count. Without the extension the answer is always `"soft"`. With it,
/// `"aarch64_sha3"` only where the SHA3 kernel is known to be worth using,
/// Apple's cores, as OpenSSL does (`ARMV8_HAVE_SHA3_AND_WORTH_USING` in
/// `crypto/armcap.c`: Apple M1 and M2 parts by MIDR on Linux, Apple M1 to M4
/// by name on macOS), and `"soft"` on every other core, unknown ones
/// included. The reason is where the SHA3 instructions issue: on Arm's own
/// cores LLVM 19's scheduling models put EOR3, RAX1, XAR and BCAX on one
/// vector pipe (a reciprocal throughput of 1 cycle, against 0.25 for a plain
/// vector EOR on Neoverse V1/V2/V3, under `llvm-mca-19 -mattr=+sha3`), where
/// the scalar code has four to six integer pipes and rotations for free in
/// the operand shifter; on Apple's cores (models `apple-m1` to `apple-m4`)
/// they issue on all three modelled vector pipes. Modelled on the crate's own
/// kernels (issue 48), 12 rounds cost 783 cycles on SHA3 against 383 for the
/// portable code on `neoverse-v1`, and 785 against 258 on `neoverse-v2`.
///
/// | implementer | part | core | backend | source |
/// |---|---|---|---|---|
/// | `0x41` | `0xD08` | Cortex-A72 | `soft` | no SHA3 extension (QEMU's model: no `sha3` HWCAP) |
/// | `0x41` | `0xD0B` | Cortex-A76 | `soft` | no SHA3 extension (QEMU's model) |
/// | `0x41` | `0xD0C` | Neoverse N1 | `soft` | no SHA3 extension (QEMU's model); AWS-LC sends N1 to scalar Keccak (aws/aws-lc#2539) |
/// | `0x41` | `0xD41` | Cortex-A78 | `soft` | no SHA3 extension (Armv8.2 crypto: AES, SHA-1, SHA-256) |
/// | `0x41` | `0xD44` | Cortex-X1 | `soft` | no SHA3 extension (Armv8.2 crypto: AES, SHA-1, SHA-256) |
/// | `0x41` | `0xD40` | Neoverse V1 | `soft` | AWS-LC (aws/aws-lc#2539); model `neoverse-v1`: 783 cycles on SHA3, 383 portable (issue 48) |
/// | `0x41` | `0xD4F` | Neoverse V2 | `soft` | AWS-LC (aws/aws-lc#2539); keccak-asm measured SHA3 about 2x slower on Graviton4 (DaniPopes/keccak-asm#15); model `neoverse-v2`: 785 against 258 |
/// | `0x41` | `0xD49` | Neoverse N2 | `soft` | model `neoverse-n2`: SHA3 on one pipe; proposed for AWS-LC's scalar group (aws/aws-lc#3295) |
/// | `0x41` | `0xD84` | Neoverse V3 | `soft` | AWS-LC groups it with V1 and V2 (aws/aws-lc#3374); model `neoverse-v3`: SHA3 on one pipe |
/// | `0x41` | `0xD8E` | Neoverse N3 | `soft` | model `neoverse-n3`: SHA3 on one pipe |
/// | `0x41` | `0xD47` | Cortex-A710 | `soft` | model `cortex-a710`: SHA3 on one pipe |
/// | `0x41` | `0xD48` | Cortex-X2 | `soft` | model `cortex-x2`: SHA3 on one pipe |
/// | `0x41` | `0xD4E` | Cortex-X3 | `soft` | model `cortex-x3`: SHA3 on one pipe |
/// | `0x41` | `0xD81` | Cortex-A720 | `soft` | model `cortex-a720`: SHA3 on one pipe |
/// | `0x41` | `0xD82` | Cortex-X4 | `soft` | model `cortex-x4`: SHA3 on one pipe |
/// | `0x6D` | `0xD49` | Azure Cobalt 100 | `soft` | a Neoverse N2 (Linux `cputype.h`, LLVM's host detection) |
/// | `0xC0` | `0xAC3` | AmpereOne | `soft` | not in OpenSSL's list, no published measurement; model `ampere1`: SHA3 on the same two pipes as a vector EOR, so a candidate once measured |
/// | `0xC0` | `0xAC4` | AmpereOne A | `soft` | as AmpereOne (model `ampere1a`) |
/// | `0xC0` | `0xAC5` | AmpereOne B | `soft` | as AmpereOne (model `ampere1b`) |
/// | `0x51` | `0x001` | Oryon | `soft` | not in OpenSSL's list, no published measurement; model `oryon-1` issues SHA3 on all four vector pipes, so a candidate once measured |
/// | `0x61` | `0x022` | Apple M1 Icestorm | `aarch64_sha3` | OpenSSL (`APPLE_CPU_PART_M1_ICESTORM`) |
/// | `0x61` | `0x023` | Apple M1 Firestorm | `aarch64_sha3` | OpenSSL; model `apple-m1`: SHA3 on three pipes, 315 cycles per 12 rounds (issue 48) |
/// | `0x61` | `0x024` | Apple M1 Pro Icestorm | `aarch64_sha3` | OpenSSL |
/// | `0x61` | `0x025` | Apple M1 Pro Firestorm | `aarch64_sha3` | OpenSSL |
/// | `0x61` | `0x028` | Apple M1 Max Icestorm | `aarch64_sha3` | OpenSSL |
/// | `0x61` | `0x029` | Apple M1 Max Firestorm | `aarch64_sha3` | OpenSSL |
/// | `0x61` | `0x032` | Apple M2 Blizzard | `aarch64_sha3` | OpenSSL (`APPLE_CPU_PART_M2_BLIZZARD`) |
/// | `0x61` | `0x033` | Apple M2 Avalanche | `aarch64_sha3` | OpenSSL |
/// | `0x61` | `0x034` | Apple M2 Pro Blizzard | `aarch64_sha3` | OpenSSL |
/// | `0x61` | `0x035` | Apple M2 Pro Avalanche | `aarch64_sha3` | OpenSSL |
/// | `0x61` | `0x038` | Apple M2 Max Blizzard | `aarch64_sha3` | OpenSSL |
/// | `0x61` | `0x039` | Apple M2 Max Avalanche | `aarch64_sha3` | OpenSSL |
/// | `0x61` | `0x048` | Apple M3 | `aarch64_sha3` | OpenSSL on macOS ("Apple M3"); part from LLVM's host detection |
/// | `0x61` | `0x049` | Apple M3 | `aarch64_sha3` | as above |
/// | `0x61` | any other | any other Apple part | `aarch64_sha3` | OpenSSL on macOS (M1 to M4); on Apple's systems the crate reads no MIDR and knows only "Apple"; every Apple core with the extension has it on all its vector pipes in LLVM's models |
///
/// Arm part numbers are those of Linux's `arch/arm64/include/asm/cputype.h`.
/// Every core without a row (another implementer or part, QEMU's `max` CPU
/// with implementer 0, no MIDR at all) gets `"soft"`, which is correct
/// everywhere and, by the models, the faster kernel on every core but
/// Apple's. The models are static, not measurements: where one of these
/// cores turns out otherwise on hardware, its row changes, with the
/// measurement as its source. One conflicting sign is known: mlkem-native
/// marks Graviton4's successor (Neoverse V3) as issuing SHA3 on all vector
/// pipes (pq-code-package/mlkem-native#1784), where LLVM 19's model and
/// AWS-LC (for single-state Keccak) do not; its row stays `soft` until
/// measured.
///
/// ```
/// use ratchet_rng::hazmat::keccak_for_aarch64_core;
///
/// // AWS Graviton4 (Neoverse V2, r0p1) with the extension: the portable kernel.
/// assert_eq!(keccak_for_aarch64_core(0x410F_D4F1, true), "soft");
/// // An Apple M1 performance core: the SHA3 kernel, if the extension is there.
/// assert_eq!(keccak_for_aarch64_core(0x611F_0231, true), "aarch64_sha3");
/// assert_eq!(keccak_for_aarch64_core(0x611F_0231, false), "soft");
/// ```
#[must_use]
pub fn keccak_for_aarch64_core(midr_el1: u64, has_sha3: bool) -> &'static str {
    crate::backend::aarch64_cpu::keccak_for_core(midr_el1, has_sha3)
}
