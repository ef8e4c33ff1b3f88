//! The step table: what CI checks, in priority order. Each step names its lane (its build directory, `target/<lane>`:
//! one step per lane at a time, in this order), its budget in seconds, the steps it needs, and its work (a command, or a
//! function of checks.rs). CONTRIBUTING.md shows `cargo xtask ci --list`, this table's summary.

use crate::checks::{self as c, cmd, cmd_then, sh};
use crate::runner::{Cpu, Ctx, NEEDS, Run, Step, list};
use std::path::Path;

fn step(name: impl Into<String>, lane: &'static str, budget: u64, run: Run) -> Step {
    Step { name: name.into(), needs: vec![], lane, slots: 1, budget, env: vec![], run }
}

impl Step {
    fn needs(mut self, names: &[&str]) -> Step {
        self.needs.extend(names.iter().map(|n| n.to_string()));
        self
    }
    fn env(mut self, kv: &[(&str, &str)]) -> Step {
        self.env.extend(kv.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        self
    }
    fn slots(mut self, n: usize) -> Step {
        self.slots = n;
        self
    }
}

const MIRI_AVX512: c::Env = &[
    ("RUSTFLAGS", "-C target-feature=+avx512f,+avx512vl,+aes,+vaes"),
    ("RATCHET_RNG_EXPECT_BACKENDS", "x86_avx2,x86_aesni,x86_vaes256,x86_avx512,x86_vaes512"),
];
const MIRI_AVX2: c::Env =
    &[("RUSTFLAGS", "-C target-feature=+avx2,+aes,+vaes"), ("RATCHET_RNG_EXPECT_BACKENDS", "x86_avx2,x86_aesni,x86_vaes256")];
const INSPECT: &[(&str, &str)] = &[("RATCHET_RNG_INSPECT", "1")];
const CUSTOM_GETRANDOM: &[(&str, &str)] = &[("RUSTFLAGS", "--cfg getrandom_backend=\"custom\"")];
const PORTABLE32: &[(&str, &str)] = &[("RATCHET_RNG_PORTABLE32", "1"), ("CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER", c::VALGRIND)];
const LAZY: &[(&str, &str)] =
    &[("RATCHET_RNG_PORTABLE32", "1"), ("RATCHET_RNG_KECCAK_LAZY", "1"), ("CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER", c::VALGRIND)];
const WASI_RUNNER: (&str, &str) = ("CARGO_TARGET_WASM32_WASIP1_RUNNER", "node --disable-warning=ExperimentalWarning .ci/wasi-run.mjs");
const ASAN: &[(&str, &str)] =
    &[("RUSTFLAGS", "-Zsanitizer=address"), ("RATCHET_RNG_PROPTEST_CASES", "16"), ("RATCHET_RNG_LENGTH_SWEEP", "all")];
const README_TEST: &str = "cargo test --all-features (the README's test command)";
const WINDOWS_EMPTY: &str = "tests/fork.rs tests/injection.rs tests/memory_hygiene.rs tests/residue.rs tests/sandbox.rs \
    tests/scalar32_stack.rs tests/fixslice32_stack.rs tests/signals.rs tests/vm_generation.rs";

/// The library's ASan suite with these build switches, expecting these backends.
fn asan(name: &str, switches: &[(&str, &str)], expect: String) -> Step {
    let argv = "cargo +nightly test --all-features --target x86_64-unknown-linux-gnu --lib --test contracts";
    step(name, "asan", 900, cmd(argv)).env(ASAN).env(switches).env(&[("RATCHET_RNG_EXPECT_BACKENDS", &expect)])
}

/// A thread-layer mutant in `lane`'s tree: `cargo test ARGS` must fail in TEST.
fn mutant(lane: &'static str, patch: &'static str, test: &'static str, env: c::Env, args: &str) -> Step {
    let short = test.rsplit("::").next().unwrap();
    step(format!("mutant {patch}: {short} fails"), lane, 900, c::mutant(patch, test, env, &format!("cargo test {args}")))
}

/// A mutant in the mutants' lane: tests/FILE.rs's TEST, built with RATCHET_RNG_INSPECT=1, must fail.
fn inspected(file: &str, patch: &'static str, test: &'static str) -> Step {
    mutant("mutants", patch, test, INSPECT, &format!("--all-features --test {file} -- --exact {test}"))
}

pub fn table(root: &Path, cpu: &Cpu) -> Vec<Step> {
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap_or_default();
    let msrv = manifest.lines().find_map(|l| l.strip_prefix("rust-version = \"")?.strip_suffix('"')).unwrap_or_default();
    let auto = cpu.expect(&NEEDS.iter().map(|(n, _)| *n).collect::<Vec<_>>());
    let ct_expect = ["soft,interleaved32".to_string(), cpu.expect(&["x86_avx2", "x86_aesni"])].join(",").trim_end_matches(',').to_string();
    let x86_static: Vec<String> =
        ["avx2", "aes", "vaes", "avx512f", "avx512vl"].iter().filter(|f| cpu.has(&[f])).map(|f| format!("+{f}")).collect();
    let valgrind = [("CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER", c::VALGRIND), ("RATCHET_RNG_EXPECT_BACKENDS", &*ct_expect)];
    // The seeded generators' verdicts are kept, keyed by the bytes judged (docs/STATISTICS.md).
    let stat_cache = crate::runner::cache_dir().map(|d| format!(" --cache {}", d.join("stat-tests").display())).unwrap_or_default();
    let stat_quick = format!("bash scripts/stat-tests.sh --quick{stat_cache}");
    let has_aes = cpu.has(&["aes"]);
    let own = [".ci/firmware", ".ci/wasm-js", ".ci/wasm-bench", ".ci/clients", ".ci/mca", "examples/mpi"];
    let fmt_own = format!("for m in {}; do cargo fmt --manifest-path $m/Cargo.toml --check; done", own.join(" "));
    let (links, links_negative) = ("python3 scripts/check-doc-links.py", "python3 scripts/check-doc-links.py --negative-control");
    let mut t = vec![
        // ---- quick checks, no build: a stale patch or doc fails in seconds -------------------
        step("backends this CPU has", "meta", 60, Box::new(c::report_backends)),
        step("every .ci/mutants patch applies", "meta", 120, Box::new(c::mutants_apply)),
        step("CONTRIBUTING.md shows `cargo xtask ci --list`", "meta", 60, Box::new(contributing_lists_the_steps)),
        step("cargo fmt --check", "meta", 120, cmd("cargo fmt --all --check")),
        step("cargo fmt --check (fuzz crate)", "meta", 120, cmd("cargo fmt --manifest-path fuzz/Cargo.toml --check")),
        step(format!("cargo fmt --check on {} (their own workspaces)", own.join(", ")), "meta", 120, sh(&fmt_own)),
        step("doc links, README code blocks and length, stability policy, files the guides show", "meta", 300, cmd(links)),
        step("files the guides show: negative control (each file altered by a byte must be reported)", "meta", 300, cmd(links_negative)),
    ];
    // ---- the thread layer's mutants: the longest chains, so they start first -------------------
    for patch in ["residue-by-value-unscrubbed", "residue-by-value-shallow-unscrubbed", "short-batch-unscrubbed", "stack-mark-consumed"] {
        let patch = format!("{patch}.patch").leak();
        t.push(mutant("mutants", patch, "no_key_or_unread_output_outside_the_state_pages", INSPECT, "--all-features --test residue"));
    }
    t.extend([
        inspected("vm_generation", "generation-unchecked.patch", "inspected::reseed_all_threads_discards_every_threads_buffer"),
        inspected("vm_generation", "stale-not-reseeded.patch", "inspected::reseed_all_threads_discards_every_threads_buffer"),
        inspected("vm_generation", "vmclock-torn-page-trusted.patch", "inspected::torn_or_invalid_page_is_never_trusted"),
        inspected("vm_generation", "clone-material-unmixed.patch", "inspected::clones_with_equal_os_seeds_differ_after_reseed_all_threads"),
    ]);
    t.push(step(README_TEST, "host", 1500, Box::new(c::readme_test)));
    for patch in [
        "mix-only-when-stale-at-entry.patch",
        "first-use-unmixed.patch",
        "first-use-nonce-ignored.patch",
        "slow-recheck-generation-dropped.patch",
    ] {
        t.push(inspected("vm_generation", patch, "inspected::clones_with_equal_os_seeds_differ_after_a_bump_anywhere"));
    }
    for (patch, test) in [
        ("in-use-never-set.patch", "take_copied"),
        ("no-revalidation.patch", "take_copied"),
        ("no-revalidation.patch", "slow_served"),
        ("drop-closes-without-mark.patch", "drop_closed"),
        ("page-read-before-mark.patch", "slow_page_read"),
        ("verdict-last-store-wins.patch", "per_thread_seccomp_verdicts_agree"),
        ("atfork-child-keeps-key.patch", "atfork_child_holds_no_parent_key_nor_buffer"),
        ("atfork-child-keeps-other-states.patch", "atfork_child_holds_no_parent_key_nor_buffer"),
        ("slab-not-advised.patch", "raw_fork_child_shares_nothing_without_droppable"),
        ("reserve-outside-the-slab.patch", "reserve_seeds_are_never_shared_with_a_child"),
        ("reserve-unbelieved.patch", "reserve_seeds_are_never_shared_with_a_child"),
        ("reserve-no-live-check.patch", "a_fork_in_the_middle_of_a_refill_leaves_the_child_no_zero_seed"),
        ("reserve-every-seeding.patch", "a_moved_generation_never_takes_from_the_reserve"),
        ("reserve-kept-in-child.patch", "the_fork_hook_zeroes_a_reserve_the_kernel_kept"),
        ("second-layer-never-registered.patch", "fork_handler_registered_by_the_first_use"),
        ("atfork-registered-late.patch", "no_call_after_first_use_is_async_signal_unsafe"),
        ("atfork-registered-late.patch", "a_faked_wipe_is_caught_from_the_first_use"),
        ("advice-of-the-loser.patch", "the_advice_is_the_published_slabs"),
        ("child-wipe-not-pending.patch", "a_child_forked_after_the_recheck_holds_no_parent_key"),
        ("reseed-reentrant-dropped.patch", "a_reentrant_reseed_is_done_as_the_call_ends"),
        ("first-use-touches-buffer.patch", "a_thread_that_draws_once_leaves_its_buffer_untouched"),
        ("generation-unchecked.patch", "take_before_live"),
    ] {
        t.push(inspected("injection", patch, test));
    }
    for (patch, test) in [
        ("try-fill-not-zeroed.patch", "try_fill_failing_after_a_bump_leaves_zeros"),
        ("cpu-random-unchecked.patch", "implausible_cpu_random_output_is_no_source"),
        ("process-restore-dropped-at-read.patch", "a_page_dropped_inside_the_slow_path_is_not_recorded"),
        ("cpu-random-unmixed.patch", "a_new_generation_mixes_the_cpu_random_source"),
        ("vmclock-fifo-blocks.patch", "a_fifo_at_the_device_path_neither_blocks_nor_is_watched"),
        ("vmclock-any-file-mapped.patch", "a_regular_file_or_directory_at_the_device_path_is_not_watched"),
        ("vmclock-torn-probe-off.patch", "a_seqlock_odd_once_at_the_probe_is_watched_and_then_trusted"),
        ("vmclock-fork-probe-lost.patch", "a_child_forked_during_a_probe_is_watched"),
        ("vmclock-unwatched-while-probing.patch", "no_call_serves_unchecked_while_a_probe_is_in_progress"),
        ("vmclock-probe-not-retried.patch", "a_failed_probe_is_retried_on_a_later_slow_path"),
        ("process-restore-unwatched.patch", "a_process_restore_discards_every_threads_buffer"),
        ("process-restore-not-rearmed.patch", "a_process_restore_discards_every_threads_buffer"),
    ] {
        t.push(inspected("vm_generation", patch, Box::leak(format!("inspected::{test}").into_boxed_str())));
    }
    // In the mutants' tree, after their last patch is out: their builds serve it.
    t.push(
        step(
            "introspection tests (RATCHET_RNG_INSPECT=1)",
            "mutants",
            1200,
            c::in_tree(
                "cargo test --all-features --test zeroize \
            --test memory_hygiene --test residue --test sandbox --test injection --test injection_hook --test vm_generation",
            ),
        )
        .env(INSPECT),
    );
    t.extend([
        // ---- the README's commands and the default build's test binaries again ----------------
        step("cargo run --release -p quickstart (the README's demo command)", "host", 600, Box::new(c::readme_demo)),
        step("x86_64 auto: every x86 backend this CPU has runs", "host", 600, cmd("cargo test --all-features --lib"))
            .env(&[("RATCHET_RNG_EXPECT_BACKENDS", &auto)])
            .needs(&[README_TEST]),
        step("x86_64 under qemu -cpu Nehalem (no AVX, no AES): the suites the backends change (lib, contracts, outputs, compat, zeroize)", "host", 1200,
            cmd("cargo test --all-features --lib --test contracts --test outputs --test compat --test zeroize \
            -- --skip fork::a_thousand_forks_give_a_thousand_distinct_outputs --skip fork::raw_forks_give_distinct_outputs"))
            .env(&[("CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER", "qemu-x86_64 -cpu Nehalem"), ("RATCHET_RNG_PROPTEST_CASES", "16")])
            .needs(&[README_TEST]),
        step("constant time under valgrind memcheck (test profile)", "host", 900, cmd("cargo test --all-features --test ct_valgrind")).env(&valgrind),
        step("constant-time negative control must be caught", "host", 600, c::ct_negative(&[], false)),
        // ---- emulation: aarch64 (qemu-user) -----------------------------------------------------
        // RATCHET_RNG_EXPECT_MIDR: the MIDR_EL1 qemu gives each CPU, which the crate must read (`midr_is_read`); the Keccak
        // choice follows the core table (issue 48): `max` (implementer 0) gets soft though it has SHA3.
        step("aarch64 under qemu, default CPU (SHA3, AES, NEON)", "aarch64", 1500, c::emulated_suite("--all-features --target aarch64-unknown-linux-gnu"))
            .env(&[("RATCHET_RNG_EXPECT_BACKENDS", "aarch64_sha3,aarch64_neon,aarch64_aes"), ("RATCHET_RNG_PROPTEST_CASES", "16"),
                ("RATCHET_RNG_EXPECT_MIDR", "0x000f0510")]),
        // The CPU changes the backends, not the thread layer (ChaCha8 on NEON on both CPUs; its fork, signal and sandbox suites ran above).
        step("aarch64 under qemu, QEMU_CPU=cortex-a72 (no SHA3): the suites the backends change (lib, contracts, outputs, compat, zeroize)",
            "aarch64", 1200, cmd("cargo test --all-features --target aarch64-unknown-linux-gnu --lib --test contracts --test outputs --test compat \
            --test zeroize -- --skip fork::a_thousand_forks_give_a_thousand_distinct_outputs --skip fork::raw_forks_give_distinct_outputs"))
            .env(&[("QEMU_CPU", "cortex-a72"), ("RATCHET_RNG_EXPECT_BACKENDS", "aarch64_neon,aarch64_aes"), ("RATCHET_RNG_PROPTEST_CASES", "16"),
                ("RATCHET_RNG_EXPECT_MIDR", "0x410fd083")]),
        step("aarch64 under qemu, QEMU_CPU=neoverse-n1: the core (MIDR_EL1) is read and chooses", "aarch64", 600,
            cmd("cargo test --all-features --target aarch64-unknown-linux-gnu --lib -- backend::"))
            .env(&[("QEMU_CPU", "neoverse-n1"), ("RATCHET_RNG_EXPECT_BACKENDS", "aarch64_neon,aarch64_aes"), ("RATCHET_RNG_EXPECT_MIDR", "0x414fd0c1")]),
        step("aarch64 under qemu with -C target-feature=+sha3,+aes (backend selection)", "aarch64", 900,
            c::static_selection("+sha3,+aes".into(), &["--target", "aarch64-unknown-linux-gnu"], &["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"])),
        step("injection and VM generation tests under qemu-aarch64 (RATCHET_RNG_INSPECT=1)", "aarch64", 1200,
            c::emulated_suite("--all-features --target aarch64-unknown-linux-gnu --test injection --test vm_generation -- --nocapture"))
            .env(&[("RATCHET_RNG_INSPECT", "1"), ("RATCHET_RNG_EXPECT_CPU_RANDOM", "RNDR"), ("RATCHET_RNG_PROPTEST_CASES", "48")]),
        step("mutant keccak-sha3-ranked-first.patch: keccak_detection_consults_the_core_table fails (aarch64)", "aarch64", 600,
            c::mutant("keccak-sha3-ranked-first.patch", "backend::tests::keccak_detection_consults_the_core_table", &[],
                "cargo test --all-features --target aarch64-unknown-linux-gnu --lib -- --exact backend::tests::keccak_detection_consults_the_core_table")),
        step("mutant unknown-advice-unchecked.patch: raw_fork_child_shares_nothing_without_droppable fails (aarch64)", "aarch64", 900,
            c::mutant("unknown-advice-unchecked.patch", "raw_fork_child_shares_nothing_without_droppable", INSPECT,
                "cargo test --all-features --target aarch64-unknown-linux-gnu --test injection -- --exact raw_fork_child_shares_nothing_without_droppable")),
        // ---- aarch64 models: the kernels against their peers under llvm-mca-19 (.ci/mca) ---------
        step("clippy on .ci/mca for aarch64-unknown-linux-gnu", "mca", 600,
            cmd("cargo clippy --release --locked --manifest-path .ci/mca/Cargo.toml --target aarch64-unknown-linux-gnu -- -D warnings")),
        step("aarch64 kernels modelled by llvm-mca-19 against their peers (docs/PERFORMANCE.md)", "mca", 600,
            cmd("python3 scripts/aarch64-models.py --check")),
        // ---- Miri (two processes each: one per aliasing model) ---------------------------------
        // Each Miri lane's build (one process) is a step of its own, beside other work: the two-process step after it finds it built.
        step("Miri: build the lib and contracts test binaries", "miri", 900, c::miri(&[], &["--lib", "--test", "contracts"], [&[], &[]])),
        step("Miri: build the AVX-512 lib test binary", "miri-avx512", 900, c::miri(MIRI_AVX512, &["--lib"], [&[], &[]])),
        step("Miri: build the AVX2 lib and contracts test binaries", "miri-avx2", 900, c::miri(MIRI_AVX2, &["--lib", "--test", "contracts"], [&[], &[]])),
        step("Miri: lib and integration tests, stacked and tree borrows", "miri", 1500, c::miri(&[], &["--lib", "--test", "contracts"], [
            &[&["--test", "contracts", "--", "thread_rng::", "--skip", "soft::", "--skip", "fixslice32::", "--skip", "interleaved32::",
                "--skip", "fixslice32_matches_soft", "--skip", "scalar32_matches_soft", "--skip", "lanes_match_spec"],
                &["--lib", "--", "--skip", "soft::", "--skip", "fixslice32::", "--skip", "interleaved32::", "--skip", "portable_lazy::",
                "--skip", "aarch64_cpu::", "--skip", "fixslice32_matches_soft", "--skip", "scalar32_matches_soft", "--skip", "lanes_match_spec"]],
            &[&["--lib", "--", "thread::", "backend::", "compat::", "fixslice32_round_keys_are_zeroized_on_drop", "--skip", "thread::state::",
                "--skip", "thread::generator::", "--skip", "aarch64_cpu::"], &["--test", "contracts", "--", "thread_rng::"]],
        ])).slots(2),
        // ---- the suite on other builds: introspection, portable, the Cortex-M firmware -------------

        step("portable backends (RATCHET_RNG_BACKEND=soft)", "soft", 1500, cmd("cargo test --all-features"))
            .env(&[("RATCHET_RNG_BACKEND", "soft"), ("RATCHET_RNG_PROPTEST_CASES", "48")]),
        step("injection and VM generation tests, portable backends (RATCHET_RNG_INSPECT=1 RATCHET_RNG_BACKEND=soft)", "soft", 900,
            cmd("cargo test --all-features --test injection --test vm_generation"))
            .env(&[("RATCHET_RNG_INSPECT", "1"), ("RATCHET_RNG_BACKEND", "soft"), ("RATCHET_RNG_PROPTEST_CASES", "48")]),
        asan("AddressSanitizer: every x86 backend this CPU has", &[], auto.clone()),
    ]);
    t.push(if cpu.has(&["avx512f", "avx512vl"]) {
        asan(
            "x86_64 without AVX-512, under AddressSanitizer",
            &[("RATCHET_RNG_NO_AVX512", "1")],
            cpu.expect(&["x86_avx2", "x86_aesni", "x86_vaes256"]),
        )
    } else {
        let why = "this CPU has no AVX-512: the suites with every backend it has are that configuration";
        step("x86_64 without AVX-512, under AddressSanitizer", "asan", 60, c::skipped(why))
    });
    t.extend([
        asan("x86_64 without AVX-512 and AVX2, under AddressSanitizer", &[("RATCHET_RNG_NO_AVX512", "1"), ("RATCHET_RNG_NO_AVX2", "1")], cpu.expect(&["x86_aesni"])),
        asan("x86_64 without AES instructions, under AddressSanitizer", &[("RATCHET_RNG_NO_AES", "1")], cpu.expect(&["x86_avx2", "x86_avx512"])),
        asan("portable backends, under AddressSanitizer", &[("RATCHET_RNG_BACKEND", "soft")], String::new()),
        step("mutant asan-ctr-tail-past-the-end.patch: ASan catches a keystream written past the end of its buffer", "asan", 900, if has_aes {
            c::caught("asan-ctr-tail-past-the-end.patch", &[],
                "cargo +nightly test --all-features --target x86_64-unknown-linux-gnu --test contracts -- length_sweep::", c::FAILS,
                &["*ERROR: AddressSanitizer: *-buffer-overflow*"])
        } else {
            c::skipped("the mutant plants the bug in the AES instruction kernels, which this CPU lacks")
        })
        .env(ASAN).env(&[("RATCHET_RNG_EXPECT_BACKENDS", &auto)]),
        step("s390x (big-endian) under qemu: cargo test --all-features, 0 skips", "s390x", 1500,
            c::counted(&[("RATCHET_RNG_PROPTEST_CASES", "16")], "--all-features --target s390x-unknown-linux-gnu", 0, "tests/sandbox.rs")),
        step("i686 (32-bit), natively: cargo test --all-features, 0 skips", "i686", 1200, c::counted(&[("RATCHET_RNG_PROPTEST_CASES", "48")],
            "--all-features --target i686-unknown-linux-gnu", 0, "tests/sandbox.rs tests/scalar32_stack.rs tests/fixslice32_stack.rs")),
        step("Wine prefix for the Windows suite", "windows", 600, Box::new(c::wine_prefix)),
        step("x86_64-pc-windows-gnu under Wine: cargo test --all-features, 0 skips", "windows", 1500,
            c::with_wineserver(c::counted(&[("RATCHET_RNG_PROPTEST_CASES", "48")], "--all-features --target x86_64-pc-windows-gnu", 0, WINDOWS_EMPTY)))
            .needs(&["Wine prefix for the Windows suite"]),
        // ---- lints, docs and the builds without tests ----------------------------------------------
        step("cargo clippy", "lint", 900, cmd("cargo clippy --workspace --all-targets --all-features -- -D warnings")),
        step("cargo doc", "lint", 600, cmd("cargo doc --no-deps --all-features")).env(&[("RUSTDOCFLAGS", "-Dwarnings")]),
        step("clippy for aarch64", "lint", 900, cmd("cargo clippy --target aarch64-unknown-linux-gnu --workspace --all-targets --all-features -- -D warnings")),
        step("build --no-default-features", "lint", 300, cmd("cargo build --no-default-features")),
        step("build --no-default-features --features sys_rng", "lint", 300, cmd("cargo build --no-default-features --features sys_rng")),
        step("build --no-default-features --features rand_core_06,rand_core_09", "lint", 300,
            cmd("cargo build --no-default-features --features rand_core_06,rand_core_09")),
        step("no_std build for thumbv7em-none-eabihf", "lint", 300, cmd("cargo build --no-default-features --target thumbv7em-none-eabihf")),
        step("no_std build for thumbv7em-none-eabihf with rand_core_06,rand_core_09,serde", "lint", 300,
            cmd("cargo build --no-default-features --features rand_core_06,rand_core_09,serde --target thumbv7em-none-eabihf")),
        step("no_std build for aarch64-unknown-none", "lint", 300, cmd("cargo build --no-default-features --target aarch64-unknown-none"))
            .env(&[("RUSTFLAGS", "-D warnings")]),
        step("no_std build for aarch64-unknown-none-softfloat", "lint", 300, cmd("cargo build --no-default-features --target aarch64-unknown-none-softfloat"))
            .env(&[("RUSTFLAGS", "-D warnings")]),
        step("no_std build for x86_64-unknown-none", "lint", 300, cmd("cargo build --no-default-features --target x86_64-unknown-none"))
            .env(&[("RUSTFLAGS", "-D warnings")]),
        step("wasm32-unknown-unknown: build --no-default-features", "lint", 300, cmd("cargo build --target wasm32-unknown-unknown --no-default-features"))
            .env(&[("CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS", "-D warnings")]),
        step("wasm32-unknown-unknown: build --no-default-features --features wasm_js", "lint", 300,
            cmd("cargo build --target wasm32-unknown-unknown --no-default-features --features wasm_js"))
            .env(&[("CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS", "-D warnings")]),
        step("wasm32-unknown-unknown: clippy --lib --features wasm_js", "lint", 300,
            cmd("cargo clippy --target wasm32-unknown-unknown --lib --features wasm_js -- -D warnings"))
            .env(&[("CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS", "-D warnings")]),
        step("build.rs rejects unknown values", "lint", 300, Box::new(c::bogus_rejected)),
        step("no_std build for aarch64-unknown-none with +sha3,+aes", "aarch64-sha3-aes", 300,
            cmd("cargo build --no-default-features --target aarch64-unknown-none"))
            .env(&[("RUSTFLAGS", "-D warnings -C target-feature=+sha3,+aes")]),
        step("no-alloc staticlib for thumbv7em-none-eabihf", "no-alloc", 300,
            cmd("cargo build --release --manifest-path .ci/no-alloc/Cargo.toml --target thumbv7em-none-eabihf")),
        step("clippy for thumbv7em-none-eabihf with the lazy Keccak kernel (the assembly rounds)", "thumb-lazy", 300,
            cmd("cargo clippy --no-default-features --target thumbv7em-none-eabihf -- -D warnings"))
            .env(&[("RUSTFLAGS", "--cfg ratchet_rng_keccak_lazy")]),
        // ---- firmware: Cortex-M4F and RISC-V under qemu-system ------------------------------------
        step("clippy on .ci/firmware for thumbv7em-none-eabihf", "firmware", 600,
            cmd("cargo clippy --locked --release --manifest-path .ci/firmware/Cargo.toml --target thumbv7em-none-eabihf -- -D warnings")),
        step("Cortex-M4F under qemu-system-arm: .ci/firmware known answers", "firmware", 600, c::firmware_checks("thumbv7em-none-eabihf", false)),
        step("Cortex-M4F firmware negative control must fail", "firmware", 300, c::firmware_negative("thumbv7em-none-eabihf"))
            .needs(&["Cortex-M4F under qemu-system-arm: .ci/firmware known answers"]),
        step("Cortex-M4F stack-residue check fails without the fixslice32 stack scrub (mutant)", "firmware", 600, Box::new(c::firmware_stack_mutant)),
        step("Cortex-M4F under qemu-system-arm at opt-level 3 (the assembly Keccak rounds): .ci/firmware known answers", "firmware", 600,
            c::firmware_checks("thumbv7em-none-eabihf", true)),
        step("clippy on .ci/firmware for riscv32imac-unknown-none-elf", "firmware", 600,
            cmd("cargo clippy --locked --release --manifest-path .ci/firmware/Cargo.toml --target riscv32imac-unknown-none-elf -- -D warnings")),
        step("RISC-V rv32imac under qemu-system-riscv32: .ci/firmware known answers", "firmware", 600, c::firmware_checks("riscv32imac-unknown-none-elf", false)),
        step("RISC-V rv32imac firmware negative control must fail", "firmware", 300, c::firmware_negative("riscv32imac-unknown-none-elf"))
            .needs(&["RISC-V rv32imac under qemu-system-riscv32: .ci/firmware known answers"]),
        step("firmware benchmark gate (.ci/firmware/measure.sh --check)", "firmware", 900, cmd("bash .ci/firmware/measure.sh --check")),
        step("firmware benchmark gate negative control must fail", "firmware", 300, cmd("bash .ci/firmware/measure.sh --negative-control"))
            .needs(&["firmware benchmark gate (.ci/firmware/measure.sh --check)"]),
        step("firmware template copied out of the checkout: cargo build --release, cargo run --release", "firmware-template", 900,
            c::firmware_template("examples/firmware", "thumbv7em-none-eabihf/release/ratchet-rng-firmware-template", &[".vector_table", ".text"])),
        step("RISC-V firmware template copied out of the checkout: cargo build --release, cargo run --release", "firmware-template", 900,
            c::firmware_template("examples/firmware-riscv", "riscv32imac-unknown-none-elf/release/ratchet-rng-firmware-template-riscv", &[".text"])),
        step("fmt and clippy on examples/firmware (its own workspace)", "firmware-template", 600,
            sh("cd examples/firmware && cargo fmt --check && cargo clippy --locked --release -- -D warnings")),
        step("fmt and clippy on examples/firmware-riscv (its own workspace)", "firmware-template", 600,
            sh("cd examples/firmware-riscv && cargo fmt --check && cargo clippy --locked --release -- -D warnings")),
        // ---- the host's other builds ---------------------------------------------------------------
        step("compat: rand_core_06 alone", "host", 600, c::cmd_then("cargo test --features rand_core_06 --test compat", "test result: ok. 31 passed*")),
        step("compat: rand_core_09 alone", "host", 600, c::cmd_then("cargo test --features rand_core_09 --test compat", "test result: ok. 31 passed*")),
        step("example rand08", "host", 300, cmd("cargo run --profile test --features rand_core_06 --example rand08")),
        step("example backends", "host", 300, cmd("cargo run --profile test --features hazmat --example backends")),
        step("ChaCha8 save/restore against Go", "host", 600, cmd("bash tests/go/chacha8_state/interop.sh")).env(&[("CHACHA8_INTEROP_ROUNDS", "100")]),
        step("stream --path and non-UTF-8 arguments", "host", 300, Box::new(c::stream_paths)),
        step("x86_64 with -C target-feature of this CPU (backend selection)", "host", 600, c::static_selection(x86_static.join(","), &[], &[])),
        step("stream example", "release", 600, Box::new(c::stream_example)),
        step("statistical tests: self-test (the judges can fail)", "release", 600, cmd("bash scripts/stat-tests.sh --self-test")),
        step("statistical tests: quick mode, every generator", "release", 900, cmd(&stat_quick)),
        step("constant time under valgrind memcheck --release", "release", 900, cmd("cargo test --release --all-features --test ct_valgrind")).env(&valgrind),
        step("constant time under valgrind memcheck, 32-bit portable kernels (--release)", "release", 900,
            cmd("cargo test --release --all-features --test ct_valgrind")).env(PORTABLE32).env(&[("RATCHET_RNG_EXPECT_BACKENDS", &ct_expect)]),
        step("constant-time negative control, 32-bit portable kernels (--release)", "release", 600, c::ct_negative(PORTABLE32, true)),
        step("mutant fixslice32-secret-branch.patch: memcheck reports the aes soft check", "release", 900,
            c::caught("fixslice32-secret-branch.patch", PORTABLE32, "cargo test --release --all-features --test ct_valgrind", 97,
                &["*aes soft: key schedule, CTR, pool*"])),
        step("constant time under valgrind memcheck, lazy 32-bit Keccak kernel (--release)", "release", 900,
            cmd("cargo test --release --all-features --test ct_valgrind")).env(LAZY).env(&[("RATCHET_RNG_EXPECT_BACKENDS", &ct_expect)]),
        step("mutant keccak-lazy-secret-branch.patch: memcheck reports the TurboSHAKE check", "release", 900,
            c::caught("keccak-lazy-secret-branch.patch", LAZY, "cargo test --release --all-features --test ct_valgrind", 97,
                &["*TurboShakeRng on interleaved32: seeding, refills*"])),
        step("mutant scalar32-stack-unscrubbed.patch: scalar32_leaves_no_secret_word_on_the_stack fails", "release", 900,
            c::mutant("scalar32-stack-unscrubbed.patch", "scalar32_leaves_no_secret_word_on_the_stack", &[],
                "cargo test --release --features hazmat --test scalar32_stack")),
        step("mutant fixslice32-stack-unscrubbed.patch: fixslice32_fill_pools_leaves_no_secret_word_on_the_stack fails", "release", 900,
            c::mutant("fixslice32-stack-unscrubbed.patch", "fixslice32_fill_pools_leaves_no_secret_word_on_the_stack", &[],
                "cargo test --release --features hazmat --test fixslice32_stack")),
        step("benches compile", "release", 900, cmd("cargo bench -p benches --no-run")),
        // ---- the remaining thread-layer mutants (builds without the inspection cfg) ----------------
        mutant("mutants", "in-use-never-set.patch", "handler_and_interrupted_call_never_share_a_value", &[],
            "--all-features --test signals handler_and_interrupted_call"),
        mutant("mutants", "probe-child-made.patch", "no_process_is_made", &[], "--all-features --test sandbox -- --exact no_process_is_made"),
        mutant("mutants", "short-batch-key-kept.patch", "thread::generator::tests::short_batch_is_the_keystream_with_its_key_erased", &[],
            "--all-features --lib -- --exact thread::generator::tests::short_batch_is_the_keystream_with_its_key_erased"),
        mutant("mutants", "first-use-nonce-ignored.patch", "thread::generator::tests::first_use_mix_is_the_short_batch_nonce_or_a_new_key", &[],
            "--all-features --lib -- --exact thread::generator::tests::first_use_mix_is_the_short_batch_nonce_or_a_new_key"),
        mutant("mutants", "pid-unrecorded-trusted.patch", "thread::state::tests::unrecorded_process_id_is_recorded_or_counts_as_a_fork", &[],
            "--all-features --lib -- --exact thread::state::tests::unrecorded_process_id_is_recorded_or_counts_as_a_fork"),
        mutant("mutants", "fixslice32-round-keys-kept.patch", "aes::tests::fixslice32_round_keys_are_zeroized_on_drop", &[],
            "--all-features --lib aes::tests::fixslice32_round_keys_are_zeroized_on_drop"),
        step("mutant cpuid-lookup-late.patch: first_use_looks_up_the_cpuid_table fails (-C target-feature of this CPU)", "mutants", 900,
            c::static_mutant("cpuid-lookup-late.patch", "backend::x86_cpu::tests::first_use_looks_up_the_cpuid_table", x86_static.join(","))),
        // ---- getrandom's custom backend: OS entropy failure, the reentrant backend -----------------
        step("OS entropy failure (getrandom custom backend)", "os-failure", 900,
            cmd_then("cargo test --all-features --test os_failure", "test result: ok. 1 passed; 0 failed; 0 ignored*")).env(CUSTOM_GETRANDOM),
        step("reentrant custom getrandom backend", "os-failure", 600,
            cmd_then("cargo test --all-features --test reentrant_getrandom", "test result: ok. 1 passed; 0 failed; 0 ignored*")).env(CUSTOM_GETRANDOM),
        step("clippy on tests/os_failure.rs and tests/reentrant_getrandom.rs (getrandom custom backend)", "os-failure", 600,
            cmd("cargo clippy --all-features --test os_failure --test reentrant_getrandom -- -D warnings")).env(CUSTOM_GETRANDOM),
        step("mutant in-use-never-set.patch: a_backend_that_draws_is_served_and_never_repeats fails", "os-failure", 900,
            c::mutant("in-use-never-set.patch", "a_backend_that_draws_is_served_and_never_repeats", CUSTOM_GETRANDOM,
                "cargo test --all-features --test reentrant_getrandom")),
        // ---- WebAssembly ---------------------------------------------------------------------------
        step("wasm32-wasip1: cargo test --all-features under Node's WASI", "wasip1", 1200, cmd("cargo test --target wasm32-wasip1 --all-features"))
            .env(&[WASI_RUNNER, ("CARGO_TARGET_WASM32_WASIP1_RUSTFLAGS", "-D warnings")]),
        step("wasm32-wasip1: the README's demo under Node's WASI exits 0 and says what it cannot time (no threads)", "wasip1", 600,
            cmd_then("cargo run --release -p quickstart --target wasm32-wasip1", "*on a new thread: not timed, no threads*"))
            .env(&[WASI_RUNNER, ("CARGO_TARGET_WASM32_WASIP1_RUSTFLAGS", "-D warnings")]),
        step("wasm32-wasip1 simd128: ChaCha and buffer tests under Node's WASI", "wasm-simd128", 900,
            cmd("cargo test --target wasm32-wasip1 --lib -- chacha:: rngs::"))
            .env(&[WASI_RUNNER, ("CARGO_TARGET_WASM32_WASIP1_RUSTFLAGS", "-C target-feature=+simd128 -D warnings")]),
        step("wasm32-wasip1: .ci/wasm-bench builds and runs, with and without simd128", "wasm-bench", 900, sh(
            "for f in '' simd128; do
                d=$CARGO_TARGET_DIR/${f:-plain}
                CARGO_TARGET_WASM32_WASIP1_RUSTFLAGS=\"${f:+-C target-feature=+simd128} -D warnings\" cargo build -q --locked --release \
                    --target wasm32-wasip1 --manifest-path .ci/wasm-bench/Cargo.toml --target-dir $d
                node --disable-warning=ExperimentalWarning .ci/wasi-run.mjs $d/wasm32-wasip1/release/wasm-bench.wasm --quick
            done")),
        step("wasm32-unknown-unknown: .ci/wasm-js in Node (wasm-bindgen-test)", "wasm-js", 900, cmd_then(
            "cargo test --locked --manifest-path .ci/wasm-js/Cargo.toml --target wasm32-unknown-unknown", "test result: ok. # passed; 0 failed*"))
            .env(&[("CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER", "wasm-bindgen-test-runner")]),
        // ---- client crates, MPI, fuzzing ---------------------------------------------------------
        step("clippy on .ci/clients", "clients", 900, cmd("cargo clippy --release --locked --manifest-path .ci/clients/Cargo.toml -- -D warnings")),
        step("client crates: .ci/clients (ed25519/x25519-dalek 2 and 3, rand, rsa, p256, ...)", "clients", 900,
            cmd_then("cargo run --release --locked --manifest-path .ci/clients/Cargo.toml", "clients: all # checks passed")),
        step("SeedTree over MPI: mpi-pi on 1, 2 and 4 ranks against parallel.rs, and its mutant", "mpi", 1200, Box::new(c::mpi)),
        step("cargo clippy on examples/mpi", "mpi", 600, cmd("cargo clippy --release --locked --all-targets --manifest-path examples/mpi/Cargo.toml -- -D warnings")),
        step("fuzz targets build", "fuzz", 900, cmd("cargo +nightly fuzz build")),
        step("fuzz stream_split and from_key for 20 s, side by side", "fuzz", 300, c::fuzz(&["stream_split", "from_key"])).slots(2).needs(&["fuzz targets build"]),
        step("fuzz backends and restore for 20 s, side by side", "fuzz", 300, c::fuzz(&["backends", "restore"])).slots(2).needs(&["fuzz targets build"]),
        step("fuzz derived_case for 20 s", "fuzz", 300, c::fuzz(&["derived_case"])).needs(&["fuzz targets build"]),
        // ---- MSRV, minimal versions, packaging, other unix systems --------------------------------
        step(format!("MSRV {msrv}: core and default features build, lib tests pass"), "msrv", 900, sh(&format!(
            "cargo +{msrv} build --no-default-features && cargo +{msrv} build && cargo +{msrv} test --lib"))),
        step("minimal versions of the direct dependencies (all features, none, thumbv7em)", "minimal-versions", 900, Box::new(c::minimal_versions)),
        step("cargo package (the tarball builds on its own; its links work from it alone)", "package", 900, Box::new(c::package)),
        step("thread layer for x86_64-apple-darwin type-checks (-Zbuild-std)", "other-unix", 900, cmd(
            "cargo +nightly rustc -Zbuild-std=std,core,alloc,panic_abort --target x86_64-apple-darwin --lib --profile check -- -D warnings")),
        step("thread layer for x86_64-unknown-freebsd type-checks (-Zbuild-std)", "other-unix", 900, cmd(
            "cargo +nightly rustc -Zbuild-std=std,core,alloc,panic_abort --target x86_64-unknown-freebsd --lib --profile check -- -D warnings")),
        step("process restore under a real CRIU (scripts/criu-restore.sh) and its mutants", "criu", 900, Box::new(c::criu)),
        // ---- Miri: the injection hook, the SIMD builds, the planted bugs --------------------------
        step("Miri: the injection hook (RATCHET_RNG_INSPECT=1), stacked and tree borrows", "miri", 900,
            c::miri(INSPECT, &["--test", "injection_hook"], [&[&["--test", "injection_hook"]], &[&["--test", "injection_hook"]]])).slots(2),
        step("mutant miri-two-mut-to-the-buffer.patch: Miri catches a planted aliasing bug", "miri", 900,
            c::miri_mutant("miri-two-mut-to-the-buffer.patch", &[], &["--test", "contracts"], &["--test", "contracts", "thread_rng::free_functions_read_distinct_output"], &[]))
            .slots(2),
        step("mutant miri-hook-from-integer.patch: Miri catches a function pointer rebuilt from an integer (both hooks)", "miri", 900,
            c::miri_mutant("miri-hook-from-integer.patch", INSPECT, &["--lib", "--test", "injection_hook"],
                &["--no-fail-fast", "--lib", "--test", "injection_hook", "--", "--exact", "thread::fork::atfork::tests::child_handler_calls_the_registered_hook",
                    "hook_is_called_where_a_draw_passes"], &["src/thread/fork/atfork.rs", "src/inspect.rs"]))
            .slots(2),
        step("Miri: SIMD kernels and dispatch (AVX-512, AES-NI, VAES-256 and -512, AVX2), stacked and tree borrows", "miri-avx512", 1200,
            c::miri(MIRI_AVX512, &["--lib"], [&[&["--lib", "--", "backend::", "backends_match_soft_briefly", "--skip", "aarch64_cpu::"]],
                &[&["--lib", "--", "backend::", "backends_match_soft_briefly", "--skip", "aarch64_cpu::"]]]))
            .slots(2),
        step("Miri: hazmat tests on the AVX2, AES-NI and VAES-256 backends, stacked and tree borrows", "miri-avx2", 1200,
            c::miri(MIRI_AVX2, &["--lib", "--test", "contracts"], [
                    &[&["--test", "contracts", "--", "backends::", "--skip", "backends::aes_generator_on_every_aes_backend"]],
                    &[&["--test", "contracts", "--", "bad_input::ctr_counter_wraps_through_hazmat", "bad_input::wrong_seed_lengths_are_errors",
                        "bad_input::invalid_domain_bytes_are_reported_not_masked", "bad_input::try_from_rng_returns_the_source_error"],
                        &["--lib", "--", "backend::", "--skip", "aarch64_cpu::"], &["--test", "contracts", "--", "--exact", "backends::aes_generator_on_every_aes_backend"]],
                ]))
            .slots(2),
        // ---- last: what reads the finished tree ------------------------------------------------------
        step("src/aes/arm_thumb2.rs is scripts/thumb2-sbox.py's output", "meta", 300,
            c::generated("scripts/thumb2-sbox.py", "src/aes/arm_thumb2.rs")),
        step("src/keccak/arm_thumb2.rs is scripts/thumb2-keccak.py's output", "meta", 300,
            c::generated("scripts/thumb2-keccak.py", "src/keccak/arm_thumb2.rs")),
        step("docs: every pasted dependency block resolves (and a misspelt feature does not)", "meta", 600,
            sh("python3 scripts/check-doc-toml.py && python3 scripts/check-doc-toml.py --negative-control")),
        step("the runner's own tests (cargo test -p xtask)", "meta", 300, cmd("cargo test -p xtask")),
    ]);
    t
}

/// CONTRIBUTING.md's "How CI is laid out" holds `cargo xtask ci --list` verbatim.
fn contributing_lists_the_steps(cx: &Ctx) -> Result<(), String> {
    let doc = std::fs::read_to_string(cx.root.join("CONTRIBUTING.md")).map_err(|e| e.to_string())?;
    let shown = c::doc_block(&doc, "<!-- cargo xtask ci --list -->").ok_or("CONTRIBUTING.md has no `cargo xtask ci --list` block")?;
    c::fail_if(
        shown != list(&table(&cx.root, cx.cpu)),
        "CONTRIBUTING.md's step list differs from `cargo xtask ci --list`: paste the new list there",
    )?;
    Ok(())
}
