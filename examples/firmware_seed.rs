//! Seeding a generator from a hardware TRNG, the way firmware does it.
//!
//! Runs on the host (`cargo run --example firmware_seed`); the code is written
//! for `no_std` (no allocation, no `std` API outside `main`'s printing) so that it
//! moves to a board unchanged, with the crate built as
//! `ratchet-rng = { version = "0.1", default-features = false }`.
//!
//! Three ways to seed, from the most to the least direct:
//!
//! 1. `try_from_rng(&mut trng)`: the TRNG implements rand_core's `TryRng`; a
//!    hardware fault (health test, seed error) is returned as an error, and no
//!    generator is built from partial entropy.
//! 2. `from_key(&raw_samples)`: gather more raw samples than the seed needs and
//!    let the generator hash them (SHAKE256 / TurboSHAKE256), for noise sources
//!    with less than one bit of entropy per bit.
//! 3. `from_os_rng()` on bare metal: give `getrandom` a custom backend that reads
//!    the TRNG, and every OS-seeded constructor works (see
//!    [`getrandom_custom_backend`] at the end).
//!
//! **The TRNG here is a stand-in.** A host has no TRNG peripheral, so
//! [`mock_peripheral`] simulates its data register with a 32-bit LFSR: it is
//! deterministic and NOT random, only so that this example runs anywhere and
//! prints the same lines every time. On a board, `read_data` and `read_status`
//! are volatile reads of the peripheral's registers (the comments say which).

use core::fmt;

use ratchet_rng::rand_core::{Rng, SeedableRng, TryCryptoRng, TryRng};
use ratchet_rng::{ChaCha20KeyErasureRng, ShakeRng, TurboShakeRng};

/// The simulated peripheral: what would be memory-mapped registers on a board.
mod mock_peripheral {
    use core::sync::atomic::{AtomicBool, AtomicU32, Ordering::Relaxed};

    /// The LFSR state standing in for the noise source (any non-zero start).
    static LFSR: AtomicU32 = AtomicU32::new(0x1234_5678);
    /// Set by [`inject_fault`]: the next status read reports a failed health test.
    static FAULT: AtomicBool = AtomicBool::new(false);

    /// Status register bit: a word is ready in the data register.
    pub const STATUS_DATA_READY: u32 = 1 << 0;
    /// Status register bit: the continuous health test failed (the peripheral
    /// must be reset before it delivers data again).
    pub const STATUS_HEALTH_FAIL: u32 = 1 << 1;

    /// On a board: `read_volatile(TRNG_BASE + STATUS_OFFSET)`.
    pub fn read_status() -> u32 {
        if FAULT.swap(false, Relaxed) {
            STATUS_HEALTH_FAIL
        } else {
            STATUS_DATA_READY
        }
    }

    /// On a board: `read_volatile(TRNG_BASE + DATA_OFFSET)`, which also starts
    /// the next conversion. Here: 32 steps of the Galois LFSR with the maximal
    /// polynomial x^32 + x^22 + x^2 + x + 1, so each word is 32 fresh LFSR bits.
    pub fn read_data() -> u32 {
        let mut word = 0;
        let _ = LFSR.fetch_update(Relaxed, Relaxed, |mut s| {
            for _ in 0..32 {
                let bit = s & 1;
                s >>= 1;
                if bit == 1 {
                    s ^= 0x8020_0003;
                }
                word = (word << 1) | bit;
            }
            Some(s)
        });
        word
    }

    /// Test hook: make the next status read report a health-test failure.
    pub fn inject_fault() {
        FAULT.store(true, Relaxed);
    }
}

/// The TRNG failed: a health test or the peripheral reported an error. Firmware
/// should not seed from it until it has been reset and passes its start-up tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct TrngError {
    status: u32,
}

impl fmt::Display for TrngError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TRNG health test failed (status {:#x})", self.status)
    }
}

impl core::error::Error for TrngError {}

/// A handle to the TRNG peripheral, delivering 32-bit words.
struct Trng {
    // Owning a `Trng` means owning the peripheral (on a board: taken once from
    // the HAL's peripherals struct), so it is neither `Clone` nor `Copy`.
    _owned: (),
}

impl Trng {
    /// Takes the peripheral (a HAL would enable its clock and start it here).
    fn take() -> Self {
        Self { _owned: () }
    }

    /// One 32-bit word, waiting for it to be ready; an error if the health test
    /// failed (never a word of doubtful quality).
    fn read_word(&mut self) -> Result<u32, TrngError> {
        loop {
            let status = mock_peripheral::read_status();
            if status & mock_peripheral::STATUS_HEALTH_FAIL != 0 {
                return Err(TrngError { status });
            }
            if status & mock_peripheral::STATUS_DATA_READY != 0 {
                return Ok(mock_peripheral::read_data());
            }
            core::hint::spin_loop();
        }
    }
}

/// The TRNG as a rand_core 0.10 fallible generator: every seeding API that takes
/// a `TryRng` (`SeedableRng::try_from_rng`) can now read it.
impl TryRng for Trng {
    type Error = TrngError;

    fn try_next_u32(&mut self) -> Result<u32, TrngError> {
        self.read_word()
    }

    fn try_next_u64(&mut self) -> Result<u64, TrngError> {
        let low = self.read_word()?;
        let high = self.read_word()?;
        Ok(u64::from(high) << 32 | u64::from(low))
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), TrngError> {
        for chunk in dst.chunks_mut(4) {
            let word = self.read_word()?.to_le_bytes();
            chunk.copy_from_slice(&word[..chunk.len()]);
        }
        Ok(())
    }
}

/// A hardware TRNG is meant for keys: mark it so (a real one would only get this
/// after the vendor's entropy assessment).
impl TryCryptoRng for Trng {}

/// Words of raw TRNG output hashed into one `from_key` seed: 64 words (2048 raw
/// bits) for a 256-bit seed, enough if the source delivers at least 1/8 bit of
/// entropy per raw bit. Take the figure from the peripheral's entropy assessment.
const RAW_WORDS: usize = 64;

/// Gathers `RAW_WORDS` raw words as bytes, or the TRNG's error.
fn raw_samples(trng: &mut Trng) -> Result<[u8; RAW_WORDS * 4], TrngError> {
    let mut raw = [0u8; RAW_WORDS * 4];
    for chunk in raw.chunks_exact_mut(4) {
        chunk.copy_from_slice(&trng.read_word()?.to_le_bytes());
    }
    Ok(raw)
}

fn main() {
    let mut trng = Trng::take();

    // 1. The TRNG as a seed source: `try_from_rng` reads exactly one seed
    //    (136 bytes for the sponge generators, 32 for the others).
    let mut rng = TurboShakeRng::try_from_rng(&mut trng).expect("TRNG healthy");
    println!("try_from_rng: first u64 {:#018x}", rng.next_u64());

    // A failed health test is an error, not a weak generator.
    mock_peripheral::inject_fault();
    let failed = ChaCha20KeyErasureRng::try_from_rng(&mut trng);
    assert_eq!(
        failed.as_ref().err(),
        Some(&TrngError {
            status: mock_peripheral::STATUS_HEALTH_FAIL
        })
    );
    println!("try_from_rng after a fault: {}", failed.unwrap_err());

    // `from_rng` takes an infallible generator: use it to derive independent
    // generators (per task, per connection) from one seeded from the TRNG, so
    // the TRNG is read once at boot.
    let mut per_task = ChaCha20KeyErasureRng::from_rng(&mut rng);
    println!(
        "from_rng (derived): first u64 {:#018x}",
        per_task.next_u64()
    );

    // 2. Conditioning: hash many raw words into the seed. `from_key` is SHAKE256
    //    (`ShakeRng`) / TurboSHAKE256 of the key material, so the generator is as
    //    unpredictable as the whole batch, up to its 256-bit security level.
    let raw = raw_samples(&mut trng).expect("TRNG healthy");
    let mut conditioned = ShakeRng::from_key(&raw);
    let mut first = [0u8; 16];
    conditioned.fill_bytes(&mut first);
    println!(
        "from_key ({} raw bytes): first bytes {first:02x?}",
        raw.len()
    );
    // The stream is SHAKE256(raw) for its first 1088 bytes, checked here against
    // the crate's own XOF (itself checked against FIPS 202 vectors in the tests).
    let expected: [u8; 16] = {
        let mut xof = ratchet_rng::xof::Shake256::new();
        xof.absorb(&raw);
        let mut out = [0u8; 16];
        xof.finalize().squeeze(&mut out);
        out
    };
    assert_eq!(first, expected);

    // 3. getrandom's custom backend: `trng_fill` is the function the hook calls.
    let mut buf = [0u8; 32];
    getrandom_custom_backend::trng_fill(&mut buf).expect("TRNG healthy");
    mock_peripheral::inject_fault();
    let fault = getrandom_custom_backend::trng_fill(&mut buf).unwrap_err();
    println!("custom getrandom backend: 32 bytes read; after a fault: {fault}");
    // With the backend compiled in (`--cfg getrandom_backend="custom"`), the
    // OS-seeded constructors read the TRNG through it.
    #[cfg(getrandom_backend = "custom")]
    {
        let mut os_seeded = TurboShakeRng::try_from_os_rng().expect("TRNG healthy");
        println!(
            "from_os_rng through the custom backend: first u64 {:#018x}",
            os_seeded.next_u64()
        );
    }
    #[cfg(not(getrandom_backend = "custom"))]
    println!(
        "from_os_rng used the OS here; build with \
         RUSTFLAGS='--cfg getrandom_backend=\"custom\"' to route it to the TRNG"
    );
}

/// How the OS-seeded constructors (`from_os_rng`, `try_from_os_rng`, and
/// `ratchet_rng::rng()` where `std` exists) work on bare metal: `getrandom` 0.4
/// (which this crate uses, feature `sys_rng`) has no source on `*-none-*` targets,
/// but takes a user-provided one.
///
/// 1. Set the cfg in the firmware's `.cargo/config.toml`, in the same `rustflags`
///    list as `-C link-arg=-Tlink.x`:
///    `[target.thumbv7em-none-eabihf] rustflags = ["-C", "link-arg=-Tlink.x", "--cfg", 'getrandom_backend="custom"']`.
///    Not in `RUSTFLAGS`: the variable replaces that list, and without the linker
///    script the firmware comes out empty (the template `examples/firmware` and
///    docs/NO_STD.md show the whole set-up). On the host, as below, the variable
///    is fine.
/// 2. Define, once, in the firmware's root crate, the function below: getrandom
///    calls `__getrandom_v03_custom(dest, len)` and expects `len` bytes at `dest`
///    or an error. (The name keeps `v03` in getrandom 0.4.)
/// 3. Enable `ratchet-rng`'s `sys_rng` feature (without `thread_rng`).
///
/// This example compiles the hook only under that cfg; `trng_fill`, which does
/// the work, is compiled and run in every build. On the host,
/// `RUSTFLAGS='--cfg getrandom_backend="custom"' cargo run --example firmware_seed`
/// (every crate is rebuilt with the flag) routes `from_os_rng()` to the stand-in
/// TRNG.
mod getrandom_custom_backend {
    use super::Trng;

    /// Error code reported to getrandom when the TRNG fails (getrandom's
    /// `Error::new_custom` range).
    const TRNG_FAILED: u16 = 1;

    /// Fills `buf` from the TRNG, or reports its failure to getrandom.
    pub fn trng_fill(buf: &mut [u8]) -> Result<(), getrandom::Error> {
        // On a board the peripheral handle is global (taken at boot, behind a
        // critical section); the mock peripheral is global state already.
        let mut trng = Trng::take();
        ratchet_rng::rand_core::TryRng::try_fill_bytes(&mut trng, buf)
            .map_err(|_| getrandom::Error::new_custom(TRNG_FAILED))
    }

    /// getrandom's custom-backend hook (getrandom 0.4 README, "Custom backend").
    ///
    /// # Safety
    /// getrandom passes `len` writable, possibly uninitialised, bytes at `dest`.
    #[cfg(getrandom_backend = "custom")]
    #[unsafe(no_mangle)]
    unsafe extern "Rust" fn __getrandom_v03_custom(
        dest: *mut u8,
        len: usize,
    ) -> Result<(), getrandom::Error> {
        // SAFETY: `dest` is valid for `len` writes (getrandom's contract); zeroing
        // first makes every byte initialised before a `&mut [u8]` is formed.
        unsafe { core::ptr::write_bytes(dest, 0, len) };
        // SAFETY: `dest` is valid for `len` bytes, now initialised, and nothing
        // else refers to them during this call.
        let buf = unsafe { core::slice::from_raw_parts_mut(dest, len) };
        trng_fill(buf)
    }
}
