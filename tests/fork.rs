//! Fork safety of the thread-local generator (unix): after `fork()`, and after a
//! raw fork system call that bypasses libc's `pthread_atfork` handlers, parent and
//! child produce different output and neither repeats bytes the other produced,
//! including bytes already buffered before the fork.
//!
//! The children run in a multi-threaded test process, so they do the minimum:
//! generate into stack arrays (no allocation), `write` to a pipe, `_exit`.
#![cfg(all(unix, feature = "thread_rng"))]

use std::collections::HashSet;

#[path = "common/pipes.rs"]
mod pipes;
use pipes::{pipe, read_exact};

#[cfg(any(target_os = "linux", target_os = "android"))]
#[path = "common/raw_fork.rs"]
mod raw_fork;

/// How the child is made.
#[derive(Clone, Copy, Debug)]
enum ForkKind {
    /// libc's `fork()`: runs the `pthread_atfork` handlers.
    Libc,
    /// The raw system call: no libc handlers run, only the kernel sees the fork.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    RawSyscall,
}

fn fork(kind: ForkKind) -> libc::pid_t {
    match kind {
        // SAFETY: the children only generate into stack memory, `write` and `_exit`.
        ForkKind::Libc => unsafe { libc::fork() },
        #[cfg(any(target_os = "linux", target_os = "android"))]
        // SAFETY: as above.
        ForkKind::RawSyscall => unsafe { raw_fork::raw_fork() },
    }
}

/// In a child: writes all of `buf`, or exits with status 2.
fn child_write_all(fd: libc::c_int, buf: &[u8]) {
    if !pipes::write_all(fd, buf) {
        // SAFETY: ends the child at once.
        unsafe { libc::_exit(2) };
    }
}

fn wait_ok(pid: libc::pid_t) {
    let mut status = 0;
    loop {
        // SAFETY: `status` is a valid out-pointer; `pid` is our child.
        let rc = unsafe { libc::waitpid(pid, &mut status, 0) };
        if rc == pid {
            break;
        }
        assert_eq!(
            std::io::Error::last_os_error().raw_os_error(),
            Some(libc::EINTR)
        );
    }
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "child failed: status {status:#x}"
    );
}

/// 1 KiB through every entry point: `u64`s through the handle, then `u32`s and
/// `fill` through the free functions (all read one stream).
fn one_kib(out: &mut [u8; 1024]) {
    use rand::Rng;
    let mut rng = ratchet_rng::rng();
    let (words, rest) = out.split_at_mut(256);
    for w in words.chunks_exact_mut(8) {
        w.copy_from_slice(&rng.next_u64().to_le_bytes());
    }
    let (words, rest) = rest.split_at_mut(128);
    for w in words.chunks_exact_mut(4) {
        w.copy_from_slice(&ratchet_rng::u32().to_le_bytes());
    }
    ratchet_rng::fill(rest);
}

/// Asserts that no 8-byte window of `a` occurs anywhere in `b`.
fn assert_no_shared_window(a: &[u8], b: &[u8]) {
    let windows: HashSet<&[u8]> = a.windows(8).collect();
    for w in b.windows(8) {
        assert!(
            !windows.contains(w),
            "parent and child share bytes {w:02x?}"
        );
    }
}

fn parent_and_child_differ(kind: ForkKind) {
    // Seed this thread's generator and leave most of a refill buffered: without
    // fork detection, both processes would serve these same bytes next.
    let _ = ratchet_rng::u32();
    let (rd, wr) = pipe();
    let pid = fork(kind);
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let mut out = [0u8; 1024];
        one_kib(&mut out);
        child_write_all(wr, &out);
        // SAFETY: ends the child at once, without running the test harness.
        unsafe { libc::_exit(0) };
    }
    let mut mine = [0u8; 1024];
    one_kib(&mut mine);
    let mut theirs = [0u8; 1024];
    read_exact(rd, &mut theirs);
    wait_ok(pid);
    // SAFETY: our descriptors, closed once.
    unsafe {
        libc::close(rd);
        libc::close(wr);
    }
    assert_ne!(mine, theirs);
    assert_no_shared_window(&mine, &theirs);
    // And the parent goes on with fresh bytes too.
    let mut more = [0u8; 1024];
    one_kib(&mut more);
    assert_no_shared_window(&more, &theirs);
}

#[test]
fn libc_fork_parent_and_child_differ() {
    parent_and_child_differ(ForkKind::Libc);
}

#[cfg(any(target_os = "linux", target_os = "android"))]
#[test]
fn raw_fork_syscall_parent_and_child_differ() {
    parent_and_child_differ(ForkKind::RawSyscall);
}

/// Forks `n` children in turn; each writes 16 bytes from the thread-local
/// generator; returns them.
fn children_outputs(kind: ForkKind, n: usize) -> Vec<[u8; 16]> {
    let _ = ratchet_rng::u64();
    let (rd, wr) = pipe();
    let mut outputs = Vec::with_capacity(n);
    for _ in 0..n {
        let pid = fork(kind);
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            let mut out = [0u8; 16];
            ratchet_rng::fill(&mut out);
            child_write_all(wr, &out);
            // SAFETY: ends the child at once.
            unsafe { libc::_exit(0) };
        }
        let mut out = [0u8; 16];
        read_exact(rd, &mut out);
        wait_ok(pid);
        outputs.push(out);
    }
    // SAFETY: our descriptors, closed once.
    unsafe {
        libc::close(rd);
        libc::close(wr);
    }
    outputs
}

#[test]
fn a_thousand_forks_give_a_thousand_distinct_outputs() {
    let mut outputs = children_outputs(ForkKind::Libc, 1000);
    let mut parent = [0u8; 16];
    ratchet_rng::fill(&mut parent);
    outputs.push(parent);
    let distinct: HashSet<[u8; 16]> = outputs.iter().copied().collect();
    assert_eq!(distinct.len(), outputs.len());
}

#[cfg(any(target_os = "linux", target_os = "android"))]
#[test]
fn raw_forks_give_distinct_outputs() {
    let mut outputs = children_outputs(ForkKind::RawSyscall, 200);
    let mut parent = [0u8; 16];
    ratchet_rng::fill(&mut parent);
    outputs.push(parent);
    let distinct: HashSet<[u8; 16]> = outputs.iter().copied().collect();
    assert_eq!(distinct.len(), outputs.len());
}

/// A child of a child (the wipe advice and the epoch must carry over).
#[test]
fn grandchild_differs_from_child_and_parent() {
    let _ = ratchet_rng::u64();
    let (rd, wr) = pipe();
    // SAFETY: the child and grandchild only generate, write and `_exit`.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0);
    if pid == 0 {
        let mut a = [0u8; 64];
        ratchet_rng::fill(&mut a);
        // SAFETY: as above.
        let grandchild = unsafe { libc::fork() };
        if grandchild == 0 {
            let mut b = [0u8; 64];
            ratchet_rng::fill(&mut b);
            child_write_all(wr, &b);
            // SAFETY: ends the grandchild at once.
            unsafe { libc::_exit(0) };
        }
        let mut c = [0u8; 64];
        ratchet_rng::fill(&mut c);
        child_write_all(wr, &a);
        child_write_all(wr, &c);
        let mut status = 0;
        // SAFETY: `status` is a valid out-pointer; our own child.
        let ok = unsafe { libc::waitpid(grandchild, &mut status, 0) } == grandchild
            && libc::WIFEXITED(status)
            && libc::WEXITSTATUS(status) == 0;
        // SAFETY: ends the child at once.
        unsafe { libc::_exit(if ok { 0 } else { 3 }) };
    }
    wait_ok(pid);
    let mut all = [0u8; 192];
    read_exact(rd, &mut all);
    // SAFETY: our descriptors, closed once.
    unsafe {
        libc::close(rd);
        libc::close(wr);
    }
    let mut parent = [0u8; 64];
    ratchet_rng::fill(&mut parent);
    let blocks: Vec<&[u8]> = all.chunks(64).chain([&parent[..]]).collect();
    for (i, x) in blocks.iter().enumerate() {
        for y in &blocks[i + 1..] {
            assert_no_shared_window(x, y);
        }
    }
}
