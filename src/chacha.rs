//! ChaCha (RFC 8439) and the chacha8rand key-erasure layout.
//!
//! This parent module is the only place that selects a backend; backends live in
//! `chacha/`, one file each. The portable [`soft`] backend is also the
//! specification the others are tested against.

pub(crate) mod soft;

use crate::backend::ChaChaBackend;
pub(crate) use soft::KEY_PERIOD_OUTPUT_BYTES;

/// One key period of the chacha8rand layout with `ROUNDS` rounds: writes the 992
/// output bytes of `key` to `out` and replaces `key` with the next key.
#[inline]
pub(crate) fn key_period<const ROUNDS: usize>(
    backend: ChaChaBackend,
    key: &mut [u32; 8],
    out: &mut [u8; KEY_PERIOD_OUTPUT_BYTES],
) {
    match backend {
        ChaChaBackend::Soft => soft::key_period::<ROUNDS>(key, out),
    }
}
