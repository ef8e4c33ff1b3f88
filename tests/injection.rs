//! Deterministic interleavings of the thread layer (Linux): a real signal handler
//! raised at each injection point of `src/thread/storage.rs`,
//! `src/thread/fork.rs` and `src/thread/pages.rs` (`__inspect::Point`, compiled
//! only with `RATCHET_RNG_INSPECT=1`; a plain run counts these tests as
//! ignored).
//!
//! Each test names one point and runs it with every handler kind ([`KINDS`]:
//! one that draws, one that forks through libc and one by the raw `clone`
//! system call (the child draws in the handler and after the interrupted call
//! returns, and reports through a pipe), one that calls `reseed()`); the
//! thread's page is given back to its slab when it exits, and the next thread
//! takes it. Each run
//! is a fresh process (this binary, re-run with [`SCENARIO`] set), so a crash is
//! a failed run with a message, and the process's pages can be counted. The
//! scenario ([`scenario`]): a worker thread goes through first use, the fast
//! paths, a refill, `reseed()`, a libc `fork` and thread exit, with a
//! thread-local destructor that draws after the generator's own (a "late"
//! call); the hook raises `SIGUSR1` on the worker at the point, at most
//! [`MAX_FIRES`] times. Once the worker's page is released, a second thread
//! starts, takes the page if it was kept, and snapshots its unread output
//! before the late calls run. Asserted: 0 repeated values (the late calls'
//! values among the second thread's unread output count as repeats), 0 zeros,
//! no crash (the process or a child killed), no child value equal to a parent
//! value, and, after both threads exited, every page the process mapped is
//! free in its slab and all zero (no page leaked, none left unwiped).
//!
//! `per_thread_seccomp_verdicts_agree` races two threads' first use (issue 20,
//! finding 3): one under a seccomp filter (which once meant trusting the wipe
//! advice), one whose verdict says the wipe fails; the first is held at `DecideVerdict` until
//! the second has stored its verdict. The process must end on `PidCheck`, the
//! first thread's fast path closed, and a raw-`clone` child must serve none of
//! its buffered bytes.
//!
//! A fifth kind, `ReseedAll`, calls `reseed_all_threads()` and then draws: the
//! interrupted call must then serve nothing it took before (the generation
//! check, issue 19), and the counts above must hold. At its first fire the
//! handler also snapshots the worker's whole buffer; no value drawn after that
//! may be found in it (`stale_served`, issue 26: a fast path that ignored the
//! generation would go on serving it, which no repeat count sees).
#![cfg(any(target_os = "linux", target_os = "android"))]

use std::time::{Duration, Instant};

#[cfg(ratchet_rng_inspect)]
#[path = "common/raw_fork.rs"]
mod raw_fork;

#[path = "common/this_binary.rs"]
mod this_binary;
use this_binary::this_binary;

const SCENARIO: &str = "RATCHET_RNG_INJECTION_SCENARIO";

/// How a handler reacts at the point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Draw,
    Fork,
    RawFork,
    Reseed,
    ReseedAll,
}

const KINDS: [Kind; 5] = [
    Kind::Draw,
    Kind::Fork,
    Kind::RawFork,
    Kind::Reseed,
    Kind::ReseedAll,
];

/// What happens to the worker's page when it exits: it is given back to its
/// slab, and the next thread takes it (slabs are never unmapped).
const SPARES: [&str; 1] = ["kept"];

/// How many times a scenario's hook raises the signal.
#[cfg(ratchet_rng_inspect)]
const MAX_FIRES: usize = 3;

/// Points reached only through an open fast path or the seed reserve (not
/// where every call takes the slow path: no working wipe, as under qemu-user).
const FAST_PATH_ONLY: [&str; 5] = [
    "ReserveFilled",
    "ReserveTaken",
    "TakeCopied",
    "TakeBeforeLive",
    "TakeAfterLive",
];

/// What one scenario process reported.
#[derive(Debug, Default)]
struct Outcome {
    fields: Vec<(String, String)>,
    crash: Option<String>,
}

impl Outcome {
    fn get(&self, key: &str) -> usize {
        self.fields
            .iter()
            .find(|(k, _)| k == key)
            .and_then(|(_, v)| v.parse().ok())
            .unwrap_or(0)
    }

    fn text(&self, key: &str) -> &str {
        self.fields
            .iter()
            .find(|(k, _)| k == key)
            .map_or("", |(_, v)| v.as_str())
    }
}

/// [`run`] for the tests of one scenario: prints its outcome and requires that
/// the scenario process did not crash.
fn run_whole(spec: &str) -> Outcome {
    let o = run(spec);
    eprintln!("{o:?}");
    assert!(o.crash.is_none(), "{:?}", o.crash);
    o
}

/// Runs this binary's `scenario_child` with `spec` and parses its result line.
fn run(spec: &str) -> Outcome {
    let mut child = this_binary()
        .args([
            "scenario_child",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(SCENARIO, spec)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("re-run this test binary");
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let mut outcome = Outcome::default();
    match stdout
        .lines()
        .find_map(|l| l.split_once("INJECTION-RESULT ").map(|(_, r)| r))
    {
        Some(line) => {
            outcome.fields = line
                .split_whitespace()
                .filter_map(|kv| kv.split_once('='))
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect();
        }
        None => {
            use std::os::unix::process::ExitStatusExt;
            let how = match status {
                None => "timed out after 120 s".to_owned(),
                Some(s) if s.signal().is_some() => {
                    format!("killed by signal {}", s.signal().unwrap())
                }
                Some(s) => format!("exit {s}"),
            };
            let tail: Vec<&str> = stderr.lines().rev().take(6).collect();
            outcome.crash = Some(format!("{how}; stderr: {}", tail.join(" | ")));
        }
    }
    if outcome.crash.is_none() && outcome.get("failed_children") > 0 {
        outcome.crash = Some(format!(
            "{} forked children crashed or failed",
            outcome.get("failed_children")
        ));
    }
    outcome
}

/// Runs `point` with every kind and both spare modes; asserts, with a table.
fn check_point(point: &str) {
    let mut failures = Vec::new();
    let mut fired = 0;
    let mut protection = String::new();
    for kind in KINDS {
        for spare in SPARES {
            let o = run(&format!("{point}:{kind:?}:{spare}"));
            let counts = [
                ("stale_served", o.get("stale_served")),
                ("repeats", o.get("repeats")),
                ("zeros", o.get("zeros")),
                ("child_shared", o.get("child_shared")),
                ("leaked", o.get("leaked")),
                ("unwiped", o.get("unwiped")),
            ];
            eprintln!(
                "{point} {kind:?} spare {spare}: fired {}, {} values, {} children ({} values): {}{}",
                o.get("fired"),
                o.get("values"),
                o.get("children"),
                o.get("child_values"),
                counts
                    .iter()
                    .map(|(k, v)| format!("{k} {v}"))
                    .collect::<Vec<_>>()
                    .join(", "),
                o.crash
                    .as_deref()
                    .map(|c| format!(", CRASH: {c}"))
                    .unwrap_or_default(),
            );
            fired += o.get("fired");
            if protection.is_empty() {
                protection = o.text("protection").to_owned();
            }
            if let Some(crash) = &o.crash {
                failures.push(format!("{kind:?}/{spare}: {crash}"));
            }
            for (name, n) in counts {
                if n != 0 {
                    failures.push(format!("{kind:?}/{spare}: {n} {name}"));
                }
            }
            if o.crash.is_none() && o.get("values") < 100 {
                failures.push(format!("{kind:?}/{spare}: only {} values", o.get("values")));
            }
            if matches!(kind, Kind::Fork | Kind::RawFork)
                && o.get("fired") > 0
                && o.crash.is_none()
                && o.get("child_values") == 0
            {
                failures.push(format!("{kind:?}/{spare}: forked, but no child reported"));
            }
        }
    }
    if fired == 0 {
        if FAST_PATH_ONLY.contains(&point) && protection == "PidCheck" {
            eprintln!(
                "SKIPPED: {point} is not reached here (protection PidCheck: no fast path, no seed reserve)"
            );
        } else {
            failures.push(format!(
                "{point} was never reached (protection {protection})"
            ));
        }
    }
    assert!(failures.is_empty(), "{point}: {}", failures.join("; "));
}

macro_rules! point_tests {
    ($($name:ident => $point:literal,)*) => {$(
        #[test]
        #[cfg_attr(not(ratchet_rng_inspect), ignore = "needs RATCHET_RNG_INSPECT=1")]
        fn $name() {
            check_point($point);
        }
    )*};
}

point_tests! {
    take_slot_read => "TakeSlotRead",
    take_copied => "TakeCopied",
    take_before_live => "TakeBeforeLive",
    take_after_live => "TakeAfterLive",
    slow_slot_read => "SlowSlotRead",
    slow_marked => "SlowMarked",
    slow_page_read => "SlowPageRead",
    page_mapped => "PageMapped",
    page_published => "PagePublished",
    slow_probed => "SlowProbed",
    slow_generation_read => "SlowGenerationRead",
    slow_served => "SlowServed",
    slow_before_live => "SlowBeforeLive",
    slow_after_live => "SlowAfterLive",
    decide_verdict => "DecideVerdict",
    reserve_filled => "ReserveFilled",
    reserve_taken => "ReserveTaken",
    drop_entered => "DropEntered",
    drop_closed => "DropClosed",
    drop_page_taken => "DropPageTaken",
    drop_wiped => "DropWiped",
    child_hook_read => "ChildHookRead",
}

#[test]
#[cfg_attr(not(ratchet_rng_inspect), ignore = "needs RATCHET_RNG_INSPECT=1")]
fn per_thread_seccomp_verdicts_agree() {
    let o = run_whole("seccomp");
    let counts = (
        o.text("protection").to_owned(),
        o.text("gate_open").to_owned(),
        o.get("child_shared"),
        o.get("zeros"),
    );
    assert!(o.get("child_values") > 0, "the child did not report");
    assert_eq!(
        counts,
        ("PidCheck".to_owned(), "false".to_owned(), 0, 0),
        "(verdict, filtered thread's fast path open, child values equal to the parent's \
         values or buffered bytes, zeros)"
    );
}

/// Issue 31, point 3: a child on the `pthread_atfork`-only path (no believed
/// wipe) holds neither the forking thread's key and buffer nor another
/// thread's: every byte of them reads zero in the child before its first call.
#[test]
#[cfg_attr(not(ratchet_rng_inspect), ignore = "needs RATCHET_RNG_INSPECT=1")]
fn atfork_child_holds_no_parent_key_nor_buffer() {
    let o = run_whole("atfork_child");
    assert_eq!(o.text("protection"), "PidCheck");
    assert!(
        o.get("before_key") > 0 && o.get("before_other_key") > 0,
        "a parent's key reads zero: nothing to check"
    );
    let counts = ["child_key", "child_unread", "other_key", "other_unread"].map(|k| o.get(k));
    assert_eq!(
        (o.get("read"), counts),
        (32, [0; 4]),
        "(bytes the child sent, nonzero bytes the child holds of: this thread's key, \
         its unread output, the other thread's key, its unread output)"
    );
}

/// Issue 34: no probe child vouches for the wipe any more; the classification
/// (an unknown advice refused, the wipe advice accepted) must alone keep a
/// raw-`clone` child from serving its parent's buffered bytes, natively (the
/// wipe) and under qemu-user (not believed: the process-id check), with no
/// droppable generation word to catch the fork instead.
#[test]
#[cfg_attr(not(ratchet_rng_inspect), ignore = "needs RATCHET_RNG_INSPECT=1")]
fn raw_fork_child_shares_nothing_without_droppable() {
    let o = run_whole("raw_fork_no_droppable");
    assert!(o.get("buffered") > 4 && o.get("child_values") > 0, "{o:?}");
    assert_eq!(
        o.get("child_shared"),
        0,
        "child values among the parent's values or buffered bytes"
    );
}

/// Issue 46: the `pthread_atfork` handler is registered by a process's first
/// use, whatever the wipe: never at a later call, which a signal handler may
/// make while `fork()` holds libc's lock.
#[test]
#[cfg_attr(not(ratchet_rng_inspect), ignore = "needs RATCHET_RNG_INSPECT=1")]
fn fork_handler_registered_by_the_first_use() {
    let o = run_whole("second_layer");
    assert_eq!(
        (o.get("before"), o.get("after_first"), o.get("after_refill")),
        (0, 1, 1),
        "registered (before any draw, after the first draw, after a refill), protection {}",
        o.text("protection")
    );
}

/// Issue 46, defect 1: after a thread's first use, no call (refills, reseeds,
/// a fork, another thread's first use and refills) makes a call that is not
/// async-signal-safe (`pthread_atfork`, `dlsym`): the crate counts them.
#[test]
#[cfg_attr(not(ratchet_rng_inspect), ignore = "needs RATCHET_RNG_INSPECT=1")]
fn no_call_after_first_use_is_async_signal_unsafe() {
    let o = run_whole("signal_safety");
    assert!(o.get("values") > 1000, "{o:?}");
    assert_eq!(
        (o.get("unsafe_after_first_use"), o.get("child_unsafe")),
        (0, 0),
        "calls that are not async-signal-safe after a first use (parent, child), protection {}",
        o.text("protection")
    );
}

/// Issue 46, defect 5: a seccomp filter that fakes `MADV_WIPEONFORK` (answers 0
/// without running it) while the unknown advice still gets `EINVAL` is
/// believed; the `pthread_atfork` handler, registered by the first use, must
/// still keep a libc child forked right after it from serving its parent's
/// next values.
#[test]
#[cfg_attr(not(ratchet_rng_inspect), ignore = "needs RATCHET_RNG_INSPECT=1")]
fn a_faked_wipe_is_caught_from_the_first_use() {
    let o = run_whole("faked_wipe");
    if o.text("filtered") != "1" {
        eprintln!("skipped: the seccomp filter could not be installed ({o:?})");
        return;
    }
    assert_eq!(
        (o.get("child_values"), o.get("shared")),
        (4, 0),
        "(child values, child values among the parent's next ones), protection {}",
        o.text("protection")
    );
}

/// Issue 46, defect 4: where no wipe is believed, a child forked after the
/// slow path's last check (from a signal handler inside the call) holds none
/// of its parent's key or unread output when the interrupted call returns.
#[test]
#[cfg_attr(not(ratchet_rng_inspect), ignore = "needs RATCHET_RNG_INSPECT=1")]
fn a_child_forked_after_the_recheck_holds_no_parent_key() {
    let o = run_whole("fork_after_recheck");
    assert_eq!(
        (o.text("protection"), o.get("forked")),
        ("PidCheck", 1),
        "{o:?}"
    );
    assert!(
        o.get("before_key") > 0 && o.get("before_unread") > 0,
        "nothing to check: {o:?}"
    );
    assert_eq!(
        (o.get("child_key"), o.get("child_unread")),
        (0, 0),
        "nonzero bytes of the parent's key and unread output in the child"
    );
}

/// Issue 46, defect 2: two threads race to make the first slab; the one whose
/// slab is published saw the wipe fail, the loser's advice was accepted. Both
/// must report the published slab's advice (not wiped): the loser's own,
/// unmapped, must not make its state believed wiped.
#[test]
#[cfg_attr(not(ratchet_rng_inspect), ignore = "needs RATCHET_RNG_INSPECT=1")]
fn the_advice_is_the_published_slabs() {
    let o = run_whole("slab_race");
    assert_eq!(o.get("loser_held"), 1, "the race did not happen: {o:?}");
    assert_eq!(
        (o.get("winner_wiped"), o.get("loser_wiped")),
        (0, 0),
        "(winner's, loser's) state believed wiped in a forked child"
    );
}

/// Issue 46, nit: a `reseed()` from a signal handler inside a call (the state
/// in use) is done by that call as it ends: the next call serves none of the
/// bytes buffered before, and the key is new.
#[test]
#[cfg_attr(not(ratchet_rng_inspect), ignore = "needs RATCHET_RNG_INSPECT=1")]
fn a_reentrant_reseed_is_done_as_the_call_ends() {
    let o = run_whole("reentrant_reseed");
    assert_eq!(o.get("fired"), 1, "{o:?}");
    assert_eq!(
        (o.get("key_kept"), o.get("served_buffered")),
        (0, 0),
        "(the key unchanged by the next call, its value among the bytes buffered before)"
    );
}

/// Issue 34: a thread's state shares a 4 KiB page with other threads', and its
/// output buffer is touched only by its first refill: after one `u64()` no
/// page of the buffer is resident (`mincore`), after a refill one is. Where
/// the wipe is not believed (an emulator: qemu-user's `mincore` answers for
/// its own pages), and where there is no AES hardware (the ChaCha engine has
/// no short batch: its first key period goes to the buffer), the check is
/// skipped, and says so.
#[test]
#[cfg_attr(not(ratchet_rng_inspect), ignore = "needs RATCHET_RNG_INSPECT=1")]
fn a_thread_that_draws_once_leaves_its_buffer_untouched() {
    let o = run_whole("untouched_buffer");
    if o.text("protection") != "Wipe" || o.text("aes") == "soft" {
        eprintln!(
            "skipped: protection {}, AES backend {} (an emulator, or the ChaCha engine)",
            o.text("protection"),
            o.text("aes")
        );
        return;
    }
    assert_eq!(
        (o.get("first"), o.get("after_refill") > 0),
        (0, true),
        "resident pages of the buffer (after one u64(), after a refill > 0)"
    );
}

/// Issue 34: a new thread's first seeding takes 32 bytes from the process's
/// reserve of OS bytes (fetched 8 seeds at a time) where every child, however
/// made, finds that reserve wiped. Across a libc `fork`, a new thread in the
/// parent and one in the child take different seeds, and each thread took
/// one (so the reserve was exercised); the child's reserve holds no zero
/// seed. Where the wipe is not believed (simulated; an emulator), no thread
/// takes from it. Both without the droppable generation word, whose wipe
/// would move the child's generation, after which no first use takes from
/// the reserve at all (Linux 6.11+; an older kernel is what this imitates).
/// Shown to fail with the reserve outside the wiped slab
/// (`.ci/mutants/reserve-outside-the-slab.patch`: a raw-clone child, which no
/// `pthread_atfork` handler reaches, keeps the parent's seeds) and with the
/// reserve used whatever the fork protection
/// (`.ci/mutants/reserve-unbelieved.patch`).
#[test]
#[cfg_attr(not(ratchet_rng_inspect), ignore = "needs RATCHET_RNG_INSPECT=1")]
fn reserve_seeds_are_never_shared_with_a_child() {
    let o = run_whole("reserve_fork:believed");
    let takes = ["main_takes", "first_takes", "parent_takes", "child_takes"].map(|k| o.get(k));
    if o.text("protection") != "Wipe" {
        assert_eq!(
            takes, [0; 4],
            "seeds taken where the wipe is not believed: {o:?}"
        );
        eprintln!(
            "the reserve is not used here (protection {}): none taken",
            o.text("protection")
        );
    } else {
        assert_eq!(
            (
                takes,
                o.get("same_print"),
                o.get("first_is_parent"),
                o.get("child_zero_seeds")
            ),
            ([1; 4], 0, 0, 0),
            "(seeds taken by: the main thread, a thread before the fork, one in the parent \
             after it, one in the child; the child's seed equal to the parent's; the first \
             thread's equal to the parent's; zero seeds in the child's reserve)"
        );
    }
    // A raw `clone` runs no `pthread_atfork` handler: only the reserve's place
    // in the wiped slab keeps the parent's seeds from the child.
    let o = run_whole("reserve_fork:raw");
    if o.text("protection") == "Wipe" {
        assert_eq!(
            (o.get("main_takes"), o.get("child_left")),
            (1, 0),
            "(seeds the main thread took, seeds left in a raw-clone child's reserve)"
        );
    }
    let o = run_whole("reserve_fork:unbelieved");
    assert_eq!(o.text("protection"), "PidCheck");
    assert_eq!(
        ["main_takes", "first_takes", "parent_takes", "child_takes"].map(|k| o.get(k)),
        [0; 4],
        "seeds taken from the reserve where the wipe is not believed (main thread, a thread, \
         one in the parent after a fork, one in the child)"
    );
}

/// Issue 34: the reserve serves a thread's first seeding only, in a
/// generation that never moved: the seedings after `reseed_all_threads()`
/// (this thread's, a new thread's first use) and a forced reseed ask the OS.
/// Its seeds may predate a restore the process saw. Shown to fail with the
/// reserve serving every seeding (`.ci/mutants/reserve-every-seeding.patch`).
#[test]
#[cfg_attr(not(ratchet_rng_inspect), ignore = "needs RATCHET_RNG_INSPECT=1")]
fn a_moved_generation_never_takes_from_the_reserve() {
    let o = run_whole("reserve_after_bump");
    let first = usize::from(o.text("protection") == "Wipe");
    assert_eq!(
        [
            "first",
            "after_bump",
            "new_thread",
            "after_reseed",
            "reseeds"
        ]
        .map(|k| o.get(k)),
        [first, first, 0, first, 3],
        "(seeds this thread took from the reserve: at its first use, after the bump, after \
         a forced reseed; a new thread after the bump; this thread's seedings), protection {}",
        o.text("protection")
    );
}

/// Issue 34: where the wipe is believed but the reserve's page is not wiped
/// in a child after all (imitated by `MADV_KEEPONFORK` on it: a process an
/// older CRIU restored without wipe-on-fork), the `pthread_atfork` hook,
/// once a refill registered it, zeroes the reserve in a libc child, so that
/// the child's new thread and the parent's take different seeds. Shown to
/// fail without that zeroing (`.ci/mutants/reserve-kept-in-child.patch`).
/// Where the wipe is not believed the reserve is not used, and the check says
/// it skipped.
#[test]
#[cfg_attr(not(ratchet_rng_inspect), ignore = "needs RATCHET_RNG_INSPECT=1")]
fn the_fork_hook_zeroes_a_reserve_the_kernel_kept() {
    let o = run_whole("reserve_kept_on_fork");
    if o.text("protection") != "Wipe" {
        assert_eq!(
            (o.get("parent_takes"), o.get("child_takes")),
            (0, 0),
            "{o:?}"
        );
        eprintln!(
            "SKIPPED: the reserve is not used here (protection {})",
            o.text("protection")
        );
        return;
    }
    assert_eq!(
        [
            "kept",
            "registered",
            "parent_takes",
            "child_takes",
            "same_print"
        ]
        .map(|k| o.get(k)),
        [1, 1, 1, 1, 0],
        "(the page kept on fork; the pthread_atfork hook registered; seeds taken by a new \
         thread in the parent and one in the child; the same seed)"
    );
}

/// Issue 34: a fork between the reserve's refill and its publication
/// (`ReserveFilled`) leaves a child whose reserve the kernel wiped; the
/// child's interrupted first use must then publish nothing (the reserve's
/// `live` word, which the wipe zeroes), so that no later thread in the child
/// takes an all-zero seed. Shown to fail without that re-check
/// (`.ci/mutants/reserve-no-live-check.patch`: the child's reserve claims 7
/// seeds, all zeros). Where the wipe is not believed the reserve is not used
/// and the check says it skipped.
#[test]
#[cfg_attr(not(ratchet_rng_inspect), ignore = "needs RATCHET_RNG_INSPECT=1")]
fn a_fork_in_the_middle_of_a_refill_leaves_the_child_no_zero_seed() {
    let o = run_whole("reserve_mid_refill");
    if o.text("protection") != "Wipe" {
        assert_eq!(o.get("forked"), 0, "{o:?}");
        eprintln!(
            "SKIPPED: the reserve is not used here (protection {})",
            o.text("protection")
        );
        return;
    }
    assert_eq!(
        [
            "forked",
            "main_takes",
            "left",
            "zero_seeds",
            "child_left",
            "child_zero_seeds",
            "child_main_takes",
            "child_takes",
            "child_zero_print",
        ]
        .map(|k| o.get(k)),
        [1, 1, 7, 0, 0, 0, 0, 1, 0],
        "(forked at the refill; the parent: seeds taken, left, zero seeds among them; the \
         child: left, zero seeds, taken by the interrupted first use, taken by a new \
         thread, that seed all zeros)"
    );
}

/// The scenario process's side (run only by the tests above).
#[test]
fn scenario_child() {
    let Ok(spec) = std::env::var(SCENARIO) else {
        return;
    };
    #[cfg(ratchet_rng_inspect)]
    scenario::main(&spec);
    #[cfg(not(ratchet_rng_inspect))]
    panic!("{spec}: needs RATCHET_RNG_INSPECT=1");
}

#[cfg(ratchet_rng_inspect)]
mod scenario {
    use super::{KINDS, Kind, MAX_FIRES};
    use ratchet_rng::__inspect::{self, Point};
    use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU8, AtomicU64, AtomicUsize, Ordering};
    use std::time::{Duration, Instant};

    use super::raw_fork;

    /// Values kept where a handler may write (no allocation).
    struct Record<const N: usize> {
        values: [AtomicU64; N],
        n: AtomicUsize,
    }

    impl<const N: usize> Record<N> {
        const fn new() -> Self {
            Self {
                values: [const { AtomicU64::new(0) }; N],
                n: AtomicUsize::new(0),
            }
        }
        fn push(&self, v: u64) {
            let n = self.n.fetch_add(1, Ordering::Relaxed);
            if n < N {
                self.values[n].store(v, Ordering::Relaxed);
            }
        }
        fn len(&self) -> usize {
            self.n.load(Ordering::Relaxed).min(N)
        }
        fn get(&self, from: usize) -> Vec<u64> {
            self.values[from.min(self.len())..self.len()]
                .iter()
                .map(|v| v.load(Ordering::Relaxed))
                .collect()
        }
    }

    /// Every value this process drew (worker, handler, late calls, second thread).
    static VALUES: Record<{ 1 << 14 }> = Record::new();
    /// The late calls' values (also in `VALUES`).
    static LATE: Record<64> = Record::new();
    /// What a child's handler drew right after the fork.
    static CHILD_EXTRA: Record<16> = Record::new();

    static TARGET_POINT: AtomicUsize = AtomicUsize::new(usize::MAX);
    static TARGET_THREAD: AtomicU64 = AtomicU64::new(0);
    static KIND: AtomicU8 = AtomicU8::new(0);
    static FIRES: AtomicUsize = AtomicUsize::new(0);
    static IN_CHILD: AtomicBool = AtomicBool::new(false);
    static FORKING: AtomicBool = AtomicBool::new(false);
    /// `FIRES` when the last fork was made: a child reports only its own.
    static FIRES_AT_FORK: AtomicUsize = AtomicUsize::new(0);
    /// The index in `VALUES` from which a child reports (`usize::MAX`: none).
    static CHILD_FROM: AtomicUsize = AtomicUsize::new(usize::MAX);
    static PIPE_WR: AtomicI32 = AtomicI32::new(-1);

    static T_RELEASED: AtomicBool = AtomicBool::new(false);
    static U_READY: AtomicBool = AtomicBool::new(false);
    static T_LATE_DONE: AtomicBool = AtomicBool::new(false);

    fn this_thread() -> u64 {
        // SAFETY: no preconditions.
        unsafe { libc::pthread_self() as u64 }
    }

    /// Waits for `flag`, at most 20 s (a generous cap: a missed step shows as a
    /// failed count, not a hang).
    fn wait_for(flag: &AtomicBool) {
        let start = Instant::now();
        while !flag.load(Ordering::SeqCst) && start.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_micros(200));
        }
    }

    fn errno() -> libc::c_int {
        // SAFETY: the thread's errno location.
        unsafe { *libc::__errno_location() }
    }

    fn set_errno(value: libc::c_int) {
        // SAFETY: the thread's errno location.
        unsafe { *libc::__errno_location() = value };
    }

    fn draw2() -> [u64; 2] {
        let mut b = [0u8; 16];
        ratchet_rng::fill(&mut b);
        [
            u64::from_le_bytes(b[..8].try_into().unwrap()),
            u64::from_le_bytes(b[8..].try_into().unwrap()),
        ]
    }

    /// The injection hook: on the worker, at the target point, raises `SIGUSR1`
    /// (delivered before `pthread_kill` returns: the handler runs right here).
    fn hook(point: Point) {
        let target = TARGET_POINT.load(Ordering::Relaxed);
        if Point::ALL.get(target) != Some(&point)
            || this_thread() != TARGET_THREAD.load(Ordering::Relaxed)
            || FORKING.load(Ordering::Relaxed)
            || QUIET.load(Ordering::Relaxed)
            || IN_CHILD.load(Ordering::Relaxed)
            || FIRES.fetch_add(1, Ordering::Relaxed) >= MAX_FIRES
        {
            return;
        }
        // SAFETY: signals this thread; the handler is installed.
        unsafe { libc::pthread_kill(libc::pthread_self(), libc::SIGUSR1) };
    }

    extern "C" fn handler(_: libc::c_int) {
        let saved = errno();
        match KINDS[usize::from(KIND.load(Ordering::Relaxed))] {
            Kind::Draw => {
                VALUES.push(ratchet_rng::u64());
                draw2().into_iter().for_each(|v| VALUES.push(v));
            }
            Kind::Reseed => {
                let _ = ratchet_rng::rng().reseed();
                VALUES.push(ratchet_rng::u64());
            }
            Kind::ReseedAll => {
                snapshot_buffer();
                ratchet_rng::reseed_all_threads();
                VALUES.push(ratchet_rng::u64());
            }
            kind @ (Kind::Fork | Kind::RawFork) => {
                FORKING.store(true, Ordering::Relaxed);
                FIRES_AT_FORK.store(
                    FIRES.load(Ordering::Relaxed).min(MAX_FIRES),
                    Ordering::Relaxed,
                );
                let pid = if kind == Kind::Fork {
                    // SAFETY: `fork` is async-signal-safe; the child only draws
                    // and reports (see `child_reports`).
                    unsafe { libc::fork() }
                } else {
                    // SAFETY: as above, by the raw system call.
                    unsafe { raw_fork::raw_fork() }
                };
                if pid == 0 {
                    IN_CHILD.store(true, Ordering::Relaxed);
                    CHILD_FROM.store(usize::MAX, Ordering::Relaxed);
                    CHILD_EXTRA.push(ratchet_rng::u64());
                }
                FORKING.store(false, Ordering::Relaxed);
            }
        }
        set_errno(saved);
    }

    /// The worker's buffer and its unread bytes when found (the first batch,
    /// in its state's piece, or in the buffer), found before the hook may
    /// fire; a copy of both taken by the first `ReseedAll` handler (never
    /// past them: a state may end its mapping), with the number of values
    /// drawn before that copy.
    static BUFFER_AT: AtomicUsize = AtomicUsize::new(0);
    static BUFFER_LEN: AtomicUsize = AtomicUsize::new(0);
    static SHORT_AT: AtomicUsize = AtomicUsize::new(0);
    static SHORT_LEN: AtomicUsize = AtomicUsize::new(0);
    const SHORT_BYTES: usize = 512;
    static SNAPSHOT: [AtomicU8; SNAPSHOT_BYTES + SHORT_BYTES] =
        [const { AtomicU8::new(0) }; SNAPSHOT_BYTES + SHORT_BYTES];
    static SNAPSHOT_FROM: AtomicUsize = AtomicUsize::new(usize::MAX);
    /// At least a thread's buffer piece: its header and two AES pools'
    /// output (4064 bytes each).
    const SNAPSHOT_BYTES: usize = 16 << 10;
    /// Set while the worker asks where its buffer is: the hook stays quiet.
    static QUIET: AtomicBool = AtomicBool::new(false);

    /// In the first `ReseedAll` handler on the worker: copies the worker's
    /// buffer (the unread bytes, zeros elsewhere) before the bump. No
    /// allocation.
    fn snapshot_buffer() {
        let at = BUFFER_AT.load(Ordering::Relaxed);
        if at == 0 || SNAPSHOT_FROM.load(Ordering::Relaxed) != usize::MAX {
            return;
        }
        let (short_at, short_len) = (
            SHORT_AT.load(Ordering::Relaxed),
            SHORT_LEN.load(Ordering::Relaxed),
        );
        let from_buffer = (0..BUFFER_LEN.load(Ordering::Relaxed)).map(|i| at + i);
        let from_short = (0..short_len).map(|i| short_at + i);
        for (byte, from) in SNAPSHOT.iter().zip(from_buffer.chain(from_short)) {
            // SAFETY: the worker's buffer and state pieces (they live while
            // the worker runs; the handler runs on the worker), read only.
            byte.store(
                unsafe { (from as *const u8).read_volatile() },
                Ordering::Relaxed,
            );
        }
        SNAPSHOT_FROM.store(VALUES.len(), Ordering::Relaxed);
    }

    /// Values drawn after the snapshot that it holds (at any byte offset):
    /// bytes buffered before the bump, served after it.
    fn stale_served() -> usize {
        let from = SNAPSHOT_FROM.load(Ordering::Relaxed);
        if from == usize::MAX {
            return 0;
        }
        let bytes: Vec<u8> = SNAPSHOT.iter().map(|b| b.load(Ordering::Relaxed)).collect();
        let windows: std::collections::HashSet<[u8; 8]> = bytes
            .windows(8)
            .map(|w| <[u8; 8]>::try_from(w).unwrap())
            .filter(|w| *w != [0; 8])
            .collect();
        VALUES
            .get(from)
            .iter()
            .filter(|v| windows.contains(&v.to_le_bytes()))
            .count()
    }

    /// In a child: draws, sends one frame `[count, fires, values...]` through the
    /// pipe (one write, at most `PIPE_BUF` bytes: atomic), and exits. No
    /// allocation.
    fn child_reports() -> ! {
        let mut frame = [0u64; 2 + 16 + 64 + 32];
        let mut n = 2;
        let from = CHILD_FROM.load(Ordering::Relaxed);
        if from != usize::MAX {
            let len = VALUES.len();
            for i in from..len.min(from + 64) {
                frame[n] = VALUES.values[i].load(Ordering::Relaxed);
                n += 1;
            }
        }
        for i in 0..CHILD_EXTRA.len() {
            frame[n] = CHILD_EXTRA.values[i].load(Ordering::Relaxed);
            n += 1;
        }
        for _ in 0..16 {
            frame[n] = ratchet_rng::u64();
            let [a, b] = draw2();
            frame[n + 1] = a;
            n += 2;
            let _ = b;
        }
        frame[0] = (n - 2) as u64;
        let fires = FIRES.load(Ordering::Relaxed).min(MAX_FIRES);
        frame[1] = fires.saturating_sub(FIRES_AT_FORK.load(Ordering::Relaxed)) as u64;
        let bytes = n * 8;
        // SAFETY: `frame` holds `bytes` initialised bytes.
        let written = unsafe {
            libc::write(
                PIPE_WR.load(Ordering::Relaxed),
                frame.as_ptr().cast(),
                bytes,
            )
        };
        // SAFETY: ends the child at once, running nothing of the parent's.
        unsafe { libc::_exit(if written == bytes as isize { 0 } else { 1 }) }
    }

    /// Records the values of one step; in a child made by the handler, reports.
    fn step(values: &[u64]) {
        values.iter().for_each(|&v| VALUES.push(v));
        if IN_CHILD.load(Ordering::Relaxed) {
            // The call in flight at the fork returned its value in the parent
            // too (a fork duplicates what a program holds): not reported.
            child_reports();
        }
    }

    /// The worker's late calls: a thread-local whose destructor runs after the
    /// generator's (it is registered before the thread's first use).
    struct Late;

    impl Drop for Late {
        fn drop(&mut self) {
            if IN_CHILD.load(Ordering::Relaxed) {
                child_reports();
            }
            T_RELEASED.store(true, Ordering::SeqCst);
            wait_for(&U_READY);
            for _ in 0..8 {
                let v = ratchet_rng::u64();
                let [a, b] = draw2();
                step(&[v, a, b]);
                [v, a, b].into_iter().for_each(|v| LATE.push(v));
            }
            T_LATE_DONE.store(true, Ordering::SeqCst);
        }
    }

    thread_local! {
        static LATE_CALLS: Late = const { Late };
    }

    fn worker(spare: &str) {
        LATE_CALLS.with(|_| ());
        TARGET_THREAD.store(this_thread(), Ordering::Relaxed);
        step(&[ratchet_rng::u64()]);
        // Where the buffer is (a call on this thread: the hook is kept quiet).
        QUIET.store(true, Ordering::Relaxed);
        let pages = __inspect::thread_state_pages().expect("state");
        QUIET.store(false, Ordering::Relaxed);
        BUFFER_AT.store(pages.buffer.0, Ordering::Relaxed);
        assert!(
            pages.buffer.1 <= SNAPSHOT_BYTES,
            "a buffer of {} bytes",
            pages.buffer.1
        );
        BUFFER_LEN.store(pages.buffer.1, Ordering::Relaxed);
        SHORT_AT.store(pages.unread.0, Ordering::Relaxed);
        SHORT_LEN.store(pages.unread.1.min(SHORT_BYTES), Ordering::Relaxed);
        for _ in 0..3 {
            step(&[ratchet_rng::u64()]);
        }
        for _ in 0..3 {
            step(&draw2());
        }
        // Larger than the buffer: the slow path refills.
        let mut big = vec![0u8; 8200];
        ratchet_rng::fill(&mut big);
        let big: Vec<u64> = big
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        step(&big);
        step(&[ratchet_rng::u64(), ratchet_rng::u64()]);
        ratchet_rng::rng().reseed().expect("reseed");
        step(&[ratchet_rng::u64()]);
        // A libc fork from the worker (the atfork child hook runs in the child).
        CHILD_FROM.store(VALUES.len(), Ordering::Relaxed);
        FIRES_AT_FORK.store(
            FIRES.load(Ordering::Relaxed).min(MAX_FIRES),
            Ordering::Relaxed,
        );
        // SAFETY: the child only draws and reports.
        if unsafe { libc::fork() } == 0 {
            IN_CHILD.store(true, Ordering::Relaxed);
            child_reports();
        }
        step(&draw2());
        assert_eq!(spare, "kept");
    }

    /// The second thread: takes the worker's page if it was kept, snapshots its
    /// unread output, lets the worker's late calls run, then draws.
    fn second() -> Vec<u64> {
        VALUES.push(ratchet_rng::u64());
        // Past the first short batch: the unread bytes are in the buffer, as
        // the worker's were when its gate was last opened (a gate reopened
        // over the worker's slot must find them).
        let mut past_short = [0u8; 512];
        ratchet_rng::fill(&mut past_short);
        past_short
            .chunks_exact(8)
            .for_each(|c| VALUES.push(u64::from_le_bytes(c.try_into().unwrap())));
        let pages = __inspect::thread_state_pages().expect("state");
        let (address, len) = pages.unread;
        // SAFETY: this thread's unread output, read between calls on it.
        let unread: Vec<u8> = (0..len)
            .map(|i| unsafe { ((address + i) as *const u8).read_volatile() })
            .collect();
        let snapshot: Vec<u64> = unread
            .rchunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        U_READY.store(true, Ordering::SeqCst);
        wait_for(&T_LATE_DONE);
        for _ in 0..32 {
            VALUES.push(ratchet_rng::u64());
        }
        snapshot
    }

    fn install_handler() {
        // SAFETY: a zeroed `sigaction` is valid; the handler lives for the whole
        // program.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = handler as extern "C" fn(libc::c_int) as usize;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            assert_eq!(
                libc::sigaction(libc::SIGUSR1, &action, std::ptr::null_mut()),
                0
            );
        }
    }

    fn open_pipe() -> libc::c_int {
        let mut fds = [0; 2];
        // SAFETY: room for two descriptors.
        assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
        PIPE_WR.store(fds[1], Ordering::Relaxed);
        fds[0]
    }

    /// Closes the write end, reaps every child, reads every frame: (children
    /// reaped, failed, values, fires).
    fn collect_children(read_fd: libc::c_int) -> (usize, usize, Vec<u64>, usize) {
        // SAFETY: our write end, closed once.
        unsafe { libc::close(PIPE_WR.load(Ordering::Relaxed)) };
        let (mut children, mut failed) = (0, 0);
        loop {
            let mut status = 0;
            // SAFETY: a valid out-pointer; any child of ours.
            if unsafe { libc::waitpid(-1, &mut status, 0) } <= 0 {
                break;
            }
            children += 1;
            if !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
                failed += 1;
            }
        }
        let mut bytes = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            // SAFETY: our read end; a writable buffer.
            let n = unsafe { libc::read(read_fd, buf.as_mut_ptr().cast(), buf.len()) };
            if n <= 0 {
                break;
            }
            bytes.extend_from_slice(&buf[..n as usize]);
        }
        let words: Vec<u64> = bytes
            .chunks_exact(8)
            .map(|c| u64::from_ne_bytes(c.try_into().unwrap()))
            .collect();
        let (mut values, mut fires, mut at) = (Vec::new(), 0, 0);
        while at + 2 <= words.len() {
            let n = words[at] as usize;
            fires += words[at + 1] as usize;
            values.extend_from_slice(&words[at + 2..(at + 2 + n).min(words.len())]);
            at += 2 + n;
        }
        (children, failed, values, fires)
    }

    /// (repeats, zeros) in `values`.
    fn repeats_and_zeros(values: &[u64]) -> (usize, usize) {
        let zeros = values.iter().filter(|&&v| v == 0).count();
        let mut sorted = values.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        (values.len() - sorted.len(), zeros)
    }

    /// Slots mapped but not in the spare list, and slots holding a nonzero
    /// byte (in their page or their buffer).
    fn audit() -> (usize, usize) {
        let audit = __inspect::page_audit();
        let leaked = audit
            .mapped
            .iter()
            .filter(|p| !audit.spare.contains(p))
            .count();
        let unwiped = audit
            .mapped
            .iter()
            .zip(&audit.buffers)
            .filter(|&(&page, &buffer)| {
                [(page, audit.len), (buffer, audit.buffer_len)]
                    .iter()
                    .any(|&(at, len)| {
                        // SAFETY: a mapping of the crate's (registered, not
                        // unmapped), read while no thread of this process uses
                        // it.
                        (0..len).any(|i| unsafe { ((at + i) as *const u8).read_volatile() } != 0)
                    })
            })
            .count();
        (leaked, unwiped)
    }

    pub(super) fn main(spec: &str) {
        match spec {
            "seccomp" => return seccomp(),
            "atfork_child" => return atfork_child(),
            "second_layer" => return second_layer(),
            "signal_safety" => return signal_safety(),
            "faked_wipe" => return faked_wipe(),
            "fork_after_recheck" => return fork_after_recheck(),
            "slab_race" => return slab_race(),
            "reentrant_reseed" => return reentrant_reseed(),
            "untouched_buffer" => return untouched_buffer(),
            "raw_fork_no_droppable" => return raw_fork_no_droppable(),
            "reserve_fork:believed" => return reserve_fork(true, false),
            "reserve_fork:unbelieved" => return reserve_fork(false, false),
            "reserve_fork:raw" => return reserve_fork(true, true),
            "reserve_mid_refill" => return reserve_mid_refill(),
            "reserve_after_bump" => return reserve_after_bump(),
            "reserve_kept_on_fork" => return reserve_kept_on_fork(),
            _ => {}
        }
        let mut parts = spec.split(':');
        let (point, kind, spare) = (
            parts.next().unwrap(),
            parts.next().unwrap(),
            parts.next().unwrap().to_owned(),
        );
        let point = Point::ALL
            .iter()
            .position(|p| format!("{p:?}") == point)
            .expect("a known point");
        let kind = KINDS
            .iter()
            .position(|k| format!("{k:?}") == kind)
            .expect("a known kind");
        let read_fd = open_pipe();
        install_handler();
        TARGET_POINT.store(point, Ordering::Relaxed);
        KIND.store(kind as u8, Ordering::Relaxed);
        __inspect::set_injection_hook(Some(hook));
        let t = std::thread::spawn(move || worker(&spare));
        wait_for(&T_RELEASED);
        let u = std::thread::spawn(second);
        t.join().expect("the worker");
        let snapshot = u.join().expect("the second thread");
        __inspect::set_injection_hook(None);
        let (children, failed, child_values, child_fires) = collect_children(read_fd);
        let parent = VALUES.get(0);
        let late = LATE.get(0);
        let shared_page = late.iter().filter(|v| snapshot.contains(v)).count();
        let (repeats, zeros) = repeats_and_zeros(&parent);
        let (child_repeats, child_zeros) = repeats_and_zeros(&child_values);
        let mut sorted = parent.clone();
        sorted.sort_unstable();
        let child_shared = child_values
            .iter()
            .filter(|v| sorted.binary_search(v).is_ok())
            .count()
            + child_repeats;
        let (leaked, unwiped) = audit();
        println!(
            "INJECTION-RESULT fired={} values={} repeats={} zeros={} children={children} \
             failed_children={failed} child_values={} child_shared={child_shared} leaked={leaked} \
             unwiped={unwiped} stale_served={} protection={}",
            FIRES.load(Ordering::Relaxed).min(MAX_FIRES) + child_fires,
            parent.len(),
            repeats + shared_page,
            zeros + child_zeros,
            child_values.len(),
            stale_served(),
            __inspect::protection().unwrap_or("undecided"),
        );
    }

    // --- issue 31, point 3: the atfork-only child holds no key ------------------

    /// Nonzero bytes in `address..address + len` (async-signal-safe).
    fn nonzero((address, len): (usize, usize)) -> u64 {
        // SAFETY: a range of a thread state's slot (slabs are never unmapped),
        // read while no call uses it.
        (0..len)
            .filter(|&i| unsafe { ((address + i) as *const u8).read_volatile() } != 0)
            .count() as u64
    }

    /// Where the wipe is not believed (`simulate_wipe_verdict(Some(false))`:
    /// the slab is not advised, as on macOS or under an emulator), this
    /// thread and a second one, alive across a libc `fork`, hold seeded
    /// states; the child counts the nonzero bytes of each one's key and
    /// unread output before any call of its own (the `pthread_atfork` hook
    /// has run).
    fn atfork_child() {
        __inspect::simulate_wipe_verdict(Some(false));
        let _ = ratchet_rng::u64();
        let mine = __inspect::thread_state_pages().expect("state");
        let (tx, rx) = std::sync::mpsc::channel();
        let (go, wait) = std::sync::mpsc::channel::<()>();
        let other = std::thread::spawn(move || {
            let _ = ratchet_rng::u64();
            tx.send(__inspect::thread_state_pages().expect("state"))
                .unwrap();
            let _ = wait.recv();
        });
        let theirs = rx.recv().unwrap();
        let ranges = [mine.key, mine.unread, theirs.key, theirs.unread];
        let before = ranges.map(nonzero);
        let mut fds = [0; 2];
        // SAFETY: a valid out-array of two descriptors.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        // SAFETY: the child only reads memory, writes to a pipe and `_exit`s.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            let counts = ranges.map(nonzero);
            // SAFETY: a valid buffer; then leave at once.
            unsafe {
                libc::write(fds[1], counts.as_ptr().cast(), size_of_val(&counts));
                libc::_exit(0);
            }
        }
        let mut counts = [u64::MAX; 4];
        // SAFETY: our pipe's read end and a valid buffer.
        let n = unsafe { libc::read(fds[0], counts.as_mut_ptr().cast(), size_of_val(&counts)) };
        let mut status = 0;
        // SAFETY: our own child; a valid out-pointer.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        go.send(()).unwrap();
        other.join().unwrap();
        println!(
            "INJECTION-RESULT protection={} read={n} before_key={} before_other_key={} \
             child_key={} child_unread={} other_key={} other_unread={}",
            __inspect::protection().unwrap_or("undecided"),
            before[0],
            before[2],
            counts[0],
            counts[1],
            counts[2],
            counts[3],
        );
    }

    // --- issue 46: the second layer, registered by the first use ---------------

    /// Registration before any draw, after the first (a short batch), and
    /// after a draw larger than the buffer (a refill).
    fn second_layer() {
        let before = __inspect::fork_handler_registered();
        let _ = ratchet_rng::u64();
        let after_first = __inspect::fork_handler_registered();
        let mut big = vec![0u8; 16 << 10];
        ratchet_rng::fill(&mut big);
        println!(
            "INJECTION-RESULT protection={} before={} after_first={} after_refill={}",
            __inspect::protection().unwrap_or("undecided"),
            u8::from(before),
            u8::from(after_first),
            u8::from(__inspect::fork_handler_registered()),
        );
    }

    /// A first use, refills, `reseed()`, a libc fork (the child draws and
    /// reports its own count), a second thread's first use and refills: the
    /// calls that are not async-signal-safe made after a first use.
    fn signal_safety() {
        let read_fd = open_pipe();
        let _ = ratchet_rng::u64();
        let mut big = vec![0u8; 64 << 10];
        for _ in 0..4 {
            ratchet_rng::fill(&mut big);
            for _ in 0..300 {
                VALUES.push(ratchet_rng::u64());
            }
        }
        ratchet_rng::rng().reseed().unwrap();
        ratchet_rng::fill(&mut big);
        // SAFETY: one thread; the child draws, reports and `_exit`s.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            ratchet_rng::fill(&mut big);
            let _ = ratchet_rng::u64();
            report_and_exit(&[__inspect::signal_unsafe_calls_after_first_use() as u64]);
        }
        let [child] = child_words::<1>(read_fd, pid);
        std::thread::spawn(|| {
            let mut big = vec![0u8; 64 << 10];
            for _ in 0..300 {
                VALUES.push(ratchet_rng::u64());
            }
            ratchet_rng::fill(&mut big);
        })
        .join()
        .unwrap();
        println!(
            "INJECTION-RESULT protection={} values={} unsafe_after_first_use={} child_unsafe={child}",
            __inspect::protection().unwrap_or("undecided"),
            VALUES.len(),
            __inspect::signal_unsafe_calls_after_first_use(),
        );
    }

    /// A seccomp filter on this thread: `madvise(.., MADV_WIPEONFORK)` answers 0
    /// without running; everything else runs (the unknown advice gets
    /// `EINVAL` from the kernel). False if it could not be installed.
    fn fake_wipe_filter() -> bool {
        const LD_W_ABS: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
        const JEQ_K: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
        const RET_K: u16 = 0x06; // BPF_RET | BPF_K
        // `seccomp_data`: `nr` at 0, `args[2]` at 32 (its low word first on a
        // little-endian machine).
        let advice_low = if cfg!(target_endian = "little") {
            32
        } else {
            36
        };
        let op = |code, jt, jf, k| libc::sock_filter { code, jt, jf, k };
        let mut filter = [
            op(LD_W_ABS, 0, 0, 0),
            op(JEQ_K, 0, 3, libc::SYS_madvise as u32),
            op(LD_W_ABS, 0, 0, advice_low),
            op(JEQ_K, 0, 1, libc::MADV_WIPEONFORK as u32),
            op(RET_K, 0, 0, 0x0005_0000), // SECCOMP_RET_ERRNO | 0: "success"
            op(RET_K, 0, 0, 0x7fff_0000), // SECCOMP_RET_ALLOW
        ];
        let prog = libc::sock_fprog {
            len: filter.len() as u16,
            filter: filter.as_mut_ptr(),
        };
        // SAFETY: plain prctl calls; `prog` outlives them.
        unsafe {
            libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0
                && libc::prctl(libc::PR_SET_SECCOMP, libc::SECCOMP_MODE_FILTER, &prog) == 0
        }
    }

    /// Under [`fake_wipe_filter`], with no droppable page (which a child's
    /// wipe would otherwise catch): a first `u64()` (a short batch), a libc
    /// `fork`, then four values in each process.
    fn faked_wipe() {
        let read_fd = open_pipe();
        __inspect::without_droppable_page();
        let filtered = fake_wipe_filter();
        let _ = ratchet_rng::u64();
        // SAFETY: one thread; the child draws, reports and `_exit`s.
        let pid = unsafe { libc::fork() };
        let four = || [0; 4].map(|_: u64| ratchet_rng::u64());
        if pid == 0 {
            report_and_exit(&four());
        }
        let parent = four();
        let child = child_words::<4>(read_fd, pid);
        let shared = child.iter().filter(|v| parent.contains(v)).count();
        println!(
            "INJECTION-RESULT protection={} filtered={} child_values={} shared={shared}",
            __inspect::protection().unwrap_or("undecided"),
            u8::from(filtered),
            child.iter().filter(|&&v| v != 0).count(),
        );
    }

    static FORKED_AFTER_LIVE: AtomicI32 = AtomicI32::new(-1);

    /// Forks at `SlowAfterLive`, once (the main thread, single-threaded).
    fn fork_after_live(point: Point) {
        if point == Point::SlowAfterLive && FORKED_AFTER_LIVE.load(Ordering::Relaxed) == -1 {
            // SAFETY: one thread; the child goes on with the interrupted call,
            // then reports and `_exit`s.
            let pid = unsafe { libc::fork() };
            FORKED_AFTER_LIVE.store(pid, Ordering::Relaxed);
        }
    }

    /// No wipe believed (every call takes the slow path): a refill, then a
    /// `u64()` during which the hook forks after the re-check; the child
    /// counts the nonzero bytes of the key and unread output the parent held.
    fn fork_after_recheck() {
        let read_fd = open_pipe();
        __inspect::simulate_wipe_verdict(Some(false));
        let mut big = vec![0u8; 16 << 10];
        ratchet_rng::fill(&mut big);
        let _ = ratchet_rng::u64();
        let pages = __inspect::thread_state_pages().expect("state");
        let ranges = [pages.key, pages.unread];
        let before = ranges.map(nonzero);
        __inspect::set_injection_hook(Some(fork_after_live));
        let _ = ratchet_rng::u64();
        __inspect::set_injection_hook(None);
        let pid = FORKED_AFTER_LIVE.load(Ordering::Relaxed);
        if pid == 0 {
            report_and_exit(&ranges.map(nonzero));
        }
        let child = if pid > 0 {
            child_words::<2>(read_fd, pid)
        } else {
            [u64::MAX; 2]
        };
        println!(
            "INJECTION-RESULT protection={} forked={} before_key={} before_unread={} \
             child_key={} child_unread={}",
            __inspect::protection().unwrap_or("undecided"),
            u8::from(pid > 0),
            before[0],
            before[1],
            child[0],
            child[1],
        );
    }

    static LOSER: AtomicU64 = AtomicU64::new(0);
    static LOSER_HELD: AtomicBool = AtomicBool::new(false);
    static WINNER_DONE: AtomicBool = AtomicBool::new(false);

    /// Holds the loser at `SlabAdvised` until the winner has published its slab.
    fn hold_loser(point: Point) {
        if point == Point::SlabAdvised && this_thread() == LOSER.load(Ordering::SeqCst) {
            LOSER_HELD.store(true, Ordering::SeqCst);
            wait_for(&WINNER_DONE);
        }
    }

    /// The first slab made by two racing first uses: the loser's advice is
    /// accepted, the winner's (published) is not.
    fn slab_race() {
        __inspect::set_injection_hook(Some(hold_loser));
        let loser = std::thread::spawn(|| {
            LOSER.store(this_thread(), Ordering::SeqCst);
            __inspect::simulate_wipe_verdict(Some(true));
            let _ = ratchet_rng::u64();
            __inspect::thread_state_pages().expect("state").wipe_on_fork
        });
        wait_for(&LOSER_HELD);
        let winner = std::thread::spawn(|| {
            __inspect::simulate_wipe_verdict(Some(false));
            let _ = ratchet_rng::u64();
            __inspect::thread_state_pages().expect("state").wipe_on_fork
        })
        .join()
        .unwrap();
        WINNER_DONE.store(true, Ordering::SeqCst);
        let loser = loser.join().unwrap();
        __inspect::set_injection_hook(None);
        println!(
            "INJECTION-RESULT protection={} loser_held={} winner_wiped={} loser_wiped={}",
            __inspect::protection().unwrap_or("undecided"),
            u8::from(LOSER_HELD.load(Ordering::SeqCst)),
            u8::from(winner),
            u8::from(loser),
        );
    }

    static RESEED_FIRED: AtomicUsize = AtomicUsize::new(0);

    /// Inside a call that holds the state (the fast path's `TakeCopied`, or
    /// the slow path's `SlowServed` where every call takes it), once: `reseed()`.
    fn reseed_inside(point: Point) {
        if matches!(point, Point::TakeCopied | Point::SlowServed)
            && RESEED_FIRED.load(Ordering::SeqCst) == 0
        {
            RESEED_FIRED.fetch_add(1, Ordering::SeqCst);
            ratchet_rng::rng().reseed().unwrap();
        }
    }

    /// The whole key and buffer, read (no call of this thread in progress).
    fn bytes((address, len): (usize, usize)) -> Vec<u8> {
        // SAFETY: a range of this thread's slot, read while no call uses it.
        (0..len)
            .map(|i| unsafe { ((address + i) as *const u8).read_volatile() })
            .collect()
    }

    /// A refill (the fast path opens), a fast-path `u64()` whose hook calls
    /// `reseed()` (reentrant: the state is in use), then one more `u64()`.
    fn reentrant_reseed() {
        let mut big = vec![0u8; 16 << 10];
        ratchet_rng::fill(&mut big);
        let _ = ratchet_rng::u64();
        let before = __inspect::thread_state_pages_now().expect("state");
        let (key, unread) = (bytes(before.key), bytes(before.unread));
        __inspect::set_injection_hook(Some(reseed_inside));
        let _ = ratchet_rng::u64();
        __inspect::set_injection_hook(None);
        let next = ratchet_rng::u64().to_le_bytes();
        let after = __inspect::thread_state_pages_now().expect("state");
        println!(
            "INJECTION-RESULT protection={} fired={} key_kept={} served_buffered={}",
            __inspect::protection().unwrap_or("undecided"),
            RESEED_FIRED.load(Ordering::SeqCst),
            u8::from(bytes(after.key) == key),
            u8::from(unread.windows(8).any(|w| w == next)),
        );
    }

    /// Resident pages (`mincore`) of the 4 KiB pages under `at..at + len`.
    fn resident((at, len): (usize, usize)) -> usize {
        let start = at & !4095;
        let pages = (at + len - start).div_ceil(4096);
        let mut vec = vec![0u8; pages];
        // SAFETY: a range of this process's mapping (the crate's slab), whole
        // pages; `vec` holds one byte per page.
        let rc =
            unsafe { libc::mincore(start as *mut libc::c_void, pages * 4096, vec.as_mut_ptr()) };
        assert_eq!(rc, 0, "mincore: {}", std::io::Error::last_os_error());
        vec.iter().filter(|&&b| b & 1 != 0).count()
    }

    /// A first `u64()` (a short batch in the state's page), then a refill.
    fn untouched_buffer() {
        let _ = ratchet_rng::u64();
        let pages = __inspect::thread_state_pages().expect("state");
        let first = resident(pages.buffer);
        let mut big = vec![0u8; 16 << 10];
        ratchet_rng::fill(&mut big);
        println!(
            "INJECTION-RESULT protection={} aes={} first={first} after_refill={}",
            __inspect::protection().unwrap_or("undecided"),
            ratchet_rng::backends().aes(),
            resident(pages.buffer),
        );
    }

    // --- issue 34: the classification alone guards a raw clone ----------------

    /// Without the droppable generation word (whose wipe in a child also
    /// reads as a new generation on Linux 6.11+), only the fork protection
    /// tells a raw-`clone` child (no `pthread_atfork` handler) from its
    /// parent: the slab's wipe where it is believed, the per-call process-id
    /// check where it is not (qemu-user). The child's values must not be
    /// among the parent's values or its buffered bytes.
    fn raw_fork_no_droppable() {
        __inspect::without_droppable_page();
        let read_fd = open_pipe();
        let mut mine: Vec<u64> = (0..4).map(|_| ratchet_rng::u64()).collect();
        let (address, len) = __inspect::thread_state_pages().expect("state").unread;
        // SAFETY: this thread's unread output, read between calls on it.
        let unread: Vec<u8> = (0..len)
            .map(|i| unsafe { ((address + i) as *const u8).read_volatile() })
            .collect();
        mine.extend(
            unread
                .rchunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().unwrap())),
        );
        mine.iter().for_each(|&v| VALUES.push(v));
        CHILD_FROM.store(usize::MAX, Ordering::Relaxed);
        // SAFETY: the child only draws and reports.
        if unsafe { raw_fork::raw_fork() } == 0 {
            child_reports();
        }
        let (children, failed, child_values, _) = collect_children(read_fd);
        let child_shared = child_values.iter().filter(|v| mine.contains(v)).count();
        println!(
            "INJECTION-RESULT protection={} buffered={} children={children} \
             failed_children={failed} child_values={} child_shared={child_shared}",
            __inspect::protection().unwrap_or("undecided"),
            mine.len(),
            child_values.len(),
        );
    }

    // --- issue 34: the seed reserve across a fork -----------------------------

    /// A new thread's first `u64()`, and what it took from the reserve:
    /// (seeds taken, the last one's fingerprint).
    fn new_thread_takes() -> (u64, u64) {
        std::thread::spawn(|| {
            let _ = ratchet_rng::u64();
            __inspect::thread_reserved_seeds()
        })
        .join()
        .unwrap()
    }

    /// Sends `words` through the pipe [`open_pipe`] made (one write) and
    /// `_exit`s.
    fn report_and_exit(words: &[u64]) -> ! {
        let bytes = size_of_val(words);
        // SAFETY: `words` holds `bytes` initialised bytes; then leave at once.
        unsafe {
            let written = libc::write(
                PIPE_WR.load(Ordering::Relaxed),
                words.as_ptr().cast(),
                bytes,
            );
            libc::_exit(if written == bytes as isize { 0 } else { 1 })
        }
    }

    /// Reads `N` words from `fd` and reaps the child `pid` (zeros if it sent
    /// nothing).
    fn child_words<const N: usize>(fd: libc::c_int, pid: libc::pid_t) -> [u64; N] {
        let mut words = [0u64; N];
        // SAFETY: our pipe's read end and a valid buffer.
        unsafe { libc::read(fd, words.as_mut_ptr().cast(), size_of_val(&words)) };
        let mut status = 0;
        // SAFETY: our own child; a valid out-pointer.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        words
    }

    /// The main thread's first use fills the reserve and takes a seed, a new
    /// thread takes the next; then a libc `fork` (single-threaded), after
    /// which a new thread in the parent and one in the child each take one.
    /// Where the wipe is not `believed` (simulated: the first slab is not
    /// advised, as under an emulator), no thread may take any.
    fn reserve_fork(believed: bool, raw: bool) {
        // A child's wiped droppable word moves its generation, after which no
        // first use takes from the reserve (Linux 6.11+): without it, the
        // child's new thread does, as on older kernels.
        __inspect::without_droppable_page();
        if !believed {
            __inspect::simulate_wipe_verdict(Some(false));
        }
        let _ = ratchet_rng::u64();
        let main = __inspect::thread_reserved_seeds();
        let first = new_thread_takes();
        let read_fd = open_pipe();
        // SAFETY: one thread; the child draws on a new thread (after a raw
        // fork, which runs no `pthread_atfork` handler, it only reads the
        // reserve), reports and `_exit`s.
        let pid = unsafe {
            if raw {
                raw_fork::raw_fork()
            } else {
                libc::fork()
            }
        };
        if pid == 0 {
            let (takes, print) = if raw { (0, 0) } else { new_thread_takes() };
            let (left, zeros) = __inspect::reserve_audit();
            report_and_exit(&[takes, print, left as u64, zeros as u64]);
        }
        let parent = new_thread_takes();
        let [child_takes, child_print, child_left, child_zeros] = child_words::<4>(read_fd, pid);
        println!(
            "INJECTION-RESULT protection={} main_takes={} first_takes={} parent_takes={} \
             child_takes={child_takes} same_print={} first_is_parent={} child_left={child_left} \
             child_zero_seeds={child_zeros}",
            __inspect::protection().unwrap_or("undecided"),
            main.0,
            first.0,
            parent.0,
            u8::from(child_print == parent.1),
            u8::from(first.1 == parent.1),
        );
    }

    /// Seeds taken from the reserve: by a first use, then by the seedings a
    /// moved generation forces (this thread's, a new thread's first use) and
    /// a forced reseed.
    fn reserve_after_bump() {
        let _ = ratchet_rng::u64();
        let first = __inspect::thread_reserved_seeds().0;
        ratchet_rng::reseed_all_threads();
        let _ = ratchet_rng::u64();
        let after_bump = __inspect::thread_reserved_seeds().0;
        let new_thread = new_thread_takes().0;
        ratchet_rng::rng().reseed().expect("reseed");
        println!(
            "INJECTION-RESULT protection={} first={first} after_bump={after_bump} \
             new_thread={new_thread} after_reseed={} reseeds={}",
            __inspect::protection().unwrap_or("undecided"),
            __inspect::thread_reserved_seeds().0,
            __inspect::thread_reseeds(),
        );
    }

    /// As `reserve_fork`, but the first slab's first page (the reserve's)
    /// is advised `MADV_KEEPONFORK` after the first use, undoing the wipe the
    /// process believes in (as a restore by an older CRIU does), and a refill
    /// registers the `pthread_atfork` hook first.
    fn reserve_kept_on_fork() {
        __inspect::without_droppable_page();
        let _ = ratchet_rng::u64();
        let (state, _) = __inspect::thread_state_pages().expect("state").key;
        // SAFETY: the crate's slab page under this thread's state (the first
        // slab's first page: the reserve and the first states); the advice
        // only changes what a child inherits.
        let kept = unsafe { libc::madvise((state & !4095) as *mut _, 4096, libc::MADV_KEEPONFORK) };
        let mut big = vec![0u8; 16 << 10];
        ratchet_rng::fill(&mut big);
        let read_fd = open_pipe();
        // SAFETY: one thread; the child draws on a new thread, reports, `_exit`s.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            let (takes, print) = new_thread_takes();
            report_and_exit(&[takes, print]);
        }
        let parent = new_thread_takes();
        let [child_takes, child_print] = child_words::<2>(read_fd, pid);
        println!(
            "INJECTION-RESULT protection={} kept={} registered={} parent_takes={} \
             child_takes={child_takes} same_print={}",
            __inspect::protection().unwrap_or("undecided"),
            u8::from(kept == 0),
            u8::from(__inspect::fork_handler_registered()),
            parent.0,
            u8::from(child_print == parent.1),
        );
    }

    static FORKED_AT_REFILL: AtomicI32 = AtomicI32::new(-1);

    /// Forks at `ReserveFilled`, once (the main thread, single-threaded).
    fn fork_at_refill(point: Point) {
        if point == Point::ReserveFilled && FORKED_AT_REFILL.load(Ordering::Relaxed) == -1 {
            // SAFETY: one thread; the child goes on with the interrupted
            // first use, then reports and `_exit`s.
            let pid = unsafe { libc::fork() };
            FORKED_AT_REFILL.store(pid, Ordering::Relaxed);
        }
    }

    /// A fork lands between the reserve's refill and its publication: the
    /// child's reserve is wiped, and what the child's interrupted first use
    /// goes on to store must not make it claim seeds (zeros) it does not have.
    fn reserve_mid_refill() {
        let read_fd = open_pipe();
        // As in `reserve_fork`: the child's new thread then uses the reserve.
        __inspect::without_droppable_page();
        __inspect::set_injection_hook(Some(fork_at_refill));
        let _ = ratchet_rng::u64();
        __inspect::set_injection_hook(None);
        let main = __inspect::thread_reserved_seeds();
        let (left, zeros) = __inspect::reserve_audit();
        let pid = FORKED_AT_REFILL.load(Ordering::Relaxed);
        if pid == 0 {
            let (takes, print) = new_thread_takes();
            report_and_exit(&[
                left as u64,
                zeros as u64,
                main.0,
                takes,
                u64::from(print == 0),
            ]);
        }
        let [
            child_left,
            child_zeros,
            child_main,
            child_takes,
            child_zero_print,
        ] = if pid > 0 {
            child_words::<5>(read_fd, pid)
        } else {
            [u64::MAX; 5]
        };
        println!(
            "INJECTION-RESULT protection={} forked={} main_takes={} left={left} \
             zero_seeds={zeros} child_left={child_left} child_zero_seeds={child_zeros} \
             child_main_takes={child_main} child_takes={child_takes} \
             child_zero_print={child_zero_print}",
            __inspect::protection().unwrap_or("undecided"),
            u8::from(pid > 0),
            main.0,
        );
    }

    // --- finding 3: per-thread seccomp verdicts --------------------------------

    static A_AT_HOOK: AtomicBool = AtomicBool::new(false);
    static B_DONE: AtomicBool = AtomicBool::new(false);

    /// Holds thread A at `DecideVerdict` until B has stored its verdict.
    fn hold_a(point: Point) {
        if point == Point::DecideVerdict && this_thread() == TARGET_THREAD.load(Ordering::Relaxed) {
            A_AT_HOOK.store(true, Ordering::SeqCst);
            wait_for(&B_DONE);
        }
    }

    /// A seccomp filter that allows everything, on this thread only (no
    /// `TSYNC`): `/proc/thread-self/status` then says `Seccomp: 2`, so this
    /// thread's first use trusts the wipe advice without probing.
    fn allow_all_filter() -> bool {
        let mut filter = [libc::sock_filter {
            code: 0x06, // BPF_RET | BPF_K
            jt: 0,
            jf: 0,
            k: 0x7fff_0000, // SECCOMP_RET_ALLOW
        }];
        let prog = libc::sock_fprog {
            len: 1,
            filter: filter.as_mut_ptr(),
        };
        // SAFETY: plain prctl calls with a valid filter program.
        unsafe {
            libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0
                && libc::prctl(
                    libc::PR_SET_SECCOMP,
                    libc::SECCOMP_MODE_FILTER,
                    &prog as *const libc::sock_fprog,
                ) == 0
        }
    }

    fn seccomp() {
        let read_fd = open_pipe();
        __inspect::set_injection_hook(Some(hold_a));
        let a = std::thread::spawn(|| {
            TARGET_THREAD.store(this_thread(), Ordering::Relaxed);
            if !allow_all_filter() {
                eprintln!("note: no seccomp filter here; the trusting verdict is simulated");
                __inspect::simulate_wipe_verdict(Some(true));
            }
            let mut mine: Vec<u64> = (0..4).map(|_| ratchet_rng::u64()).collect();
            let gate = __inspect::fast_path_open();
            let pages = __inspect::thread_state_pages().expect("state");
            let (address, len) = pages.unread;
            // SAFETY: this thread's unread output, read between calls on it.
            let unread: Vec<u8> = (0..len)
                .map(|i| unsafe { ((address + i) as *const u8).read_volatile() })
                .collect();
            mine.extend(
                unread
                    .rchunks_exact(8)
                    .map(|c| u64::from_le_bytes(c.try_into().unwrap())),
            );
            mine.iter().for_each(|&v| VALUES.push(v));
            CHILD_FROM.store(usize::MAX, Ordering::Relaxed);
            // SAFETY: the child only draws and reports.
            if unsafe { raw_fork::raw_fork() } == 0 {
                child_reports();
            }
            gate
        });
        let b = std::thread::spawn(|| {
            wait_for(&A_AT_HOOK);
            __inspect::simulate_wipe_verdict(Some(false));
            VALUES.push(ratchet_rng::u64());
            B_DONE.store(true, Ordering::SeqCst);
        });
        let gate = a.join().expect("thread A");
        b.join().expect("thread B");
        __inspect::set_injection_hook(None);
        let (children, failed, child_values, _) = collect_children(read_fd);
        let parent = VALUES.get(0);
        let mut sorted = parent.clone();
        sorted.sort_unstable();
        let child_shared = child_values
            .iter()
            .filter(|v| sorted.binary_search(v).is_ok())
            .count();
        let zeros = child_values.iter().filter(|&&v| v == 0).count();
        println!(
            "INJECTION-RESULT protection={} gate_open={gate} children={children} \
             failed_children={failed} child_values={} child_shared={child_shared} zeros={zeros}",
            __inspect::protection().unwrap_or("undecided"),
            child_values.len(),
        );
    }
}
