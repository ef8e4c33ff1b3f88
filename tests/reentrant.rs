//! Reentrancy through a `#[global_allocator]` that itself draws from the
//! thread-local generator on every allocation. The generator allocates nothing
//! on its own paths, except where the thread's first use registers the
//! destructor that frees its state (glibc's `__cxa_thread_atexit_impl` calls
//! `calloc`): that allocation happens *inside* the slow path, so the
//! allocator's `u64()` is a reentrant call, which must be served by the OS and
//! never see or disturb the half-built state. Every value drawn, inside the
//! allocator or outside, must be distinct and nonzero.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

/// Values the allocator drew (an allocator must not allocate: a static array).
const CAP: usize = 1 << 20;
static FROM_ALLOC: [AtomicU64; CAP] = [const { AtomicU64::new(0) }; CAP];
static N: AtomicUsize = AtomicUsize::new(0);
static ENABLED: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// The allocator draws only when not already inside its own draw.
    static INSIDE: Cell<bool> = const { Cell::new(false) };
}

struct Drawing;

// SAFETY: every allocation is `System`'s, forwarded unchanged.
unsafe impl GlobalAlloc for Drawing {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if ENABLED.load(Ordering::Relaxed) && INSIDE.try_with(|i| i.replace(true)) == Ok(false) {
            let v = ratchet_rng::u64();
            let n = N.fetch_add(1, Ordering::Relaxed);
            if n < CAP {
                FROM_ALLOC[n].store(v, Ordering::Relaxed);
            }
            let _ = INSIDE.try_with(|i| i.set(false));
        }
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Drawing = Drawing;

#[test]
#[cfg_attr(
    all(target_family = "wasm", not(target_feature = "atomics")),
    ignore = "spawns threads: none on this target"
)]
fn an_allocator_that_draws_is_served_and_never_repeats() {
    ENABLED.store(true, Ordering::Relaxed);
    let threads: Vec<_> = (0..64)
        .map(|_| {
            std::thread::spawn(|| {
                // The first use here: the destructor's registration allocates
                // inside the slow path.
                let mut mine = Vec::with_capacity(3000);
                for _ in 0..1000 {
                    mine.push(ratchet_rng::u64());
                    let mut b = [0u8; 16];
                    ratchet_rng::fill(&mut b);
                    mine.push(u64::from_le_bytes(b[..8].try_into().unwrap()));
                    mine.push(u64::from_le_bytes(b[8..].try_into().unwrap()));
                }
                mine
            })
        })
        .collect();
    let mut all: Vec<u64> = threads
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    ENABLED.store(false, Ordering::Relaxed);
    let n = N.load(Ordering::Relaxed).min(CAP);
    all.extend(FROM_ALLOC[..n].iter().map(|v| v.load(Ordering::Relaxed)));
    assert!(n >= 64, "the allocator drew only {n} values");
    assert!(!all.contains(&0), "a zero value");
    let total = all.len();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), total, "{} repeated values", total - all.len());
    eprintln!("{total} values, {n} drawn inside the allocator: all distinct, none zero");
}
