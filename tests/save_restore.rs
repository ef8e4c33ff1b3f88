//! `save()` / `restore()` (issue 13): exact to the byte for every generator, Go's
//! `ChaCha8.MarshalBinary` encoding for `ChaChaKeyErasureRng` (the vectors of
//! `tests/data/go_chacha8_states.txt`, written by Go's own `math/rand/v2` through
//! `tests/go/chacha8_state`; `.ci/run` reruns that program and also checks the
//! other direction live), and bad input refused without a panic.
//!
//! Under Miri (`cfg(miri)`: seconds per KiB of ChaCha8, half a minute per
//! 4 KiB pool of the portable AES): every eighth Go vector, one position (past
//! a ChaCha period's first re-key) and one split per generator, the branches
//! of the crate's encoding on `ChaCha12KeyErasureRng` only, and
//! `AesCtrPoolRng` only where it generates nothing (the arbitrary-input
//! property).

use crate::common;

use common::saveable::Saveable;
use common::{hex, one_fill, proptest_config};
use proptest::prelude::*;
use ratchet_rng::rand_core::{Rng, SeedableRng};
use ratchet_rng::{
    AesCtrPoolRng, ChaCha12KeyErasureRng, ChaCha20KeyErasureRng, ChaChaKeyErasureRng, RestoreError,
    SAVED_STATE_MAX_BYTES, SeedTreeRng, ShakeRng, TurboShakeRng,
};

const GO_VECTORS: &str = include_str!("data/go_chacha8_states.txt");

// --- Go's vectors ---------------------------------------------------------------

/// Applies a Go operation script (see the file's header) to our generator, if it
/// has the same meaning on a byte stream: Go's `Uint64` skips a pending `Read`
/// buffer, ours reads the next 8 bytes, so a `u` after a read of a length that
/// is not a multiple of 8 has no equivalent. Returns false then.
fn apply_go_ops(rng: &mut ChaChaKeyErasureRng, ops: &str) -> bool {
    if ops == "-" {
        return true;
    }
    // Go's pending Read-buffer length, to refuse scripts without an equivalent.
    let mut read_len = 0usize;
    for op in ops.split(',') {
        let (op, times) = match op.split_once('*') {
            Some((op, k)) => (op, k.parse::<usize>().unwrap()),
            None => (op, 1),
        };
        for _ in 0..times {
            if op == "u" {
                if read_len != 0 {
                    return false;
                }
                rng.next_u64();
            } else {
                let n: usize = op[1..].parse().unwrap();
                let _ = one_fill(rng, n);
                read_len = if n <= read_len {
                    read_len - n
                } else {
                    (8 - (n - read_len) % 8) % 8
                };
            }
        }
    }
    true
}

/// The [`RestoreError`] a reject line names (its variants without a field).
fn named_error(name: &str) -> RestoreError {
    match name {
        "BadMagic" => RestoreError::BadMagic,
        "WrongLength" => RestoreError::WrongLength,
        "BadPosition" => RestoreError::BadPosition,
        "BadReadBuffer" => RestoreError::BadReadBuffer,
        other => panic!("unknown RestoreError {other}"),
    }
}

#[test]
fn go_vectors() {
    let (mut states, mut same_stream, mut accepts, mut rejects) = (0, 0, 0, 0);
    let lines = GO_VECTORS.lines().filter(|l| !l.starts_with('#'));
    for line in lines.step_by(if cfg!(miri) { 8 } else { 1 }) {
        let fields: Vec<&str> = line.split(' ').collect();
        match fields[0] {
            "state" => {
                let [_, seed, ops, marshal, next] = fields[..] else {
                    panic!("bad line {line}")
                };
                let marshal = hex(marshal);
                // Go's state continues here as in Go, and saves to the same bytes.
                let mut restored = ChaChaKeyErasureRng::restore(&marshal).expect(line);
                assert_eq!(restored.save().as_ref(), &marshal[..], "{line}");
                assert_eq!(one_fill(&mut restored, 64), hex(next), "{line}");
                // The same calls here save to Go's bytes exactly.
                let seed: [u8; 32] = hex(seed).try_into().unwrap();
                let mut ours = ChaChaKeyErasureRng::from_seed(seed);
                if apply_go_ops(&mut ours, ops) {
                    assert_eq!(ours.save().as_ref(), &marshal[..], "{line}");
                    assert_eq!(one_fill(&mut ours, 64), hex(next), "{line}");
                    same_stream += 1;
                }
                states += 1;
            }
            "accept" => {
                let [_, input, marshal, next] = fields[..] else {
                    panic!("bad line {line}")
                };
                let mut restored = ChaChaKeyErasureRng::restore(&hex(input)).expect(line);
                assert_eq!(restored.save().as_ref(), &hex(marshal)[..], "{line}");
                assert_eq!(one_fill(&mut restored, 64), hex(next), "{line}");
                accepts += 1;
            }
            "reject" => {
                let [_, input, "error" | "panic", want] = fields[..] else {
                    panic!("bad line {line}")
                };
                assert_eq!(
                    ChaChaKeyErasureRng::restore(&hex(input)).err(),
                    Some(named_error(want)),
                    "{line}"
                );
                rejects += 1;
            }
            other => panic!("unknown line kind {other}"),
        }
    }
    if cfg!(miri) {
        assert!(states > 0 && accepts > 0 && rejects > 0 && same_stream > 0);
    } else {
        assert_eq!((states, accepts, rejects), (84, 13, 18));
        assert!(
            same_stream >= 60,
            "{same_stream} scripts compared on the stream"
        );
    }
}

#[test]
fn go_readbuf_longer_than_8_bytes_is_an_error() {
    let mut input = b"readbuf:\x09".to_vec();
    input.extend_from_slice(&[0xAA; 9]);
    let state = ChaChaKeyErasureRng::from_seed([1; 32]).save();
    input.extend_from_slice(state.as_ref());
    assert_eq!(
        ChaChaKeyErasureRng::restore(&input).unwrap_err(),
        RestoreError::BadReadBuffer
    );
    // 8 bytes are fine (Go accepts them; MarshalBinary never writes them).
    let mut input = b"readbuf:\x08".to_vec();
    input.extend_from_slice(&[0xAA; 8]);
    input.extend_from_slice(state.as_ref());
    let mut rng = ChaChaKeyErasureRng::restore(&input).unwrap();
    assert_eq!(rng.save().as_ref(), &input[..]);
    assert_eq!(one_fill(&mut rng, 8), [0xAA; 8]);
    assert_eq!(rng.save().as_ref(), state.as_ref());
}

#[test]
fn go_readbuf_part_without_a_state_is_a_length_error() {
    // The readbuf part is whole (3 bytes announced, 3 there); the state after it
    // is missing, so the state has the wrong length (Go: "invalid ChaCha8
    // encoding", not its readbuf error).
    assert_eq!(
        ChaChaKeyErasureRng::restore(b"readbuf:\x03abc").unwrap_err(),
        RestoreError::WrongLength
    );
    assert_eq!(
        ChaChaKeyErasureRng::restore(b"readbuf:\x03ab").unwrap_err(),
        RestoreError::BadReadBuffer
    );
}

// --- exactness at every kind of position ------------------------------------------

/// Reads `pos` bytes in the pattern `split`, saves, restores; the restored
/// generator continues the stream exactly, and saves to the same bytes.
fn check_position<G: Saveable>(pos: usize, split: usize) {
    let mut rng = G::make(b"save/restore");
    let mut left = pos;
    let mut turn = 0;
    while left > 0 {
        let n = match turn % 3 {
            0 if left >= 8 => {
                rng.next_u64();
                8
            }
            1 if left >= 4 => {
                rng.next_u32();
                4
            }
            _ => {
                let n = left.min(split);
                let _ = one_fill(&mut rng, n);
                n
            }
        };
        left -= n;
        turn += 1;
    }
    let saved = rng.save();
    let mut restored = G::restore(saved.as_ref()).expect("own state");
    assert_eq!(restored.save().as_ref(), saved.as_ref(), "pos {pos}");
    let len = if cfg!(miri) { 100 } else { 9000 };
    let want = one_fill(&mut rng, len);
    let mut got = vec![restored.next_u32().to_le_bytes().to_vec()];
    got.push(one_fill(&mut restored, len - 4));
    assert_eq!(got.concat(), want, "pos {pos} split {split}");
}

const POSITIONS: [usize; 21] = [
    0, 1, 3, 7, 8, 9, 15, 991, 992, 993, 1000, 1087, 1088, 1089, 1984, 2176, 4063, 4064, 4065,
    8128, 9001,
];

fn check_all_positions<G: Saveable>() {
    let (positions, splits): (&[usize], &[usize]) = if cfg!(miri) {
        (&[993], &[5])
    } else {
        (&POSITIONS, &[1, 5, 13, 992, 5000])
    };
    for &pos in positions {
        for &split in splits {
            check_position::<G>(pos, split);
        }
    }
}

#[test]
fn every_generator_continues_exactly() {
    check_all_positions::<TurboShakeRng>();
    check_all_positions::<ShakeRng>();
    check_all_positions::<ChaChaKeyErasureRng>();
    check_all_positions::<ChaCha12KeyErasureRng>();
    check_all_positions::<ChaCha20KeyErasureRng>();
    if !cfg!(miri) {
        check_all_positions::<AesCtrPoolRng>();
    }
}

#[test]
fn own_encoding_layout() {
    let mut rng = ChaCha12KeyErasureRng::from_seed([0x11; 32]);
    let fresh = rng.save();
    // magic, version 1, id 4, no unread bytes, the key.
    let mut want = b"ratchet:\x01\x04\x00\x00".to_vec();
    want.extend_from_slice(&[0x11; 32]);
    assert_eq!(fresh.as_ref(), &want[..]);
    let first = one_fill(&mut rng, 3);
    let saved = rng.save();
    assert_eq!(saved.as_ref().len(), 12 + 32 + 989);
    assert_eq!(&saved.as_ref()[10..12], &989u16.to_le_bytes());
    // The key is the next period's, not the seed: the served bytes' key is gone.
    assert_ne!(&saved.as_ref()[12..44], &[0x11; 32]);
    let mut all = ChaCha12KeyErasureRng::from_seed([0x11; 32]);
    assert_eq!(one_fill(&mut all, 3), first);
    assert_eq!(&saved.as_ref()[44..], &one_fill(&mut all, 989)[..]);

    let aes = AesCtrPoolRng::from_seed([0; 32]);
    assert_eq!(aes.save().as_ref().len(), 44);
    if !cfg!(miri) {
        // One pool: half a minute under Miri.
        let mut aes_read = AesCtrPoolRng::from_seed([0; 32]);
        aes_read.next_u32();
        assert_eq!(aes_read.save().as_ref().len(), SAVED_STATE_MAX_BYTES - 4);
    }
    assert_eq!(TurboShakeRng::from_key(b"").save().as_ref().len(), 212);
}

#[test]
fn saved_state_debug_prints_no_bytes() {
    let saved = ChaChaKeyErasureRng::from_seed([7; 32]).save();
    assert_eq!(format!("{saved:?}"), "SavedState { len: 48, .. }");
}

// --- bad input --------------------------------------------------------------------

/// The crate's encoding cut to `len` bytes: what is there is right, so the
/// length is wrong (a cut inside the header too).
fn own_truncation(_saved: &[u8], _len: usize) -> RestoreError {
    RestoreError::WrongLength
}

/// Go's encoding cut to `len` bytes: inside `readbuf:` the magic is wrong
/// (`readbuf` is no prefix of `chacha8:`; nothing at all is a state of the
/// wrong length), inside the readbuf part that part is truncated, after it the
/// state has the wrong length.
fn go_truncation(saved: &[u8], len: usize) -> RestoreError {
    let readbuf_part = match saved.strip_prefix(b"readbuf:") {
        Some(rest) => 9 + usize::from(rest[0]),
        None => 0,
    };
    match len {
        1..8 if readbuf_part > 0 => RestoreError::BadMagic,
        1.. if len < readbuf_part => RestoreError::BadReadBuffer,
        _ => RestoreError::WrongLength,
    }
}

/// Every truncation and every extension by a byte of a valid state is refused,
/// each for its exact reason (`truncated(saved, len)`), and so is garbage.
fn check_refuses_damage<G: Saveable>(truncated: fn(&[u8], usize) -> RestoreError) {
    let mut rng = G::make(b"damage");
    let _ = one_fill(&mut rng, 13);
    let saved = rng.save();
    let bytes = saved.as_ref();
    for len in 0..bytes.len() {
        assert_eq!(
            G::restore(&bytes[..len]).err(),
            Some(truncated(bytes, len)),
            "truncated to {len}"
        );
    }
    let mut longer = bytes.to_vec();
    longer.push(0);
    assert_eq!(
        G::restore(&longer).err(),
        Some(RestoreError::WrongLength),
        "trailing byte"
    );
    assert_eq!(
        G::restore(&[0xFF; 4200]).err(),
        Some(RestoreError::BadMagic)
    );
}

#[test]
fn damaged_states_are_refused() {
    check_refuses_damage::<TurboShakeRng>(own_truncation);
    check_refuses_damage::<ShakeRng>(own_truncation);
    check_refuses_damage::<ChaChaKeyErasureRng>(go_truncation);
    assert!(
        ChaChaKeyErasureRng::make(b"damage")
            .save()
            .as_ref()
            .starts_with(b"chacha8:")
    );
    check_refuses_damage::<ChaCha12KeyErasureRng>(own_truncation);
    check_refuses_damage::<ChaCha20KeyErasureRng>(own_truncation);
    if !cfg!(miri) {
        check_refuses_damage::<AesCtrPoolRng>(own_truncation);
    }

    let chacha12 = ChaCha12KeyErasureRng::from_seed([3; 32]).save();
    assert_eq!(
        ChaCha20KeyErasureRng::restore(chacha12.as_ref()).unwrap_err(),
        RestoreError::WrongGenerator(4)
    );
    assert_eq!(
        ChaChaKeyErasureRng::restore(chacha12.as_ref()).unwrap_err(),
        RestoreError::BadMagic
    );
    let go = ChaChaKeyErasureRng::from_seed([3; 32]).save();
    assert_eq!(
        ChaCha12KeyErasureRng::restore(go.as_ref()).unwrap_err(),
        RestoreError::BadMagic
    );
    let mut v2 = chacha12.as_ref().to_vec();
    v2[8] = 2;
    assert_eq!(
        ChaCha12KeyErasureRng::restore(&v2).unwrap_err(),
        RestoreError::UnsupportedVersion(2)
    );
    // More unread bytes than a period holds, with the length to match.
    let mut big = b"ratchet:\x01\x04".to_vec();
    big.extend_from_slice(&993u16.to_le_bytes());
    big.extend_from_slice(&[0; 32 + 993]);
    assert_eq!(
        ChaCha12KeyErasureRng::restore(&big).unwrap_err(),
        RestoreError::BadPosition
    );
    // Go's used-word count past the period.
    let mut go125 = go.as_ref().to_vec();
    go125[15] = 125;
    assert_eq!(
        ChaChaKeyErasureRng::restore(&go125).unwrap_err(),
        RestoreError::BadPosition
    );
}

/// Each branch of the crate's encoding's parser, for generator `G` (its id and
/// its refill of `n` output bytes), pinned by its exact result: a bare header of
/// `G` (a length error) and of every other generator (a generator error, before
/// any length check), another version, a state with exactly `n` unread bytes
/// (allowed: `U <= N`, docs/DERIVATION.md) and with `n + 1` (refused).
fn check_own_encoding<G: Saveable + SeedTreeRng>(n: usize) {
    let mut rng = G::make(b"own encoding");
    let first = one_fill(&mut rng, n);
    let after = rng.save();
    let after = after.as_ref();
    // After exactly one refill's bytes: no unread byte, the next refill's core.
    assert_eq!(after[..12], own_header(G::TREE_ID, 0), "{n}");

    assert_eq!(
        G::restore(&own_header(G::TREE_ID, 0)).err(),
        Some(RestoreError::WrongLength)
    );
    for other in [1, 2, 3, 4, 5, 6, 7, 0xFF] {
        if other != G::TREE_ID {
            assert_eq!(
                G::restore(&own_header(other, 0)).err(),
                Some(RestoreError::WrongGenerator(other)),
                "a bare header of generator {other}"
            );
        }
    }
    let mut v0 = after.to_vec();
    v0[8] = 0;
    assert_eq!(
        G::restore(&v0).err(),
        Some(RestoreError::UnsupportedVersion(0))
    );

    // The first refill, all unread, before the core of the second: the stream
    // from its start.
    let mut full = own_header(G::TREE_ID, n).to_vec();
    full.extend_from_slice(&after[12..]);
    full.extend_from_slice(&first);
    let mut restored = G::restore(&full).expect("exactly n unread bytes");
    assert_eq!(restored.save().as_ref(), &full[..]);
    let mut twin = G::make(b"own encoding");
    assert_eq!(one_fill(&mut restored, n + 40), one_fill(&mut twin, n + 40));

    let mut over = own_header(G::TREE_ID, n + 1).to_vec();
    over.extend_from_slice(&full[12..]);
    over.push(0);
    assert_eq!(G::restore(&over).err(), Some(RestoreError::BadPosition));
}

/// The crate's encoding's 12-byte header: version 1, generator `id`, `unread`
/// bytes.
fn own_header(id: u8, unread: usize) -> [u8; 12] {
    let mut header = *b"ratchet:\x01\0\0\0";
    header[9] = id;
    header[10..].copy_from_slice(&u16::try_from(unread).unwrap().to_le_bytes());
    header
}

#[test]
fn own_encoding_branches_per_generator() {
    check_own_encoding::<ChaCha12KeyErasureRng>(992);
    if !cfg!(miri) {
        check_own_encoding::<ChaCha20KeyErasureRng>(992);
        check_own_encoding::<TurboShakeRng>(1088);
        check_own_encoding::<ShakeRng>(1088);
        check_own_encoding::<AesCtrPoolRng>(4064);
    }
}

#[test]
fn restore_error_messages() {
    let e: &dyn core::error::Error = &RestoreError::BadReadBuffer;
    assert_eq!(e.to_string(), "invalid ChaCha8 Read buffer encoding");
    assert_eq!(
        RestoreError::UnsupportedVersion(9).to_string(),
        "saved state version 9 is not supported"
    );
}

/// Restores `bytes` as `G`; if accepted, the state saves to bytes that restore to
/// the same stream.
fn restore_any<G: Saveable>(bytes: &[u8]) {
    if let Ok(mut rng) = G::restore(bytes) {
        let saved = rng.save();
        let mut again = G::restore(saved.as_ref()).expect("a saved state restores");
        assert_eq!(again.save().as_ref(), saved.as_ref());
        assert_eq!(one_fill(&mut again, 100), one_fill(&mut rng, 100));
    }
}

proptest! {
    #![proptest_config(proptest_config(256))]

    /// Arbitrary bytes, and valid states with a byte changed, never panic.
    #[test]
    fn arbitrary_input_never_panics(
        bytes in proptest::collection::vec(any::<u8>(), 0..1400),
        flip in any::<(usize, u8)>(),
        prefix in 0usize..5,
    ) {
        let prefixes: [&[u8]; 5] = [b"", b"ratchet:\x01\x04", b"ratchet:\x01\x01", b"readbuf:", b"chacha8:"];
        let mut input = prefixes[prefix].to_vec();
        input.extend_from_slice(&bytes);
        restore_any::<TurboShakeRng>(&input);
        restore_any::<ShakeRng>(&input);
        restore_any::<ChaChaKeyErasureRng>(&input);
        restore_any::<ChaCha12KeyErasureRng>(&input);
        restore_any::<ChaCha20KeyErasureRng>(&input);
        restore_any::<AesCtrPoolRng>(&input);

        let mut rng = ChaChaKeyErasureRng::from_seed([9; 32]);
        let _ = one_fill(&mut rng, flip.0 % 2000);
        let mut go = rng.save().as_ref().to_vec();
        let at = flip.0 % go.len();
        go[at] ^= flip.1;
        restore_any::<ChaChaKeyErasureRng>(&go);
    }
}
