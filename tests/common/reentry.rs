//! Reentrant draws from the thread-local generator: a `#[global_allocator]`
//! that draws on every allocation, the record of what such code drew (static
//! arrays: an allocator must not allocate), and the count of the draws made
//! while their thread was inside a call of the generator, which shows that a
//! test's reentrant calls really happened.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

/// Values one [`Record`] keeps (more are counted, not kept).
const CAP: usize = 1 << 20;

/// Values drawn where no allocation is allowed.
pub struct Record {
    values: [AtomicU64; CAP],
    n: AtomicUsize,
}

#[allow(
    clippy::new_without_default,
    reason = "a static's value: never built on the stack"
)]
impl Record {
    pub const fn new() -> Self {
        Self {
            values: [const { AtomicU64::new(0) }; CAP],
            n: AtomicUsize::new(0),
        }
    }

    pub fn push(&self, v: u64) {
        let n = self.n.fetch_add(1, Ordering::Relaxed);
        if n < CAP {
            self.values[n].store(v, Ordering::Relaxed);
        }
    }

    /// How many values were drawn.
    pub fn len(&self) -> usize {
        self.n.load(Ordering::Relaxed)
    }

    /// The values kept.
    pub fn values(&self) -> impl Iterator<Item = u64> + '_ {
        self.values[..self.len().min(CAP)]
            .iter()
            .map(|v| v.load(Ordering::Relaxed))
    }
}

thread_local! {
    /// Set while this thread is inside a call of the generator.
    static IN_GENERATOR: Cell<bool> = const { Cell::new(false) };
    /// Set while this thread's allocator draws (its own allocations do not).
    static DRAWING: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` with this thread marked as inside a call of the generator: the
/// test's own calls, or code the generator calls (a `getrandom` backend).
pub fn in_generator<R>(f: impl FnOnce() -> R) -> R {
    let outer = IN_GENERATOR.with(|c| c.replace(true));
    let r = f();
    IN_GENERATOR.with(|c| c.set(outer));
    r
}

/// Whether this thread is inside a call of the generator.
pub fn inside_generator() -> bool {
    IN_GENERATOR.try_with(Cell::get) == Ok(true)
}

/// A global allocator that, once enabled, draws a `u64()` from the thread-local
/// generator on every allocation (not within its own draw), and forwards the
/// allocation to [`System`].
pub struct DrawingAllocator {
    enabled: AtomicBool,
    /// Every value it drew.
    pub drawn: Record,
    /// How many of them it drew while its thread was inside a call of the
    /// generator: reentrant calls (read with [`Self::reentrant`]).
    reentrant: AtomicUsize,
}

#[allow(
    clippy::new_without_default,
    reason = "a static's value: never built on the stack"
)]
impl DrawingAllocator {
    pub const fn new() -> Self {
        Self {
            enabled: AtomicBool::new(false),
            drawn: Record::new(),
            reentrant: AtomicUsize::new(0),
        }
    }

    pub fn enable(&self, on: bool) {
        self.enabled.store(on, Ordering::Relaxed);
    }

    pub fn reentrant(&self) -> usize {
        self.reentrant.load(Ordering::Relaxed)
    }
}

// SAFETY: every allocation is `System`'s, forwarded unchanged.
unsafe impl GlobalAlloc for DrawingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if self.enabled.load(Ordering::Relaxed)
            && DRAWING.try_with(|d| d.replace(true)) == Ok(false)
        {
            if inside_generator() {
                self.reentrant.fetch_add(1, Ordering::Relaxed);
            }
            self.drawn.push(ratchet_rng::u64());
            let _ = DRAWING.try_with(|d| d.set(false));
        }
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// `(repeated, zero)`: how many values of `all` repeat an earlier one, and how
/// many are zero.
pub fn repeats_and_zeros(mut all: Vec<u64>) -> (usize, usize) {
    let zeros = all.iter().filter(|&&v| v == 0).count();
    let total = all.len();
    all.sort_unstable();
    all.dedup();
    (total - all.len(), zeros)
}
