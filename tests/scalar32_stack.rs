//! The 32-bit scalar ChaCha kernel (`chacha/scalar32.rs`, reached through
//! `hazmat` on this 64-bit build) leaves no word of the old key, the next key
//! or its output on the stack below its caller: its spilled state and key words
//! are zeroed (`scrub_stack`) before it returns.
//!
//! The kernel runs 32 KiB further down the stack than the scan's own code, so
//! that whatever it left there is still there when the scan looks; the scan
//! reads that part of the stack through `/proc/self/mem` and looks for every
//! 32-bit word of the secrets at every 4-byte offset (a random word matches by
//! chance about once in 2^32 tries: a false hit is out of reach here).
//!
//! Shown to fail: `.ci/mutants/scalar32-stack-unscrubbed.patch` removes the
//! scrub, and this test then reports the kernel's spilled words.
#![cfg(all(target_os = "linux", target_pointer_width = "64", not(miri)))]

#[path = "common/stack_scan.rs"]
mod stack_scan;

use ratchet_rng::hazmat;
use stack_scan::{DEPTH, deep, read_memory, stack_address};

/// Stack scanned below `DEPTH`: the kernel's frames and then some.
const SCAN: usize = 8 * 1024;

#[test]
fn scalar32_leaves_no_secret_word_on_the_stack() {
    // Distinct, random-looking words (no zero, no repeats).
    let old_key: [u32; 8] =
        core::array::from_fn(|i| 0x9e37_79b9u32.wrapping_mul(2 * i as u32 + 1) ^ 0x5bd1_e995);
    let mut key = Box::new(old_key);
    let mut out = Box::new([0u8; 992]);
    let top = stack_address();
    let low = deep(&mut || {
        hazmat::chacha_key_period_scalar32::<8>(&mut key, &mut out);
    });
    assert!(top > low + DEPTH / 2, "the padding is below this frame");

    // Secrets: the old key, the next key and every output word.
    let mut secrets: Vec<u32> = old_key.to_vec();
    secrets.extend_from_slice(&key[..]);
    secrets.extend(
        out.chunks_exact(4)
            .map(|w| u32::from_le_bytes(w.try_into().unwrap())),
    );
    secrets.sort_unstable();
    secrets.dedup();

    let stack = read_memory(low - SCAN, SCAN);
    let hits: Vec<(usize, u32)> = stack
        .chunks_exact(4)
        .enumerate()
        .map(|(i, w)| {
            (
                low - SCAN + 4 * i,
                u32::from_le_bytes(w.try_into().unwrap()),
            )
        })
        .filter(|(_, w)| secrets.binary_search(w).is_ok())
        .collect();
    assert!(
        hits.is_empty(),
        "{} secret words on the stack below the kernel's caller: {:x?}",
        hits.len(),
        &hits[..hits.len().min(16)]
    );
}
