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
//! | `RATCHET_RNG_BENCH`          | `0`/`1`          | `ratchet_rng_bench` (a bench-only hook, see `benches/thread_rng.rs`) |
//!
//! The same cfgs may be given directly through `RUSTFLAGS` (`--cfg
//! 'ratchet_rng_backend="soft"'`); an environment variable that says the opposite of
//! such a flag is an error rather than a silent override.

use std::env;
use std::process::exit;

/// The on/off switches: (environment variable, cfg name).
const SWITCHES: [(&str, &str); 5] = [
    ("RATCHET_RNG_NO_AVX512", "ratchet_rng_no_avx512"),
    ("RATCHET_RNG_NO_AVX2", "ratchet_rng_no_avx2"),
    ("RATCHET_RNG_NO_AES", "ratchet_rng_no_aes"),
    ("RATCHET_RNG_NO_SHA3", "ratchet_rng_no_sha3"),
    ("RATCHET_RNG_BENCH", "ratchet_rng_bench"),
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
    match read_var("RATCHET_RNG_BACKEND").as_deref() {
        None => {}
        Some("auto") if soft_flag.is_some() => fail(
            "RATCHET_RNG_BACKEND=auto contradicts --cfg ratchet_rng_backend=\"soft\" in RUSTFLAGS",
        ),
        Some("auto") => {}
        // Already set by RUSTFLAGS: nothing to add.
        Some("soft") if soft_flag.is_some() => {}
        Some("soft") => println!("cargo::rustc-cfg=ratchet_rng_backend=\"soft\""),
        Some(other) => fail(&format!(
            "RATCHET_RNG_BACKEND={other:?} is unknown; expected `auto` or `soft`"
        )),
    }

    for (var, cfg) in SWITCHES {
        let from_flags = cfg_from_rustflags(cfg).is_some();
        match read_var(var).as_deref() {
            None => {}
            Some("1") if from_flags => {}
            Some("1") => println!("cargo::rustc-cfg={cfg}"),
            Some("0") if from_flags => {
                fail(&format!("{var}=0 contradicts --cfg {cfg} in RUSTFLAGS"))
            }
            Some("0") => {}
            Some(other) => fail(&format!("{var}={other:?} is unknown; expected `0` or `1`")),
        }
    }
}
