//! The thread-local generator under signals (Linux): a signal handler that uses
//! the generator while the call it interrupted is half done, and a handler that
//! forks there. The handlers allocate nothing (they write into preallocated
//! statics) and use only async-signal-safe calls.
//!
//! Each scenario counts events, not time: it runs until a minimum number of
//! signals has landed *inside the draw loop* (the handler counts them), and
//! fails, saying how many landed, only if a generous cap ([`CAP`]) passes first.
//! The interval timer is armed once per scenario, so the signal rate is the same
//! on a fast CPU and a slow one, loaded or idle.
//!
//! 1. `SIGALRM` every 100 us; the handler calls `u64()` and `fill()`, while the
//!    interrupted thread calls `u64()` and `fill()` in a loop. No 8-byte value may
//!    be returned twice (to the handler and the interrupted call) and none may be
//!    zero. (Before the in-use mark: `take` read `left`, copied, then stored
//!    `left`, so a handler in between served the same bytes, and the interrupted
//!    call then read the bytes the handler had wiped: zeros.)
//! 2. `SIGALRM` every 300 us; the handler only forks. Each child resumes the
//!    interrupted call, drops that one value (drawn, in the parent too, while
//!    the call was in flight: a fork duplicates what a program holds), then reads
//!    64 values and sends them back. None may be zero or equal to a value the
//!    parent drew from the fork to the end of the next chunk. (Before the
//!    re-validation: the resumed call's store of `left` reopened the fast path
//!    over the page the kernel had wiped, and the child served zeros.)
#![cfg(any(target_os = "linux", target_os = "android"))]

use std::collections::HashSet;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

#[path = "common/raw_fork.rs"]
mod raw_fork;

/// The scenarios share `SIGALRM` and the process's interval timer: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

/// The thread the signals are meant for (the handler forwards them there).
static TARGET: AtomicU64 = AtomicU64::new(0);

/// The most a scenario may take to reach its minimum number of events: far more
/// than any machine needs (the timer's rate is wall-clock), so that only a
/// scenario whose signals stop arriving fails on it.
const CAP: Duration = Duration::from_secs(120);

/// Signals that landed while the test's draw loop was running (counted by the
/// handlers; the loop sets [`DRAWING`] around it).
static LANDED_IN_LOOP: AtomicUsize = AtomicUsize::new(0);
/// Set while the main loop only draws (no allocation): glibc's `fork` takes the
/// allocator's locks, so a handler that forks while the interrupted code is
/// inside `malloc` would deadlock. Outside the draw loop the handlers do nothing
/// but forward or count.
static DRAWING: AtomicBool = AtomicBool::new(false);

fn this_thread() -> u64 {
    // SAFETY: no preconditions.
    unsafe { libc::pthread_self() as u64 }
}

/// True if the signal landed on the target thread; otherwise forwards it there.
fn on_target(signal: libc::c_int) -> bool {
    let target = TARGET.load(Ordering::Relaxed);
    if this_thread() == target {
        return true;
    }
    // SAFETY: `target` is a live thread (the test's, which is running the loop
    // while the timer runs); `pthread_kill` is async-signal-safe.
    unsafe { libc::pthread_kill(target as libc::pthread_t, signal) };
    false
}

fn errno() -> libc::c_int {
    // SAFETY: the thread's errno location.
    unsafe { *libc::__errno_location() }
}

fn set_errno(value: libc::c_int) {
    // SAFETY: the thread's errno location.
    unsafe { *libc::__errno_location() = value };
}

fn install(handler: extern "C" fn(libc::c_int)) {
    // SAFETY: a zeroed `sigaction` is valid; the handler is an `extern "C" fn`
    // that lives for the whole program.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = handler as usize;
        action.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        assert_eq!(
            libc::sigaction(libc::SIGALRM, &action, std::ptr::null_mut()),
            0
        );
    }
}

fn uninstall() {
    timer(0);
    // SAFETY: restores the default disposition.
    unsafe { libc::signal(libc::SIGALRM, libc::SIG_IGN) };
}

/// Starts (or with 0 stops) `SIGALRM` every `micros`.
fn timer(micros: i64) {
    let t = libc::timeval {
        tv_sec: 0,
        tv_usec: micros as libc::suseconds_t,
    };
    let value = libc::itimerval {
        it_interval: t,
        it_value: t,
    };
    // SAFETY: a valid `itimerval`; no old value wanted.
    let rc = unsafe { libc::setitimer(libc::ITIMER_REAL, &value, std::ptr::null_mut()) };
    assert_eq!(rc, 0);
}

/// The main loop's calls: `u64()`, then an 8-byte and a 16-byte `fill`.
fn draw(out: &mut Vec<u64>) {
    out.push(ratchet_rng::u64());
    let mut b = [0u8; 8];
    ratchet_rng::fill(&mut b);
    out.push(u64::from_le_bytes(b));
    let mut b = [0u8; 16];
    ratchet_rng::fill(&mut b);
    out.push(u64::from_le_bytes(b[..8].try_into().unwrap()));
    out.push(u64::from_le_bytes(b[8..].try_into().unwrap()));
}

// ---------------------------------------------------------------------------
// 1. A handler that uses the generator
// ---------------------------------------------------------------------------

const HANDLER_CAP: usize = 1 << 20;
static FROM_HANDLER: [AtomicU64; HANDLER_CAP] = [const { AtomicU64::new(0) }; HANDLER_CAP];
static HANDLER_N: AtomicUsize = AtomicUsize::new(0);

extern "C" fn draw_in_handler(signal: libc::c_int) {
    if !on_target(signal) {
        return;
    }
    let saved = errno();
    if DRAWING.load(Ordering::Relaxed) {
        LANDED_IN_LOOP.fetch_add(1, Ordering::Relaxed);
    }
    let n = HANDLER_N.load(Ordering::Relaxed);
    if n + 2 <= HANDLER_CAP {
        FROM_HANDLER[n].store(ratchet_rng::u64(), Ordering::Relaxed);
        let mut b = [0u8; 8];
        ratchet_rng::fill(&mut b);
        FROM_HANDLER[n + 1].store(u64::from_le_bytes(b), Ordering::Relaxed);
        HANDLER_N.store(n + 2, Ordering::Relaxed);
    }
    set_errno(saved);
}

/// Whether this process runs under qemu-user (the emulator's process name).
fn under_qemu_user() -> bool {
    std::fs::read_to_string("/proc/self/comm").is_ok_and(|name| name.starts_with("qemu-"))
}

#[test]
fn handler_and_interrupted_call_never_share_a_value() {
    if cfg!(target_arch = "x86_64") && under_qemu_user() {
        // Known gap: under qemu-x86_64 (default CPU and Nehalem) this scenario
        // dies with SIGSEGV inside the emulator when the handler runs the
        // generator; a handler that only calls `getrandom` does not, and the same
        // scenario passes under qemu-aarch64 (23,460 handler runs, 0 repeats, 0
        // zeros) and natively. Suspected: the emulator's x86_64 signal frame
        // (stack alignment / vector state), not understood yet.
        eprintln!("SKIPPED under qemu-x86_64: a SIGALRM handler drawing from the generator");
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // The thread's first use maps its state and registers a destructor (which
    // allocates): not promised async-signal-safe, so it happens here.
    let _ = ratchet_rng::u64();
    TARGET.store(this_thread(), Ordering::Relaxed);
    LANDED_IN_LOOP.store(0, Ordering::Relaxed);
    install(draw_in_handler);
    /// Signals that must land inside the draw loop (at 100 us, 0.2 s of drawing;
    /// the handler's buffer holds [`HANDLER_CAP`] / 2 runs).
    const MIN_LANDED: usize = 2_000;
    const CHUNK: usize = 1 << 18;
    let mut prev: Vec<u64> = Vec::with_capacity(CHUNK + 4);
    let mut cur: Vec<u64> = Vec::with_capacity(CHUNK + 4);
    // Where in `cur` the handler ran (the loop's length after the draw it
    // interrupted): the loop's own values are compared around each of these.
    let mut landings: Vec<usize> = Vec::with_capacity(CHUNK);
    // The handler's values of the previous chunk, compared with this one's too.
    let mut pending: Vec<u64> = Vec::new();
    let (mut zeros, mut repeats, mut main_values, mut checked) = (0usize, 0usize, 0usize, 0usize);
    let start = Instant::now();
    // Armed once: the signals keep their wall-clock rate whatever the loop's speed.
    timer(100);
    while LANDED_IN_LOOP.load(Ordering::Relaxed) < MIN_LANDED && start.elapsed() < CAP {
        cur.clear();
        landings.clear();
        let mut seen = HANDLER_N.load(Ordering::Relaxed);
        DRAWING.store(true, Ordering::Relaxed);
        while cur.len() < CHUNK {
            draw(&mut cur);
            let now = HANDLER_N.load(Ordering::Relaxed);
            if now != seen {
                seen = now;
                landings.push(cur.len());
            }
        }
        DRAWING.store(false, Ordering::Relaxed);
        main_values += cur.len();
        let n = HANDLER_N.load(Ordering::Relaxed);
        let mut fresh: Vec<u64> = FROM_HANDLER[checked..n]
            .iter()
            .map(|v| v.load(Ordering::Relaxed))
            .collect();
        checked = n;
        zeros += cur.iter().chain(&fresh).filter(|&&v| v == 0).count();
        fresh.sort_unstable();
        repeats += fresh.windows(2).filter(|w| w[0] == w[1]).count();
        // The handler's values against the loop's, these two chunks and the last.
        let in_fresh = |v: &&u64| fresh.binary_search(v).is_ok();
        repeats += cur.iter().chain(&prev).filter(in_fresh).count();
        repeats += cur
            .iter()
            .filter(|v| pending.binary_search(v).is_ok())
            .count();
        // The loop's values among themselves, around each landing.
        repeats += landings
            .iter()
            .map(|&at| repeats_around(&prev, &cur, at))
            .sum::<usize>();
        pending = fresh;
        std::mem::swap(&mut prev, &mut cur);
    }
    uninstall();
    let n = HANDLER_N.load(Ordering::Relaxed);
    let landed = LANDED_IN_LOOP.load(Ordering::Relaxed);
    eprintln!(
        "{main_values} values in the loop, {n} in {} handler runs ({landed} inside the draw \
         loop) in {:.1} s: {repeats} repeated, {zeros} zero",
        n / 2,
        start.elapsed().as_secs_f64()
    );
    assert_eq!((repeats, zeros), (0, 0), "repeated and zero values");
    assert!(
        landed >= MIN_LANDED,
        "only {landed} of the {MIN_LANDED} signals needed landed inside the draw loop in \
         {CAP:?}: the signals did not arrive"
    );
}

/// Values the loop drew twice within [`AROUND`] values of index `at` of `cur`
/// (`prev`'s tail continues the window before `cur`'s start): a call that a
/// handler interrupted re-serves bytes of the same state page (4 KiB, 512
/// values), so a repeat shows up near the landing.
fn repeats_around(prev: &[u64], cur: &[u64], at: usize) -> usize {
    const AROUND: usize = 2048;
    let from_prev = AROUND.saturating_sub(at).min(prev.len());
    let mut window: Vec<u64> = prev[prev.len() - from_prev..]
        .iter()
        .chain(&cur[at.saturating_sub(AROUND)..(at + AROUND).min(cur.len())])
        .copied()
        .collect();
    window.sort_unstable();
    window.windows(2).filter(|w| w[0] == w[1]).count()
}

// ---------------------------------------------------------------------------
// 2. A handler that forks
// ---------------------------------------------------------------------------

/// Set in a child by the handler (which forked it).
static IN_CHILD: AtomicBool = AtomicBool::new(false);
/// The write end of the pipe the children report through.
static PIPE_WR: AtomicI32 = AtomicI32::new(-1);
static FORKS: AtomicUsize = AtomicUsize::new(0);
/// Children reaped; the handler keeps at most [`OUTSTANDING`] children alive.
static REAPED: AtomicUsize = AtomicUsize::new(0);
const OUTSTANDING: usize = 32;
/// Whether the handler forks through libc (`pthread_atfork` handlers run) or the
/// raw system call (only the kernel's wipe-on-fork sees it).
static RAW: AtomicBool = AtomicBool::new(false);

const PER_CHILD: usize = 64;

extern "C" fn fork_in_handler(signal: libc::c_int) {
    if !on_target(signal)
        || !DRAWING.load(Ordering::Relaxed)
        || IN_CHILD.load(Ordering::Relaxed)
        || FORKS.load(Ordering::Relaxed) - REAPED.load(Ordering::Relaxed) >= OUTSTANDING
    {
        return;
    }
    let saved = errno();
    let pid = if RAW.load(Ordering::Relaxed) {
        // SAFETY: a fork by the raw system call; the child only runs the loop
        // below.
        unsafe { raw_fork::raw_fork() }
    } else {
        // SAFETY: `fork` is async-signal-safe; the child only runs the loop below.
        unsafe { libc::fork() }
    };
    if pid == 0 {
        IN_CHILD.store(true, Ordering::Relaxed);
    } else if pid > 0 {
        // A free slot exists: at most OUTSTANDING children are unreaped.
        let _ = CHILDREN.iter().any(|slot| {
            slot.compare_exchange(0, pid, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        });
        FORKS.fetch_add(1, Ordering::Relaxed);
    }
    set_errno(saved);
}

/// The process ids of the children not reaped yet (0: a free slot), so that
/// children that never exit can be killed and counted.
static CHILDREN: [AtomicI32; OUTSTANDING] = [const { AtomicI32::new(0) }; OUTSTANDING];

/// How long the parent waits for a child without any child exiting before it
/// kills the ones left: a child reports in microseconds natively and well
/// under a second under qemu-user, so only a child stuck for good (once seen
/// under qemu-aarch64: a forked emulator stuck in its own code translator)
/// reaches it. It is then a failure with its counts, not a hung test.
const STUCK: Duration = Duration::from_secs(60);

/// In a child: the values after the in-flight one, sent through the pipe; then
/// `_exit`. No allocation.
fn child_reports() -> ! {
    let mut values = [0u64; PER_CHILD];
    for pair in values.chunks_exact_mut(2) {
        pair[0] = ratchet_rng::u64();
        let mut b = [0u8; 8];
        ratchet_rng::fill(&mut b);
        pair[1] = u64::from_le_bytes(b);
    }
    let mut bytes = [0u8; PER_CHILD * 8];
    for (chunk, v) in bytes.chunks_exact_mut(8).zip(values) {
        chunk.copy_from_slice(&v.to_le_bytes());
    }
    // SAFETY: a valid buffer; one write of at most PIPE_BUF bytes is atomic.
    let n = unsafe {
        libc::write(
            PIPE_WR.load(Ordering::Relaxed),
            bytes.as_ptr().cast(),
            bytes.len(),
        )
    };
    // SAFETY: ends the child at once, running nothing of the parent's.
    unsafe { libc::_exit(if n == bytes.len() as isize { 0 } else { 1 }) }
}

/// Reaps every child forked so far (they exit as soon as they have written their
/// report), then returns what they sent, how many exited with a failure, and
/// how many of those were killed after [`STUCK`] without any child exiting.
fn reap_and_read(fd: libc::c_int, bytes: &mut [u8]) -> (Vec<u64>, usize, usize) {
    let (mut failed, mut stuck) = (0, 0);
    let mut progress = Instant::now();
    while REAPED.load(Ordering::Relaxed) < FORKS.load(Ordering::Relaxed) {
        let mut status = 0;
        // SAFETY: a valid out-pointer; any child of ours.
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if pid == 0 {
            // Children left, none exited yet.
            if progress.elapsed() > STUCK {
                for slot in &CHILDREN {
                    let child = slot.load(Ordering::Relaxed);
                    if child > 0 {
                        // SAFETY: a child of ours, not reaped (its id not reused).
                        unsafe { libc::kill(child, libc::SIGKILL) };
                        stuck += 1;
                    }
                }
                progress = Instant::now();
            }
            std::thread::sleep(Duration::from_millis(1));
            continue;
        }
        if pid < 0 {
            // Interrupted by a signal (EINTR), or no child is left to wait for
            // (ECHILD: then the counts disagree, which the caller reports).
            if errno() == libc::EINTR {
                continue;
            }
            break;
        }
        progress = Instant::now();
        let _ = CHILDREN.iter().any(|slot| {
            slot.compare_exchange(pid, 0, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        });
        REAPED.fetch_add(1, Ordering::Relaxed);
        if !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
            failed += 1;
        }
    }
    let mut theirs = Vec::new();
    loop {
        // SAFETY: our pipe's read end (non-blocking); a writable buffer.
        let n = unsafe { libc::read(fd, bytes.as_mut_ptr().cast(), bytes.len()) };
        if n <= 0 {
            break;
        }
        theirs.extend(
            bytes[..n as usize]
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().unwrap())),
        );
    }
    (theirs, failed, stuck)
}

fn forks_in_handler(raw: bool) {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let _ = ratchet_rng::u64();
    RAW.store(raw, Ordering::Relaxed);
    IN_CHILD.store(false, Ordering::Relaxed);
    FORKS.store(0, Ordering::Relaxed);
    REAPED.store(0, Ordering::Relaxed);
    for slot in &CHILDREN {
        slot.store(0, Ordering::Relaxed);
    }
    let mut fds = [0; 2];
    // SAFETY: room for two descriptors; then the read end made non-blocking (the
    // children's reports fit in the pipe: at most OUTSTANDING * 512 bytes).
    unsafe {
        assert_eq!(libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC), 0);
        assert_eq!(libc::fcntl(fds[0], libc::F_SETFL, libc::O_NONBLOCK), 0);
    }
    PIPE_WR.store(fds[1], Ordering::Relaxed);
    TARGET.store(this_thread(), Ordering::Relaxed);
    install(fork_in_handler);
    /// Children that must be forked inside the draw loop and report.
    const MIN_CHILDREN: usize = 300;
    const CHUNK: usize = 1 << 16;
    let mut prev: Vec<u64> = Vec::with_capacity(CHUNK + 4);
    let mut cur: Vec<u64> = Vec::with_capacity(CHUNK + 4);
    // The children's values of the previous chunk: they are compared with this
    // chunk's parent values too (a fork near a chunk's end).
    let mut pending: HashSet<u64> = HashSet::new();
    let (mut child_values, mut zeros, mut shared, mut failed, mut stuck) = (0, 0, 0, 0, 0);
    let mut bytes = vec![0u8; 1 << 16];
    let start = Instant::now();
    // Armed once: the signals keep their wall-clock rate whatever the loop's speed.
    timer(300);
    while REAPED.load(Ordering::Relaxed) < MIN_CHILDREN && start.elapsed() < CAP {
        cur.clear();
        DRAWING.store(true, Ordering::Relaxed);
        while cur.len() < CHUNK {
            let before = cur.len();
            draw(&mut cur);
            if IN_CHILD.load(Ordering::Relaxed) {
                // This is a child: the call in flight at the fork may have
                // returned its value in the parent too. Drop this round's values.
                cur.truncate(before);
                child_reports();
            }
        }
        DRAWING.store(false, Ordering::Relaxed);
        if IN_CHILD.load(Ordering::Relaxed) {
            // Forked by a signal that arrived between the last draw and the store.
            child_reports();
        }
        // Every child of this chunk has reported once this returns.
        let (theirs, bad, hung) = reap_and_read(fds[0], &mut bytes);
        failed += bad;
        stuck += hung;
        child_values += theirs.len();
        zeros += cur.iter().chain(&theirs).filter(|&&v| v == 0).count();
        let fresh: HashSet<u64> = theirs.into_iter().filter(|&v| v != 0).collect();
        shared += cur
            .iter()
            .filter(|v| fresh.contains(v) || pending.contains(v))
            .count();
        shared += prev.iter().filter(|v| fresh.contains(v)).count();
        pending = fresh;
        std::mem::swap(&mut prev, &mut cur);
    }
    uninstall();
    let forks = FORKS.load(Ordering::Relaxed);
    let (theirs, bad, hung) = reap_and_read(fds[0], &mut bytes);
    failed += bad;
    stuck += hung;
    child_values += theirs.len();
    zeros += theirs.iter().filter(|&&v| v == 0).count();
    let children = REAPED.load(Ordering::Relaxed);
    // SAFETY: our descriptors, closed once.
    unsafe {
        libc::close(fds[0]);
        libc::close(fds[1]);
    }
    eprintln!(
        "{forks} forks in the handler ({}) in {:.1} s, {children} children reaped, \
         {child_values} child values: {zeros} zero, {shared} equal to a parent's, \
         {failed} children failed ({stuck} of them killed after {STUCK:?} without an exit)",
        if raw { "raw system call" } else { "libc fork" },
        start.elapsed().as_secs_f64(),
    );
    assert_eq!((zeros, shared, failed), (0, 0, 0));
    assert_eq!(children, forks, "children forked but not reaped");
    assert!(
        children >= MIN_CHILDREN && child_values == children * PER_CHILD,
        "{children} children forked inside the draw loop in {CAP:?} ({child_values} values), \
         {MIN_CHILDREN} needed: the signals did not arrive, or the forks failed"
    );
}

#[test]
fn child_forked_in_a_handler_serves_no_zeros_and_none_of_the_parents_values() {
    forks_in_handler(false);
}

#[test]
fn child_raw_forked_in_a_handler_serves_no_zeros_and_none_of_the_parents_values() {
    forks_in_handler(true);
}
