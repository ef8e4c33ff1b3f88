//! `Arbitrary` (feature `arbitrary`, arbitrary 1.x) for every seeded generator,
//! so that a fuzz case can hold one: `#[derive(Arbitrary)] struct Case { rng:
//! ChaChaKeyErasureRng, .. }`.
//!
//! The rule, the same for every generator: the generator is
//! `from_seed` of the next seed-sized bytes of the input (32 bytes; 136 for
//! `TurboShakeRng` and `ShakeRng`), read as they are. Where the input runs out
//! first, the bytes it has are the start of the seed and the rest of the seed is
//! zeros (as `arbitrary` pads an integer): a short or empty input still gives a
//! generator, and the same input always gives the same stream. `size_hint` is
//! exactly the seed length. The fuzzer controls the seed directly, so the
//! stream is as secret as the input: for fuzzing, never for keys.

use arbitrary::{Arbitrary, MaxRecursionReached, Unstructured};
use rand_core::SeedableRng;
use zeroize::Zeroize;

use crate::{
    AesCtrPoolRng, ChaCha12KeyErasureRng, ChaCha20KeyErasureRng, ChaChaKeyErasureRng, ShakeRng,
    TurboShakeRng,
};

macro_rules! impl_arbitrary {
    ($seed_bytes:literal => $($name:ident),* $(,)?) => {$(
        // The seed type is `$seed_bytes` bytes (`[u8; 32]` or `SpongeSeed`).
        const _: () = assert!(core::mem::size_of::<<$name as SeedableRng>::Seed>() == $seed_bytes);

        /// `from_seed` of the next
        #[doc = concat!(stringify!($seed_bytes), " bytes of the input, zero-padded")]
        /// if it has fewer (so any input, an empty one included, gives a
        /// generator, and the same input the same stream); `size_hint` is exactly
        #[doc = concat!(stringify!($seed_bytes), " bytes.")]
        ///
        /// # Security
        /// The seed is the input's bytes: for fuzz cases, never for keys.
        #[cfg_attr(docsrs, doc(cfg(feature = "arbitrary")))]
        impl<'a> Arbitrary<'a> for $name {
            fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
                let mut seed = <Self as SeedableRng>::Seed::default();
                let n = u.len().min(seed.as_ref().len());
                seed.as_mut()[..n].copy_from_slice(u.bytes(n)?);
                let rng = Self::from_seed(seed.clone());
                seed.as_mut().zeroize();
                Ok(rng)
            }

            #[inline]
            fn size_hint(_depth: usize) -> (usize, Option<usize>) {
                ($seed_bytes, Some($seed_bytes))
            }

            #[inline]
            fn try_size_hint(depth: usize) -> Result<(usize, Option<usize>), MaxRecursionReached> {
                Ok(Self::size_hint(depth))
            }
        }
    )*};
}

impl_arbitrary!(32 => ChaChaKeyErasureRng, ChaCha12KeyErasureRng, ChaCha20KeyErasureRng, AesCtrPoolRng);
impl_arbitrary!(136 => TurboShakeRng, ShakeRng);
