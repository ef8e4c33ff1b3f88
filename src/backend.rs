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

// Run-time probes for the ChaCha backends (`cpufeatures`: cached in an atomic,
// works in `no_std`). Declared only where the variant they feed exists.
#[cfg(all(
    target_arch = "x86_64",
    not(ratchet_rng_backend = "soft"),
    not(ratchet_rng_no_avx2)
))]
cpufeatures::new!(chacha_avx2_cpuid, "avx2");
#[cfg(all(
    target_arch = "x86_64",
    not(ratchet_rng_backend = "soft"),
    not(ratchet_rng_no_avx2),
    not(ratchet_rng_no_avx512)
))]
cpufeatures::new!(chacha_avx512_cpuid, "avx512f");
#[cfg(all(
    target_arch = "aarch64",
    target_endian = "little",
    not(ratchet_rng_backend = "soft")
))]
cpufeatures::new!(chacha_neon_cpuid, "neon");

/// The ChaCha implementation a ChaCha generator uses.
///
/// Build switches remove variants outright: `ratchet_rng_backend = "soft"`
/// leaves only `Soft`; `ratchet_rng_no_avx512` removes `X86Avx512`;
/// `ratchet_rng_no_avx2` removes `X86Avx2` *and* `X86Avx512` (a build without
/// AVX2 models a CPU without it, and every AVX-512 CPU has AVX2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ChaChaBackend {
    /// The portable reference (`chacha/soft.rs`), lane-parallel over 4 blocks.
    Soft,
    /// AVX2 (`chacha/x86_avx2.rs`): 8 blocks, two groups, per `ymm` pass.
    #[cfg(all(
        target_arch = "x86_64",
        not(ratchet_rng_backend = "soft"),
        not(ratchet_rng_no_avx2)
    ))]
    X86Avx2(Detected),
    /// AVX-512F (`chacha/x86_avx512.rs`): 16 blocks, a whole key period, per
    /// `zmm` pass.
    #[cfg(all(
        target_arch = "x86_64",
        not(ratchet_rng_backend = "soft"),
        not(ratchet_rng_no_avx2),
        not(ratchet_rng_no_avx512)
    ))]
    X86Avx512(Detected),
    /// NEON (`chacha/aarch64_neon.rs`): two groups interleaved per pass.
    #[cfg(all(
        target_arch = "aarch64",
        target_endian = "little",
        not(ratchet_rng_backend = "soft")
    ))]
    Aarch64Neon(Detected),
}

impl ChaChaBackend {
    /// The fastest backend this CPU (and build) allows.
    ///
    /// Preference, by measurement (`cargo bench`, 512 KiB `fill_bytes`):
    /// AVX-512 over AVX2 over the portable code on x86_64; NEON over the
    /// portable code on aarch64.
    pub(crate) fn detect() -> Self {
        #[cfg(all(
            target_arch = "x86_64",
            not(ratchet_rng_backend = "soft"),
            not(ratchet_rng_no_avx2),
            not(ratchet_rng_no_avx512)
        ))]
        if let Some(backend) = Self::x86_avx512() {
            return backend;
        }
        #[cfg(all(
            target_arch = "x86_64",
            not(ratchet_rng_backend = "soft"),
            not(ratchet_rng_no_avx2)
        ))]
        if let Some(backend) = Self::x86_avx2() {
            return backend;
        }
        #[cfg(all(
            target_arch = "aarch64",
            target_endian = "little",
            not(ratchet_rng_backend = "soft")
        ))]
        if let Some(backend) = Self::aarch64_neon() {
            return backend;
        }
        Self::Soft
    }

    /// Every backend this CPU and build allow, `Soft` first (for the
    /// cross-backend tests).
    #[cfg_attr(
        not(test),
        allow(dead_code, reason = "the cross-backend tests enumerate backends")
    )]
    pub(crate) fn available() -> impl Iterator<Item = Self> {
        [
            Some(Self::Soft),
            #[cfg(all(
                target_arch = "x86_64",
                not(ratchet_rng_backend = "soft"),
                not(ratchet_rng_no_avx2)
            ))]
            Self::x86_avx2(),
            #[cfg(all(
                target_arch = "x86_64",
                not(ratchet_rng_backend = "soft"),
                not(ratchet_rng_no_avx2),
                not(ratchet_rng_no_avx512)
            ))]
            Self::x86_avx512(),
            #[cfg(all(
                target_arch = "aarch64",
                target_endian = "little",
                not(ratchet_rng_backend = "soft")
            ))]
            Self::aarch64_neon(),
        ]
        .into_iter()
        .flatten()
    }

    /// `X86Avx2` if the CPU has AVX2.
    #[cfg(all(
        target_arch = "x86_64",
        not(ratchet_rng_backend = "soft"),
        not(ratchet_rng_no_avx2)
    ))]
    fn x86_avx2() -> Option<Self> {
        chacha_avx2_cpuid::get().then_some(Self::X86Avx2(Detected(())))
    }

    /// `X86Avx512` if the CPU has AVX-512F.
    #[cfg(all(
        target_arch = "x86_64",
        not(ratchet_rng_backend = "soft"),
        not(ratchet_rng_no_avx2),
        not(ratchet_rng_no_avx512)
    ))]
    fn x86_avx512() -> Option<Self> {
        chacha_avx512_cpuid::get().then_some(Self::X86Avx512(Detected(())))
    }

    /// `Aarch64Neon` if the CPU has NEON (always, on aarch64 Linux and macOS:
    /// it is baseline; probed anyway so the variant keeps its meaning).
    #[cfg(all(
        target_arch = "aarch64",
        target_endian = "little",
        not(ratchet_rng_backend = "soft")
    ))]
    fn aarch64_neon() -> Option<Self> {
        chacha_neon_cpuid::get().then_some(Self::Aarch64Neon(Detected(())))
    }

    /// The backend's name: `soft`, `x86_avx2`, `x86_avx512` or `aarch64_neon`
    /// (as in `RATCHET_RNG_EXPECT_BACKENDS`).
    #[cfg_attr(
        not(test),
        allow(dead_code, reason = "the cross-backend tests report backends by name")
    )]
    pub(crate) const fn name(self) -> &'static str {
        match self {
            Self::Soft => "soft",
            #[cfg(all(
                target_arch = "x86_64",
                not(ratchet_rng_backend = "soft"),
                not(ratchet_rng_no_avx2)
            ))]
            Self::X86Avx2(_) => "x86_avx2",
            #[cfg(all(
                target_arch = "x86_64",
                not(ratchet_rng_backend = "soft"),
                not(ratchet_rng_no_avx2),
                not(ratchet_rng_no_avx512)
            ))]
            Self::X86Avx512(_) => "x86_avx512",
            #[cfg(all(
                target_arch = "aarch64",
                target_endian = "little",
                not(ratchet_rng_backend = "soft")
            ))]
            Self::Aarch64Neon(_) => "aarch64_neon",
        }
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
