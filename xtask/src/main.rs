//! `cargo xtask ci`: ratchet-rng's CI, run by `bash .ci/run` after it has installed the tools. The steps are data
//! (`steps.rs`, their checks in `checks.rs`); the runner (`runner.rs`) runs them over the cores, each with its own log and
//! budget, and prints the time table. Standard library only (see Cargo.toml).

mod checks;
mod runner;
mod steps;

use runner::{Cpu, list, run, select, validate};
use std::fs;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, ExitCode};
use std::thread;

fn main() -> ExitCode {
    // As every step's RUSTC_WRAPPER (a copy of this binary named sccache-wrapper): sccache, less the variables that
    // configure cargo alone. sccache hashes every CARGO_* variable into its keys, and CARGO_TARGET_DIR differs per lane
    // and per clone: with it, no lane, configuration or run would share a compiled crate.
    if std::env::current_exe().is_ok_and(|p| p.ends_with("sccache-wrapper")) {
        let mut sccache = Command::new("sccache");
        sccache.args(std::env::args_os().skip(1));
        let cargo_only = ["CARGO_TARGET_", "CARGO_TERM_", "CARGO_BUILD_", "CARGO_PROFILE_", "CARGO_INCREMENTAL"];
        for (k, _) in std::env::vars().filter(|(k, _)| cargo_only.iter().any(|p| k.starts_with(p))) {
            sccache.env_remove(k);
        }
        eprintln!("sccache-wrapper: could not start sccache: {}", sccache.exec());
        return ExitCode::FAILURE;
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("ci") => ci(&args[1..]),
        _ => {
            eprintln!("usage: cargo xtask ci [--list] [--only PATTERN...] [--skip PATTERN...] [--jobs N] [--verbose]");
            ExitCode::from(2)
        }
    }
}

fn ci(args: &[String]) -> ExitCode {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf();
    let cpu: &'static Cpu = Box::leak(Box::new(Cpu::read()));
    let steps = steps::table(&root, cpu);
    if let Err(e) = validate(&steps) {
        eprintln!("error: the step table: {e}");
        return ExitCode::FAILURE;
    }
    let (mut only, mut skip, mut jobs, mut verbose, mut into_only) = (vec![], vec![], 0, false, None);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match (a.as_str(), into_only) {
            ("--list", _) => {
                print!("{}", list(&steps));
                return ExitCode::SUCCESS;
            }
            ("--only" | "--skip", _) => into_only = Some(a == "--only"),
            ("--verbose", _) => verbose = true,
            ("--jobs", _) => jobs = it.next().and_then(|n| n.parse().ok()).unwrap_or(0),
            (p, Some(o)) if !p.starts_with("--") => if o { &mut only } else { &mut skip }.push(p.to_string()),
            (other, _) => {
                eprintln!("error: unknown argument `{other}` (see --list, --only, --skip, --jobs N, --verbose)");
                return ExitCode::from(2);
            }
        }
    }
    let jobs = if jobs == 0 { thread::available_parallelism().map_or(2, |n| n.get()) } else { jobs };
    // The compiler cache, kept outside the checkout between runs (~/.cache/sccache).
    let wrapper = root.join("target/ci/sccache-wrapper");
    let copied = fs::create_dir_all(root.join("target/ci")).and_then(|()| fs::copy(std::env::current_exe()?, &wrapper));
    let version = Command::new("sccache").arg("--version").output().ok().filter(|o| o.status.success() && copied.is_ok());
    let cache = version.map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    let common = checks::common_env(&root, cpu, cache.as_ref().map(|_| &*wrapper));
    let cache = cache.unwrap_or("none (sccache is not on PATH: every build is from scratch)".into());
    println!("cargo xtask ci on {}, {jobs} slots; compiler cache: {cache}; logs in target/ci/logs", cpu.model);
    let on = select(&steps, &only, &skip);
    run(&root, cpu, common, &steps, &on, jobs, verbose)
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    #[test]
    fn the_table_is_well_formed() {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf();
        super::validate(&super::steps::table(&root, &super::Cpu::read())).unwrap();
    }

    /// A module of tests/outputs.rs that ran nothing counts as an empty target (as
    /// tests/fork.rs on Windows); a `mod` of another file (a `#[path]` helper) does not.
    #[test]
    fn empty_modules_of_a_merged_binary_are_empty_targets() {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf();
        let out = "     Running tests/outputs.rs (x)\nrunning 2 tests\ntest golden::a ... ok\ntest every_test_file ... ok\n\
                   \n     Running tests/injection.rs (y)\nrunning 0 tests\n";
        let all: Vec<String> = std::fs::read_to_string(root.join("tests/outputs.rs"))
            .unwrap()
            .lines()
            .filter_map(|l| {
                let m = l.strip_prefix("mod ")?.strip_suffix(';')?;
                (m != "common" && m != "golden").then(|| format!("tests/{m}.rs"))
            })
            .collect();
        let mut want: Vec<String> = all.into_iter().chain(["tests/injection.rs".to_string()]).collect();
        want.sort();
        assert!(want.len() > 5 && want.contains(&"tests/fork.rs".to_string()));
        assert_eq!(super::checks::empty_targets(&root, out), want);
    }
}
