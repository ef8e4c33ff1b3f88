//! Backend selection: every CPU-feature probe of the crate lives here.
//!
//! Each primitive has one `Copy` enum naming its backends. A generator resolves
//! its backend once, at construction, with `detect()`, and `match`es it on every
//! refill. Variants other than `Soft` may only be constructed in this module, after
//! the CPU was found to support them, so holding one proves the CPU has it.
//!
//! Build-time switches (see `build.rs`) take choices away for testing:
//! `RATCHET_RNG_BACKEND=soft` forces the portable backends everywhere;
//! `RATCHET_RNG_NO_AVX512`, `_NO_AVX2`, `_NO_AES`, `_NO_SHA3` remove one family.
//! Detection never happens at build time.

/// Proof that run-time detection found a CPU feature: only this module can make
/// one (its field is private), so an enum variant holding it can only come from
/// `detect()` / `available()` here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(dead_code, reason = "held by the SIMD variants as they are added")]
pub(crate) struct Detected(());

// ---------------------------------------------------------------------------
// Keccak
// ---------------------------------------------------------------------------

/// The Keccak-p\[1600\] implementation a sponge generator uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum KeccakBackend {
    /// The portable, constant-time reference (`keccak/soft.rs`).
    Soft,
}

impl KeccakBackend {
    /// The fastest backend this CPU supports (or `Soft` when forced by
    /// `RATCHET_RNG_BACKEND=soft`).
    pub(crate) fn detect() -> Self {
        Self::Soft
    }
}

// ---------------------------------------------------------------------------
// ChaCha
// ---------------------------------------------------------------------------

/// The ChaCha implementation a ChaCha generator uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ChaChaBackend {
    /// The portable reference (`chacha/soft.rs`), lane-parallel over 4 blocks.
    Soft,
}

impl ChaChaBackend {
    /// The fastest backend this CPU supports.
    pub(crate) fn detect() -> Self {
        Self::Soft
    }
}

// ---------------------------------------------------------------------------
// AES
// ---------------------------------------------------------------------------

/// The AES-256 implementation an AES generator uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AesBackend {
    /// The portable, bitsliced, constant-time reference (`aes/soft.rs`).
    Soft,
}

impl AesBackend {
    /// The fastest backend this CPU supports.
    pub(crate) fn detect() -> Self {
        Self::Soft
    }

    /// Whether this backend runs on AES hardware: the thread-local generator uses
    /// `AesCtrPoolRng` only then (the portable AES is slower than ChaCha).
    #[cfg(all(feature = "std", feature = "os-rng"))]
    pub(crate) fn has_hardware(self) -> bool {
        !matches!(self, Self::Soft)
    }
}
