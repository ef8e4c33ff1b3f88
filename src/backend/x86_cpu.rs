//! The x86_64 CPU features every backend probe and the thread-local
//! generator's RDSEED/RDRAND need, detected at most once per process in two
//! stages, cached as a bit mask in one atomic: CPUID leaf 1 alone (AES-NI,
//! RDRAND), then, the first time a probe asks for more, leaves 0 and 7
//! (subleaf 0) and XGETBV.
//!
//! Why not `cpufeatures` here (STYLE.md says detect with it): each of its
//! probes runs its own CPUIDs, and CPUID traps to the hypervisor in a VM. On
//! an EPYC Zen 4 in a Firecracker VM one CPUID costs about 5 us, and the seven
//! probes of the first call (plus `std`'s detection for RDSEED) took 66-88 us
//! of a process's first `u64()`, 3.4x `rand::rng()`'s whole first call. A
//! process's first `u64()` needs only AES-NI (its short first batch runs on
//! it, `AesBackend::for_few_blocks`): one CPUID; the wide backends' leaves
//! wait for the first pool refill (two more, leaf 1 is not asked again). The
//! OS-support checks are the ones `cpufeatures` makes: AVX and AVX2 need
//! OSXSAVE and the OS's XMM and YMM state in XCR0 (bits 1 and 2); AVX-512
//! also needs the opmask and ZMM state (bits 5, 6 and 7).
//!
//! Where glibc 2.33+ exports its own table of the CPUID leaves its loader read
//! at start-up (`__x86_get_cpuid_feature_leaf`, found with `dlsym` when the
//! thread-local generator's `libc` is linked), both stages read leaves 1 and 7
//! there and run no CPUID at all; XGETBV, which does not trap, is still ours.
//!
//! Where CPUID cannot be executed, nothing is detected at run time and the
//! probes answer from the compile-time target features only, as
//! `cpufeatures` does: inside an SGX enclave CPUID faults
//! (`target_env = "sgx"`), and Miri interprets no CPUID.

#![allow(
    dead_code,
    reason = "which bits are read depends on the build switches"
)]

use core::sync::atomic::{AtomicU32, Ordering::Relaxed};

/// AVX2 (and AVX), with the OS's YMM state.
pub(crate) const AVX2: u32 = 1 << 0;
/// AVX-512F, with the OS's ZMM and opmask state.
pub(crate) const AVX512F: u32 = 1 << 1;
/// AVX-512VL, with the OS's ZMM and opmask state.
pub(crate) const AVX512VL: u32 = 1 << 2;
/// AES-NI.
pub(crate) const AES: u32 = 1 << 3;
/// VAES (leaf 7, ECX bit 9), whatever the register width.
pub(crate) const VAES: u32 = 1 << 4;
/// RDRAND.
pub(crate) const RDRAND: u32 = 1 << 5;
/// RDSEED.
pub(crate) const RDSEED: u32 = 1 << 6;
/// Leaf 1's OSXSAVE and AVX bits, kept for the second stage (not features:
/// AVX also needs the OS's state, which XGETBV tells).
const OSXSAVE_RAW: u32 = 1 << 28;
const AVX_RAW: u32 = 1 << 29;
/// What leaf 1 alone decides.
const LEAF1_BITS: u32 = AES | RDRAND | OSXSAVE_RAW | AVX_RAW;
/// Set in the cache once leaf 1 was read.
const LEAF1_DONE: u32 = 1 << 30;
/// Set in the cache once leaves 0 and 7 and XGETBV were read too.
const DETECTED: u32 = 1 << 31;

/// The detected features and the stages done ([`LEAF1_DONE`], [`DETECTED`]).
static CACHE: AtomicU32 = AtomicU32::new(0);

/// Whether the CPU (and OS) has every feature of `bits`, detected at run
/// time; always false where CPUID cannot be executed. After the first call of
/// each stage, one load (inlined: the thread-local generator asks several
/// times per seeding).
#[inline]
pub(crate) fn has(bits: u32) -> bool {
    let stage = if bits & !LEAF1_BITS != 0 {
        DETECTED
    } else {
        LEAF1_DONE
    };
    let mut cached = CACHE.load(Relaxed);
    if cached & stage == 0 {
        cached = detect(stage == DETECTED);
    }
    cached & bits == bits
}

/// The detected features, from the cache or (first call of each stage) the
/// CPU: leaf 1's, and the rest too when `all`. Two threads may both run a
/// stage; they merge the same answer.
#[cold]
#[inline(never)]
fn detect(all: bool) -> u32 {
    let mut cached = CACHE.load(Relaxed);
    if cached & LEAF1_DONE == 0 {
        cached |= leaf1() | LEAF1_DONE;
        CACHE.fetch_or(cached, Relaxed);
    }
    if all && cached & DETECTED == 0 {
        cached |= wide(cached) | DETECTED;
        CACHE.fetch_or(cached, Relaxed);
    }
    cached
}

/// XCR0, read with XGETBV.
///
/// # Safety
///
/// The OS must have enabled XSAVE (CPUID leaf 1, ECX bit 27).
#[cfg(not(any(miri, target_env = "sgx")))]
#[target_feature(enable = "xsave")]
unsafe fn xgetbv0() -> u64 {
    // SAFETY: XGETBV is enabled (the caller's precondition) and
    // register 0 (XCR0) always exists then.
    unsafe { core::arch::x86_64::_xgetbv(0) }
}

/// A leaf of all zeros: no leaf-7 feature.
#[cfg(not(any(miri, target_env = "sgx")))]
const fn no_leaf() -> core::arch::x86_64::CpuidResult {
    core::arch::x86_64::CpuidResult {
        eax: 0,
        ebx: 0,
        ecx: 0,
        edx: 0,
    }
}

#[cfg(any(miri, target_env = "sgx"))]
fn leaf1() -> u32 {
    0
}

#[cfg(any(miri, target_env = "sgx"))]
fn wide(_: u32) -> u32 {
    0
}

const fn bit(word: u32, n: u32) -> bool {
    word & (1 << n) != 0
}

/// `struct cpuid_feature *__x86_get_cpuid_feature_leaf(unsigned int)`:
/// `cpuid_array[4]` (EAX, EBX, ECX, EDX), then `active_array[4]`.
#[cfg(all(
    feature = "thread_rng",
    target_os = "linux",
    target_env = "gnu",
    not(miri)
))]
type LeafFn = unsafe extern "C" fn(libc::c_uint) -> *const [u32; 8];

/// [`glibc_table`]'s function's address; null: not looked up yet; dangling:
/// not found.
#[cfg(all(
    feature = "thread_rng",
    target_os = "linux",
    target_env = "gnu",
    not(miri)
))]
static LOOKUP: core::sync::atomic::AtomicPtr<libc::c_void> =
    core::sync::atomic::AtomicPtr::new(core::ptr::null_mut());

/// glibc 2.33+'s `__x86_get_cpuid_feature_leaf` (`<sys/platform/x86.h>`),
/// looked up with `dlsym` once (about 1 µs, where a CPUID costs 5 µs in a VM);
/// `None` where it is not exported (an older glibc, a static program).
#[cfg(all(
    feature = "thread_rng",
    target_os = "linux",
    target_env = "gnu",
    not(miri)
))]
fn glibc_table() -> Option<LeafFn> {
    const ABSENT: *mut libc::c_void = core::ptr::dangling_mut();
    let mut found = LOOKUP.load(Relaxed);
    if found.is_null() {
        #[cfg(ratchet_rng_inspect)]
        crate::__inspect::signal_unsafe_call();
        // SAFETY: a symbol lookup in the loaded objects, with a valid C
        // string; null when absent.
        found =
            unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"__x86_get_cpuid_feature_leaf".as_ptr()) };
        if found.is_null() {
            found = ABSENT;
        }
        LOOKUP.store(found, Relaxed);
    }
    // SAFETY: the symbol glibc exports under that name has `LeafFn`'s
    // signature (`<sys/platform/x86.h>`).
    (found != ABSENT).then(|| unsafe { core::mem::transmute::<*mut libc::c_void, LeafFn>(found) })
}

/// Looks glibc's CPUID table up now if it is not yet. The thread-local
/// generator calls this at a thread's first use, so that no later call (in a
/// signal handler, maybe during a `fork()`) runs `dlsym`, which is not
/// async-signal-safe (issue 46): a build whose target features answer every
/// first-use probe (`-C target-cpu=skylake`) would otherwise look it up first
/// at the first refill's second stage.
#[cfg(all(
    feature = "thread_rng",
    target_os = "linux",
    target_env = "gnu",
    not(miri)
))]
pub(crate) fn look_up_cpuid_table() {
    let _ = glibc_table();
}

/// See above: nothing to look up here.
#[cfg(not(all(
    feature = "thread_rng",
    target_os = "linux",
    target_env = "gnu",
    not(miri)
)))]
pub(crate) fn look_up_cpuid_table() {}

/// Leaves 1 and 7 (subleaf 0) as glibc 2.33+ recorded them when the program
/// started (its dynamic loader runs CPUID for its own string functions), read
/// through [`glibc_table`]: the raw registers, not glibc's "active" view,
/// which its tunables may mask.
#[cfg(all(
    feature = "thread_rng",
    target_os = "linux",
    target_env = "gnu",
    not(miri)
))]
fn glibc_leaf(leaf: u32) -> Option<core::arch::x86_64::CpuidResult> {
    let index = match leaf {
        1 => 0, // CPUID_INDEX_1
        7 => 1, // CPUID_INDEX_7
        _ => return None,
    };
    let leaf_fn = glibc_table()?;
    // SAFETY: glibc's pure function, which answers a pointer to its table's
    // entry (or to an all-zero one past its end); the table is written before
    // `main` and never again.
    let regs = unsafe { leaf_fn(index).as_ref()? };
    Some(core::arch::x86_64::CpuidResult {
        eax: regs[0],
        ebx: regs[1],
        ecx: regs[2],
        edx: regs[3],
    })
}

#[cfg(not(all(
    feature = "thread_rng",
    target_os = "linux",
    target_env = "gnu",
    not(miri)
)))]
fn glibc_leaf(_: u32) -> Option<core::arch::x86_64::CpuidResult> {
    None
}

/// The first stage: AES-NI, RDRAND, and what the second needs of leaf 1.
#[cfg(not(any(miri, target_env = "sgx")))]
fn leaf1() -> u32 {
    #[allow(unused_unsafe, reason = "`__cpuid` is an unsafe fn on the MSRV (1.89)")]
    // SAFETY: CPUID exists on every x86_64 CPU and may be executed
    // everywhere but inside an SGX enclave, where it faults (excluded by
    // the `cfg` above); it reads no memory. Leaf 1 exists on every x86_64
    // CPU.
    let ecx = glibc_leaf(1)
        .unwrap_or_else(|| unsafe { core::arch::x86_64::__cpuid(1) })
        .ecx;
    [(25, AES), (30, RDRAND), (27, OSXSAVE_RAW), (28, AVX_RAW)]
        .into_iter()
        .filter(|&(n, _)| bit(ecx, n))
        .fold(0, |features, (_, flag)| features | flag)
}

/// The second stage, from leaf 1's bits in `first`: leaves 0 and 7, XGETBV.
#[cfg(not(any(miri, target_env = "sgx")))]
fn wide(first: u32) -> u32 {
    use core::arch::x86_64::{__cpuid, __cpuid_count};

    // glibc's table holds leaf 7 where the CPU has it (zeros otherwise).
    let leaf7 = glibc_leaf(7).unwrap_or_else(|| {
        #[allow(unused_unsafe, reason = "`__cpuid` is an unsafe fn on the MSRV (1.89)")]
        // SAFETY: as in `leaf1` (CPUID exists, no SGX enclave); leaf 0
        // always exists.
        let max_leaf = unsafe { __cpuid(0) }.eax;
        if max_leaf >= 7 {
            #[allow(
                unused_unsafe,
                reason = "`__cpuid_count` is an unsafe fn on the MSRV (1.89)"
            )]
            // SAFETY: as for leaf 0 (CPUID exists, no SGX enclave); leaf 7
            // exists (checked against the highest basic leaf just before, so
            // the answer is not another leaf's).
            unsafe {
                __cpuid_count(7, 0)
            }
        } else {
            no_leaf()
        }
    });

    // The OS saves the XMM and YMM state (XCR0 bits 1, 2), and the
    // opmask and ZMM state too (bits 5, 6, 7); XGETBV exists only when
    // the OS enabled XSAVE (OSXSAVE, leaf 1 ECX bit 27).
    let xcr0 = if first & OSXSAVE_RAW != 0 {
        // SAFETY: OSXSAVE is set (checked just before), so XGETBV is
        // enabled and XCR0 (register 0) exists; XGETBV reads no memory.
        unsafe { xgetbv0() }
    } else {
        0
    };
    let ymm_os = xcr0 & 0b110 == 0b110;
    let zmm_os = ymm_os && xcr0 & 0b1110_0000 == 0b1110_0000;
    let avx = first & AVX_RAW != 0 && ymm_os;
    let avx2 = avx && bit(leaf7.ebx, 5);

    let mut features = 0;
    let mut set = |on: bool, flag: u32| {
        if on {
            features |= flag;
        }
    };
    set(avx2, AVX2);
    set(avx2 && zmm_os && bit(leaf7.ebx, 16), AVX512F);
    set(avx2 && zmm_os && bit(leaf7.ebx, 31), AVX512VL);
    set(bit(leaf7.ecx, 9), VAES);
    set(bit(leaf7.ebx, 18), RDSEED);
    features
}

#[cfg(all(test, not(any(miri, target_env = "sgx"))))]
mod tests {
    use super::*;

    /// Each feature agrees with `std`'s detection, the leaf-1 ones asked
    /// first (the order of a thread's first use: the second stage runs
    /// later, over the first's cache).
    #[test]
    fn both_stages_agree_with_std() {
        assert_eq!(has(AES), std::arch::is_x86_feature_detected!("aes"));
        assert_eq!(has(RDRAND), std::arch::is_x86_feature_detected!("rdrand"));
        assert_eq!(has(AVX2), std::arch::is_x86_feature_detected!("avx2"));
        assert_eq!(has(AVX512F), std::arch::is_x86_feature_detected!("avx512f"));
        assert_eq!(
            has(AVX512VL),
            std::arch::is_x86_feature_detected!("avx512vl")
        );
        assert_eq!(has(RDSEED), std::arch::is_x86_feature_detected!("rdseed"));
        if has(AVX2) {
            assert_eq!(has(VAES), std::arch::is_x86_feature_detected!("vaes"));
        }
        assert!(has(0), "no bits: always");
    }

    /// Issue 46: a thread's first use looks glibc's CPUID table up, so that no
    /// later call (a signal handler's, maybe during a `fork()`) runs `dlsym`.
    /// In a process of its own (this binary re-run for this test alone), whose
    /// first call into the crate is the first use. It can fail only where the
    /// build's target features answer every probe of a first use: CI runs it
    /// there (`-C target-feature` of the CPU, `mutant cpuid-lookup-late.patch`).
    #[test]
    #[cfg(all(feature = "thread_rng", target_os = "linux", target_env = "gnu"))]
    fn first_use_looks_up_the_cpuid_table() {
        const NAME: &str = "backend::x86_cpu::tests::first_use_looks_up_the_cpuid_table";
        if std::env::var_os("RATCHET_RNG_FIRST_USE_CHILD").is_some() {
            assert!(LOOKUP.load(Relaxed).is_null(), "looked up before any call");
            let _ = crate::u64();
            assert!(
                !LOOKUP.load(Relaxed).is_null(),
                "not looked up by the first use"
            );
            return;
        }
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", NAME, "--test-threads=1"])
            .env("RATCHET_RNG_FIRST_USE_CHILD", "1")
            .output()
            .unwrap();
        let text = std::string::String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && text.contains("1 passed"),
            "{text}{}",
            std::string::String::from_utf8_lossy(&out.stderr)
        );
    }

    /// glibc 2.33+ exports its CPUID table, and the bits read there are
    /// CPUID's own (so that the stages run no CPUID where it exists).
    #[test]
    #[cfg(all(feature = "thread_rng", target_os = "linux", target_env = "gnu"))]
    fn glibc_table_is_found_and_agrees_with_cpuid() {
        use core::arch::x86_64::{__cpuid, __cpuid_count};
        unsafe extern "C" {
            fn gnu_get_libc_version() -> *const core::ffi::c_char;
        }
        // SAFETY: glibc's version string, static and NUL-terminated.
        let version = unsafe { core::ffi::CStr::from_ptr(gnu_get_libc_version()) };
        let version = version.to_str().unwrap();
        let minor: u32 = version
            .strip_prefix("2.")
            .and_then(|rest| rest.split('.').next()?.parse().ok())
            .unwrap_or_else(|| panic!("glibc version {version:?}"));
        let (Some(leaf1), Some(leaf7)) = (glibc_leaf(1), glibc_leaf(7)) else {
            assert!(minor < 33, "glibc {version} exports its table, not found");
            std::eprintln!("skipped: glibc {version} has no CPUID table (2.33+)");
            return;
        };
        #[allow(unused_unsafe, reason = "unsafe fns on the MSRV (1.89)")]
        // SAFETY: CPUID exists (x86_64, no SGX in a test); leaves 1 and 7 are
        // read as `wide` reads them (leaf 7 only below the highest leaf).
        let (cpu1, cpu7) = unsafe {
            let max = __cpuid(0).eax;
            (
                __cpuid(1),
                if max >= 7 {
                    __cpuid_count(7, 0)
                } else {
                    no_leaf()
                },
            )
        };
        let ecx1 = 1 << 25 | 1 << 27 | 1 << 28 | 1 << 30;
        let ebx7 = 1 << 5 | 1 << 16 | 1 << 18 | 1 << 31;
        assert_eq!(leaf1.ecx & ecx1, cpu1.ecx & ecx1, "leaf 1 ECX");
        assert_eq!(leaf7.ebx & ebx7, cpu7.ebx & ebx7, "leaf 7 EBX");
        assert_eq!(leaf7.ecx & 1 << 9, cpu7.ecx & 1 << 9, "leaf 7 ECX");
    }
}
