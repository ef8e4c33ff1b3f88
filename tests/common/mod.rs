//! Helpers shared by the integration tests.
#![allow(dead_code)] // each test crate uses a different subset

/// Decodes lower- or upper-case hex; panics on malformed input (test data only).
pub fn hex(s: &str) -> Vec<u8> {
    let s = s.trim();
    assert!(s.len().is_multiple_of(2), "odd-length hex");
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex digit"))
        .collect()
}

/// The value of `key: value` in a vector file whose other lines are `#` comments.
pub fn field<'a>(file: &'a str, key: &str) -> &'a str {
    file.lines()
        .filter(|l| !l.starts_with('#'))
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
        .unwrap_or_else(|| panic!("no field {key}"))
        .trim()
}

/// The next `len` bytes of `rng`, from one `fill_bytes`.
pub fn one_fill<R: ratchet_rng::rand_core::Rng>(rng: &mut R, len: usize) -> Vec<u8> {
    let mut out = vec![0u8; len];
    rng.fill_bytes(&mut out);
    out
}

/// Proptest cases per property: `default`, or `RATCHET_RNG_PROPTEST_CASES` (CI
/// lowers it under emulation; never zero).
pub fn proptest_config(default: u32) -> proptest::prelude::ProptestConfig {
    let cases = std::env::var("RATCHET_RNG_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(default);
    proptest::prelude::ProptestConfig::with_cases(cases)
}

// --- the rand 0.8 / 0.9 compatibility tests (compat_rand08.rs, compat_rand09.rs) ---

/// A seed with a fixed pattern, of any seed type.
pub fn pattern_seed<S: Default + AsMut<[u8]>>(tweak: u8) -> S {
    let mut seed = S::default();
    for (i, b) in seed.as_mut().iter_mut().enumerate() {
        *b = (i as u8).wrapping_mul(7).wrapping_add(tweak);
    }
    seed
}

/// The next `len` bytes of `rng` through the `rand_core` 0.10 `fill_bytes`.
pub fn fill_010<R: ratchet_rng::rand_core::Rng>(rng: &mut R, len: usize) -> Vec<u8> {
    let mut out = vec![0u8; len];
    rng.fill_bytes(&mut out);
    out
}

#[derive(Clone, Copy, Debug)]
pub enum Op {
    Fill(usize),
    TryFill(usize),
    U32,
    U64,
}

/// Calls crossing the refill boundaries of a generator that refills `refill`
/// bytes at a time: unaligned reads, lengths around one refill, a multi-refill
/// fill, and words read across a boundary.
pub fn ops(refill: usize) -> Vec<Op> {
    use Op::*;
    vec![
        Fill(0),
        Fill(1),
        U32,
        Fill(3),
        U64,
        TryFill(refill - 1),
        U32,
        Fill(refill + 1),
        U64,
        U64,
        TryFill(0),
        Fill(2 * refill + 7),
        U32,
        Fill(refill - 9),
        U64,
        Fill(5),
    ]
}
