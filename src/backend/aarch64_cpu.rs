//! Which aarch64 core this is, for the one choice that depends on the core
//! rather than on its features: the Keccak kernel (issue 48).
//!
//! The table ([`CORES`], [`keccak_for_core`]) is pure and compiled on every
//! target, so that `hazmat::keccak_for_aarch64_core` can be tested anywhere;
//! its rows and their sources are documented once, on that function. The
//! reading of MIDR_EL1 ([`midr`]) exists on aarch64 only:
//!
//! - Linux and Android: `mrs` of MIDR_EL1, which the kernel emulates for user
//!   space where `getauxval(AT_HWCAP)` has `HWCAP_CPUID` (Linux 4.11 and
//!   later; without it the instruction traps and the process dies of
//!   SIGILL), else the kernel's copy in
//!   `/sys/devices/system/cpu/cpu0/regs/identification/midr_el1` (hex text).
//! - Apple's systems (macOS, iOS, ...): no MIDR reaches user space, but the
//!   core is Apple's; [`midr`] answers a MIDR of Apple's implementer code with
//!   part 0 ("an Apple part"), which the table maps as every Apple part.
//! - Everything else (other OSes, bare metal, `no_std` without an OS): no
//!   MIDR, so the table's answer for an unknown core: the portable kernel,
//!   which is correct everywhere.
//!
//! The answer is read once per process and cached in one atomic: after the
//! first call, one load. The first call is async-signal-safe too
//! (`getauxval`, `mrs`, and on the fallback `open`/`read`/`close`, with
//! `errno` put back): no lock, no allocation, so it may run first in a
//! signal handler that reseeds the thread-local generator.

#![allow(
    dead_code,
    reason = "which parts are used depends on the target and the build switches"
)]

/// One row of the table: the MIDR_EL1 implementer code (bits 31:24) and part
/// number (bits 15:4) of a core, and the Keccak backend the sponge generators
/// take there when the core has the SHA3 extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Core {
    /// MIDR_EL1 bits 31:24.
    pub(crate) implementer: u8,
    /// MIDR_EL1 bits 15:4; `None`: every part of the implementer that has no
    /// row of its own.
    pub(crate) part: Option<u16>,
    /// The core's name, as the documentation's table gives it.
    pub(crate) name: &'static str,
    /// `"soft"` or `"aarch64_sha3"`.
    pub(crate) keccak: &'static str,
}

const ARM: u8 = 0x41;
const QUALCOMM: u8 = 0x51;
const APPLE: u8 = 0x61;
const MICROSOFT: u8 = 0x6D;
const AMPERE: u8 = 0xC0;

const SOFT: &str = "soft";
const SHA3: &str = "aarch64_sha3";

const fn row(implementer: u8, part: u16, name: &'static str, keccak: &'static str) -> Core {
    Core {
        implementer,
        part: Some(part),
        name,
        keccak,
    }
}

/// The table, in the order of `hazmat::keccak_for_aarch64_core`'s
/// documentation, where each row's source is given (a unit test checks that
/// the two agree). A core without a row gets `"soft"`.
pub(crate) const CORES: &[Core] = &[
    row(ARM, 0xD08, "Cortex-A72", SOFT),
    row(ARM, 0xD0B, "Cortex-A76", SOFT),
    row(ARM, 0xD0C, "Neoverse N1", SOFT),
    row(ARM, 0xD41, "Cortex-A78", SOFT),
    row(ARM, 0xD44, "Cortex-X1", SOFT),
    row(ARM, 0xD40, "Neoverse V1", SOFT),
    row(ARM, 0xD4F, "Neoverse V2", SOFT),
    row(ARM, 0xD49, "Neoverse N2", SOFT),
    row(ARM, 0xD84, "Neoverse V3", SOFT),
    row(ARM, 0xD8E, "Neoverse N3", SOFT),
    row(ARM, 0xD47, "Cortex-A710", SOFT),
    row(ARM, 0xD48, "Cortex-X2", SOFT),
    row(ARM, 0xD4E, "Cortex-X3", SOFT),
    row(ARM, 0xD81, "Cortex-A720", SOFT),
    row(ARM, 0xD82, "Cortex-X4", SOFT),
    row(MICROSOFT, 0xD49, "Azure Cobalt 100", SOFT),
    row(AMPERE, 0xAC3, "AmpereOne", SOFT),
    row(AMPERE, 0xAC4, "AmpereOne A", SOFT),
    row(AMPERE, 0xAC5, "AmpereOne B", SOFT),
    row(QUALCOMM, 0x001, "Oryon", SOFT),
    row(APPLE, 0x022, "Apple M1 Icestorm", SHA3),
    row(APPLE, 0x023, "Apple M1 Firestorm", SHA3),
    row(APPLE, 0x024, "Apple M1 Pro Icestorm", SHA3),
    row(APPLE, 0x025, "Apple M1 Pro Firestorm", SHA3),
    row(APPLE, 0x028, "Apple M1 Max Icestorm", SHA3),
    row(APPLE, 0x029, "Apple M1 Max Firestorm", SHA3),
    row(APPLE, 0x032, "Apple M2 Blizzard", SHA3),
    row(APPLE, 0x033, "Apple M2 Avalanche", SHA3),
    row(APPLE, 0x034, "Apple M2 Pro Blizzard", SHA3),
    row(APPLE, 0x035, "Apple M2 Pro Avalanche", SHA3),
    row(APPLE, 0x038, "Apple M2 Max Blizzard", SHA3),
    row(APPLE, 0x039, "Apple M2 Max Avalanche", SHA3),
    row(APPLE, 0x048, "Apple M3", SHA3),
    row(APPLE, 0x049, "Apple M3", SHA3),
    Core {
        implementer: APPLE,
        part: None,
        name: "any other Apple part",
        keccak: SHA3,
    },
];

/// MIDR_EL1's implementer code and part number.
const fn implementer_and_part(midr_el1: u64) -> (u8, u16) {
    (
        ((midr_el1 >> 24) & 0xFF) as u8,
        ((midr_el1 >> 4) & 0xFFF) as u16,
    )
}

/// The table's row for this MIDR_EL1: the row of its part, else its
/// implementer's row for every other part, else none.
pub(crate) fn core_of(midr_el1: u64) -> Option<&'static Core> {
    let (implementer, part) = implementer_and_part(midr_el1);
    let of_implementer = CORES.iter().filter(|core| core.implementer == implementer);
    of_implementer
        .clone()
        .find(|core| core.part == Some(part))
        .or_else(|| of_implementer.clone().find(|core| core.part.is_none()))
}

/// The Keccak backend for the core of this MIDR_EL1: `"aarch64_sha3"` only
/// where the core has the SHA3 extension and the table says it is worth
/// using; `"soft"` everywhere else, unknown cores included.
pub(crate) fn keccak_for_core(midr_el1: u64, has_sha3: bool) -> &'static str {
    match core_of(midr_el1) {
        Some(core) if has_sha3 => core.keccak,
        _ => SOFT,
    }
}

/// A MIDR_EL1 with Apple's implementer code, part 0 and the architecture
/// field of every ARMv8 core (0xF): what Apple's systems stand for, where
/// user space cannot read the register (see the module).
pub(crate) const APPLE_UNKNOWN_PART: u64 = (APPLE as u64) << 24 | 0xF << 16;

// ---------------------------------------------------------------------------
// Reading MIDR_EL1 (aarch64 only)
// ---------------------------------------------------------------------------

/// Set in [`CACHE`] once the register was read (or found unreadable).
#[cfg(target_arch = "aarch64")]
const READ: u64 = 1 << 63;
/// Set in [`CACHE`] with [`READ`] when there is a MIDR (in the low 32 bits).
#[cfg(target_arch = "aarch64")]
const PRESENT: u64 = 1 << 62;

/// [`READ`], [`PRESENT`] and the MIDR; 0 before the first read.
#[cfg(target_arch = "aarch64")]
static CACHE: core::sync::atomic::AtomicU64 = core::sync::atomic::AtomicU64::new(0);

/// Unit tests only: a MIDR that [`midr`] answers instead of the CPU's
/// (`Some(READ | PRESENT | midr)`, or `READ` alone for none), so that a test
/// can drive the real detection path with an Apple or a Neoverse MIDR. Set
/// only in a forked child, where no other test thread runs.
#[cfg(all(test, target_arch = "aarch64"))]
pub(crate) static TEST_OVERRIDE: core::sync::atomic::AtomicU64 =
    core::sync::atomic::AtomicU64::new(0);

/// Unit tests only, in a forked child: makes [`midr`] answer `midr` (`None`:
/// no MIDR) instead of the CPU's.
#[cfg(all(test, target_arch = "aarch64"))]
pub(crate) fn override_midr(midr: Option<u64>) {
    let forced = READ | midr.map_or(0, |midr| PRESENT | (midr & 0xFFFF_FFFF));
    TEST_OVERRIDE.store(forced, core::sync::atomic::Ordering::Relaxed);
}

/// This core's MIDR_EL1 (see the module for where it comes from), or `None`
/// where none can be read. Read once per process; after that, one load.
#[cfg(target_arch = "aarch64")]
#[inline]
pub(crate) fn midr() -> Option<u64> {
    use core::sync::atomic::Ordering::Relaxed;

    #[cfg(test)]
    {
        let forced = TEST_OVERRIDE.load(Relaxed);
        if forced & READ != 0 {
            return (forced & PRESENT != 0).then_some(forced & 0xFFFF_FFFF);
        }
    }
    let mut cached = CACHE.load(Relaxed);
    if cached & READ == 0 {
        cached = READ
            | match read_midr() {
                Some(midr) => PRESENT | (midr & 0xFFFF_FFFF),
                None => 0,
            };
        // Two threads may both read it; they store the same answer.
        CACHE.store(cached, Relaxed);
    }
    (cached & PRESENT != 0).then_some(cached & 0xFFFF_FFFF)
}

/// Whether the sponge generators' Keccak runs on the SHA3 kernel here: the
/// table's answer for this core (with the extension, which the caller's
/// probe found). No MIDR: the portable kernel.
#[cfg(target_arch = "aarch64")]
pub(crate) fn sha3_worth_using() -> bool {
    midr().is_some_and(|midr| keccak_for_core(midr, true) == SHA3)
}

/// Linux and Android: the emulated `mrs` where the kernel offers it, else
/// the kernel's text copy. Without the `libc` crate (`cfg` below) neither
/// can be asked.
#[cfg(all(
    target_arch = "aarch64",
    any(target_os = "linux", target_os = "android"),
    not(miri)
))]
#[cold]
fn read_midr() -> Option<u64> {
    /// `HWCAP_CPUID` of the kernel's `asm/hwcap.h` for arm64: reads of the
    /// ID registers, MIDR_EL1 included, are emulated for user space.
    const HWCAP_CPUID: libc::c_ulong = 1 << 11;
    // SAFETY: `getauxval` reads the auxiliary vector the kernel gave the
    // process; `AT_HWCAP` is always there on arm64 (0 if it were not).
    let hwcap = unsafe { libc::getauxval(libc::AT_HWCAP) };
    if hwcap & HWCAP_CPUID != 0 {
        let midr: u64;
        // SAFETY: with HWCAP_CPUID the kernel emulates this read from EL0
        // (it traps to the kernel, which writes the register's value);
        // it touches no memory and no flags.
        unsafe {
            core::arch::asm!(
                "mrs {midr}, MIDR_EL1",
                midr = out(reg) midr,
                options(nomem, nostack, preserves_flags)
            );
        }
        return Some(midr);
    }
    read_midr_file(c"/sys/devices/system/cpu/cpu0/regs/identification/midr_el1")
}

/// Apple's systems: an Apple core, part unknown (see the module).
#[cfg(all(target_arch = "aarch64", target_vendor = "apple"))]
#[cold]
fn read_midr() -> Option<u64> {
    Some(APPLE_UNKNOWN_PART)
}

/// Anywhere else (or under Miri, which runs no `mrs`): no MIDR.
#[cfg(all(
    target_arch = "aarch64",
    not(all(any(target_os = "linux", target_os = "android"), not(miri))),
    not(target_vendor = "apple")
))]
#[cold]
fn read_midr() -> Option<u64> {
    None
}

/// The MIDR in the kernel's text file at `path` (`0x` and 16 hex digits, a
/// newline), read with the bare system calls: no allocation, and `errno` as
/// it was (this may run in a signal handler). `None` when it cannot be opened
/// or read, or does not parse.
#[cfg(all(
    any(target_os = "linux", target_os = "android"),
    not(miri),
    any(target_arch = "aarch64", test)
))]
pub(crate) fn read_midr_file(path: &core::ffi::CStr) -> Option<u64> {
    let errno = errno_location();
    // SAFETY: `errno_location` answers this thread's `errno`, which lives as
    // long as the thread.
    let saved = unsafe { *errno };
    let mut text = [0u8; 32];
    let mut len = 0;
    // SAFETY: a NUL-terminated path; the descriptor is closed below.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd >= 0 {
        while len < text.len() {
            let rest = &mut text[len..];
            // SAFETY: `rest` is writable for `rest.len()` bytes.
            let got = unsafe { libc::read(fd, rest.as_mut_ptr().cast(), rest.len()) };
            match usize::try_from(got) {
                Ok(0) => break,
                Ok(n) => len += n,
                // SAFETY: as above.
                Err(_) if unsafe { *errno } == libc::EINTR => {}
                Err(_) => {
                    len = 0;
                    break;
                }
            }
        }
        // SAFETY: `fd` is the descriptor opened above, closed once.
        unsafe { libc::close(fd) };
    }
    // SAFETY: as above.
    unsafe { *errno = saved };
    parse_midr(&text[..len])
}

/// This thread's `errno`.
#[cfg(all(target_os = "linux", not(miri), any(target_arch = "aarch64", test)))]
fn errno_location() -> *mut libc::c_int {
    // SAFETY: glibc's and musl's accessor, valid on every thread.
    unsafe { libc::__errno_location() }
}

/// This thread's `errno`.
#[cfg(all(target_os = "android", not(miri), any(target_arch = "aarch64", test)))]
fn errno_location() -> *mut libc::c_int {
    // SAFETY: Bionic's accessor, valid on every thread.
    unsafe { libc::__errno() }
}

/// The kernel's text form of MIDR_EL1: optional blanks, `0x`, hex digits
/// (at most 16), optional blanks or a newline.
pub(crate) fn parse_midr(text: &[u8]) -> Option<u64> {
    let text = core::str::from_utf8(text).ok()?.trim();
    let digits = text.strip_prefix("0x")?;
    if digits.is_empty() || digits.len() > 16 {
        return None;
    }
    u64::from_str_radix(digits, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::string::String;
    use std::vec::Vec;

    fn midr(implementer: u8, part: u16) -> u64 {
        // Variant 3, architecture 0xF, revision 1: fields the table ignores.
        u64::from(implementer) << 24 | 0x3 << 20 | 0xF << 16 | u64::from(part) << 4 | 0x1
    }

    /// Every row is found from its MIDR and answers its kernel with the
    /// extension, and `"soft"` without.
    #[test]
    fn every_row_gives_its_kernel_and_never_sha3_without_the_extension() {
        for core in CORES {
            let part = core.part.unwrap_or(0xFFF);
            let id = midr(core.implementer, part);
            assert_eq!(core_of(id), Some(core), "{}", core.name);
            assert_eq!(keccak_for_core(id, true), core.keccak, "{}", core.name);
            assert_eq!(
                keccak_for_core(id, false),
                SOFT,
                "{} without SHA3",
                core.name
            );
            assert!([SOFT, SHA3].contains(&core.keccak), "{}", core.name);
        }
    }

    /// The required answers.
    #[test]
    fn neoverse_v1_v2_n2_v3_get_soft_and_apple_m1_m2_get_sha3() {
        for part in [0xD40, 0xD4F, 0xD49, 0xD84] {
            assert_eq!(keccak_for_core(midr(ARM, part), true), SOFT, "{part:#x}");
        }
        for part in [0x022, 0x023, 0x024, 0x025, 0x028, 0x029] {
            assert_eq!(
                keccak_for_core(midr(APPLE, part), true),
                SHA3,
                "M1 {part:#x}"
            );
        }
        for part in [0x032, 0x033, 0x034, 0x035, 0x038, 0x039] {
            assert_eq!(
                keccak_for_core(midr(APPLE, part), true),
                SHA3,
                "M2 {part:#x}"
            );
        }
        // QEMU's Neoverse N1 and Cortex-A72, as qemu-aarch64 reads them.
        assert_eq!(keccak_for_core(0x414F_D0C1, true), SOFT);
        assert_eq!(keccak_for_core(0x410F_D083, true), SOFT);
    }

    /// Unknown cores get the portable kernel: an unlisted Arm part, another
    /// implementer's part, QEMU's `max` CPU (implementer 0, part 'Q'), no
    /// MIDR at all (0), and the bits outside implementer and part are ignored.
    #[test]
    fn unknown_cores_get_soft_and_other_fields_are_ignored() {
        for id in [
            midr(ARM, 0xD07),
            midr(ARM, 0x022),
            midr(0x46, 0x001),
            midr(0x4E, 0x004),
            0x000F_0510,
            0,
            0xFFFF_FFFF_00FF_FFFF,
        ] {
            assert_eq!(core_of(id), None, "{id:#x}");
            assert_eq!(keccak_for_core(id, true), SOFT, "{id:#x}");
        }
        // An Apple part with no row of its own (an M4, an A-series core).
        assert_eq!(keccak_for_core(midr(APPLE, 0x052), true), SHA3);
        assert_eq!(keccak_for_core(APPLE_UNKNOWN_PART, true), SHA3);
        assert_eq!(keccak_for_core(APPLE_UNKNOWN_PART, false), SOFT);
        // The upper 32 bits (RES0) and variant/revision do not matter.
        let v2 = midr(ARM, 0xD4F);
        assert_eq!(keccak_for_core(v2 | 0xFFFF_FFFF << 32, true), SOFT);
        let m1 = midr(APPLE, 0x023) & !0x00F0_000F;
        assert_eq!(keccak_for_core(m1 | 0xFF << 32, true), SHA3);
    }

    /// Each (implementer, part) has one row.
    #[test]
    fn rows_are_unique() {
        let mut keys: Vec<(u8, Option<u16>)> =
            CORES.iter().map(|c| (c.implementer, c.part)).collect();
        keys.sort_unstable();
        let n = keys.len();
        keys.dedup();
        assert_eq!(keys.len(), n);
    }

    /// The documented table (`hazmat::keccak_for_aarch64_core`, the one place
    /// that gives each row's source) has exactly these rows, in this order.
    #[test]
    fn documented_table_matches_the_code() {
        let source = include_str!("../hazmat.rs");
        let documented: Vec<String> = source
            .lines()
            .map(str::trim)
            .filter_map(|l| l.strip_prefix("/// | `0x"))
            .map(|row| {
                let cells: Vec<&str> = row.split('|').map(str::trim).collect();
                std::format!("0x{} {} {} {}", cells[0], cells[1], cells[2], cells[3])
            })
            .collect();
        let coded: Vec<String> = CORES
            .iter()
            .map(|c| {
                let part = c
                    .part
                    .map_or(String::from("any other"), |p| std::format!("`{p:#05X}`"));
                std::format!("{:02X}` {part} {} `{}`", c.implementer, c.name, c.keccak)
            })
            .map(|s| std::format!("0x{s}"))
            .collect();
        assert_eq!(documented, coded);
    }

    #[test]
    fn parses_the_kernels_text() {
        assert_eq!(parse_midr(b"0x00000000413fd0c1\n"), Some(0x413F_D0C1));
        assert_eq!(parse_midr(b"0x410fd083"), Some(0x410F_D083));
        for bad in [
            &b""[..],
            b"\n",
            b"0x",
            b"413fd0c1",
            b"0xzz",
            b"0x00000000000000000",
        ] {
            assert_eq!(parse_midr(bad), None, "{bad:?}");
        }
    }

    /// The file fallback reads the kernel's format from a file; a missing
    /// file is no MIDR, and leaves `errno` as it was.
    #[test]
    #[cfg(all(any(target_os = "linux", target_os = "android"), not(miri)))]
    fn reads_the_kernels_file_and_keeps_errno() {
        let dir = std::env::temp_dir().join(std::format!("ratchet-midr-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("midr_el1");
        std::fs::write(&file, "0x00000000610f0230\n").unwrap();
        let path = std::ffi::CString::new(file.to_str().unwrap()).unwrap();
        assert_eq!(read_midr_file(&path), Some(0x610F_0230));
        let missing = std::ffi::CString::new(dir.join("absent").to_str().unwrap()).unwrap();
        // SAFETY: this thread's errno.
        unsafe { *errno_location() = 1234 };
        assert_eq!(read_midr_file(&missing), None);
        // SAFETY: as above.
        assert_eq!(unsafe { *errno_location() }, 1234);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
