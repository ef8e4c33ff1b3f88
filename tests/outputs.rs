//! What the generators output, one module per file: the golden streams
//! (`golden`), other implementations' vectors (`reference_streams`,
//! `randomshake`, `xof_oracle`), one stream whatever the call pattern (`streams`,
//! `sponge_generators`), `SeedTree` (`seed_tree`), the fuzzers' regressions
//! (`fuzz_regressions`), fork safety (`fork`), and the source scan for
//! secret-dependent branches (`ct_source_scan`). Run one by module:
//! `cargo test --test outputs -- golden::`.
//!
//! One binary rather than ten: CI links every test binary in every configuration
//! (Cargo.toml's `autotests = false` says why). Each module states the features it
//! needs with `#![cfg]`.

mod common;

mod ct_source_scan;
mod fork;
mod fuzz_regressions;
mod golden;
mod randomshake;
mod reference_streams;
mod seed_tree;
mod sponge_generators;
mod streams;
mod xof_oracle;

/// Cargo.toml sets `autotests = false`, so a new `tests/*.rs` would build nowhere
/// (and its tests never run) unless it is a `[[test]]` there or a module of one of
/// the three binaries that gather files (compat, contracts, outputs).
#[cfg(target_os = "linux")]
#[test]
fn every_test_file_is_a_target_or_a_module() {
    let manifest = include_str!("../Cargo.toml");
    let targets = manifest
        .split("[[test]]\nname = \"")
        .skip(1)
        .filter_map(|s| s.split('"').next());
    let roots = [
        include_str!("compat.rs"),
        include_str!("contracts.rs"),
        include_str!("outputs.rs"),
    ];
    let modules = roots
        .iter()
        .flat_map(|r| r.lines())
        .filter_map(|l| l.strip_prefix("mod ")?.strip_suffix(';'));
    let built: std::collections::HashSet<&str> = targets
        .chain(modules)
        .chain(["compat", "contracts", "outputs"])
        .collect();
    let mut files = 0;
    for entry in std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/tests")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if let Some(stem) = name.strip_suffix(".rs") {
            files += 1;
            assert!(
                built.contains(stem),
                "tests/{name} is neither a [[test]] in Cargo.toml nor a module of tests/compat.rs, \
                 tests/contracts.rs or tests/outputs.rs: it would never build"
            );
        }
    }
    assert!(files > 20, "only {files} files in tests/");
}
