//! Keccak-p\[1600\]: the permutation, the sponge, and the sponge generators' refill.
//!
//! This parent module is the only place that selects a backend; the backends live
//! in `keccak/`, one file each: the specification [`soft`] (every other kernel is
//! tested against it), the fast portable kernel [`portable`] (rounds written out
//! over a lane type: `u64` lanes on 64-bit targets and wasm32, the
//! bit-interleaved `u32` pairs of [`interleaved32`] on 32-bit cores, chosen at
//! compile time, never probed), which runs `KeccakBackend::Soft`, and the SIMD
//! kernels, which plug into [`squeeze_period`]'s `match`. Each SIMD kernel runs a whole ratchet
//! period (10 permutations) inside one target-feature boundary, with the state
//! in registers throughout.

/// The frame every register-resident SIMD kernel shares: the permutation with the
/// rounds written out, and the ratchet period with one call site of it. A backend
/// module defines `Lanes` (its register state), `load`, `store`, `write_rate` and
/// `round` under its target features, then invokes this with those features and
/// an expression for a zeroed register; the functions it generates are compiled
/// with the same features, so everything inlines into one kernel per period.
#[allow(
    unused_macros,
    reason = "used by the SIMD backends, which a build may leave out"
)]
macro_rules! register_kernel {
    (features = $features:literal, zero = $zero:expr) => {
        /// Keccak-p\[1600, `ROUNDS`\] on the register state.
        #[inline]
        #[target_feature(enable = $features)]
        fn permute_lanes<const ROUNDS: usize>(a: &mut Lanes) {
            const { assert!(ROUNDS >= 1 && ROUNDS <= $crate::keccak::FULL_ROUNDS) };
            let round_constants =
                &$crate::keccak::soft::ROUND_CONSTANTS[$crate::keccak::FULL_ROUNDS - ROUNDS..];
            let (twelves, rest) = round_constants.as_chunks::<12>();
            for twelve in twelves {
                // Written out so that pi stays a renaming (no register moves).
                round(a, twelve[0]);
                round(a, twelve[1]);
                round(a, twelve[2]);
                round(a, twelve[3]);
                round(a, twelve[4]);
                round(a, twelve[5]);
                round(a, twelve[6]);
                round(a, twelve[7]);
                round(a, twelve[8]);
                round(a, twelve[9]);
                round(a, twelve[10]);
                round(a, twelve[11]);
            }
            for &rc in rest {
                round(a, rc);
            }
        }

        /// Keccak-p\[1600, `ROUNDS`\] of `state`.
        #[target_feature(enable = $features)]
        pub(crate) fn permute<const ROUNDS: usize>(state: &mut [u64; $crate::keccak::LANES]) {
            let mut a = load(state);
            permute_lanes::<ROUNDS>(&mut a);
            store(&a, state);
        }

        /// One ratchet period (see [`super::squeeze_period`]): 8 rate blocks, each
        /// followed by a permutation, then the ratchet.
        #[target_feature(enable = $features)]
        pub(crate) fn squeeze_period<const ROUNDS: usize>(
            state: &mut [u64; $crate::keccak::LANES],
            out: &mut [u8; $crate::keccak::RATCHET_PERIOD_BYTES],
        ) {
            let mut a = load(state);
            let (blocks, _) = out.as_chunks_mut::<{ $crate::keccak::RATE_BYTES }>();
            // One call site of the permutation, so that it is inlined and the state
            // stays in registers: 8 blocks, then the ratchet's zeroing.
            for i in 0..=$crate::keccak::BLOCKS_PER_PERIOD {
                if let Some(block) = blocks.get_mut(i) {
                    write_rate(&a, block);
                } else {
                    for reg in &mut a[..$crate::keccak::RATCHET_ZERO_BYTES / 8] {
                        *reg = $zero;
                    }
                }
                permute_lanes::<ROUNDS>(&mut a);
            }
            store(&a, state);
        }
    };
}

#[cfg(ratchet_rng_aarch64_sha3)]
mod aarch64_sha3;
mod interleaved32;
mod portable;
pub(crate) mod soft;
#[cfg(ratchet_rng_x86_avx2)]
mod x86_avx2;
#[cfg(ratchet_rng_x86_avx512)]
mod x86_avx512;

use crate::backend::KeccakBackend;
pub(crate) use soft::{FULL_ROUNDS, LANES, Sponge};

/// The lane representation of the portable kernel on this target: plain `u64`
/// lanes where the core has 64-bit integer operations (64-bit targets, and
/// wasm32, whose `i64` is native), bit-interleaved `u32` pairs (two 32-bit
/// rotations per lane rotation) on 32-bit cores. Chosen at compile time by
/// `cfg(ratchet_rng_portable32)` (build.rs: 32-bit targets but wasm32, or set by
/// hand), as for AES; both are compiled and tested on every target.
#[cfg(not(ratchet_rng_portable32))]
type PortableLane = u64;
#[cfg(ratchet_rng_portable32)]
type PortableLane = interleaved32::Interleaved;

/// Rate of SHAKE256 and TurboSHAKE256, in bytes (capacity 512 bits).
pub(crate) const RATE_BYTES: usize = 136;

/// Rate blocks squeezed per ratchet period of the sponge generators.
pub(crate) const BLOCKS_PER_PERIOD: usize = 8;

/// Output bytes between two ratchets of the sponge generators: 8 rate blocks.
pub(crate) const RATCHET_PERIOD_BYTES: usize = RATE_BYTES * BLOCKS_PER_PERIOD;

/// Bytes of state zeroed by a ratchet (the first four lanes).
pub(crate) const RATCHET_ZERO_BYTES: usize = 32;

/// One ratchet period of a sponge generator.
///
/// On entry `state` is ready to be read (just permuted). Each of the 8 rate blocks
/// is written to `out` and the state is permuted after it is read; then the
/// ratchet zeroes the first [`RATCHET_ZERO_BYTES`] of the state and permutes once
/// more, so the state no longer determines the bytes just written.
pub(crate) fn squeeze_period<const ROUNDS: usize>(
    backend: KeccakBackend,
    state: &mut [u64; LANES],
    out: &mut [u8; RATCHET_PERIOD_BYTES],
) {
    match backend {
        KeccakBackend::Soft => portable::squeeze_period::<PortableLane, ROUNDS>(state, out),
        #[cfg(ratchet_rng_keccak_interleaved32)]
        KeccakBackend::Interleaved32(_) => {
            portable::squeeze_period::<interleaved32::Interleaved, ROUNDS>(state, out);
        }
        // SAFETY: the `Detected` token proves `backend.rs` found AVX2 on this CPU.
        #[cfg(ratchet_rng_x86_avx2)]
        KeccakBackend::X86Avx2(_) => unsafe { x86_avx2::squeeze_period::<ROUNDS>(state, out) },
        // SAFETY: the `Detected` token proves `backend.rs` found AVX-512F and
        // AVX-512VL on this CPU.
        #[cfg(ratchet_rng_x86_avx512)]
        KeccakBackend::X86Avx512(_) => unsafe { x86_avx512::squeeze_period::<ROUNDS>(state, out) },
        // SAFETY: the `Detected` token proves `backend.rs` found the SHA3
        // extension on this CPU.
        #[cfg(ratchet_rng_aarch64_sha3)]
        KeccakBackend::Aarch64Sha3(_) => unsafe {
            aarch64_sha3::squeeze_period::<ROUNDS>(state, out)
        },
    }
}

/// Converts `state` from the usual form to the form `backend` keeps between
/// periods ([`squeeze_period_kept`]): bit-interleaved lanes for the 32-bit
/// portable kernel, so that a period does not convert all 25 lanes twice; the
/// usual form for every other backend.
pub(crate) fn keep(backend: KeccakBackend, state: &mut [u64; LANES]) {
    match backend {
        KeccakBackend::Soft => portable::keep::<PortableLane>(state),
        #[cfg(ratchet_rng_keccak_interleaved32)]
        KeccakBackend::Interleaved32(_) => portable::keep::<interleaved32::Interleaved>(state),
        #[allow(unreachable_patterns, reason = "no other backend on some targets")]
        _ => {}
    }
}

/// The inverse of [`keep`].
pub(crate) fn unkeep(backend: KeccakBackend, state: &mut [u64; LANES]) {
    match backend {
        KeccakBackend::Soft => portable::unkeep::<PortableLane>(state),
        #[cfg(ratchet_rng_keccak_interleaved32)]
        KeccakBackend::Interleaved32(_) => portable::unkeep::<interleaved32::Interleaved>(state),
        #[allow(unreachable_patterns, reason = "no other backend on some targets")]
        _ => {}
    }
}

/// [`squeeze_period`] of a state in the form of [`keep`].
pub(crate) fn squeeze_period_kept<const ROUNDS: usize>(
    backend: KeccakBackend,
    state: &mut [u64; LANES],
    out: &mut [u8; RATCHET_PERIOD_BYTES],
) {
    match backend {
        KeccakBackend::Soft => portable::squeeze_period_kept::<PortableLane, ROUNDS>(state, out),
        #[cfg(ratchet_rng_keccak_interleaved32)]
        KeccakBackend::Interleaved32(_) => {
            portable::squeeze_period_kept::<interleaved32::Interleaved, ROUNDS>(state, out);
        }
        #[allow(unreachable_patterns, reason = "no other backend on some targets")]
        _ => squeeze_period::<ROUNDS>(backend, state, out),
    }
}

/// Keccak-p\[1600, `ROUNDS`\] on `backend` (tests and `hazmat`).
#[allow(dead_code, reason = "used by the tests and the `hazmat` feature")]
pub(crate) fn permute<const ROUNDS: usize>(backend: KeccakBackend, state: &mut [u64; LANES]) {
    match backend {
        KeccakBackend::Soft => portable::permute::<PortableLane, ROUNDS>(state),
        #[cfg(ratchet_rng_keccak_interleaved32)]
        KeccakBackend::Interleaved32(_) => {
            portable::permute::<interleaved32::Interleaved, ROUNDS>(state);
        }
        // SAFETY: the `Detected` token proves `backend.rs` found AVX2 on this CPU.
        #[cfg(ratchet_rng_x86_avx2)]
        KeccakBackend::X86Avx2(_) => unsafe { x86_avx2::permute::<ROUNDS>(state) },
        // SAFETY: the `Detected` token proves `backend.rs` found AVX-512F and
        // AVX-512VL on this CPU.
        #[cfg(ratchet_rng_x86_avx512)]
        KeccakBackend::X86Avx512(_) => unsafe { x86_avx512::permute::<ROUNDS>(state) },
        // SAFETY: the `Detected` token proves `backend.rs` found the SHA3
        // extension on this CPU.
        #[cfg(ratchet_rng_aarch64_sha3)]
        KeccakBackend::Aarch64Sha3(_) => unsafe { aarch64_sha3::permute::<ROUNDS>(state) },
    }
}

/// One ratchet period written with the specification's permutation: the oracle
/// of the tests.
#[cfg(test)]
fn squeeze_period_spec<const ROUNDS: usize>(
    state: &mut [u64; LANES],
    out: &mut [u8; RATCHET_PERIOD_BYTES],
) {
    let (blocks, _) = out.as_chunks_mut::<RATE_BYTES>();
    for block in blocks {
        soft::write_rate(state, block);
        soft::keccak_p1600::<ROUNDS>(state);
    }
    state[..RATCHET_ZERO_BYTES / 8].fill(0);
    soft::keccak_p1600::<ROUNDS>(state);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;
    use std::{format, vec};

    /// SplitMix64: a public, reproducible source of test states.
    struct TestStates(u64);

    impl TestStates {
        fn next_u64(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }

        fn state(&mut self) -> [u64; LANES] {
            core::array::from_fn(|_| self.next_u64())
        }
    }

    /// Edge states (zero, all ones, one bit in every lane) then random ones.
    fn test_states(random: usize) -> Vec<[u64; LANES]> {
        let mut states = vec![[0; LANES], [u64::MAX; LANES], [1; LANES], [1 << 63; LANES]];
        let mut rng = TestStates(0x5EED);
        states.extend((0..random).map(|_| rng.state()));
        states
    }

    /// Runs `check` on every Keccak backend this CPU and build allow (see
    /// `for_each_available`: an expected backend that did not run fails).
    fn for_each_backend(check: impl FnMut(KeccakBackend)) {
        KeccakBackend::for_each_available(check);
    }

    fn check_permute<const ROUNDS: usize>(backend: KeccakBackend) {
        for state in test_states(64) {
            let mut expected = state;
            soft::keccak_p1600::<ROUNDS>(&mut expected);
            let mut actual = state;
            permute::<ROUNDS>(backend, &mut actual);
            assert_eq!(actual, expected, "{} permute::<{ROUNDS}>", backend.name());
        }
    }

    fn check_squeeze_periods<const ROUNDS: usize>(backend: KeccakBackend) {
        for start in test_states(8) {
            let (mut expected, mut actual) = (start, start);
            for period in 0..5 {
                let mut expected_out = [0u8; RATCHET_PERIOD_BYTES];
                squeeze_period_spec::<ROUNDS>(&mut expected, &mut expected_out);
                // Garbage in the output buffer must not matter.
                let mut actual_out = [0xA5u8; RATCHET_PERIOD_BYTES];
                squeeze_period::<ROUNDS>(backend, &mut actual, &mut actual_out);
                let context = format!(
                    "{} squeeze_period::<{ROUNDS}>, period {period}",
                    backend.name()
                );
                assert_eq!(actual_out, expected_out, "{context}: output");
                assert_eq!(actual, expected, "{context}: state");
            }
        }
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "checks each SIMD backend against soft: under Miri there is only soft"
    )]
    fn permute_matches_soft_on_every_backend() {
        for_each_backend(|backend| {
            check_permute::<12>(backend);
            check_permute::<24>(backend);
            // Any round count the kernels accept.
            check_permute::<1>(backend);
        });
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "checks each SIMD backend against soft: under Miri there is only soft"
    )]
    fn squeeze_period_matches_soft_on_every_backend() {
        for_each_backend(|backend| {
            check_squeeze_periods::<12>(backend);
            check_squeeze_periods::<24>(backend);
        });
    }

    /// Both lane representations of the portable kernel against the
    /// specification, on every target (each target runs one of them as `Soft`):
    /// permutations with 1, 12 and 24 rounds, and ratchet periods. Few states
    /// under Miri, which interprets them.
    fn check_portable_kernel<L: portable::Lane>(name: &str) {
        let random = if cfg!(miri) { 1 } else { 32 };
        let cases: [(usize, Permutation, Permutation); 3] = [
            (1, soft::keccak_p1600::<1>, portable::permute::<L, 1>),
            (12, soft::keccak_p1600::<12>, portable::permute::<L, 12>),
            (24, soft::keccak_p1600::<24>, portable::permute::<L, 24>),
        ];
        for state in test_states(random) {
            for (rounds, spec, kernel) in cases {
                let mut expected = state;
                spec(&mut expected);
                let mut actual = state;
                kernel(&mut actual);
                assert_eq!(actual, expected, "{name} permute, {rounds} rounds");
            }
        }
        let periods = if cfg!(miri) { 1 } else { 3 };
        for start in test_states(random / 8) {
            let (mut expected, mut actual) = (start, start);
            for period in 0..periods {
                let mut expected_out = [0u8; RATCHET_PERIOD_BYTES];
                squeeze_period_spec::<12>(&mut expected, &mut expected_out);
                let mut actual_out = [0xA5u8; RATCHET_PERIOD_BYTES];
                portable::squeeze_period::<L, 12>(&mut actual, &mut actual_out);
                assert_eq!(actual_out, expected_out, "{name} period {period}: output");
                assert_eq!(actual, expected, "{name} period {period}: state");
            }
        }
        let (mut expected, mut actual) = ([7; LANES], [7; LANES]);
        let (mut expected_out, mut actual_out) =
            ([0; RATCHET_PERIOD_BYTES], [1; RATCHET_PERIOD_BYTES]);
        squeeze_period_spec::<24>(&mut expected, &mut expected_out);
        portable::squeeze_period::<L, 24>(&mut actual, &mut actual_out);
        assert_eq!(
            (actual, actual_out),
            (expected, expected_out),
            "{name}, 24 rounds"
        );
    }

    type Permutation = fn(&mut [u64; LANES]);

    #[test]
    fn portable_u64_lanes_match_spec() {
        check_portable_kernel::<u64>("u64 lanes");
    }

    #[test]
    fn portable_interleaved32_lanes_match_spec() {
        check_portable_kernel::<interleaved32::Interleaved>("interleaved32");
    }

    /// The soft period is the definition: 8 blocks read and permuted, then the
    /// ratchet, written out with the spec's sponge.
    #[test]
    fn soft_period_is_eight_blocks_then_ratchet() {
        let mut rng = TestStates(7);
        let start = rng.state();
        let mut state = start;
        let mut out = [0u8; RATCHET_PERIOD_BYTES];
        squeeze_period::<12>(KeccakBackend::Soft, &mut state, &mut out);
        let mut expected = start;
        for block in out.chunks_exact(RATE_BYTES) {
            let lanes: Vec<u8> = expected[..RATE_BYTES / 8]
                .iter()
                .flat_map(|l| l.to_le_bytes())
                .collect();
            assert_eq!(block, &lanes[..]);
            soft::keccak_p1600::<12>(&mut expected);
        }
        expected[..4].fill(0);
        soft::keccak_p1600::<12>(&mut expected);
        assert_eq!(state, expected);
    }

    /// `detect()` and `available()` obey the build switches of `build.rs`.
    #[test]
    fn detect_honours_build_cfgs() {
        let available: Vec<KeccakBackend> = KeccakBackend::available().collect();
        let names: Vec<&str> = available.iter().map(|b| b.name()).collect();
        let detected = KeccakBackend::detect();
        assert_eq!(names.first(), Some(&"soft"));
        assert!(
            available.contains(&detected),
            "{detected:?} not in {names:?}"
        );
        let mut unique = names.clone();
        unique.dedup();
        assert_eq!(unique, names, "each backend once");

        if cfg!(ratchet_rng_backend = "soft") {
            assert_eq!(names, ["soft"]);
            assert_eq!(detected, KeccakBackend::Soft);
        }
        if cfg!(ratchet_rng_no_avx512) || cfg!(ratchet_rng_no_avx2) {
            assert!(!names.contains(&"x86_avx512"), "{names:?}");
        }
        if cfg!(ratchet_rng_no_avx2) {
            assert!(!names.contains(&"x86_avx2"), "{names:?}");
        }
        if cfg!(ratchet_rng_no_sha3) {
            assert!(!names.contains(&"aarch64_sha3"), "{names:?}");
        }
        // The preferred kernels win when present; AVX2 never does.
        let preferred = ["x86_avx512", "aarch64_sha3"]
            .into_iter()
            .find(|name| names.contains(name))
            .unwrap_or("soft");
        assert_eq!(detected.name(), preferred);
    }
}
