//! A `#[global_allocator]` that itself draws from the thread-local generator on
//! every allocation. Every value drawn, inside the allocator or outside, must be
//! distinct and nonzero.
//!
//! Where the generator enters the global allocator: off unix, a thread's first
//! use that finds every slab of thread states full allocates a new slab (up to
//! `usize::BITS` states, one allocation) with `alloc_zeroed`, *inside* the slow
//! path, so the allocator's `u64()` there is a reentrant call, which must be
//! served by the OS and never see or disturb the half-built state; the test then
//! asserts that such reentrant draws happened: the 64 threads, all holding their
//! states at once, and the main thread (whose first use is the allocator's draw
//! for a thread spawn) need at least two slabs, and at least one is allocated
//! inside a spawned thread's first use. On unix a slab is an `mmap` and the
//! generator allocates nothing through the global allocator on any of its
//! paths (the thread-exit destructor's registration allocates with glibc's
//! `calloc`, not through `#[global_allocator]`), so no draw of this test is
//! reentrant there, and it checks only that an allocator
//! that draws is served and never repeats: the reentrancy of an allocator
//! called *inside* the slow path, mid-reseed, is `tests/reentrant_getrandom.rs`'s
//! (its `getrandom` backend allocates).

mod common;

use common::reentry::{DrawingAllocator, in_generator, repeats_and_zeros};

#[global_allocator]
static ALLOCATOR: DrawingAllocator = DrawingAllocator::new();

const THREADS: usize = 64;

#[test]
#[cfg_attr(
    all(target_family = "wasm", not(target_feature = "atomics")),
    ignore = "spawns threads: none on this target"
)]
fn an_allocator_that_draws_is_served_and_never_repeats() {
    // All threads hold their states at once: none can take an exited thread's
    // slot, so the slabs fill and another must be allocated.
    let all_started = std::sync::Arc::new(std::sync::Barrier::new(THREADS));
    ALLOCATOR.enable(true);
    let threads: Vec<_> = (0..THREADS)
        .map(|_| {
            let all_started = all_started.clone();
            std::thread::spawn(move || {
                // The first use here, before this thread allocates (else the
                // allocator's own draw would be the first use, and its nested
                // allocation not drawn): off unix, the page is allocated inside
                // the slow path.
                let first = in_generator(ratchet_rng::u64);
                all_started.wait();
                let mut mine = Vec::with_capacity(3001);
                mine.push(first);
                for _ in 0..1000 {
                    mine.push(in_generator(ratchet_rng::u64));
                    let mut b = [0u8; 16];
                    in_generator(|| ratchet_rng::fill(&mut b));
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
    ALLOCATOR.enable(false);
    let (n, reentrant) = (ALLOCATOR.drawn.len(), ALLOCATOR.reentrant());
    all.extend(ALLOCATOR.drawn.values());
    let total = all.len();
    let (repeats, zeros) = repeats_and_zeros(all);
    eprintln!(
        "{total} values, {n} drawn inside the allocator ({reentrant} of them reentrant): \
         {repeats} repeated, {zeros} zero"
    );
    assert!(n >= THREADS, "the allocator drew only {n} values");
    if cfg!(not(unix)) {
        assert!(
            reentrant >= 1,
            "no reentrant draw: no slab's allocation reached the allocator"
        );
    }
    assert_eq!((repeats, zeros), (0, 0), "repeated and zero values");
}
