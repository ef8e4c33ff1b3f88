//! Test-only introspection of secret state, compiled only with
//! `RATCHET_RNG_INSPECT=1` (or `--cfg ratchet_rng_inspect`): a cfg set by whoever
//! runs the build, never a feature a dependency could enable. Hidden from the
//! docs; not part of the API. Everything here exposes secrets: tests only.

// ---------------------------------------------------------------------------
// thread
// ---------------------------------------------------------------------------

/// Where this thread's generator state (the thread-local generator behind
/// [`rng()`](crate::rng)) lives, and what the kernel accepted about it.
#[cfg(feature = "thread_rng")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadStatePages {
    /// The address of the state's page: its slot's first piece, a few hundred
    /// bytes that may share a 4 KiB page with other threads' (inside its
    /// slab's mapping on unix, which `/proc/self/smaps` lists on Linux).
    pub address: usize,
    /// Its length in bytes.
    pub len: usize,
    /// Address and length of the state's output buffer, the slot's second
    /// piece (in the same mapping).
    pub buffer: (usize, usize),
    /// The pages are given zero-filled to a forked child (the wipe advice was
    /// accepted, and an unknown advice refused).
    pub wipe_on_fork: bool,
    /// The advice to keep the pages out of core dumps (`MADV_DONTDUMP` /
    /// `MADV_NOCORE`) was accepted.
    pub dont_dump: bool,
    /// Address and length of the generator's key material inside the pages.
    pub key: (usize, usize),
    /// Address and length of the unread (future) output inside the pages.
    pub unread: (usize, usize),
}

/// This thread's generator state, created and seeded if needed; `None` when it
/// cannot exist (thread-local destruction, OS failure). The addresses are for
/// tests that read the state between calls on this thread.
#[cfg(feature = "thread_rng")]
pub fn thread_state_pages() -> Option<ThreadStatePages> {
    crate::thread::storage::inspect(true).map(ThreadStatePages::from)
}

/// [`thread_state_pages`] as they are, with no call made first (none that
/// could seed, reseed or refill); `None` before this thread's first use.
#[cfg(feature = "thread_rng")]
pub fn thread_state_pages_now() -> Option<ThreadStatePages> {
    crate::thread::storage::inspect(false).map(ThreadStatePages::from)
}

#[cfg(feature = "thread_rng")]
impl From<crate::thread::storage::Inspected> for ThreadStatePages {
    fn from(seen: crate::thread::storage::Inspected) -> Self {
        ThreadStatePages {
            address: seen.page.0,
            len: seen.page.1,
            buffer: seen.buffer,
            wipe_on_fork: seen.advice.0,
            dont_dump: seen.advice.1,
            key: seen.secrets[0],
            unread: seen.secrets[1],
        }
    }
}

// ---------------------------------------------------------------------------
// thread: injection points
// ---------------------------------------------------------------------------

/// A place in the thread layer where a signal handler (or a fork, or another
/// thread) could land between two steps that matter. Each is named by where it
/// sits; `src/thread/storage.rs` and `src/thread/fork.rs` say at each one what
/// a handler may do there. A test registers a hook ([`set_injection_hook`])
/// that the code calls at every point it passes, on every thread.
#[cfg(feature = "thread_rng")]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Point {
    /// `take`, the fast path of every entry point: `SLOT` read, the in-use
    /// mark not yet set.
    TakeSlotRead,
    /// `take`: bytes copied and wiped in the buffer, `left` not yet stored.
    TakeCopied,
    /// `take`: bytes copied and `left` stored, before the `live` re-check.
    TakeBeforeLive,
    /// `take`: after the `live` re-check, before the mark is cleared.
    TakeAfterLive,
    /// The slow path: `SLOT` read, the mark not yet set.
    SlowSlotRead,
    /// The slow path: the mark set, `PAGE` not yet read.
    SlowMarked,
    /// The slow path: `PAGE` read (under the mark).
    SlowPageRead,
    /// First use: a page taken from a slab, not yet in `PAGE`.
    PageMapped,
    /// First use: the page in `PAGE`, not yet seeded.
    PagePublished,
    /// The slow path: the generation watch probed (the droppable word
    /// re-armed), the generation not yet read.
    SlowProbed,
    /// The slow path: the generation read (and compared with the one the state
    /// was seeded under), the state not yet served from.
    SlowGenerationRead,
    /// The slow path: seeded or refilled and served, `left` not yet stored.
    SlowServed,
    /// The slow path: seeded or refilled and `left` stored, before the `live`
    /// re-check (the page not yet published to the fast path).
    SlowBeforeLive,
    /// The slow path: after the `live` re-check, before the gate is written.
    SlowAfterLive,
    /// The process's fork protection decided by this thread, not yet stored.
    DecideVerdict,
    /// First use, the seed reserve (`pages.rs`): refilled from the OS, not
    /// yet published.
    ReserveFilled,
    /// First use, the seed reserve: a seed taken and wiped there, `left`
    /// stored, before the re-check.
    ReserveTaken,
    /// Thread exit: the destructor entered, nothing stored yet.
    DropEntered,
    /// Thread exit: between the destructor's two stores (`SLOT`, then `PAGE`).
    DropClosed,
    /// Thread exit: the page taken out of `PAGE`, not yet wiped.
    DropPageTaken,
    /// Thread exit: the page wiped, not yet given back to its slab.
    DropWiped,
    /// The `pthread_atfork` child hook: `SLOT` and `PAGE` read, before the mark.
    ChildHookRead,
    /// First use, a new slab (`pages.rs`): mapped and advised, not yet
    /// published (another thread may publish its own slab first).
    SlabAdvised,
}

#[cfg(feature = "thread_rng")]
impl Point {
    /// Every point, in the order above.
    pub const ALL: [Point; 23] = [
        Point::TakeSlotRead,
        Point::TakeCopied,
        Point::TakeBeforeLive,
        Point::TakeAfterLive,
        Point::SlowSlotRead,
        Point::SlowMarked,
        Point::SlowPageRead,
        Point::PageMapped,
        Point::PagePublished,
        Point::SlowProbed,
        Point::SlowGenerationRead,
        Point::SlowServed,
        Point::SlowBeforeLive,
        Point::SlowAfterLive,
        Point::DecideVerdict,
        Point::ReserveFilled,
        Point::ReserveTaken,
        Point::DropEntered,
        Point::DropClosed,
        Point::DropPageTaken,
        Point::DropWiped,
        Point::ChildHookRead,
        Point::SlabAdvised,
    ];
}

/// The registered hook, as a pointer (null: none). A pointer, not an address:
/// a function pointer rebuilt from an integer has no provenance, and calling
/// it is undefined behaviour.
#[cfg(feature = "thread_rng")]
static HOOK: core::sync::atomic::AtomicPtr<()> =
    core::sync::atomic::AtomicPtr::new(core::ptr::null_mut());

/// Registers `hook` (or none): the thread layer calls it at every injection
/// point it passes, on every thread, in signal handlers and forked children
/// too. The hook runs with the thread layer's state half updated: it may raise
/// a signal, block, or record, and must be async-signal-safe.
#[cfg(feature = "thread_rng")]
pub fn set_injection_hook(hook: Option<fn(Point)>) {
    let pointer = hook.map_or(core::ptr::null_mut(), |hook| hook as *mut ());
    HOOK.store(pointer, core::sync::atomic::Ordering::SeqCst);
}

/// Called at each point (the `inject!` macro).
#[cfg(feature = "thread_rng")]
#[inline(never)]
pub(crate) fn inject(point: Point) {
    let hook = HOOK.load(core::sync::atomic::Ordering::SeqCst);
    if !hook.is_null() {
        // SAFETY: the only non-null value ever stored is a `fn(Point)` cast to
        // a pointer by `set_injection_hook`, so this is that function pointer
        // with its provenance (a pointer-to-pointer transmute, never an
        // integer's); functions live for the whole program.
        let hook = unsafe { core::mem::transmute::<*mut (), fn(Point)>(hook) };
        hook(point);
    }
}

// ---------------------------------------------------------------------------
// thread: pages, slabs, verdict
// ---------------------------------------------------------------------------

/// Every thread-state slot this process has mapped, and the free ones (all
/// of them once no thread holds a state, when nothing leaks), for the tests
/// that check that no slot is left unwiped or unreleased.
#[cfg(all(feature = "thread_rng", unix))]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PageAudit {
    /// Addresses of every slot's page of every slab (slabs are never
    /// unmapped).
    pub mapped: std::vec::Vec<usize>,
    /// Addresses of every slot's buffer, in the order of `mapped`.
    pub buffers: std::vec::Vec<usize>,
    /// Addresses of the free slots' pages.
    pub spare: std::vec::Vec<usize>,
    /// The length of each slot's page.
    pub len: usize,
    /// The length of each slot's buffer.
    pub buffer_len: usize,
}

/// See [`PageAudit`].
#[cfg(all(feature = "thread_rng", unix))]
pub fn page_audit() -> PageAudit {
    let (slots, (len, buffer_len)) = crate::thread::storage::inspect_slots();
    PageAudit {
        mapped: slots.iter().map(|&((page, _), _)| page).collect(),
        buffers: slots.iter().map(|&((_, buffer), _)| buffer).collect(),
        spare: slots
            .iter()
            .filter(|&&(_, free)| free)
            .map(|&((page, _), _)| page)
            .collect(),
        len,
        buffer_len,
    }
}

/// Whether this thread's fast path is open (its gate is its page's header and
/// not in use).
#[cfg(feature = "thread_rng")]
pub fn fast_path_open() -> bool {
    crate::thread::storage::inspect_gate_open()
}

/// This process's fork protection, if decided: `"Wipe"`, `"Epoch"`,
/// `"PidCheck"` or `"NoFork"`.
#[cfg(feature = "thread_rng")]
pub fn protection() -> Option<&'static str> {
    use crate::thread::fork::Protection;
    Some(match crate::thread::fork::decided()? {
        Protection::Wipe => "Wipe",
        Protection::Epoch => "Epoch",
        Protection::PidCheck => "PidCheck",
        Protection::NoFork => "NoFork",
    })
}

/// Whether this process has registered its `pthread_atfork` handler (the fork
/// protection's second layer: at the process's first use, whatever the wipe).
#[cfg(all(feature = "thread_rng", unix))]
#[must_use]
pub fn fork_handler_registered() -> bool {
    crate::thread::fork::atfork::registered()
}

/// How many calls that are not async-signal-safe (`pthread_atfork`, `dlsym`)
/// the crate made on a thread after that thread's first use, in this process
/// (issue 46: a signal handler that draws may run any later call, during a
/// `fork()` too). SECURITY.md promises 0.
#[cfg(feature = "thread_rng")]
#[must_use]
pub fn signal_unsafe_calls_after_first_use() -> usize {
    SIGNAL_UNSAFE_AFTER_FIRST_USE.load(core::sync::atomic::Ordering::SeqCst)
}

#[cfg(feature = "thread_rng")]
static SIGNAL_UNSAFE_AFTER_FIRST_USE: core::sync::atomic::AtomicUsize =
    core::sync::atomic::AtomicUsize::new(0);

#[cfg(feature = "thread_rng")]
std::thread_local! {
    /// Whether this thread's first use of the thread layer has finished.
    static FIRST_USE_DONE: core::cell::Cell<bool> = const { core::cell::Cell::new(false) };
}

/// Called where the crate is about to make a call that is not
/// async-signal-safe: counted if this thread's first use has finished.
#[cfg(feature = "thread_rng")]
pub(crate) fn signal_unsafe_call() {
    if FIRST_USE_DONE
        .try_with(core::cell::Cell::get)
        .unwrap_or(true)
    {
        SIGNAL_UNSAFE_AFTER_FIRST_USE.fetch_add(1, core::sync::atomic::Ordering::SeqCst);
    }
}

/// Called by the thread layer when a call that had this thread's state
/// finishes: the thread's first use is over.
#[cfg(feature = "thread_rng")]
pub(crate) fn first_use_done() {
    let _ = FIRST_USE_DONE.try_with(|done| done.set(true));
}

/// Makes this thread's decision of the fork protection (if it makes one), and
/// the wipe advice of a slab it makes, take `verdict` as the classification's
/// answer; `None` classifies. `Some(false)`: a stand-in for a system whose wipe
/// is not believed (an emulator, an old kernel: the `pthread_atfork` and
/// process-id layers alone), no advice asked; `Some(true)`: the advice's
/// acceptance believed without the unknown-advice check.
#[cfg(all(feature = "thread_rng", unix))]
pub fn simulate_wipe_verdict(verdict: Option<bool>) {
    crate::thread::fork::WIPE_VERDICT.with(|cell| cell.set(verdict));
}

// ---------------------------------------------------------------------------
// thread: the process-wide generation (VM snapshots)
// ---------------------------------------------------------------------------

/// Watches the VMClock page in the file at `path` (a test's stand-in for
/// `/dev/vmclock0`: at least 112 bytes, a page is best, in the layout of
/// `linux/vmclock-abi.h`) instead of the device; the process's own probe is
/// then skipped. Fails, watching nothing new, if the file cannot be mapped or
/// is not a valid VMClock page with the VM generation counter flag.
///
/// # Errors
/// Why the page is not watched.
#[cfg(all(
    feature = "thread_rng",
    any(target_os = "linux", target_os = "android"),
    not(miri)
))]
pub fn watch_vmclock(path: &std::path::Path) -> Result<(), &'static str> {
    use std::os::unix::ffi::OsStrExt;
    let path =
        std::ffi::CString::new(path.as_os_str().as_bytes()).map_err(|_| "NUL in the path")?;
    crate::thread::generation::inspect::watch_file(&path)
}

/// Unwatches any VMClock page and makes the next slow path (the next call
/// that misses the fast path, on any thread) probe `path` exactly as it
/// probes `/dev/vmclock0` (open, `fstat`, map, seqlock read), with a fresh
/// retry budget; a regular file (a fake page) is accepted only with
/// `file_stands_in`. What it finds shows in `backends().vm_generation()`.
///
/// # Errors
/// A NUL in the path.
#[cfg(all(
    feature = "thread_rng",
    any(target_os = "linux", target_os = "android"),
    not(miri)
))]
pub fn probe_vmclock_at(path: &std::path::Path, file_stands_in: bool) -> Result<(), &'static str> {
    use std::os::unix::ffi::OsStrExt;
    let path =
        std::ffi::CString::new(path.as_os_str().as_bytes()).map_err(|_| "NUL in the path")?;
    crate::thread::generation::inspect::probe_at(path, file_stands_in);
    Ok(())
}

/// Whether process restores (CRIU) are watched: no VMClock page is, and the
/// kernel gave the droppable page (Linux 6.11+, 64-bit).
#[cfg(feature = "thread_rng")]
pub fn process_restore_watched() -> bool {
    crate::thread::generation::process_restore_status() == "droppable page"
}

/// Simulates a CRIU restore of this process, as far as the generation sees
/// it: the droppable page that holds the word the fast path compares where
/// no VMClock page is watched is zeroed, as CRIU (which does not dump
/// droppable pages) restores it. False where there is no such page (a kernel
/// before 6.11 or 32-bit, or a VMClock page watched).
#[cfg(all(
    feature = "thread_rng",
    any(target_os = "linux", target_os = "android"),
    not(miri)
))]
pub fn simulate_process_restore() -> bool {
    crate::thread::generation::inspect::drop_restore_page()
}

/// Makes the probes that follow (call it before the first use of `rng()`)
/// map no droppable page, as on a kernel before 6.11: a fork then leaves the
/// generation as it was, and a thread's first use in a fork child is a plain
/// first use.
#[cfg(all(
    feature = "thread_rng",
    any(target_os = "linux", target_os = "android"),
    not(miri)
))]
pub fn without_droppable_page() {
    crate::thread::generation::inspect::without_droppable();
}

/// Marks the VMClock probe as in progress in this process, as if another
/// thread were inside it: the state a child forked at that moment inherits.
#[cfg(all(
    feature = "thread_rng",
    any(target_os = "linux", target_os = "android"),
    not(miri)
))]
pub fn vmclock_probe_in_progress() {
    crate::thread::generation::inspect::probe_busy();
}

/// Whether a VMClock page (the device, or [`watch_vmclock`]'s) is watched.
#[cfg(feature = "thread_rng")]
pub fn vmclock_watched() -> bool {
    crate::thread::generation::watched()
}

/// The CPU random source a reseed after a new generation mixes in on this
/// machine (`"RDSEED"`, `"RDRAND"`, `"RNDR"`), if any.
#[cfg(feature = "thread_rng")]
pub fn hardware_random_source() -> Option<&'static str> {
    crate::thread::generation::hardware::fill(&mut [0; 32])
}

/// Makes every thread reseed fail (from now on, in this process and its
/// children) as if the OS generator failed, or succeed again.
#[cfg(feature = "thread_rng")]
pub fn fail_os_seeds(on: bool) {
    crate::thread::generator::FAIL_OS_SEEDS.store(on, core::sync::atomic::Ordering::Relaxed);
}

/// Makes the CPU random source (RDSEED/RDRAND/RNDR) "return" `words` from now
/// on, in every thread (a stand-in for a broken one, such as the AMD parts
/// whose RDRAND returns all ones with success), or its own output again with
/// `None`. Where the CPU has no source, the injected words are used as one
/// named `"injected"`.
#[cfg(feature = "thread_rng")]
pub fn inject_cpu_random(words: Option<[u64; 4]>) {
    crate::thread::generation::hardware::inject(words);
}

/// This thread's successful (re)seedings by what they mixed into the OS
/// bytes: `[nothing, clocks and VMClock fields, everything (CPU source too)]`.
#[cfg(feature = "thread_rng")]
pub fn thread_mixes() -> [u64; 3] {
    crate::thread::generator::MIXES
        .try_with(core::cell::Cell::get)
        .unwrap_or([0; 3])
}

/// This thread's reseeds whose mix hashed the CPU random source's bytes in
/// (RDSEED/RDRAND/RNDR, or [`inject_cpu_random`]'s words).
#[cfg(feature = "thread_rng")]
pub fn thread_cpu_random_mixes() -> u64 {
    crate::thread::generator::CPU_RANDOM_MIXES
        .try_with(core::cell::Cell::get)
        .unwrap_or(0)
}

/// This thread's seeds taken from the process's seed reserve, and a
/// fingerprint (its first 8 bytes, as a little-endian word) of the last one.
#[cfg(feature = "thread_rng")]
pub fn thread_reserved_seeds() -> (u64, u64) {
    crate::thread::pages::RESERVED_TAKES
        .try_with(core::cell::Cell::get)
        .unwrap_or((0, 0))
}

/// The seed reserve's seeds not yet taken, and how many of those are all
/// zeros (`(0, 0)` while another thread is in it).
#[cfg(feature = "thread_rng")]
pub fn reserve_audit() -> (usize, usize) {
    crate::thread::pages::reserve_audit()
}

/// How many times this thread's generator has been (re)seeded successfully.
#[cfg(feature = "thread_rng")]
pub fn thread_reseeds() -> u64 {
    thread_mixes().iter().sum()
}

/// Makes every thread reseed (from now on, in this process and its children)
/// take the same 32 bytes instead of the OS generator's: a stand-in for two
/// clones of one snapshot whose guest kernel has not reseeded yet.
#[cfg(feature = "thread_rng")]
pub fn same_os_seeds(on: bool) {
    crate::thread::generator::SAME_OS_SEEDS.store(on, core::sync::atomic::Ordering::Relaxed);
}
