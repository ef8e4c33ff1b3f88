//! ChaCha fast-key-erasure generators in the C2SP chacha8rand layout:
//! [`ChaChaKeyErasureRng`] (8 rounds, Go's `math/rand/v2` ChaCha8),
//! [`ChaCha12KeyErasureRng`] and [`ChaCha20KeyErasureRng`].

use rand_core::SeedableRng;
use zeroize::Zeroize;

use super::buffer::{BlockCore, BufferedRng};
use super::{derive_key, generator_panics_doc, impl_generator};
use crate::backend::ChaChaBackend;
use crate::chacha::{self, KEY_PERIOD_OUTPUT_BYTES};

/// The refill core: the current key; each refill uses it for one key period and
/// replaces it. Also the thread-local generator's ChaCha core.
pub(crate) struct ChaChaCore<const ROUNDS: usize> {
    key: [u32; 8],
    backend: ChaChaBackend,
}

impl<const ROUNDS: usize> ChaChaCore<ROUNDS> {
    /// The core that `from_seed(*seed)` starts from, on `backend`.
    pub(crate) fn new(seed: &[u8; 32], backend: ChaChaBackend) -> Self {
        let mut key = [0u32; 8];
        for (word, bytes) in key.iter_mut().zip(seed.chunks_exact(4)) {
            *word = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        }
        Self { key, backend }
    }
}

impl<const ROUNDS: usize> BlockCore<KEY_PERIOD_OUTPUT_BYTES> for ChaChaCore<ROUNDS> {
    #[inline]
    fn generate(&mut self, out: &mut [u8; KEY_PERIOD_OUTPUT_BYTES]) {
        chacha::key_period::<ROUNDS>(self.backend, &mut self.key, out);
    }

    #[inline]
    fn generate_many(&mut self, out: &mut [[u8; KEY_PERIOD_OUTPUT_BYTES]]) {
        chacha::key_periods::<ROUNDS>(self.backend, &mut self.key, out);
    }
}

impl<const ROUNDS: usize> Drop for ChaChaCore<ROUNDS> {
    fn drop(&mut self) {
        self.key.zeroize();
    }
}

macro_rules! chacha_generator {
    (
        $(#[$doc:meta])*
        $name:ident, $rounds:literal, $domain:literal
    ) => {
        $(#[$doc])*
        ///
        #[doc = generator_panics_doc!()]
        pub struct $name(BufferedRng<ChaChaCore<$rounds>, KEY_PERIOD_OUTPUT_BYTES>);

        impl $name {
            /// A generator keyed by key material of any length: the 32-byte seed is
            #[doc = concat!("the first 32 bytes of TurboSHAKE256(`key`, D = `", stringify!($domain), "`).")]
            ///
            /// For fuzz harnesses and derived streams: the same key gives the same
            /// stream on every platform and version.
            ///
            /// # Security
            /// The stream is exactly as secret as `key`; `from_key(&[])` is a valid,
            /// public stream. Use at least 32 bytes of secret key material for
            /// cryptographic use.
            ///
            /// # Panics
            /// Never: any length is accepted, the empty key included. A 32-byte
            /// key is hashed like any other: `from_key(&k)` is *not*
            /// `from_seed(k)`; for a 32-byte slice that is the seed, use
            /// `from_seed(slice.try_into()?)` (which fails, through
            /// `TryFrom<&[u8]> for [u8; 32]`, unless it has exactly 32 bytes).
            #[must_use]
            pub fn from_key(key: &[u8]) -> Self {
                let mut seed = derive_key(key, $domain);
                let rng = Self::from_seed(seed);
                seed.zeroize();
                rng
            }
        }

        #[cfg(feature = "hazmat")]
        impl $name {
            /// [`from_seed`](SeedableRng::from_seed) on the named ChaCha backend
            /// (see [`hazmat::ChaCha`](crate::hazmat::ChaCha)); `None` if this CPU
            /// or build lacks it, or if `backend` names no backend at all (any
            /// string is accepted; nothing panics). The stream is the same on every
            /// backend.
            pub fn from_seed_with_backend(seed: [u8; 32], backend: &str) -> Option<Self> {
                let backend = crate::hazmat::ChaCha::by_name(backend)?.0;
                Some(Self(BufferedRng::new(ChaChaCore::new(&seed, backend))))
            }

            /// [`from_key`](Self::from_key) on the named ChaCha backend; `None` if
            /// this CPU or build lacks it, or for an unknown name.
            pub fn from_key_with_backend(key: &[u8], backend: &str) -> Option<Self> {
                let mut seed = derive_key(key, $domain);
                let rng = Self::from_seed_with_backend(seed, backend);
                seed.zeroize();
                rng
            }
        }

        impl SeedableRng for $name {
            type Seed = [u8; 32];

            super::seed_wiping_constructors!();

            /// The 32-byte seed is the first key (8 little-endian words).
            fn from_seed(seed: [u8; 32]) -> Self {
                Self(BufferedRng::new(ChaChaCore::new(&seed, ChaChaBackend::detect())))
            }
        }

        impl_generator!($name);
    };
}

chacha_generator! {
    /// ChaCha8 fast key erasure: byte-for-byte the stream of Go's `math/rand/v2`
    /// `NewChaCha8(seed)` (the C2SP chacha8rand generator).
    ///
    /// # Stream
    /// The 32-byte seed is the key (8 little-endian words). A key period computes
    /// 4 groups of 4 ChaCha8 blocks, with block counters `c, c+1, c+2, c+3` for
    /// `c = 0, 4, 8, 12` (nonce words zero); the feed-forward adds only the key
    /// words; each group's 4 blocks are interleaved word by word (output word
    /// `4 * w + block`). Of the 1024 bytes, the first 992 are output and the last 32
    /// become the next key; the counter starts again at 0.
    ///
    /// # Security
    /// Fast key erasure: unlike Go, the key is replaced as soon as a period is
    /// computed, and every byte is wiped from the buffer as it is served, so the
    /// generator's memory never reveals output already returned (backtracking
    /// resistance). ChaCha8 has a smaller margin than ChaCha12/20 (see
    /// [`ChaCha12KeyErasureRng`], [`ChaCha20KeyErasureRng`]); the best known attacks
    /// reach 7 rounds. Not `Clone`; `Debug` prints no state; zeroized on drop.
    ///
    /// ```
    /// use ratchet_rng::{ChaChaKeyErasureRng, rand_core::{Rng, SeedableRng}};
    ///
    /// let seed: [u8; 32] = core::array::from_fn(|i| i as u8);
    /// let mut rng = ChaChaKeyErasureRng::from_seed(seed);
    /// assert_eq!(rng.next_u64(), 0xadfd_a211_2e41_9cdb); // Go's ChaCha8 Uint64()
    /// ```
    ChaChaKeyErasureRng, 8, 0x08
}

chacha_generator! {
    /// The chacha8rand layout with ChaCha12: more margin, about 1.4× the time of
    /// [`ChaChaKeyErasureRng`].
    ///
    /// # Stream
    /// As [`ChaChaKeyErasureRng`] with 12 rounds: 992 bytes out of each 1024-byte
    /// key period, the last 32 bytes becoming the next key.
    ///
    /// # Security
    /// As [`ChaChaKeyErasureRng`]; 12 rounds is the margin `rand`'s `StdRng` uses.
    ChaCha12KeyErasureRng, 12, 0x0C
}

chacha_generator! {
    /// The chacha8rand layout with the full 20 ChaCha rounds (RFC 8439 strength).
    ///
    /// # Stream
    /// As [`ChaChaKeyErasureRng`] with 20 rounds: 992 bytes out of each 1024-byte
    /// key period, the last 32 bytes becoming the next key.
    ///
    /// # Security
    /// As [`ChaChaKeyErasureRng`], with the most margin.
    ChaCha20KeyErasureRng, 20, 0x14
}
