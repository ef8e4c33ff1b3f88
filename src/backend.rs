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

// One cached probe per Keccak backend (`cpufeatures` stores the answer in an atomic).
#[cfg(all(
    target_arch = "x86_64",
    not(ratchet_rng_backend = "soft"),
    not(ratchet_rng_no_avx2)
))]
cpufeatures::new!(keccak_avx2_probe, "avx2");
#[cfg(all(
    target_arch = "x86_64",
    not(ratchet_rng_backend = "soft"),
    not(ratchet_rng_no_avx2),
    not(ratchet_rng_no_avx512)
))]
cpufeatures::new!(keccak_avx512_probe, "avx512f", "avx512vl");
#[cfg(all(
    target_arch = "aarch64",
    not(ratchet_rng_backend = "soft"),
    not(ratchet_rng_no_sha3)
))]
cpufeatures::new!(keccak_sha3_probe, "sha3");

/// The Keccak-p\[1600\] implementation a sponge generator uses.
///
/// Build switches: `ratchet_rng_backend = "soft"` leaves only `Soft`;
/// `ratchet_rng_no_avx512` removes `X86Avx512`; `ratchet_rng_no_avx2` removes
/// `X86Avx2` *and* `X86Avx512` (a CPU without AVX2 has no AVX-512 either, so "no
/// AVX2" means "no x86 SIMD"); `ratchet_rng_no_sha3` removes `Aarch64Sha3`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum KeccakBackend {
    /// The portable, constant-time reference (`keccak/soft.rs`).
    Soft,
    /// AVX2 (`keccak/x86_avx2.rs`).
    #[cfg(target_arch = "x86_64")]
    #[allow(dead_code, reason = "not built when the build switches remove it")]
    X86Avx2(Detected),
    /// AVX-512F + AVX-512VL (`keccak/x86_avx512.rs`).
    #[cfg(target_arch = "x86_64")]
    #[allow(dead_code, reason = "not built when the build switches remove it")]
    X86Avx512(Detected),
    /// ARMv8.2 SHA3 instructions (`keccak/aarch64_sha3.rs`).
    #[cfg(target_arch = "aarch64")]
    #[allow(dead_code, reason = "not built when the build switches remove it")]
    Aarch64Sha3(Detected),
}

impl KeccakBackend {
    /// The fastest backend this CPU supports (or `Soft` when forced by
    /// `RATCHET_RNG_BACKEND=soft`).
    ///
    /// Preference, by measurement: AVX-512, then SHA3, then soft. On a Sapphire
    /// Rapids core (default build flags, 1088-byte periods, CPU time) the AVX-512
    /// kernel squeezes 1.75x (12 rounds) and 1.6x (24 rounds) as fast as the
    /// portable code; the AVX2 kernel is no faster than the portable code with 12
    /// rounds and about 25% slower with 24 (one lane per register needs 3
    /// instructions per rotation and spills with 16 registers), so it is never
    /// chosen here; it stays a tested backend (`available()`).
    pub(crate) fn detect() -> Self {
        if let Some(b) = Self::x86_avx512() {
            return b;
        }
        if let Some(b) = Self::aarch64_sha3() {
            return b;
        }
        Self::Soft
    }

    /// Every backend this CPU and build allow, `Soft` first (for tests).
    #[allow(dead_code, reason = "used by the backend-equivalence tests")]
    pub(crate) fn available() -> impl Iterator<Item = Self> {
        [
            Some(Self::Soft),
            Self::x86_avx2(),
            Self::x86_avx512(),
            Self::aarch64_sha3(),
        ]
        .into_iter()
        .flatten()
    }

    /// The backend's name, as used by `RATCHET_RNG_EXPECT_BACKENDS`.
    #[allow(dead_code, reason = "used by the backend-equivalence tests")]
    pub(crate) const fn name(self) -> &'static str {
        match self {
            Self::Soft => "soft",
            #[cfg(target_arch = "x86_64")]
            Self::X86Avx2(_) => "x86_avx2",
            #[cfg(target_arch = "x86_64")]
            Self::X86Avx512(_) => "x86_avx512",
            #[cfg(target_arch = "aarch64")]
            Self::Aarch64Sha3(_) => "aarch64_sha3",
        }
    }

    /// `X86Avx2` if the CPU has AVX2 and the build allows it.
    fn x86_avx2() -> Option<Self> {
        #[cfg(all(
            target_arch = "x86_64",
            not(ratchet_rng_backend = "soft"),
            not(ratchet_rng_no_avx2)
        ))]
        if keccak_avx2_probe::get() {
            return Some(Self::X86Avx2(Detected(())));
        }
        None
    }

    /// `X86Avx512` if the CPU has AVX-512F and AVX-512VL and the build allows it.
    fn x86_avx512() -> Option<Self> {
        #[cfg(all(
            target_arch = "x86_64",
            not(ratchet_rng_backend = "soft"),
            not(ratchet_rng_no_avx2),
            not(ratchet_rng_no_avx512)
        ))]
        if keccak_avx512_probe::get() {
            return Some(Self::X86Avx512(Detected(())));
        }
        None
    }

    /// `Aarch64Sha3` if the CPU has the ARMv8.2 SHA3 extension and the build
    /// allows it.
    fn aarch64_sha3() -> Option<Self> {
        #[cfg(all(
            target_arch = "aarch64",
            not(ratchet_rng_backend = "soft"),
            not(ratchet_rng_no_sha3)
        ))]
        if keccak_sha3_probe::get() {
            return Some(Self::Aarch64Sha3(Detected(())));
        }
        None
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
}
