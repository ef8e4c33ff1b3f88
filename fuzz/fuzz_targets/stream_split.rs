//! Differential target for every generator: for a key and a sequence of
//! reads taken from the fuzzer's input, the reads must equal consecutive slices
//! of one long `fill_bytes` from a second generator with the same key, and
//! `from_key` must be deterministic (it never panics, whatever the bytes).
//!
//! The property and the input layout are in `tests/common/stream_split.rs`,
//! shared with the regression tests in `tests/fuzz_regressions.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../tests/common/stream_split.rs"]
mod stream_split;

fuzz_target!(|data: &[u8]| stream_split::stream_split(data));
