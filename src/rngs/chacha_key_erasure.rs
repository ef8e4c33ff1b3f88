//! ChaCha fast-key-erasure generators in the C2SP chacha8rand layout:
//! [`ChaChaKeyErasureRng`] (8 rounds, Go's `math/rand/v2` ChaCha8),
//! [`ChaCha12KeyErasureRng`] and [`ChaCha20KeyErasureRng`].

use rand_core::SeedableRng;
use zeroize::Zeroize;

use super::buffer::{BlockCore, BufferedRng, NicheByte};
use super::saved::{RestoreError, SavedState, parse_own, save_own};
use super::{derive_key, generator_panics_doc, impl_generator};
use crate::backend::ChaChaBackend;
use crate::chacha::{self, KEY_PERIOD_OUTPUT_BYTES};

/// The refill core: the current key; each refill uses it for one key period and
/// replaces it. Also the thread-local generator's ChaCha core.
pub(crate) struct ChaChaCore<const ROUNDS: usize> {
    key: [u32; 8],
    backend: ChaChaBackend,
    /// Gives `Option` of the generators a niche: see [`NicheByte`].
    #[allow(dead_code, reason = "never read: its invalid values are the niche")]
    niche: NicheByte,
}

impl<const ROUNDS: usize> ChaChaCore<ROUNDS> {
    /// The core that `from_seed(*seed)` starts from, on `backend`.
    pub(crate) fn new(seed: &[u8; 32], backend: ChaChaBackend) -> Self {
        let mut key = [0u32; 8];
        for (word, bytes) in key.iter_mut().zip(seed.chunks_exact(4)) {
            *word = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        }
        Self {
            key,
            backend,
            niche: NicheByte::Zero,
        }
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

/// The core of [`ChaChaKeyErasureRng`]: the ChaCha8 core, plus what Go's
/// `MarshalBinary` encoding needs and the plain core erases: the key of the
/// period in the buffer.
///
/// Go's encoding is `(key of the current period, words used in it, readbuf)`; the
/// 992 bytes of a period cannot be rebuilt without its key, so this core keeps it
/// until the next refill (as Go does). The generators' memory therefore reveals
/// at most the current period (992 bytes), never an earlier one.
pub(crate) struct GoChaChaCore {
    chacha: ChaChaCore<8>,
    /// The key the buffered period was generated from (valid if `in_period`).
    period_key: [u32; 8],
    /// Whether the buffer holds a period generated from `period_key`; false until
    /// the first refill (a fresh generator, or one restored at word 0).
    in_period: bool,
    /// In 8-byte words (at most 124): buffer bytes before word `readbuf_words`
    /// that are still unread came from Go's `readbuf` on restore (arbitrary
    /// bytes, not the period's words); 0 after every refill.
    ///
    /// A byte, not a `usize`: the core's words (the two keys) are then 64
    /// bytes, which a Cortex-M build moves into place with a few register
    /// loads and stores when a generator is constructed; 68 bytes were a
    /// `memcpy` call, which linked `memcpy` itself (about 0.9 KB of flash).
    readbuf_words: u8,
}

impl GoChaChaCore {
    /// The core that `from_seed(*seed)` starts from, on `backend`.
    pub(crate) fn new(seed: &[u8; 32], backend: ChaChaBackend) -> Self {
        Self {
            chacha: ChaChaCore::new(seed, backend),
            period_key: [0; 8],
            in_period: false,
            readbuf_words: 0,
        }
    }
}

impl BlockCore<KEY_PERIOD_OUTPUT_BYTES> for GoChaChaCore {
    #[inline]
    fn generate(&mut self, out: &mut [u8; KEY_PERIOD_OUTPUT_BYTES]) {
        self.period_key = self.chacha.key;
        self.in_period = true;
        self.readbuf_words = 0;
        self.chacha.generate(out);
    }

    #[inline]
    fn generate_many(&mut self, out: &mut [[u8; KEY_PERIOD_OUTPUT_BYTES]]) {
        // All but the last period in one kernel call; the last one records its key
        // (Go's state after these bytes is the last period, fully used).
        if let Some((last, rest)) = out.split_last_mut() {
            if !rest.is_empty() {
                self.chacha.generate_many(rest);
            }
            self.generate(last);
        }
    }
}

impl Drop for GoChaChaCore {
    fn drop(&mut self) {
        self.period_key.zeroize();
    }
}

macro_rules! chacha_generator {
    (
        $(#[$doc:meta])*
        $name:ident, $core:ty, $domain:literal
    ) => {
        $(#[$doc])*
        ///
        #[doc = generator_panics_doc!()]
        pub struct $name(BufferedRng<$core, KEY_PERIOD_OUTPUT_BYTES>);

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
            /// [`from_seed`](SeedableRng::from_seed) on an explicit backend (the
            /// public form is `from_seed_with_backend`, in `hazmat`).
            pub(crate) fn from_seed_on(seed: [u8; 32], backend: ChaChaBackend) -> Self {
                Self(BufferedRng::new(<$core>::new(&seed, backend)))
            }

            /// [`from_key`](Self::from_key) on an explicit backend.
            pub(crate) fn from_key_on(key: &[u8], backend: ChaChaBackend) -> Self {
                let mut seed = derive_key(key, $domain);
                let rng = Self::from_seed_on(seed, backend);
                seed.zeroize();
                rng
            }
        }

        /// rand_core 0.10 (no feature needed): for rand 0.10.
        impl SeedableRng for $name {
            type Seed = [u8; 32];

            super::seed_wiping_constructors!();

            /// The 32-byte seed is the first key (8 little-endian words).
            fn from_seed(seed: [u8; 32]) -> Self {
                Self(BufferedRng::new(<$core>::new(&seed, ChaChaBackend::detect())))
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
    /// Fast key erasure per key period: the next key replaces the current one at
    /// each refill, and every byte is wiped from the buffer as it is served. So
    /// that [`save`](Self::save) can write Go's encoding, the generator keeps the
    /// key of the current 992-byte period until the next refill, as Go does: its
    /// memory (or a saved state) reveals that period, the bytes of it already
    /// served included, but no earlier period (backtracking resistance at period
    /// granularity). [`ChaCha12KeyErasureRng`] and [`ChaCha20KeyErasureRng`] erase
    /// each key as soon as its period is computed. ChaCha8 has a smaller margin than ChaCha12/20 (see
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
    ChaChaKeyErasureRng, GoChaChaCore, 0x08
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
    ChaCha12KeyErasureRng, ChaChaCore<12>, 0x0C
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
    ChaCha20KeyErasureRng, ChaChaCore<20>, 0x14
}

/// Go's `ChaCha8` encoding: the optional `readbuf:` part, then the
/// `chacha8rand` state.
const GO_READBUF_PREFIX: &[u8; 8] = b"readbuf:";
const GO_STATE_MAGIC: &[u8; 8] = b"chacha8:";
/// Bytes of Go's `chacha8rand` state: magic, used-word count, key.
const GO_STATE_BYTES: usize = 48;
/// The most bytes Go's `readbuf` holds.
const GO_READBUF_MAX_BYTES: usize = 8;
/// Output words in a key period (992 / 8); Go's largest used-word count.
const GO_PERIOD_WORDS: u64 = (KEY_PERIOD_OUTPUT_BYTES / 8) as u64;

impl ChaChaKeyErasureRng {
    /// Saves the exact stream position in Go's `math/rand/v2` encoding: the bytes
    /// `ChaCha8.MarshalBinary` returns for a Go generator that has produced the
    /// same bytes through `Read` (`chacha8:`, the big-endian count of 8-byte
    /// words used in the current key period, the period's key; preceded by
    /// `readbuf:`, a length byte and the unread rest of a partly read word when
    /// the position is not a multiple of 8 bytes). At most 65 bytes.
    ///
    /// Go's `UnmarshalBinary` continues from it byte for byte through `Read`
    /// (Go's `Uint64` skips a pending `readbuf`; ours reads the byte stream), and
    /// so does [`restore`](Self::restore). Layout:
    /// [`guide::derivation`](crate::guide::derivation).
    ///
    /// # Security
    /// The saved state is a secret: it gives all future output, and (Go's
    /// encoding holds the current period's key) the whole current 992-byte period,
    /// the bytes already served included. See [`SavedState`].
    #[must_use]
    pub fn save(&self) -> SavedState {
        let (buf, pos) = self.0.buffer_and_pos();
        let core = self.0.core();
        let (key, used, readbuf) = if core.in_period {
            // Words of the period consumed, whole or in part; the unread rest of a
            // partly read word (or Go's restored readbuf) is the readbuf.
            let used = pos.div_ceil(8).max(usize::from(core.readbuf_words));
            (&core.period_key, used, &buf[pos..8 * used])
        } else {
            // Nothing generated from `key` yet: only restored readbuf bytes, if
            // any, at the end of the buffer.
            (&core.chacha.key, 0, &buf[pos..])
        };
        let mut saved = SavedState::new();
        if !readbuf.is_empty() {
            debug_assert!(readbuf.len() <= GO_READBUF_MAX_BYTES);
            saved.push(GO_READBUF_PREFIX);
            saved.push(&[readbuf.len() as u8]);
            saved.push(readbuf);
        }
        saved.push(GO_STATE_MAGIC);
        saved.push(&(used as u64).to_be_bytes());
        for word in key {
            saved.push(&word.to_le_bytes());
        }
        saved
    }

    /// Restores a state saved by [`save`](Self::save) or by Go's
    /// `ChaCha8.MarshalBinary`: accepts exactly what Go's `UnmarshalBinary`
    /// accepts (into a new `ChaCha8`), and the stream continues as Go's `Read`
    /// would, byte for byte.
    ///
    /// # Errors
    /// [`RestoreError`] for what Go rejects: a truncated `readbuf:` part
    /// ([`BadReadBuffer`](RestoreError::BadReadBuffer)), a state without the
    /// `chacha8:` magic ([`BadMagic`](RestoreError::BadMagic)) or not exactly 48
    /// bytes ([`WrongLength`](RestoreError::WrongLength)), a used-word count above
    /// 124 ([`BadPosition`](RestoreError::BadPosition)); and a `readbuf` of more
    /// than 8 bytes, which makes Go panic
    /// ([`BadReadBuffer`](RestoreError::BadReadBuffer)). Never panics, allocates
    /// nothing, and reads the input once.
    pub fn restore(bytes: &[u8]) -> Result<Self, RestoreError> {
        let mut rest = bytes;
        let mut readbuf: &[u8] = &[];
        if let Some(after) = rest.strip_prefix(&GO_READBUF_PREFIX[..]) {
            let (&len, after) = after.split_first().ok_or(RestoreError::BadReadBuffer)?;
            let len = usize::from(len);
            if after.len() < len {
                return Err(RestoreError::BadReadBuffer);
            }
            if len > GO_READBUF_MAX_BYTES {
                return Err(RestoreError::BadReadBuffer);
            }
            (readbuf, rest) = after.split_at(len);
        }
        let n = rest.len().min(GO_STATE_MAGIC.len());
        if rest[..n] != GO_STATE_MAGIC[..n] {
            return Err(RestoreError::BadMagic);
        }
        if rest.len() != GO_STATE_BYTES {
            return Err(RestoreError::WrongLength);
        }
        let mut used = [0u8; 8];
        used.copy_from_slice(&rest[8..16]);
        let used = u64::from_be_bytes(used);
        if used > GO_PERIOD_WORDS {
            return Err(RestoreError::BadPosition);
        }
        // `used <= 124`: the conversions (here, and to `u8` below) and
        // `8 * used <= 992` are exact.
        let used_bytes = 8 * used as usize;
        let mut seed = [0u8; 32];
        seed.copy_from_slice(&rest[16..48]);
        let core = GoChaChaCore::new(&seed, ChaChaBackend::detect());
        seed.zeroize();
        let r = readbuf.len();
        let rng = BufferedRng::restored(core, |core, buf| {
            if used_bytes == 0 {
                // Go's next Read: the readbuf, then the period of `key` from its
                // first word; the period is generated at the next refill.
                buf[KEY_PERIOD_OUTPUT_BYTES - r..].copy_from_slice(readbuf);
                KEY_PERIOD_OUTPUT_BYTES - r
            } else {
                // The readbuf, then the period's words from `used`: the readbuf
                // takes the place of the bytes just before (already used).
                core.generate(buf);
                core.readbuf_words = used as u8;
                buf[used_bytes - r..used_bytes].copy_from_slice(readbuf);
                used_bytes - r
            }
        });
        Ok(Self(rng))
    }
}

macro_rules! own_chacha_save_restore {
    ($name:ident, $id:literal) => {
        impl $name {
            /// Saves the exact stream position in the crate's encoding (version 1,
            #[doc = concat!("generator id ", stringify!($id), "; [`guide::derivation`](crate::guide::derivation)):")]
            /// the next key period's key and the unread bytes of the current one (up
            /// to 992). The key of the bytes already served is not in it: saving
            /// keeps the fast key erasure.
            ///
            /// # Security
            /// The saved state is a secret: it gives all future output. See
            /// [`SavedState`].
            #[must_use]
            pub fn save(&self) -> SavedState {
                let mut key = [0u8; 32];
                for (bytes, word) in key.chunks_exact_mut(4).zip(self.0.core().key) {
                    bytes.copy_from_slice(&word.to_le_bytes());
                }
                let saved = save_own($id, &key, self.0.unread());
                key.zeroize();
                saved
            }

            /// Restores a state written by [`save`](Self::save): the stream
            /// continues byte for byte from where it was saved.
            ///
            /// # Errors
            /// [`RestoreError`]: wrong magic or version, a state of another
            /// generator, a wrong length (truncated or trailing bytes), more unread
            /// bytes than a period holds. Never panics and allocates nothing.
            pub fn restore(bytes: &[u8]) -> Result<Self, RestoreError> {
                let (key, unread) = parse_own(bytes, $id, 32, KEY_PERIOD_OUTPUT_BYTES)?;
                let mut seed = [0u8; 32];
                seed.copy_from_slice(key);
                let core = ChaChaCore::new(&seed, ChaChaBackend::detect());
                seed.zeroize();
                Ok(Self(BufferedRng::from_unread(core, unread)))
            }
        }
    };
}

own_chacha_save_restore!(ChaCha12KeyErasureRng, 4);
own_chacha_save_restore!(ChaCha20KeyErasureRng, 5);
