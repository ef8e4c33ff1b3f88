//! The thread-local generator in sandboxed processes (Linux): the first use in a
//! process decides its fork protection, and that decision must neither kill nor
//! slow a process that forbids `fork`, ignores `SIGCHLD` or reaps every child.
//!
//! Each scenario re-runs this test binary as a child process (a fresh process:
//! nothing decided yet), which sets up the sandbox *before* the generator's
//! first use, then times 100,000 `u64()` calls against 100,000 calls of a path
//! that makes one `getpid` system call per value (what the slow fallback pays),
//! best of 20 alternating runs each (a loaded or one-core machine spoils some
//! runs of both, not the minimum), and exits 0. Scenarios:
//! - a seccomp filter that kills the process on `fork`, `vfork`, `clone` and
//!   `clone3` (before the fix, the first `u64()` forked its probe child: the
//!   process died, exit 159);
//! - the same filter returning `EPERM` (before: the probe failed, every call
//!   then paid a `getpid`);
//! - `SIGCHLD` set to `SIG_IGN` (before: the probe's child was reaped by the
//!   kernel, the probe failed, every call paid a `getpid`);
//! - a reaper thread calling `waitpid(-1, ..)` in a loop (before: it could take
//!   the probe's child);
//! - no process may be made at all (issue 34): a filter that kills on `fork`,
//!   `vfork` and a `clone` without `CLONE_THREAD` and answers `clone3` with
//!   `ENOSYS` (libc then makes threads with `clone`), so that threads still
//!   work: a new thread draws too. Before issue 34 the first use forked its
//!   probe child wherever `/proc` showed no filter (this filter is installed
//!   after that read could be made, so only a crate that makes no child passes).
//!
//! Each must keep the fast path: `u64()` at most a quarter of the `getpid`
//! path's cost per call (generous: a buffered `u64()` costs a few ns, a system
//! call 50 ns or more), and, with the inspection hook (`RATCHET_RNG_INSPECT=1`),
//! wipe-on-fork in effect. Under qemu-user (no wipe-on-fork, no seccomp) the
//! child says SKIPPED.
#![cfg(all(
    any(target_os = "linux", target_os = "android"),
    any(target_arch = "x86_64", target_arch = "aarch64")
))]

use std::hint::black_box;
use std::process::Command;
use std::time::Instant;

const SCENARIO: &str = "RATCHET_RNG_SANDBOX_SCENARIO";
const CALLS: u32 = 100_000;

fn under_qemu_user() -> bool {
    std::fs::read_to_string("/proc/self/comm").is_ok_and(|name| name.starts_with("qemu-"))
}

/// Installs a seccomp filter returning `action` for the fork family.
fn forbid_fork(action: u32) {
    const LD_W_ABS: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
    const JEQ_K: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
    const RET_K: u16 = 0x06; // BPF_RET | BPF_K
    const ALLOW: u32 = 0x7fff_0000;
    #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))]
    let mut calls: Vec<u32> = vec![libc::SYS_clone as u32, libc::SYS_clone3 as u32];
    #[cfg(target_arch = "x86_64")]
    calls.extend([libc::SYS_fork as u32, libc::SYS_vfork as u32]);
    let n = calls.len() as u8;
    let mut filter = vec![libc::sock_filter {
        code: LD_W_ABS,
        jt: 0,
        jf: 0,
        k: 0, // seccomp_data.nr
    }];
    for (i, nr) in calls.iter().enumerate() {
        // Match: jump to the action (after the remaining compares and ALLOW).
        filter.push(libc::sock_filter {
            code: JEQ_K,
            jt: n - i as u8,
            jf: 0,
            k: *nr,
        });
    }
    filter.push(libc::sock_filter {
        code: RET_K,
        jt: 0,
        jf: 0,
        k: ALLOW,
    });
    filter.push(libc::sock_filter {
        code: RET_K,
        jt: 0,
        jf: 0,
        k: action,
    });
    let prog = libc::sock_fprog {
        len: filter.len() as u16,
        filter: filter.as_mut_ptr(),
    };
    // SAFETY: plain prctl calls with a valid filter program.
    unsafe {
        assert_eq!(libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
        assert_eq!(
            libc::prctl(
                libc::PR_SET_SECCOMP,
                libc::SECCOMP_MODE_FILTER,
                &prog as *const libc::sock_fprog
            ),
            0,
            "seccomp: {}",
            std::io::Error::last_os_error()
        );
    }
}

/// Installs a seccomp filter that kills the process on any system call that
/// makes a process (`fork`, `vfork`, `clone` without `CLONE_THREAD`) and
/// answers `clone3` with `ENOSYS`, whose flags a filter cannot read.
fn forbid_process_creation() {
    const LD_W_ABS: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
    const JEQ_K: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
    const JSET_K: u16 = 0x45; // BPF_JMP | BPF_JSET | BPF_K
    const RET_K: u16 = 0x06; // BPF_RET | BPF_K
    const ALLOW: u32 = 0x7fff_0000;
    const KILL: u32 = 0x8000_0000; // SECCOMP_RET_KILL_PROCESS
    const ENOSYS: u32 = 0x0005_0000 | libc::ENOSYS as u32;
    let op = |code, jt, jf, k| libc::sock_filter { code, jt, jf, k };
    // `seccomp_data`: `nr` at 0; `args[0]` (the flags: x86_64 and aarch64
    // pass them first) at 16, its low word first on these little-endian
    // targets.
    #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))]
    let mut filter = vec![
        op(LD_W_ABS, 0, 0, 0),
        op(JEQ_K, 0, 1, libc::SYS_clone3 as u32),
        op(RET_K, 0, 0, ENOSYS),
        op(JEQ_K, 0, 4, libc::SYS_clone as u32),
        op(LD_W_ABS, 0, 0, 16),
        op(JSET_K, 0, 1, libc::CLONE_THREAD as u32),
        op(RET_K, 0, 0, ALLOW),
        op(RET_K, 0, 0, KILL),
    ];
    #[cfg(target_arch = "x86_64")]
    filter.extend([
        op(JEQ_K, 1, 0, libc::SYS_fork as u32),
        op(JEQ_K, 0, 1, libc::SYS_vfork as u32),
        op(RET_K, 0, 0, KILL),
    ]);
    filter.push(op(RET_K, 0, 0, ALLOW));
    let prog = libc::sock_fprog {
        len: filter.len() as u16,
        filter: filter.as_mut_ptr(),
    };
    // SAFETY: plain prctl calls with a valid filter program.
    unsafe {
        assert_eq!(libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
        assert_eq!(
            libc::prctl(
                libc::PR_SET_SECCOMP,
                libc::SECCOMP_MODE_FILTER,
                &prog as *const libc::sock_fprog
            ),
            0,
            "seccomp: {}",
            std::io::Error::last_os_error()
        );
    }
}

/// Nanoseconds per call of `a` and of `b`, each the best of [`ROUNDS`] runs of
/// [`CALLS`], the two alternating: a burst of load or a preemption spoils a
/// run of each, not the comparison (a minimum, not a mean, is compared).
fn per_call(mut a: impl FnMut() -> u64, mut b: impl FnMut() -> u64) -> (f64, f64) {
    const ROUNDS: usize = 20;
    let time = |f: &mut dyn FnMut() -> u64| {
        let start = Instant::now();
        for _ in 0..CALLS {
            black_box(f());
        }
        start.elapsed().as_nanos() as f64 / f64::from(CALLS)
    };
    (0..ROUNDS)
        .map(|_| (time(&mut a), time(&mut b)))
        .fold((f64::INFINITY, f64::INFINITY), |(x, y), (ta, tb)| {
            (x.min(ta), y.min(tb))
        })
}

/// The child's side: set up the sandbox, use the generator, measure.
#[test]
fn sandbox_child() {
    let Ok(scenario) = std::env::var(SCENARIO) else {
        return; // Run by the parent tests below only.
    };
    match scenario.as_str() {
        "kill" => forbid_fork(0x8000_0000), // SECCOMP_RET_KILL_PROCESS
        "eperm" => forbid_fork(0x0005_0000 | libc::EPERM as u32), // SECCOMP_RET_ERRNO
        "sigchld_ignored" => {
            // SAFETY: sets a standard disposition.
            unsafe { libc::signal(libc::SIGCHLD, libc::SIG_IGN) };
        }
        "reaper" => {
            std::thread::spawn(|| {
                loop {
                    let mut status = 0;
                    // SAFETY: a valid out-pointer; reaps any child.
                    if unsafe { libc::waitpid(-1, &mut status, 0) } < 0 {
                        std::thread::sleep(std::time::Duration::from_micros(50));
                    }
                }
            });
        }
        "no_child" => {
            forbid_process_creation();
            // A new thread's first use, under the filter (threads are allowed).
            let there = std::thread::spawn(ratchet_rng::u64).join().unwrap();
            assert_ne!(there, 0);
        }
        other => panic!("unknown scenario {other}"),
    }
    let first = ratchet_rng::u64();
    let values: Vec<u64> = (0..1000).map(|_| ratchet_rng::u64()).collect();
    assert!(values.iter().all(|&v| v != first && v != 0));
    let (ours, syscall) = per_call(ratchet_rng::u64, || {
        // SAFETY: `getpid` has no preconditions.
        ratchet_rng::u64() ^ unsafe { libc::getpid() } as u64
    });
    #[cfg(ratchet_rng_inspect)]
    let wipe = Some(
        ratchet_rng::__inspect::thread_state_pages()
            .unwrap()
            .wipe_on_fork,
    );
    #[cfg(not(ratchet_rng_inspect))]
    let wipe: Option<bool> = None;
    println!(
        "sandbox {scenario}: u64 {ours:.2} ns/call, with getpid {syscall:.2} ns/call, wipe-on-fork {wipe:?}"
    );
    if under_qemu_user() {
        println!("SKIPPED the speed and wipe checks under qemu-user (no wipe-on-fork there)");
        return;
    }
    assert!(
        ours * 4.0 < syscall,
        "{scenario}: u64() costs {ours:.2} ns per call, the getpid path {syscall:.2} ns: \
         the fallback is in use"
    );
    assert_ne!(wipe, Some(false), "{scenario}: no wipe-on-fork");
}

/// Runs the child for `scenario`; it must exit 0 and report its numbers.
fn run(scenario: &str) {
    if under_qemu_user() {
        // No wipe-on-fork and no seccomp there; and the child would not run
        // under the emulator.
        eprintln!("SKIPPED under qemu-user: sandbox scenario {scenario}");
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let out = Command::new(exe)
        .args([
            "--exact",
            "sandbox_child",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env(SCENARIO, scenario)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!(
        "{}",
        stdout
            .lines()
            .filter(|l| l.contains("sandbox ") || l.contains("SKIPPED"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(
        out.status.success(),
        "{scenario}: the child failed ({:?})\n{stdout}\n{stderr}",
        out.status
    );
    assert!(stdout.contains(&format!("sandbox {scenario}:")), "{stdout}");
}

#[test]
fn seccomp_kill_on_fork() {
    run("kill");
}

#[test]
fn seccomp_eperm_on_fork() {
    run("eperm");
}

#[test]
fn sigchld_ignored() {
    run("sigchld_ignored");
}

#[test]
fn reaper_thread() {
    run("reaper");
}

#[test]
fn no_process_is_made() {
    run("no_child");
}
