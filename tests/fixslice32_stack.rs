//! The 32-bit AES kernel (`aes/fixslice32.rs`, reached through `hazmat` on this
//! 64-bit build) leaves no word of an erased or current key, of its round keys
//! or of the first round's S-box planes, nor of its output, on the stack below
//! its caller: its frames are zeroed (`scrub_stack`) before it returns (issue
//! 31). The same check runs on the Cortex-M4F and RISC-V firmware
//! (`.ci/firmware`, its `stack residue` check), with the same secret words
//! (`tests/common/fixslice32_secrets.rs`, computed from FIPS 197 and the
//! kernel's documented layout, not by the kernel).
//!
//! As in `tests/scalar32_stack.rs`: the kernel runs 32 KiB further down the
//! stack than the scan's own code, and the scan reads that part of the stack
//! through `/proc/self/mem`, looking for every secret 32-bit word at every
//! 4-byte offset (a random word matches by chance about once in 2^32 tries).
//!
//! Shown to fail: `.ci/mutants/fixslice32-stack-unscrubbed.patch` removes the
//! scrub, and this test then reports the kernel's spilled S-box and round-key
//! planes.
#![cfg(all(target_os = "linux", target_pointer_width = "64", not(miri)))]

#[path = "common/fixslice32_secrets.rs"]
mod secrets;

#[path = "common/stack_scan.rs"]
mod stack_scan;

use ratchet_rng::hazmat;
use stack_scan::{DEPTH, deep, read_memory, stack_address};

/// Stack scanned below `DEPTH`: the kernel's frames and then some.
const SCAN: usize = 8 * 1024;

/// Bytes of one pool's output.
const POOL_BYTES: usize = 4064;

/// A secret word and what it is.
type Secret = (u32, String);

/// The secrets of the pools under `keys` (each key's words, round keys and
/// S-box planes), the words of `extra` (output bytes, the current key), sorted
/// for search; 0 and all-ones left out (they are everywhere).
fn secrets_of(keys: &[[u8; 32]], extra: &[(&[u8], &str)]) -> Vec<Secret> {
    let mut all = Vec::new();
    for (k, key) in keys.iter().enumerate() {
        for (i, w) in secrets::secret_words(key).into_iter().enumerate() {
            all.push((w, format!("key {k}: {}", secrets::kind(i))));
        }
    }
    for (bytes, what) in extra {
        for chunk in bytes.chunks_exact(4) {
            let w = u32::from_le_bytes(chunk.try_into().unwrap());
            all.push((w, (*what).to_owned()));
            all.push((w.swap_bytes(), (*what).to_owned()));
        }
    }
    all.retain(|(w, _)| *w != 0 && *w != !0);
    all.sort_unstable();
    all.dedup_by_key(|(w, _)| *w);
    all
}

/// The secret words in the [`SCAN`] bytes below `low`: (address, word, what).
fn hits_below(low: usize, secrets: &[Secret]) -> Vec<(usize, u32, String)> {
    read_memory(low - SCAN, SCAN)
        .chunks_exact(4)
        .enumerate()
        .filter_map(|(i, w)| {
            // Native order: the planes are `u32`s in memory (s390x too).
            let w = u32::from_ne_bytes(w.try_into().unwrap());
            let at = secrets.binary_search_by_key(&w, |(s, _)| *s).ok()?;
            Some((low - SCAN + 4 * i, w, secrets[at].1.clone()))
        })
        .collect()
}

fn assert_no_hits(what: &str, hits: &[(usize, u32, String)]) {
    let mut kinds: Vec<&str> = hits.iter().map(|(_, _, k)| k.as_str()).collect();
    kinds.sort_unstable();
    kinds.dedup();
    assert!(
        hits.is_empty(),
        "{what}: {} secret words on the stack below the kernel's caller ({}): {:x?}",
        hits.len(),
        kinds.join(", "),
        &hits[..hits.len().min(12)]
    );
}

/// Distinct, random-looking key bytes.
fn test_key(salt: u8) -> [u8; 32] {
    core::array::from_fn(|i| (i as u8).wrapping_mul(0x9d) ^ 0x5b ^ salt.rotate_left(3))
}

#[test]
fn secret_words_follow_the_kernel() {
    // The shared computation against the kernel itself: the next key (an
    // AES-256 encryption) and FIPS 197 C.3.
    let key = test_key(1);
    let mut got = key;
    let mut out = vec![[0u8; POOL_BYTES]; 1];
    hazmat::aes_fill_pools_fixslice32(&mut got, &mut out);
    assert_eq!(got, secrets::next_key(&key));
    let table = secrets::sbox_table();
    let w = secrets::key_schedule(&core::array::from_fn(|i| i as u8), &table);
    let plaintext = core::array::from_fn(|i| (i as u8) * 0x11);
    assert_eq!(
        secrets::encrypt(&w, &table, plaintext),
        [
            0x8e, 0xa2, 0xb7, 0xca, 0x51, 0x67, 0x45, 0xbf, 0xea, 0xfc, 0x49, 0x90, 0x4b, 0x49,
            0x60, 0x89
        ]
    );
}

#[test]
fn fixslice32_fill_pools_leaves_no_secret_word_on_the_stack() {
    let old_key = test_key(2);
    let mut key = Box::new(old_key);
    let mut out = vec![[0u8; POOL_BYTES]; 2];
    let top = stack_address();
    let low = deep(&mut || {
        hazmat::aes_fill_pools_fixslice32(&mut key, &mut out);
    });
    assert!(top > low + DEPTH / 2, "the padding is below this frame");
    // Two pools: the seed key and the next are erased, the third is current.
    let middle = secrets::next_key(&old_key);
    assert_eq!(*key, secrets::next_key(&middle));
    let secrets = secrets_of(
        &[old_key, middle],
        &[(&key[..], "current key"), (out.as_flattened(), "output")],
    );
    assert_no_hits("fill_pools", &hits_below(low, &secrets));
}

#[test]
fn fixslice32_ctr_keystream_leaves_no_secret_word_on_the_stack() {
    let key = Box::new(test_key(3));
    let mut out = vec![[0u8; 16]; 7];
    let low = deep(&mut || {
        hazmat::aes_ctr_keystream_fixslice32(&key, u128::MAX - 2, &mut out);
    });
    let secrets = secrets_of(&[*key], &[(out.as_flattened(), "output")]);
    assert_no_hits("ctr_keystream", &hits_below(low, &secrets));
}
