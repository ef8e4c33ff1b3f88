//! The fixsliced AES-256 Cipher on eight bit planes of either width, written
//! once for both portable kernels: [`fixsliced_cipher!`] expands to the
//! functions of the rounds for one plane type, `u64` in [`soft`](super::soft)
//! (four blocks; the specification) and `u32` in
//! [`fixslice32`](super::fixslice32) (two blocks, for 32-bit cores).
//!
//! A macro, not functions generic over the plane type: the generic version of
//! this code, tried, does the same operations but came out scheduled
//! differently, with more spills (at opt-level 3 on the Cortex-M4, 2.5% more
//! instructions per byte of `AesCtrPoolRng`); the expansion is the code each
//! kernel had written out, and compiles to the same instructions.
//!
//! A plane holds one bit of every byte of a batch: row `i` of the state in
//! its bits `ROW_BITS * i..ROW_BITS * (i + 1)`, and in a row, column `c` in
//! the `ROW_BITS / 4` bits from `ROW_BITS / 4 * c`, one bit per block (each
//! kernel's module docs give its layout). The rounds are fixsliced: ShiftRows
//! is never applied, the state after round `r` has lag `r mod 4`, round key
//! `r` is stored with the same lag, and one `shift_rows(2)` follows the last
//! round.
//!
//! Everything is written out plane by plane (a loop over the eight planes is
//! left rolled at opt-level "s", with a counter and indexed loads), and every
//! rotation amount and mask is a compile-time constant after inlining: the
//! data are only XORed, ANDed, rotated and shifted, with no branch or table
//! lookup on them.
#![forbid(unsafe_code)]

/// Defines, in the invoking module, the functions of the fixsliced rounds on
/// eight `$plane` bit planes: `cipher`, `rounds_after_first_sub_bytes`,
/// `round`, `add_round_key`, `sub_bytes`, `map_planes`, `zip_planes`,
/// `rotate_rows_and_columns`, `shift_rows`, `mix_columns` and
/// `exchange_index_bits`. A row of a plane takes `$row_bits` bits;
/// `$row_starts` has a 1 at the start of every row; `$position_bit_clear[k]`
/// has the positions whose bit `k` is 0; `$rounds_inline` is the `inline`
/// attribute of `rounds_after_first_sub_bytes`. Needs `sbox_circuit` in scope.
macro_rules! fixsliced_cipher {
    (
        plane: $plane:ty,
        row_bits: $row_bits:literal,
        row_starts: $row_starts:literal,
        position_bit_clear: $position_bit_clear:expr,
        rounds_inline: $rounds_inline:meta $(,)?
    ) => {
        // ---------------------------------------------------------------------------
        // The cipher (FIPS 197 §5.1)
        // ---------------------------------------------------------------------------

        /// FIPS 197 Cipher on a bitsliced state, fixsliced: see the module docs.
        fn cipher(round_keys: &[[$plane; 8]; 15], state: &mut [$plane; 8]) {
            add_round_key(state, &round_keys[0]);
            sub_bytes(state);
            rounds_after_first_sub_bytes(round_keys, state);
        }

        /// The Cipher from the first round's MixColumns on (`fixslice32`'s pool
        /// computes the first AddRoundKey and SubBytes once per key).
        #[$rounds_inline]
        fn rounds_after_first_sub_bytes(round_keys: &[[$plane; 8]; 15], state: &mut [$plane; 8]) {
            mix_columns::<1>(state);
            add_round_key(state, &round_keys[1]);
            // Rounds 2..=13, the lag cycling 2, 3, 0, 1. Their keys in groups
            // of four, so that no index is checked (a failed check could
            // observe `state`, which would have to be stored before each).
            let (groups, _) = round_keys[2..14].as_chunks::<4>();
            for [k2, k3, k0, k1] in groups {
                round::<2>(state, k2);
                round::<3>(state, k3);
                round::<0>(state, k0);
                round::<1>(state, k1);
            }
            // The final round has no MixColumns; its ShiftRows is the 14th one
            // skipped, leaving a lag of 2, which `shift_rows(2)` removes.
            sub_bytes(state);
            add_round_key(state, &round_keys[14]);
            shift_rows(state, 2);
        }

        /// One full round whose state leaves with lag `LAG`: SubBytes, (ShiftRows,
        /// skipped), MixColumns, AddRoundKey.
        #[inline(always)]
        fn round<const LAG: u32>(state: &mut [$plane; 8], round_key: &[$plane; 8]) {
            sub_bytes(state);
            mix_columns::<LAG>(state);
            add_round_key(state, round_key);
        }

        /// AddRoundKey: XOR of the round key, plane by plane.
        #[inline(always)]
        fn add_round_key(state: &mut [$plane; 8], round_key: &[$plane; 8]) {
            *state = zip_planes(*state, *round_key, |s, k| s ^ k);
        }

        /// SubBytes on every byte: [`sbox_circuit`]. Not forced inline (at opt-level
        /// "s" it is one copy for the 14 rounds and the key schedule).
        #[inline]
        fn sub_bytes(state: &mut [$plane; 8]) {
            *state = sbox_circuit(*state);
        }

        /// `f` on each plane, written out plane by plane.
        #[inline(always)]
        fn map_planes(state: [$plane; 8], f: impl Fn($plane) -> $plane) -> [$plane; 8] {
            let [p0, p1, p2, p3, p4, p5, p6, p7] = state;
            [f(p0), f(p1), f(p2), f(p3), f(p4), f(p5), f(p6), f(p7)]
        }

        /// `f` on each pair of planes of `a` and `b`, written out as [`map_planes`].
        #[inline(always)]
        fn zip_planes(
            a: [$plane; 8],
            b: [$plane; 8],
            f: impl Fn($plane, $plane) -> $plane,
        ) -> [$plane; 8] {
            let [a0, a1, a2, a3, a4, a5, a6, a7] = a;
            let [b0, b1, b2, b3, b4, b5, b6, b7] = b;
            [
                f(a0, b0),
                f(a1, b1),
                f(a2, b2),
                f(a3, b3),
                f(a4, b4),
                f(a5, b5),
                f(a6, b6),
                f(a7, b7),
            ]
        }

        /// Moves every byte of a plane `rows` rows up and `columns` columns left
        /// (both cyclically): the result has at row `i`, column `c` the byte that
        /// `x` has at row `i + rows`, column `c + columns`.
        ///
        /// Bytes whose column does not wrap move by one rotation of the whole word;
        /// bytes whose column wraps past 3 move one row less, which is one row
        /// more before the same rotation. So: mask each group in place (two
        /// constant masks), move the wrapping one a row down, merge, and rotate
        /// the whole. The last rotation is left to the caller's XOR, where ARM
        /// folds it into the operand (`eor r0, r1, r2, ror #n`), as it does the
        /// row move into the merge (`orr`): three instructions and no mask held
        /// in a register. The other form, two rotations merged by a mask, is
        /// rewritten by the compiler into two ANDs with the mask and its
        /// complement held in registers, which an ARMv7-M round does not have
        /// to spare (4% more instructions per byte on the Cortex-M4).
        #[inline(always)]
        fn rotate_rows_and_columns(x: $plane, rows: u32, columns: u32) -> $plane {
            let width = 4 * $row_bits;
            let column_bits = $row_bits / 4;
            let columns = columns % 4;
            let distance = ($row_bits * rows + column_bits * columns) % width;
            if columns == 0 {
                return x.rotate_right(distance);
            }
            // In every row of the result, the columns `c < 4 - columns`, which
            // do not wrap; `stays` is where their bytes are in `x`.
            let no_wrap: $plane = $row_starts * ((1 << ($row_bits - column_bits * columns)) - 1);
            let stays = no_wrap.rotate_left(distance);
            let one_row_down = (x & !stays).rotate_left($row_bits);
            ((x & stays) | one_row_down).rotate_right(distance)
        }

        /// ShiftRows applied `times` times (FIPS 197 §5.1.2): row `i` rotates left
        /// by `times * i` columns.
        #[inline(always)]
        fn shift_rows(state: &mut [$plane; 8], times: usize) {
            let times = times as u32;
            // Row `i`'s bits.
            let row = |i: u32| (<$plane>::MAX >> (3 * $row_bits)) << ($row_bits * i);
            *state = map_planes(*state, |x| {
                (x & row(0))
                    | (rotate_rows_and_columns(x, 0, times) & row(1))
                    | (rotate_rows_and_columns(x, 0, 2 * times) & row(2))
                    | (rotate_rows_and_columns(x, 0, 3 * times) & row(3))
            });
        }

        /// MixColumns (FIPS 197 §5.1.3) on a state with lag `LAG`.
        ///
        /// Each output byte is `2*a0 ^ 3*a1 ^ a2 ^ a3`, where `a0` is the input byte
        /// at the same place and `a1`, `a2`, `a3` are the bytes one, two and three
        /// rows below it in the same specification column. With lag `LAG` the byte
        /// one row below is also `LAG` columns to the right, so "one row below" is
        /// `rotate_rows_and_columns(_, 1, LAG)`. Writing `t = a0 ^ a1`:
        ///
        /// ```text
        /// 2*a0 ^ 3*a1 ^ a2 ^ a3 = xtime(t) ^ a1 ^ (t two rows below)
        /// ```
        ///
        /// Plane `i` of `xtime(t)` (FIPS 197 §4.2.1) is plane `i - 1` of `t`, XOR
        /// plane 7 of `t` for `i` = 0, 1, 3, 4 (the bits of `0x1b`).
        #[inline(always)]
        fn mix_columns<const LAG: u32>(state: &mut [$plane; 8]) {
            let below = |x: $plane| rotate_rows_and_columns(x, 1, LAG);
            let two_below = |x: $plane| rotate_rows_and_columns(x, 2, 2 * LAG);
            // Plane by plane, in order, so that few values are live at once (13
            // registers on ARMv7-M): plane `i` needs only planes `i - 1` and 7 of `t`.
            // `mix(xtime_plane, s)`: from a plane `s` of the state and the same plane
            // of `xtime(t)`, that plane of the output and of `t`.
            let mix = |xtime_plane: $plane, s: $plane| {
                let b = below(s);
                let t = s ^ b;
                (xtime_plane ^ b ^ two_below(t), t)
            };
            let [s0, s1, s2, s3, s4, s5, s6, s7] = *state;
            let b7 = below(s7);
            let t7 = s7 ^ b7;
            let (out0, t0) = mix(t7, s0);
            let (out1, t1) = mix(t0 ^ t7, s1);
            let (out2, t2) = mix(t1, s2);
            let (out3, t3) = mix(t2 ^ t7, s3);
            let (out4, t4) = mix(t3 ^ t7, s4);
            let (out5, t5) = mix(t4, s5);
            let (out6, t6) = mix(t5, s6);
            let out7 = t6 ^ b7 ^ two_below(t7);
            *state = [out0, out1, out2, out3, out4, out5, out6, out7];
        }

        // ---------------------------------------------------------------------------
        // Conversion between blocks and bit planes
        // ---------------------------------------------------------------------------

        /// Swaps word-index bit `WORD_BIT` with position bit `POSITION_BIT` in all
        /// eight words: for each pair of words differing only in `WORD_BIT`, the bits
        /// of the lower word whose position bit is 1 trade places with the bits of
        /// the upper word whose position bit is 0 (SWAPMOVE). Each kernel's bitslicing
        /// is a sequence of these exchanges (see the tables in `soft.rs` and
        /// `fixslice32.rs`).
        #[inline(always)]
        fn exchange_index_bits<const WORD_BIT: usize, const POSITION_BIT: usize>(
            words: &mut [$plane; 8],
        ) {
            let shift = 1u32 << POSITION_BIT;
            let mask = $position_bit_clear[POSITION_BIT];
            // The four pairs written out (not a loop: see the module docs).
            let mut swap_move = |pair: usize| {
                // `pair` with a 0 inserted at bit `WORD_BIT`, and with a 1.
                let low_bits = pair & ((1 << WORD_BIT) - 1);
                let lower = ((pair - low_bits) << 1) | low_bits;
                let upper = lower | (1 << WORD_BIT);
                let t = ((words[lower] >> shift) ^ words[upper]) & mask;
                words[upper] ^= t;
                words[lower] ^= t << shift;
            };
            swap_move(0);
            swap_move(1);
            swap_move(2);
            swap_move(3);
        }
    };
}
pub(super) use fixsliced_cipher;
