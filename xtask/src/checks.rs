//! The steps that carry logic: what they run and what their output must show. Each returns a `Run` for steps.rs or is one.

use crate::runner::{Cpu, Ctx, NEEDS, Run, Vars, cache_dir, line_matches};
use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

/// The environment every step starts from: cross linkers and runners, the Wine prefix, the CPU random source expected, the compiler cache.
pub fn common_env(root: &Path, cpu: &Cpu, wrapper: Option<&Path>) -> Vars {
    let mut env: Vars = [
        ("CARGO_TERM_COLOR", "never"),
        ("CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER", "aarch64-linux-gnu-gcc"),
        ("CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER", "qemu-aarch64 -L /usr/aarch64-linux-gnu"),
        ("CARGO_TARGET_S390X_UNKNOWN_LINUX_GNU_LINKER", "s390x-linux-gnu-gcc"),
        ("CARGO_TARGET_S390X_UNKNOWN_LINUX_GNU_RUNNER", "qemu-s390x -L /usr/s390x-linux-gnu"),
        ("CARGO_TARGET_I686_UNKNOWN_LINUX_GNU_LINKER", "i686-linux-gnu-gcc"),
        ("CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER", "x86_64-w64-mingw32-gcc"),
        ("CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER", WINE),
        ("WINEDEBUG", "-all"),
        ("RATCHET_RNG_EXPECT_CPU_RANDOM", cpu.random()),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    env.push(("WINEPREFIX".into(), wine_prefix_dir(root).display().to_string()));
    if let Some(wrapper) = wrapper {
        env.push(("RUSTC_WRAPPER".into(), wrapper.display().to_string()));
        env.push(("SCCACHE_CACHE_SIZE".into(), "30G".into()));
    }
    env
}

/// Debian's wine64 package puts its loader here (its /usr/bin/wine asks for wine32).
pub const WINE: &str = "/usr/lib/wine/wine64";
const WINESERVER: &str = "/usr/lib/wine/wineserver";

/// `Err(why)` where `bad`: a check that did not hold.
pub fn fail_if(bad: bool, why: impl Into<String>) -> Result<(), String> {
    if bad { Err(why.into()) } else { Ok(()) }
}

/// `argv` (split on spaces) must succeed.
pub fn cmd(argv: &str) -> Run {
    let argv: Vec<String> = argv.split_whitespace().map(String::from).collect();
    Box::new(move |cx| cx.cmd(&argv).ok().map(drop))
}

/// Says why the step cannot run here.
pub fn skipped(why: &'static str) -> Run {
    Box::new(move |cx| cx.skip(why))
}

/// A bash script (pipes, redirections) that must succeed.
pub fn sh(script: &str) -> Run {
    let script = format!("set -euo pipefail\n{script}");
    Box::new(move |cx| cx.cmd(&["bash", "-c", &script]).ok().map(drop))
}

/// FILE is SCRIPT's output after rustfmt. The output is kept outside the clone, keyed by the sha256 of the script and
/// rustfmt's and Python's versions: a script that did not change is not run again (one took 49 s).
pub fn generated(script: &'static str, file: &'static str) -> Run {
    Box::new(move |cx| {
        let dir = cache_dir()?.join("generated");
        let hash = format!("(sha256sum {script}; rustfmt --version; python3 --version) | sha256sum");
        let key = cx.cmd(&["bash", "-c", &hash]).stdout_only().ok()?;
        let cached = dir.join(key.split_whitespace().next().unwrap_or("none"));
        let out = match fs::read_to_string(&cached) {
            Ok(out) => {
                cx.say(&format!("{script}'s output for this script, rustfmt and Python: {}", cached.display()));
                out
            }
            Err(_) => {
                let make = format!("set -o pipefail; python3 {script} | rustfmt --edition 2024");
                let out = cx.cmd(&["bash", "-c", &make]).stdout_only().ok()?;
                let _ = fs::create_dir_all(&dir).and_then(|()| fs::write(&cached, &out));
                out
            }
        };
        let now = fs::read_to_string(cx.root.join(file)).map_err(|e| format!("{file}: {e}"))?;
        fail_if(out != now, format!("{file} is not {script}'s output: run `python3 {script} | rustfmt --edition 2024 > {file}`"))
    })
}

/// `argv` must succeed and its output hold a line matching `pass` (a runner that ran nothing would also exit 0).
pub fn cmd_then(argv: &str, pass: &'static str) -> Run {
    let argv: Vec<String> = argv.split_whitespace().map(String::from).collect();
    Box::new(move |cx| expect_output(&cx.cmd(&argv).ok()?, 0, 0, &[pass]))
}

// ---- the README's commands, the backends -------------------------------------------------

pub fn report_backends(cx: &Ctx) -> Result<(), String> {
    cx.say(&format!("model name: {}; CPU random source expected: {} (RNDR under qemu-aarch64)", cx.cpu.model, cx.cpu.random()));
    for (name, flags) in NEEDS {
        let (has, f) = (cx.cpu.has(flags), flags.join(" "));
        cx.say(&format!("{name}: {} (CPU flags: {f})", if has { "expected" } else { "not available here (covered where a CPU has it)" }));
    }
    cx.say("aarch64_sha3, aarch64_neon, aarch64_aes: expected under qemu-aarch64 (aarch64_sha3 tested there, not chosen: QEMU's MIDR_EL1 is no Apple core)");
    Ok(())
}

fn readme_gives(cx: &Ctx, command: &str) -> Result<String, String> {
    let readme = fs::read_to_string(cx.root.join("README.md")).map_err(|e| e.to_string())?;
    fail_if(!readme.lines().any(|l| l == command), format!("README.md no longer gives `{command}`"))?;
    Ok(readme)
}

/// The README's test command, verbatim, and the number of ignored tests it states.
pub fn readme_test(cx: &Ctx) -> Result<(), String> {
    let readme = readme_gives(cx, "cargo test --all-features")?;
    let out = cx.cmd(&["cargo", "test", "--all-features"]).ok()?;
    let ignored_in = |l: &str| l.split("; ").find(|f| f.ends_with(" ignored"))?.split(' ').next()?.parse::<usize>().ok();
    let ignored: usize = out.lines().filter(|l| l.starts_with("test result:")).filter_map(ignored_in).sum();
    let why = format!("the suite reports {ignored} tests ignored; README.md gives another number");
    fail_if(!readme.contains(&format!("reports {ignored} tests ignored")), why)?;
    cx.say(&format!("{ignored} tests ignored, as README.md says"));
    Ok(())
}

/// The README's demo: at most 12 crates (it must stay quick cold), then run.
pub fn readme_demo(cx: &Ctx) -> Result<(), String> {
    readme_gives(cx, "cargo run --release -p quickstart")?;
    let tree = cx.cmd(&["cargo", "tree", "-p", "quickstart", "-e", "normal,build", "--prefix", "none"]).ok()?;
    let crates: HashSet<&str> =
        tree.lines().filter(|l| l.split(' ').nth(1).is_some_and(|v| line_matches("v#*", v))).map(|l| l.trim_end_matches(" (*)")).collect();
    cx.say(&format!("the demo builds {} crates", crates.len()));
    fail_if(crates.len() > 12, format!("the demo builds {} crates (more than 12): it must stay quick cold", crates.len()))?;
    cx.cmd(&["cargo", "run", "--release", "-p", "quickstart"]).ok().map(drop)
}

// ---- suites whose skips are counted ----------------------------------------------------

/// A suite under qemu-user, built, then run with 10 minutes (it takes 1 to 2). The emulator's own failures are said and run
/// once more (a second fails): a run past 10 minutes (qemu-user can deadlock a fork in a threaded process: once here, in a
/// thousand forks under qemu-aarch64) and "uncaught target signal" in tests/signals.rs (once under qemu-s390x in CI).
pub fn emulated(cx: &Ctx, argv: &[&str], env: Env) -> Result<(i32, String), String> {
    let (cargo, rest) = argv.split_at(argv.iter().position(|a| *a == "--").unwrap_or(argv.len()));
    cx.cmd(&[cargo, &["--no-run"]].concat()).envs(env).ok()?;
    let run = || cx.cmd(&[cargo, rest].concat()).envs(env).within(std::time::Duration::from_secs(600)).out();
    let again = match run() {
        Err(e) if e.contains(crate::runner::PAST_LIMIT) => "past 10 minutes under qemu-user (hung)",
        Ok((rc, out)) if rc != 0 && out.contains("qemu: uncaught target signal") && out.contains("to rerun pass `--test signals`") => {
            "the emulator crashed in tests/signals.rs (qemu: uncaught target signal)"
        }
        result => return result,
    };
    cx.say(&format!("---- {again}: the suite again, once ----"));
    run()
}

/// [`emulated`] as a step: `cargo test ARGS`, which must pass.
pub fn emulated_suite(args: &'static str) -> Run {
    Box::new(move |cx| {
        let argv: Vec<&str> = ["cargo", "test"].into_iter().chain(args.split_whitespace()).collect();
        let (rc, _) = emulated(cx, &argv, &[])?;
        fail_if(rc != 0, format!("the suite failed (exit {rc})"))
    })
}

/// `cargo test ARGS -- --nocapture` with env; then exactly `skips` SKIPPED notices and exactly the targets `empty` ran no test.
pub fn counted(env: Env, args: &'static str, skips: usize, empty: &'static str) -> Run {
    Box::new(move |cx| {
        let argv: Vec<&str> = ["cargo", "test"].into_iter().chain(args.split_whitespace()).chain(["--", "--nocapture"]).collect();
        // s390x is the one counted suite under qemu-user (i686 runs natively, Windows under Wine, neither retried).
        let (rc, out) = if args.contains("--target s390x") { emulated(cx, &argv, env)? } else { cx.cmd(&argv).envs(env).out()? };
        let got = out.matches("SKIPPED").count();
        let got_empty = empty_targets(&cx.root, &out);
        let mut want: Vec<&str> = empty.split_whitespace().collect();
        want.sort();
        cx.say("---- what did not run ----");
        out.lines().filter(|l| l.contains("SKIPPED")).for_each(|l| cx.say(l));
        fail_if(rc != 0, format!("the suite failed (exit {rc})"))?;
        fail_if(got != skips, format!("{got} SKIPPED notices, expected {skips}: a test newly skips or newly runs here"))?;
        fail_if(got_empty != want, format!("test targets that ran no test: {got_empty:?}, expected {want:?}"))?;
        cx.say(&format!("{got} SKIPPED notices and the test targets that ran nothing ({want:?}), as expected"));
        Ok(())
    })
}

/// The test targets in `out` (cargo test's output) that ran no test; of a binary of modules (`mod x;`), each that ran none.
pub fn empty_targets(root: &Path, out: &str) -> Vec<String> {
    let (mut target, mut empty, mut modules) = ("", vec![], vec![]);
    for l in out.lines() {
        if let Some(r) = l.trim_start().strip_prefix("Running ") {
            target = r.strip_prefix("unittests ").unwrap_or(r).split(" (").next().unwrap_or("");
            let source = fs::read_to_string(root.join(target)).unwrap_or_default();
            let members = source.lines().filter_map(|l| Some(format!("tests/{}.rs", l.strip_prefix("mod ")?.strip_suffix(';')?)));
            modules.extend(members.filter(|f| root.join(f).is_file()).map(|f| (target, f, false)));
        } else if l == "running 0 tests" {
            empty.push(target.to_string());
        } else if let Some((m, _)) = l.strip_prefix("test ").and_then(|t| t.split_once("::")) {
            modules.iter_mut().filter(|(t, f, _)| *t == target && *f == format!("tests/{m}.rs")).for_each(|e| e.2 = true);
        }
    }
    empty.extend(modules.into_iter().filter(|e| !e.2).map(|e| e.1));
    empty.sort();
    empty
}

// ---- mutants ---------------------------------------------------------------------------

/// Runs `work` in the lane's own tree (never the checkout) with .ci/mutants/PATCH planted, taken out when `work` returns or panics.
pub fn with_planted<T>(cx: &Ctx, patch: &str, work: impl FnOnce(&Path) -> T) -> Result<T, String> {
    /// The planted patch, taken out again when dropped.
    struct Planted<'a>(&'a Ctx, &'a Path, String);
    impl Drop for Planted<'_> {
        fn drop(&mut self) {
            if self.0.cmd(&["git", "apply", "-R", &self.2]).dir(self.1).ok().is_err() {
                self.0.forget_tree(); // the next step copies the checkout afresh
            }
        }
    }
    let tree = cx.tree()?;
    let p = cx.root.join(".ci/mutants").join(patch).display().to_string();
    cx.cmd(&["git", "apply", &p]).dir(&tree).ok().map_err(|e| format!("{e}: {p} no longer applies"))?;
    let _planted = Planted(cx, &tree, p);
    Ok(work(&tree))
}

/// `argv` in the lane's own tree, no patch planted: it shares the builds of the lane's mutants (same configuration and sources).
pub fn in_tree(argv: &str) -> Run {
    let argv: Vec<String> = argv.split_whitespace().map(String::from).collect();
    Box::new(move |cx| cx.cmd(&argv).dir(cx.tree()?).ok().map(drop))
}

/// With .ci/mutants/PATCH planted, `argv` (in the lane's tree) must fail in TEST: "test TEST ... FAILED", no build error, abort or hang.
pub fn mutant(patch: &'static str, test: &str, env: Env, argv: &str) -> Run {
    caught(patch, env, argv, FAILS, &[&format!("test {test} ... FAILED")])
}

/// With PATCH planted, `argv` must exit `code` and its output hold each line of `want`.
pub fn caught(patch: &'static str, env: Env, argv: &str, code: i32, want: &[&str]) -> Run {
    let argv: Vec<String> = argv.split_whitespace().map(String::from).collect();
    let want: Vec<String> = want.iter().map(|w| w.to_string()).collect();
    Box::new(move |cx| {
        let result = with_planted(cx, patch, |tree| cx.cmd(&argv).dir(tree).envs(env).out())?;
        let (rc, out) = result.map_err(|e| format!("with {patch} planted: {e}; a hang is no verdict"))?;
        let want: Vec<&str> = want.iter().map(String::as_str).collect();
        expect_output(&out, rc, code, &want).map_err(|e| format!("with {patch} planted: {e}"))?;
        cx.say(&format!("mutant {patch}: caught (exit {rc}), as it must"));
        Ok(())
    })
}

/// The output holds each of `want` (a line pattern, see `line_matches`) and the exit is `code` (any failure: `FAILS`).
pub fn expect_output(out: &str, rc: i32, code: i32, want: &[&str]) -> Result<(), String> {
    for w in want {
        fail_if(!out.lines().any(|l| line_matches(w, l)), format!("no line `{w}` in the output (exit {rc})"))?;
    }
    match code {
        FAILS if rc != 0 => Ok(()),
        FAILS => Err("exit 0, where it must fail: the check cannot catch the bug it guards".into()),
        _ if rc == code => Ok(()),
        _ => Err(format!("exit {rc}, not {code}")),
    }
}

/// A step's or a command's environment changes.
pub type Env = &'static [(&'static str, &'static str)];
/// A command's arguments, in the table.
pub type Args = &'static [&'static str];

/// For `expect_output`: any non-zero exit.
pub const FAILS: i32 = i32::MIN;

pub fn mutants_apply(cx: &Ctx) -> Result<(), String> {
    let patches = cx.cmd(&["git", "ls-files", "--cached", "--others", "--exclude-standard", ".ci/mutants/*.patch"]).stdout_only().ok()?;
    for p in patches.lines() {
        let stale = |e| format!("{e}: update {p} to the code it changes (its header says how)");
        cx.cmd(&["git", "apply", "--check", p]).ok().map_err(stale)?;
    }
    cx.say(&format!("all {} patches in .ci/mutants apply", patches.lines().count()));
    Ok(())
}

// ---- backend selection at compile time ------------------------------------------------------

/// The library's unit tests built with `-C target-feature=FEATURES` given to this crate alone (`cargo rustc`: the suite's
/// dependencies are reused), run under `runner` (natively if empty); the compile-time selection test must run and pass.
pub fn static_selection(features: String, target: Args, runner: Args) -> Run {
    Box::new(move |cx| {
        if features.is_empty() {
            return skipped("this CPU has none of avx2, aes, vaes")(cx);
        }
        let exe = static_build(cx, &cx.root, &features, target)?;
        let out = cx.cmd(&[runner, &[exe.as_str(), "backend::"]].concat()).ok()?;
        let pass = "test backend::tests::compile_time_target_features_select_their_backend ... ok";
        let why = format!("the compile-time selection test did not run and pass with -C target-feature={features}");
        fail_if(!out.lines().any(|l| l == pass), why)
    })
}

/// The library's unit tests built in `dir` with `-C target-feature=FEATURES` given to this crate alone; the executable's path.
fn static_build(cx: &Ctx, dir: &Path, features: &str, target: &[&str]) -> Result<String, String> {
    let mut argv = vec!["cargo", "rustc", "--profile", "test", "--lib", "--all-features"];
    argv.extend(target);
    argv.extend(["--message-format=json-render-diagnostics", "--", "-C"]);
    let tf = format!("target-feature={features}");
    argv.push(&tf);
    let out = cx.cmd(&argv).dir(dir).ok()?;
    let exe = out
        .lines()
        .filter(|l| l.starts_with("{\"reason\":\"compiler-artifact\""))
        .filter_map(|l| l.split("\"executable\":\"").nth(1)?.split('"').next())
        .next_back()
        .ok_or("cargo rustc reported no test executable")?;
    Ok(exe.to_string())
}

/// With PATCH planted, the library's unit test TEST, built with `-C target-feature=FEATURES` (this CPU's), must fail.
pub fn static_mutant(patch: &'static str, test: &'static str, features: String) -> Run {
    Box::new(move |cx| {
        if features.is_empty() {
            return skipped("this CPU has none of avx2, aes, vaes")(cx);
        }
        let planted = |tree: &Path| static_build(cx, tree, &features, &[]).and_then(|exe| cx.cmd(&[&exe, "--exact", test]).out());
        let (rc, out) = with_planted(cx, patch, planted)??;
        expect_output(&out, rc, FAILS, &[&format!("test {test} ... FAILED")]).map_err(|e| format!("with {patch} planted: {e}"))?;
        cx.say(&format!("mutant {patch}: caught with -C target-feature={features} (exit {rc}), as it must"));
        Ok(())
    })
}

// ---- Windows -----------------------------------------------------------------------------

/// Runs `inner` with one persistent wineserver for the prefix. Without it each test binary's Wine may start a server that
/// exits 3 s after its last client, and a binary that connects while it exits fails ("wine client error:0: recvmsg:
/// Connection reset by peer": seen once in a run of the suite).
pub fn with_wineserver(inner: Run) -> Run {
    Box::new(move |cx| {
        cx.cmd(&[WINESERVER, "-p"]).ok()?;
        let result = inner(cx);
        let _ = cx.cmd(&[WINESERVER, "-k"]).ok();
        result
    })
}

/// The Wine prefix, kept in [`cache_dir`] (`wineboot --init` takes 20 s; Wine updates a prefix older than itself).
fn wine_prefix_dir(root: &Path) -> PathBuf {
    cache_dir().map(|d| d.join("wine-prefix")).unwrap_or_else(|_| root.join("target/windows/wine"))
}

/// The Wine prefix, made once and renamed into place when whole; .ci/wine/bcryptprimitives.c built into it every run.
pub fn wine_prefix(cx: &Ctx) -> Result<(), String> {
    let prefix = wine_prefix_dir(&cx.root);
    let io = |e: std::io::Error| e.to_string();
    if !prefix.join("drive_c/windows/system32").is_dir() {
        let new = prefix.with_extension("new");
        let _ = fs::remove_dir_all(&new);
        fs::create_dir_all(new.parent().unwrap()).map_err(io)?; // wine wants the prefix's parent
        let at = [("WINEPREFIX", new.to_str().unwrap())];
        cx.cmd(&[WINE, "wineboot", "--init"]).envs(&at).ok()?;
        cx.cmd(&[WINESERVER, "-w"]).envs(&at).ok()?;
        let _ = fs::remove_dir_all(&prefix);
        fs::rename(&new, &prefix).map_err(io)?;
    }
    let dll = prefix.join("drive_c/windows/system32/bcryptprimitives.dll").display().to_string();
    let argv = ["x86_64-w64-mingw32-gcc", "-shared", "-O2", "-Wall", "-Werror", "-o", &dll, ".ci/wine/bcryptprimitives.c", "-lbcrypt"];
    cx.cmd(&argv).ok()?;
    cx.say(&format!("Wine prefix {} ready ({})", prefix.display(), cx.cmd(&[WINE, "--version"]).ok()?.trim()));
    Ok(())
}

pub fn bogus_rejected(cx: &Ctx) -> Result<(), String> {
    let (rc, _) = cx.cmd(&["cargo", "check", "-q"]).envs(&[("RATCHET_RNG_BACKEND", "bogus")]).out()?;
    fail_if(rc == 0, "build.rs accepted RATCHET_RNG_BACKEND=bogus")
}

// ---- firmware --------------------------------------------------------------------------

const M4: &str = "thumbv7em-none-eabihf";

/// The firmware binary of `target` under its QEMU, with `arg` (e.g. corrupt=LABEL) on its command line; exit code and output.
fn firmware_qemu(cx: &Ctx, target: &str, arg: &str) -> Result<(i32, String), String> {
    let elf = cx.target.join(target).join("release/firmware");
    let more = if arg.is_empty() { String::new() } else { format!(",arg={arg}") };
    let (machine, semi) = match target {
        M4 => ("qemu-system-arm -M mps2-an386 -cpu cortex-m4", String::new()),
        _ => ("qemu-system-riscv32 -M virt -cpu rv32 -bios none", format!(",arg=firmware{more}")),
    };
    let line = format!("timeout 120 {machine} -nographic -monitor none -serial none -semihosting-config enable=on,target=native{semi}");
    let mut argv: Vec<String> = line.split(' ').map(String::from).chain(["-kernel".into(), elf.display().to_string()]).collect();
    if target == M4 && !arg.is_empty() {
        argv.extend(["-append".into(), arg.to_string()]);
    }
    cx.cmd(&argv).out()
}

fn firmware_build(cx: &Ctx, tree: &Path, target: &str, opt3: bool) -> Result<(), String> {
    let manifest = tree.join(".ci/firmware/Cargo.toml").display().to_string();
    let opt: &[_] = if opt3 { &[("CARGO_PROFILE_RELEASE_OPT_LEVEL", "3")] } else { &[] };
    let argv = ["cargo", "build", "--locked", "--release", "--manifest-path", &manifest, "--target", target, "--bin", "firmware"];
    cx.cmd(&argv).envs(opt).ok().map(drop)
}

/// .ci/firmware's known answers on `target` under QEMU: exit 0, at least 200 checks.
pub fn firmware_checks(target: &'static str, opt3: bool) -> Run {
    Box::new(move |cx| {
        firmware_build(cx, &cx.root, target, opt3)?;
        let (rc, out) = firmware_qemu(cx, target, "")?;
        fail_if(rc != 0, format!("the {target} firmware exited {rc} under QEMU (124: timed out)"))?;
        let all = |l: &str| l.strip_prefix("all ")?.strip_suffix(" checks passed")?.parse::<usize>().ok();
        let n = out.lines().find_map(all).ok_or("no 'all N checks passed' line")?;
        fail_if(n < 200, format!("the firmware ran {n} checks, fewer than 200 (vectors went missing?)"))?;
        fail_if(out.lines().any(|l| l.starts_with("FAIL")), "a FAIL line, yet exit 0")
    })
}

/// The same binary with one expected byte flipped must fail that check, and only it.
pub fn firmware_negative(target: &'static str) -> Run {
    Box::new(move |cx| {
        let label = "golden:chacha20/iota";
        let (rc, out) = firmware_qemu(cx, target, &format!("corrupt={label}"))?;
        let want = [&*format!("FAIL {label} *byte 4095 *corrupted on purpose*"), "1 of # checks FAILED"];
        expect_output(&out, rc, 1, &want).map_err(|e| format!("negative control: {e}"))
    })
}

/// With the 32-bit AES kernel's stack scrub taken out, the Cortex-M4F firmware's stack-residue check must fail, and only it.
pub fn firmware_stack_mutant(cx: &Ctx) -> Result<(), String> {
    let planted = |tree: &Path| firmware_build(cx, tree, M4, false).and_then(|()| firmware_qemu(cx, M4, ""));
    let (rc, out) = with_planted(cx, "fixslice32-stack-unscrubbed.patch", planted)??;
    firmware_build(cx, &cx.root, M4, false)?; // leave the real firmware built
    expect_output(&out, rc, 1, &["FAIL stack-residue aes_ctr_pool*", "1 of # checks FAILED"])
}

/// A firmware template as a user takes it: its tracked files copied out of the checkout, the path dependency pointed back,
/// then exactly `cargo build --release` and `cargo run --release`: the lines docs/NO_STD.md shows, exit 0, the ELF's
/// sections present, the committed Cargo.lock unchanged.
pub fn firmware_template(dir: &'static str, elf: &'static str, sections: &'static [&'static str]) -> Run {
    Box::new(move |cx| {
        let guide = fs::read_to_string(cx.root.join("docs/NO_STD.md")).map_err(|e| e.to_string())?;
        let want = doc_block(&guide, "<!-- output: examples/firmware -->").ok_or("docs/NO_STD.md shows no output of the template")?;
        // Outside the checkout, as a user has it (inside, cargo would find our workspace).
        let out = std::env::temp_dir().join(format!("ratchet-rng-{}-{}", std::process::id(), dir.rsplit('/').next().unwrap()));
        let _ = fs::remove_dir_all(&out);
        for f in cx.cmd(&["git", "ls-files", dir]).ok()?.lines() {
            let to = out.join(f.strip_prefix(dir).unwrap().trim_start_matches('/'));
            fs::create_dir_all(to.parent().unwrap()).map_err(|e| e.to_string())?;
            fs::copy(cx.root.join(f), &to).map_err(|e| e.to_string())?;
        }
        let manifest = out.join("Cargo.toml");
        let text = fs::read_to_string(&manifest).map_err(|e| e.to_string())?;
        let pointed = text.replace("path = \"../..\"", &format!("path = \"{}\"", cx.root.display()));
        fail_if(pointed == text, "no ratchet-rng path dependency to rewrite")?;
        fs::write(&manifest, pointed).map_err(|e| e.to_string())?;
        let user = |argv: &[&str]| cx.cmd(argv).dir(&out).unset("CARGO_TARGET_DIR").unset("CARGO_BUILD_TARGET");
        user(&["cargo", "build", "--release"]).ok()?;
        let size = cx.cmd(&["size", "-A", &out.join("target").join(elf).display().to_string()]).ok()?;
        let has_all = sections.iter().all(|s| size.lines().any(|l| l.starts_with(&format!("{s} "))));
        fail_if(!has_all, format!("the template's ELF lacks one of {sections:?}"))?;
        // Its standard output alone: cargo's own lines go to the log.
        let (rc, got) = user(&["timeout", "120", "cargo", "run", "--release"]).stdout_only().out()?;
        fail_if(rc != 0, format!("the template exited {rc} under QEMU (124: timed out)"))?;
        fail_if(got.trim_end() != want.trim_end(), "the template printed other lines than docs/NO_STD.md shows")?;
        let lock = |p: &Path| fs::read(p.join("Cargo.lock")).unwrap_or_default();
        fail_if(lock(&out) != lock(&cx.root.join(dir)), "the template's Cargo.lock is not complete (cargo changed it)")?;
        let _ = fs::remove_dir_all(&out);
        Ok(())
    })
}

/// The lines of the code block after the line `marker`.
pub fn doc_block(text: &str, marker: &str) -> Option<String> {
    let mut lines = text.lines().skip_while(|l| *l != marker).skip(1);
    lines.find(|l| l.starts_with("```"))?;
    Some(lines.take_while(|l| !l.starts_with("```")).map(|l| format!("{l}\n")).collect())
}

// ---- MSRV, minimal versions, packaging -------------------------------------------------------

pub fn minimal_versions(cx: &Ctx) -> Result<(), String> {
    let copy = cx.target.join("copy");
    let _ = fs::remove_dir_all(&copy);
    fs::create_dir_all(&copy).map_err(|e| e.to_string())?;
    cx.cmd(&["bash", "-c", &format!("tar --exclude=./target --exclude=./.git -cf - . | tar -xf - -C {}", copy.display())]).ok()?;
    let _ = fs::remove_file(copy.join("Cargo.lock"));
    cx.cmd(&["cargo", "+nightly", "update", "-Z", "direct-minimal-versions"]).dir(&copy).ok()?;
    cx.cmd(&["cargo", "tree", "--locked", "--depth", "1", "-e", "normal", "--all-features"]).dir(&copy).ok()?;
    for features in ["--all-features", "--no-default-features", "--no-default-features --target thumbv7em-none-eabihf"] {
        let argv: Vec<&str> = "cargo check --locked --lib".split(' ').chain(features.split(' ')).collect();
        cx.cmd(&argv).dir(&copy).ok()?;
    }
    let _ = fs::remove_dir_all(&copy);
    Ok(())
}

pub fn package(cx: &Ctx) -> Result<(), String> {
    cx.cmd(&["cargo", "package", "--allow-dirty"]).ok()?;
    let dir = cx.target.join("package");
    let krate =
        fs::read_dir(&dir).map_err(|e| e.to_string())?.flatten().map(|e| e.path()).find(|p| p.extension().is_some_and(|e| e == "crate"));
    let krate = krate.ok_or("cargo package wrote no .crate")?;
    let unpacked = dir.join("unpacked");
    let _ = fs::remove_dir_all(&unpacked);
    fs::create_dir_all(&unpacked).map_err(|e| e.to_string())?;
    cx.cmd(&["tar", "-xzf", &krate.display().to_string(), "-C", &unpacked.display().to_string()]).ok()?;
    let inner = fs::read_dir(&unpacked).map_err(|e| e.to_string())?.flatten().next().ok_or("empty tarball")?.path();
    cx.cmd(&["python3", "scripts/check-doc-links.py", "--package", &format!("{}/", inner.display())]).ok().map(drop)
}

// ---- fuzzing, valgrind, streams -------------------------------------------------------------

/// Fuzz targets for 20 s each (at most 2M runs), side by side (libFuzzer runs on one core).
pub fn fuzz(targets: &'static [&'static str]) -> Run {
    Box::new(move |cx| {
        let run = |t: &str| cx.cmd(&["cargo", "+nightly", "fuzz", "run", t, "--", "-max_total_time=20", "-runs=2000000"]).ok();
        let failed: Vec<&str> = std::thread::scope(|s| {
            let hs: Vec<_> = targets.iter().map(|t| (*t, s.spawn(move || run(t)))).collect();
            hs.into_iter().filter_map(|(t, h)| h.join().unwrap().is_err().then_some(t)).collect()
        });
        fail_if(!failed.is_empty(), format!("fuzzing failed in {failed:?} (inputs in fuzz/artifacts/)"))
    })
}

pub const VALGRIND: &str = "valgrind -q --tool=memcheck --error-exitcode=97 --exit-on-first-error=no --leak-check=no";

pub fn ct_negative(env: Env, release: bool) -> Run {
    Box::new(move |cx| {
        let mut argv = vec!["cargo", "test", "--all-features", "--test", "ct_valgrind"];
        argv.extend(release.then_some("--release").into_iter().chain(["--", "--negative-control"]));
        let sub = cx.cmd(&argv).envs(&[("CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER", VALGRIND)]).envs(env);
        let (rc, out) = sub.out()?;
        // Both kinds of leak reported, and valgrind's error exit.
        let mut want = vec!["*Use of uninitialised value of size*", "*Conditional jump or move depends on uninitialised value*"];
        want.extend((!release).then_some("*negative control: memcheck reported every leak*"));
        expect_output(&out, rc, 97, &want).map_err(|e| format!("negative control: {e}"))
    })
}

/// `stream GEN` writes a generator's raw output: its length, its bytes (the golden stream), exit 2 on a bad name, quiet on EPIPE.
pub fn stream_example(cx: &Ctx) -> Result<(), String> {
    cx.cmd(&["cargo", "build", "--release", "--example", "stream"]).ok()?;
    let stream = cx.target.join("release/examples/stream").display().to_string();
    let golden = fs::read_to_string(cx.root.join("tests/data/golden_streams.txt")).map_err(|e| e.to_string())?;
    let want: String =
        golden.lines().find_map(|l| l.strip_prefix("chacha8/zero: ")).ok_or("no chacha8/zero golden stream")?.chars().take(2000).collect();
    let zero = "00".repeat(32);
    let script = format!(
        "[ \"$({stream} chacha8 --seed {zero} --bytes 1000 | wc -c)\" -eq 1000 ] || {{ echo 'not 1000 bytes'; exit 1; }}
got=$({stream} chacha8 --seed {zero} --bytes 1000 | od -An -v -tx1 | tr -d ' \\n')
[ \"$got\" = {want} ] || {{ echo 'stream chacha8 differs from the golden stream'; exit 1; }}
rc=0; {stream} bogus 2>/dev/null || rc=$?
[ $rc -eq 2 ] || {{ echo \"stream bogus exited $rc, not 2\"; exit 1; }}
err=$(mktemp); set +o pipefail; {stream} aes 2>$err | head -c 1M >/dev/null; rc=${{PIPESTATUS[0]}}
[ $rc -eq 0 ] && [ ! -s $err ] || {{ echo \"stream aes | head -c 1M: exit $rc, stderr: $(cat $err)\"; exit 1; }}
rm -f $err; echo 'stream: length, golden bytes, exit 2 on a bad name, quiet closed pipe'"
    );
    cx.cmd(&["bash", "-euc", &script]).ok().map(drop)
}

/// The stream example's SeedTree paths, and a non-UTF-8 argument (exit 2, no panic).
pub fn stream_paths(cx: &Ctx) -> Result<(), String> {
    cx.cmd(&["cargo", "build", "-q", "--example", "stream"]).ok()?;
    let stream = cx.target.join("debug/examples/stream").display().to_string();
    let vectors = fs::read_to_string(cx.root.join("tests/data/seed_tree_vectors.txt")).map_err(|e| e.to_string())?;
    let want = vectors.lines().find_map(|l| l.strip_prefix("chacha8 \"7/label:east/0\": ")).ok_or("no SeedTree vector")?;
    let key = hex(b"ratchet-rng seed tree vectors");
    let script = format!(
        "got=$({stream} chacha8 --key {key} --path 7/label:east/0 --bytes 64 | od -An -v -tx1 | tr -d ' \\n')
[ \"$got\" = {want} ] || {{ echo \"stream --path: $got\"; exit 1; }}
rc=0; {stream} aes --bytes $'1\\xff' 2>/dev/null || rc=$?
[ $rc -eq 2 ] || {{ echo \"a non-UTF-8 argument exited $rc, not 2\"; exit 1; }}"
    );
    cx.cmd(&["bash", "-euc", &script]).ok().map(drop)
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

// ---- CRIU, MPI ---------------------------------------------------------------------------

/// A process using rng() checkpointed and restored by a real CRIU (4.2 or later whose
/// `criu check` passes), then with each droppable-word fix taken out, which must fail.
pub fn criu(cx: &Ctx) -> Result<(), String> {
    let version = cx.cmd(&["criu", "--version"]).ok().unwrap_or_default();
    let version = version.lines().find_map(|l| l.strip_prefix("Version: ")).unwrap_or("").to_string();
    let v: Vec<u32> = version.split('.').filter_map(|p| p.parse().ok()).collect();
    if v.len() < 2 || (v[0], v[1]) < (4, 2) || cx.cmd(&["criu", "check"]).ok().is_err() {
        let v = if version.is_empty() { "none" } else { &version };
        return cx.skip(&format!("no CRIU 4.2 or later whose 'criu check' passes here (criu: {v}); see SECURITY.md"));
    }
    let exe = cx.target.join("debug/examples/criu_restore").display().to_string();
    cx.cmd(&["cargo", "build", "-q", "--example", "criu_restore"]).ok()?;
    cx.cmd(&["bash", "scripts/criu-restore.sh", &exe]).ok()?;
    for patch in ["process-restore-unwatched.patch", "process-restore-not-rearmed.patch"] {
        let (rc, _) = with_planted(cx, patch, |tree| {
            let built = cx.cmd(&["cargo", "build", "-q", "--example", "criu_restore"]).dir(tree).ok();
            built.and_then(|_| cx.cmd(&["bash", "scripts/criu-restore.sh", &exe]).out())
        })??;
        fail_if(rc != 1, format!("with {patch} planted, scripts/criu-restore.sh exited {rc}, not 1"))?;
    }
    cx.cmd(&["cargo", "build", "-q", "--example", "criu_restore"]).ok().map(drop)
}

/// examples/mpi's `mpi-pi` line, byte for byte that of examples/parallel.rs for the same job, on 1, 2 and 4 ranks, reversed,
/// with jitter, for three generators; another key, another digest. Then, seeded from the rank (a mutant), it must differ.
pub fn mpi(cx: &Ctx) -> Result<(), String> {
    let build = |tree: &Path| {
        let m = tree.join("examples/mpi/Cargo.toml").display().to_string();
        cx.cmd(&["cargo", "build", "--release", "--locked", "--manifest-path", &m]).ok()
    };
    build(&cx.root)?;
    cx.cmd(&["cargo", "build", "--release", "--example", "parallel"]).ok()?;
    cx.cmd(&["cargo", "test", "--release", "--locked", "--manifest-path", "examples/mpi/Cargo.toml"]).ok()?;
    mpi_compare(cx)?;
    let result = with_planted(cx, "mpi-rank-as-child.patch", |tree| build(tree).and_then(|_| mpi_compare(cx)))?;
    build(&cx.root)?; // leave the real binary built
    match result {
        Err(e) if e.contains("differs from parallel.rs") => {
            cx.say(&format!("mutant mpi-rank-as-child.patch: the comparison fails, as it must: {e}"));
            Ok(())
        }
        Err(e) => Err(format!("with mpi-rank-as-child.patch planted, the MPI comparison failed otherwise: {e}")),
        Ok(()) => Err("with mpi-rank-as-child.patch planted, the MPI comparison passed".into()),
    }
}

fn mpi_compare(cx: &Ctx) -> Result<(), String> {
    let key = hex(b"ratchet-rng mpi");
    // The job's result line: examples/parallel.rs's (no ranks) or mpi-pi's on N ranks.
    let line = |ranks: &str, args: String| -> Result<String, String> {
        let (prefix, exe) = match ranks {
            "" => ("", "release/examples/parallel"),
            _ => ("timeout 60 mpirun --oversubscribe --mca btl self,vader --allow-run-as-root -n", "release/mpi-pi"),
        };
        let mut argv: Vec<String> = format!("{prefix} {ranks}").split_whitespace().map(String::from).collect();
        argv.push(cx.target.join(exe).display().to_string());
        argv.extend(format!("--tasks 256 --samples 50000 {args}").split_whitespace().map(String::from));
        let out = cx.cmd(&argv).stdout_only().ok()?;
        let l = out.lines().rev().find(|l| l.starts_with("tasks=")).ok_or(format!("`{}` printed no result line", argv.join(" ")))?;
        let well_formed =
            line_matches("tasks=256 samples=50000 hits=# digest=* pi=#.#", l) && l.split(' ').nth(3).map(str::len) == Some(39);
        if well_formed { Ok(l.to_string()) } else { Err(format!("not a result line: '{l}'")) }
    };
    let chacha8: &[&str] = &["1", "2", "4", "4 --reverse", "4 --jitter"];
    for (generator, ranks) in [("chacha8", chacha8), ("aes", &["4"]), ("turboshake", &["4"])] {
        let want = line("", format!("--key {key} --gen {generator}"))?;
        for r in ranks {
            let (n, more) = r.split_once(' ').unwrap_or((r, ""));
            let got = line(n, format!("--key {key} --gen {generator} {more}"))?;
            fail_if(got != want, format!("mpi-pi -n {r} --gen {generator} differs from parallel.rs: '{got}' != '{want}'"))?;
        }
    }
    let (want, got) = (line("", format!("--key {key}"))?, line("2", format!("--key {key}00"))?);
    fail_if(got.split(' ').nth(3) == want.split(' ').nth(3), format!("another key gave the same digest: '{got}'"))?;
    cx.say("the same line on 1, 2 and 4 ranks, reversed, with jitter, as parallel.rs; another key, another digest");
    Ok(())
}

// ---- Miri --------------------------------------------------------------------------------

pub const MODELS: [(&str, &str); 2] = [("stacked borrows", ""), ("tree borrows", "-Zmiri-tree-borrows")];

/// `cargo +nightly miri test --all-features` built once (`build`), then one run per aliasing model side by side, each a
/// list of commands (model 0: `runs[0]`); their exit codes (the last failing one's) and outputs.
pub fn miri_models(cx: &Ctx, dir: &Path, env: Env, build: &[&str], runs: [&[&[&str]]; 2]) -> Result<Vec<(i32, String)>, String> {
    let miri = |args: &[&str], flags: &str| {
        let argv = [&["cargo", "+nightly", "miri", "test", "--all-features"][..], args].concat();
        let flags = format!("-Zmiri-disable-isolation {flags}");
        let vars = [("PROPTEST_CASES", "1"), ("RATCHET_RNG_PROPTEST_CASES", "1"), ("MIRIFLAGS", &flags)];
        cx.cmd(&argv).dir(dir).unset("RUSTC_WRAPPER").envs(&vars).envs(env)
    };
    miri(&[build, &["--no-run"]].concat(), "").ok()?;
    // Both models' commands as one queue for two workers, taken alternately from each model's list: a model whose commands
    // run shorter lends its core to the other's rest (one fixed thread per model left a core idle for a minute).
    let mut jobs = Vec::new();
    for k in 0..runs[0].len().max(runs[1].len()) {
        jobs.extend((0..2).filter_map(|i| runs[i].get(k).map(|args| (i, *args))));
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results = std::sync::Mutex::new(vec![(0, String::new()), (0, String::new())]);
    std::thread::scope(|s| {
        let work = || -> Result<(), String> {
            while let Some(&(i, args)) = jobs.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed)) {
                let (r, out) = miri(args, MODELS[i].1).out()?;
                let mut all = results.lock().unwrap();
                all[i].0 = if r != 0 { r } else { all[i].0 };
                all[i].1.push_str(&out);
            }
            Ok(())
        };
        let workers: Vec<_> = (0..2).map(|_| s.spawn(work)).collect();
        workers.into_iter().try_for_each(|w| w.join().unwrap())
    })?;
    Ok(results.into_inner().unwrap())
}

/// Each model's run passed, every command's test binary reporting tests passed.
pub fn miri(env: Env, build: Args, runs: [&'static [Args]; 2]) -> Run {
    Box::new(move |cx| {
        let results = miri_models(cx, &cx.root, env, build, runs)?;
        for (i, (rc, out)) in results.iter().enumerate() {
            let binaries = runs[i].iter().map(|a| a.iter().filter(|w| **w == "--lib" || **w == "--test").count()).sum::<usize>();
            let passed = out.lines().filter(|l| line_matches("test result: ok. # passed; 0 failed*", l)).count();
            let why = format!("Miri failed under {} (exit {rc}; {passed} of {binaries} test binaries passed)", MODELS[i].0);
            fail_if(*rc != 0 || passed != binaries, why)?;
        }
        Ok(())
    })
}

/// With PATCH planted, Miri must report undefined behaviour under both models, in each of `wheres` (the `-->` line) if any.
pub fn miri_mutant(patch: &'static str, env: Env, build: Args, run: Args, wheres: Args) -> Run {
    Box::new(move |cx| {
        let results = with_planted(cx, patch, |tree| miri_models(cx, tree, env, build, [&[run], &[run]]))??;
        for (i, (rc, out)) in results.iter().enumerate() {
            let lines: Vec<&str> = out.lines().collect();
            let found = |w: &str| {
                lines
                    .windows(2)
                    .any(|p| p[0].contains("Undefined Behavior: pointer not dereferenceable") && p[1].contains(&format!("--> {w}")))
            };
            let why = format!("with {patch} planted, Miri ({}) reported no undefined behaviour where it must", MODELS[i].0);
            fail_if(*rc == 0 || !out.contains("Undefined Behavior") || !wheres.iter().all(|w| found(w)), why)?;
        }
        cx.say(&format!("mutant {patch}: Miri reports it under both models, as it must"));
        Ok(())
    })
}
