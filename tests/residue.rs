//! No copy of the thread-local generator's key or unread output outside its
//! pages (Linux): no 16-byte window of any key the state held or of its unread
//! output appears anywhere in the process's readable memory outside the
//! state's pages (read through `/proc/self/mem`, every readable region of
//! `/proc/self/maps`, each whole: a thread's stack below its stack pointer
//! too), not on the thread's stack, not on the heap.
//!
//! The thread that uses the generator stops at checkpoints: once in a thread
//! of its own whose first call is a `u64()` (a short batch), then right after
//! its first use (seeded, nothing generated yet), the first call (a refill), a
//! forced reseed, the first call after it, thousands of calls, and the budget's
//! scheduled reseeds. At each it records its state's secrets (after a seeding
//! the key is the fresh seed itself) and waits, blocked, while the test's main
//! thread scans the whole process. Each step runs 32 KiB further down the
//! thread's stack than the test's own code (the hook, the lock, the channel),
//! so that a copy the generator left on the stack is still there when the scan
//! looks, whatever the test does in between. Once more after the thread exited
//! (its state unmapped).
//!
//! A positive control at one checkpoint: the thread plants a copy of one
//! window of its unread output in an array on its stack and in a heap box;
//! the scan must report both, at exactly their addresses, or the scan proves
//! nothing. The copies are wiped before the next checkpoint, whose scan must
//! again find nothing.
//!
//! The secrets are read through the hidden inspection hook (`RATCHET_RNG_INSPECT=1`;
//! without it the test is ignored). The test never holds a secret in plain form
//! outside registers (and the planted control): each byte is XORed with a
//! random mask as it is read from the state, and the scan looks up
//! `window ^ mask`.
//!
//! Shown to fail (issue 12; `.ci/mutants/residue-by-value-unscrubbed.patch`,
//! which CI applies): with `Generator::reseed` building a fresh generator by
//! value in a callee's stack frame and moving it in (the old code's shape) and
//! no stack scrub after the slow path, the first checkpoint reports 80 windows
//! of the seed on the thread's stack. Without the scrub alone: the refill
//! kernel's register spills (AES with VAES: the pool's last 32 output bytes, 24
//! of them unread, at the first call) or the slow path's own temporaries (the
//! ChaCha engine: the first bytes of a refill, after the scheduled reseeds).
//! Without the shallow scrub alone (`.ci/mutants/short-batch-unscrubbed.patch`),
//! the thread whose first call is a `u64()`: a window of the short batch on
//! its stack (AES-NI, issue 34).
#![cfg(any(target_os = "linux", target_os = "android"))]

#[cfg(ratchet_rng_inspect)]
mod scan {
    use std::collections::HashSet;
    use std::hash::BuildHasherDefault;
    use std::io::{Read, Seek, SeekFrom};

    use ratchet_rng::__inspect::{ThreadStatePages, thread_state_pages};

    /// A 16-byte window XORed with the mask.
    type Masked = [u8; 16];

    /// Hashes a window by its first 8 bytes: they are masked with a random mask,
    /// so uniform already, and a lookup per byte of the process's memory must be
    /// cheap (SipHash makes each scan several times slower).
    #[derive(Default)]
    struct FirstBytes(u64);

    impl std::hash::Hasher for FirstBytes {
        fn write(&mut self, bytes: &[u8]) {
            for (i, b) in bytes.iter().take(8).enumerate() {
                self.0 ^= u64::from(*b) << (8 * i);
            }
        }

        fn finish(&self) -> u64 {
            self.0
        }
    }

    /// The masked secrets, and the mask.
    pub struct Secrets {
        mask: [u8; 16],
        windows: HashSet<Masked, BuildHasherDefault<FirstBytes>>,
        /// One bit per value of a masked window's first three bytes, set for
        /// every recorded window: the scan looks a window up only where its bit
        /// is set (with the 40,000 or so windows of a run, about one byte in
        /// four hundred), a hash lookup per byte of the process's memory having
        /// been nearly all of the test's time.
        first3: Vec<u64>,
    }

    /// A masked window's first three bytes, as an index into `first3`.
    fn first3(w: &[u8]) -> usize {
        usize::from(w[0]) | usize::from(w[1]) << 8 | usize::from(w[2]) << 16
    }

    /// Where a secret window was found.
    #[derive(Debug, PartialEq, Eq)]
    pub struct Hit {
        pub region: String,
        pub addr: usize,
    }

    impl Secrets {
        pub fn new() -> Self {
            let mut mask = [0u8; 16];
            getrandom::fill(&mut mask).unwrap();
            mask.iter_mut().for_each(|m| *m |= 1);
            Self {
                mask,
                windows: HashSet::default(),
                first3: vec![0; (1 << 24) / 64],
            }
        }

        pub fn len(&self) -> usize {
            self.windows.len()
        }

        /// This thread's state (seeded if needed, nothing generated): records
        /// its key and unread output.
        pub fn snap(&mut self) -> ThreadStatePages {
            let pages = thread_state_pages().unwrap();
            self.add(pages.key);
            self.add(pages.unread);
            pages
        }

        /// The masked window at `addr` (live state memory of this thread).
        fn masked_at(&self, addr: usize) -> Masked {
            let mut w = [0u8; 16];
            for (j, m) in w.iter_mut().enumerate() {
                // SAFETY: the caller's range lies in this thread's live state
                // pages, not touched by anything else between calls.
                *m = unsafe { ((addr + j) as *const u8).read_volatile() } ^ self.mask[j];
            }
            w
        }

        /// Adds every 16-byte window of `addr..addr + len` (live memory of this
        /// thread's state, read between calls) that has at least 12 nonzero
        /// bytes (the unused key fields are zero: a window of zeros is no secret).
        fn add(&mut self, (addr, len): (usize, usize)) {
            for start in addr..(addr + len).saturating_sub(15) {
                let w = self.masked_at(start);
                let nonzero = w.iter().zip(self.mask).filter(|(w, m)| *w != m).count();
                if nonzero >= 12 {
                    self.windows.insert(w);
                    let k = first3(&w);
                    self.first3[k / 64] |= 1 << (k % 64);
                }
            }
        }

        /// The address of the first recorded window in `addr..addr + len`.
        pub fn recorded_window(&self, (addr, len): (usize, usize)) -> Option<usize> {
            (addr..(addr + len).saturating_sub(15))
                .find(|&a| self.windows.contains(&self.masked_at(a)))
        }

        /// Scans the readable memory outside `skip`; returns where a secret
        /// window was found. The mapping holding `stack` (an address on the
        /// checked thread's stack, or 0) is named `thread stack`.
        pub fn scan(&self, skip: [(usize, usize); 2], stack: usize) -> Vec<Hit> {
            let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
            let mut mem = std::fs::File::open("/proc/self/mem").unwrap();
            let mut found = Vec::new();
            let mut chunk = vec![0u8; 1 << 20];
            for line in maps.lines() {
                let mut fields = line.split_whitespace();
                let range = fields.next().unwrap();
                let perms = fields.next().unwrap();
                let (start, end) = range.split_once('-').unwrap();
                let start = usize::from_str_radix(start, 16).unwrap();
                let end = usize::from_str_radix(end, 16).unwrap();
                let name = match line.split_whitespace().nth(5) {
                    _ if (start..end).contains(&stack) => "thread stack",
                    Some(name) => name,
                    None => "anonymous",
                };
                if !perms.starts_with('r') || name == "[vvar]" || name == "[vsyscall]" {
                    continue;
                }
                // The state's own two pieces (in a mapping maybe merged with a
                // neighbour): scan around them.
                let mut holes =
                    skip.map(|(at, len)| (at.clamp(start, end), (at + len).clamp(start, end)));
                holes.sort_unstable();
                let mut from = start;
                for (hole_start, hole_end) in holes.into_iter().chain([(end, end)]) {
                    if from < hole_start {
                        self.scan_range(&mut mem, &mut chunk, (from, hole_start), name, &mut found);
                    }
                    from = from.max(hole_end);
                }
            }
            found
        }

        fn scan_range(
            &self,
            mem: &mut std::fs::File,
            chunk: &mut [u8],
            (start, end): (usize, usize),
            name: &str,
            found: &mut Vec<Hit>,
        ) {
            let mut at = start;
            while at < end {
                let len = (end - at).min(chunk.len());
                if mem.seek(SeekFrom::Start(at as u64)).is_err() {
                    return;
                }
                let Ok(n) = mem.read(&mut chunk[..len]) else {
                    return;
                };
                if n == 0 {
                    return;
                }
                let m = first3(&self.mask);
                for i in 0..n.saturating_sub(15) {
                    let k = first3(&chunk[i..]) ^ m;
                    if self.first3[k / 64] & 1 << (k % 64) == 0 {
                        continue;
                    }
                    let mut w = [0u8; 16];
                    for j in 0..16 {
                        w[j] = chunk[i + j] ^ self.mask[j];
                    }
                    if self.windows.contains(&w) {
                        found.push(Hit {
                            region: name.to_owned(),
                            addr: at + i,
                        });
                    }
                }
                // Overlap so that no window straddling two reads is missed.
                at += n.saturating_sub(15).max(1);
            }
            chunk.fill(0);
        }
    }

    /// Copies 16 bytes one at a time through a register (no other copy is made).
    #[inline(never)]
    pub fn plant(src: usize, dst: *mut u8) {
        for i in 0..16 {
            // SAFETY: `src` lies in this thread's live state pages, `dst` is the
            // caller's 16-byte array.
            unsafe {
                dst.add(i)
                    .write_volatile(((src + i) as *const u8).read_volatile())
            };
        }
    }

    /// Zeroes the caller's 16-byte array.
    #[inline(never)]
    pub fn unplant(dst: *mut u8) {
        for i in 0..16 {
            // SAFETY: the caller's 16-byte array.
            unsafe { dst.add(i).write_volatile(0) };
        }
    }
}

/// Runs `op` 32 KiB further down this thread's stack than the test's own code
/// (the hook, the lock, the channel): what `op` leaves on the stack stays
/// there, below anything the checkpoint's code overwrites, until the scan.
#[cfg(ratchet_rng_inspect)]
#[inline(never)]
fn deep(op: impl FnOnce()) {
    let mut pad = [0u8; 32 << 10];
    std::hint::black_box(&mut pad);
    op();
    std::hint::black_box(&mut pad);
}

/// Issue 46, defect 3: a signal handler on an alternate stack (`SA_ONSTACK`)
/// that draws while a refill holds the state (raised at `SlowServed`): its
/// call, served by the OS, must leave the refill's stack scrub to the refill.
#[cfg(ratchet_rng_inspect)]
mod onstack {
    use ratchet_rng::__inspect::{self, Point};
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    static ARMED: AtomicBool = AtomicBool::new(false);
    pub static DRAWN: AtomicUsize = AtomicUsize::new(0);

    extern "C" fn on_signal(_: libc::c_int) {
        let _ = ratchet_rng::u64();
        DRAWN.fetch_add(1, Ordering::SeqCst);
    }

    /// Raises the signal on this thread at `SlowServed`, once.
    fn hook(point: Point) {
        if point == Point::SlowServed && ARMED.swap(false, Ordering::SeqCst) {
            // SAFETY: a signal to this thread, whose handler is installed;
            // delivered before `pthread_kill` returns.
            unsafe { libc::pthread_kill(libc::pthread_self(), libc::SIGUSR2) };
        }
    }

    /// Runs `op` with the handler installed (`SA_ONSTACK`, on an alternate
    /// stack of this thread's) and the hook armed.
    pub fn with_handler(op: impl FnOnce()) {
        let mut alt = vec![0u8; 64 << 10];
        // SAFETY: a signal stack in `alt`, which outlives its use (disabled
        // below); a handler that only draws; sigaction with valid pointers.
        unsafe {
            let stack = libc::stack_t {
                ss_sp: alt.as_mut_ptr().cast(),
                ss_flags: 0,
                ss_size: alt.len(),
            };
            assert_eq!(libc::sigaltstack(&stack, std::ptr::null_mut()), 0);
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
            action.sa_flags = libc::SA_ONSTACK;
            assert_eq!(
                libc::sigaction(libc::SIGUSR2, &action, std::ptr::null_mut()),
                0
            );
        }
        __inspect::set_injection_hook(Some(hook));
        ARMED.store(true, Ordering::SeqCst);
        op();
        __inspect::set_injection_hook(None);
        // SAFETY: disables the alternate stack before `alt` is freed.
        unsafe {
            let off = libc::stack_t {
                ss_sp: std::ptr::null_mut(),
                ss_flags: libc::SS_DISABLE,
                ss_size: 0,
            };
            assert_eq!(libc::sigaltstack(&off, std::ptr::null_mut()), 0);
        }
        // The kernel saved the interrupted refill's registers (output blocks
        // among them) in the signal frame on this stack: the test's memory,
        // which no scrub of the crate's reaches (SECURITY.md, "Not covered").
        for byte in &mut alt {
            // SAFETY: a byte of `alt`.
            unsafe { std::ptr::write_volatile(byte, 0) };
        }
        drop(alt);
    }
}

/// What the generator's thread tells the scanner at a checkpoint.
#[cfg(ratchet_rng_inspect)]
struct Checkpoint {
    step: &'static str,
    /// The state's two pieces, its page and its buffer (not scanned).
    pages: [(usize, usize); 2],
    /// An address on the thread's stack.
    stack: usize,
    /// Where the positive control planted copies (must be found exactly there).
    planted: Vec<usize>,
}

#[test]
#[cfg_attr(not(ratchet_rng_inspect), ignore = "needs RATCHET_RNG_INSPECT=1")]
fn no_key_or_unread_output_outside_the_state_pages() {
    #[cfg(ratchet_rng_inspect)]
    {
        use std::sync::{Mutex, mpsc};

        use scan::{Secrets, plant, unplant};

        let secrets = Mutex::new(Secrets::new());
        let (to_scanner, checkpoints) = mpsc::channel::<Checkpoint>();
        let (to_thread, scanned) = mpsc::channel::<()>();
        let mut failures = Vec::new();
        let mut unfound = Vec::new();
        let mut steps = 0;
        std::thread::scope(|scope| {
            let secrets = &secrets;
            scope.spawn(move || {
                // Records the calling thread's secrets (through the hook), then
                // waits for `answer` while the main thread scans.
                let stop_at =
                    |answer: &mpsc::Receiver<()>, step: &'static str, planted: &[usize]| {
                        let pages = secrets.lock().unwrap().snap();
                        let here = 0u8;
                        to_scanner
                            .send(Checkpoint {
                                step,
                                pages: [(pages.address, pages.len), pages.buffer],
                                stack: std::hint::black_box(&raw const here).addr(),
                                planted: planted.to_vec(),
                            })
                            .unwrap();
                        answer.recv().unwrap();
                        pages
                    };
                let checkpoint = |step, planted: &[usize]| stop_at(&scanned, step, planted);
                // A thread whose first call is a `u64()`: the lite mix, a short
                // batch (sixteen AES blocks, where the engine is AES) and the
                // shallow stack scrub. Its own channel for the scan's answer,
                // relayed by this thread.
                let (relay, relayed) = mpsc::channel::<()>();
                std::thread::scope(|inner| {
                    let stop_at = &stop_at;
                    inner.spawn(move || {
                        deep(|| {
                            let _ = ratchet_rng::u64();
                        });
                        stop_at(&relayed, "a thread's first u64() (a short batch)", &[]);
                    });
                    scanned.recv().unwrap();
                    relay.send(()).unwrap();
                });
                // The first use: seeded without a refill (an empty request), so
                // the key is the seed itself, as right after any seeding.
                deep(|| ratchet_rng::fill(&mut []));
                checkpoint("first use (seeded)", &[]);
                deep(|| {
                    let _ = ratchet_rng::u64();
                });
                checkpoint("first u64()", &[]);
                deep(|| ratchet_rng::rng().reseed().unwrap());
                checkpoint("forced reseed", &[]);
                deep(|| {
                    let _ = ratchet_rng::u64();
                });
                let pages = checkpoint("u64() after the reseed", &[]);
                // The positive control: one recorded window of the unread output,
                // planted on this stack and on the heap while the scan runs.
                let source = secrets.lock().unwrap().recorded_window(pages.unread);
                let source = source.expect("no recorded window in the unread output");
                let mut on_stack = [0u8; 16];
                let mut on_heap = Box::new([0u8; 16]);
                let at = [on_stack.as_mut_ptr(), on_heap.as_mut_ptr()];
                at.iter().for_each(|&dst| plant(source, dst));
                checkpoint("positive control", &at.map(|p| p.addr()));
                at.iter().for_each(|&dst| unplant(dst));
                std::hint::black_box((&mut on_stack, &mut on_heap));
                checkpoint("control copies wiped", &[]);
                for _ in 0..4 {
                    deep(|| {
                        for _ in 0..525 {
                            let _ = ratchet_rng::u64();
                        }
                    });
                    secrets.lock().unwrap().snap();
                }
                checkpoint("2100 u64()", &[]);
                // Past the budget: scheduled reseeds.
                deep(|| {
                    let mut big = vec![0u8; ratchet_rng::RESEED_BYTES + 5000];
                    ratchet_rng::fill(&mut big);
                    drop(big);
                    ratchet_rng::fill(&mut [0u8; 40]);
                });
                checkpoint("scheduled reseeds", &[]);
                // Issue 46: a buffer refill a handler interrupted (its own call,
                // on its own stack, served by the OS), with the refill kernel's
                // spills (the last output blocks, unread) below this frame. The
                // draws stop at the refill, so that no later call writes there.
                deep(|| {
                    onstack::with_handler(|| {
                        let mut n = 0;
                        while onstack::DRAWN.load(std::sync::atomic::Ordering::SeqCst) == 0
                            && n < 100_000
                        {
                            let _ = ratchet_rng::u64();
                            n += 1;
                        }
                    });
                });
                assert_eq!(onstack::DRAWN.load(std::sync::atomic::Ordering::SeqCst), 1);
                checkpoint("a refill a handler drew inside (SA_ONSTACK)", &[]);
            });
            // Dropped if this thread panics: the other one then stops waiting.
            let to_thread = to_thread;
            for cp in checkpoints {
                steps += 1;
                let mut hits = secrets.lock().unwrap().scan(cp.pages, cp.stack);
                for &addr in &cp.planted {
                    match hits.iter().position(|h| h.addr == addr) {
                        Some(i) => drop(hits.remove(i)),
                        None => unfound.push(format!("{}: {addr:#x}", cp.step)),
                    }
                    // A window that overlaps a planted copy is the copy's own
                    // doing: where the stream's byte next to the planted window
                    // equals the memory next to the array (0, about once in 256
                    // runs), the window one byte over matches too. Seen once,
                    // as one extra hit at each copy's address + 1.
                    hits.retain(|h| h.addr.abs_diff(addr) >= 16);
                }
                if !hits.is_empty() {
                    failures.push(format!(
                        "{}: {} windows: {:?}",
                        cp.step,
                        hits.len(),
                        &hits[..hits.len().min(8)]
                    ));
                }
                to_thread.send(()).unwrap();
            }
        });
        assert!(
            unfound.is_empty(),
            "copies planted on purpose were not found (the scan proves nothing): {unfound:?}"
        );
        assert_eq!(steps, 10, "the thread stopped early");
        let s = secrets.into_inner().unwrap();
        assert!(s.len() > 1000, "only {} windows", s.len());
        // The thread is gone and its state unmapped: nowhere at all.
        let after = s.scan([(0, 0); 2], 0);
        if !after.is_empty() {
            failures.push(format!(
                "after the thread exited: {} windows: {:?}",
                after.len(),
                &after[..after.len().min(8)]
            ));
        }
        assert!(
            failures.is_empty(),
            "secret windows outside the state pages:\n{}",
            failures.join("\n")
        );
        eprintln!(
            "{} masked secret windows, {steps} checkpoints and after exit: none found",
            s.len()
        );
    }
}
