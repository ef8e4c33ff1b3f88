//! The sponge generators [`ShakeRng`] (SHAKE256) and [`TurboShakeRng`]
//! (TurboSHAKE256), stream-compatible with the C++ library RandomSHAKE.

use core::fmt;

use rand_core::SeedableRng;
use zeroize::Zeroize;

use super::buffer::{BlockCore, BufferedRng};
use super::{generator_panics_doc, impl_generator};
use crate::backend::KeccakBackend;
use crate::keccak::{self, FULL_ROUNDS, LANES, RATCHET_PERIOD_BYTES, RATE_BYTES, Sponge};

/// Bytes in a [`SpongeSeed`]: one rate block of SHAKE256 / TurboSHAKE256.
pub const SPONGE_SEED_BYTES: usize = RATE_BYTES;

/// Rounds of Keccak-p\[1600\] in TurboSHAKE.
const TURBO_ROUNDS: usize = 12;

/// The domain byte both generators finalize with: SHAKE256's suffix, and the
/// TurboSHAKE256 `D = 0x1F` that RandomSHAKE uses.
const DOMAIN: u8 = 0x1F;

/// The 136-byte seed of [`ShakeRng`] and [`TurboShakeRng`] (one rate block).
///
/// `Default` is all zeros (a public seed: fill it before use). Its `Debug` prints
/// no bytes, and it is wiped when dropped.
///
/// # Lengths
/// A seed is exactly 136 bytes: build one from a `[u8; 136]` (`From`, infallible)
/// or from a slice with `TryFrom<&[u8]>`, which fails with
/// [`TryFromSliceError`](core::array::TryFromSliceError) unless the slice has
/// exactly 136 bytes (nothing is padded or truncated). Key material of any other
/// length goes to `from_key` instead.
///
/// ```
/// use ratchet_rng::{SpongeSeed, TurboShakeRng, rand_core::{Rng, SeedableRng}};
///
/// let bytes = [7u8; 140];
/// assert!(SpongeSeed::try_from(&bytes[..135]).is_err());
/// assert!(SpongeSeed::try_from(&bytes[..]).is_err());
/// let seed = SpongeSeed::try_from(&bytes[..136]).expect("136 bytes");
/// let mut a = TurboShakeRng::from_seed(seed);
/// assert_eq!(a.next_u64(), TurboShakeRng::from_key(&bytes[..136]).next_u64());
/// ```
#[derive(Clone)]
pub struct SpongeSeed([u8; SPONGE_SEED_BYTES]);

impl Default for SpongeSeed {
    fn default() -> Self {
        Self([0; SPONGE_SEED_BYTES])
    }
}

impl From<[u8; SPONGE_SEED_BYTES]> for SpongeSeed {
    fn from(bytes: [u8; SPONGE_SEED_BYTES]) -> Self {
        Self(bytes)
    }
}

impl TryFrom<&[u8]> for SpongeSeed {
    type Error = core::array::TryFromSliceError;

    /// A seed from exactly [`SPONGE_SEED_BYTES`] bytes.
    ///
    /// # Errors
    /// [`TryFromSliceError`](core::array::TryFromSliceError) for any other
    /// length, as for arrays.
    fn try_from(bytes: &[u8]) -> Result<Self, Self::Error> {
        <[u8; SPONGE_SEED_BYTES]>::try_from(bytes).map(Self)
    }
}

impl AsRef<[u8]> for SpongeSeed {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl AsMut<[u8]> for SpongeSeed {
    fn as_mut(&mut self) -> &mut [u8] {
        &mut self.0
    }
}

impl fmt::Debug for SpongeSeed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SpongeSeed { .. }")
    }
}

impl Drop for SpongeSeed {
    fn drop(&mut self) {
        self.0.zeroize();
    }
}

/// The refill core: a squeezing Keccak state, ratcheted every period.
struct SpongeCore<const ROUNDS: usize> {
    state: [u64; LANES],
    backend: KeccakBackend,
}

impl<const ROUNDS: usize> SpongeCore<ROUNDS> {
    /// Absorbs `key`, pads with the domain byte and permutes: the state then holds
    /// the first output block of SHAKE256(key) / TurboSHAKE256(key, 0x1F).
    fn from_key(key: &[u8], backend: KeccakBackend) -> Self {
        let mut sponge = Sponge::<ROUNDS, RATE_BYTES>::new();
        sponge.absorb(key);
        sponge.finalize(DOMAIN);
        Self {
            state: sponge.take_squeezing_state(),
            backend,
        }
    }
}

impl<const ROUNDS: usize> BlockCore<RATCHET_PERIOD_BYTES> for SpongeCore<ROUNDS> {
    #[inline]
    fn generate(&mut self, out: &mut [u8; RATCHET_PERIOD_BYTES]) {
        keccak::squeeze_period::<ROUNDS>(self.backend, &mut self.state, out);
    }
}

impl<const ROUNDS: usize> Drop for SpongeCore<ROUNDS> {
    fn drop(&mut self) {
        self.state.zeroize();
    }
}

macro_rules! sponge_generator {
    (
        $(#[$doc:meta])*
        $name:ident, $rounds:expr, $xof:literal
    ) => {
        $(#[$doc])*
        ///
        #[doc = generator_panics_doc!()]
        pub struct $name(BufferedRng<SpongeCore<{ $rounds }>, RATCHET_PERIOD_BYTES>);

        impl $name {
            #[doc = concat!("A generator keyed by `key`, of any length: its stream is ", $xof, "(key)")]
            /// with the ratchet applied every 1088 bytes. A 136-byte key gives the
            /// same stream as [`from_seed`](SeedableRng::from_seed).
            ///
            /// For fuzz harnesses and derived streams: the same key gives the same
            /// stream on every platform and version.
            ///
            /// # Security
            /// The stream is exactly as secret as `key`: an empty or guessable key
            /// gives a public stream (no error is raised; `from_key(&[])` is a valid,
            /// fixed stream). Use at least 32 bytes of secret key material for
            /// cryptographic use.
            ///
            /// # Panics
            /// Never: any length is accepted (the empty key included) and absorbed
            /// in constant memory; a key longer than 136 bytes is absorbed over
            /// several rate blocks, as by the XOF.
            #[must_use]
            pub fn from_key(key: &[u8]) -> Self {
                Self(BufferedRng::new(SpongeCore::from_key(
                    key,
                    KeccakBackend::detect(),
                )))
            }
        }

        #[cfg(feature = "hazmat")]
        impl $name {
            /// [`from_key`](Self::from_key) on the named Keccak backend (see
            /// [`hazmat::Keccak`](crate::hazmat::Keccak)); `None` if this CPU or
            /// build lacks it, or if `backend` names no backend at all (any string
            /// is accepted; nothing panics). The stream is the same on every backend.
            pub fn from_key_with_backend(key: &[u8], backend: &str) -> Option<Self> {
                let backend = crate::hazmat::Keccak::by_name(backend)?.0;
                Some(Self(BufferedRng::new(SpongeCore::from_key(key, backend))))
            }

            /// [`from_seed`](SeedableRng::from_seed) on the named Keccak backend;
            /// `None` if this CPU or build lacks it, or for an unknown name.
            pub fn from_seed_with_backend(seed: SpongeSeed, backend: &str) -> Option<Self> {
                Self::from_key_with_backend(&seed.0, backend)
            }
        }

        impl SeedableRng for $name {
            type Seed = SpongeSeed;

            super::seed_wiping_constructors!();

            /// Absorbs the 136-byte seed (one rate block) and pads.
            fn from_seed(seed: SpongeSeed) -> Self {
                Self::from_key(&seed.0)
            }
        }

        impl_generator!($name);
    };
}

sponge_generator! {
    /// A cryptographically secure generator over SHAKE256 (FIPS 202) with a
    /// ratchet every 1088 bytes; byte-for-byte the stream of RandomSHAKE's
    /// `randomshake_t` with `xof_kind_t::SHAKE256`.
    ///
    /// # Stream
    /// Absorb the 136-byte seed (or [`from_key`](Self::from_key)'s key), pad
    /// with `0x1F` and permute (Keccak-p\[1600, 24\]). Then, repeatedly: output 8
    /// rate blocks of 136 bytes, permuting after each block is read (1088 bytes);
    /// zero the first 32 bytes of the state and permute once more (the ratchet).
    /// `fill_bytes`, `next_u32` and `next_u64` read this one byte stream (the
    /// integers little-endian), whatever the split of the calls.
    ///
    /// # Security
    /// A 256-bit-capacity sponge: 256-bit security. The ratchet makes the state
    /// after a period independent of that period's output (backtracking
    /// resistance at 1088-byte granularity); bytes already served are wiped from
    /// the buffer at once. The state is zeroized on drop; the type is not `Clone`,
    /// and `Debug` prints no state. Seed with [`from_os_rng`](Self::from_os_rng)
    /// for secrets; [`seed_from_u64`](SeedableRng::seed_from_u64) has only 64 bits
    /// of entropy and is for reproducible simulations.
    ///
    /// ```
    /// use ratchet_rng::{ShakeRng, rand_core::{Rng, SeedableRng}};
    ///
    /// let mut rng = ShakeRng::from_seed([0xde; 136].into());
    /// assert_eq!(rng.next_u32(), 0x4d62_0b8d); // RandomSHAKE's stream
    /// ```
    ShakeRng, FULL_ROUNDS, "SHAKE256"
}

sponge_generator! {
    /// A cryptographically secure generator over TurboSHAKE256 (RFC 9861,
    /// `D = 0x1F`) with a ratchet every 1088 bytes; byte-for-byte the stream of
    /// RandomSHAKE's `randomshake_t` with its default `xof_kind_t::TURBOSHAKE256`.
    ///
    /// # Stream
    /// As [`ShakeRng`], with Keccak-p\[1600, 12\] (12 rounds): absorb the 136-byte
    /// seed, pad with `D = 0x1F`, permute; then repeatedly output 8 rate blocks of
    /// 136 bytes, permuting after each, and ratchet (zero the first 32 bytes of the
    /// state, permute).
    ///
    /// # Security
    /// TurboSHAKE256 keeps the 512-bit capacity with half of Keccak's rounds
    /// (RFC 9861: 256-bit security claim); it is about twice as fast as
    /// [`ShakeRng`]. Ratchet, wiping and seeding are as for [`ShakeRng`].
    ///
    /// ```
    /// use ratchet_rng::{TurboShakeRng, rand_core::{Rng, SeedableRng}};
    ///
    /// let seed: [u8; 136] = core::array::from_fn(|i| i as u8);
    /// let mut rng = TurboShakeRng::from_seed(seed.into());
    /// assert_eq!(rng.next_u64(), 0xbf12_ea5c_6903_58af); // RandomSHAKE's stream
    /// ```
    TurboShakeRng, TURBO_ROUNDS, "TurboSHAKE256"
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rngs::test_util::NotClone;
    use rand_core::Rng;
    use std::format;

    #[test]
    fn generators_are_not_clone() {
        <ShakeRng as NotClone<_>>::not_clone();
        <TurboShakeRng as NotClone<_>>::not_clone();
    }

    #[test]
    fn debug_prints_no_state() {
        let rng = ShakeRng::seed_from_u64(1);
        assert_eq!(format!("{rng:?}"), "ShakeRng { .. }");
        let rng = TurboShakeRng::seed_from_u64(1);
        assert_eq!(format!("{rng:?}"), "TurboShakeRng { .. }");
        assert_eq!(format!("{:?}", SpongeSeed::default()), "SpongeSeed { .. }");
    }

    #[test]
    fn core_drop_zeroizes_state() {
        let mut core = SpongeCore::<12>::from_key(b"key", KeccakBackend::Soft);
        assert!(core.state.iter().any(|&l| l != 0));
        // What `Drop` runs:
        core.state.zeroize();
        assert!(core.state.iter().all(|&l| l == 0));
    }

    #[test]
    fn from_key_of_136_bytes_is_from_seed() {
        let key: [u8; 136] = core::array::from_fn(|i| (i * 7) as u8);
        let mut a = TurboShakeRng::from_key(&key);
        let mut b = TurboShakeRng::from_seed(key.into());
        assert_eq!(a.next_u64(), b.next_u64());
    }
}
