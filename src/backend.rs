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

/// Declares one backend family: the `Copy` enum (non-portable variants hold a
/// [`Detected`] proof and exist only where their build cfg is on), and from the
/// same list `available()`, `detect()`, `name()`, `from_name()` and `NAMES`.
///
/// Each variant gives its name (as `RATCHET_RNG_EXPECT_BACKENDS`, `Display` and
/// the `stream`/`backends` examples spell it), its run-time probe, and its rank:
/// `detect()` picks the available backend of highest rank, so a backend ranked
/// below `Soft` is tested (`available()`) but never chosen. A rank is an
/// expression: one may depend on the core (`Aarch64Sha3`'s, on the table of
/// [`aarch64_cpu`]), not only on the features the probe found.
macro_rules! backend_family {
    (
        $(#[$meta:meta])*
        enum $family:ident {
            $(#[doc = $soft_doc:literal])*
            Soft = "soft", rank $soft_rank:literal;
            $(
                $(#[doc = $doc:literal])*
                #[cfg($cfg:meta)]
                $variant:ident = $name:literal, rank $rank:expr, if $probe:expr;
            )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub(crate) enum $family {
            $(#[doc = $soft_doc])*
            Soft,
            $(
                $(#[doc = $doc])*
                #[cfg($cfg)]
                $variant(Detected),
            )*
        }

        impl $family {
            /// Every backend name of this family, whatever this CPU and build have.
            #[allow(dead_code, reason = "used by the tests and the `hazmat` feature")]
            pub(crate) const NAMES: &'static [&'static str] = &["soft", $($name),*];

            /// Every backend this CPU and build allow, `Soft` first, then in
            /// declaration order.
            #[allow(dead_code, reason = "used by the tests and the `hazmat` feature")]
            pub(crate) fn available() -> impl Iterator<Item = Self> {
                [
                    Some(Self::Soft),
                    $(
                        #[cfg($cfg)]
                        ($probe).then_some(Self::$variant(Detected(()))),
                    )*
                ]
                .into_iter()
                .flatten()
            }

            /// The available backend of highest rank (`Soft` when forced by
            /// `RATCHET_RNG_BACKEND=soft`, or when nothing else is available).
            pub(crate) fn detect() -> Self {
                Self::available()
                    .max_by_key(|backend| backend.rank())
                    .unwrap_or(Self::Soft)
            }

            /// The backend's name.
            #[allow(dead_code, reason = "used by the tests and the `hazmat` feature")]
            pub(crate) const fn name(self) -> &'static str {
                match self {
                    Self::Soft => "soft",
                    $(
                        #[cfg($cfg)]
                        Self::$variant(_) => $name,
                    )*
                }
            }

            /// The available backend called `name`; `None` for a name of a
            /// backend this CPU or build lacks, or no such name.
            #[allow(dead_code, reason = "used by the tests and the `hazmat` feature")]
            pub(crate) fn from_name(name: &str) -> Option<Self> {
                Self::available().find(|backend| backend.name() == name)
            }

            /// `detect()`'s order: higher is preferred.
            fn rank(self) -> u8 {
                match self {
                    Self::Soft => $soft_rank,
                    $(
                        #[cfg($cfg)]
                        Self::$variant(_) => $rank,
                    )*
                }
            }

            /// Runs `check` on every available backend (`Soft` first), then
            /// fails if a backend of this family named in
            /// `RATCHET_RNG_EXPECT_BACKENDS` (comma-separated; names of other
            /// families are ignored) did not run: CI sets it from the CPU's flags,
            /// so a detection bug cannot silently skip a kernel. The one
            /// cross-backend loop of every primitive's tests.
            #[cfg(test)]
            pub(crate) fn for_each_available(mut check: impl FnMut(Self)) {
                let mut ran = std::vec::Vec::new();
                for backend in Self::available() {
                    check(backend);
                    ran.push(backend.name());
                }
                std::eprintln!("{} backends tested: {ran:?}", stringify!($family));
                let expected = std::env::var("RATCHET_RNG_EXPECT_BACKENDS").unwrap_or_default();
                let missing: std::vec::Vec<&str> = expected
                    .split(',')
                    .map(str::trim)
                    .filter(|name| Self::NAMES.contains(name) && !ran.contains(name))
                    .collect();
                assert!(
                    missing.is_empty(),
                    "RATCHET_RNG_EXPECT_BACKENDS={expected:?}: {} backends {missing:?} did not \
                     run (ran: {ran:?})",
                    stringify!($family)
                );
            }
        }
    };
}

// The run-time probes, declared only where the variant they feed exists. On
// aarch64 they are `cpufeatures`'s (cached in an atomic, works in `no_std`); on
// x86_64 they read the two-stage detection of [`x86_cpu`] (see there why).
#[cfg(ratchet_rng_aarch64_sha3)]
cpufeatures::new!(aarch64_sha3_probe, "sha3");
#[cfg(ratchet_rng_aarch64_neon)]
cpufeatures::new!(aarch64_neon_probe, "neon");
#[cfg(ratchet_rng_aarch64_aes)]
cpufeatures::new!(aarch64_aes_probe, "aes");

/// Declares `mod $name { fn get() -> bool }` for x86_64: true when the build
/// enables every one of the target features at compile time (no question to
/// the CPU, as `cpufeatures` does), otherwise when [`x86_cpu`]'s detection has
/// every bit of `$bits`. Declared where some x86 family exists (none does with
/// `RATCHET_RNG_BACKEND=soft` or off x86_64).
#[cfg(any(
    ratchet_rng_x86_avx2,
    ratchet_rng_x86_avx512,
    ratchet_rng_x86_aesni,
    ratchet_rng_x86_vaes256,
    ratchet_rng_x86_vaes512
))]
macro_rules! x86_probe {
    ($name:ident, $bits:expr, $($feature:literal),+) => {
        mod $name {
            use super::x86_cpu;

            pub(crate) fn get() -> bool {
                cfg!(all($(target_feature = $feature),+)) || x86_cpu::has($bits)
            }
        }
    };
}

#[cfg(any(ratchet_rng_x86_avx2, ratchet_rng_x86_avx512))]
x86_probe!(x86_avx2_probe, x86_cpu::AVX2, "avx2");
#[cfg(ratchet_rng_x86_avx512)]
x86_probe!(
    x86_avx512_probe,
    x86_cpu::AVX512F | x86_cpu::AVX512VL,
    "avx512f",
    "avx512vl"
);
#[cfg(ratchet_rng_x86_aesni)]
x86_probe!(x86_aesni_probe, x86_cpu::AES, "aes");
// VAES on YMM registers needs AVX2 and the OS's YMM state, not AVX-512's.
#[cfg(ratchet_rng_x86_vaes256)]
x86_probe!(
    x86_vaes256_probe,
    x86_cpu::AES | x86_cpu::AVX2 | x86_cpu::VAES,
    "aes",
    "avx2",
    "vaes"
);
// VAES on ZMM registers needs AVX-512F and the OS's ZMM state.
#[cfg(ratchet_rng_x86_vaes512)]
x86_probe!(
    x86_vaes512_probe,
    x86_cpu::AES | x86_cpu::AVX512F | x86_cpu::VAES,
    "aes",
    "avx512f",
    "vaes"
);

// The x86_64 detection, once per process (see the module for why it is not `cpufeatures`).
#[cfg(target_arch = "x86_64")]
pub(crate) mod x86_cpu;

// The aarch64 core (MIDR_EL1) and the table of the Keccak kernel per core: the
// table on every target (`hazmat::keccak_for_aarch64_core`), the reading on
// aarch64.
pub(crate) mod aarch64_cpu;

/// `Aarch64Sha3`'s rank: above `Soft` on the cores where the table of
/// [`aarch64_cpu`] says the SHA3 kernel is worth using (Apple's), below it
/// everywhere else (tested, never chosen).
#[cfg(ratchet_rng_aarch64_sha3)]
fn aarch64_sha3_rank() -> u8 {
    if aarch64_cpu::sha3_worth_using() {
        2
    } else {
        0
    }
}

backend_family! {
    /// The Keccak-p\[1600\] implementation a sponge generator uses.
    ///
    /// Build switches: `ratchet_rng_backend = "soft"` leaves only `Soft`;
    /// `ratchet_rng_no_avx512` removes `X86Avx512`; `ratchet_rng_no_avx2` removes
    /// `X86Avx2` *and* `X86Avx512` (a CPU without AVX2 has no AVX-512 either, so "no
    /// AVX2" means "no x86 SIMD"); `ratchet_rng_no_sha3` removes `Aarch64Sha3`.
    ///
    /// Ranks on x86_64, by measurement: AVX-512, then soft. On a Sapphire Rapids
    /// core (default build flags, 1088-byte periods, CPU time) the AVX-512 kernel
    /// squeezes 1.75x (12 rounds) and 1.6x (24 rounds) as fast as the portable
    /// code; the AVX2 kernel is no faster than the portable code with 12 rounds and
    /// about 25% slower with 24 (one lane per register needs 3 instructions per
    /// rotation and spills with 16 registers), so it ranks below `Soft`: never
    /// chosen, still a tested backend (`available()`).
    ///
    /// On aarch64 the rank of SHA3 depends on the core (issue 48): above soft
    /// on the cores of `hazmat::keccak_for_aarch64_core`'s table that get
    /// `aarch64_sha3` (Apple's), below it on every other core and where no
    /// MIDR_EL1 can be read (then tested, never chosen). Not measured on
    /// aarch64 hardware here: the table follows OpenSSL and AWS-LC, and
    /// LLVM 19's scheduling models (see that table).
    enum KeccakBackend {
        /// The portable, constant-time code (`keccak/portable.rs`: `u64` lanes on
        /// 64-bit targets and wasm32, bit-interleaved `u32` pairs on 32-bit
        /// cores), tested against the specification `keccak/soft.rs`.
        Soft = "soft", rank 1;
        /// The 32-bit cores' bit-interleaved kernel (`keccak/interleaved32.rs`)
        /// on a 64-bit target or wasm32, where it is never chosen (`Soft` runs
        /// `u64` lanes): a backend only so that the tests, Miri and `ct_valgrind`
        /// run the 32-bit code on x86_64, aarch64 and wasm32. On 32-bit cores
        /// `Soft` is this kernel. Needs nothing of the CPU.
        #[cfg(ratchet_rng_keccak_interleaved32)]
        Interleaved32 = "interleaved32", rank 0, if true;
        /// AVX2 (`keccak/x86_avx2.rs`).
        #[cfg(ratchet_rng_x86_avx2)]
        X86Avx2 = "x86_avx2", rank 0, if x86_avx2_probe::get();
        /// AVX-512F + AVX-512VL (`keccak/x86_avx512.rs`).
        #[cfg(ratchet_rng_x86_avx512)]
        X86Avx512 = "x86_avx512", rank 3, if x86_avx512_probe::get();
        /// ARMv8.2 SHA3 instructions (`keccak/aarch64_sha3.rs`); chosen only on
        /// the cores where the table says so (see the ranks above).
        #[cfg(ratchet_rng_aarch64_sha3)]
        Aarch64Sha3 = "aarch64_sha3", rank aarch64_sha3_rank(), if aarch64_sha3_probe::get();
    }
}

backend_family! {
    /// The ChaCha implementation a ChaCha generator uses.
    ///
    /// Build switches remove variants outright: `ratchet_rng_backend = "soft"`
    /// leaves only `Soft`; `ratchet_rng_no_avx512` removes `X86Avx512`;
    /// `ratchet_rng_no_avx2` removes `X86Avx2` *and* `X86Avx512` (a build without
    /// AVX2 models a CPU without it, and every AVX-512 CPU has AVX2).
    ///
    /// Ranks, by measurement (`cargo bench`, 512 KiB `fill_bytes`): AVX-512 over
    /// AVX2 over the portable code on x86_64; NEON over the portable code on
    /// aarch64.
    enum ChaChaBackend {
        /// The portable reference (`chacha/soft.rs`), lane-parallel over 4 blocks.
        Soft = "soft", rank 0;
        /// AVX2 (`chacha/x86_avx2.rs`): 8 blocks, two groups, per `ymm` pass.
        #[cfg(ratchet_rng_x86_avx2)]
        X86Avx2 = "x86_avx2", rank 1, if x86_avx2_probe::get();
        /// AVX-512F (`chacha/x86_avx512.rs`): 16 blocks, a whole key period, per
        /// `zmm` pass.
        #[cfg(ratchet_rng_x86_avx512)]
        X86Avx512 = "x86_avx512", rank 2, if x86_avx512_probe::get();
        /// NEON (`chacha/aarch64_neon.rs`): two groups interleaved per pass
        /// (baseline on aarch64 Linux and macOS; probed anyway so the variant
        /// keeps its meaning).
        #[cfg(ratchet_rng_aarch64_neon)]
        Aarch64Neon = "aarch64_neon", rank 1, if aarch64_neon_probe::get();
    }
}

backend_family! {
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
    ///
    /// Ranks, by measurement on a VAES-512 machine (Sapphire Rapids, see
    /// `benches/generators.rs`): VAES-512, then VAES-256, then AES-NI, then the
    /// portable code; ARMv8 AES when the CPU has it.
    enum AesBackend {
        /// The portable, bitsliced, constant-time reference (`aes/soft.rs`).
        Soft = "soft", rank 0;
        /// AES-NI on 128-bit registers, eight blocks in flight (`aes/x86_aesni.rs`).
        #[cfg(ratchet_rng_x86_aesni)]
        X86Aesni = "x86_aesni", rank 1, if x86_aesni_probe::get();
        /// VAES on 256-bit registers (AVX2 + VAES), two blocks per register
        /// (`aes/x86_vaes256.rs`).
        #[cfg(ratchet_rng_x86_vaes256)]
        X86Vaes256 = "x86_vaes256", rank 2, if x86_vaes256_probe::get();
        /// VAES on 512-bit registers (AVX512F + VAES), four blocks per register
        /// (`aes/x86_vaes512.rs`).
        #[cfg(ratchet_rng_x86_vaes512)]
        X86Vaes512 = "x86_vaes512", rank 3, if x86_vaes512_probe::get();
        /// The ARMv8 Cryptography Extension, AESE/AESMC (`aes/aarch64_aes.rs`).
        #[cfg(ratchet_rng_aarch64_aes)]
        Aarch64Aes = "aarch64_aes", rank 1, if aarch64_aes_probe::get();
    }
}

impl AesBackend {
    /// Whether this backend runs on AES hardware: the thread-local generator uses
    /// `AesCtrPoolRng` only then (the portable AES is slower than ChaCha).
    #[cfg(feature = "thread_rng")]
    pub(crate) fn has_hardware(self) -> bool {
        !matches!(self, Self::Soft)
    }

    /// The backend for a few blocks under a fresh key (the thread-local
    /// generator's first-use mix and short first batch): AES-NI where this
    /// CPU has it, since the VAES kernels pad any request to a batch of 32
    /// (or 16) blocks and broadcast every round key to wide registers, which
    /// costs more than the few blocks need, and AES-NI is known from one
    /// CPUID leaf (`x86_cpu`: the wide backends' leaves wait for the first
    /// pool); [`detect`](Self::detect)'s otherwise. Every backend computes the
    /// same function, and this one has AES hardware iff `detect`'s has.
    #[cfg(feature = "thread_rng")]
    pub(crate) fn for_few_blocks() -> Self {
        #[cfg(ratchet_rng_x86_aesni)]
        if x86_aesni_probe::get() {
            return Self::X86Aesni(Detected(()));
        }
        Self::detect()
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
    #[cfg(feature = "thread_rng")]
    vm_generation: &'static str,
    #[cfg(feature = "thread_rng")]
    process_restore: &'static str,
}

impl Backends {
    /// The Keccak-p\[1600\] backend of `ShakeRng` and `TurboShakeRng`.
    #[must_use]
    pub fn keccak(&self) -> &'static str {
        self.keccak.name()
    }

    /// The ChaCha backend of the `ChaCha*KeyErasureRng` generators.
    #[must_use]
    pub fn chacha(&self) -> &'static str {
        self.chacha.name()
    }

    /// The AES-256 backend of `AesCtrPoolRng`.
    #[must_use]
    pub fn aes(&self) -> &'static str {
        self.aes.name()
    }

    /// What tells [`rng()`](crate::rng) of a VM snapshot restore without a
    /// [`reseed_all_threads()`](crate::reseed_all_threads) call: `"vmclock"`
    /// when the VMClock device's VM generation counter (`/dev/vmclock0`,
    /// Linux) is watched; `"vmclock (being updated ...)"` while it is watched
    /// but has not yet been read settled; otherwise `"none: ..."` and why (no
    /// device, permission denied, a file that is not the device, ...), or
    /// `"not probed yet"` before the first use of `rng()` in the process.
    /// Whatever it says, `rng()` works (see
    /// [`guide::security`](crate::guide::security), "VM snapshots").
    #[cfg(feature = "thread_rng")]
    #[must_use]
    pub fn vm_generation(&self) -> &'static str {
        self.vm_generation
    }

    /// What tells [`rng()`](crate::rng) of a process restore (CRIU) without a
    /// [`reseed_all_threads()`](crate::reseed_all_threads) call:
    /// `"droppable page"` (Linux 6.11+, 64-bit, where no VMClock page is
    /// watched), otherwise `"none: ..."` and why, or `"not probed yet"`.
    #[cfg(feature = "thread_rng")]
    #[must_use]
    pub fn process_restore(&self) -> &'static str {
        self.process_restore
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
#[must_use]
pub fn backends() -> Backends {
    Backends {
        keccak: KeccakBackend::detect(),
        chacha: ChaChaBackend::detect(),
        aes: AesBackend::detect(),
        #[cfg(feature = "thread_rng")]
        vm_generation: crate::thread::generation::vm_generation_status(),
        #[cfg(feature = "thread_rng")]
        process_restore: crate::thread::generation::process_restore_status(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    /// Every backend name of every primitive (each family's list, declared once).
    fn all_names() -> Vec<&'static str> {
        let mut names: Vec<&str> = [
            KeccakBackend::NAMES,
            ChaChaBackend::NAMES,
            AesBackend::NAMES,
        ]
        .concat();
        names.sort_unstable();
        names.dedup();
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
    ///
    /// Each row: a backend, the target features that make it the choice, and the
    /// family's choice. A build with none of those features enabled has nothing to
    /// check, so the test is ignored there (and counted); CI runs it with
    /// `-C target-feature=+avx2,+aes,+vaes` on x86_64 and `+sha3,+aes` on aarch64.
    #[test]
    #[cfg_attr(
        not(any(
            target_feature = "avx2",
            target_feature = "avx512f",
            target_feature = "aes",
            target_feature = "sha3",
            target_feature = "neon"
        )),
        ignore = "no SIMD target feature enabled at compile time (CI runs it with some)"
    )]
    fn compile_time_target_features_select_their_backend() {
        let checked: &[(bool, &str, &str)] = &[
            (
                cfg!(all(
                    ratchet_rng_x86_avx512,
                    target_feature = "avx512f",
                    target_feature = "avx512vl"
                )),
                "x86_avx512",
                KeccakBackend::detect().name(),
            ),
            (
                cfg!(all(ratchet_rng_x86_avx512, target_feature = "avx512f")),
                "x86_avx512",
                ChaChaBackend::detect().name(),
            ),
            (
                cfg!(all(
                    ratchet_rng_x86_avx2,
                    target_feature = "avx2",
                    not(all(ratchet_rng_x86_avx512, target_feature = "avx512f"))
                )),
                "x86_avx2",
                ChaChaBackend::detect().name(),
            ),
            (
                cfg!(all(
                    ratchet_rng_x86_vaes256,
                    target_feature = "aes",
                    target_feature = "avx2",
                    target_feature = "vaes",
                    not(all(ratchet_rng_x86_vaes512, target_feature = "avx512f"))
                )),
                "x86_vaes256",
                AesBackend::detect().name(),
            ),
            (
                cfg!(all(
                    ratchet_rng_x86_aesni,
                    target_feature = "aes",
                    not(target_feature = "avx2")
                )),
                "x86_aesni",
                AesBackend::detect().name(),
            ),
            // With SHA3 enabled at compile time, the core still decides
            // (issue 48): the table's answer for this core's MIDR_EL1.
            (
                cfg!(all(ratchet_rng_aarch64_sha3, target_feature = "sha3")),
                keccak_with_sha3_here(),
                KeccakBackend::detect().name(),
            ),
            (
                cfg!(all(ratchet_rng_aarch64_neon, target_feature = "neon")),
                "aarch64_neon",
                ChaChaBackend::detect().name(),
            ),
            (
                cfg!(all(ratchet_rng_aarch64_aes, target_feature = "aes")),
                "aarch64_aes",
                AesBackend::detect().name(),
            ),
        ];
        let mut rows = 0;
        for &(enabled, want, got) in checked {
            if enabled {
                assert_eq!(got, want, "compile-time features enabled for {want}");
                rows += 1;
            }
        }
        // Under the build switches (soft, no AES, ...) a feature may be enabled
        // while its backend is removed; otherwise at least one row applies.
        #[cfg(not(any(ratchet_rng_backend = "soft", ratchet_rng_no_aes, ratchet_rng_no_avx2)))]
        assert!(
            rows > 0,
            "a SIMD target feature is enabled but no row checked it"
        );
        std::eprintln!("compile-time backend rows checked: {rows}");
    }

    /// The Keccak backend the core table gives this core with the SHA3
    /// extension (the portable one where no MIDR_EL1 can be read).
    fn keccak_with_sha3_here() -> &'static str {
        #[cfg(target_arch = "aarch64")]
        return aarch64_cpu::keccak_for_core(aarch64_cpu::midr().unwrap_or(0), true);
        #[cfg(not(target_arch = "aarch64"))]
        "soft"
    }

    /// Issue 48: on aarch64 the Keccak choice is the core table's answer for
    /// the MIDR_EL1 the crate reads and the SHA3 extension the probe finds.
    /// Under qemu-aarch64 (CI): the `max` CPU has SHA3 and QEMU's own MIDR
    /// (implementer 0), so the table's "unknown core" row picks `soft` where
    /// the old ranking picked `aarch64_sha3`.
    #[test]
    #[cfg(target_arch = "aarch64")]
    fn keccak_detection_consults_the_core_table() {
        let has_sha3 = KeccakBackend::available().any(|b| b.name() == "aarch64_sha3");
        let midr = aarch64_cpu::midr();
        let want = aarch64_cpu::keccak_for_core(midr.unwrap_or(0), has_sha3);
        std::eprintln!("MIDR_EL1 {midr:x?}, SHA3 {has_sha3}: keccak {want}");
        assert_eq!(KeccakBackend::detect().name(), want);
        assert_eq!(backends().keccak(), want);
    }

    /// The crate reads MIDR_EL1 on aarch64 Linux: the value CI expects for
    /// the emulated CPU (`RATCHET_RNG_EXPECT_MIDR`, hex; qemu-aarch64 gives
    /// 0x000f0510 for `max`, 0x410fd083 for `cortex-a72`, 0x414fd0c1 for
    /// `neoverse-n1`), else at least some value where the kernel emulates the
    /// read (`HWCAP_CPUID`).
    #[test]
    #[cfg(all(
        target_arch = "aarch64",
        any(target_os = "linux", target_os = "android")
    ))]
    fn midr_is_read() {
        let midr = aarch64_cpu::midr();
        if let Ok(text) = std::env::var("RATCHET_RNG_EXPECT_MIDR") {
            let want = aarch64_cpu::parse_midr(text.as_bytes())
                .unwrap_or_else(|| panic!("RATCHET_RNG_EXPECT_MIDR={text:?}: not 0x<hex>"));
            assert_eq!(midr, Some(want), "MIDR_EL1 {midr:x?}, expected {want:#x}");
        }
        // SAFETY: reads the auxiliary vector.
        let hwcap = unsafe { libc::getauxval(libc::AT_HWCAP) };
        if hwcap & 1 << 11 != 0 {
            assert!(
                midr.is_some(),
                "HWCAP_CPUID is set but no MIDR_EL1 was read"
            );
        }
        std::eprintln!("MIDR_EL1 {midr:x?}");
    }

    /// The real detection path (`KeccakBackend::detect()`, which every
    /// sponge generator and `backends()` ask) with an Apple M1 MIDR picks the SHA3 kernel where the CPU has it, and
    /// with a Neoverse V2 MIDR, or none, the portable one. In a forked child,
    /// the only thread there, so that the MIDR it sets is seen by no other
    /// test; its exit status is the answers' bits.
    #[test]
    #[cfg(all(
        target_arch = "aarch64",
        any(target_os = "linux", target_os = "android")
    ))]
    fn an_apple_midr_selects_sha3_and_a_neoverse_midr_soft() {
        const APPLE_M1_FIRESTORM: u64 = 0x611F_0231;
        const NEOVERSE_V2: u64 = 0x410F_D4F0;
        fn keccak_with(midr: Option<u64>) -> &'static str {
            aarch64_cpu::override_midr(midr);
            KeccakBackend::detect().name()
        }
        let has_sha3 = KeccakBackend::available().any(|b| b.name() == "aarch64_sha3");
        // SAFETY: the child runs only async-signal-safe code (atomics,
        // `getauxval`, no allocation) and leaves by `_exit`.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            let bits = [
                keccak_with(Some(APPLE_M1_FIRESTORM)) == "aarch64_sha3",
                keccak_with(Some(APPLE_M1_FIRESTORM)) == "soft",
                keccak_with(Some(NEOVERSE_V2)) == "soft",
                keccak_with(None) == "soft",
            ]
            .iter()
            .enumerate()
            .fold(0, |bits, (i, &on)| bits | i32::from(on) << i);
            // SAFETY: leaves the child without running the parent's
            // destructors or atexit handlers.
            unsafe { libc::_exit(bits) };
        }
        let mut status = 0;
        // SAFETY: waits for the child forked above.
        assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
        assert!(libc::WIFEXITED(status), "child status {status:#x}");
        let apple = if has_sha3 { 0b0001 } else { 0b0010 };
        assert_eq!(
            libc::WEXITSTATUS(status),
            apple | 0b1100,
            "bits: Apple gives aarch64_sha3, Apple gives soft, Neoverse V2 gives \
             soft, no MIDR gives soft (SHA3 here: {has_sha3})"
        );
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
