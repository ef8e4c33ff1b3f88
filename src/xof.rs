//! The extendable-output functions the sponge generators are built on:
//! SHAKE256 (FIPS 202) and TurboSHAKE256 (RFC 9861).
//!
//! Each is used in three steps: absorb input any number of times, `finalize` into
//! a reader, then squeeze output any number of times (the output is one stream:
//! splitting a squeeze never changes the bytes).
//!
//! ```
//! use ratchet_rng::xof::{Shake256, TurboShake256};
//!
//! let mut h = Shake256::new();
//! h.absorb(b"");
//! let mut out = [0u8; 8];
//! h.finalize().squeeze(&mut out);
//! assert_eq!(out, [0x46, 0xb9, 0xdd, 0x2b, 0x0b, 0xa8, 0x8d, 0x13]); // FIPS 202
//!
//! let mut t = TurboShake256::new(0x1F)?;
//! t.absorb(b"");
//! t.finalize().squeeze(&mut out);
//! assert_eq!(out, [0x36, 0x7a, 0x32, 0x9d, 0xaf, 0xea, 0x87, 0x1c]); // RFC 9861
//! # Ok::<(), ratchet_rng::xof::InvalidDomainByte>(())
//! ```
//!
//! The one-shot [`shake256`] and [`turboshake256`] are `const fn`, so digests can be
//! computed at compile time.
//!
//! These types wipe their state when dropped. They always use the portable Keccak
//! code; the generators pick a SIMD backend at run time.
//!
//! # Bad input
//! Nothing here panics. Input and output of any length are accepted, zero bytes
//! included (an empty `absorb` or `squeeze` changes nothing), and there is no
//! limit on the total: the sponge keeps only its position inside the current
//! 136-byte block, never a byte count that could wrap. The one invalid input is a
//! TurboSHAKE domain byte outside `0x01..=0x7F`, rejected with
//! [`InvalidDomainByte`] by [`TurboShake256::new`] and [`turboshake256`].

use core::fmt;

use crate::keccak::{FULL_ROUNDS, RATE_BYTES, Sponge};

/// Rounds of Keccak-p\[1600\] in TurboSHAKE.
const TURBO_ROUNDS: usize = 12;

/// SHAKE256's domain-separation byte (the `1111` suffix with the first padding bit).
const SHAKE_DOMAIN: u8 = 0x1F;

/// The default TurboSHAKE domain-separation byte, `D = 0x1F`.
pub const TURBOSHAKE_DEFAULT_DOMAIN: u8 = 0x1F;

type ShakeSponge = Sponge<FULL_ROUNDS, RATE_BYTES>;
type TurboSponge = Sponge<TURBO_ROUNDS, RATE_BYTES>;

/// A TurboSHAKE domain-separation byte outside `0x01..=0x7F` (RFC 9861 section 2.2).
///
/// The rejected byte is kept for the error message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InvalidDomainByte(pub u8);

impl fmt::Display for InvalidDomainByte {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "TurboSHAKE domain separation byte {:#04x} is outside 0x01..=0x7F",
            self.0
        )
    }
}

impl core::error::Error for InvalidDomainByte {}

/// Checks a TurboSHAKE domain byte.
const fn check_domain(domain: u8) -> Result<u8, InvalidDomainByte> {
    if domain >= 0x01 && domain <= 0x7F {
        Ok(domain)
    } else {
        Err(InvalidDomainByte(domain))
    }
}

/// SHAKE256 in its absorbing phase.
#[derive(Clone)]
pub struct Shake256 {
    sponge: ShakeSponge,
}

/// SHAKE256 in its squeezing phase, made by [`Shake256::finalize`].
pub struct Shake256Reader {
    sponge: ShakeSponge,
}

/// TurboSHAKE256 in its absorbing phase, with its domain-separation byte.
#[derive(Clone)]
pub struct TurboShake256 {
    sponge: TurboSponge,
    domain: u8,
}

/// TurboSHAKE256 in its squeezing phase, made by [`TurboShake256::finalize`].
pub struct TurboShake256Reader {
    sponge: TurboSponge,
}

impl Shake256 {
    /// An empty SHAKE256 hasher.
    #[must_use]
    pub const fn new() -> Self {
        Self {
            sponge: ShakeSponge::new(),
        }
    }

    /// Absorbs more input, of any length (empty input changes nothing).
    pub const fn absorb(&mut self, data: &[u8]) {
        self.sponge.absorb(data);
    }

    /// Pads and permutes; the reader squeezes the output stream.
    #[must_use]
    pub fn finalize(mut self) -> Shake256Reader {
        self.sponge.finalize(SHAKE_DOMAIN);
        Shake256Reader {
            sponge: core::mem::replace(&mut self.sponge, ShakeSponge::new()),
        }
    }
}

impl Shake256Reader {
    /// Writes the next `out.len()` bytes of output: any length, without limit on
    /// the total (an empty `out` changes nothing).
    pub const fn squeeze(&mut self, out: &mut [u8]) {
        self.sponge.squeeze(out);
    }
}

impl TurboShake256 {
    /// An empty TurboSHAKE256 hasher with domain-separation byte `domain`.
    ///
    /// # Errors
    /// [`InvalidDomainByte`] (holding `domain`) unless `0x01 <= domain <= 0x7F`
    /// (RFC 9861 section 2.2): `0x00` and `0x80..=0xFF` are rejected, never
    /// clamped or masked.
    ///
    /// ```
    /// use ratchet_rng::xof::{InvalidDomainByte, TurboShake256};
    ///
    /// assert_eq!(TurboShake256::new(0x80).unwrap_err(), InvalidDomainByte(0x80));
    /// assert!(TurboShake256::new(0x00).is_err());
    /// assert_eq!(TurboShake256::new(0x7F).map(|t| t.domain()), Ok(0x7F));
    /// ```
    pub const fn new(domain: u8) -> Result<Self, InvalidDomainByte> {
        match check_domain(domain) {
            Ok(domain) => Ok(Self {
                sponge: TurboSponge::new(),
                domain,
            }),
            Err(e) => Err(e),
        }
    }

    /// The domain-separation byte this hasher finalizes with.
    #[must_use]
    pub const fn domain(&self) -> u8 {
        self.domain
    }

    /// Absorbs more input, of any length (empty input changes nothing).
    pub const fn absorb(&mut self, data: &[u8]) {
        self.sponge.absorb(data);
    }

    /// Pads with the domain byte and permutes; the reader squeezes the output.
    #[must_use]
    pub fn finalize(mut self) -> TurboShake256Reader {
        self.sponge.finalize(self.domain);
        TurboShake256Reader {
            sponge: core::mem::replace(&mut self.sponge, TurboSponge::new()),
        }
    }
}

impl TurboShake256Reader {
    /// Writes the next `out.len()` bytes of output: any length, without limit on
    /// the total (an empty `out` changes nothing).
    pub const fn squeeze(&mut self, out: &mut [u8]) {
        self.sponge.squeeze(out);
    }
}

impl Default for Shake256 {
    fn default() -> Self {
        Self::new()
    }
}

impl Default for TurboShake256 {
    /// TurboSHAKE256 with the default domain byte `D = 0x1F`.
    fn default() -> Self {
        Self {
            sponge: TurboSponge::new(),
            domain: TURBOSHAKE_DEFAULT_DOMAIN,
        }
    }
}

macro_rules! wipe_and_redact {
    ($($ty:ident),*) => {$(
        impl Drop for $ty {
            fn drop(&mut self) {
                self.sponge.wipe();
            }
        }

        impl fmt::Debug for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(concat!(stringify!($ty), " { .. }"))
            }
        }
    )*};
}
wipe_and_redact!(Shake256, Shake256Reader, TurboShake256, TurboShake256Reader);

/// One-shot SHAKE256: the first `N` output bytes for `input`, usable in `const`.
///
/// # Security
/// A `const fn` cannot wipe its stack; to hash secrets at run time prefer
/// [`Shake256`], which wipes its state on drop.
///
/// ```
/// const DIGEST: [u8; 4] = ratchet_rng::xof::shake256(b"");
/// assert_eq!(DIGEST, [0x46, 0xb9, 0xdd, 0x2b]);
/// ```
#[must_use]
pub const fn shake256<const N: usize>(input: &[u8]) -> [u8; N] {
    let mut sponge = ShakeSponge::new();
    sponge.absorb(input);
    sponge.finalize(SHAKE_DOMAIN);
    let mut out = [0u8; N];
    sponge.squeeze(&mut out);
    out
}

/// One-shot TurboSHAKE256 with domain byte `domain`: the first `N` output bytes
/// for `input`, usable in `const`.
///
/// # Security
/// As for [`shake256`]: prefer [`TurboShake256`] for secrets at run time.
///
/// # Errors
/// [`InvalidDomainByte`] unless `0x01 <= domain <= 0x7F`; in a `const` item the
/// error can be turned into a compile-time failure with `match`.
pub const fn turboshake256<const N: usize>(
    input: &[u8],
    domain: u8,
) -> Result<[u8; N], InvalidDomainByte> {
    if let Err(e) = check_domain(domain) {
        return Err(e);
    }
    let mut sponge = TurboSponge::new();
    sponge.absorb(input);
    sponge.finalize(domain);
    let mut out = [0u8; N];
    sponge.squeeze(&mut out);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::format;

    const fn bytes_eq(a: &[u8], b: &[u8]) -> bool {
        if a.len() != b.len() {
            return false;
        }
        let mut i = 0;
        while i < a.len() {
            if a[i] != b[i] {
                return false;
            }
            i += 1;
        }
        true
    }

    /// RFC 9861 section 5: TurboSHAKE256(M = `00`^0, D = 0x1F, 64), first 32 bytes.
    /// Evaluated by the compiler: the permutation and sponge run in `const`.
    const TURBOSHAKE256_EMPTY: [u8; 32] = match turboshake256::<32>(b"", 0x1F) {
        Ok(out) => out,
        Err(_) => panic!("0x1F is a valid domain byte"),
    };
    const _: () = assert!(bytes_eq(
        &TURBOSHAKE256_EMPTY,
        &[
            0x36, 0x7A, 0x32, 0x9D, 0xAF, 0xEA, 0x87, 0x1C, 0x78, 0x02, 0xEC, 0x67, 0xF9, 0x05,
            0xAE, 0x13, 0xC5, 0x76, 0x95, 0xDC, 0x2C, 0x66, 0x63, 0xC6, 0x10, 0x35, 0xF5, 0x9A,
            0x18, 0xF8, 0xE7, 0xDB,
        ]
    ));

    #[test]
    fn const_known_answer_is_also_the_runtime_answer() {
        let mut reader = TurboShake256::default().finalize();
        let mut out = [0u8; 32];
        reader.squeeze(&mut out);
        assert_eq!(out, TURBOSHAKE256_EMPTY);
    }

    #[test]
    fn domain_byte_range_is_enforced() {
        // Every byte natively; under Miri (a permutation per valid byte takes a
        // tenth of a second there) the bytes at and around both edges.
        let edges = [0x00, 0x01, 0x02, 0x7E, 0x7F, 0x80, 0x81, 0xFE, 0xFF];
        let all: std::vec::Vec<u8> = (0u8..=255).collect();
        for &d in if cfg!(miri) { &edges[..] } else { &all[..] } {
            let valid = (0x01..=0x7F).contains(&d);
            assert_eq!(TurboShake256::new(d).is_ok(), valid, "domain {d:#04x}");
            assert_eq!(turboshake256::<1>(b"", d).is_ok(), valid);
            if !valid {
                assert_eq!(TurboShake256::new(d).unwrap_err(), InvalidDomainByte(d));
            }
        }
    }

    #[test]
    fn debug_shows_no_state() {
        let h = Shake256::new();
        assert_eq!(format!("{h:?}"), "Shake256 { .. }");
        assert_eq!(format!("{:?}", h.finalize()), "Shake256Reader { .. }");
        let t = TurboShake256::default();
        assert_eq!(format!("{t:?}"), "TurboShake256 { .. }");
        assert_eq!(format!("{:?}", t.finalize()), "TurboShake256Reader { .. }");
    }
}
