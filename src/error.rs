//! The crate's error for operating-system entropy failure (the read itself is in
//! `os.rs`).
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
///
/// `Display` prints this layer only ("the operating system's random number
/// generator failed"), and the cause is the `source`, so that an error reporter
/// walking the chain (`anyhow`'s `{:#}`, `eyre`) prints `getrandom`'s message
/// once. `Debug` prints both.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct OsError {
    inner: getrandom::Error,
}

impl OsError {
    /// Wraps `getrandom`'s error.
    pub(crate) const fn new(inner: getrandom::Error) -> Self {
        Self { inner }
    }

    /// This error followed by its cause, `"<self>: <getrandom's message>"`: the
    /// crate's panic messages, which no reporter walks.
    pub(crate) fn with_cause(self) -> impl fmt::Display {
        struct WithCause(OsError);
        impl fmt::Display for WithCause {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}: {}", self.0, self.0.inner)
            }
        }
        WithCause(self)
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
    /// This layer only: the cause is the `source` (printed by reporters).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the operating system's random number generator failed")
    }
}

impl core::error::Error for OsError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        Some(&self.inner)
    }
}

#[cfg(test)]
mod tests {
    use super::OsError;
    use std::format;
    use std::string::{String, ToString};

    /// What an error reporter prints (`anyhow`'s `{:#}`, `eyre`): every error of
    /// the `source` chain, outermost first, joined by `": "`.
    fn report(err: &(dyn core::error::Error + 'static)) -> String {
        let mut out = err.to_string();
        let mut next = err.source();
        while let Some(cause) = next {
            out.push_str(": ");
            out.push_str(&cause.to_string());
            next = cause.source();
        }
        out
    }

    #[test]
    fn wraps_getrandom_without_exposing_it() {
        let err = OsError::new(getrandom::Error::new_custom(7));
        assert_eq!(err.raw_os_error(), None);
        let source = core::error::Error::source(&err).expect("a source");
        assert_eq!(
            source.downcast_ref::<getrandom::Error>(),
            Some(&getrandom::Error::new_custom(7))
        );
        assert!(format!("{err:?}").starts_with("OsError { raw_os_error: None"));
    }

    #[test]
    fn a_reporter_prints_the_cause_once() {
        for inner in [
            getrandom::Error::new_custom(7),
            getrandom::Error::UNSUPPORTED,
            getrandom::Error::UNEXPECTED,
        ] {
            let err = OsError::new(inner);
            let cause = inner.to_string();
            assert!(!cause.is_empty());
            let reported = report(&err);
            assert_eq!(
                reported,
                format!("the operating system's random number generator failed: {cause}")
            );
            assert_eq!(reported.matches(cause.as_str()).count(), 1, "{reported}");
            // The panic messages' form: the same text, no reporter needed.
            assert_eq!(err.with_cause().to_string(), reported);
            assert_eq!(
                err.to_string(),
                "the operating system's random number generator failed"
            );
        }
    }
}
