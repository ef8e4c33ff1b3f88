//! The byte-granular output buffer shared by every generator.
//!
//! A generator's core produces its stream in refills of `N` bytes
//! ([`BlockCore::generate`]); [`BufferedRng`] turns that into a byte stream:
//!
//! - `fill_bytes`, `next_u32` and `next_u64` all read the same stream (the integers
//!   are little-endian reads of the next 4 / 8 bytes), so any interleaving and any
//!   split of calls gives the bytes of one long `fill_bytes`;
//! - every byte handed out is zeroed in the buffer at once, so a later memory
//!   disclosure reveals nothing already served;
//! - requests of whole refills bypass the buffer: the core writes straight into the
//!   caller's slice (same bytes, no copy, nothing left behind);
//! - the buffer is zeroized on drop (the core wipes its own state).
//!
//! # Lengths and counters
//! The only number kept between calls is `pos <= N` (N is at most 4064). No
//! byte, block or refill count is kept anywhere: a request of any length, more
//! than 4 GiB included, is split with `as_chunks_mut` into whole refills and a
//! tail, and the only sums are `pos + k` with `k <= N - pos` (checked first) or
//! `k <= 8`, which cannot overflow even with a 16-bit `usize`. On a 32-bit
//! target a slice is below 4 GiB anyway; on 64-bit targets a longer one is
//! just more refills. The cores keep no counter across refills either (the
//! block counters restart inside each refill), so nothing can wrap or repeat
//! however much is read; `tests/bad_input.rs` checks this through `hazmat`.

use zeroize::Zeroize;

/// A generator's core: produces the next `N` bytes of its stream per call.
pub(crate) trait BlockCore<const N: usize> {
    /// Writes the next `N` bytes of the stream to `out`.
    fn generate(&mut self, out: &mut [u8; N]);

    /// Writes the next `N * out.len()` bytes; a backend may override this to keep
    /// several refills inside one SIMD kernel call.
    fn generate_many(&mut self, out: &mut [[u8; N]]) {
        for block in out {
            self.generate(block);
        }
    }
}

/// Copies `src` to `dst` (equal lengths) and zeroes `src`.
///
/// Short requests (a key, a nonce, an integer) are the common case: up to 64 bytes
/// they are copied and wiped with one fixed-size move (the sizes 4, 8, 16, 32,
/// 64) or two possibly overlapping ones, which compile to a few register loads
/// and stores, instead of calls to `memcpy` and `memset` that cost more than the
/// copy itself at these sizes. The branches depend on the length only, which is
/// public.
///
/// On 32-bit cores (Cortex-M, rv32) the match, inlined into every `fill_bytes`,
/// is flash, and a 16-byte or longer array move is a `memcpy` call anyway (byte
/// by byte when unaligned): there it keeps four cases, and `move_out_long`'s
/// word moves serve everything past 16 bytes.
#[inline(always)]
pub(crate) fn move_out(dst: &mut [u8], src: &mut [u8]) {
    /// Copies and wipes exactly `K` bytes with one move.
    #[cfg(any(target_pointer_width = "64", target_family = "wasm"))]
    #[inline(always)]
    fn one<const K: usize>(dst: &mut [u8], src: &mut [u8]) {
        let bytes: [u8; K] = (&*src).try_into().expect("len == K");
        dst.copy_from_slice(&bytes);
        src.fill(0);
    }
    /// Copies and wipes with two `K`-byte moves (`K <= len <= 2K`): the first `K`
    /// bytes and the last `K`, overlapping when `len < 2K`. Both copies happen
    /// before either wipe, so the overlap copies real bytes, not zeros.
    #[inline(always)]
    fn two<const K: usize>(dst: &mut [u8], src: &mut [u8]) {
        let n = src.len();
        let head: [u8; K] = src[..K].try_into().expect("K <= len");
        let tail: [u8; K] = src[n - K..].try_into().expect("K <= len");
        dst[..K].copy_from_slice(&head);
        dst[n - K..].copy_from_slice(&tail);
        src[..K].fill(0);
        src[n - K..].fill(0);
    }
    debug_assert_eq!(dst.len(), src.len());
    match src.len() {
        0 => {}
        1..=3 => {
            for (d, s) in dst.iter_mut().zip(src.iter_mut()) {
                *d = core::mem::take(s);
            }
        }
        #[cfg(any(target_pointer_width = "64", target_family = "wasm"))]
        4 => one::<4>(dst, src),
        #[cfg(any(target_pointer_width = "64", target_family = "wasm"))]
        8 => one::<8>(dst, src),
        #[cfg(any(target_pointer_width = "64", target_family = "wasm"))]
        16 => one::<16>(dst, src),
        #[cfg(any(target_pointer_width = "64", target_family = "wasm"))]
        32 => one::<32>(dst, src),
        #[cfg(any(target_pointer_width = "64", target_family = "wasm"))]
        64 => one::<64>(dst, src),
        4..=8 => two::<4>(dst, src),
        9..=16 => two::<8>(dst, src),
        #[cfg(any(target_pointer_width = "64", target_family = "wasm"))]
        17..=32 => two::<16>(dst, src),
        #[cfg(any(target_pointer_width = "64", target_family = "wasm"))]
        33..=64 => two::<32>(dst, src),
        _ => move_out_long(dst, src),
    }
}

/// [`move_out`] past 64 bytes: `memcpy` and `memset`, out of line so that callers
/// inlining the short cases keep no registers live across these calls. On
/// wasm32 too: they are the engine's `memory.copy` and `memory.fill`.
#[cfg(any(target_pointer_width = "64", target_family = "wasm"))]
#[inline(never)]
fn move_out_long(dst: &mut [u8], src: &mut [u8]) {
    dst.copy_from_slice(src);
    src.fill(0);
}

/// [`move_out`] past 16 bytes on 32-bit (and smaller) cores, wasm32 aside: one
/// pass of 16-byte moves, each wiped as soon as it is copied, then words and
/// bytes. The `memcpy` of `compiler_builtins` copies byte by byte when source
/// and destination are not equally aligned (the buffer is read from any byte
/// position): on a Cortex-M4 this pass takes about a quarter of the
/// instructions of `memcpy` plus `memset`. The wipe after each load keeps the
/// compiler from turning the loop back into the two calls.
#[cfg(not(any(target_pointer_width = "64", target_family = "wasm")))]
#[inline(never)]
fn move_out_long(dst: &mut [u8], src: &mut [u8]) {
    const MOVE_BYTES: usize = 16;
    let (dst_moves, dst_tail) = dst.as_chunks_mut::<MOVE_BYTES>();
    let (src_moves, src_tail) = src.as_chunks_mut::<MOVE_BYTES>();
    for (d, s) in dst_moves.iter_mut().zip(src_moves) {
        // Four 32-bit words, written out: a 16-byte array move becomes a
        // `memcpy` call, and an inner loop is not unrolled at opt-level "s".
        let [d0, d1, d2, d3] = as_words(d);
        let [s0, s1, s2, s3] = as_words(s);
        *d0 = core::mem::take(s0);
        *d1 = core::mem::take(s1);
        *d2 = core::mem::take(s2);
        *d3 = core::mem::take(s3);
    }
    // The last 0 to 15 bytes: whole words, then bytes.
    let (dst_words, dst_bytes) = dst_tail.as_chunks_mut::<4>();
    let (src_words, src_bytes) = src_tail.as_chunks_mut::<4>();
    for (d, s) in dst_words.iter_mut().zip(src_words) {
        *d = core::mem::take(s);
    }
    for (d, s) in dst_bytes.iter_mut().zip(src_bytes) {
        *d = core::mem::take(s);
    }
}

/// The four words of a 16-byte move.
#[cfg(not(any(target_pointer_width = "64", target_family = "wasm")))]
#[inline(always)]
fn as_words(bytes: &mut [u8; 16]) -> [&mut [u8; 4]; 4] {
    let (words, []) = bytes.as_chunks_mut::<4>() else {
        unreachable!("16 = 4 * 4")
    };
    let [a, b, c, d] = words else {
        unreachable!("four words")
    };
    [a, b, c, d]
}

/// A byte stream over a [`BlockCore`] that wipes what it serves.
pub(crate) struct BufferedRng<C, const N: usize> {
    core: C,
    /// Bytes `pos..N` are unread output; bytes `..pos` are zero.
    buf: [u8; N],
    pos: usize,
}

/// A byte that is always 0, kept in a refill core so that `Option<G>` of a
/// buffered generator `G` is tagged by its other 255 values instead of a word
/// of its own. Where the core's backend enum has one variant (every target
/// without SIMD: a zero-sized type), nothing else in the generator has a
/// niche, and with a separate tag `slot = Some(G::from_seed(seed))` is built in
/// a temporary as large as the buffer on the stack and then copied: on a
/// Cortex-M4 (`.ci/firmware/measure.sh`), 4,196 bytes of stack to construct an
/// `AesCtrPoolRng` at opt-level "s" (132 with the niche), 1,116 for a
/// `ChaCha12KeyErasureRng`. (In `BufferedRng` itself, beside the buffer, the
/// niche does not help: LLVM then builds the generator in a temporary.)
#[derive(Clone, Copy)]
#[repr(u8)]
pub(crate) enum NicheByte {
    Zero = 0,
}

impl<C: BlockCore<N>, const N: usize> BufferedRng<C, N> {
    /// A stream starting at the core's next refill.
    pub(crate) fn new(core: C) -> Self {
        Self {
            core,
            buf: [0; N],
            pos: N,
        }
    }

    /// Copies the next `dst.len()` bytes of the stream into `dst`. Always
    /// inlined: the buffered case is a few moves, and a call would cost as much
    /// (the refill is out of line).
    #[inline(always)]
    pub(crate) fn fill_bytes(&mut self, dst: &mut [u8]) {
        // Fast path: nothing to do, or all of it buffered.
        let pos = self.pos;
        // Invariant `pos <= N`: no underflow, and `pos + dst.len() <= N` below.
        if dst.len() <= N - pos {
            if !dst.is_empty() {
                move_out(dst, &mut self.buf[pos..pos + dst.len()]);
                self.pos = pos + dst.len();
            }
            return;
        }
        self.fill_bytes_refill(dst);
    }

    /// [`fill_bytes`](Self::fill_bytes) past the buffered bytes.
    #[inline(never)]
    fn fill_bytes_refill(&mut self, mut dst: &mut [u8]) {
        // 1. What is left in the buffer.
        dst = self.serve_buffered(dst);
        // 2. Whole refills straight into the caller's memory.
        let (blocks, tail) = dst.as_chunks_mut::<N>();
        if !blocks.is_empty() {
            self.core.generate_many(blocks);
        }
        // 3. The tail from a fresh buffer.
        if !tail.is_empty() {
            self.core.generate(&mut self.buf);
            self.pos = 0;
            let rest = self.serve_buffered(tail);
            // `tail.len() < N` and the buffer was just refilled with `N` bytes.
            debug_assert!(rest.is_empty());
        }
    }

    /// The next 4 bytes of the stream, little-endian.
    #[inline]
    pub(crate) fn next_u32(&mut self) -> u32 {
        u32::from_le_bytes(self.next_array())
    }

    /// The next 8 bytes of the stream, little-endian.
    #[inline]
    pub(crate) fn next_u64(&mut self) -> u64 {
        u64::from_le_bytes(self.next_array())
    }

    #[inline]
    fn next_array<const K: usize>(&mut self) -> [u8; K] {
        // `pos <= N` and `K <= 8`: the sum cannot overflow; `get_mut` turns a
        // range past `N` into the refill path instead of a panic.
        if let Some(src) = self.buf.get_mut(self.pos..self.pos + K) {
            // Fast path: all K bytes are buffered.
            let mut out = [0u8; K];
            out.copy_from_slice(src);
            src.fill(0);
            self.pos += K;
            out
        } else {
            self.next_array_refill()
        }
    }

    /// [`next_array`](Self::next_array) across a refill.
    #[inline(never)]
    fn next_array_refill<const K: usize>(&mut self) -> [u8; K] {
        let mut out = [0u8; K];
        self.fill_bytes_refill(&mut out);
        out
    }

    /// Serves as much of `dst` as the buffer holds, wiping what it serves; returns
    /// the part of `dst` still to fill.
    #[inline]
    fn serve_buffered<'a>(&mut self, dst: &'a mut [u8]) -> &'a mut [u8] {
        // `pos <= N`, so `N - pos` cannot underflow and `pos + n <= N`: the
        // split and the slice are in bounds (no panic).
        let n = dst.len().min(N - self.pos);
        let (now, later) = dst.split_at_mut(n);
        move_out(now, &mut self.buf[self.pos..self.pos + n]);
        self.pos += n;
        later
    }

    /// A stream restored from a saved state: `fill` gets the core and a zeroed
    /// buffer, writes the buffer (it may refill it from the core) and returns the
    /// position of the first unread byte (at most `N`; a larger value is taken as
    /// `N`, an empty buffer). The bytes before it are zeroed, as if served.
    pub(crate) fn restored(core: C, fill: impl FnOnce(&mut C, &mut [u8; N]) -> usize) -> Self {
        let mut rng = Self::new(core);
        let pos = fill(&mut rng.core, &mut rng.buf).min(N);
        rng.buf[..pos].fill(0);
        rng.pos = pos;
        rng
    }

    /// A stream restored from its core and its unread bytes (at most `N`; only the
    /// last `N` are kept if there are more): the unread bytes are served first,
    /// then the core's refills.
    pub(crate) fn from_unread(core: C, unread: &[u8]) -> Self {
        let unread = &unread[unread.len().saturating_sub(N)..];
        Self::restored(core, |_, buf| {
            buf[N - unread.len()..].copy_from_slice(unread);
            N - unread.len()
        })
    }

    /// The core (for saving: it makes the refill after the buffered one).
    pub(crate) fn core(&self) -> &C {
        &self.core
    }

    /// The unread bytes: the next bytes of the stream, in order.
    pub(crate) fn unread(&self) -> &[u8] {
        &self.buf[self.pos..]
    }

    /// The whole buffer and the position of the first unread byte (for saving in
    /// Go's encoding, which needs positions inside the key period).
    pub(crate) fn buffer_and_pos(&self) -> (&[u8; N], usize) {
        (&self.buf, self.pos)
    }

    /// The buffer's bytes and the position of the first unread one, for tests of
    /// the wiping (unit tests, and the `RATCHET_RNG_INSPECT` inspection hook).
    #[cfg(any(test, ratchet_rng_inspect))]
    pub(crate) fn buffer(&self) -> (&[u8; N], usize) {
        (&self.buf, self.pos)
    }
}

impl<C, const N: usize> Drop for BufferedRng<C, N> {
    #[inline(never)]
    fn drop(&mut self) {
        // Out of line: inlined where a new generator replaces an old one
        // (`slot = Some(G::from_seed(..))`), opt-level 3 built the new one in a
        // temporary as large as the buffer before this wipe of the old one: on
        // a Cortex-M4 (`.ci/firmware/measure.sh`), 1,092 bytes of stack to
        // construct a `ChaChaKeyErasureRng`, 24 out of line.
        self.buf.zeroize();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    /// A core whose stream is the byte sequence 0, 1, 2, ... (mod 251).
    struct Counting(u64);

    impl BlockCore<16> for Counting {
        fn generate(&mut self, out: &mut [u8; 16]) {
            for b in out {
                *b = (self.0 % 251) as u8;
                self.0 += 1;
            }
        }
    }

    fn expected(len: usize) -> Vec<u8> {
        (0..len as u64).map(|i| (i % 251) as u8).collect()
    }

    #[test]
    fn option_of_a_generator_needs_no_tag_of_its_own() {
        // The niche of `NicheByte` in each refill core; without it, on a build
        // where the backend enum is zero-sized (`RATCHET_RNG_BACKEND=soft`,
        // firmware), `Option` adds a tag and `Some(from_seed(..))` goes through
        // a temporary as large as the buffer.
        fn no_tag<G>() {
            assert_eq!(
                core::mem::size_of::<Option<G>>(),
                core::mem::size_of::<G>(),
                "{}",
                core::any::type_name::<G>()
            );
        }
        no_tag::<crate::AesCtrPoolRng>();
        no_tag::<crate::ChaChaKeyErasureRng>();
        no_tag::<crate::ChaCha12KeyErasureRng>();
        no_tag::<crate::ChaCha20KeyErasureRng>();
    }

    #[test]
    fn splits_and_integers_read_one_stream() {
        let mut rng = BufferedRng::new(Counting(0));
        let mut got = Vec::new();
        for len in [0usize, 1, 3, 15, 16, 17, 0, 31, 32, 33, 64, 5] {
            let mut chunk = std::vec![0u8; len];
            rng.fill_bytes(&mut chunk);
            got.extend_from_slice(&chunk);
            got.extend_from_slice(&rng.next_u32().to_le_bytes());
            got.extend_from_slice(&rng.next_u64().to_le_bytes());
        }
        assert_eq!(got, expected(got.len()));
    }

    #[test]
    fn served_bytes_are_wiped() {
        let mut rng = BufferedRng::new(Counting(1));
        let mut out = [0u8; 5];
        rng.fill_bytes(&mut out);
        let _ = rng.next_u64();
        let (buf, pos) = rng.buffer();
        assert_eq!(pos, 13);
        assert!(buf[..pos].iter().all(|&b| b == 0));
        assert!(buf[pos..].iter().any(|&b| b != 0));
        // Reading across the boundary leaves a wiped prefix of the new refill.
        let _ = rng.next_u64();
        let (buf, pos) = rng.buffer();
        assert_eq!(pos, 5);
        assert!(buf[..pos].iter().all(|&b| b == 0));
    }

    /// Every length class of `move_out` (bytes, the overlapping 4/8/16/32-byte
    /// moves, `memcpy`) copies exactly and wipes exactly the source.
    #[test]
    fn move_out_copies_and_wipes_every_length() {
        for len in 0..=130usize {
            let mut src: Vec<u8> = (1..=len).map(|i| (i % 255 + 1) as u8).collect();
            let want = src.clone();
            let mut dst = std::vec![0u8; len];
            move_out(&mut dst, &mut src);
            assert_eq!(dst, want, "len {len}");
            assert!(src.iter().all(|&b| b == 0), "len {len}");
        }
    }
}
