//! Reentrancy through a custom `getrandom` backend that itself draws from the
//! thread-local generator (the shape of RUSTSEC-2026-0097 against `rand`'s
//! `ThreadRng`): every seeding and reseeding of the thread-local generator
//! (first use, `reseed()`, the budget's scheduled reseeds, a fork) calls the
//! backend *inside* the slow path, with the state half updated. The backend's
//! `u64()` and `fill()` there are reentrant calls: they must be served without
//! touching that state, and every value drawn, inside the backend or outside,
//! must be distinct and nonzero.
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

#[cfg(getrandom_backend = "custom")]
mod backend {
    use std::cell::Cell;
    use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

    const CAP: usize = 1 << 20;
    pub static FROM_BACKEND: [AtomicU64; CAP] = [const { AtomicU64::new(0) }; CAP];
    pub static N: AtomicUsize = AtomicUsize::new(0);
    pub static CALLS: AtomicUsize = AtomicUsize::new(0);
    pub static ENABLED: AtomicBool = AtomicBool::new(false);

    thread_local! {
        /// The backend draws only when not already inside its own draw (its
        /// draw may call the backend again: the reentrant call goes to the OS).
        static INSIDE: Cell<bool> = const { Cell::new(false) };
    }

    fn record(v: u64) {
        let n = N.fetch_add(1, Ordering::Relaxed);
        if n < CAP {
            FROM_BACKEND[n].store(v, Ordering::Relaxed);
        }
    }

    /// getrandom 0.4's custom backend: the kernel's `getrandom`, after drawing
    /// from the thread-local generator.
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
            record(ratchet_rng::u64());
            let mut b = [0u8; 16];
            ratchet_rng::fill(&mut b);
            record(u64::from_le_bytes(b[..8].try_into().unwrap()));
            record(u64::from_le_bytes(b[8..].try_into().unwrap()));
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

        use backend::{CALLS, ENABLED, FROM_BACKEND, N};
        use ratchet_rng::RESEED_BYTES;

        ENABLED.store(true, Ordering::Relaxed);
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
        let n = N.load(Ordering::Relaxed).min(FROM_BACKEND.len());
        all.extend(FROM_BACKEND[..n].iter().map(|v| v.load(Ordering::Relaxed)));
        let zeros = all.iter().filter(|&&v| v == 0).count();
        let total = all.len();
        all.sort_unstable();
        all.dedup();
        let repeats = total - all.len();
        eprintln!(
            "{total} values, {n} drawn inside the backend ({} backend calls): \
             {repeats} repeated, {zeros} zero",
            CALLS.load(Ordering::Relaxed)
        );
        assert!(n >= 16 * 200, "the backend drew only {n} values");
        assert_eq!((repeats, zeros), (0, 0));
    }
}
