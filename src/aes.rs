//! AES-256 (FIPS 197) and the fast-key-erasure pool refill of `AesCtrPoolRng`.
//!
//! This parent module is the only place that selects a backend; backends live in
//! `aes/`, one file each. The portable [`soft`] backend (fixsliced, constant
//! time) is also the specification the others are tested against.

pub(crate) mod soft;

use crate::backend::AesBackend;
pub(crate) use soft::POOL_OUTPUT_BYTES;

/// Fills consecutive pools: for each, the AES-256-CTR keystream of 4096 bytes
/// under `key` from counter 0, whose first 32 bytes replace `key` and whose other
/// 4064 bytes are written to the pool.
#[inline]
pub(crate) fn fill_pools(
    backend: AesBackend,
    key: &mut [u8; 32],
    out: &mut [[u8; POOL_OUTPUT_BYTES]],
) {
    match backend {
        AesBackend::Soft => soft::fill_pools(key, out),
    }
}
