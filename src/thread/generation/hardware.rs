//! What differs between two clones of one snapshot on the CPU: its random
//! source and its clocks. Only ever mixed with the OS generator's bytes.

/// Fills `out` from the CPU's random source and names it; `None` (and `out`
/// zeroed) where there is none, it kept failing, or it fails [`plausible`].
pub(crate) fn fill(out: &mut [u8; 32]) -> Option<&'static str> {
    let mut source = cpu_fill(out);
    // `try_lock`: never blocks (a signal handler may reseed).
    #[cfg(ratchet_rng_inspect)]
    if let Some(words) = INJECTED.try_lock().ok().and_then(|words| *words) {
        for (chunk, word) in out.chunks_exact_mut(8).zip(words) {
            chunk.copy_from_slice(&word.to_le_bytes());
        }
        source = source.or(Some("injected"));
    }
    if source.is_some() && !plausible(out) {
        source = None;
    }
    if source.is_none() {
        out.fill(0);
    }
    source
}

/// The sanity check on a CPU source's 4 words (why: SECURITY.md): none all
/// ones or all zeros, none repeated. No branch on the secret words: only the
/// verdict (public) decides anything.
fn plausible(out: &[u8; 32]) -> bool {
    /// 1 when `x == 0`, else 0, without a branch.
    fn is_zero(x: u64) -> u64 {
        ((x | x.wrapping_neg()) >> 63) ^ 1
    }
    let mut words = [0u64; 4];
    for (word, bytes) in words.iter_mut().zip(out.as_chunks::<8>().0) {
        *word = u64::from_le_bytes(*bytes);
    }
    let mut bad = 0;
    for (i, &word) in words.iter().enumerate() {
        bad |= is_zero(word) | is_zero(!word);
        for &earlier in &words[..i] {
            bad |= is_zero(word ^ earlier);
        }
    }
    zeroize::Zeroize::zeroize(&mut words);
    bad == 0
}

/// Words that replace the CPU source's output, set by [`inject()`].
#[cfg(ratchet_rng_inspect)]
static INJECTED: std::sync::Mutex<Option<[u64; 4]>> = std::sync::Mutex::new(None);

/// Makes the CPU source "return" `words` (`None`: its own output again).
#[cfg(ratchet_rng_inspect)]
pub(crate) fn inject(words: Option<[u64; 4]>) {
    *INJECTED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = words;
}

#[cfg(all(target_arch = "x86_64", not(miri)))]
fn cpu_fill(out: &mut [u8; 32]) -> Option<&'static str> {
    use core::arch::x86_64::{_rdrand64_step, _rdseed64_step};

    /// Tries per word: RDSEED may run dry under load (Intel advises retrying);
    /// RDRAND's retry advice is 10.
    const TRIES: usize = 64;

    /// Fills `out` a word at a time from `step` (one RDSEED or RDRAND: 1 on
    /// success), each word tried up to [`TRIES`] times; false if one never came.
    #[inline(always)]
    fn words(out: &mut [u8; 32], mut step: impl FnMut(&mut u64) -> i32) -> bool {
        out.chunks_exact_mut(8).all(|chunk| {
            let mut word = 0;
            let ok = (0..TRIES).any(|_| step(&mut word) == 1);
            chunk.copy_from_slice(&word.to_le_bytes());
            ok
        })
    }

    // The intrinsics are `unsafe fn`s on the MSRV, safe on newer compilers.
    #[allow(unused_unsafe)]
    #[target_feature(enable = "rdseed")]
    fn rdseed(out: &mut [u8; 32]) -> bool {
        // SAFETY: runs only where the CPU has RDSEED (detected by the caller).
        words(out, |word| unsafe { _rdseed64_step(word) })
    }

    #[allow(unused_unsafe)]
    #[target_feature(enable = "rdrand")]
    fn rdrand(out: &mut [u8; 32]) -> bool {
        // SAFETY: runs only where the CPU has RDRAND (detected by the caller).
        words(out, |word| unsafe { _rdrand64_step(word) })
    }

    use crate::backend::x86_cpu;

    // `x86_cpu`, not `std`'s detection: one (slow) CPUID pass per process.
    if (cfg!(target_feature = "rdseed") || x86_cpu::has(x86_cpu::RDSEED))
        // SAFETY: the CPU has RDSEED (detected just before).
        && unsafe { rdseed(out) }
    {
        return Some("RDSEED");
    }
    if (cfg!(target_feature = "rdrand") || x86_cpu::has(x86_cpu::RDRAND))
        // SAFETY: the CPU has RDRAND (detected just before).
        && unsafe { rdrand(out) }
    {
        return Some("RDRAND");
    }
    None
}

#[cfg(all(target_arch = "aarch64", not(miri)))]
fn cpu_fill(out: &mut [u8; 32]) -> Option<&'static str> {
    /// One RNDR read: the value, or `None` when the CPU reports failure (NZCV
    /// = 0b0100, value 0).
    fn rndr() -> Option<u64> {
        let (value, ok): (u64, u64);
        // SAFETY: `RNDR` (`s3_3_c2_c4_0`) reads a system register and sets the
        // flags, no memory or stack; called only where FEAT_RNG is detected.
        unsafe {
            core::arch::asm!(
                "mrs {value}, s3_3_c2_c4_0",
                "cset {ok}, ne",
                value = out(reg) value,
                ok = out(reg) ok,
                options(nomem, nostack),
            );
        }
        (ok != 0).then_some(value)
    }

    if !std::arch::is_aarch64_feature_detected!("rand") {
        return None;
    }
    out.chunks_exact_mut(8)
        .all(|chunk| {
            (0..64).find_map(|_| rndr()).is_some_and(|word| {
                chunk.copy_from_slice(&word.to_le_bytes());
                true
            })
        })
        .then_some("RNDR")
}

#[cfg(any(not(any(target_arch = "x86_64", target_arch = "aarch64")), miri))]
fn cpu_fill(_: &mut [u8; 32]) -> Option<&'static str> {
    None
}

/// The clocks, 32 bytes: realtime, monotonic and boot-time nanoseconds and the
/// cycle counter. Not the process id: clones share it; forks get new OS bytes.
pub(super) fn clocks(out: &mut [u8]) {
    // Not under Miri, whose isolation has no clock, nor on
    // `wasm32-unknown-unknown`, where `SystemTime::now()` panics.
    #[cfg(not(any(miri, all(target_family = "wasm", target_os = "unknown"))))]
    let realtime = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_nanos() as u64);
    #[cfg(any(miri, all(target_family = "wasm", target_os = "unknown")))]
    let realtime = 0;
    let words = [
        realtime,
        clock(Clock::Monotonic),
        clock(Clock::Boot),
        cycles(),
    ];
    for (chunk, word) in out.chunks_exact_mut(8).zip(words) {
        chunk.copy_from_slice(&word.to_le_bytes());
    }
}

/// The two cheapest readings that differ between clones (0 where missing):
/// the CPU's cycle counter and the monotonic clock.
pub(crate) fn cheap_clocks() -> [u64; 2] {
    [cycles(), clock(Clock::Monotonic)]
}

#[derive(Clone, Copy)]
enum Clock {
    Monotonic,
    Boot,
}

/// Nanoseconds on `which` (0 where it does not exist).
#[cfg(all(unix, not(miri)))]
fn clock(which: Clock) -> u64 {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    let boot = libc::CLOCK_BOOTTIME;
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let boot = libc::CLOCK_MONOTONIC;
    let id = match which {
        Clock::Monotonic => libc::CLOCK_MONOTONIC,
        Clock::Boot => boot,
    };
    // SAFETY: `timespec` is plain data; `clock_gettime` writes it (or fails).
    let mut time: libc::timespec = unsafe { core::mem::zeroed() };
    // SAFETY: a valid clock id and a pointer to our `timespec`.
    if unsafe { libc::clock_gettime(id, &raw mut time) } != 0 {
        return 0;
    }
    (time.tv_sec as u64)
        .wrapping_mul(1_000_000_000)
        .wrapping_add(time.tv_nsec as u64)
}

#[cfg(not(all(unix, not(miri))))]
fn clock(_: Clock) -> u64 {
    0
}

/// The CPU's cycle counter (x86_64 `RDTSC`, aarch64 `CNTVCT_EL0`); 0 elsewhere.
fn cycles() -> u64 {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    {
        // SAFETY: `RDTSC` exists on every x86_64 CPU and only reads a counter.
        unsafe { core::arch::x86_64::_rdtsc() }
    }
    #[cfg(all(target_arch = "aarch64", not(miri)))]
    {
        let value: u64;
        // SAFETY: `CNTVCT_EL0` is readable at EL0 on Linux; a register read.
        unsafe {
            core::arch::asm!("mrs {value}, cntvct_el0", value = out(reg) value,
                options(nomem, nostack, preserves_flags));
        }
        value
    }
    #[cfg(any(not(any(target_arch = "x86_64", target_arch = "aarch64")), miri))]
    {
        0
    }
}
