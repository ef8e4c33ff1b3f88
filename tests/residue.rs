//! No copy of the thread-local generator's key or unread output outside its
//! pages (Linux): after seeding, a forced reseed, the budget's scheduled
//! reseeds and thousands of calls, no 16-byte window of any key the state held
//! (snapshots taken between calls) or of its unread output appears anywhere in
//! the process's readable memory outside the state's pages (read through
//! `/proc/self/mem`, every readable region of `/proc/self/maps`): not on the
//! thread's stack, not on the heap. Checked while the thread lives, and again
//! after it exited (its state unmapped).
//!
//! The secrets are read through the hidden inspection hook (`RATCHET_RNG_INSPECT=1`;
//! without it the test is ignored). The test never holds a secret in plain form:
//! each byte is XORed with a random mask as it is read from the state, and the
//! scan looks up `window ^ mask`.
#![cfg(any(target_os = "linux", target_os = "android"))]

#[cfg(ratchet_rng_inspect)]
use std::collections::HashSet;
#[cfg(ratchet_rng_inspect)]
use std::io::{Read, Seek, SeekFrom};

/// A 16-byte window XORed with the mask.
#[cfg(ratchet_rng_inspect)]
type Masked = [u8; 16];

/// The masked secrets, and the mask.
#[cfg(ratchet_rng_inspect)]
struct Secrets {
    mask: [u8; 16],
    windows: HashSet<Masked>,
}

#[cfg(ratchet_rng_inspect)]
impl Secrets {
    /// Adds every 16-byte window of `addr..addr + len` (live memory of this
    /// thread's state, read between calls) that has at least 12 nonzero bytes
    /// (the unused key fields are zero: a window of zeros is no secret).
    fn add(&mut self, (addr, len): (usize, usize)) {
        let mut masked = vec![0u8; len];
        for (i, m) in masked.iter_mut().enumerate() {
            // SAFETY: `addr..addr + len` lies in this thread's live state pages,
            // not touched by anything else between calls.
            let b = unsafe { ((addr + i) as *const u8).read_volatile() };
            *m = b ^ self.mask[i % 16];
        }
        for start in 0..len.saturating_sub(15) {
            let mut w = [0u8; 16];
            let mut nonzero = 0;
            for j in 0..16 {
                // Unmasked only to count zeros: a register value.
                let plain = masked[start + j] ^ self.mask[(start + j) % 16];
                nonzero += usize::from(plain != 0);
                w[j] = plain ^ self.mask[j];
            }
            if nonzero >= 12 {
                self.windows.insert(w);
            }
        }
    }

    /// Scans the readable memory outside `skip`; returns where a secret window
    /// was found (region, offset).
    fn scan(&self, skip: (usize, usize)) -> Vec<String> {
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        let mut mem = std::fs::File::open("/proc/self/mem").unwrap();
        let mut found = Vec::new();
        let mut chunk = vec![0u8; 1 << 20];
        for line in maps.lines() {
            let mut fields = line.split_whitespace();
            let range = fields.next().unwrap();
            let perms = fields.next().unwrap();
            let name = line.split_whitespace().nth(5).unwrap_or("");
            let (start, end) = range.split_once('-').unwrap();
            let start = usize::from_str_radix(start, 16).unwrap();
            let end = usize::from_str_radix(end, 16).unwrap();
            if !perms.starts_with('r') || name == "[vvar]" || name == "[vsyscall]" {
                continue;
            }
            if start < skip.0 + skip.1 && skip.0 < end {
                // The state's own pages (maybe merged with a neighbour): scan
                // around them.
                for (a, b) in [(start, skip.0), (skip.0 + skip.1, end)] {
                    if a < b {
                        self.scan_range(&mut mem, &mut chunk, a, b, name, &mut found);
                    }
                }
                continue;
            }
            self.scan_range(&mut mem, &mut chunk, start, end, name, &mut found);
        }
        found
    }

    fn scan_range(
        &self,
        mem: &mut std::fs::File,
        chunk: &mut [u8],
        start: usize,
        end: usize,
        name: &str,
        found: &mut Vec<String>,
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
            for i in 0..n.saturating_sub(15) {
                let mut w = [0u8; 16];
                for j in 0..16 {
                    w[j] = chunk[i + j] ^ self.mask[j];
                }
                if self.windows.contains(&w) {
                    found.push(format!("{name} at {:#x}", at + i));
                }
            }
            // Overlap so that no window straddling two reads is missed.
            at += n.saturating_sub(15).max(1);
        }
        chunk.fill(0);
    }
}

#[test]
#[cfg_attr(not(ratchet_rng_inspect), ignore = "needs RATCHET_RNG_INSPECT=1")]
fn no_key_or_unread_output_outside_the_state_pages() {
    #[cfg(ratchet_rng_inspect)]
    {
        use ratchet_rng::__inspect::thread_state_pages;
        let mut mask = [0u8; 16];
        getrandom::fill(&mut mask).unwrap();
        mask.iter_mut().for_each(|m| *m |= 1);
        let secrets = std::sync::Mutex::new(Secrets {
            mask,
            windows: HashSet::new(),
        });
        std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    let mut s = secrets.lock().unwrap();
                    let snap = |s: &mut Secrets| {
                        let pages = thread_state_pages().unwrap();
                        s.add(pages.key);
                        s.add(pages.unread);
                        pages
                    };
                    // The first snapshot seeds the state without a refill (an
                    // empty request): the key is then the seed itself, as right
                    // after `reseed()`.
                    snap(&mut s);
                    let _ = ratchet_rng::u64();
                    snap(&mut s);
                    ratchet_rng::rng().reseed().unwrap();
                    snap(&mut s);
                    let _ = ratchet_rng::u64();
                    snap(&mut s);
                    for i in 0..2100 {
                        let _ = ratchet_rng::u64();
                        if i % 500 == 0 {
                            snap(&mut s);
                        }
                    }
                    // Past the budget: scheduled reseeds.
                    let mut big = vec![0u8; ratchet_rng::RESEED_BYTES + 5000];
                    ratchet_rng::fill(&mut big);
                    drop(big);
                    let mut small = [0u8; 40];
                    ratchet_rng::fill(&mut small);
                    let pages = snap(&mut s);
                    assert!(s.windows.len() > 1000, "only {} windows", s.windows.len());
                    // Positive control: a planted copy of one key window on the
                    // heap must be found, or the scan proves nothing.
                    let mut planted = vec![0u8; 16];
                    for (i, p) in planted.iter_mut().enumerate() {
                        // SAFETY: inside this thread's live state pages.
                        *p = unsafe { ((pages.key.0 + i) as *const u8).read_volatile() };
                    }
                    let control = s.scan((pages.address, pages.len));
                    planted.fill(0);
                    std::hint::black_box(&mut planted);
                    assert!(
                        control
                            .iter()
                            .any(|f| f.contains("heap") || f.contains("at")),
                        "the planted key window was not found: the scan proves nothing"
                    );
                    let found = s.scan((pages.address, pages.len));
                    assert!(
                        found.is_empty(),
                        "while the thread lives: {} secret windows outside the state: {:?}",
                        found.len(),
                        &found[..found.len().min(20)]
                    );
                })
                .join()
                .unwrap();
        });
        // The thread is gone and its state unmapped: nowhere at all.
        let s = secrets.lock().unwrap();
        let found = s.scan((0, 0));
        assert!(
            found.is_empty(),
            "after the thread exited: {} secret windows: {:?}",
            found.len(),
            &found[..found.len().min(20)]
        );
        eprintln!("{} masked secret windows, none found", s.windows.len());
    }
}
