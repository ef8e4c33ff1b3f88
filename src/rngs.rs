//! The generators. Each is a [`BufferedRng`](buffer::BufferedRng) over a core that
//! produces whole refills; this module holds what they share.

pub(crate) mod aes_ctr_pool;
pub(crate) mod buffer;
pub(crate) mod chacha_key_erasure;
pub(crate) mod saved;
pub(crate) mod shake;

/// The 32-byte seed that `from_key` derives from key material of any length:
/// the first 32 bytes of TurboSHAKE256(`key`, `domain`), one domain byte per
/// generator (documented on each `from_key`).
pub(crate) fn derive_key(key: &[u8], domain: u8) -> [u8; 32] {
    let mut xof = match crate::xof::TurboShake256::new(domain) {
        Ok(xof) => xof,
        // Justified: `domain` is one of the constants 0x08, 0x0C, 0x14, 0x41 (the
        // `from_key` of each generator, all tested), every one in 0x01..=0x7F.
        Err(_) => unreachable!("the generators' domain bytes are in 0x01..=0x7F"),
    };
    xof.absorb(key);
    let mut seed = [0u8; 32];
    xof.finalize().squeeze(&mut seed);
    seed
}

/// `SeedableRng::seed_from_u64`, `from_rng` and `try_from_rng` as rand_core 0.10
/// defines them (the same seed bytes, so the same streams: the golden and compat
/// tests pin them), except that the temporary seed is wiped after use (the copy
/// `from_seed` takes by value is the documented limit). Used inside each
/// generator's `impl SeedableRng`.
macro_rules! seed_wiping_constructors {
    () => {
        /// As rand_core's default (the seed filled by PCG32 from `state`); the
        /// temporary seed and the PCG state are wiped after use.
        fn seed_from_u64(mut state: u64) -> Self {
            let mut seed = Self::Seed::default();
            for chunk in seed.as_mut().chunks_mut(4) {
                let word = $crate::rngs::pcg32(&mut state);
                chunk.copy_from_slice(&word[..chunk.len()]);
            }
            let this = Self::from_seed(seed.clone());
            zeroize::Zeroize::zeroize(seed.as_mut());
            zeroize::Zeroize::zeroize(&mut state);
            this
        }

        /// As rand_core's default; the temporary seed is wiped after use.
        fn from_rng<R: rand_core::Rng + ?Sized>(rng: &mut R) -> Self {
            let mut seed = Self::Seed::default();
            rng.fill_bytes(seed.as_mut());
            let this = Self::from_seed(seed.clone());
            zeroize::Zeroize::zeroize(seed.as_mut());
            this
        }

        /// As rand_core's default; the temporary seed is wiped after use, also
        /// when the source fails.
        fn try_from_rng<R: rand_core::TryRng + ?Sized>(rng: &mut R) -> Result<Self, R::Error> {
            let mut seed = Self::Seed::default();
            let result = rng
                .try_fill_bytes(seed.as_mut())
                .map(|()| Self::from_seed(seed.clone()));
            zeroize::Zeroize::zeroize(seed.as_mut());
            result
        }
    };
}
pub(crate) use seed_wiping_constructors;

/// rand_core 0.10's `seed_from_u64` step: advance a PCG32 state and output 4
/// little-endian bytes (PCG-XSH-RR).
pub(crate) fn pcg32(state: &mut u64) -> [u8; 4] {
    const MUL: u64 = 0x5851_F42D_4C95_7F2D;
    const INC: u64 = 0xA176_54E4_6FBE_17F3;
    *state = state.wrapping_mul(MUL).wrapping_add(INC);
    let s = *state;
    let xorshifted = (((s >> 18) ^ s) >> 27) as u32;
    let rot = (s >> 59) as u32;
    xorshifted.rotate_right(rot).to_le_bytes()
}

/// The `# Panics` section every generator's type documentation ends with.
macro_rules! generator_panics_doc {
    () => {
        "# Panics\n\
         Reading never panics and cannot fail (`TryRng::Error` is `Infallible`): a \
         request of 0 bytes returns at once and leaves the stream where it was, and a \
         request of any length, more than 4 GiB included, is served from the same \
         stream as many small ones. No counter can wrap or repeat: between refills \
         the whole state is the current key (or Keccak state) and a position inside \
         one refill buffer; the block counters restart inside every refill (see \
         [the errors guide](crate::guide::errors)).\n\n\
         Seeding: `from_seed`, `from_key` (any length, empty included), \
         `seed_from_u64` and `from_rng` never panic; `try_from_rng` returns the \
         source's error unchanged; `try_from_os_rng` returns the operating system's \
         error, and `from_os_rng` panics with it (the only panic)."
    };
}
pub(crate) use generator_panics_doc;

/// Implements, for a generator `$name(BufferedRng<..>)`: the rand_core 0.10
/// traits (`TryRng<Error = Infallible>` and `TryCryptoRng`, hence `Rng`,
/// `CryptoRng` and the deprecated `RngCore`), a redacted `Debug`, and the
/// OS-seeded constructors.
macro_rules! impl_generator {
    ($name:ident) => {
        /// rand_core 0.10 (no feature needed): for rand 0.10. `Rng` and
        /// `CryptoRng` follow.
        impl rand_core::TryRng for $name {
            type Error = core::convert::Infallible;

            #[inline]
            fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
                Ok(self.0.next_u32())
            }

            #[inline]
            fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
                Ok(self.0.next_u64())
            }

            #[inline]
            fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
                self.0.fill_bytes(dst);
                Ok(())
            }
        }

        /// rand_core 0.10 (no feature needed): for rand 0.10.
        impl rand_core::TryCryptoRng for $name {}

        impl core::fmt::Debug for $name {
            /// Prints the type name only: the state is secret.
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str(concat!(stringify!($name), " { .. }"))
            }
        }

        #[cfg(ratchet_rng_inspect)]
        impl $name {
            /// Test-only inspection of the output buffer (builds with
            /// `RATCHET_RNG_INSPECT=1` only; not part of the API): returns the
            /// whole buffer and the number of its bytes already served. Bytes
            /// `..served` must read as zeros (wiped as they were handed out);
            /// bytes `served..` are the next bytes of the stream, not yet
            /// returned. `served` equals the buffer's length when nothing is
            /// buffered.
            ///
            /// # Security
            /// The unread bytes are future output: whoever reads them can predict
            /// the generator. This is why it exists only under a cfg that no
            /// dependency can switch on.
            #[doc(hidden)]
            pub fn inspect_buffer(&self) -> (&[u8], usize) {
                let (buf, served) = self.0.buffer();
                (buf, served)
            }
        }

        #[cfg(feature = "sys_rng")]
        impl $name {
            #[doc = concat!("A `", stringify!($name), "` seeded by the operating system's")]
            /// random number generator (`getrandom`).
            ///
            /// # Panics
            /// If the operating system's generator fails (see
            /// [`try_from_os_rng`](Self::try_from_os_rng) for the fallible form). This
            /// is rare and not transient on the platforms `getrandom` supports: it
            /// means the system has no usable entropy source. The message is
            #[doc = concat!("`ratchet-rng: cannot seed ", stringify!($name), ": the operating system's")]
            /// random number generator failed: <the OsError>`. This is the only
            /// panicking constructor.
            #[must_use]
            pub fn from_os_rng() -> Self {
                match Self::try_from_os_rng() {
                    Ok(rng) => rng,
                    Err(err) => panic!(
                        concat!(
                            "ratchet-rng: cannot seed ",
                            stringify!($name),
                            ": {}"
                        ),
                        err.with_cause()
                    ),
                }
            }

            #[doc = concat!("A `", stringify!($name), "` seeded by the operating system's")]
            /// random number generator, or the OS error.
            ///
            /// # Errors
            /// [`OsError`](crate::OsError) when the operating system's generator
            /// fails (its OS error code is kept); nothing
            /// is seeded from partial or fallback entropy, and nothing panics.
            pub fn try_from_os_rng() -> Result<Self, crate::OsError> {
                <Self as rand_core::SeedableRng>::try_from_rng(&mut crate::os::OsRng)
            }
        }
    };
}
pub(crate) use impl_generator;
