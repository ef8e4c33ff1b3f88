//! `Serialize` and `Deserialize` (feature `serde`) for every seeded generator and
//! for [`SavedState`]: the bytes of `save()`, as one serde byte string.
//!
//! - The bytes carry their own tag and version: the crate's encoding starts with
//!   `ratchet:`, its version byte and the generator id; `ChaChaKeyErasureRng`'s
//!   is Go's, tagged by its `chacha8:` (or `readbuf:`) magic. So the serialized
//!   form is the saved form, and it is as stable as `save()` (the value-stability
//!   policy), in every serde format.
//! - Compact: only the saved bytes (44 to 4108), never `SavedState`'s inline
//!   buffer. Binary formats (bincode, postcard, CBOR) write a byte string; JSON
//!   writes an array of numbers.
//! - Deserializing accepts a byte string, borrowed or not (binary formats), or a
//!   sequence of `u8` (JSON), collected into a stack buffer of
//!   [`SAVED_STATE_MAX_BYTES`](crate::SAVED_STATE_MAX_BYTES): `no_std`, no
//!   allocation, and a longer sequence is refused at its first byte too many.
//!   Then `restore` judges the bytes; its [`RestoreError`] becomes the format's
//!   error (`de::Error::custom`). Nothing panics.
//!
//! The warnings (the form holds the key; a deserialized copy repeats the stream)
//! are in [`guide::derivation`](crate::guide::derivation#23-serde-the-same-bytes).

use core::fmt;

use serde::de::{self, Deserialize, Deserializer, SeqAccess, Visitor};
use serde::ser::{Serialize, Serializer};

use crate::rngs::saved::{HEADER_BYTES, MAGIC, RestoreError, SavedState, VERSION};
use crate::{
    AesCtrPoolRng, ChaCha12KeyErasureRng, ChaCha20KeyErasureRng, ChaChaKeyErasureRng, ShakeRng,
    TurboShakeRng,
};

/// Collects a saved state's bytes, unchecked: from a byte string (any of serde's
/// three forms) or from a sequence of at most `SAVED_STATE_MAX_BYTES` `u8`.
struct SavedBytes;

/// The error for bytes longer than any saved state.
fn too_long<E: de::Error>() -> E {
    E::custom(RestoreError::WrongLength)
}

impl<'de> Visitor<'de> for SavedBytes {
    type Value = SavedState;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "a saved generator state: bytes, or a sequence of at most {} u8",
            crate::SAVED_STATE_MAX_BYTES
        )
    }

    fn visit_bytes<E: de::Error>(self, bytes: &[u8]) -> Result<SavedState, E> {
        SavedState::from_slice(bytes).ok_or_else(too_long)
    }

    fn visit_borrowed_bytes<E: de::Error>(self, bytes: &'de [u8]) -> Result<SavedState, E> {
        self.visit_bytes(bytes)
    }

    // `visit_byte_buf` (an owned `Vec<u8>`) exists only with serde's `alloc`
    // feature, which this crate does not enable; where another crate does, its
    // default forwards to `visit_bytes` above.

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<SavedState, A::Error> {
        let mut saved = SavedState::new();
        while let Some(byte) = seq.next_element::<u8>()? {
            if !saved.try_push_byte(byte) {
                return Err(too_long());
            }
        }
        Ok(saved)
    }
}

/// Whether some generator's `restore` accepts `bytes`: the crate's encoding goes
/// to the generator its id names, anything else is read as Go's ChaCha8 encoding
/// (the errors are then those `restore` gives).
fn check_restorable(bytes: &[u8]) -> Result<(), RestoreError> {
    if !bytes.starts_with(MAGIC) {
        return ChaChaKeyErasureRng::restore(bytes).map(drop);
    }
    if bytes.len() < HEADER_BYTES {
        // The magic, then a truncated header.
        return Err(RestoreError::WrongLength);
    }
    // Byte 8 is the version, byte 9 the generator id (SeedTree's ids,
    // docs/DERIVATION.md section 2.2); `restore` checks the version first.
    match bytes[9] {
        1 => TurboShakeRng::restore(bytes).map(drop),
        2 => ShakeRng::restore(bytes).map(drop),
        4 => ChaCha12KeyErasureRng::restore(bytes).map(drop),
        5 => ChaCha20KeyErasureRng::restore(bytes).map(drop),
        6 => AesCtrPoolRng::restore(bytes).map(drop),
        _ if bytes[8] != VERSION => Err(RestoreError::UnsupportedVersion(bytes[8])),
        id => Err(RestoreError::WrongGenerator(id)),
    }
}

/// The bytes of [`as_bytes`](SavedState::as_bytes), as one byte string.
///
/// # Security
/// The serialized form is as secret as the state:
/// [`guide::derivation`](crate::guide::derivation#23-serde-the-same-bytes).
#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
impl Serialize for SavedState {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(self.as_bytes())
    }
}

/// A byte string or a sequence of `u8` that some generator's `restore` accepts.
///
/// # Errors
/// The format's error: for another type, for more than
/// [`SAVED_STATE_MAX_BYTES`](crate::SAVED_STATE_MAX_BYTES) bytes, and with the
/// [`RestoreError`]'s message for bytes no generator restores. Never panics;
/// allocates nothing.
#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
impl<'de> Deserialize<'de> for SavedState {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let saved = deserializer.deserialize_bytes(SavedBytes)?;
        check_restorable(saved.as_bytes()).map_err(de::Error::custom)?;
        Ok(saved)
    }
}

/// `Serialize` and `Deserialize` for each seeded generator, through `save()` and
/// `restore()`.
macro_rules! impl_serde {
    ($($name:ident),* $(,)?) => {$(
        /// The bytes of [`save`](Self::save), as one byte string (an array of
        /// numbers in JSON): deserializing continues the stream exactly.
        ///
        /// # Security
        /// The serialized form holds the key, and a deserialized copy repeats
        /// the original's stream:
        /// [`guide::derivation`](crate::guide::derivation#23-serde-the-same-bytes).
        #[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                self.save().serialize(serializer)
            }
        }

        /// [`restore`](Self::restore) of a byte string or a sequence of `u8`: the
        /// stream continues where the serialized generator was.
        ///
        /// # Errors
        /// The format's error: for another type, for more than
        /// [`SAVED_STATE_MAX_BYTES`](crate::SAVED_STATE_MAX_BYTES) bytes, and with
        /// the [`RestoreError`]'s message for what `restore` refuses (another
        /// generator's state included). Never panics; allocates nothing.
        #[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let saved = deserializer.deserialize_bytes(SavedBytes)?;
                Self::restore(saved.as_bytes()).map_err(de::Error::custom)
            }
        }
    )*};
}

impl_serde!(
    TurboShakeRng,
    ShakeRng,
    ChaChaKeyErasureRng,
    ChaCha12KeyErasureRng,
    ChaCha20KeyErasureRng,
    AesCtrPoolRng,
);
