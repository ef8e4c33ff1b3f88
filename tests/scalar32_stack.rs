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

use std::fs::File;
use std::hint::black_box;
use std::io::{Read, Seek, SeekFrom};

use ratchet_rng::hazmat;

/// Stack between the scan's frame and the kernel's.
const DEPTH: usize = 32 * 1024;
/// Stack scanned below `DEPTH`: the kernel's frames and then some.
const SCAN: usize = 8 * 1024;

/// The address of a local of the caller's frame: about its stack pointer.
#[inline(never)]
fn stack_address() -> usize {
    let marker = 0u8;
    black_box(&marker) as *const u8 as usize
}

/// Runs `f` at least [`DEPTH`] bytes further down the stack; returns the
/// address of the padding's low end (the kernel's frames are below it).
#[inline(never)]
fn deep(f: &mut dyn FnMut()) -> usize {
    let padding = [0u8; DEPTH];
    black_box(&padding);
    f();
    black_box(&padding);
    padding.as_ptr() as usize
}

/// Reads `len` bytes of this process's memory at `address`.
fn read_memory(address: usize, len: usize) -> Vec<u8> {
    let mut mem = File::open("/proc/self/mem").expect("/proc/self/mem");
    mem.seek(SeekFrom::Start(address as u64)).expect("seek");
    let mut bytes = vec![0u8; len];
    mem.read_exact(&mut bytes).expect("read the stack");
    bytes
}

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
