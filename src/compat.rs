//! The older `rand_core` traits, for crates still on `rand` 0.8 (`rand_core` 0.6,
//! feature `rand_core_06`) or `rand` 0.9 (`rand_core` 0.9, feature
//! `rand_core_09`).
//!
//! Every impl here forwards to the generator's `rand_core` 0.10 impl, so the
//! streams are the same whichever traits drive a generator: `fill_bytes` serves
//! the next bytes, `next_u32` / `next_u64` read the next 4 / 8 bytes
//! little-endian, and a seed (from `from_seed`, `from_rng` or `seed_from_u64`)
//! gives one stream in all three versions.
//!
//! - `SeedableRng::Seed` is the same type as in 0.10 (`SpongeSeed` or `[u8; 32]`).
//! - `seed_from_u64` is overridden to call the 0.10 one. (Today the three
//!   versions' default impls expand a `u64` through the same PCG32 steps, but
//!   that is their implementation detail; forwarding makes "one `u64`, one
//!   stream" our guarantee.)
//! - `from_rng` keeps the old traits' default impls: they fill a default seed
//!   from the source with one `fill_bytes` (`try_fill_bytes` in 0.6), exactly as
//!   0.10 does.
//! - The OS-seeded trait constructors, 0.6's `SeedableRng::from_entropy` and
//!   0.9's `SeedableRng::from_os_rng`, exist only when the application enables
//!   those `rand_core`s' `getrandom` / `os_rng` features (`rand` 0.8 / 0.9 do by
//!   default); they then seed through `getrandom` 0.2 / 0.3 with the default
//!   impls. This crate enables neither, so the compat features pull in no
//!   further dependency and build for `no_std`. The inherent
//!   `Generator::from_os_rng()` (feature `sys_rng`) is always there and wins in
//!   method-call syntax.
//! - `ThreadRng` and `&ThreadRng` get `RngCore` and `CryptoRng` (the handle is
//!   not seedable), forwarding to `ThreadRng`'s 0.10 impl. The 0.6
//!   `try_fill_bytes` returns the OS error (as a `rand_core` 0.6 error code) if
//!   the thread's generator cannot be seeded, where the other methods panic, as
//!   in 0.10.

#[cfg(feature = "rand_core_06")]
use rand_core_06 as core06;
#[cfg(feature = "rand_core_09")]
use rand_core_09 as core09;

use crate::{
    AesCtrPoolRng, ChaCha12KeyErasureRng, ChaCha20KeyErasureRng, ChaChaKeyErasureRng, ShakeRng,
    TurboShakeRng,
};

/// `RngCore`, `CryptoRng` and `SeedableRng` of an older `rand_core` (`$core`,
/// behind feature `$feature`) for every seeded generator (the one list of them
/// here), forwarding to the `rand_core` 0.10 impl. Each impl is labelled for
/// rustdoc: `doc(cfg)` under `docsrs`, and `$doc` (its version and the `rand`
/// it serves) as its documentation. `{ $extra }`: the `RngCore` methods only
/// that version has. `@rng_core_each` alone: `RngCore` and `CryptoRng` (for the
/// thread-local handle).
#[cfg(any(feature = "rand_core_06", feature = "rand_core_09"))]
macro_rules! impl_older_rand_core {
    ($core:ident, $feature:literal, $doc:literal, $extra:tt) => {
        impl_older_rand_core!(
            @each $core, $feature, $doc, $extra,
            ShakeRng,
            TurboShakeRng,
            ChaChaKeyErasureRng,
            ChaCha12KeyErasureRng,
            ChaCha20KeyErasureRng,
            AesCtrPoolRng,
        );
    };
    (@each $core:ident, $feature:literal, $doc:literal, $extra:tt, $($name:ty),* $(,)?) => {$(
        impl_older_rand_core!(@rng_core $core, $feature, $doc, $extra, $name);
        impl_older_rand_core!(@seedable $core, $feature, $doc, $name);
    )*};
    (@rng_core_each $core:ident, $feature:literal, $doc:literal, $extra:tt, $($name:ty),* $(,)?) => {$(
        impl_older_rand_core!(@rng_core $core, $feature, $doc, $extra, $name);
    )*};
    (@rng_core $core:ident, $feature:literal, $doc:literal, { $($extra:item)* }, $name:ty) => {
        #[cfg_attr(docsrs, doc(cfg(feature = $feature)))]
        #[doc = $doc]
        impl $core::RngCore for $name {
            #[inline]
            fn next_u32(&mut self) -> u32 {
                rand_core::Rng::next_u32(self)
            }

            #[inline]
            fn next_u64(&mut self) -> u64 {
                rand_core::Rng::next_u64(self)
            }

            #[inline]
            fn fill_bytes(&mut self, dest: &mut [u8]) {
                rand_core::Rng::fill_bytes(self, dest);
            }

            $($extra)*
        }

        #[cfg_attr(docsrs, doc(cfg(feature = $feature)))]
        #[doc = $doc]
        impl $core::CryptoRng for $name {}
    };
    (@seedable $core:ident, $feature:literal, $doc:literal, $name:ty) => {
        #[cfg_attr(docsrs, doc(cfg(feature = $feature)))]
        #[doc = $doc]
        impl $core::SeedableRng for $name {
            type Seed = <$name as rand_core::SeedableRng>::Seed;

            #[inline]
            fn from_seed(seed: Self::Seed) -> Self {
                <$name as rand_core::SeedableRng>::from_seed(seed)
            }

            /// The same stream as the `rand_core` 0.10 `seed_from_u64`. Not a
            /// cryptographic key: 64 bits only.
            fn seed_from_u64(state: u64) -> Self {
                <$name as rand_core::SeedableRng>::seed_from_u64(state)
            }
        }
    };
}

// 0.6's `RngCore` also has the fallible fill (0.9 moved it to `TryRngCore`,
// which its blanket impls give every `RngCore`, as they give `TryCryptoRng`).
#[cfg(feature = "rand_core_06")]
impl_older_rand_core!(
    core06,
    "rand_core_06",
    "rand_core 0.6 (`rand_core_06` feature): for rand 0.8.",
    {
        /// Never fails.
        #[inline]
        fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), core06::Error> {
            rand_core::Rng::fill_bytes(self, dest);
            Ok(())
        }
    }
);

#[cfg(feature = "rand_core_09")]
impl_older_rand_core!(
    core09,
    "rand_core_09",
    "rand_core 0.9 (`rand_core_09` feature): for rand 0.9.",
    {}
);

/// The thread-local handle, and a shared reference to it (as in 0.10): the same
/// generator through the old traits.
#[cfg(feature = "thread_rng")]
mod thread {
    use crate::ThreadRng;

    #[cfg(feature = "rand_core_06")]
    use super::core06;
    #[cfg(feature = "rand_core_09")]
    use super::core09;

    /// The `rand_core` 0.6 error for an OS error: its code when the OS gave one
    /// (`rand_core` 0.6 reports codes below `INTERNAL_START` as OS errors, as
    /// `getrandom` does), else a code in 0.6's range for custom errors.
    #[cfg(feature = "rand_core_06")]
    fn error_06(err: crate::OsError) -> core06::Error {
        let code = err
            .raw_os_error()
            .and_then(|code| u32::try_from(code).ok())
            .filter(|&code| code < core06::Error::INTERNAL_START)
            .and_then(core::num::NonZeroU32::new);
        match code {
            Some(code) => code.into(),
            None => match core::num::NonZeroU32::new(core06::Error::CUSTOM_START) {
                Some(code) => code.into(),
                None => unreachable!("CUSTOM_START is not zero"),
            },
        }
    }

    // Forwarding to the 0.10 impl as the generators do (`&ThreadRng`'s forwards to
    // `ThreadRng`'s), except 0.6's fallible fill, which reports a seeding failure.
    #[cfg(feature = "rand_core_06")]
    impl_older_rand_core!(
        @rng_core_each core06,
        "rand_core_06",
        "rand_core 0.6 (`rand_core_06` feature): for rand 0.8.",
        {
            /// Returns the OS error if this thread's generator cannot be seeded
            /// (where the other methods panic).
            #[inline]
            fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), core06::Error> {
                crate::try_fill(dest).map_err(error_06)
            }
        },
        ThreadRng,
        &ThreadRng,
    );

    #[cfg(feature = "rand_core_09")]
    impl_older_rand_core!(@rng_core_each core09, "rand_core_09", "rand_core 0.9 (`rand_core_09` feature): for rand 0.9.", {}, ThreadRng, &ThreadRng);

    #[cfg(all(test, feature = "rand_core_06"))]
    mod tests {
        use super::core06;

        // `getrandom` builds OS errors only from a failing system call, so only
        // the non-OS branch can be driven from here.
        #[test]
        fn non_os_errors_map_to_rand_core_06_custom_code() {
            let err = super::error_06(crate::OsError::new(getrandom::Error::UNSUPPORTED));
            assert_eq!(err.raw_os_error(), None);
            assert_eq!(
                err.code().map(core::num::NonZeroU32::get),
                Some(core06::Error::CUSTOM_START)
            );
        }
    }
}
