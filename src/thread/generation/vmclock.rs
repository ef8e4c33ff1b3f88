//! The VMClock device (Linux 6.13+, `drivers/ptp/ptp_vmclock.c`): a page the
//! hypervisor shares with the guest, mapped read-only from `/dev/vmclock0`.
//! Layout from `linux/vmclock-abi.h` (little-endian); what is read here:
//!
//! | offset | field |
//! |---|---|
//! | 0 | `magic` (u32, `0x4b4c4356`, "VCLK"), 4 `size` (u32) |
//! | 12 | `seq_count` (u32; odd while the hypervisor updates the fields below) |
//! | 16 | `disruption_marker`, 24 `flags` (bit 8: VM generation counter) |
//! | 40 | `counter_value`, 72 `time_sec`, 80 `time_frac_sec` |
//! | 104 | `vm_generation_counter` (never repeats; moves at every restore) |
//!
//! The fields from offset 16 are u64. The fast path reads the word at 104 (its
//! low 4 bytes on 32-bit systems: one aligned load, which cannot tear) and
//! compares it for equality, so its byte order does not matter; the rest is
//! read here, under the seqlock. (The vDSO's generation counter is not ABI.)

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

/// The page's atomic of type `A` at offset `at`.
///
/// # Safety
/// `page` is a mapping of at least [`ABI_BYTES`] readable bytes that is never
/// unmapped (checked by [`attach`]); `at + size_of::<A>() <= ABI_BYTES`, and
/// `at` is a multiple of `A`'s alignment.
unsafe fn field<A>(page: *const u8, at: usize) -> &'static A {
    // SAFETY: the caller's guarantee (atomics: the hypervisor writes the page).
    unsafe { &*page.add(at).cast::<A>() }
}

/// The little-endian `u32` at `at` of the page (safety as [`field`]).
unsafe fn le32(page: *const u8, at: usize) -> u32 {
    // SAFETY: the caller's guarantee.
    u32::from_le(unsafe { field::<AtomicU32>(page, at) }.load(Ordering::Relaxed))
}

/// The start of the page whose watched word (from [`attach`]) is `word`.
fn page_of(word: *const AtomicUsize) -> *const u8 {
    word.cast::<u8>().wrapping_sub(GENERATION_AT)
}

/// What one seqlock read of the page saw.
pub(super) enum View {
    /// `seq_count` even and unchanged; the magic and the counter flag set: the
    /// raw word the fast path compares.
    Valid(usize),
    /// A consistent read of no VMClock page with the generation counter.
    Invalid,
    /// `seq_count` odd, or changed under the read, through [`RETRIES`] reads:
    /// the hypervisor is (or was stuck) updating it.
    Torn,
}

/// [`read`] of the page whose watched word is `word`.
pub(super) fn read_watched(word: *const AtomicUsize) -> View {
    read(page_of(word))
}

/// A seqlock read of the page ([`View`]). All loads are `Relaxed` (the only
/// ones `core::sync::atomic` allows on read-only memory); two `Acquire` fences
/// order the field loads between the two `seq_count` loads.
fn read(page: *const u8) -> View {
    // SAFETY: `page` was checked by `attach` (at least `ABI_BYTES`, never
    // unmapped); each offset is inside the structure and aligned for its type.
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
            View::Valid(generation_word)
        } else {
            View::Invalid
        };
    }
    View::Torn
}

/// The major of a device number (`gnu_dev_major`), written out because
/// `libc::major` is an `unsafe fn` in the oldest `libc` this crate accepts.
#[allow(
    clippy::useless_conversion,
    reason = "`dev_t` is not 64 bits everywhere"
)]
fn major(dev: libc::dev_t) -> u64 {
    let dev = u64::from(dev);
    ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff)
}

/// The misc devices' major (`MISC_MAJOR`), which `/dev/vmclock0` has.
const MISC_MAJOR: u64 = 10;

/// What may stand at the path [`attach`] opens.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Accept {
    /// The device only: a misc character device that reports no size.
    Device,
    /// The device, or a regular file of at least [`ABI_BYTES`] (a test's page).
    DeviceOrFile,
}

/// What [`attach`] mapped.
pub(super) struct Attached {
    /// The word the fast path compares.
    pub(super) word: *const AtomicUsize,
    /// Whether the probe's seqlock read was consistent (else: unsettled).
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
            // The device has no size; `/dev/null` and such are other majors.
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

/// Maps the page at `path` read-only (a whole page, as the driver's `mmap`
/// gives) after [`check_file`], opening it without blocking (a FIFO) or
/// becoming its controlling terminal. Kept if its read is valid or torn (an
/// update in progress: the caller watches it unsettled); the file is closed
/// either way.
pub(super) fn attach(path: &CStr, accept: Accept) -> Result<Attached, Refusal> {
    let flags = libc::O_RDONLY | libc::O_CLOEXEC | libc::O_NONBLOCK | libc::O_NOCTTY;
    // SAFETY: a NUL-terminated path; the descriptor is closed below.
    let fd = unsafe { libc::open(path.as_ptr(), flags) };
    if fd < 0 {
        return Err(Refusal::after_open());
    }
    if let Err(refusal) = check_file(fd, accept) {
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
        Err(Refusal::after_map())
    } else {
        Ok(page.cast::<u8>().cast_const())
    };
    // SAFETY: our descriptor; the mapping does not need it open.
    unsafe { libc::close(fd) };
    let page = mapped?;
    // SAFETY: the mapping just made, a whole page (> `ABI_BYTES`), backed by
    // at least `ABI_BYTES` (the device's page, or a file checked above).
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

impl Refusal {
    /// The refusal an `open` that just failed means (this thread's `errno`).
    fn after_open() -> Self {
        match errno() {
            libc::ENOENT | libc::ENODEV | libc::ENXIO | libc::ENOTDIR => Self::Absent,
            libc::EACCES | libc::EPERM => Self::PermissionDenied,
            libc::ELOOP => Self::NotCharDevice,
            _ => Self::CannotOpen,
        }
    }

    /// The refusal an `mmap` that just failed means (this thread's `errno`).
    fn after_map() -> Self {
        match errno() {
            libc::ENOMEM | libc::EAGAIN | libc::EINTR => Self::CannotOpen,
            _ => Self::CannotMap,
        }
    }
}

/// Copies the table's fields from offset 16 (48 bytes, raw; not `seq_count`,
/// which only counts updates) into `out` for [`super::clone_material`]. No
/// seqlock: the bytes are only hashed.
pub(super) fn material(word: *const AtomicUsize, out: &mut [u8]) {
    let page = page_of(word);
    let offsets = [16, 20, 24, 28, 40, 44, 72, 76, 80, 84, 104, 108];
    for (chunk, at) in out.chunks_exact_mut(4).zip(offsets) {
        // SAFETY: `word` is the watched word, so `page` is the start of a
        // mapping checked by `attach`; every offset is below `ABI_BYTES`.
        chunk.copy_from_slice(&unsafe { le32(page, at) }.to_le_bytes());
    }
}

/// The seqlock read over a page in memory (also under Miri: no mapping).
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

        /// A hypervisor's update: `seq_count` odd, the counter, even again.
        fn update(&self, generation: usize) {
            let seq = self.u32_at(SEQ_AT);
            let odd = u32::from_le(seq.load(Ordering::Relaxed)).wrapping_add(1);
            seq.store(odd.to_le(), Ordering::Relaxed);
            fence(Ordering::Release);
            // SAFETY: as in `u32_at`.
            let counter = unsafe { &*self.start().add(GENERATION_AT).cast::<AtomicUsize>() };
            counter.store(generation, Ordering::Relaxed);
            seq.store(odd.wrapping_add(1).to_le(), Ordering::Release);
        }
    }

    #[test]
    fn valid_invalid_and_torn_views() {
        let page = Page::new();
        page.update(7);
        assert!(matches!(read(page.start()), View::Valid(7)));
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
                if let View::Valid(seen) = read(page.start()) {
                    assert!((last..=updates).contains(&seen), "{seen} after {last}");
                    last = seen;
                }
            }
        });
        assert!(matches!(read(page.start()), View::Valid(seen) if seen == updates));
    }
}
