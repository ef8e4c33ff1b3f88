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

use super::Refusal;

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

/// What one seqlock read of the page saw.
pub(super) enum View {
    /// Even and unchanged `seq_count`, the magic and the generation-counter
    /// flag in place.
    Valid(Fields),
    /// A consistent read of a page that is not a VMClock page with the
    /// generation counter.
    Invalid,
    /// `seq_count` odd, or changed under the read, through [`RETRIES`] reads:
    /// the hypervisor is (or was stuck) updating it.
    Torn,
}

/// [`read`] of the page whose watched word is `word`.
pub(super) fn read_watched(word: *const AtomicUsize) -> View {
    read(page_of(word))
}

/// A seqlock read of the page: [`View::Valid`] only for an even and unchanged
/// `seq_count` with the magic and the generation-counter flag in place.
///
/// Every load is `Relaxed` (the page is read-only memory, and
/// `core::sync::atomic` promises read-only memory only to `Relaxed` loads);
/// the two `Acquire` fences give the seqlock its order: the fields are read
/// after the first `seq_count` load and before the second.
fn read(page: *const u8) -> View {
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
        let before = seq.load(Ordering::Relaxed);
        if u32::from_le(before) & 1 != 0 {
            core::hint::spin_loop();
            continue;
        }
        fence(Ordering::Acquire);
        let magic = u32::from_le(magic.load(Ordering::Relaxed));
        let flags = u32::from_le(flags.load(Ordering::Relaxed));
        let generation_word = generation.load(Ordering::Relaxed);
        fence(Ordering::Acquire);
        if seq.load(Ordering::Relaxed) != before {
            continue;
        }
        return if magic == MAGIC && flags & FLAG_GENERATION_COUNTER != 0 {
            View::Valid(Fields { generation_word })
        } else {
            View::Invalid
        };
    }
    View::Torn
}

/// The major number of a device number, in glibc's and the kernel's encoding
/// (`gnu_dev_major`): written out, as `libc::major` is an `unsafe fn` in the
/// oldest `libc` this crate accepts and a safe one in later releases.
#[allow(
    clippy::useless_conversion,
    reason = "`dev_t` is not 64 bits everywhere"
)]
fn major(dev: libc::dev_t) -> u64 {
    let dev = u64::from(dev);
    ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff)
}

/// The misc character devices' major number (`MISC_MAJOR`): the VMClock
/// driver registers `/dev/vmclock0` as one (a dynamic minor).
const MISC_MAJOR: u64 = 10;

/// What may stand at the path [`attach`] opens.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Accept {
    /// The device only: a misc character device that reports no size.
    Device,
    /// The device, or a regular file of at least [`ABI_BYTES`] (a test's
    /// fake page).
    DeviceOrFile,
}

/// What [`attach`] mapped.
pub(super) struct Attached {
    /// The word the fast path compares.
    pub(super) word: *const AtomicUsize,
    /// Whether the probe's seqlock read was consistent (else the page is
    /// watched unsettled: untrusted until a read settles it).
    pub(super) settled: bool,
}

/// Whether the file `fd` (just opened) may be the VMClock device.
fn check_file(fd: libc::c_int, accept: Accept) -> Result<(), Refusal> {
    // SAFETY: `stat` is plain data, filled by `fstat` on our descriptor.
    let mut stat: libc::stat = unsafe { core::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::fstat(fd, &raw mut stat) } != 0 {
        return Err(Refusal::CannotOpen);
    }
    match stat.st_mode & libc::S_IFMT {
        libc::S_IFCHR => {
            // The device reports no size; `/dev/null`, `/dev/zero`, a tty and
            // the like are other majors.
            if major(stat.st_rdev) == MISC_MAJOR && stat.st_size == 0 {
                Ok(())
            } else {
                Err(Refusal::WrongDevice)
            }
        }
        libc::S_IFREG if accept == Accept::DeviceOrFile => {
            // Shorter than the structure would fault when read past its end.
            if usize::try_from(stat.st_size).unwrap_or(0) >= ABI_BYTES {
                Ok(())
            } else {
                Err(Refusal::NotVmClock)
            }
        }
        _ => Err(Refusal::NotCharDevice),
    }
}

/// Maps the VMClock page at `path` read-only (a whole system page, as the
/// driver's `mmap` gives) and returns the word the fast path compares. The
/// file is opened without blocking (a FIFO), without becoming a controlling
/// terminal, and `fstat`ed before it is mapped: only the misc character
/// device (or, for [`Accept::DeviceOrFile`], a regular file) is. The page is
/// kept if a seqlock read finds it valid, or finds no consistent view (an
/// update in progress: the caller watches it unsettled); the file is closed
/// either way.
pub(super) fn attach(path: &CStr, accept: Accept) -> Result<Attached, Refusal> {
    let flags = libc::O_RDONLY | libc::O_CLOEXEC | libc::O_NONBLOCK | libc::O_NOCTTY;
    // SAFETY: a NUL-terminated path; the descriptor is closed below.
    let fd = unsafe { libc::open(path.as_ptr(), flags) };
    if fd < 0 {
        return Err(Refusal::from_errno(errno()));
    }
    let checked = check_file(fd, accept);
    if let Err(refusal) = checked {
        // SAFETY: our descriptor.
        unsafe { libc::close(fd) };
        return Err(refusal);
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
    let mapped = if page == libc::MAP_FAILED {
        Err(Refusal::from_map_errno(errno()))
    } else {
        Ok(page.cast::<u8>().cast_const())
    };
    // SAFETY: our descriptor; the mapping does not need it open.
    unsafe { libc::close(fd) };
    let page = mapped?;
    // SAFETY: the mapping just made, a whole page (>= 4096 >= `ABI_BYTES`),
    // backed by at least `ABI_BYTES` (the device's page, or a file checked
    // above).
    let size = unsafe { le32(page, SIZE_AT) } as usize;
    let settled = match read(page) {
        View::Valid(_) if size >= ABI_BYTES => Some(true),
        View::Torn => Some(false),
        View::Valid(_) | View::Invalid => None,
    };
    let Some(settled) = settled else {
        // SAFETY: the mapping made above, never handed out.
        unsafe { libc::munmap(page.cast_mut().cast(), len) };
        return Err(Refusal::NotVmClock);
    };
    Ok(Attached {
        word: page.wrapping_add(GENERATION_AT).cast::<AtomicUsize>(),
        settled,
    })
}

/// This thread's `errno`.
fn errno() -> libc::c_int {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
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

/// The seqlock read over a page in memory (also under Miri, which runs what
/// it can of this module: the relaxed loads and fences, not the mapping).
#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;

    /// A page-aligned stand-in for the device's page.
    #[repr(C, align(4096))]
    struct Page(core::cell::UnsafeCell<[u8; 4096]>);

    // SAFETY: every access after construction is atomic (through `field`).
    unsafe impl Sync for Page {}

    impl Page {
        fn new() -> Self {
            let page = Self(core::cell::UnsafeCell::new([0; 4096]));
            page.u32_at(MAGIC_AT)
                .store(MAGIC.to_le(), Ordering::Relaxed);
            page.u32_at(SIZE_AT)
                .store(4096u32.to_le(), Ordering::Relaxed);
            page.u32_at(FLAGS_AT)
                .store(FLAG_GENERATION_COUNTER.to_le(), Ordering::Relaxed);
            page
        }

        fn start(&self) -> *const u8 {
            self.0.get().cast::<u8>().cast_const()
        }

        fn u32_at(&self, at: usize) -> &AtomicU32 {
            // SAFETY: in the page, aligned; alive as long as `self`.
            unsafe { &*self.start().add(at).cast::<AtomicU32>() }
        }

        fn generation(&self) -> &AtomicUsize {
            // SAFETY: as above.
            unsafe { &*self.start().add(GENERATION_AT).cast::<AtomicUsize>() }
        }

        /// A hypervisor's update: `seq_count` odd, the counter, even again.
        fn update(&self, generation: usize) {
            let seq = self.u32_at(SEQ_AT);
            let odd = u32::from_le(seq.load(Ordering::Relaxed)).wrapping_add(1);
            seq.store(odd.to_le(), Ordering::Relaxed);
            fence(Ordering::Release);
            self.generation().store(generation, Ordering::Relaxed);
            seq.store(odd.wrapping_add(1).to_le(), Ordering::Release);
        }
    }

    #[test]
    fn valid_invalid_and_torn_views() {
        let page = Page::new();
        page.update(7);
        assert!(matches!(read(page.start()), View::Valid(f) if f.generation_word == 7));
        // Odd: being updated, through every retry.
        let seq = page.u32_at(SEQ_AT);
        seq.store(3u32.to_le(), Ordering::Relaxed);
        assert!(matches!(read(page.start()), View::Torn));
        seq.store(4u32.to_le(), Ordering::Relaxed);
        page.u32_at(FLAGS_AT).store(0, Ordering::Relaxed);
        assert!(matches!(read(page.start()), View::Invalid));
        page.u32_at(FLAGS_AT)
            .store(FLAG_GENERATION_COUNTER.to_le(), Ordering::Relaxed);
        page.u32_at(MAGIC_AT).store(0, Ordering::Relaxed);
        assert!(matches!(read(page.start()), View::Invalid));
    }

    /// A writer updating the page while a reader reads it: every valid view
    /// holds a counter the writer wrote, never going back.
    #[test]
    fn reads_racing_an_update_see_written_counters_in_order() {
        let updates = if cfg!(miri) { 20 } else { 2000 };
        let page = Page::new();
        page.update(1);
        let done = AtomicBool::new(false);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                for generation in 2..=updates {
                    page.update(generation);
                }
                done.store(true, Ordering::Relaxed);
            });
            let mut last = 1;
            while !done.load(Ordering::Relaxed) {
                if let View::Valid(fields) = read(page.start()) {
                    let seen = fields.generation_word;
                    assert!((last..=updates).contains(&seen), "{seen} after {last}");
                    last = seen;
                }
            }
        });
        assert!(matches!(read(page.start()), View::Valid(f) if f.generation_word == updates));
    }
}
