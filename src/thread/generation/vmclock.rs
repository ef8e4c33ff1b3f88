//! The VMClock device (Linux 6.13+, `drivers/ptp/ptp_vmclock.c`): a page the
//! hypervisor shares with the guest, which `/dev/vmclock0` maps read-only into
//! a process. Layout from the UAPI header `linux/vmclock-abi.h` (all fields
//! little-endian); what is read here:
//!
//! | offset | field |
//! |---|---|
//! | 0 | `magic` (u32, `0x4b4c4356`, "VCLK") |
//! | 4 | `size` (u32) |
//! | 8 | `version` (u16), `counter_id`, `time_type` |
//! | 12 | `seq_count` (u32; odd while the hypervisor updates the fields below) |
//! | 16 | `disruption_marker` (u64) |
//! | 24 | `flags` (u64; bit 8: `VMCLOCK_FLAG_VM_GEN_COUNTER_PRESENT`) |
//! | 40 | `counter_value` (u64) |
//! | 72 | `time_sec`, 80 `time_frac_sec` (u64 each) |
//! | 104 | `vm_generation_counter` (u64; a new, non-repeating value on every snapshot restore) |
//!
//! The fast path reads the word at offset 104 (8 bytes on 64-bit systems, the
//! low 4 bytes on 32-bit ones: either is one aligned load, which cannot tear)
//! and compares it for equality, so its byte order does not matter. Everything
//! else is read here, under the seqlock.
//!
//! The kernel's own generation counter (vDSO `getrandom`'s) is not ABI and is
//! not read.

use core::ffi::CStr;
use core::sync::atomic::{AtomicU32, AtomicUsize, Ordering, fence};

const MAGIC: u32 = 0x4b4c_4356;
const MAGIC_AT: usize = 0;
const SIZE_AT: usize = 4;
const SEQ_AT: usize = 12;
const FLAGS_AT: usize = 24;
const GENERATION_AT: usize = 104;
/// The structure's length up to and including `vm_generation_counter`.
const ABI_BYTES: usize = 112;
const FLAG_GENERATION_COUNTER: u32 = 1 << 8;

/// How many times a read retries while the hypervisor is updating the page.
const RETRIES: usize = 16;

/// What a consistent read found.
pub(super) struct Fields {
    /// The raw word the fast path compares.
    pub(super) generation_word: usize,
}

/// The page's atomic of type `A` at offset `at`.
///
/// # Safety
/// `page` is a mapping of at least [`ABI_BYTES`] readable bytes that is never
/// unmapped (checked by [`attach`]); `at + size_of::<A>() <= ABI_BYTES`, and
/// `at` is a multiple of `A`'s alignment.
unsafe fn field<A>(page: *const u8, at: usize) -> &'static A {
    // SAFETY: the caller's guarantee; atomics, as the hypervisor may write the
    // page at any time.
    unsafe { &*page.add(at).cast::<A>() }
}

/// The little-endian `u32` at `at` of the page (safety as [`field`]).
unsafe fn le32(page: *const u8, at: usize) -> u32 {
    // SAFETY: the caller's guarantee.
    u32::from_le(unsafe { field::<AtomicU32>(page, at) }.load(Ordering::Relaxed))
}

/// The start of the page whose watched word is `word` (what [`attach`]
/// returned).
fn page_of(word: *const AtomicUsize) -> *const u8 {
    word.cast::<u8>().wrapping_sub(GENERATION_AT)
}

/// [`read`] of the page whose watched word is `word`.
pub(super) fn read_watched(word: *const AtomicUsize) -> Option<Fields> {
    read(page_of(word))
}

/// A consistent, valid view of the page: `seq_count` even and the same before
/// and after, the magic and the generation-counter flag in place. `None` if the
/// page is invalid, or still being updated after [`RETRIES`] reads (then the
/// caller reseeds rather than trusts it).
fn read(page: *const u8) -> Option<Fields> {
    // SAFETY: `page` was checked by `attach` (a mapping of a whole page, at
    // least `ABI_BYTES`, never unmapped); each offset is inside the structure
    // and aligned for its type.
    let (seq, magic, flags, generation) = unsafe {
        (
            field::<AtomicU32>(page, SEQ_AT),
            field::<AtomicU32>(page, MAGIC_AT),
            field::<AtomicU32>(page, FLAGS_AT),
            field::<AtomicUsize>(page, GENERATION_AT),
        )
    };
    for _ in 0..RETRIES {
        let before = seq.load(Ordering::Acquire);
        if u32::from_le(before) & 1 != 0 {
            core::hint::spin_loop();
            continue;
        }
        let magic = u32::from_le(magic.load(Ordering::Relaxed));
        let flags = u32::from_le(flags.load(Ordering::Relaxed));
        let generation_word = generation.load(Ordering::Relaxed);
        fence(Ordering::Acquire);
        if seq.load(Ordering::Relaxed) != before {
            continue;
        }
        return (magic == MAGIC && flags & FLAG_GENERATION_COUNTER != 0)
            .then_some(Fields { generation_word });
    }
    None
}

/// Maps the VMClock page at `path` read-only (a whole system page, as the
/// driver's `mmap` gives) and returns the word the fast path compares, if it
/// is a valid VMClock page with the generation counter; the file is closed
/// either way, the mapping kept only on success.
pub(super) fn attach(path: &CStr) -> Result<*const AtomicUsize, &'static str> {
    // SAFETY: a NUL-terminated path; the descriptor is closed below.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err("cannot open the VMClock device");
    }
    // A regular file (a test's fake page) shorter than the structure would
    // fault when read past its end; the device itself reports no size.
    // SAFETY: `stat` is plain data, filled by `fstat` on our descriptor.
    let mut stat: libc::stat = unsafe { core::mem::zeroed() };
    // SAFETY: as above.
    let short = unsafe { libc::fstat(fd, &raw mut stat) } != 0
        || (stat.st_mode & libc::S_IFMT == libc::S_IFREG
            && usize::try_from(stat.st_size).unwrap_or(0) < ABI_BYTES);
    if short {
        // SAFETY: our descriptor.
        unsafe { libc::close(fd) };
        return Err("not a VMClock page: too short");
    }
    let len = crate::thread::pages::page_bytes();
    // SAFETY: a new shared read-only mapping of the file at an address the
    // kernel chooses; failure is `MAP_FAILED`.
    let page = unsafe {
        libc::mmap(
            core::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            fd,
            0,
        )
    };
    // SAFETY: our descriptor; the mapping does not need it open.
    unsafe { libc::close(fd) };
    if page == libc::MAP_FAILED {
        return Err("cannot map the VMClock device");
    }
    let page = page.cast::<u8>().cast_const();
    // SAFETY: the mapping just made, a whole page (>= 4096 >= `ABI_BYTES`),
    // backed by at least `ABI_BYTES` (the device's page, or a file checked
    // above).
    let size = unsafe { le32(page, SIZE_AT) } as usize;
    if read(page).is_none() || size < ABI_BYTES {
        // SAFETY: the mapping made above, never handed out.
        unsafe { libc::munmap(page.cast_mut().cast(), len) };
        return Err("not a VMClock page with a VM generation counter");
    }
    Ok(page.wrapping_add(GENERATION_AT).cast::<AtomicUsize>())
}

/// Copies the page's changing fields (48 bytes, raw) into `out` for
/// [`super::clone_material`]: disruption marker, flags, counter value, time
/// (seconds and fraction), generation counter, 8 bytes each. Not
/// `seq_count` (offset 12): it only counts the hypervisor's updates and tells
/// clones apart no better than the fields it guards. Not a consistent read (it
/// needs none: the bytes are only hashed).
pub(super) fn material(word: *const AtomicUsize, out: &mut [u8]) {
    let page = page_of(word);
    let offsets = [16, 20, 24, 28, 40, 44, 72, 76, 80, 84, 104, 108];
    for (chunk, at) in out.chunks_exact_mut(4).zip(offsets) {
        // SAFETY: `word` is the watched word, so `page` is the start of a
        // mapping checked by `attach`; every offset is below `ABI_BYTES`.
        chunk.copy_from_slice(&unsafe { le32(page, at) }.to_le_bytes());
    }
}
