//! Operating-system entropy failure, injected through getrandom's custom backend.
//!
//! Built normally (`cargo test --all-features`) its one test is ignored (counted as
//! ignored by the harness). Built with the custom backend, it defines getrandom 0.4's hook
//! `__getrandom_v03_custom`, which fails on demand, and checks every seeding
//! path of the public API:
//!
//! ```sh
//! CARGO_TARGET_DIR=target/os-failure RUSTFLAGS='--cfg getrandom_backend="custom"' \
//!     cargo test --all-features --test os_failure
//! ```
//!
//! (Only this target may be built with that flag: every other binary would lack
//! the hook and fail to link. CI runs exactly this command.)
//!
//! What it checks:
//! - the fallible paths return the OS error, with its code: `try_from_os_rng` of
//!   every generator, `ratchet_rng::try_fill` and `ThreadRng::reseed` on a thread's
//!   first use (once the seed reserve, OS bytes fetched before the failure, is
//!   spent: at most 8 new threads);
//! - the documented panics, listed in [`DOCUMENTED_PANICS`], each panic with the
//!   documented message and nothing else does;
//! - after the OS recovers, the same calls succeed;
//! - a failed *scheduled* reseed of the thread-local generator (after
//!   `RESEED_BYTES`) is not an error and does not panic: the current key stays
//!   in use, the reseed is retried only after another `RESEED_BYTES`, and a
//!   forced `reseed()` reports the error (as `ThreadRng`'s docs say);
//! - a forked child whose OS generator fails gets the error, never its parent's
//!   stream.
//!
//! The failure switch is process-wide, so the checks run in order inside one test.

/// One test, not one per check: the failure switch is process-wide, so the checks
/// run in order on one thread. Without the custom backend it is ignored (and the
/// harness counts it as ignored): a plain `cargo test` cannot inject failures.
#[test]
#[cfg_attr(
    not(getrandom_backend = "custom"),
    ignore = "needs RUSTFLAGS='--cfg getrandom_backend=\"custom\"' (see the file; CI runs it)"
)]
fn os_entropy_failure_on_every_seeding_path() {
    #[cfg(getrandom_backend = "custom")]
    failure::run();
}

#[cfg(getrandom_backend = "custom")]
mod failure {
    use std::any::Any;
    use std::io::Read;
    use std::panic::{AssertUnwindSafe, catch_unwind};
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    use ratchet_rng::rand_core::{Rng, TryRng};
    use ratchet_rng::{
        AesCtrPoolRng, ChaCha12KeyErasureRng, ChaCha20KeyErasureRng, ChaChaKeyErasureRng, OsError,
        RESEED_BYTES, ShakeRng, TurboShakeRng,
    };

    /// While set, the OS "generator" fails.
    static FAIL: AtomicBool = AtomicBool::new(false);
    /// Calls of the hook, failed or not.
    static CALLS: AtomicUsize = AtomicUsize::new(0);

    /// The code the failing hook reports (a custom getrandom error).
    const CODE: u16 = 4711;

    fn injected() -> getrandom::Error {
        getrandom::Error::new_custom(CODE)
    }

    /// The `getrandom` error inside the crate's [`OsError`] (its `source`).
    fn inner(err: OsError) -> getrandom::Error {
        *core::error::Error::source(&err)
            .and_then(|source| source.downcast_ref::<getrandom::Error>())
            .expect("an OsError's source is getrandom's error")
    }

    /// getrandom 0.4's custom backend (see getrandom's README, "Custom backend"):
    /// fills `len` bytes at `dest` from `/dev/urandom`, or fails while [`FAIL`]
    /// is set.
    ///
    /// # Safety
    /// getrandom passes a buffer valid for writes of `len` bytes (possibly
    /// uninitialised).
    #[unsafe(no_mangle)]
    unsafe extern "Rust" fn __getrandom_v03_custom(
        dest: *mut u8,
        len: usize,
    ) -> Result<(), getrandom::Error> {
        CALLS.fetch_add(1, Ordering::SeqCst);
        if FAIL.load(Ordering::SeqCst) {
            return Err(injected());
        }
        // SAFETY: `dest` is valid for writes of `len` bytes (getrandom's contract);
        // zeroing first makes them initialised, so the slice below is valid.
        let buf = unsafe {
            core::ptr::write_bytes(dest, 0, len);
            core::slice::from_raw_parts_mut(dest, len)
        };
        std::fs::File::open("/dev/urandom")
            .and_then(|mut f| f.read_exact(buf))
            .map_err(|_| getrandom::Error::UNEXPECTED)
    }

    fn set_failing(fail: bool) {
        FAIL.store(fail, Ordering::SeqCst);
    }

    fn calls() -> usize {
        CALLS.load(Ordering::SeqCst)
    }

    /// The start of every documented panic message of a generator's
    /// `from_os_rng`, and of the thread-local generator's.
    fn generator_message(name: &str) -> String {
        format!(
            "ratchet-rng: cannot seed {name}: the operating system's random number generator \
             failed: {}",
            injected()
        )
    }

    fn thread_message() -> String {
        format!(
            "ratchet-rng: cannot seed the thread-local generator: the operating system's random \
             number generator failed: {}",
            injected()
        )
    }

    fn payload_message(payload: &(dyn Any + Send)) -> String {
        if let Some(s) = payload.downcast_ref::<String>() {
            s.clone()
        } else if let Some(s) = payload.downcast_ref::<&str>() {
            (*s).to_owned()
        } else {
            String::from("<non-string panic payload>")
        }
    }

    /// Runs `f` on a new thread (so the thread-local generator starts unseeded)
    /// and returns its panic message, if it panicked.
    fn panic_on_new_thread(f: fn()) -> Option<String> {
        std::thread::spawn(move || {
            catch_unwind(AssertUnwindSafe(f))
                .err()
                .map(|payload| payload_message(&*payload))
        })
        .join()
        .expect("the thread catches its own panic")
    }

    /// Every panic the public API documents: the infallible OS-seeded paths.
    /// Each entry runs with a failing OS generator on a fresh thread and must
    /// panic with its message; anything else in the API returns errors (see
    /// `tests/bad_input.rs` for the no-panic property tests).
    pub const DOCUMENTED_PANICS: &[(&str, fn(), Expected)] = &[
        (
            "TurboShakeRng::from_os_rng",
            || {
                let _ = TurboShakeRng::from_os_rng();
            },
            Expected::Generator("TurboShakeRng"),
        ),
        (
            "ShakeRng::from_os_rng",
            || {
                let _ = ShakeRng::from_os_rng();
            },
            Expected::Generator("ShakeRng"),
        ),
        (
            "ChaChaKeyErasureRng::from_os_rng",
            || {
                let _ = ChaChaKeyErasureRng::from_os_rng();
            },
            Expected::Generator("ChaChaKeyErasureRng"),
        ),
        (
            "ChaCha12KeyErasureRng::from_os_rng",
            || {
                let _ = ChaCha12KeyErasureRng::from_os_rng();
            },
            Expected::Generator("ChaCha12KeyErasureRng"),
        ),
        (
            "ChaCha20KeyErasureRng::from_os_rng",
            || {
                let _ = ChaCha20KeyErasureRng::from_os_rng();
            },
            Expected::Generator("ChaCha20KeyErasureRng"),
        ),
        (
            "AesCtrPoolRng::from_os_rng",
            || {
                let _ = AesCtrPoolRng::from_os_rng();
            },
            Expected::Generator("AesCtrPoolRng"),
        ),
        (
            "ratchet_rng::fill",
            || ratchet_rng::fill(&mut [0u8; 16]),
            Expected::Thread,
        ),
        (
            "ratchet_rng::fill (empty)",
            || ratchet_rng::fill(&mut []),
            Expected::Thread,
        ),
        (
            "ratchet_rng::u32",
            || {
                let _ = ratchet_rng::u32();
            },
            Expected::Thread,
        ),
        (
            "ratchet_rng::u64",
            || {
                let _ = ratchet_rng::u64();
            },
            Expected::Thread,
        ),
        (
            "ThreadRng::next_u32",
            || {
                let _ = ratchet_rng::rng().next_u32();
            },
            Expected::Thread,
        ),
        (
            "ThreadRng::next_u64",
            || {
                let _ = ratchet_rng::rng().next_u64();
            },
            Expected::Thread,
        ),
        (
            "ThreadRng::fill_bytes",
            || ratchet_rng::rng().fill_bytes(&mut [0u8; 64]),
            Expected::Thread,
        ),
        (
            "ThreadRng::try_next_u32 (Error = Infallible)",
            || {
                let _ = ratchet_rng::thread_rng().try_next_u32();
            },
            Expected::Thread,
        ),
        (
            "ThreadRng::try_next_u64 (Error = Infallible)",
            || {
                let _ = ratchet_rng::thread_rng().try_next_u64();
            },
            Expected::Thread,
        ),
        (
            "ThreadRng::try_fill_bytes (Error = Infallible)",
            || {
                let _ = ratchet_rng::rng().try_fill_bytes(&mut [0u8; 8]);
            },
            Expected::Thread,
        ),
    ];

    /// Which documented message a panic must carry.
    #[derive(Clone, Copy)]
    pub enum Expected {
        Generator(&'static str),
        Thread,
    }

    /// Where the OS fails, a new thread may still be seeded from the seed
    /// reserve (OS bytes fetched before the failure, at most 8 seeds, each
    /// taken once): draws on new threads until one is refused, and checks that
    /// at most 8 were served. Then every new thread needs the OS.
    fn exhaust_the_seed_reserve() {
        let served = (0..=8)
            .take_while(|_| {
                std::thread::spawn(|| ratchet_rng::try_fill(&mut [0u8; 8]).is_ok())
                    .join()
                    .unwrap()
            })
            .count();
        assert!(
            served <= 8,
            "{served} new threads seeded while the OS fails"
        );
    }

    fn documented_panics_have_their_messages() {
        set_failing(true);
        exhaust_the_seed_reserve();
        for &(name, f, expected) in DOCUMENTED_PANICS {
            let want = match expected {
                Expected::Generator(generator) => generator_message(generator),
                Expected::Thread => thread_message(),
            };
            let got = panic_on_new_thread(f);
            assert_eq!(got.as_deref(), Some(want.as_str()), "{name}");
        }
        // With the OS working, none of them panics.
        set_failing(false);
        for &(name, f, _) in DOCUMENTED_PANICS {
            assert_eq!(panic_on_new_thread(f), None, "{name} with a working OS");
        }
        println!(
            "ok: {} documented panics, each with its message",
            DOCUMENTED_PANICS.len()
        );
    }

    fn try_from_os_rng_returns_the_error() {
        set_failing(true);
        assert_eq!(
            TurboShakeRng::try_from_os_rng().err().map(inner),
            Some(injected())
        );
        assert_eq!(
            ShakeRng::try_from_os_rng().err().map(inner),
            Some(injected())
        );
        assert_eq!(
            ChaChaKeyErasureRng::try_from_os_rng().err().map(inner),
            Some(injected())
        );
        assert_eq!(
            ChaCha12KeyErasureRng::try_from_os_rng().err().map(inner),
            Some(injected())
        );
        assert_eq!(
            ChaCha20KeyErasureRng::try_from_os_rng().err().map(inner),
            Some(injected())
        );
        assert_eq!(
            AesCtrPoolRng::try_from_os_rng().err().map(inner),
            Some(injected())
        );
        // The code survives for callers that inspect it.
        let err = AesCtrPoolRng::try_from_os_rng().unwrap_err();
        assert_eq!(err.raw_os_error(), None);
        assert_eq!(inner(err), injected());
        set_failing(false);
        let mut a = TurboShakeRng::try_from_os_rng().expect("the OS works again");
        let mut b = AesCtrPoolRng::try_from_os_rng().expect("the OS works again");
        assert_ne!(a.next_u64(), b.next_u64());
        println!("ok: try_from_os_rng returns the OS error, then recovers");
    }

    fn thread_first_seeding_failure_is_reported_then_recovers() {
        set_failing(true);
        exhaust_the_seed_reserve();
        std::thread::spawn(|| {
            let mut buf = [0u8; 32];
            assert_eq!(
                ratchet_rng::try_fill(&mut buf).map_err(inner),
                Err(injected())
            );
            assert_eq!(
                ratchet_rng::try_fill(&mut []).map_err(inner),
                Err(injected())
            );
            assert_eq!(ratchet_rng::rng().reseed().map_err(inner), Err(injected()));
            // Nothing was served, and the next call tries to seed again.
            assert_eq!(buf, [0u8; 32]);
            let before = calls();
            assert_eq!(
                ratchet_rng::try_fill(&mut buf).map_err(inner),
                Err(injected())
            );
            assert!(calls() > before, "each call retries the OS");
            set_failing(false);
            ratchet_rng::try_fill(&mut buf).expect("the OS works again");
            assert_ne!(buf, [0u8; 32]);
            assert_ne!(ratchet_rng::u64(), ratchet_rng::u64());
            ratchet_rng::fill(&mut buf);
        })
        .join()
        .expect("no panic");
        println!("ok: thread-local first seeding returns the error, then recovers");
    }

    fn thread_scheduled_reseed_failure_keeps_serving() {
        set_failing(false);
        std::thread::spawn(|| {
            // Seeded now; the reseed budget starts.
            let _ = ratchet_rng::u64();
            set_failing(true);
            let before = calls();
            // Crosses the budget: the scheduled reseed fails, output continues.
            let mut big = vec![0u8; RESEED_BYTES];
            assert_eq!(ratchet_rng::try_fill(&mut big), Ok(()));
            let after_first = calls();
            assert!(after_first > before, "the scheduled reseed was attempted");
            assert!(big[RESEED_BYTES - 64..].iter().any(|&b| b != 0));
            // No new attempt within the next budget...
            let mut half = vec![0u8; RESEED_BYTES / 2];
            ratchet_rng::fill(&mut half);
            let _ = ratchet_rng::u32();
            assert_eq!(calls(), after_first, "no reseed attempt within the budget");
            // ...and a new one once it is spent, still without an error.
            ratchet_rng::try_fill(&mut big).expect("a failed scheduled reseed is not an error");
            assert!(
                calls() > after_first,
                "the reseed is retried after another budget"
            );
            // A forced reseed reports the failure; the generator keeps serving.
            assert_eq!(ratchet_rng::rng().reseed().map_err(inner), Err(injected()));
            let (x, y) = (ratchet_rng::u64(), ratchet_rng::u64());
            assert_ne!(x, y);
            // The OS recovers: a forced reseed succeeds.
            set_failing(false);
            let before = calls();
            ratchet_rng::rng().reseed().expect("the OS works again");
            assert!(calls() > before);
        })
        .join()
        .expect("no panic");
        println!("ok: a failed scheduled reseed keeps serving and is retried a budget later");
    }

    /// A forked child whose OS generator fails must not continue its parent's
    /// stream: it gets the error (and the infallible calls panic).
    #[cfg(unix)]
    fn forked_child_with_failing_os_gets_the_error() {
        set_failing(false);
        // Seed this thread's generator, with bytes buffered.
        let _ = ratchet_rng::u32();
        // SAFETY: `fork` has no memory-safety preconditions. The child has one
        // thread (this one); the harness's other threads only wait on channels
        // and hold no lock the child needs (glibc's fork leaves malloc usable in
        // the child). It runs this crate's code and leaves with `_exit`.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            set_failing(true);
            let mut buf = [0u8; 16];
            let code = match ratchet_rng::try_fill(&mut buf) {
                Err(err) if inner(err) == injected() => {
                    let panicked = catch_unwind(ratchet_rng::u64).is_err();
                    if panicked { 0 } else { 3 }
                }
                Err(_) => 2,
                Ok(()) => 1,
            };
            // SAFETY: ends the child at once, without running the parent's
            // destructors or atexit handlers.
            unsafe { libc::_exit(code) }
        }
        assert!(pid > 0, "fork failed");
        let mut status = 0;
        // SAFETY: `pid` is our child; `status` is a valid out-pointer.
        let rc = unsafe { libc::waitpid(pid, &mut status, 0) };
        assert_eq!(rc, pid);
        assert!(libc::WIFEXITED(status), "child did not exit normally");
        assert_eq!(
            libc::WEXITSTATUS(status),
            0,
            "child: 1 = served output without a seed, 2 = wrong error, 3 = u64() did not panic"
        );
        // The parent is unaffected.
        ratchet_rng::try_fill(&mut [0u8; 8]).expect("parent");
        println!("ok: a forked child with a failing OS gets the error, not the parent's stream");
    }

    pub fn run() {
        // Expected panics are checked by message; keep them out of the output.
        let default_hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let message = payload_message(info.payload());
            if !message.starts_with("ratchet-rng: cannot seed") {
                default_hook(info);
            }
        }));

        try_from_os_rng_returns_the_error();
        documented_panics_have_their_messages();
        thread_first_seeding_failure_is_reported_then_recovers();
        thread_scheduled_reseed_failure_keeps_serving();
        #[cfg(unix)]
        forked_child_with_failing_os_gets_the_error();
        println!("os_failure: all checks passed");
    }
}
