//! The x86_64 CPU features every backend probe and the thread-local
//! generator's RDSEED/RDRAND need, detected in ONE pass per process: CPUID
//! leaves 0, 1 and 7 (subleaf 0) once each, XGETBV once, cached as a bit mask
//! in one atomic.
//!
//! Why not `cpufeatures` here (STYLE.md says detect with it): each of its
//! probes runs its own CPUIDs, and CPUID traps to the hypervisor in a VM. On
//! an EPYC Zen 4 in a Firecracker VM one CPUID costs about 5 us, and the seven
//! probes of the first call (plus `std`'s detection for RDSEED) took 66-88 us
//! of a process's first `u64()`, 3.4x `rand::rng()`'s whole first call. This
//! pass executes three CPUIDs. The OS-support checks are the ones
//! `cpufeatures` makes: AVX and AVX2 need OSXSAVE and the OS's XMM and YMM
//! state in XCR0 (bits 1 and 2); AVX-512 also needs the opmask and ZMM state
//! (bits 5, 6 and 7).
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
/// Set in the cache once the pass has run.
const DETECTED: u32 = 1 << 31;

/// Whether the CPU (and OS) has every feature of `bits`, detected at run
/// time; always false where CPUID cannot be executed.
pub(crate) fn has(bits: u32) -> bool {
    features() & bits == bits
}

/// The detected features, from the cache or (first call) the pass.
fn features() -> u32 {
    static CACHE: AtomicU32 = AtomicU32::new(0);
    let cached = CACHE.load(Relaxed);
    if cached & DETECTED != 0 {
        return cached;
    }
    // Two threads may both run the pass; they store the same answer.
    let detected = detect() | DETECTED;
    CACHE.store(detected, Relaxed);
    detected
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
fn detect() -> u32 {
    0
}

#[cfg(not(any(miri, target_env = "sgx")))]
fn detect() -> u32 {
    use core::arch::x86_64::{__cpuid, __cpuid_count};

    const fn bit(word: u32, n: u32) -> bool {
        word & (1 << n) != 0
    }

    #[allow(unused_unsafe, reason = "`__cpuid` is an unsafe fn on the MSRV (1.89)")]
    // SAFETY: CPUID exists on every x86_64 CPU and may be executed
    // everywhere but inside an SGX enclave, where it faults (excluded by
    // the `cfg` above); it reads no memory. Leaf 0 always exists.
    let max_leaf = unsafe { __cpuid(0) }.eax;
    #[allow(unused_unsafe, reason = "`__cpuid` is an unsafe fn on the MSRV (1.89)")]
    // SAFETY: as for leaf 0 (CPUID exists, no SGX enclave); leaf 1 exists
    // on every x86_64 CPU.
    let leaf1 = unsafe { __cpuid(1) };
    let leaf7 = if max_leaf >= 7 {
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
    };

    // The OS saves the XMM and YMM state (XCR0 bits 1, 2), and the
    // opmask and ZMM state too (bits 5, 6, 7); XGETBV exists only when
    // the OS enabled XSAVE (OSXSAVE, leaf 1 ECX bit 27).
    let xcr0 = if bit(leaf1.ecx, 27) {
        // SAFETY: OSXSAVE is set (checked just before), so XGETBV is
        // enabled and XCR0 (register 0) exists; XGETBV reads no memory.
        unsafe { xgetbv0() }
    } else {
        0
    };
    let ymm_os = xcr0 & 0b110 == 0b110;
    let zmm_os = ymm_os && xcr0 & 0b1110_0000 == 0b1110_0000;
    let avx = bit(leaf1.ecx, 28) && ymm_os;
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
    set(bit(leaf1.ecx, 25), AES);
    set(bit(leaf7.ecx, 9), VAES);
    set(bit(leaf1.ecx, 30), RDRAND);
    set(bit(leaf7.ebx, 18), RDSEED);
    features
}
