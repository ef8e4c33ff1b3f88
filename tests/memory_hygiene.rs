//! The thread-local generator's state pages, checked against the kernel's own
//! word: the advice results the crate records (`__inspect::thread_state_pages`,
//! built with `RATCHET_RNG_INSPECT=1`; a plain run counts these tests as
//! ignored) and,
//! independently, the `VmFlags` line of `/proc/self/smaps` for the mapping that
//! holds the state (`dd` = `VM_DONTDUMP`, `wf` = `VM_WIPEONFORK`; see `proc(5)`).
//!
//! Under qemu-user (CI runs the suite under `qemu-x86_64` and `qemu-aarch64`) the
//! emulator accepts `madvise` advice without applying it and shows the guest a
//! `/proc/self/smaps` of its own making, so the kernel's word is not available:
//! there the crate does not believe the advice (the emulator accepts an unknown
//! one too: `wipe_on_fork == false`, the `getpid()` fallback is in use) and this
//! test checks what still holds (the advice calls succeeded, the state is whole
//! pages of a mapping that smaps lists without claiming the flags). Where the
//! advice is believed, a real kernel applied `MADV_WIPEONFORK`, and the smaps
//! flags are required.
#![cfg(any(target_os = "linux", target_os = "android"))]

#[cfg(ratchet_rng_inspect)]
use ratchet_rng::__inspect::{ThreadStatePages, thread_state_pages};

#[path = "common/raw_fork.rs"]
mod raw_fork;

/// Without the inspection hook the tests below are ignored; this stand-in only
/// lets them compile.
#[cfg(not(ratchet_rng_inspect))]
mod stand_in {
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct ThreadStatePages {
        pub address: usize,
        pub len: usize,
        pub buffer: (usize, usize),
        pub wipe_on_fork: bool,
        pub dont_dump: bool,
    }
    pub fn thread_state_pages() -> Option<ThreadStatePages> {
        unreachable!("needs RATCHET_RNG_INSPECT=1")
    }
}
#[cfg(not(ratchet_rng_inspect))]
use stand_in::{ThreadStatePages, thread_state_pages};

/// Taken by every test here before it first draws: a new thread's first use
/// takes a wiped page that an exited thread left (the spare pages), so a test
/// running beside [`exited_threads_pages_are_wiped_or_unmapped`] could seed the
/// very page that test is reading back, between the wipe and the read.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Holds [`SERIAL`] (a failed test's poison does not matter: nothing is guarded).
fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// One mapping of `/proc/self/smaps`: its address range and `VmFlags` (if the
/// kernel printed them).
#[derive(Debug)]
struct Mapping {
    start: usize,
    end: usize,
    vm_flags: Option<Vec<String>>,
}

/// Parses `/proc/self/smaps`: a header line `start-end perms offset dev inode
/// [path]` per mapping, followed by `Key: value` lines, among them `VmFlags:`.
fn smaps() -> Vec<Mapping> {
    let text = std::fs::read_to_string("/proc/self/smaps").expect("read /proc/self/smaps");
    let mut mappings: Vec<Mapping> = Vec::new();
    for line in text.lines() {
        let first = line.split_whitespace().next().unwrap_or("");
        if let Some((start, end)) = first.split_once('-')
            && let (Ok(start), Ok(end)) = (
                usize::from_str_radix(start, 16),
                usize::from_str_radix(end, 16),
            )
        {
            mappings.push(Mapping {
                start,
                end,
                vm_flags: None,
            });
            continue;
        }
        if let Some(flags) = line.strip_prefix("VmFlags:") {
            let mapping = mappings.last_mut().expect("VmFlags before any mapping");
            mapping.vm_flags = Some(flags.split_whitespace().map(String::from).collect());
        }
    }
    mappings
}

/// The state's two pieces: its page (a few hundred bytes, which may share a
/// 4 KiB page with other threads') and its output buffer, as (address, length).
fn pieces(pages: &ThreadStatePages) -> [(usize, usize); 2] {
    [(pages.address, pages.len), pages.buffer]
}

/// The mapping that holds all of `pages`, both pieces (the kernel may have
/// merged it with a neighbour that has the same flags, e.g. another slab).
fn mapping_of(pages: &ThreadStatePages) -> Option<Mapping> {
    smaps().into_iter().find(|m| {
        pieces(pages)
            .iter()
            .all(|&(at, len)| m.start <= at && at + len <= m.end)
    })
}

/// Checks this thread's state; returns its pages.
fn check_this_thread() -> ThreadStatePages {
    let _ = ratchet_rng::u64();
    let pages = thread_state_pages().expect("the thread-local generator exists");
    // Both pieces cache-line aligned, whole lines.
    for (at, len) in pieces(&pages) {
        assert!(at.is_multiple_of(64), "{pages:?}");
        assert!(len > 0 && len.is_multiple_of(64), "{pages:?}");
    }
    // The kernel (or the emulator) accepted MADV_DONTDUMP: the crate records the
    // return value of the system call.
    assert!(pages.dont_dump, "madvise(MADV_DONTDUMP) failed: {pages:?}");

    let mapping = mapping_of(&pages);
    if pages.wipe_on_fork {
        // A real kernel applied MADV_WIPEONFORK (and refused an unknown advice):
        // its smaps must show both flags on the state's mapping.
        let mapping = mapping
            .unwrap_or_else(|| panic!("no /proc/self/smaps mapping holds the state {pages:?}"));
        let flags = mapping
            .vm_flags
            .as_ref()
            .unwrap_or_else(|| panic!("no VmFlags for {mapping:x?} (kernel < 3.8?)"));
        for flag in ["dd", "wf"] {
            assert!(
                flags.iter().any(|f| f == flag),
                "VmFlags of the state's mapping lack `{flag}`: {mapping:x?}"
            );
        }
        eprintln!("state {pages:x?}: smaps VmFlags {flags:?}");
    } else {
        // Emulated (or a kernel without MADV_WIPEONFORK): the advice is not
        // applied, and smaps (if the emulator provides one) cannot vouch for it.
        // A mapping that did claim `wf` would contradict the classification.
        if let Some(flags) = mapping.as_ref().and_then(|m| m.vm_flags.as_ref()) {
            assert!(
                !flags.iter().any(|f| f == "wf"),
                "smaps claims wipe-on-fork but the advice was not believed: {mapping:x?}"
            );
        }
        eprintln!(
            "state {pages:x?}: wipe-on-fork not in effect (emulator or old kernel); \
             smaps mapping: {mapping:x?}"
        );
    }
    pages
}

#[test]
#[cfg_attr(not(ratchet_rng_inspect), ignore = "needs RATCHET_RNG_INSPECT=1")]
fn state_pages_are_kept_out_of_core_dumps() {
    let _serial = serial();
    let here = check_this_thread();
    // Every thread has its own state, with the same treatment.
    let there = std::thread::spawn(check_this_thread).join().unwrap();
    assert_ne!(here.address, there.address);
    assert_eq!(here.wipe_on_fork, there.wipe_on_fork);
    // Asking again reports the same state.
    assert_eq!(thread_state_pages(), Some(here));
}

/// The report's `wipe_on_fork` agrees with what a forked child actually sees
/// through the reported address: the child ORs every byte of the state's mapping
/// (a live state is never all zeros: it holds a seeded generator) and sends the
/// result back; zero iff the kernel wiped the pages. The child is made by a raw
/// `clone`, so that no `pthread_atfork` handler runs: where the wipe is not
/// believed, the crate's handler zeroes the states in a libc child (issue 31).
#[test]
#[cfg_attr(not(ratchet_rng_inspect), ignore = "needs RATCHET_RNG_INSPECT=1")]
fn reported_wipe_matches_what_a_child_sees() {
    let _serial = serial();
    let _ = ratchet_rng::u64();
    let pages = thread_state_pages().unwrap();
    let mut fds = [0; 2];
    // SAFETY: `fds` is a valid out-array of two descriptors.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: the child only reads its own copy of the mapping, writes to a pipe
    // and `_exit`s (async-signal-safe), as a child of a threaded process must.
    let pid = unsafe { raw_fork::raw_fork() };
    assert!(pid >= 0);
    if pid == 0 {
        let mut any = 0u8;
        for (at, len) in pieces(&pages) {
            for i in 0..len {
                // SAFETY: in the child the state's mapping still exists (wiped
                // or copied): each piece `at..at + len` is readable.
                any |= unsafe { (at as *const u8).add(i).read_volatile() };
            }
        }
        // SAFETY: a valid one-byte buffer; then leave at once.
        unsafe {
            libc::write(fds[1], (&raw const any).cast(), 1);
            libc::_exit(0);
        }
    }
    let mut any = 0xFFu8;
    // SAFETY: our pipe's read end and a valid one-byte buffer.
    let n = unsafe { libc::read(fds[0], (&raw mut any).cast(), 1) };
    let mut status = 0;
    // SAFETY: our own child; a valid out-pointer; our own descriptors.
    unsafe {
        libc::waitpid(pid, &mut status, 0);
        libc::close(fds[0]);
        libc::close(fds[1]);
    }
    assert_eq!(n, 1, "the child sent nothing");
    assert_eq!(
        any == 0,
        pages.wipe_on_fork,
        "child saw the state {}; report {pages:?}",
        if any == 0 { "all zeros" } else { "with data" }
    );
}

/// A copy of this thread's live state, each piece (read between calls, on the
/// owning thread: nothing else touches them meanwhile).
fn snapshot(pages: &ThreadStatePages) -> [Vec<u8>; 2] {
    pieces(pages).map(|(at, len)| {
        (0..len)
            // SAFETY: `at..at + len` is a piece of this thread's live, mapped
            // state; no reference to it is live during this read (the handle
            // is between calls).
            .map(|i| unsafe { (at as *const u8).add(i).read_volatile() })
            .collect()
    })
}

/// Every 16-byte window of each piece.
fn windows16(pieces: &[Vec<u8>]) -> std::collections::HashSet<&[u8]> {
    pieces.iter().flat_map(|piece| piece.windows(16)).collect()
}

/// The thread handle wipes what it serves too: after buffered and direct reads,
/// the state holds no 16-byte window of anything served, while it does hold the
/// next bytes of its stream (so the scan does see the buffer).
#[test]
#[cfg_attr(not(ratchet_rng_inspect), ignore = "needs RATCHET_RNG_INSPECT=1")]
fn thread_state_holds_no_served_output() {
    let _serial = serial();
    std::thread::spawn(|| {
        let mut served = vec![0u8; 100];
        ratchet_rng::fill(&mut served);
        served.extend_from_slice(&ratchet_rng::u64().to_le_bytes());
        let mut direct = vec![0u8; 5000]; // past the buffer: whole refills go straight here
        ratchet_rng::fill(&mut direct);
        served.extend_from_slice(&direct);
        served.extend_from_slice(&ratchet_rng::u32().to_le_bytes());
        let pages = thread_state_pages().unwrap();
        let state = snapshot(&pages);
        let windows = windows16(&state);
        if let Some(at) = served.windows(16).position(|w| windows.contains(w)) {
            panic!(
                "the thread state still holds served bytes {at}..{}",
                at + 16
            );
        }
        // Positive control: the next 64 bytes were buffered in the snapshot.
        let mut next = [0u8; 64];
        ratchet_rng::fill(&mut next);
        assert!(
            next.windows(16).all(|w| windows.contains(w)),
            "the scan did not find the buffered output: it proves nothing"
        );
    })
    .join()
    .unwrap();
}

/// A forked child receives none of the output the parent has buffered and will
/// still serve: the thread state's pages are wiped by the kernel
/// (`MADV_WIPEONFORK`), and the `pthread_atfork` child handler wipes the forking
/// thread's buffer too, so this holds where the wipe is not in effect (qemu-user,
/// old kernels) as well. The child copies its state pages through a pipe before
/// it touches the generator; the parent then serves its next 64 bytes, which were
/// buffered before the fork (the positive control), and none of them may be in
/// the child's copy.
#[test]
#[cfg_attr(not(ratchet_rng_inspect), ignore = "needs RATCHET_RNG_INSPECT=1")]
fn forked_child_holds_none_of_the_parents_unread_output() {
    let _serial = serial();
    std::thread::spawn(|| {
        let _ = ratchet_rng::u64();
        let pages = thread_state_pages().unwrap();
        let before = snapshot(&pages);
        let mut fds = [0; 2];
        // SAFETY: `fds` is a valid out-array of two descriptors.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        // SAFETY: the child only reads its own copy of the mapping, writes to a
        // pipe and `_exit`s (async-signal-safe), as a child of a threaded process
        // must.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            for (start, len) in pieces(&pages) {
                let mut at = 0;
                while at < len {
                    // SAFETY: in the child the state's mapping still exists
                    // (wiped or copied): `start + at..start + len` is readable.
                    let n = unsafe {
                        libc::write(fds[1], (start as *const u8).add(at).cast(), len - at)
                    };
                    if n <= 0 {
                        // SAFETY: leave at once.
                        unsafe { libc::_exit(1) };
                    }
                    at += n as usize;
                }
            }
            // SAFETY: leave at once, running nothing of the parent's.
            unsafe { libc::_exit(0) };
        }
        let mut child = vec![0u8; pages.len + pages.buffer.1];
        let mut at = 0;
        while at < child.len() {
            // SAFETY: our pipe's read end; `child[at..]` is writable.
            let n =
                unsafe { libc::read(fds[0], child[at..].as_mut_ptr().cast(), child.len() - at) };
            assert!(n > 0, "the child sent {at} of {} bytes", child.len());
            at += n as usize;
        }
        let mut status = 0;
        // SAFETY: our own child; a valid out-pointer; our own descriptors.
        unsafe {
            libc::waitpid(pid, &mut status, 0);
            libc::close(fds[0]);
            libc::close(fds[1]);
        }
        assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);

        let mut next = [0u8; 64];
        ratchet_rng::fill(&mut next);
        let parent = windows16(&before);
        assert!(
            next.windows(16).all(|w| parent.contains(w)),
            "the parent's next bytes were not buffered before the fork: the check proves nothing"
        );
        let (page, buffer) = child.split_at(pages.len);
        let child = [page.to_vec(), buffer.to_vec()];
        let in_child = windows16(&child);
        if let Some(at) = next.windows(16).position(|w| in_child.contains(w)) {
            panic!(
                "the forked child holds the parent's unread bytes {at}..{} ({pages:?})",
                at + 16
            );
        }
    })
    .join()
    .unwrap();
}

/// A thread's state outlives the thread only wiped: at exit its pages are
/// zeroized and either unmapped or kept for a new thread. Checked from a
/// thread-local destructor that runs right after the generator's (registered
/// before it, destroyed after it), before another thread can take the pages
/// (the other tests wait on [`SERIAL`]; within this test the threads run one
/// after the other);
/// read through `/proc/self/mem` (an unmapped page reads as an error, not a
/// fault).
#[test]
#[cfg_attr(not(ratchet_rng_inspect), ignore = "needs RATCHET_RNG_INSPECT=1")]
fn exited_threads_pages_are_wiped_or_unmapped() {
    let _serial = serial();
    use std::cell::Cell;
    use std::io::{Read, Seek, SeekFrom};

    struct CheckAfter(Cell<Option<ThreadStatePages>>);
    impl Drop for CheckAfter {
        fn drop(&mut self) {
            let Some(pages) = self.0.get() else { return };
            let mut mem = std::fs::File::open("/proc/self/mem").unwrap();
            for (at, len) in pieces(&pages) {
                let mut after = vec![0u8; len];
                let readable = mem.seek(SeekFrom::Start(at as u64)).is_ok()
                    && mem.read_exact(&mut after).is_ok();
                assert!(
                    !readable || after.iter().all(|&b| b == 0),
                    "an exited thread's state still holds data at {at:#x}: {pages:?}"
                );
            }
        }
    }
    thread_local! {
        static CHECK: CheckAfter = const { CheckAfter(Cell::new(None)) };
    }
    for _ in 0..8 {
        std::thread::spawn(|| {
            CHECK.with(|_| ()); // registered first: destroyed last
            let mut buf = [0u8; 100];
            ratchet_rng::fill(&mut buf);
            let pages = thread_state_pages().unwrap();
            // Positive control: the live state is not all zeros.
            assert!(snapshot(&pages).iter().flatten().any(|&b| b != 0));
            CHECK.with(|c| c.0.set(Some(pages)));
        })
        .join()
        .unwrap();
    }
}
