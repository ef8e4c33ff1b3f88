//! Firmware-shaped use of every generator with no allocator (see `Cargo.toml`).
#![no_std]

use core::panic::PanicInfo;

use ratchet_rng::rand_core::{Rng, SeedableRng};
use ratchet_rng::{
    AesCtrPoolRng, ChaCha12KeyErasureRng, ChaCha20KeyErasureRng, ChaChaKeyErasureRng, ShakeRng,
    TurboShakeRng,
};

fn fill<R: Rng>(mut rng: R, out: &mut [u8]) -> u64 {
    rng.fill_bytes(out);
    rng.next_u64()
}

/// Fills `out` (`len` bytes at `out`) from the generator `which` keyed by `key`
/// (`key_len` bytes), and returns the next `u64`. Exported so the linker keeps it.
///
/// # Safety
/// `key` and `out` point to `key_len` / `len` valid bytes; `out` is writable and
/// does not overlap `key`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ratchet_fill(
    which: u32,
    key: *const u8,
    key_len: usize,
    out: *mut u8,
    len: usize,
) -> u64 {
    // SAFETY: the caller guarantees `key_len` readable bytes at `key`.
    let key = unsafe { core::slice::from_raw_parts(key, key_len) };
    // SAFETY: the caller guarantees `len` writable bytes at `out`, not aliased.
    let out = unsafe { core::slice::from_raw_parts_mut(out, len) };
    let mut seed = [0u8; 32];
    seed.iter_mut().zip(key).for_each(|(s, k)| *s = *k);
    match which {
        0 => fill(TurboShakeRng::from_key(key), out),
        1 => fill(ShakeRng::from_key(key), out),
        2 => fill(ChaChaKeyErasureRng::from_seed(seed), out),
        3 => fill(ChaCha12KeyErasureRng::from_key(key), out),
        4 => fill(ChaCha20KeyErasureRng::from_key(key), out),
        _ => fill(AesCtrPoolRng::from_seed(seed), out),
    }
}

#[panic_handler]
fn panic(_: &PanicInfo) -> ! {
    loop {}
}
