//! ratchet-rng on a 32-bit RISC-V core: the twin of examples/firmware (the same
//! program, on riscv-rt and riscv-semihosting).
//!
//! `cargo run --release` builds this for `riscv32imac-unknown-none-elf` and runs it
//! under QEMU's `virt` board (`.cargo/config.toml`), which prints through
//! semihosting and exits with this program's status. On a board, replace
//! `read_trng_word` with your chip's TRNG and the runner with your probe's.
#![no_std]
#![no_main]

use core::sync::atomic::{AtomicU32, Ordering::Relaxed};

use ratchet_rng::rand_core::{Rng, SeedableRng, TryRng};
use ratchet_rng::{AesCtrPoolRng, ChaChaKeyErasureRng};
use riscv_rt::entry;
use riscv_semihosting::{debug, hprintln};

/// The TRNG reported an error (a failed health test, a seed or clock error).
#[derive(Debug)]
struct TrngError;

impl core::fmt::Display for TrngError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("the TRNG reported an error")
    }
}

impl core::error::Error for TrngError {}

/// The state of the stand-in below.
static STAND_IN: AtomicU32 = AtomicU32::new(0x2545_f491);

/// One 32-bit word from the TRNG.
///
/// A STAND-IN, NOT RANDOM: QEMU's board has no TRNG, so this returns the next
/// word of a fixed sequence (xorshift32), and the program prints the same lines
/// on every run. On a board: wait for the data-ready flag, return `Err` if an
/// error flag is set, else read the data register (ESP32-C3: `RNG_DATA_REG`, with
/// an entropy source on, the RF subsystem or the SAR ADC, as its manual requires).
fn read_trng_word() -> Result<u32, TrngError> {
    let mut x = STAND_IN.load(Relaxed);
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    STAND_IN.store(x, Relaxed);
    Ok(x)
}

/// The TRNG as rand_core's fallible generator: what `try_from_rng` reads.
struct Trng;

impl TryRng for Trng {
    type Error = TrngError;

    fn try_next_u32(&mut self) -> Result<u32, TrngError> {
        read_trng_word()
    }

    fn try_next_u64(&mut self) -> Result<u64, TrngError> {
        let low = read_trng_word()?;
        Ok(u64::from(read_trng_word()?) << 32 | u64::from(low))
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), TrngError> {
        for chunk in dst.chunks_mut(4) {
            chunk.copy_from_slice(&read_trng_word()?.to_le_bytes()[..chunk.len()]);
        }
        Ok(())
    }
}

/// getrandom's custom backend (`--cfg getrandom_backend="custom"` in
/// `.cargo/config.toml`): `from_os_rng()` and `try_from_os_rng()` read the TRNG
/// through it. Defined once, in the firmware, never in a library.
///
/// # Safety
/// getrandom passes `len` writable, possibly uninitialised, bytes at `dest`.
#[unsafe(no_mangle)]
unsafe extern "Rust" fn __getrandom_v03_custom(
    dest: *mut u8,
    len: usize,
) -> Result<(), getrandom::Error> {
    // SAFETY: `dest` is valid for `len` writes (getrandom's contract); zeroing
    // them first makes every byte initialised before the slice is formed.
    unsafe { core::ptr::write_bytes(dest, 0, len) };
    // SAFETY: `len` initialised bytes at `dest`, used by nothing else meanwhile.
    let buf = unsafe { core::slice::from_raw_parts_mut(dest, len) };
    Trng.try_fill_bytes(buf)
        .map_err(|TrngError| getrandom::Error::new_custom(1))
}

#[entry]
fn main() -> ! {
    // 1. From the TRNG directly: reads one 32-byte seed, or returns its error.
    let mut rng = match ChaChaKeyErasureRng::try_from_rng(&mut Trng) {
        Ok(rng) => rng,
        Err(error) => fail(&error),
    };
    hprintln!("ChaCha8, seeded from the TRNG: {:#018x}", rng.next_u64());
    let mut key = [0u8; 16];
    rng.fill_bytes(&mut key);
    hprintln!("a 128-bit key: {:02x?}", key);

    // 2. Through getrandom: the same TRNG, via the custom backend above.
    let mut pool = match AesCtrPoolRng::try_from_os_rng() {
        Ok(pool) => pool,
        Err(error) => fail(&error),
    };
    hprintln!("AES-CTR pool, from getrandom: {:#010x}", pool.next_u32());

    // 3. Further generators from the first, without reading the TRNG again.
    let mut task = ChaChaKeyErasureRng::from_rng(&mut rng);
    hprintln!("ChaCha8, derived from the first: {:#018x}", task.next_u64());

    hprintln!("done");
    exit(debug::EXIT_SUCCESS)
}

/// Prints the error and exits with status 1.
fn fail(error: &dyn core::error::Error) -> ! {
    hprintln!("error: {}", error);
    exit(debug::EXIT_FAILURE)
}

/// Ends QEMU's run with this status (`EXIT_SUCCESS`: 0, `EXIT_FAILURE`: 1). On a
/// board without a debugger attached, a semihosting call stops the core instead:
/// there, loop or reset.
fn exit(status: debug::ExitStatus) -> ! {
    debug::exit(status);
    loop {
        riscv::asm::wfi();
    }
}

/// A panic prints its message and exits with status 1.
#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    hprintln!("{}", info);
    exit(debug::EXIT_FAILURE)
}
