//! A thread's state, its output [`Buffer`] and the reseed policy, in safe
//! code. Where they live and who may touch them when is `storage.rs`'s
//! business, as is the count of unread bytes (passed in).
#![forbid(unsafe_code)]

use zeroize::Zeroize;

use super::fork;
use super::generator::{Generator, Mix, SHORT_BYTES};
use crate::aes::POOL_OUTPUT_BYTES;
use crate::chacha::KEY_PERIOD_OUTPUT_BYTES;
use crate::error::OsError;
use crate::rngs::buffer::move_out;

/// Output bytes after which the thread-local generator reseeds itself from the
/// operating system: 1 MiB.
///
/// Both generators erase their key at every refill, so a captured state reveals
/// no earlier output; reseeding bounds how much *future* output it predicts. At
/// 1 MiB a reseed (one `getrandom` call) costs about 1 % of the output's time
/// even with AES hardware. The budget is charged as output is *produced* (buffer
/// refills, or whole refills straight into a large request), so no seed produces
/// more than `RESEED_BYTES`; a larger request is served in pieces, reseeding
/// between them.
pub const RESEED_BYTES: usize = 1 << 20;

/// Generator refills (AES pools) per refill of the thread state's buffer.
const REFILLS_PER_BUFFER: usize = 2;

/// The thread state's output buffer: [`REFILLS_PER_BUFFER`] AES pools' output
/// (8 ChaCha key periods too). One refill call for two pools lets the AES kernel
/// overlap the second pool's key expansion with the first pool's blocks.
pub(crate) const BUFFER_BYTES: usize = REFILLS_PER_BUFFER * POOL_OUTPUT_BYTES;

const _: () = assert!(
    BUFFER_BYTES >= KEY_PERIOD_OUTPUT_BYTES
        && RESEED_BYTES >= BUFFER_BYTES
        && BUFFER_BYTES >= SHORT_BYTES
);

/// `seeded` while the generator holds a seed (nonzero: a wiped page reads 0).
const SEEDED: usize = 0x5EED_5EED;

/// The output buffer, cache-line aligned (no 16-, 32- or 64-byte request
/// straddles lines); apart from the [`State`]: a first use never touches it.
#[repr(C, align(64))]
pub(crate) struct Buffer(pub(crate) [u8; BUFFER_BYTES]);

/// A thread's first short batch, in the [`State`] (cache-line aligned too).
#[repr(C, align(64))]
pub(crate) struct Short(pub(crate) [u8; SHORT_BYTES]);

#[cfg(test)]
impl Default for Short {
    fn default() -> Self {
        Self([0; SHORT_BYTES])
    }
}

/// A thread's state. All zeros (a fresh mapping, or a page a fork wiped) is a
/// valid value: unseeded, nothing buffered. Small, so that several threads'
/// states share a page and a new thread's first use usually faults in nothing.
#[repr(C)]
#[cfg_attr(test, derive(Default))]
pub(crate) struct State {
    /// Unread output is `short[..left]` or the buffer's `[..left]` (`left` is
    /// the storage's), served from its end (no order to keep); all else is zero.
    /// First: the storage puts the state right after the page's header.
    pub(crate) short: Short,
    /// [`SEEDED`] while the generator holds a seed; 0 before the first seeding,
    /// in a page a fork wiped, and after a fork was seen in the middle of a call.
    seeded: usize,
    /// Bytes the generator may still produce before its scheduled reseed.
    budget: usize,
    /// The fork epoch and process id at the last seeding.
    epoch: usize,
    pid: u32,
    generator: Generator,
    /// Whether the unread output is in `short` (else in the [`Buffer`]).
    in_short: bool,
    /// Whether the [`Buffer`] was written since the slot was taken (else it is
    /// all zeros, not to be touched); cleared only by [`release`](Self::release).
    buffer_used: bool,
}

impl State {
    /// Whether the unread output is in [`short`](Self::short), not the buffer.
    pub(crate) fn unread_in_short(&self) -> bool {
        self.in_short
    }

    /// Whether the buffer was written since the slot was taken (else untouched).
    pub(crate) fn buffer_used(&self) -> bool {
        self.buffer_used
    }

    /// Where the unread output is: the short batch or `buffer`.
    fn unread<'a>(&'a mut self, buffer: &'a mut Buffer) -> &'a mut [u8] {
        if self.in_short {
            &mut self.short.0
        } else {
            &mut buffer.0
        }
    }

    /// Serves `dst` (any length) with `left` unread bytes buffered, after the
    /// fork check: seeds when unseeded, and reseeds on a fork (a wiped page, a
    /// moved epoch, or, when `check_pid` or `force`, another process id), when
    /// `stale` (a new generation, or a VMClock page that cannot be trusted) or
    /// when `force` asks. Nothing buffered before any of these is ever served.
    /// A required seeding that fails serves nothing and returns the error; a
    /// failed forced reseed keeps the current key.
    ///
    /// The seeding's [`Mix`]: `Full` after a new generation or a fork, wherever
    /// seen (`stale`, or unseeded but not `first_use`: a wiped page, or a state
    /// the caller forgot); `Lite` at any other `first_use`; `None` for a forced
    /// or scheduled reseed.
    #[allow(
        clippy::too_many_arguments,
        reason = "the storage's view of one call: its buffer, its count, four verdicts"
    )]
    pub(crate) fn serve(
        &mut self,
        buffer: &mut Buffer,
        left: &mut usize,
        dst: &mut [u8],
        force: bool,
        check_pid: bool,
        stale: bool,
        first_use: bool,
    ) -> Result<(), OsError> {
        let unseeded = self.seeded != SEEDED;
        let mix = if stale || (unseeded && !first_use) {
            Mix::Full
        } else if unseeded {
            Mix::Lite
        } else {
            Mix::None
        };
        // Unseeded, it seeds anyway: its zeroed header's generation means nothing.
        let stale = stale && !unseeded;
        // The process id (a system call) is read only where it is compared:
        // with `check_pid` (off where a wipe catches every fork) and at a
        // forced reseed. Else a first use leaves it unrecorded (0, no process's):
        // a forced reseed then skips the comparison, `check_pid` counts it moved.
        let pid = if check_pid || force {
            fork::process_id()
        } else if unseeded {
            0
        } else {
            self.pid
        };
        let pid_moved = self.pid != pid && (check_pid || self.pid != 0);
        let forked = unseeded || self.epoch != fork::epoch() || pid_moved;
        // A fork seen by the epoch or the process id (not a wipe) is mixed too.
        let mix = if forked && !unseeded { Mix::Full } else { mix };
        if forked && !unseeded {
            // A fork the wipe did not clear (seen by the epoch or the pid, maybe
            // mid-call): the whole state, key included, is the parent's and must
            // go even if the seeding below fails (issue 31).
            self.forget(buffer, left);
        } else if stale && !unseeded {
            // A new generation (maybe found mid-call by a fast path that then
            // closed the buffer): the whole buffer may hold another's bytes.
            self.wipe_output(buffer);
            *left = 0;
        }
        if forked || stale || force {
            self.discard(buffer, left);
            // On failure `seeded`, the epoch and the pid stay stale, so the next
            // call tries again (never serve a stream another process has), and
            // the caller records no new generation.
            self.generator.reseed(mix)?;
            self.seeded = SEEDED;
            self.epoch = fork::epoch();
            self.pid = pid;
            self.budget = RESEED_BYTES;
        }
        // Only a thread's first use takes the short batch.
        self.fill(buffer, left, dst, first_use && unseeded);
        Ok(())
    }

    /// A fork landed in the middle of a call (from a signal handler): this state
    /// may be the parent's; wipes it all so that the next call seeds afresh.
    pub(crate) fn forget(&mut self, buffer: &mut Buffer, left: &mut usize) {
        self.wipe(buffer);
        *left = 0;
    }

    /// Zeroes the unread bytes, so that the short batch and the buffer are all
    /// zero (the rest already is), without faulting in a buffer never used.
    pub(crate) fn discard(&mut self, buffer: &mut Buffer, left: &mut usize) {
        // Skipped when empty (a thread's first use): no cold call to `memset`.
        if *left > 0 {
            self.unread(buffer)[..*left].zeroize();
        }
        *left = 0;
    }

    /// Zeroes the short batch and, if it was ever written, the buffer. As
    /// slices: `zeroize` wipes a slice with one `memset`, an array a byte at a
    /// time (its cost at thread exit: docs/PERFORMANCE.md).
    fn wipe_output(&mut self, buffer: &mut Buffer) {
        self.short.0.as_mut_slice().zeroize();
        if self.buffer_used {
            buffer.0.as_mut_slice().zeroize();
        }
        self.in_short = false;
    }

    /// [`wipe`](Self::wipe) when the thread gives its slot back; returns whether
    /// the buffer had been used (the storage then zeroes its header too).
    pub(crate) fn release(&mut self, buffer: &mut Buffer) -> bool {
        self.wipe(buffer);
        core::mem::take(&mut self.buffer_used)
    }

    /// Zeroes everything: unseeded again, as a fresh state.
    pub(crate) fn wipe(&mut self, buffer: &mut Buffer) {
        self.wipe_output(buffer);
        self.generator.wipe();
        self.seeded = 0;
        self.budget = 0;
        self.epoch = 0;
        self.pid = 0;
    }

    /// Lets the generator produce `out.len()` bytes (a multiple of its refill, at
    /// most [`RESEED_BYTES`]) into `out`, reseeding first if the budget is short
    /// (on failure the key, erased at each refill anyway, stays until a budget
    /// later). Takes the two fields, not `self`, so that `out` may be the buffer.
    fn generate(budget: &mut usize, generator: &mut Generator, out: &mut [u8]) {
        if *budget < out.len() {
            let _ = generator.reseed(Mix::None);
            *budget = RESEED_BYTES;
        }
        *budget -= out.len();
        generator.generate(out);
    }

    /// Serves `dst`: the buffered bytes first, then whole refills generated
    /// straight into `dst` (in pieces of at most [`RESEED_BYTES`]), then the tail
    /// from a refilled buffer.
    fn fill(&mut self, buffer: &mut Buffer, left: &mut usize, dst: &mut [u8], first_use: bool) {
        // 1. What is buffered.
        let n = dst.len().min(*left);
        let (now, rest) = dst.split_at_mut(n);
        move_out(now, &mut self.unread(buffer)[*left - n..*left]);
        *left -= n;
        if rest.is_empty() {
            return;
        }
        // 2. Whole refills, straight into `rest`.
        let refill = Generator::refill_bytes();
        let whole = rest.len() / refill * refill;
        let (direct, tail) = rest.split_at_mut(whole);
        for piece in direct.chunks_mut(RESEED_BYTES / refill * refill) {
            Self::generate(&mut self.budget, &mut self.generator, piece);
        }
        // 3. The tail (shorter than a refill): at a thread's first use, a short
        // batch if it fits (a cheaper first use); right after any other
        // seeding, one refill; otherwise as many refills as the buffer holds.
        let fresh = self.budget == RESEED_BYTES;
        if let Some(short) = Generator::short_output_bytes()
            && fresh
            && first_use
            && !tail.is_empty()
            && tail.len() <= short
        {
            let batch = &mut self.short.0;
            self.budget -= SHORT_BYTES;
            // The next key was zeroed at the batch's end: unread is `[..short]`.
            self.generator.generate_short(batch);
            self.in_short = true;
            let rest = short - tail.len();
            move_out(tail, &mut batch[rest..short]);
            *left = rest;
        } else if !tail.is_empty() {
            let fresh = if fresh {
                refill
            } else {
                BUFFER_BYTES / refill * refill
            };
            let unread = &mut buffer.0[..fresh];
            self.in_short = false;
            self.buffer_used = true;
            Self::generate(&mut self.budget, &mut self.generator, unread);
            let rest = fresh - tail.len();
            move_out(tail, &mut unread[rest..]);
            *left = rest;
        }
    }

    /// The inspection hook's view for the residue tests: the address ranges of
    /// the key material and of the unread output.
    #[cfg(ratchet_rng_inspect)]
    pub(crate) fn secret_ranges(
        &self,
        buffer: &Buffer,
        left: usize,
    ) -> [core::ops::Range<usize>; 2] {
        let generator = core::ptr::from_ref(&self.generator) as usize;
        let unread = if self.in_short {
            core::ptr::from_ref(&self.short) as usize
        } else {
            core::ptr::from_ref(buffer) as usize
        };
        [
            generator..generator + size_of::<Generator>(),
            unread..unread + left,
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh state, its buffer and its unread count, as the storage holds them.
    struct Held {
        state: std::boxed::Box<State>,
        buffer: std::boxed::Box<Buffer>,
        left: usize,
    }

    impl Held {
        fn new() -> Self {
            Self {
                state: std::boxed::Box::default(),
                buffer: std::boxed::Box::new(Buffer([0; BUFFER_BYTES])),
                left: 0,
            }
        }

        /// [`State::serve`] with these verdicts (never `stale`); it must succeed.
        fn serve(&mut self, dst: &mut [u8], force: bool, check_pid: bool, first_use: bool) {
            let (buffer, left) = (&mut *self.buffer, &mut self.left);
            self.state
                .serve(buffer, left, dst, force, check_pid, false, first_use)
                .unwrap();
        }
    }

    /// A thread's first use buffers only a short batch (AES engine), the rest
    /// zero; any other seeding refills a whole pool, and the refill after the
    /// short batch fills the buffer.
    #[test]
    fn first_use_buffers_a_short_batch() {
        let refill = Generator::refill_bytes();
        let short = Generator::short_output_bytes();
        let mut held = Held::new();
        let mut out = [0u8; 8];
        held.serve(&mut out, false, false, true);
        assert_ne!(out, [0; 8]);
        assert_eq!(held.left, short.unwrap_or(refill) - 8);
        let unread = if short.is_some() {
            assert!(held.state.unread_in_short());
            &held.state.short.0[held.left..]
        } else {
            &held.buffer.0[held.left..]
        };
        assert!(unread.iter().all(|&b| b == 0), "served bytes kept");
        assert_eq!(
            held.buffer.0.iter().all(|&b| b == 0),
            short.is_some(),
            "a short batch touched the buffer, or a refill did not"
        );
        assert_eq!(
            held.state.budget,
            RESEED_BYTES - short.map_or(refill, |_| SHORT_BYTES)
        );
        // Drained, the next refill fills the buffer.
        let mut rest = std::vec![0u8; held.left + 8];
        held.serve(&mut rest, false, false, false);
        assert_eq!(held.left, BUFFER_BYTES / refill * refill - 8);
        // A forced reseed refills one pool.
        held.serve(&mut out, true, false, false);
        assert_eq!(held.left, refill - 8);
    }

    /// A first use without the pid check leaves the process id unrecorded; a
    /// forced reseed records it; a call with the check treats an unrecorded id
    /// as a fork (reseeds, serves nothing buffered before). Unix only: elsewhere
    /// the process id reads as 0 (`fork.rs`).
    #[test]
    #[cfg(unix)]
    fn unrecorded_process_id_is_recorded_or_counts_as_a_fork() {
        let refill = Generator::refill_bytes();
        let mut out = [0u8; 8];
        // Forced: recorded (the pid is what is checked here).
        let mut held = Held::new();
        held.serve(&mut out, false, false, true);
        assert_eq!(held.state.pid, 0, "a first use read the process id");
        held.serve(&mut out, true, false, false);
        assert_eq!(held.state.pid, fork::process_id());
        // Checked: a fork, so a reseed and a fresh refill, not the short batch.
        let mut held = Held::new();
        held.serve(&mut out, false, false, true);
        let mut twin = held.state.generator.clone();
        held.serve(&mut out, false, true, false);
        assert_eq!(held.state.pid, fork::process_id());
        assert_eq!(
            held.left,
            refill - 8,
            "an unrecorded pid was not counted as a fork"
        );
        assert_eq!(held.state.budget, RESEED_BYTES - refill);
        // The new key is not the old one's continuation.
        let mut theirs = std::vec![0u8; refill];
        twin.generate(&mut theirs);
        assert!(
            !theirs.windows(8).any(|w| w == out),
            "served from the old key"
        );
    }

    /// The budget reseeds: a generator with the same key that is never reseeded
    /// predicts the output within the budget, and not past it.
    #[test]
    fn spent_budget_reseeds_from_the_os() {
        let mut held = Held::new();
        held.serve(&mut [0u8; 1], false, false, true);
        let state = &mut held.state;
        assert_eq!(state.seeded, SEEDED);
        let refill = Generator::refill_bytes();
        let mut twin = state.generator.clone();
        let (mut ours, mut theirs) = (std::vec![0u8; refill], std::vec![0u8; refill]);
        // Within the budget: the same key, the same bytes.
        state.budget = refill;
        State::generate(&mut state.budget, &mut state.generator, &mut ours);
        twin.generate(&mut theirs);
        assert_eq!(ours, theirs, "no reseed within the budget");
        assert_eq!(state.budget, 0);
        // Past it: a fresh key from the OS.
        State::generate(&mut state.budget, &mut state.generator, &mut ours);
        twin.generate(&mut theirs);
        assert_ne!(ours, theirs, "the spent budget did not reseed");
        assert_eq!(state.budget, RESEED_BYTES - refill);
    }
}
