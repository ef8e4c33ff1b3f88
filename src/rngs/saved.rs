//! Saved generator states: [`SavedState`] (what `save()` returns) and
//! [`RestoreError`] (why `restore()` refused its input), and the crate's own
//! versioned encoding, used by every generator but `ChaChaKeyErasureRng` (which
//! uses Go's `ChaCha8.MarshalBinary` encoding, in `chacha_key_erasure.rs`).
//!
//! # The crate's encoding, version 1 (docs/DERIVATION.md, section 2)
//! ```text
//! bytes 0..8    "ratchet:"                      magic
//! byte  8       0x01                            version
//! byte  9       generator id (SeedTree's ids)   1 TurboShake, 2 Shake, 4 ChaCha12,
//!                                               5 ChaCha20, 6 AES pool
//! bytes 10..12  U, little-endian u16            unread buffered bytes, U <= N
//! then S bytes                                  the core: what makes the next refill
//! then U bytes                                  the unread bytes, next in the stream
//! ```
//! The total length is exactly `12 + S + U`. The core is the state *after* the
//! buffered refill (the next key or Keccak state), never the key of bytes already
//! served: saving keeps the generators' fast key erasure.

use core::fmt;

use zeroize::Zeroize;

/// Bytes of the largest saved state: the AES pool's (a 12-byte header, the 32-byte
/// key and up to 4064 unread bytes).
pub const SAVED_STATE_MAX_BYTES: usize = HEADER_BYTES + 32 + crate::aes::POOL_OUTPUT_BYTES;

/// The magic of the crate's own encoding.
pub(crate) const MAGIC: &[u8; 8] = b"ratchet:";
/// The version of the crate's own encoding.
pub(crate) const VERSION: u8 = 1;
/// Bytes before the core state: magic, version, generator id, `U`.
pub(crate) const HEADER_BYTES: usize = 12;

/// A generator's saved state: the exact position in its stream, to be given back
/// to the same generator type's `restore`.
///
/// The bytes are read with [`AsRef<[u8]>`](AsRef) (or [`as_bytes`](Self::as_bytes));
/// their layout is specified in [`guide::derivation`](crate::guide::derivation).
/// For [`ChaChaKeyErasureRng`](crate::ChaChaKeyErasureRng) they are exactly Go's
/// `math/rand/v2` `ChaCha8.MarshalBinary` bytes. Held inline (no allocation, `no_std`):
/// up to [`SAVED_STATE_MAX_BYTES`] bytes, wiped on drop. `Debug` prints the length
/// only.
///
/// `Clone` copies the bytes (a generator is not `Clone`: restore it from a saved
/// state to copy a position). With the `serde` feature it serializes as its bytes
/// and deserializes only to bytes that some generator's `restore` accepts
/// ([`guide::derivation`](crate::guide::derivation#23-serde-the-same-bytes), with
/// its two warnings).
///
/// # Security
/// A saved state is a secret, as secret as the generator itself: whoever reads it
/// can compute all of the generator's future output from the saved position (and,
/// for `ChaChaKeyErasureRng` in Go's encoding, the rest of the current 992-byte
/// key period, including the bytes of that period already served). Store and send
/// it as you would a key; every copy (`clone`) is wiped when dropped.
#[derive(Clone)]
pub struct SavedState {
    bytes: [u8; SAVED_STATE_MAX_BYTES],
    len: usize,
}

impl SavedState {
    /// An empty state, to be filled with [`push`](Self::push).
    pub(crate) const fn new() -> Self {
        Self {
            bytes: [0; SAVED_STATE_MAX_BYTES],
            len: 0,
        }
    }

    /// Appends `data`. The callers write at most [`SAVED_STATE_MAX_BYTES`] in all
    /// (fixed layouts); past that, the excess is dropped (and a debug build
    /// panics), never written out of bounds.
    pub(crate) fn push(&mut self, data: &[u8]) {
        let room = SAVED_STATE_MAX_BYTES - self.len;
        debug_assert!(data.len() <= room, "saved state overflow");
        let n = data.len().min(room);
        self.bytes[self.len..self.len + n].copy_from_slice(&data[..n]);
        self.len += n;
    }

    /// The saved bytes.
    #[must_use]
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }

    /// A copy of `bytes` (not checked: `restore` does that), or `None` if they
    /// are more than [`SAVED_STATE_MAX_BYTES`].
    #[cfg(feature = "serde")]
    pub(crate) fn from_slice(bytes: &[u8]) -> Option<Self> {
        if bytes.len() > SAVED_STATE_MAX_BYTES {
            return None;
        }
        let mut saved = Self::new();
        saved.push(bytes);
        Some(saved)
    }

    /// Appends one byte, or returns false (and appends nothing) if the state
    /// already holds [`SAVED_STATE_MAX_BYTES`].
    #[cfg(feature = "serde")]
    pub(crate) fn try_push_byte(&mut self, byte: u8) -> bool {
        if self.len == SAVED_STATE_MAX_BYTES {
            return false;
        }
        self.push(&[byte]);
        true
    }
}

impl AsRef<[u8]> for SavedState {
    fn as_ref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl fmt::Debug for SavedState {
    /// Prints the length only: the bytes are secret.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SavedState {{ len: {}, .. }}", self.len)
    }
}

impl Drop for SavedState {
    fn drop(&mut self) {
        self.bytes.zeroize();
    }
}

/// Why `restore` refused its input. Nothing was restored; the input was not
/// changed. The reasons carry no secret byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RestoreError {
    /// The input does not start with the encoding's magic (`ratchet:`; for
    /// `ChaChaKeyErasureRng`, Go's `chacha8:`, after an optional `readbuf:`
    /// part).
    BadMagic,
    /// The crate's encoding with a version this build does not know.
    UnsupportedVersion(u8),
    /// A state saved by another generator type (the identifier found).
    WrongGenerator(u8),
    /// Too short (truncated) or too long (trailing bytes) for its header.
    WrongLength,
    /// A stream position outside the key period or buffer: more unread bytes than
    /// a refill holds, or Go's used-word count above 124.
    BadPosition,
    /// Go's `readbuf:` part is truncated, or holds more than 8 bytes (Go's
    /// `UnmarshalBinary` cannot hold more: it panics on such input).
    BadReadBuffer,
}

impl fmt::Display for RestoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BadMagic => f.write_str("not a saved generator state (wrong magic)"),
            Self::UnsupportedVersion(v) => write!(f, "saved state version {v} is not supported"),
            Self::WrongGenerator(id) => {
                write!(f, "the state was saved by another generator (id {id})")
            }
            Self::WrongLength => f.write_str("saved state has the wrong length"),
            Self::BadPosition => f.write_str("saved state position is outside the period"),
            Self::BadReadBuffer => f.write_str("invalid ChaCha8 Read buffer encoding"),
        }
    }
}

impl core::error::Error for RestoreError {}

/// Saves in the crate's encoding: generator `id`, the `core` bytes, the `unread`
/// bytes (at most 65535, checked by the callers' fixed sizes).
pub(crate) fn save_own(id: u8, core: &[u8], unread: &[u8]) -> SavedState {
    let mut saved = SavedState::new();
    saved.push(MAGIC);
    saved.push(&[VERSION, id]);
    let unread_len = u16::try_from(unread.len()).unwrap_or(u16::MAX);
    saved.push(&unread_len.to_le_bytes());
    saved.push(core);
    saved.push(unread);
    saved
}

/// Parses the crate's encoding for generator `id` with `core_len` bytes of core and
/// at most `max_unread` unread bytes; returns the core and the unread bytes.
pub(crate) fn parse_own(
    bytes: &[u8],
    id: u8,
    core_len: usize,
    max_unread: usize,
) -> Result<(&[u8], &[u8]), RestoreError> {
    if bytes.len() < HEADER_BYTES {
        // A truncated header is a length error if what is there is right.
        let n = bytes.len().min(MAGIC.len());
        return Err(if bytes[..n] == MAGIC[..n] {
            RestoreError::WrongLength
        } else {
            RestoreError::BadMagic
        });
    }
    let (header, body) = bytes.split_at(HEADER_BYTES);
    if header[..8] != MAGIC[..] {
        return Err(RestoreError::BadMagic);
    }
    if header[8] != VERSION {
        return Err(RestoreError::UnsupportedVersion(header[8]));
    }
    if header[9] != id {
        return Err(RestoreError::WrongGenerator(header[9]));
    }
    let unread_len = usize::from(u16::from_le_bytes([header[10], header[11]]));
    if unread_len > max_unread {
        return Err(RestoreError::BadPosition);
    }
    // `core_len + unread_len` is at most a few KiB: no overflow.
    if body.len() != core_len + unread_len {
        return Err(RestoreError::WrongLength);
    }
    Ok(body.split_at(core_len))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::format;

    #[test]
    fn debug_prints_no_bytes() {
        let saved = save_own(1, &[0xAB; 32], &[0xCD; 3]);
        assert_eq!(format!("{saved:?}"), "SavedState { len: 47, .. }");
    }

    #[test]
    fn own_encoding_round_trips_and_rejects() {
        let saved = save_own(4, &[7; 32], &[9; 5]);
        let (core, unread) = parse_own(saved.as_ref(), 4, 32, 992).unwrap();
        assert_eq!((core, unread), (&[7u8; 32][..], &[9u8; 5][..]));
        let b = saved.as_ref();
        assert_eq!(
            parse_own(b, 5, 32, 992),
            Err(RestoreError::WrongGenerator(4))
        );
        assert_eq!(parse_own(b, 4, 32, 4), Err(RestoreError::BadPosition));
        assert_eq!(
            parse_own(&b[..b.len() - 1], 4, 32, 992),
            Err(RestoreError::WrongLength)
        );
        assert_eq!(
            parse_own(&b[..5], 4, 32, 992),
            Err(RestoreError::WrongLength)
        );
        assert_eq!(
            parse_own(b"chacha8:", 4, 32, 992),
            Err(RestoreError::BadMagic)
        );
        assert_eq!(parse_own(b"", 4, 32, 992), Err(RestoreError::WrongLength));
        let mut v2 = std::vec::Vec::from(b);
        v2[8] = 2;
        assert_eq!(
            parse_own(&v2, 4, 32, 992),
            Err(RestoreError::UnsupportedVersion(2))
        );
    }
}
