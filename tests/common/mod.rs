//! Helpers shared by the integration tests.
#![allow(dead_code)] // each test crate uses a different subset

pub mod compat;
pub mod oracle;
pub mod reentry;
pub mod saveable;
pub mod stream_split;

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
