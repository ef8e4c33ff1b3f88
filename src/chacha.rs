//! ChaCha (RFC 8439) and the chacha8rand key-erasure layout.
//!
//! This parent module is the only place that selects a backend; backends live in
//! `chacha/`, one file each. The portable [`soft`] backend is also the
//! specification the others are tested against.

// Both portable kernels are compiled and tested on every target; `portable`
// below runs one of them outside tests, so the other's entry points are unused
// there.
#[cfg_attr(
    not(test),
    allow(dead_code, reason = "the portable kernel of 32-bit targets only")
)]
pub(crate) mod scalar32;
#[cfg_attr(
    not(test),
    allow(dead_code, reason = "not the portable kernel of 32-bit targets")
)]
pub(crate) mod soft;

// Each SIMD backend is compiled exactly when its `ChaChaBackend` variant
// exists (same conditions as in `backend.rs`).
#[cfg(ratchet_rng_aarch64_neon)]
mod aarch64_neon;
#[cfg(ratchet_rng_x86_avx2)]
mod x86_avx2;
#[cfg(ratchet_rng_x86_avx512)]
mod x86_avx512;
// The WebAssembly SIMD kernel exists when the whole build has `simd128`.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod wasm32_simd128;

use crate::backend::ChaChaBackend;
pub(crate) use soft::KEY_PERIOD_OUTPUT_BYTES;

/// The kernel of the portable backend (`ChaChaBackend::Soft`), chosen at
/// compile time (a microcontroller or a WebAssembly engine has no run-time
/// probe): [`scalar32`] (one block at a time in registers) on targets with no
/// 128-bit vector unit the compiler may use (Cortex-M, RISC-V rv32, wasm32
/// without `simd128`), where it is several times as fast as `soft`;
/// [`wasm32_simd128`] on wasm32 built with `simd128`; elsewhere [`soft`],
/// whose lane-parallel group the compiler turns into SSE2 or NEON code. All
/// give the same bytes (tested below).
#[cfg(all(
    not(target_pointer_width = "64"),
    not(any(
        target_feature = "sse2",
        target_feature = "neon",
        target_feature = "simd128"
    ))
))]
use scalar32 as portable;
#[cfg(not(any(
    all(
        not(target_pointer_width = "64"),
        not(any(
            target_feature = "sse2",
            target_feature = "neon",
            target_feature = "simd128"
        ))
    ),
    all(target_arch = "wasm32", target_feature = "simd128")
)))]
use soft as portable;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
use wasm32_simd128 as portable;

/// One key period of the chacha8rand layout with `ROUNDS` rounds: writes the 992
/// output bytes of `key` to `out` and replaces `key` with the next key.
#[inline]
pub(crate) fn key_period<const ROUNDS: usize>(
    backend: ChaChaBackend,
    key: &mut [u32; 8],
    out: &mut [u8; KEY_PERIOD_OUTPUT_BYTES],
) {
    key_periods::<ROUNDS>(backend, key, core::slice::from_mut(out));
}

/// `out.len()` consecutive key periods with `ROUNDS` rounds: period `i` is
/// computed under the key left by period `i - 1`, and `key` ends as the key
/// after the last one. The same bytes as `out.len()` calls of [`key_period`],
/// in one call of the backend's kernel.
#[inline]
pub(crate) fn key_periods<const ROUNDS: usize>(
    backend: ChaChaBackend,
    key: &mut [u32; 8],
    out: &mut [[u8; KEY_PERIOD_OUTPUT_BYTES]],
) {
    match backend {
        ChaChaBackend::Soft => {
            for period in out {
                portable::key_period::<ROUNDS>(key, period);
            }
        }
        #[cfg(ratchet_rng_x86_avx2)]
        // SAFETY: the CPU supports the kernel's `avx2` target feature: the
        // variant holds a `Detected`, which `backend.rs` makes only after
        // `cpufeatures` found AVX2.
        ChaChaBackend::X86Avx2(_) => unsafe { x86_avx2::key_periods::<ROUNDS>(key, out) },
        #[cfg(ratchet_rng_x86_avx512)]
        // SAFETY: the CPU supports the kernel's `avx512f` target feature: the
        // variant holds a `Detected`, which `backend.rs` makes only after
        // `cpufeatures` found AVX-512F.
        ChaChaBackend::X86Avx512(_) => unsafe { x86_avx512::key_periods::<ROUNDS>(key, out) },
        #[cfg(ratchet_rng_aarch64_neon)]
        // SAFETY: the CPU supports the kernel's `neon` target feature: the
        // variant holds a `Detected`, which `backend.rs` makes only after
        // `cpufeatures` found NEON.
        ChaChaBackend::Aarch64Neon(_) => unsafe { aarch64_neon::key_periods::<ROUNDS>(key, out) },
    }
}

#[cfg(test)]
mod tests {
    //! Every backend this CPU and build allow, against the portable
    //! specification (`soft`), whose own vectors (RFC 8439, Go's chacha8rand,
    //! the C2SP sample, the `chacha20` crate) are in `soft.rs`.

    extern crate std;

    use super::*;
    use crate::chacha::soft::KEY_WORDS;
    use rand::rngs::StdRng;
    use rand::{RngExt, SeedableRng};
    use std::vec;
    use std::vec::Vec;

    /// Batch sizes in key periods: none, one, and around small powers of two.
    const BATCH_PERIODS: [usize; 6] = [0, 1, 2, 3, 5, 17];

    /// Random keys per round count and batch size.
    const KEYS: usize = 8;

    /// `periods` chained key periods from `key` through `key_periods`, and
    /// the key after them.
    fn run<const ROUNDS: usize>(
        backend: ChaChaBackend,
        key: [u32; KEY_WORDS],
        periods: usize,
    ) -> (Vec<[u8; KEY_PERIOD_OUTPUT_BYTES]>, [u32; KEY_WORDS]) {
        let mut key = key;
        // Poisoned, so an unwritten byte cannot pass for a zero.
        let mut out = vec![[0xA5; KEY_PERIOD_OUTPUT_BYTES]; periods];
        key_periods::<ROUNDS>(backend, &mut key, &mut out);
        (out, key)
    }

    /// Runs `backend` against `soft` for `ROUNDS` rounds over random keys and
    /// every batch size, batched and one period per call.
    fn check_against_soft<const ROUNDS: usize>(backend: ChaChaBackend, rng: &mut StdRng) {
        let name = backend.name();
        for periods in BATCH_PERIODS {
            for _ in 0..KEYS {
                let key: [u32; KEY_WORDS] = rng.random();
                let expected = run::<ROUNDS>(ChaChaBackend::Soft, key, periods);
                assert!(
                    run::<ROUNDS>(backend, key, periods) == expected,
                    "{name}, ChaCha{ROUNDS}, {periods} periods, key {key:08x?}"
                );

                // One period per call (`key_period`) chains the same way.
                let mut one_key = key;
                for (i, expected_period) in expected.0.iter().enumerate() {
                    let mut period = [0x5A; KEY_PERIOD_OUTPUT_BYTES];
                    key_period::<ROUNDS>(backend, &mut one_key, &mut period);
                    assert!(
                        period == *expected_period,
                        "{name}, ChaCha{ROUNDS}, period {i} by key_period"
                    );
                }
                assert_eq!(one_key, expected.1, "{name}, ChaCha{ROUNDS}, next key");
            }
        }
    }

    // Every available backend against `soft` in brief: one key, ChaCha8 over
    // batches of 0 and 2 key periods (the key chained between them), ChaCha20
    // over one. The cross-backend test CI's Miri runs in its builds with SIMD
    // target features (CONTRIBUTING.md, "Miri"), where the full one above
    // would take hours; natively it is one more check.
    #[test]
    fn backends_match_soft_briefly() {
        let key: [u32; KEY_WORDS] =
            core::array::from_fn(|i| 0x9e37_79b9u32.wrapping_mul(i as u32 + 1));
        let want = [
            run::<8>(ChaChaBackend::Soft, key, 0),
            run::<8>(ChaChaBackend::Soft, key, 2),
        ];
        let want20 = run::<20>(ChaChaBackend::Soft, key, 1);
        ChaChaBackend::for_each_available(|backend| {
            // `want` is soft's own output: the same code on the same input.
            if backend == ChaChaBackend::Soft {
                return;
            }
            let name = backend.name();
            for (periods, want) in [0, 2].into_iter().zip(&want) {
                assert!(
                    run::<8>(backend, key, periods) == *want,
                    "{name}, ChaCha8, {periods} periods"
                );
            }
            assert!(run::<20>(backend, key, 1) == want20, "{name}, ChaCha20");
        });
    }

    // The one cross-backend helper: every available backend equals `soft` for
    // 8, 12 and 20 rounds, and every ChaCha backend named in
    // `RATCHET_RNG_EXPECT_BACKENDS` was among them (`for_each_available`).
    #[test]
    #[cfg_attr(
        miri,
        ignore = "checks each SIMD backend against soft: under Miri there is only soft"
    )]
    fn backends_match_soft() {
        let mut rng = StdRng::seed_from_u64(0x0c4a_c4a8);
        ChaChaBackend::for_each_available(|backend| {
            check_against_soft::<8>(backend, &mut rng);
            check_against_soft::<12>(backend, &mut rng);
            check_against_soft::<20>(backend, &mut rng);
        });
    }

    /// A key-period kernel: `scalar32::key_period` or `key_period_with`.
    type Kernel = fn(&mut [u32; KEY_WORDS], &mut [u8; KEY_PERIOD_OUTPUT_BYTES]);

    /// `kernel` (`scalar32` in one form) against `soft` for `ROUNDS` rounds:
    /// `keys` random keys, each followed for `periods` chained key periods
    /// (output and next key).
    fn check_scalar32<const ROUNDS: usize>(
        rng: &mut StdRng,
        keys: usize,
        periods: usize,
        kernel: Kernel,
        form: &str,
    ) {
        for _ in 0..keys {
            let key: [u32; KEY_WORDS] = rng.random();
            let (mut soft_key, mut scalar_key) = (key, key);
            for i in 0..periods {
                // Poisoned differently, so an unwritten byte cannot pass.
                let mut soft_out = [0xA5; KEY_PERIOD_OUTPUT_BYTES];
                let mut scalar_out = [0x5A; KEY_PERIOD_OUTPUT_BYTES];
                soft::key_period::<ROUNDS>(&mut soft_key, &mut soft_out);
                kernel(&mut scalar_key, &mut scalar_out);
                assert!(
                    scalar_out == soft_out,
                    "scalar32 ({form}), ChaCha{ROUNDS}, period {i}, key {key:08x?}"
                );
                assert_eq!(
                    scalar_key, soft_key,
                    "scalar32 ({form}), ChaCha{ROUNDS}, next key {i}"
                );
            }
        }
    }

    // The 32-bit scalar kernel (the portable backend on 32-bit targets without
    // SIMD, compiled and tested everywhere) equals `soft` for 8, 12 and 20
    // rounds, in both forms of its double-round loop: the one this target
    // runs, and the other (`ROTATIONS_DEFERRED`: 32-bit Arm runs one, other
    // targets the other). Under Miri, one key and two periods each (a re-key
    // included).
    #[test]
    fn scalar32_matches_soft() {
        let mut rng = StdRng::seed_from_u64(0x5ca1_a232);
        let (keys, periods) = if cfg!(miri) { (1, 2) } else { (KEYS, 5) };
        check_scalar32_forms::<8>(&mut rng, keys, periods);
        check_scalar32_forms::<12>(&mut rng, keys, periods);
        check_scalar32_forms::<20>(&mut rng, keys, periods);
    }

    /// [`check_scalar32`] for both forms of the double-round loop.
    fn check_scalar32_forms<const ROUNDS: usize>(rng: &mut StdRng, keys: usize, periods: usize) {
        const OTHER: bool = !scalar32::ROTATIONS_DEFERRED;
        let this: Kernel = scalar32::key_period::<ROUNDS>;
        let other: Kernel = scalar32::key_period_with::<ROUNDS, OTHER>;
        check_scalar32::<ROUNDS>(rng, keys, periods, this, "this target's form");
        check_scalar32::<ROUNDS>(rng, keys, periods, other, "the other form");
    }

    // The WebAssembly `simd128` kernel (the portable one in a wasm32 build with
    // `simd128`) equals `soft`: run by CI under Node's WASI with
    // `-C target-feature=+simd128`.
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    #[test]
    fn wasm32_simd128_matches_soft() {
        let mut rng = StdRng::seed_from_u64(0x5133_d128);
        for _ in 0..KEYS {
            let key: [u32; KEY_WORDS] = rng.random();
            let (mut soft_key, mut simd_key) = (key, key);
            for i in 0..5 {
                let mut soft_out = [0xA5; KEY_PERIOD_OUTPUT_BYTES];
                let mut simd_out = [0x5A; KEY_PERIOD_OUTPUT_BYTES];
                soft::key_period::<8>(&mut soft_key, &mut soft_out);
                wasm32_simd128::key_period::<8>(&mut simd_key, &mut simd_out);
                assert!(simd_out == soft_out, "simd128, ChaCha8, period {i}");
                assert_eq!(simd_key, soft_key, "simd128, ChaCha8, next key {i}");
                let mut soft_out = [0xA5; KEY_PERIOD_OUTPUT_BYTES];
                let mut simd_out = [0x5A; KEY_PERIOD_OUTPUT_BYTES];
                soft::key_period::<20>(&mut soft_key, &mut soft_out);
                wasm32_simd128::key_period::<20>(&mut simd_key, &mut simd_out);
                assert!(simd_out == soft_out, "simd128, ChaCha20, period {i}");
                assert_eq!(simd_key, soft_key, "simd128, ChaCha20, next key {i}");
            }
        }
    }

    // Go's chacha8rand `read4096` vector through every backend (a second,
    // independent anchor besides `soft`).
    #[test]
    #[cfg_attr(
        miri,
        ignore = "checks each SIMD backend against soft: under Miri there is only soft"
    )]
    fn backends_match_go_vector() {
        let vectors = include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/chacha8rand.txt"
        ));
        let field = |name: &str| -> Vec<u8> {
            let hex = vectors
                .lines()
                .find_map(|line| line.strip_prefix(name)?.strip_prefix(": "))
                .unwrap_or_else(|| panic!("{name} missing"));
            (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
                .collect()
        };
        let seed = field("chacha8rand_seed_i_seed");
        let expected = field("chacha8rand_seed_i_read4096");
        for backend in ChaChaBackend::available() {
            let mut key: [u32; KEY_WORDS] = core::array::from_fn(|i| {
                u32::from_le_bytes(seed[4 * i..4 * i + 4].try_into().unwrap())
            });
            let periods = expected.len().div_ceil(KEY_PERIOD_OUTPUT_BYTES);
            let mut out = vec![[0u8; KEY_PERIOD_OUTPUT_BYTES]; periods];
            key_periods::<8>(backend, &mut key, &mut out);
            assert!(
                out.as_flattened()[..expected.len()] == expected[..],
                "{}",
                backend.name()
            );
        }
    }

    // `detect()` picks an available backend, and the build switches remove
    // what they say: `soft` leaves only `Soft`; `no_avx512` removes AVX-512;
    // `no_avx2` removes AVX2 and AVX-512.
    #[test]
    fn detect_honours_build_cfgs() {
        let detected = ChaChaBackend::detect();
        let available: Vec<_> = ChaChaBackend::available()
            .map(ChaChaBackend::name)
            .collect();
        assert_eq!(available[0], "soft");
        assert!(available.contains(&detected.name()));
        // The fastest available is chosen: the last of the list (soft, then
        // SIMD backends in increasing speed).
        assert_eq!(Some(&detected.name()), available.last());

        let soft_only = cfg!(ratchet_rng_backend = "soft");
        let no_avx2 = soft_only || cfg!(ratchet_rng_no_avx2);
        let no_avx512 = no_avx2 || cfg!(ratchet_rng_no_avx512);
        if soft_only {
            assert_eq!(detected, ChaChaBackend::Soft);
            assert_eq!(available, ["soft"]);
        }
        if no_avx2 {
            assert!(!available.contains(&"x86_avx2"));
        }
        if no_avx512 {
            assert!(!available.contains(&"x86_avx512"));
        }
        if !cfg!(any(target_arch = "x86_64", target_arch = "aarch64")) {
            assert_eq!(available, ["soft"]);
        }
    }
}
