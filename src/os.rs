//! The operating system's generator, the crate's only way to it: one `getrandom`
//! call per request, its error wrapped in [`OsError`].
//!
//! The thread layer (`thread/`) seeds and falls back through [`fill`]; every
//! generator's `try_from_os_rng` seeds through [`OsRng`]. Both sit below those
//! callers and above `error.rs`, which only defines the error type.

use crate::error::OsError;

/// Fills `dst` from the operating system's generator.
///
/// On Linux with getrandom's default backend, the `getrandom` system call
/// itself first, without the crate's first-use set-up (a `dlsym` lookup of
/// libc's wrapper and a zero-length probe call: about 2 µs of a process's
/// first draw here); a raw system call, as glibc before 2.25 has no wrapper.
/// On any failure (`ENOSYS` on a kernel before 3.17, `EPERM` from a seccomp
/// filter, anything else) `getrandom` is asked, which falls back to
/// `/dev/urandom` where it would, or reports the error with its code. Not
/// where a `getrandom_backend` cfg picks getrandom's backend (getrandom 0.4's
/// Linux values: the user's choice, and the custom backend that
/// `tests/os_failure.rs` fails on demand).
pub(crate) fn fill(dst: &mut [u8]) -> Result<(), OsError> {
    #[cfg(all(
        target_os = "linux",
        feature = "thread_rng",
        not(miri),
        not(any(
            getrandom_backend = "custom",
            getrandom_backend = "extern_impl",
            getrandom_backend = "linux_getrandom",
            getrandom_backend = "linux_raw",
            getrandom_backend = "rdrand",
            getrandom_backend = "rndr",
            getrandom_backend = "unsupported"
        ))
    ))]
    {
        let mut rest = &mut *dst;
        loop {
            if rest.is_empty() {
                return Ok(());
            }
            // SAFETY: `rest` is writable for `rest.len()` bytes; flags 0 (block
            // until the kernel's generator is initialised, as `getrandom` does).
            let got =
                unsafe { libc::syscall(libc::SYS_getrandom, rest.as_mut_ptr(), rest.len(), 0_u32) };
            match usize::try_from(got) {
                Ok(n) if n > 0 && n <= rest.len() => rest = &mut rest[n..],
                _ if got < 0
                    && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) => {}
                _ => break,
            }
        }
    }
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
