//! Reentrancy through a custom `getrandom` backend that itself draws from the
//! thread-local generator (the shape of RUSTSEC-2026-0097 against `rand`'s
//! `ThreadRng`): every seeding and reseeding of the thread-local generator
//! (first use, `reseed()`, the budget's scheduled reseeds, a fork) calls the
//! backend *inside* the slow path, with the state half updated. The backend's
//! `u64()` and `fill()` there are reentrant calls: they must be served without
//! touching that state, and every value drawn, inside the backend or outside,
//! must be distinct and nonzero. The backend also allocates, through a
//! `#[global_allocator]` that draws too: an allocator entered inside the slow
//! path (the generator itself never allocates through it on unix: see
//! `tests/reentrant.rs`). The test counts the draws made there.
//!
//! Shown to fail (issue 12) with the in-use mark never set (`set_slot(slot)`
//! where the calls set `slot | IN_USE`): thousands of repeated and zero values.
//!
//! Built only with getrandom's custom backend, in its own target dir (CI runs
//! exactly this):
//!
//! ```sh
//! CARGO_TARGET_DIR=target/os-failure RUSTFLAGS='--cfg getrandom_backend="custom"' \
//!     cargo test --all-features --test reentrant_getrandom
//! ```
//!
//! Built normally, its one test is ignored (counted as such by the harness).

mod common;

#[cfg(getrandom_backend = "custom")]
mod backend {
    use std::cell::Cell;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    use crate::common::reentry::{DrawingAllocator, Record, in_generator};

    pub static FROM_BACKEND: Record = Record::new();
    pub static CALLS: AtomicUsize = AtomicUsize::new(0);
    pub static ENABLED: AtomicBool = AtomicBool::new(false);

    /// Draws on every allocation once enabled; the backend allocates, so the
    /// allocator is entered inside the generator's slow path too.
    #[global_allocator]
    pub static ALLOCATOR: DrawingAllocator = DrawingAllocator::new();

    thread_local! {
        /// The backend draws only when not already inside its own draw (its
        /// draw may call the backend again: the reentrant call goes to the OS).
        static INSIDE: Cell<bool> = const { Cell::new(false) };
    }

    /// getrandom 0.4's custom backend: the kernel's `getrandom`, after drawing
    /// from the thread-local generator and allocating (which makes the
    /// allocator draw). The backend is only ever called from inside a call of
    /// the generator (its seeding, or a reentrant call's OS fallback), so its
    /// draws and the allocator's draws there are all reentrant.
    ///
    /// # Safety
    /// getrandom passes a buffer valid for writes of `len` bytes.
    #[unsafe(no_mangle)]
    unsafe extern "Rust" fn __getrandom_v03_custom(
        dest: *mut u8,
        len: usize,
    ) -> Result<(), getrandom::Error> {
        CALLS.fetch_add(1, Ordering::Relaxed);
        if ENABLED.load(Ordering::Relaxed) && INSIDE.try_with(|i| i.replace(true)) == Ok(false) {
            in_generator(|| {
                FROM_BACKEND.push(ratchet_rng::u64());
                let mut b = [0u8; 16];
                ratchet_rng::fill(&mut b);
                FROM_BACKEND.push(u64::from_le_bytes(b[..8].try_into().unwrap()));
                FROM_BACKEND.push(u64::from_le_bytes(b[8..].try_into().unwrap()));
                // The allocator draws here: inside the slow path.
                drop(std::hint::black_box(Box::new(0u64)));
            });
            let _ = INSIDE.try_with(|i| i.set(false));
        }
        let mut done = 0;
        while done < len {
            // SAFETY: `dest + done..dest + len` is valid for writes (getrandom's
            // contract).
            let n = unsafe { libc::getrandom(dest.add(done).cast(), len - done, 0) };
            if n < 0 {
                if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                return Err(getrandom::Error::UNEXPECTED);
            }
            done += n as usize;
        }
        Ok(())
    }
}

#[test]
#[cfg_attr(
    not(getrandom_backend = "custom"),
    ignore = "needs RUSTFLAGS='--cfg getrandom_backend=\"custom\"' (see the file's docs)"
)]
fn a_backend_that_draws_is_served_and_never_repeats() {
    #[cfg(getrandom_backend = "custom")]
    {
        use std::sync::atomic::Ordering;

        use backend::{ALLOCATOR, CALLS, ENABLED, FROM_BACKEND};
        use common::reentry::repeats_and_zeros;
        use ratchet_rng::RESEED_BYTES;

        ENABLED.store(true, Ordering::Relaxed);
        ALLOCATOR.enable(true);
        let threads: Vec<_> = (0..16)
            .map(|_| {
                std::thread::spawn(|| {
                    let mut mine = Vec::new();
                    let mut rng = ratchet_rng::rng();
                    let mut big = vec![0u8; RESEED_BYTES + 4096];
                    for round in 0..200 {
                        for _ in 0..100 {
                            mine.push(ratchet_rng::u64());
                            let mut b = [0u8; 8];
                            ratchet_rng::fill(&mut b);
                            mine.push(u64::from_le_bytes(b));
                        }
                        rng.reseed().unwrap();
                        if round % 50 == 0 {
                            // Past the budget: scheduled reseeds inside the fill.
                            ratchet_rng::fill(&mut big);
                            mine.extend(
                                big.chunks_exact(8)
                                    .step_by(64)
                                    .map(|c| u64::from_le_bytes(c.try_into().unwrap())),
                            );
                        }
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
        ALLOCATOR.enable(false);
        let n = FROM_BACKEND.len();
        let (in_alloc, reentrant_alloc) = (ALLOCATOR.drawn.len(), ALLOCATOR.reentrant());
        all.extend(FROM_BACKEND.values());
        all.extend(ALLOCATOR.drawn.values());
        let total = all.len();
        let (repeats, zeros) = repeats_and_zeros(all);
        eprintln!(
            "{total} values, {n} drawn inside the backend ({} backend calls), {in_alloc} \
             inside the allocator ({reentrant_alloc} of them inside the backend): \
             {repeats} repeated, {zeros} zero",
            CALLS.load(Ordering::Relaxed)
        );
        assert!(n >= 16 * 200, "the backend drew only {n} values");
        assert!(
            reentrant_alloc >= 16 * 200,
            "the allocator drew only {reentrant_alloc} values inside the backend"
        );
        assert_eq!((repeats, zeros), (0, 0), "repeated and zero values");
    }
}
