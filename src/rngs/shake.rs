//! The sponge generators [`ShakeRng`] (SHAKE256) and [`TurboShakeRng`]
//! (TurboSHAKE256), stream-compatible with the C++ library RandomSHAKE.

use core::fmt;

use rand_core::SeedableRng;
use zeroize::Zeroize;

use super::buffer::{BlockCore, BufferedRng};
use super::saved::{RestoreError, SavedState, parse_own, save_own};
use super::{generator_panics_doc, impl_generator};
use crate::backend::KeccakBackend;
use crate::keccak::{self, FULL_ROUNDS, LANES, RATCHET_PERIOD_BYTES, RATE_BYTES, Sponge};

/// Bytes in a [`SpongeSeed`]: one rate block of SHAKE256 / TurboSHAKE256.
pub const SPONGE_SEED_BYTES: usize = RATE_BYTES;

/// Bytes of a Keccak state in a saved state: 25 lanes, little-endian.
const STATE_BYTES: usize = LANES * 8;

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
    /// In the form the backend keeps it ([`keccak::keep`]).
    state: [u64; LANES],
    backend: KeccakBackend,
}

impl<const ROUNDS: usize> SpongeCore<ROUNDS> {
    /// Absorbs `key`, pads with the domain byte and permutes: the state then holds
    /// the first output block of SHAKE256(key) / TurboSHAKE256(key, 0x1F).
    fn from_key(key: &[u8], backend: KeccakBackend) -> Self {
        let mut sponge = Sponge::<ROUNDS, RATE_BYTES>::new();
        // The backend's permutation, not the specification's: faster, and the
        // specification's copies the state for pi (3 KB of stack on a 32-bit core).
        let permute = |state: &mut [u64; LANES]| keccak::permute::<ROUNDS>(backend, state);
        sponge.absorb_with(key, permute);
        sponge.finalize_with(DOMAIN, permute);
        let mut state = sponge.take_squeezing_state();
        keccak::keep(backend, &mut state);
        Self { state, backend }
    }
}

impl<const ROUNDS: usize> BlockCore<RATCHET_PERIOD_BYTES> for SpongeCore<ROUNDS> {
    #[inline]
    fn generate(&mut self, out: &mut [u8; RATCHET_PERIOD_BYTES]) {
        keccak::squeeze_period_kept::<ROUNDS>(self.backend, &mut self.state, out);
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
        $name:ident, $rounds:expr, $xof:literal, $id:literal
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
            #[inline(always)]
            pub fn from_key(key: &[u8]) -> Self {
                Self(BufferedRng::new(SpongeCore::from_key(
                    key,
                    KeccakBackend::detect(),
                )))
            }
        }

        #[cfg(feature = "hazmat")]
        impl $name {
            /// [`from_key`](Self::from_key) on an explicit backend (the public
            /// form is `from_key_with_backend`, in `hazmat`).
            pub(crate) fn from_key_on(key: &[u8], backend: KeccakBackend) -> Self {
                Self(BufferedRng::new(SpongeCore::from_key(key, backend)))
            }

            /// [`from_seed`](SeedableRng::from_seed) on an explicit backend.
            pub(crate) fn from_seed_on(seed: SpongeSeed, backend: KeccakBackend) -> Self {
                Self::from_key_on(&seed.0, backend)
            }
        }

        impl $name {
            /// Saves the exact stream position in the crate's encoding (version 1,
            #[doc = concat!("generator id ", stringify!($id), "; [`guide::derivation`](crate::guide::derivation)):")]
            /// the Keccak state that makes the next 1088-byte period (25 lanes,
            /// little-endian) and the unread bytes of the current one (up to 1088).
            /// The state of the bytes already served is not in it: the ratchet's
            /// backtracking resistance is kept.
            ///
            /// # Security
            /// The saved state is a secret: it gives all future output. See
            /// [`SavedState`].
            #[must_use]
            pub fn save(&self) -> SavedState {
                let core = self.0.core();
                let mut lanes = core.state;
                keccak::unkeep(core.backend, &mut lanes);
                let mut state = [0u8; STATE_BYTES];
                for (bytes, lane) in state.chunks_exact_mut(8).zip(lanes) {
                    bytes.copy_from_slice(&lane.to_le_bytes());
                }
                lanes.zeroize();
                let saved = save_own($id, &state, self.0.unread());
                state.zeroize();
                saved
            }

            /// Restores a state written by [`save`](Self::save): the stream
            /// continues byte for byte from where it was saved.
            ///
            /// # Errors
            /// [`RestoreError`]: wrong magic or version, a state of another
            /// generator, a wrong length (truncated or trailing bytes), more unread
            /// bytes than a period holds. Any 200 bytes are a Keccak state. Never
            /// panics and allocates nothing.
            pub fn restore(bytes: &[u8]) -> Result<Self, RestoreError> {
                let (state, unread) = parse_own(bytes, $id, STATE_BYTES, RATCHET_PERIOD_BYTES)?;
                let mut core = SpongeCore {
                    state: [0; LANES],
                    backend: KeccakBackend::detect(),
                };
                for (lane, bytes) in core.state.iter_mut().zip(state.chunks_exact(8)) {
                    let mut le = [0u8; 8];
                    le.copy_from_slice(bytes);
                    *lane = u64::from_le_bytes(le);
                    le.zeroize();
                }
                keccak::keep(core.backend, &mut core.state);
                Ok(Self(BufferedRng::from_unread(core, unread)))
            }
        }

        /// rand_core 0.10 (no feature needed): for rand 0.10.
        impl SeedableRng for $name {
            type Seed = SpongeSeed;

            super::seed_wiping_constructors!();

            /// Absorbs the 136-byte seed (one rate block) and pads.
            // Inlined, as `from_key` is, so that the 1.3 KB generator is built
            // where the caller keeps it, not built here and copied there.
            #[inline(always)]
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
    /// and `Debug` prints no state. Seed with `from_os_rng` (feature `sys_rng`)
    /// for secrets; [`seed_from_u64`](SeedableRng::seed_from_u64) has only 64 bits
    /// of entropy and is for reproducible simulations.
    ///
    /// ```
    /// use ratchet_rng::{ShakeRng, rand_core::{Rng, SeedableRng}};
    ///
    /// let mut rng = ShakeRng::from_seed([0xde; 136].into());
    /// assert_eq!(rng.next_u32(), 0x4d62_0b8d); // RandomSHAKE's stream
    /// ```
    ShakeRng, FULL_ROUNDS, "SHAKE256", 2
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
    TurboShakeRng, TURBO_ROUNDS, "TurboSHAKE256", 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::Rng;

    #[test]
    fn core_drop_zeroizes_state() {
        let mut core = SpongeCore::<12>::from_key(b"key", KeccakBackend::Soft);
        assert!(core.state.iter().any(|&l| l != 0));
        // What `Drop` runs:
        core.state.zeroize();
        assert!(core.state.iter().all(|&l| l == 0));
    }

    /// `from_key` absorbs with the backend's permutation: the state it makes is
    /// the specification sponge's, for keys of every length around the rate, on
    /// every backend.
    #[test]
    fn from_key_absorbs_as_the_specification_sponge() {
        let key: [u8; 3 * RATE_BYTES + 1] = core::array::from_fn(|i| (i * 13 + 5) as u8);
        let mut backends = 0;
        for backend in KeccakBackend::available() {
            backends += 1;
            // One under Miri, which takes a second per permutation or so.
            let lens: &[usize] = if cfg!(miri) {
                &[137]
            } else {
                &[
                    0,
                    1,
                    7,
                    8,
                    9,
                    135,
                    136,
                    137,
                    271,
                    272,
                    273,
                    3 * RATE_BYTES + 1,
                ]
            };
            for &len in lens {
                let mut spec = Sponge::<12, RATE_BYTES>::new();
                spec.absorb(&key[..len]);
                spec.finalize(DOMAIN);
                let mut core = SpongeCore::<12>::from_key(&key[..len], backend);
                keccak::unkeep(backend, &mut core.state);
                assert_eq!(core.state, spec.take_squeezing_state(), "{len} bytes");
                let mut spec = Sponge::<FULL_ROUNDS, RATE_BYTES>::new();
                spec.absorb(&key[..len]);
                spec.finalize(DOMAIN);
                let mut core = SpongeCore::<FULL_ROUNDS>::from_key(&key[..len], backend);
                keccak::unkeep(backend, &mut core.state);
                assert_eq!(core.state, spec.take_squeezing_state(), "{len} bytes");
            }
        }
        assert!(backends >= 1);
    }

    /// A generator keeps its state in its backend's form ([`keccak::keep`]):
    /// saved on any backend, it restores (on the detected one) to the same
    /// stream, and every backend gives the same stream.
    #[test]
    #[cfg_attr(
        miri,
        ignore = "minutes under Miri, where only the soft backend runs (u64 lanes, kept as they are)"
    )]
    fn save_and_restore_across_backend_forms() {
        // Past a ratchet (1088 bytes) before the save and after it.
        let mut first = [0u8; 1100];
        let mut rest = [0u8; 1100];
        let mut expected = TurboShakeRng::from_key(b"kept");
        expected.fill_bytes(&mut first);
        expected.fill_bytes(&mut rest);
        let mut backends = 0;
        for backend in KeccakBackend::available() {
            backends += 1;
            let mut rng = TurboShakeRng(BufferedRng::new(SpongeCore::from_key(b"kept", backend)));
            let mut out = [0u8; 1100];
            rng.fill_bytes(&mut out);
            assert_eq!(out, first, "{backend:?}");
            let mut restored = TurboShakeRng::restore(rng.save().as_bytes()).unwrap();
            let (mut a, mut b) = ([0u8; 1100], [0u8; 1100]);
            rng.fill_bytes(&mut a);
            restored.fill_bytes(&mut b);
            assert_eq!(a, rest, "{backend:?}");
            assert_eq!(b, rest, "{backend:?}");
        }
        assert!(backends >= 1);
    }

    #[test]
    fn from_key_of_136_bytes_is_from_seed() {
        let key: [u8; 136] = core::array::from_fn(|i| (i * 7) as u8);
        let mut a = TurboShakeRng::from_key(&key);
        let mut b = TurboShakeRng::from_seed(key.into());
        assert_eq!(a.next_u64(), b.next_u64());
    }
}
