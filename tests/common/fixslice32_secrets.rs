//! The words the 32-bit AES kernel (`src/aes/fixslice32.rs`) holds while it
//! fills a pool under a key: what a stack scan looks for after it returns.
//! Shared by `tests/fixslice32_stack.rs` (x86_64, through `hazmat`) and the
//! firmware's `stack residue` check (`.ci/firmware/src/main.rs`, Cortex-M4F
//! and RISC-V) through `#[path]`: `core` only, no allocation.
//!
//! Computed here from FIPS 197 and the kernel's documented layout (its module
//! docs), not by the kernel: a byte `n` of block `b` (0 or 1) of a batch sits
//! at bit `8 * row + 2 * column + b` of each plane (`row = n % 4`,
//! `column = n / 4`), plane `i` holding bit `i` of every byte; round key `r`
//! is stored with the lag `r % 4` of the state it meets (ShiftRows undone `r`
//! times) and, for `r` >= 1, with the S-box constant added (planes 0, 1, 5 and
//! 6 complemented). The S-box and the cipher are table-driven here: test code,
//! whose inputs are the test's own keys.

/// Secret words per key: the key as 8 big-endian and 8 little-endian words,
/// 15 round keys of 8 planes, the first round's S-box planes (8) and the 64
/// planes of its last byte.
pub const WORDS_PER_KEY: usize = 16 + 15 * 8 + 8 + 64;

/// What each word of [`secret_words`] is, by index.
pub fn kind(index: usize) -> &'static str {
    match index % WORDS_PER_KEY {
        0..16 => "key word",
        16..136 => "round-key plane",
        136..144 => "first-round S-box plane",
        _ => "first-round last-byte plane",
    }
}

/// `x * y` in GF(2^8) modulo the AES polynomial.
fn gf_mul(mut x: u8, mut y: u8) -> u8 {
    let mut product = 0;
    while y != 0 {
        if y & 1 != 0 {
            product ^= x;
        }
        x = (x << 1) ^ if x & 0x80 != 0 { 0x1b } else { 0 };
        y >>= 1;
    }
    product
}

/// The AES S-box (FIPS 197 §5.1.1): the inverse in GF(2^8), then the affine
/// map.
pub fn sbox(x: u8) -> u8 {
    // x^254 = x^-1 (0 for 0).
    let mut inverse = 1u8;
    for _ in 0..254 {
        inverse = gf_mul(inverse, x);
    }
    let b = inverse;
    b ^ b.rotate_left(1) ^ b.rotate_left(2) ^ b.rotate_left(3) ^ b.rotate_left(4) ^ 0x63
}

/// FIPS 197 KeyExpansion for AES-256: the 60 schedule words.
pub fn key_schedule(key: &[u8; 32], table: &[u8; 256]) -> [u32; 60] {
    let mut w = [0u32; 60];
    for (i, chunk) in key.chunks_exact(4).enumerate() {
        w[i] = u32::from_be_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
    }
    let sub_word = |x: u32| u32::from_be_bytes(x.to_be_bytes().map(|b| table[usize::from(b)]));
    let mut rcon = 1u32;
    for i in 8..60 {
        let mut temp = w[i - 1];
        if i % 8 == 0 {
            temp = sub_word(temp.rotate_left(8)) ^ (rcon << 24);
            rcon <<= 1;
        } else if i % 8 == 4 {
            temp = sub_word(temp);
        }
        w[i] = w[i - 8] ^ temp;
    }
    w
}

/// The 256 values of the S-box.
pub fn sbox_table() -> [u8; 256] {
    let mut table = [0u8; 256];
    for (x, s) in table.iter_mut().enumerate() {
        *s = sbox(x as u8);
    }
    table
}

/// Planes of a batch whose two blocks both hold `state[row][column]`.
fn planes(state: &[[u8; 4]; 4]) -> [u32; 8] {
    let mut planes = [0u32; 8];
    for (row, bytes) in state.iter().enumerate() {
        for (column, byte) in bytes.iter().enumerate() {
            for (i, plane) in planes.iter_mut().enumerate() {
                let bit = u32::from(byte >> i) & 1;
                *plane |= (bit * 0b11) << (8 * row + 2 * column);
            }
        }
    }
    planes
}

/// AES-256 of one block (FIPS 197 §5.1) with the schedule `w`.
pub fn encrypt(w: &[u32; 60], table: &[u8; 256], block: [u8; 16]) -> [u8; 16] {
    let mut s = block;
    let add_round_key = |s: &mut [u8; 16], round: usize| {
        for column in 0..4 {
            let k = w[4 * round + column].to_be_bytes();
            for row in 0..4 {
                s[4 * column + row] ^= k[row];
            }
        }
    };
    add_round_key(&mut s, 0);
    for round in 1..=14 {
        s = s.map(|b| table[usize::from(b)]);
        let shifted = s;
        for column in 0..4 {
            for row in 0..4 {
                s[4 * column + row] = shifted[4 * ((column + row) % 4) + row];
            }
        }
        if round < 14 {
            for column in 0..4 {
                let c = [
                    s[4 * column],
                    s[4 * column + 1],
                    s[4 * column + 2],
                    s[4 * column + 3],
                ];
                for row in 0..4 {
                    s[4 * column + row] = gf_mul(c[row], 2)
                        ^ gf_mul(c[(row + 1) % 4], 3)
                        ^ c[(row + 2) % 4]
                        ^ c[(row + 3) % 4];
                }
            }
        }
        add_round_key(&mut s, round);
    }
    s
}

/// The key of the pool after the one under `key`: counter blocks 0 and 1.
pub fn next_key(key: &[u8; 32]) -> [u8; 32] {
    let table = sbox_table();
    let w = key_schedule(key, &table);
    let mut next = [0u8; 32];
    for (counter, half) in next.chunks_exact_mut(16).enumerate() {
        half.copy_from_slice(&encrypt(&w, &table, (counter as u128).to_be_bytes()));
    }
    next
}

/// Every secret word of a pool under `key` (see [`WORDS_PER_KEY`] and
/// [`kind`]).
pub fn secret_words(key: &[u8; 32]) -> [u32; WORDS_PER_KEY] {
    let table = sbox_table();
    let w = key_schedule(key, &table);
    let mut out = [0u32; WORDS_PER_KEY];
    for (i, chunk) in key.chunks_exact(4).enumerate() {
        let bytes = [chunk[0], chunk[1], chunk[2], chunk[3]];
        out[i] = u32::from_be_bytes(bytes);
        out[8 + i] = u32::from_le_bytes(bytes);
    }
    // Round key r with lag r % 4: at (row, column) the byte the
    // specification has at column `column - lag * row`.
    for round in 0..15 {
        let lag = round % 4;
        let mut state = [[0u8; 4]; 4];
        for (row, bytes) in state.iter_mut().enumerate() {
            for (column, byte) in bytes.iter_mut().enumerate() {
                let k = (column + 16 - lag * row) % 4;
                *byte = w[4 * round + k].to_be_bytes()[row];
            }
        }
        let mut p = planes(&state);
        if round > 0 {
            for i in [0, 1, 5, 6] {
                p[i] = !p[i];
            }
        }
        out[16 + 8 * round..24 + 8 * round].copy_from_slice(&p);
    }
    // The first SubBytes of round key 0 (without the S-box constant), byte
    // 15 cleared; then byte 15 for the counters 32 * m + p at bit p.
    let mut state = [[0u8; 4]; 4];
    for (row, bytes) in state.iter_mut().enumerate() {
        for (column, byte) in bytes.iter_mut().enumerate() {
            *byte = table[usize::from(key[4 * column + row])] ^ 0x63;
        }
    }
    let mut base = planes(&state);
    for plane in &mut base {
        *plane &= !(0b11 << 30);
    }
    out[136..144].copy_from_slice(&base);
    for m in 0..8 {
        for p in 0..32 {
            let byte = table[usize::from(key[15] ^ (32 * m + p) as u8)] ^ 0x63;
            for i in 0..8 {
                out[144 + 8 * m + i] |= u32::from(byte >> i & 1) << p;
            }
        }
    }
    out
}
