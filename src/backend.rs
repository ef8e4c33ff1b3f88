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
//! Detection never happens at build time. `build.rs` turns the target and the
//! switches into one cfg per SIMD backend family (`ratchet_rng_x86_avx2`,
//! `ratchet_rng_x86_avx512`, `ratchet_rng_x86_aesni`, `ratchet_rng_x86_vaes256`,
//! `ratchet_rng_x86_vaes512`, `ratchet_rng_aarch64_neon`, `ratchet_rng_aarch64_sha3`,
//! `ratchet_rng_aarch64_aes`); the code gates each backend on its family cfg.

/// Proof that run-time detection found a CPU feature: only this module can make
/// one (its field is private), so an enum variant holding it can only come from
/// `detect()` / `available()` here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(dead_code, reason = "never read: holding one is the proof")]
pub(crate) struct Detected(());

// ---------------------------------------------------------------------------
// Keccak
// ---------------------------------------------------------------------------

// One cached probe per Keccak backend (`cpufeatures` stores the answer in an atomic).
#[cfg(ratchet_rng_x86_avx2)]
cpufeatures::new!(keccak_avx2_probe, "avx2");
#[cfg(ratchet_rng_x86_avx512)]
cpufeatures::new!(keccak_avx512_probe, "avx512f", "avx512vl");
#[cfg(ratchet_rng_aarch64_sha3)]
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
    #[cfg(ratchet_rng_x86_avx2)]
    X86Avx2(Detected),
    /// AVX-512F + AVX-512VL (`keccak/x86_avx512.rs`).
    #[cfg(ratchet_rng_x86_avx512)]
    X86Avx512(Detected),
    /// ARMv8.2 SHA3 instructions (`keccak/aarch64_sha3.rs`).
    #[cfg(ratchet_rng_aarch64_sha3)]
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
    #[allow(dead_code, reason = "used by the tests and the `hazmat` feature")]
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
    #[allow(dead_code, reason = "used by the tests and the `hazmat` feature")]
    pub(crate) const fn name(self) -> &'static str {
        match self {
            Self::Soft => "soft",
            #[cfg(ratchet_rng_x86_avx2)]
            Self::X86Avx2(_) => "x86_avx2",
            #[cfg(ratchet_rng_x86_avx512)]
            Self::X86Avx512(_) => "x86_avx512",
            #[cfg(ratchet_rng_aarch64_sha3)]
            Self::Aarch64Sha3(_) => "aarch64_sha3",
        }
    }

    /// `X86Avx2` if the CPU has AVX2 and the build allows it.
    fn x86_avx2() -> Option<Self> {
        #[cfg(ratchet_rng_x86_avx2)]
        if keccak_avx2_probe::get() {
            return Some(Self::X86Avx2(Detected(())));
        }
        None
    }

    /// `X86Avx512` if the CPU has AVX-512F and AVX-512VL and the build allows it.
    fn x86_avx512() -> Option<Self> {
        #[cfg(ratchet_rng_x86_avx512)]
        if keccak_avx512_probe::get() {
            return Some(Self::X86Avx512(Detected(())));
        }
        None
    }

    /// `Aarch64Sha3` if the CPU has the ARMv8.2 SHA3 extension and the build
    /// allows it.
    fn aarch64_sha3() -> Option<Self> {
        #[cfg(ratchet_rng_aarch64_sha3)]
        if keccak_sha3_probe::get() {
            return Some(Self::Aarch64Sha3(Detected(())));
        }
        None
    }
}

// ---------------------------------------------------------------------------
// ChaCha
// ---------------------------------------------------------------------------

// Run-time probes for the ChaCha backends (`cpufeatures`: cached in an atomic,
// works in `no_std`). Declared only where the variant they feed exists.
#[cfg(ratchet_rng_x86_avx2)]
cpufeatures::new!(chacha_avx2_cpuid, "avx2");
#[cfg(ratchet_rng_x86_avx512)]
cpufeatures::new!(chacha_avx512_cpuid, "avx512f");
#[cfg(ratchet_rng_aarch64_neon)]
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
    #[cfg(ratchet_rng_x86_avx2)]
    X86Avx2(Detected),
    /// AVX-512F (`chacha/x86_avx512.rs`): 16 blocks, a whole key period, per
    /// `zmm` pass.
    #[cfg(ratchet_rng_x86_avx512)]
    X86Avx512(Detected),
    /// NEON (`chacha/aarch64_neon.rs`): two groups interleaved per pass.
    #[cfg(ratchet_rng_aarch64_neon)]
    Aarch64Neon(Detected),
}

impl ChaChaBackend {
    /// The fastest backend this CPU (and build) allows.
    ///
    /// Preference, by measurement (`cargo bench`, 512 KiB `fill_bytes`):
    /// AVX-512 over AVX2 over the portable code on x86_64; NEON over the
    /// portable code on aarch64.
    pub(crate) fn detect() -> Self {
        #[cfg(ratchet_rng_x86_avx512)]
        if let Some(backend) = Self::x86_avx512() {
            return backend;
        }
        #[cfg(ratchet_rng_x86_avx2)]
        if let Some(backend) = Self::x86_avx2() {
            return backend;
        }
        #[cfg(ratchet_rng_aarch64_neon)]
        if let Some(backend) = Self::aarch64_neon() {
            return backend;
        }
        Self::Soft
    }

    /// Every backend this CPU and build allow, `Soft` first (for the
    /// cross-backend tests).
    #[cfg_attr(
        not(test),
        allow(dead_code, reason = "used by the tests and the `hazmat` feature")
    )]
    pub(crate) fn available() -> impl Iterator<Item = Self> {
        [
            Some(Self::Soft),
            #[cfg(ratchet_rng_x86_avx2)]
            Self::x86_avx2(),
            #[cfg(ratchet_rng_x86_avx512)]
            Self::x86_avx512(),
            #[cfg(ratchet_rng_aarch64_neon)]
            Self::aarch64_neon(),
        ]
        .into_iter()
        .flatten()
    }

    /// `X86Avx2` if the CPU has AVX2.
    #[cfg(ratchet_rng_x86_avx2)]
    fn x86_avx2() -> Option<Self> {
        chacha_avx2_cpuid::get().then_some(Self::X86Avx2(Detected(())))
    }

    /// `X86Avx512` if the CPU has AVX-512F.
    #[cfg(ratchet_rng_x86_avx512)]
    fn x86_avx512() -> Option<Self> {
        chacha_avx512_cpuid::get().then_some(Self::X86Avx512(Detected(())))
    }

    /// `Aarch64Neon` if the CPU has NEON (always, on aarch64 Linux and macOS:
    /// it is baseline; probed anyway so the variant keeps its meaning).
    #[cfg(ratchet_rng_aarch64_neon)]
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
            #[cfg(ratchet_rng_x86_avx2)]
            Self::X86Avx2(_) => "x86_avx2",
            #[cfg(ratchet_rng_x86_avx512)]
            Self::X86Avx512(_) => "x86_avx512",
            #[cfg(ratchet_rng_aarch64_neon)]
            Self::Aarch64Neon(_) => "aarch64_neon",
        }
    }
}

// ---------------------------------------------------------------------------
// AES
// ---------------------------------------------------------------------------

/// The AES-256 implementation an AES generator uses.
///
/// The instruction-set variants exist only where the build allows them:
///
/// - `RATCHET_RNG_BACKEND=soft` (`ratchet_rng_backend = "soft"`) leaves only
///   `Soft`;
/// - `RATCHET_RNG_NO_AES` (`ratchet_rng_no_aes`) removes every AES-instruction
///   backend, x86_64 and aarch64;
/// - `RATCHET_RNG_NO_AVX512` (`ratchet_rng_no_avx512`) removes `X86Vaes512`;
/// - `RATCHET_RNG_NO_AVX2` (`ratchet_rng_no_avx2`) removes `X86Vaes256` and
///   also `X86Vaes512` (AVX-512 implies AVX2, and a "no AVX2" run is meant to
///   exercise the 128-bit AES-NI code).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AesBackend {
    /// The portable, bitsliced, constant-time reference (`aes/soft.rs`).
    Soft,
    /// AES-NI on 128-bit registers, eight blocks in flight (`aes/x86_aesni.rs`).
    #[cfg(ratchet_rng_x86_aesni)]
    X86Aesni(Detected),
    /// VAES on 256-bit registers (AVX2 + VAES), two blocks per register
    /// (`aes/x86_vaes256.rs`).
    #[cfg(ratchet_rng_x86_vaes256)]
    X86Vaes256(Detected),
    /// VAES on 512-bit registers (AVX512F + VAES), four blocks per register
    /// (`aes/x86_vaes512.rs`).
    #[cfg(ratchet_rng_x86_vaes512)]
    X86Vaes512(Detected),
    /// The ARMv8 Cryptography Extension, AESE/AESMC (`aes/aarch64_aes.rs`).
    #[cfg(ratchet_rng_aarch64_aes)]
    Aarch64Aes(Detected),
}

#[cfg(ratchet_rng_x86_aesni)]
cpufeatures::new!(aes_x86_aesni, "aes");

#[cfg(ratchet_rng_x86_vaes256)]
cpufeatures::new!(aes_x86_avx2, "aes", "avx2");

// `cpufeatures` 0.3 checks its "vaes" together with the OS's ZMM state, which
// is right for this backend (it needs AVX-512) but not for VAES on YMM.
#[cfg(ratchet_rng_x86_vaes512)]
cpufeatures::new!(aes_x86_vaes512, "aes", "avx512f", "vaes");

#[cfg(ratchet_rng_aarch64_aes)]
cpufeatures::new!(aes_aarch64, "aes");

/// Whether CPUID reports VAES (leaf 7, subleaf 0, ECX bit 9), whatever the
/// OS's AVX-512 state. The caller checks AVX2 and the OS's YMM state (through
/// `cpufeatures`'s "avx2"), which is all VAES on YMM registers needs. The
/// answer is cached: CPUID is slow, and traps to the hypervisor in a VM.
#[cfg(ratchet_rng_x86_vaes256)]
fn cpuid_has_vaes() -> bool {
    use core::arch::x86_64::{__cpuid, __cpuid_count};
    use core::sync::atomic::{AtomicU8, Ordering::Relaxed};

    const UNKNOWN: u8 = u8::MAX;
    static CACHE: AtomicU8 = AtomicU8::new(UNKNOWN);

    let cached = CACHE.load(Relaxed);
    if cached != UNKNOWN {
        return cached == 1;
    }
    #[allow(unused_unsafe, reason = "`__cpuid` is an unsafe fn on the MSRV (1.89)")]
    // SAFETY: every x86_64 CPU has the CPUID instruction; it has no other
    // precondition (it reads no memory).
    let max_leaf = unsafe { __cpuid(0) }.eax;
    let has_vaes = max_leaf >= 7 && {
        #[allow(
            unused_unsafe,
            reason = "`__cpuid_count` is an unsafe fn on the MSRV (1.89)"
        )]
        // SAFETY: every x86_64 CPU has the CPUID instruction; it has no other
        // precondition, and leaf 7 exists (checked above against the highest
        // basic leaf, so the answer is not another leaf's).
        let leaf7 = unsafe { __cpuid_count(7, 0) };
        leaf7.ecx & (1 << 9) != 0
    };
    CACHE.store(u8::from(has_vaes), Relaxed);
    has_vaes
}

impl AesBackend {
    /// The fastest backend this CPU supports (and the build allows).
    ///
    /// The order is by measurement on a VAES-512 machine (Sapphire Rapids, see
    /// `benches/generators.rs`): VAES-512, then VAES-256, then AES-NI, then the
    /// portable code; ARMv8 AES when the CPU has it.
    pub(crate) fn detect() -> Self {
        // `available()` lists Soft first and the others slowest to fastest.
        Self::available().last().unwrap_or(Self::Soft)
    }

    /// Every backend this CPU supports and the build allows: `Soft` first, then
    /// the others from slowest to fastest.
    pub(crate) fn available() -> impl Iterator<Item = Self> {
        [
            Some(Self::Soft),
            Self::x86_aesni(),
            Self::x86_vaes256(),
            Self::x86_vaes512(),
            Self::aarch64_aes(),
        ]
        .into_iter()
        .flatten()
    }

    /// The backend's name, as tests and `RATCHET_RNG_EXPECT_BACKENDS` spell it.
    #[cfg_attr(
        not(test),
        allow(dead_code, reason = "used by the tests and the `hazmat` feature")
    )]
    pub(crate) const fn name(self) -> &'static str {
        match self {
            Self::Soft => "soft",
            #[cfg(ratchet_rng_x86_aesni)]
            Self::X86Aesni(_) => "x86_aesni",
            #[cfg(ratchet_rng_x86_vaes256)]
            Self::X86Vaes256(_) => "x86_vaes256",
            #[cfg(ratchet_rng_x86_vaes512)]
            Self::X86Vaes512(_) => "x86_vaes512",
            #[cfg(ratchet_rng_aarch64_aes)]
            Self::Aarch64Aes(_) => "aarch64_aes",
        }
    }

    /// Whether this backend runs on AES hardware: the thread-local generator uses
    /// `AesCtrPoolRng` only then (the portable AES is slower than ChaCha).
    #[cfg(feature = "thread_rng")]
    pub(crate) fn has_hardware(self) -> bool {
        !matches!(self, Self::Soft)
    }

    /// AES-NI, if the CPU has it and the build allows it.
    fn x86_aesni() -> Option<Self> {
        #[cfg(ratchet_rng_x86_aesni)]
        if aes_x86_aesni::get() {
            return Some(Self::X86Aesni(Detected(())));
        }
        None
    }

    /// VAES on YMM (AVX2 + VAES + AES-NI for the key schedule), if the CPU has
    /// it and the build allows it.
    fn x86_vaes256() -> Option<Self> {
        #[cfg(ratchet_rng_x86_vaes256)]
        if aes_x86_avx2::get() && cpuid_has_vaes() {
            return Some(Self::X86Vaes256(Detected(())));
        }
        None
    }

    /// VAES on ZMM (AVX512F + VAES + AES-NI for the key schedule), if the CPU
    /// has it and the build allows it.
    fn x86_vaes512() -> Option<Self> {
        #[cfg(ratchet_rng_x86_vaes512)]
        if aes_x86_vaes512::get() {
            return Some(Self::X86Vaes512(Detected(())));
        }
        None
    }

    /// The ARMv8 AES instructions, if the CPU has them and the build allows it.
    fn aarch64_aes() -> Option<Self> {
        #[cfg(ratchet_rng_aarch64_aes)]
        if aes_aarch64::get() {
            return Some(Self::Aarch64Aes(Detected(())));
        }
        None
    }
}

// ---------------------------------------------------------------------------
// What this CPU gets
// ---------------------------------------------------------------------------

/// The backend each primitive uses on this CPU (and build), as chosen at run
/// time; see [`backends`].
///
/// `Display` prints one `primitive: name` line per primitive. The names are
/// keccak `soft | x86_avx2 | x86_avx512 | aarch64_sha3`; chacha
/// `soft | x86_avx2 | x86_avx512 | aarch64_neon`; aes
/// `soft | x86_aesni | x86_vaes256 | x86_vaes512 | aarch64_aes`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Backends {
    keccak: KeccakBackend,
    chacha: ChaChaBackend,
    aes: AesBackend,
}

impl Backends {
    /// The Keccak-p\[1600\] backend of `ShakeRng` and `TurboShakeRng`.
    pub fn keccak(&self) -> &'static str {
        self.keccak.name()
    }

    /// The ChaCha backend of the `ChaCha*KeyErasureRng` generators.
    pub fn chacha(&self) -> &'static str {
        self.chacha.name()
    }

    /// The AES-256 backend of `AesCtrPoolRng`.
    pub fn aes(&self) -> &'static str {
        self.aes.name()
    }
}

impl core::fmt::Display for Backends {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        writeln!(f, "keccak: {}", self.keccak())?;
        writeln!(f, "chacha: {}", self.chacha())?;
        write!(f, "aes: {}", self.aes())
    }
}

/// The backends this CPU gets: what a generator constructed now will use.
///
/// ```
/// let b = ratchet_rng::backends();
/// assert!(["soft", "x86_avx2", "x86_avx512", "aarch64_sha3"].contains(&b.keccak()));
/// println!("{b}"); // keccak: x86_avx512 / chacha: x86_avx512 / aes: x86_vaes512 on AVX-512 + VAES
/// ```
pub fn backends() -> Backends {
    Backends {
        keccak: KeccakBackend::detect(),
        chacha: ChaChaBackend::detect(),
        aes: AesBackend::detect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    /// Every backend name of every primitive.
    fn all_names() -> Vec<&'static str> {
        let mut names = Vec::from([
            "soft",
            "x86_avx2",
            "x86_avx512",
            "aarch64_sha3",
            "aarch64_neon",
            "x86_aesni",
            "x86_vaes256",
            "x86_vaes512",
            "aarch64_aes",
        ]);
        names.sort_unstable();
        names
    }

    /// A misspelt name in `RATCHET_RNG_EXPECT_BACKENDS` would make every
    /// primitive's "expected backend did not run" check ignore it, so CI would
    /// silently test less than it says: reject unknown names here.
    #[test]
    fn expected_backend_names_are_known() {
        let expected = std::env::var("RATCHET_RNG_EXPECT_BACKENDS").unwrap_or_default();
        let known = all_names();
        for name in expected.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            assert!(
                known.binary_search(&name).is_ok(),
                "RATCHET_RNG_EXPECT_BACKENDS names unknown backend {name:?}; known: {known:?}"
            );
        }
    }

    #[test]
    fn available_backends_have_known_names_and_detect_is_available() {
        let known = all_names();
        let names = KeccakBackend::available()
            .map(KeccakBackend::name)
            .chain(ChaChaBackend::available().map(ChaChaBackend::name))
            .chain(AesBackend::available().map(AesBackend::name));
        for name in names {
            assert!(known.binary_search(&name).is_ok(), "{name}");
        }
        assert!(KeccakBackend::available().any(|b| b == KeccakBackend::detect()));
        assert!(ChaChaBackend::available().any(|b| b == ChaChaBackend::detect()));
        assert!(AesBackend::available().any(|b| b == AesBackend::detect()));
    }

    /// Where the target's features are enabled at compile time (`-C
    /// target-feature=+sha3,+aes`, `-C target-cpu=...`, or a target whose baseline
    /// has them, like NEON on aarch64), the backend is chosen without any run-time
    /// probe: `cpufeatures` answers `true` from the `cfg(target_feature)`. This is
    /// how firmware without run-time detection (`aarch64-unknown-none`) gets SIMD.
    #[test]
    fn compile_time_target_features_select_their_backend() {
        #[cfg(all(
            ratchet_rng_x86_avx512,
            target_feature = "avx512f",
            target_feature = "avx512vl"
        ))]
        assert_eq!(KeccakBackend::detect().name(), "x86_avx512");
        #[cfg(all(ratchet_rng_x86_avx512, target_feature = "avx512f"))]
        assert_eq!(ChaChaBackend::detect().name(), "x86_avx512");
        #[cfg(all(
            ratchet_rng_x86_avx2,
            target_feature = "avx2",
            not(all(ratchet_rng_x86_avx512, target_feature = "avx512f"))
        ))]
        assert_eq!(ChaChaBackend::detect().name(), "x86_avx2");
        #[cfg(all(ratchet_rng_x86_aesni, target_feature = "aes"))]
        assert!(AesBackend::detect().name().starts_with("x86_"));
        #[cfg(all(ratchet_rng_aarch64_sha3, target_feature = "sha3"))]
        assert_eq!(KeccakBackend::detect().name(), "aarch64_sha3");
        #[cfg(all(ratchet_rng_aarch64_neon, target_feature = "neon"))]
        assert_eq!(ChaChaBackend::detect().name(), "aarch64_neon");
        #[cfg(all(ratchet_rng_aarch64_aes, target_feature = "aes"))]
        assert_eq!(AesBackend::detect().name(), "aarch64_aes");
    }

    #[test]
    fn display_is_one_line_per_primitive() {
        let b = backends();
        let text = std::format!("{b}");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines,
            [
                std::format!("keccak: {}", b.keccak()),
                std::format!("chacha: {}", b.chacha()),
                std::format!("aes: {}", b.aes()),
            ]
        );
    }
}
