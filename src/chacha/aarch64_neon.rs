//! NEON ChaCha in the chacha8rand layout: two groups side by side per pass,
//! two passes per key period, the rounds in assembly.
//!
//! A group is word-sliced across its 4 blocks: `uint32x4_t` row `w` holds
//! state word `w` of the group's blocks in lane order, which is exactly the 16
//! output bytes at `256 * g + 16 * w`, stored straight (no transpose). Two
//! groups run side by side, so a wide core has 8 independent quarter rounds
//! per round instead of 4 serial dependency chains.
//!
//! The double rounds are one `asm!` block with the registers allocated by
//! hand ([`rounds`]). Compiled from intrinsics, the same rounds stored about
//! 36 rows to the stack and loaded as many back in every double round; under
//! `llvm-mca-19` that loop modelled 21–26 % slower than the assembly on
//! Neoverse N1, N2, V1 and V2 and 10 % slower on Cortex-A72 (the same on
//! Apple M1). Two groups' 32 rows and the two registers the rounds need
//! besides (a temporary for the shift rotations, the byte shuffle of the
//! rotation by 8) are 34 registers, two more than NEON has, so row 15 of each
//! group lives in a 64-byte scratch buffer and trades places with row 8 twice
//! per double round: 2 paired stores and 2 paired loads per double round. The
//! buffer is wiped when the batch ends.
//!
//! The first column round's quarter rounds on columns 1–3 read constants, key
//! words and the zero nonce only, so they are the same in all 16 blocks of a
//! key period: they are computed once per period, in scalar code
//! ([`first_column_round`]), instead of once per group: 12 of the period's
//! 128 vector quarter rounds become 3 scalar ones.
//!
//! Rotations: by 16 is `rev32` on 16-bit halves, by 8 a `tbl` byte shuffle,
//! by 12 and 7 a shift right and a shift-left-insert (`ushr` + `sli`). The
//! byte shuffle models faster than two shifts on every modelled core but
//! Cortex-A72/A76 (one double round of two groups: 114 against 124 cycles on
//! N1, 59 against 65 on V2), where `tbl` takes three micro-ops (132 against
//! 122); the kernel stays well ahead of the peer there.
//!
//! Every operation is an add, xor, fixed shift or fixed permutation, and every
//! load and store is at a fixed offset: no branch or address depends on key
//! or output bytes.

use core::arch::aarch64::{
    uint8x16_t, uint32x4_t, vaddq_u32, vdupq_n_u32, veorq_u32, vld1q_u8, vld1q_u32, vqtbl1q_u8,
    vreinterpretq_u8_u32, vreinterpretq_u16_u32, vreinterpretq_u32_u8, vreinterpretq_u32_u16,
    vrev32q_u16, vshrq_n_u32, vsliq_n_u32, vst1q_u8, vst1q_u32,
};
use core::arch::asm;

use zeroize::Zeroize;

use super::soft::{
    CONSTANTS, GROUP_BLOCKS, GROUP_BYTES, KEY_INDEX, KEY_PERIOD_OUTPUT_BYTES, KEY_WORDS,
    STATE_WORDS, double_rounds, quarter_round,
};

/// Bytes of one state word of one group (four 32-bit lanes).
const ROW_BYTES: usize = 16;

/// Groups computed side by side in one pass.
const PASS_GROUPS: usize = 2;

/// The state of one group: `x[w]` lane `l` is word `w` of the group's block `l`.
type GroupState = [uint32x4_t; STATE_WORDS];

/// Rows of a group kept in registers through the rounds: all but row 15.
const REGISTER_ROWS: usize = STATE_WORDS - 1;

/// The `tbl` indices that rotate each 32-bit lane left by 8: byte `i` of a
/// little-endian lane takes byte `i - 1 (mod 4)` of the same lane.
const ROTATE_LEFT_8: [u8; 16] = [3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14];

/// The rows the rounds keep in memory: slots 0 and 1 hold row 15 of groups 0
/// and 1 between double rounds, slots 2 and 3 row 8 while row 15 is in its
/// register (see [`rounds`]).
#[repr(C, align(16))]
struct Scratch([[u32; GROUP_BLOCKS]; 2 * PASS_GROUPS]);

/// Stores a row to `out` as four little-endian words.
#[inline]
#[target_feature(enable = "neon")]
fn store_row(out: &mut [u8; ROW_BYTES], v: uint32x4_t) {
    // The lanes' bytes in memory order are the little-endian words (this
    // backend is compiled for little-endian targets only).
    let bytes = vreinterpretq_u8_u32(v);
    // SAFETY:
    // - `out` is a valid, writable 16-byte region (a `&mut [u8; 16]`);
    // - `vst1q_u8` has no alignment requirement beyond `u8`'s.
    unsafe { vst1q_u8(out.as_mut_ptr(), bytes) }
}

/// Stores a row to `out` as four words, lane `l` to `out[l]`.
#[inline]
#[target_feature(enable = "neon")]
fn store_words(out: &mut [u32; GROUP_BLOCKS], v: uint32x4_t) {
    // SAFETY:
    // - `out` is a valid, writable region of four `u32`s (a `&mut [u32; 4]`);
    // - `vst1q_u32` needs only `u32` alignment, which the array has.
    unsafe { vst1q_u32(out.as_mut_ptr(), v) }
}

/// Loads four words, `words[l]` to lane `l`.
#[inline]
#[target_feature(enable = "neon")]
fn load_words(words: &[u32; GROUP_BLOCKS]) -> uint32x4_t {
    // SAFETY:
    // - `words` is a valid, readable array of four `u32`s;
    // - `vld1q_u32` needs only `u32` alignment, which the array has.
    unsafe { vld1q_u32(words.as_ptr()) }
}

/// The four lanes `[first, first + 1, first + 2, first + 3]`.
#[inline]
#[target_feature(enable = "neon")]
fn counters(first: u32) -> uint32x4_t {
    load_words(&[first, first + 1, first + 2, first + 3])
}

/// The byte shuffle indices [`ROTATE_LEFT_8`] in a register.
#[inline]
#[target_feature(enable = "neon")]
fn rotate_left_8_indices() -> uint8x16_t {
    // SAFETY:
    // - `ROTATE_LEFT_8` is a valid, readable array of 16 bytes;
    // - `vld1q_u8` has no alignment requirement beyond `u8`'s.
    unsafe { vld1q_u8(ROTATE_LEFT_8.as_ptr()) }
}

/// Stores a group's rows to the 16-byte rows of `out` in order, stopping at
/// whichever ends first.
#[inline]
#[target_feature(enable = "neon")]
fn store_group(x: &GroupState, out: &mut [u8]) {
    let (rows, _) = out.as_chunks_mut::<ROW_BYTES>();
    for (row, word) in rows.iter_mut().zip(x) {
        store_row(row, *word);
    }
}

/// The key words, each broadcast to every lane.
#[inline]
#[target_feature(enable = "neon")]
fn broadcast_key(key: &[u32; KEY_WORDS]) -> [uint32x4_t; KEY_WORDS] {
    key.map(|word| vdupq_n_u32(word))
}

/// The assembly of the quarter rounds on four (group, quarter round) pairs,
/// each step issued for all four before the next, given as `(a, b, c, d)`
/// vector register numbers (RFC 8439 §2.1's names). `v30` is the temporary
/// of the shift rotations, `v31` holds [`ROTATE_LEFT_8`].
macro_rules! quarter_rounds {
    ($(($a:literal, $b:literal, $c:literal, $d:literal)),+ $(,)?) => {
        concat!(
            // a += b; d ^= a; d <<<= 16;
            $("add v", $a, ".4s, v", $a, ".4s, v", $b, ".4s\n",)+
            $("eor v", $d, ".16b, v", $d, ".16b, v", $a, ".16b\n",
              "rev32 v", $d, ".8h, v", $d, ".8h\n",)+
            // c += d; b ^= c; b <<<= 12;
            $("add v", $c, ".4s, v", $c, ".4s, v", $d, ".4s\n",)+
            $("eor v30.16b, v", $b, ".16b, v", $c, ".16b\n",
              "ushr v", $b, ".4s, v30.4s, #20\n",
              "sli v", $b, ".4s, v30.4s, #12\n",)+
            // a += b; d ^= a; d <<<= 8;
            $("add v", $a, ".4s, v", $a, ".4s, v", $b, ".4s\n",)+
            $("eor v", $d, ".16b, v", $d, ".16b, v", $a, ".16b\n",
              "tbl v", $d, ".16b, {{v", $d, ".16b}}, v31.16b\n",)+
            // c += d; b ^= c; b <<<= 7;
            $("add v", $c, ".4s, v", $c, ".4s, v", $d, ".4s\n",)+
            $("eor v30.16b, v", $b, ".16b, v", $c, ".16b\n",
              "ushr v", $b, ".4s, v30.4s, #25\n",
              "sli v", $b, ".4s, v30.4s, #7\n",)+
        )
    };
}

/// The rest of `count` double rounds (RFC 8439 `inner_block`) on the two
/// groups of a pass whose first column round is done: the first diagonal
/// round, then `count - 1` double rounds.
///
/// Registers: row `w` of group `g` is `v(15g + w)` (`x[g][w]`), except rows 8
/// and 15, which share a register: row 8 in `v8` (group 0) and `v23`
/// (group 1) while row 15 is in scratch slots 0 and 1, and the other way
/// round with row 8 in slots 2 and 3. The quarter rounds run two at a time
/// for both groups (four dependency chains in program order): columns 0 and
/// 1, columns 2 and 3, diagonals 0 and 1, diagonals 2 and 3. Row 8 is done
/// after columns 0 and 1 and not needed again before diagonals 2 and 3; row
/// 15 is needed from columns 2 and 3 to diagonals 0 and 1. So after columns
/// 0 and 1, row 8 goes out to slots 2–3 and row 15 comes in; after diagonals
/// 0 and 1 they trade back.
///
/// In: row 15 in `x[g][8]`, row 8 in `scratch.0[2 + g]` (the state after a
/// column round). Out: row 8 in `x[g][8]`, row 15 in `scratch.0[g]` (after a
/// diagonal round).
///
/// `count` must be at least 1 (the loop tests it after a double round).
#[inline]
#[target_feature(enable = "neon")]
fn rounds(x: &mut [[uint32x4_t; REGISTER_ROWS]; PASS_GROUPS], scratch: &mut Scratch, count: usize) {
    let rotate_left_8 = rotate_left_8_indices();
    let [g0, g1] = x;
    // SAFETY:
    // - the assembly reads and writes the registers it names as operands
    //   (`v0`–`v29` in and out, `v30` clobbered, `v31` read) and the flags
    //   (`subs`), and no others;
    // - its only memory accesses are the paired loads and stores of 16-byte
    //   rows at `scratch` + 0 and + 32, inside the 64 bytes of `scratch`, a
    //   valid, exclusively borrowed, 16-byte aligned `Scratch`; it keeps no
    //   pointer after it returns;
    // - it does not touch the stack (`nostack`);
    // - its branches stay inside the block (local labels `2` and `3`), and
    //   `count` is at least 1 (the callers pass `ROUNDS / 2`, which
    //   `double_rounds` in `soft.rs` makes positive), so after the first
    //   diagonal round the loop runs `count - 1` times and ends;
    // - it uses only NEON instructions, and NEON is enabled (this function's
    //   target feature and the target's baseline).
    unsafe {
        asm!(
            // The first column round is done: start at the diagonals.
            "b 3f",
            "2:",
            quarter_rounds!((0, 4, 8, 12), (15, 19, 23, 27), (1, 5, 9, 13), (16, 20, 24, 28)),
            // Row 8 is done for this round: out to slots 2–3, row 15 in.
            "stp q8, q23, [{scratch}, #32]",
            "ldp q8, q23, [{scratch}]",
            quarter_rounds!((2, 6, 10, 14), (17, 21, 25, 29), (3, 7, 11, 8), (18, 22, 26, 23)),
            "3:",
            quarter_rounds!((0, 5, 10, 8), (15, 20, 25, 23), (1, 6, 11, 12), (16, 21, 26, 27)),
            // Row 15 is done for this round: out to slots 0–1, row 8 in.
            "stp q8, q23, [{scratch}]",
            "ldp q8, q23, [{scratch}, #32]",
            quarter_rounds!((2, 7, 8, 13), (17, 22, 23, 28), (3, 4, 9, 14), (18, 19, 24, 29)),
            "subs {count}, {count}, #1",
            "b.ne 2b",
            count = inout(reg) count => _,
            scratch = in(reg) scratch.0.as_mut_ptr(),
            inout("v0") g0[0],
            inout("v1") g0[1],
            inout("v2") g0[2],
            inout("v3") g0[3],
            inout("v4") g0[4],
            inout("v5") g0[5],
            inout("v6") g0[6],
            inout("v7") g0[7],
            inout("v8") g0[8],
            inout("v9") g0[9],
            inout("v10") g0[10],
            inout("v11") g0[11],
            inout("v12") g0[12],
            inout("v13") g0[13],
            inout("v14") g0[14],
            inout("v15") g1[0],
            inout("v16") g1[1],
            inout("v17") g1[2],
            inout("v18") g1[3],
            inout("v19") g1[4],
            inout("v20") g1[5],
            inout("v21") g1[6],
            inout("v22") g1[7],
            inout("v23") g1[8],
            inout("v24") g1[9],
            inout("v25") g1[10],
            inout("v26") g1[11],
            inout("v27") g1[12],
            inout("v28") g1[13],
            inout("v29") g1[14],
            out("v30") _,
            in("v31") rotate_left_8,
            options(nostack),
        );
    }
}

/// The state words after the first column round that are the same in every
/// block of a key period: those of columns 1–3, whose quarter rounds read
/// only constant, key and nonce words (the nonce is zero). Column 0 (words 0,
/// 4, 8, 12) is left as it starts, but for word 0, which is `a += b`'s
/// result, the same in every block too.
#[inline]
fn first_column_round(key: &[u32; KEY_WORDS]) -> [u32; STATE_WORDS] {
    let mut s = [0; STATE_WORDS];
    s[..KEY_INDEX].copy_from_slice(&CONSTANTS);
    s[KEY_INDEX..KEY_INDEX + KEY_WORDS].copy_from_slice(key);
    // Word 12 is the counter, different in every block; it is not read here.
    quarter_round(&mut s, 1, 5, 9, 13);
    quarter_round(&mut s, 2, 6, 10, 14);
    quarter_round(&mut s, 3, 7, 11, 15);
    s[0] = s[0].wrapping_add(s[4]);
    s
}

/// Rotates each 32-bit lane left by 16 (swaps the 16-bit halves).
#[inline]
#[target_feature(enable = "neon")]
fn rotate_left_16(v: uint32x4_t) -> uint32x4_t {
    vreinterpretq_u32_u16(vrev32q_u16(vreinterpretq_u16_u32(v)))
}

/// Rotates each 32-bit lane left by 8 (a byte shuffle).
#[inline]
#[target_feature(enable = "neon")]
fn rotate_left_8(v: uint32x4_t, indices: uint8x16_t) -> uint32x4_t {
    vreinterpretq_u32_u8(vqtbl1q_u8(vreinterpretq_u8_u32(v), indices))
}

/// Rotates each 32-bit lane left by `L` (`R` = 32 - `L`): the shifted-right
/// value with the shifted-left one inserted above it. (Written the other way,
/// `sri` on `shl`, the compiler recognizes a rotation and emits `shl` and
/// `usra`, whose latency is twice `sli`'s on the Neoverse models.)
#[inline]
#[target_feature(enable = "neon")]
fn rotate_left<const L: i32, const R: i32>(v: uint32x4_t) -> uint32x4_t {
    const { assert!(L + R == 32) };
    vsliq_n_u32::<L>(vshrq_n_u32::<R>(v), v)
}

/// One pass: the groups with first block counters `first` and `first + 4`
/// under `key`, whose first column round for columns 1–3 is `shared` (from
/// [`first_column_round`]), with the feed-forward on the key words only.
#[inline]
#[target_feature(enable = "neon")]
fn pass<const ROUNDS: usize>(
    key: &[u32; KEY_WORDS],
    shared: &[u32; STATE_WORDS],
    first: u32,
    scratch: &mut Scratch,
) -> [GroupState; PASS_GROUPS] {
    let count = const { double_rounds::<ROUNDS>() };
    let rotate_left_8_indices = rotate_left_8_indices();

    // The first column round. Columns 1–3 are `shared`, broadcast; row 15
    // goes in row 8's register, as `rounds` wants it.
    let broadcast = shared.map(|word| vdupq_n_u32(word));
    let mut x = [broadcast; PASS_GROUPS].map(|g| {
        let mut rows = [g[0]; REGISTER_ROWS];
        rows.copy_from_slice(&g[..REGISTER_ROWS]);
        rows[8] = g[STATE_WORDS - 1];
        rows
    });
    // Column 0 (words 0, 4, 8, 12) differs by the counter in word 12: the
    // quarter round after `a += b` (already in `shared[0]`), for each group.
    let (a, b, c) = (broadcast[0], broadcast[4], broadcast[8]);
    for ((rows, row_8), group_first) in x
        .iter_mut()
        .zip(&mut scratch.0[PASS_GROUPS..])
        .zip([first, first + GROUP_BLOCKS as u32])
    {
        let d = rotate_left_16(veorq_u32(counters(group_first), a));
        let c = vaddq_u32(c, d);
        let b = rotate_left::<12, 20>(veorq_u32(b, c));
        let a = vaddq_u32(a, b);
        let d = rotate_left_8(veorq_u32(d, a), rotate_left_8_indices);
        let c = vaddq_u32(c, d);
        let b = rotate_left::<7, 25>(veorq_u32(b, c));
        (rows[0], rows[4], rows[12]) = (a, b, d);
        store_words(row_8, c);
    }

    rounds(&mut x, scratch, count);

    let k = broadcast_key(key);
    let zero = vdupq_n_u32(0);
    let mut groups = [[zero; STATE_WORDS]; PASS_GROUPS];
    for ((group, rows), last) in groups.iter_mut().zip(&x).zip(&scratch.0) {
        group[..REGISTER_ROWS].copy_from_slice(rows);
        group[REGISTER_ROWS] = load_words(last);
        for (row, key_row) in group[KEY_INDEX..KEY_INDEX + KEY_WORDS].iter_mut().zip(k) {
            *row = vaddq_u32(*row, key_row);
        }
    }
    groups
}

/// `out.len()` chacha8rand key periods with `ROUNDS` rounds, chained: period
/// `i` is computed under the key left by period `i - 1`, starting from `*key`;
/// `*key` ends as the key after the last period (unchanged if `out` is empty).
/// Same bytes as repeated `soft::key_period`.
///
/// # Security
/// `out` receives keystream. `*key` holds each period's key in turn (the next
/// key is written there as soon as the period's last group is computed). The
/// scratch rows of the rounds are wiped before returning; the rest of the
/// state lives in vector registers (and any spill slots the compiler picks
/// around the rounds), which safe code cannot wipe.
#[target_feature(enable = "neon")]
pub(crate) fn key_periods<const ROUNDS: usize>(
    key: &mut [u32; KEY_WORDS],
    out: &mut [[u8; KEY_PERIOD_OUTPUT_BYTES]],
) {
    let mut scratch = Scratch([[0; GROUP_BLOCKS]; 2 * PASS_GROUPS]);

    for period in out {
        // 992 = 3 × 256 + 224: three whole groups, then the last group's
        // words 0–13.
        let (groups, last) = period.as_chunks_mut::<GROUP_BYTES>();

        // Groups 0 and 1 (block counters 0–7).
        let shared = first_column_round(key);
        let [x0, x1] = pass::<ROUNDS>(key, &shared, 0, &mut scratch);
        store_group(&x0, &mut groups[0]);
        store_group(&x1, &mut groups[1]);

        // Groups 2 and 3 (block counters 8–15).
        let [x2, x3] = pass::<ROUNDS>(key, &shared, (2 * GROUP_BLOCKS) as u32, &mut scratch);
        store_group(&x2, &mut groups[2]);
        store_group(&x3, last);

        // The next key: words 14 and 15 of group 3, in that order.
        let (key_rows, _) = key.as_chunks_mut::<GROUP_BLOCKS>();
        store_words(&mut key_rows[0], x3[STATE_WORDS - 2]);
        store_words(&mut key_rows[1], x3[STATE_WORDS - 1]);
    }

    scratch.0.zeroize();
}
