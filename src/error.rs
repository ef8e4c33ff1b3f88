//! The crate's error for operating-system entropy failure, and the crate-private
//! ways to reach the operating system's generator through it.
//!
//! `getrandom` stays an implementation detail: its error is wrapped, not
//! re-exported, so that a new `getrandom` line does not change this crate's API.

use core::fmt;

/// The operating system's random number generator failed.
///
/// Returned by `try_from_os_rng` on every generator and, with the `thread_rng`
/// feature, by [`try_fill`](crate::try_fill) and
/// [`ThreadRng::reseed`](crate::ThreadRng::reseed). On the platforms `getrandom`
/// supports this is rare and not transient: the system has no usable entropy
/// source (or a sandbox denies it). Nothing is ever seeded from partial or
/// fallback entropy when it happens.
///
/// [`raw_os_error`](Self::raw_os_error) gives the OS's error code where there is
/// one; [`source`](core::error::Error::source) gives the underlying `getrandom`
/// error as a `dyn Error`, unchanged.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct OsError {
    inner: getrandom::Error,
}

impl OsError {
    /// Wraps `getrandom`'s error.
    pub(crate) const fn new(inner: getrandom::Error) -> Self {
        Self { inner }
    }

    /// The operating system's error code (`errno` on unix), if the failure came
    /// from a system call; `None` for failures `getrandom` detected itself (an
    /// unsupported target, a custom backend's own error).
    #[must_use]
    pub fn raw_os_error(self) -> Option<i32> {
        self.inner.raw_os_error()
    }
}

impl fmt::Debug for OsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OsError")
            .field("raw_os_error", &self.raw_os_error())
            .field("description", &format_args!("{}", self.inner))
            .finish()
    }
}

impl fmt::Display for OsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the operating system's random number generator failed: {}",
            self.inner
        )
    }
}

impl core::error::Error for OsError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        Some(&self.inner)
    }
}

/// Fills `dst` from the operating system's generator.
pub(crate) fn os_fill(dst: &mut [u8]) -> Result<(), OsError> {
    getrandom::fill(dst).map_err(OsError::new)
}

/// The operating system's generator as a rand_core 0.10 source with this crate's
/// error, for `SeedableRng::try_from_rng`.
pub(crate) struct OsRng;

impl rand_core::TryRng for OsRng {
    type Error = OsError;

    fn try_next_u32(&mut self) -> Result<u32, OsError> {
        let mut bytes = [0u8; 4];
        os_fill(&mut bytes)?;
        Ok(u32::from_le_bytes(bytes))
    }

    fn try_next_u64(&mut self) -> Result<u64, OsError> {
        let mut bytes = [0u8; 8];
        os_fill(&mut bytes)?;
        Ok(u64::from_le_bytes(bytes))
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), OsError> {
        os_fill(dst)
    }
}

impl rand_core::TryCryptoRng for OsRng {}

#[cfg(test)]
mod tests {
    use super::OsError;
    use std::format;
    use std::string::ToString;

    #[test]
    fn wraps_getrandom_without_exposing_it() {
        let err = OsError::new(getrandom::Error::new_custom(7));
        assert_eq!(err.raw_os_error(), None);
        let shown = err.to_string();
        assert!(
            shown.starts_with("the operating system's random number generator failed: "),
            "{shown}"
        );
        let source = core::error::Error::source(&err).expect("a source");
        assert_eq!(
            source.downcast_ref::<getrandom::Error>(),
            Some(&getrandom::Error::new_custom(7))
        );
        assert!(format!("{err:?}").starts_with("OsError { raw_os_error: None"));
    }
}
