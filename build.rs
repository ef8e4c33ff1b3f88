//! Build-time backend switches.
//!
//! The test suite is rerun on a chosen backend by setting environment variables at
//! build time; this script turns them into `cfg`s (declared for `check-cfg`) and
//! rejects unknown or contradictory values. It never looks at the build machine's
//! CPU: backends are chosen at run time, these switches only take choices away.
//!
//! | variable                     | values           | cfg                                  |
//! |------------------------------|------------------|--------------------------------------|
//! | `RATCHET_RNG_BACKEND`        | `auto` (default), `soft` | `ratchet_rng_backend="soft"` |
//! | `RATCHET_RNG_NO_AVX512`      | `0`/`1`          | `ratchet_rng_no_avx512`              |
//! | `RATCHET_RNG_NO_AVX2`        | `0`/`1`          | `ratchet_rng_no_avx2`                |
//! | `RATCHET_RNG_NO_AES`         | `0`/`1`          | `ratchet_rng_no_aes`                 |
//! | `RATCHET_RNG_NO_SHA3`        | `0`/`1`          | `ratchet_rng_no_sha3`                |
//! | `RATCHET_RNG_INSPECT`        | `0`/`1`          | `ratchet_rng_inspect`: test-only introspection of secret state (`ratchet_rng::__inspect`, hidden) |
//! | `RATCHET_RNG_PORTABLE32`     | `0`/`1`          | `ratchet_rng_portable32`: the 32-bit cores' portable kernels on any target |
//! | `RATCHET_RNG_KECCAK_LAZY`    | `0`/`1`          | `ratchet_rng_keccak_lazy`: the written-out 32-bit Keccak rounds on any target |
//!
//! `ratchet_rng_inspect` is a cfg, not a Cargo feature, on purpose: features unify
//! across a dependency tree, so any crate could switch introspection of secret state
//! on for every user; an environment variable or `RUSTFLAGS` is set only by whoever
//! runs the build.
//!
//! The last two are what CI's Valgrind runs check on x86_64; as variables they
//! rebuild this crate only, where `RUSTFLAGS` rebuilds every dependency.
//!
//! The same cfgs may be given directly through `RUSTFLAGS` (`--cfg
//! 'ratchet_rng_backend="soft"'`); an environment variable that says the opposite of
//! such a flag is an error rather than a silent override.

use std::env;
use std::process::exit;

/// The on/off switches: (environment variable, cfg name).
const SWITCHES: [(&str, &str); 7] = [
    ("RATCHET_RNG_NO_AVX512", "ratchet_rng_no_avx512"),
    ("RATCHET_RNG_NO_AVX2", "ratchet_rng_no_avx2"),
    ("RATCHET_RNG_NO_AES", "ratchet_rng_no_aes"),
    ("RATCHET_RNG_NO_SHA3", "ratchet_rng_no_sha3"),
    ("RATCHET_RNG_INSPECT", "ratchet_rng_inspect"),
    ("RATCHET_RNG_PORTABLE32", "ratchet_rng_portable32"),
    ("RATCHET_RNG_KECCAK_LAZY", "ratchet_rng_keccak_lazy"),
];

fn fail(message: &str) -> ! {
    eprintln!("error: ratchet-rng build configuration: {message}");
    exit(1);
}

/// Reads a variable; set-but-empty counts as unset. Non-UTF-8 is an error.
fn read_var(name: &str) -> Option<String> {
    println!("cargo::rerun-if-env-changed={name}");
    match env::var(name) {
        Ok(v) if v.trim().is_empty() => None,
        Ok(v) => Some(v.trim().to_owned()),
        Err(env::VarError::NotPresent) => None,
        Err(env::VarError::NotUnicode(_)) => fail(&format!("{name} is not valid UTF-8")),
    }
}

/// Whether a cfg was already passed through RUSTFLAGS (cargo exposes target cfgs to
/// build scripts as `CARGO_CFG_<NAME>`).
fn cfg_from_rustflags(cfg: &str) -> Option<String> {
    env::var(format!("CARGO_CFG_{}", cfg.to_uppercase())).ok()
}

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rustc-check-cfg=cfg(ratchet_rng_backend, values(\"soft\"))");
    for (_, cfg) in SWITCHES {
        println!("cargo::rustc-check-cfg=cfg({cfg})");
    }

    let soft_flag = cfg_from_rustflags("ratchet_rng_backend");
    if let Some(v) = &soft_flag
        && v != "soft"
    {
        fail(&format!(
            "--cfg ratchet_rng_backend=\"{v}\" is unknown; the only value is \"soft\""
        ));
    }
    let mut soft = soft_flag.is_some();
    match read_var("RATCHET_RNG_BACKEND").as_deref() {
        None => {}
        Some("auto") if soft_flag.is_some() => fail(
            "RATCHET_RNG_BACKEND=auto contradicts --cfg ratchet_rng_backend=\"soft\" in RUSTFLAGS",
        ),
        Some("auto") => {}
        // Already set by RUSTFLAGS: nothing to add.
        Some("soft") if soft_flag.is_some() => {}
        Some("soft") => {
            soft = true;
            println!("cargo::rustc-cfg=ratchet_rng_backend=\"soft\"");
        }
        Some(other) => fail(&format!(
            "RATCHET_RNG_BACKEND={other:?} is unknown; expected `auto` or `soft`"
        )),
    }

    let mut removed = [false; SWITCHES.len()];
    for (i, (var, cfg)) in SWITCHES.into_iter().enumerate() {
        let from_flags = cfg_from_rustflags(cfg).is_some();
        removed[i] = from_flags;
        match read_var(var).as_deref() {
            None => {}
            Some("1") if from_flags => {}
            Some("1") => {
                removed[i] = true;
                println!("cargo::rustc-cfg={cfg}");
            }
            Some("0") if from_flags => {
                fail(&format!("{var}=0 contradicts --cfg {cfg} in RUSTFLAGS"))
            }
            Some("0") => {}
            Some(other) => fail(&format!("{var}={other:?} is unknown; expected `0` or `1`")),
        }
    }

    emit_backend_families(soft, removed);
}

/// One cfg per SIMD backend family, on when the target has the family and no
/// switch removes it, so the code names the family (`cfg(ratchet_rng_x86_avx512)`)
/// instead of repeating the target and switch conditions at every use.
fn emit_backend_families(soft: bool, [no_avx512, no_avx2, no_aes, no_sha3, ..]: [bool; 7]) {
    let arch = env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let little_endian = env::var("CARGO_CFG_TARGET_ENDIAN").as_deref() == Ok("little");
    // The target's baseline features (and any `-C target-feature` in RUSTFLAGS),
    // as rustc reports them for the target: no CPU is probed here.
    let target_features = env::var("CARGO_CFG_TARGET_FEATURE").unwrap_or_default();
    let baseline = |feature: &str| target_features.split(',').any(|f| f == feature);
    // The SIMD kernels need the target's ABI to have vector registers: soft-float
    // targets (`x86_64-unknown-none` has no SSE2, `aarch64-unknown-none-softfloat`
    // no NEON) get the portable backends only. There, enabling SIMD per function is
    // unsound across calls (rustc warns) or does not compile (LLVM cannot lower
    // the vector types without SSE).
    let x86 = arch == "x86_64" && !soft && baseline("sse2");
    let arm = arch == "aarch64" && !soft && baseline("neon");
    let families = [
        ("ratchet_rng_x86_avx2", x86 && !no_avx2),
        ("ratchet_rng_x86_avx512", x86 && !no_avx2 && !no_avx512),
        ("ratchet_rng_x86_aesni", x86 && !no_aes),
        ("ratchet_rng_x86_vaes256", x86 && !no_aes && !no_avx2),
        (
            "ratchet_rng_x86_vaes512",
            x86 && !no_aes && !no_avx2 && !no_avx512,
        ),
        ("ratchet_rng_aarch64_neon", arm && little_endian),
        ("ratchet_rng_aarch64_sha3", arm && little_endian && !no_sha3),
        ("ratchet_rng_aarch64_aes", arm && !no_aes),
    ];
    // The portable kernels for 32-bit cores (`aes/fixslice32.rs`, the
    // bit-interleaved lanes of `keccak/interleaved32.rs`), chosen at compile time
    // where `u32` is the widest native integer: 32-bit targets but WebAssembly,
    // whose `i64` is native. `RATCHET_RNG_PORTABLE32=1` (or the cfg in RUSTFLAGS)
    // selects them on any target (x86_64 runs of Valgrind and Miri). A cfg given
    // twice is one cfg.
    let pointer_width = env::var("CARGO_CFG_TARGET_POINTER_WIDTH").unwrap_or_default();
    let portable32 = pointer_width == "32" && arch != "wasm32";
    // The 32-bit Keccak kernel as a backend of its own where `soft` runs `u64`
    // lanes (64-bit targets and wasm32), so that it is tested there too.
    let families = families
        .into_iter()
        .chain([("ratchet_rng_keccak_interleaved32", !portable32 && !soft)]);
    for (cfg, on) in families {
        println!("cargo::rustc-check-cfg=cfg({cfg})");
        if on {
            println!("cargo::rustc-cfg={cfg}");
        }
    }

    if portable32 {
        println!("cargo::rustc-cfg=ratchet_rng_portable32");
    }

    // The Thumb-2 assembly S-box of the 32-bit AES kernel (`aes/arm_thumb2.rs`):
    // the M-profile cores with Thumb-2, named by the target (rustc does not
    // report `thumb2` as a target feature on stable). Not with `--cfg
    // ratchet_rng_portable32` (or its switch) alone: that is for other targets.
    let target = env::var("TARGET").unwrap_or_default();
    let thumb2 = arch == "arm"
        && ["thumbv7m-", "thumbv7em-", "thumbv8m.main-"]
            .iter()
            .any(|prefix| target.starts_with(prefix));
    println!("cargo::rustc-check-cfg=cfg(ratchet_rng_arm_thumb2)");
    if thumb2 && portable32 {
        println!("cargo::rustc-cfg=ratchet_rng_arm_thumb2");
    }
    // The profile's opt-level (Cargo's OPT_LEVEL): built for size ("s", "z"),
    // the assembly S-box is one function instead of a copy in every round,
    // which LLVM, seeing one `asm!` statement, would otherwise inline.
    println!("cargo::rustc-check-cfg=cfg(ratchet_rng_opt_size)");
    if matches!(env::var("OPT_LEVEL").as_deref(), Ok("s" | "z")) {
        println!("cargo::rustc-cfg=ratchet_rng_opt_size");
    }
    // The 32-bit Keccak kernel's twelve rounds written out with their rotations
    // carried lazily (`keccak/interleaved32.rs`): for 32-bit ARM, whose `eor` and
    // `bic` rotate an operand for free (on RV32 without Zbb every carried
    // rotation costs three instructions: 72 -> 116 instructions a byte at
    // opt-level 3), and where the build asks for speed (opt-level 2 and 3): about
    // 15 KiB more code, not wanted at "s" or "z". `RATCHET_RNG_KECCAK_LAZY=1` (or
    // the cfg in RUSTFLAGS) selects it on any target and opt-level.
    let opt_level = env::var("OPT_LEVEL").unwrap_or_default();
    if arch == "arm" && (opt_level == "2" || opt_level == "3") {
        println!("cargo::rustc-cfg=ratchet_rng_keccak_lazy");
    }
}
