//! [`AesCtrPoolRng`]: AES-256-CTR fast key erasure over a 4 KiB pool.

use rand_core::SeedableRng;
use zeroize::Zeroize;

use super::buffer::{BlockCore, BufferedRng, NicheByte};
use super::saved::{RestoreError, SavedState, parse_own, save_own};
use super::{derive_key, generator_panics_doc, impl_generator};
use crate::aes::{self, POOL_OUTPUT_BYTES};
use crate::backend::AesBackend;

/// TurboSHAKE256 domain byte of [`AesCtrPoolRng::from_key`].
const FROM_KEY_DOMAIN: u8 = 0x41;

/// The refill core: the current AES-256 key. Also the thread-local generator's
/// AES core.
pub(crate) struct AesPoolCore {
    key: [u8; 32],
    backend: AesBackend,
    /// Gives `Option<AesCtrPoolRng>` a niche: see [`NicheByte`].
    #[allow(dead_code, reason = "never read: its invalid values are the niche")]
    niche: NicheByte,
}

impl AesPoolCore {
    /// The core that `from_seed(*seed)` starts from, on the detected backend.
    pub(crate) fn new(seed: &[u8; 32]) -> Self {
        Self {
            key: *seed,
            backend: AesBackend::detect(),
            niche: NicheByte::Zero,
        }
    }
}

impl BlockCore<POOL_OUTPUT_BYTES> for AesPoolCore {
    #[inline]
    fn generate(&mut self, out: &mut [u8; POOL_OUTPUT_BYTES]) {
        aes::fill_pools(self.backend, &mut self.key, core::slice::from_mut(out));
    }

    #[inline]
    fn generate_many(&mut self, out: &mut [[u8; POOL_OUTPUT_BYTES]]) {
        aes::fill_pools(self.backend, &mut self.key, out);
    }
}

impl Drop for AesPoolCore {
    fn drop(&mut self) {
        self.key.zeroize();
    }
}

/// AES-256-CTR fast key erasure over a 4 KiB pool.
///
/// # Stream
/// The 32-byte seed is the first AES-256 key `K`. Each refill computes the 4096-byte
/// AES-256-CTR keystream under `K` with a 128-bit big-endian counter starting at 0
/// (block `j` is `AES-256_K(j)`); bytes 0..32 of it become the next `K`, bytes
/// 32..4096 (4064 bytes) are output. Requests of whole pools are generated straight
/// into the caller's buffer (the same bytes, nothing copied twice).
///
/// # Security
/// Full-round AES-256 (no reduced-round speed trick). Fast key erasure: the key is
/// replaced at every refill and served bytes are wiped from the pool at once, so
/// the generator's memory never reveals output already returned. The portable
/// AES is fixsliced (constant time: no table indexed by a secret); AES hardware is
/// used where the CPU has it. Not `Clone`; `Debug` prints no state; zeroized on
/// drop. The generator holds its 4 KiB pool inline: box it if that is too much
/// stack.
///
/// ```
/// use ratchet_rng::{AesCtrPoolRng, rand_core::{Rng, SeedableRng}};
///
/// let mut rng = AesCtrPoolRng::from_seed([0; 32]);
/// // The first output block is AES-256 of counter block 2 under the zero key
/// // (blocks 0 and 1 became the next key): ce a7 40 3d ...
/// assert_eq!(rng.next_u32(), 0x3d40_a7ce);
/// ```
///
#[doc = generator_panics_doc!()]
pub struct AesCtrPoolRng(BufferedRng<AesPoolCore, POOL_OUTPUT_BYTES>);

impl AesCtrPoolRng {
    /// A generator keyed by key material of any length: the 32-byte seed is the
    /// first 32 bytes of TurboSHAKE256(`key`, D = `0x41`).
    ///
    /// # Security
    /// The stream is exactly as secret as `key`; `from_key(&[])` is a valid, public
    /// stream. Use at least 32 bytes of secret key material for cryptographic use.
    ///
    /// # Panics
    /// Never: any length is accepted, the empty key included. A 32-byte key is
    /// hashed like any other: `from_key(&k)` is *not* `from_seed(k)`; for a
    /// 32-byte slice that is the seed, use `from_seed(slice.try_into()?)` (which
    /// fails unless it has exactly 32 bytes).
    #[must_use]
    pub fn from_key(key: &[u8]) -> Self {
        let mut seed = derive_key(key, FROM_KEY_DOMAIN);
        let rng = Self::from_seed(seed);
        seed.zeroize();
        rng
    }
}

/// The generator id of [`AesCtrPoolRng`] in saved states (and `SeedTree`).
const SAVE_ID: u8 = 6;

impl AesCtrPoolRng {
    /// Saves the exact stream position in the crate's encoding (version 1,
    /// generator id 6; [`guide::derivation`](crate::guide::derivation)): the
    /// next pool's AES-256 key and the unread bytes of the current pool (up to
    /// 4064). The key of the bytes
    /// already served is not in it: saving keeps the fast key erasure.
    ///
    /// # Security
    /// The saved state is a secret: it gives all future output. See
    /// [`SavedState`].
    #[must_use]
    pub fn save(&self) -> SavedState {
        save_own(SAVE_ID, &self.0.core().key, self.0.unread())
    }

    /// Restores a state written by [`save`](Self::save): the stream continues
    /// byte for byte from where it was saved.
    ///
    /// # Errors
    /// [`RestoreError`]: wrong magic or version, a state of another generator, a
    /// wrong length (truncated or trailing bytes), more unread bytes than a pool
    /// holds. Never panics and allocates nothing.
    pub fn restore(bytes: &[u8]) -> Result<Self, RestoreError> {
        let (key, unread) = parse_own(bytes, SAVE_ID, 32, POOL_OUTPUT_BYTES)?;
        let mut seed = [0u8; 32];
        seed.copy_from_slice(key);
        let core = AesPoolCore::new(&seed);
        seed.zeroize();
        Ok(Self(BufferedRng::from_unread(core, unread)))
    }
}

#[cfg(feature = "hazmat")]
impl AesCtrPoolRng {
    /// [`from_seed`](SeedableRng::from_seed) on an explicit backend (the public
    /// form is `from_seed_with_backend`, in `hazmat`).
    pub(crate) fn from_seed_on(seed: [u8; 32], backend: AesBackend) -> Self {
        Self(BufferedRng::new(AesPoolCore {
            key: seed,
            backend,
            niche: NicheByte::Zero,
        }))
    }

    /// [`from_key`](Self::from_key) on an explicit backend.
    pub(crate) fn from_key_on(key: &[u8], backend: AesBackend) -> Self {
        let mut seed = derive_key(key, FROM_KEY_DOMAIN);
        let rng = Self::from_seed_on(seed, backend);
        seed.zeroize();
        rng
    }
}

/// rand_core 0.10 (no feature needed): for rand 0.10.
impl SeedableRng for AesCtrPoolRng {
    type Seed = [u8; 32];

    super::seed_wiping_constructors!();

    /// The 32-byte seed is the first AES-256 key.
    fn from_seed(seed: [u8; 32]) -> Self {
        Self(BufferedRng::new(AesPoolCore::new(&seed)))
    }
}

impl_generator!(AesCtrPoolRng);
