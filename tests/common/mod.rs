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
