//! The operating system's generator, the crate's only way to it: one `getrandom`
//! call per request, its error wrapped in [`OsError`].
//!
//! The thread layer (`thread/`) seeds and falls back through [`fill`]; every
//! generator's `try_from_os_rng` seeds through [`OsRng`]. Both sit below those
//! callers and above `error.rs`, which only defines the error type.

use crate::error::OsError;

/// Fills `dst` from the operating system's generator.
pub(crate) fn fill(dst: &mut [u8]) -> Result<(), OsError> {
    getrandom::fill(dst).map_err(OsError::new)
}

/// The operating system's generator as a rand_core 0.10 source with this crate's
/// error, for `SeedableRng::try_from_rng`.
pub(crate) struct OsRng;

impl rand_core::TryRng for OsRng {
    type Error = OsError;

    fn try_next_u32(&mut self) -> Result<u32, OsError> {
        let mut bytes = [0u8; 4];
        fill(&mut bytes)?;
        Ok(u32::from_le_bytes(bytes))
    }

    fn try_next_u64(&mut self) -> Result<u64, OsError> {
        let mut bytes = [0u8; 8];
        fill(&mut bytes)?;
        Ok(u64::from_le_bytes(bytes))
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), OsError> {
        fill(dst)
    }
}

impl rand_core::TryCryptoRng for OsRng {}
