//! The `serde` feature (issue 47): a struct holding generators is checkpointed
//! through serde_json and bincode 2 mid-stream and continues the same streams;
//! the serialized form is the bytes of `save()` (so `SavedState` serializes the
//! same way); bad input of every kind is an error, never a panic; and the forms
//! are frozen in `tests/data/serde_frozen.json` and `tests/data/serde_frozen.bincode`,
//! written once by `write_frozen_files` below (its side-car,
//! `tests/data/serde_frozen.txt`, says how) from generators checked against
//! `tests/data/golden_streams.txt`.
//!
//! Under Miri (`cfg(miri)`: half a minute per 4 KiB pool of the portable AES)
//! the checkpoint's `AesCtrPoolRng` is serialized but never drawn from, and the
//! frozen forms (4 KiB of every generator) are not checked.
#![cfg(feature = "serde")]

use crate::common;

use common::{field, hex, one_fill};
use ratchet_rng::rand_core::{Rng, SeedableRng};
use ratchet_rng::{
    AesCtrPoolRng, ChaCha12KeyErasureRng, ChaCha20KeyErasureRng, ChaChaKeyErasureRng,
    SAVED_STATE_MAX_BYTES, SavedState, ShakeRng, TurboShakeRng,
};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// bincode 2's standard configuration (little-endian, variable-length integers):
/// the binary format of these tests and of the frozen file.
const BINCODE: bincode::config::Configuration = bincode::config::standard();

fn to_json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("serializes")
}

fn to_bincode<T: Serialize>(value: &T) -> Vec<u8> {
    bincode::serde::encode_to_vec(value, BINCODE).expect("serializes")
}

/// Decodes all of `bytes` (owned: serde's `visit_byte_buf`, or `visit_bytes`).
fn from_bincode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, bincode::error::DecodeError> {
    let (value, read) = bincode::serde::decode_from_slice(bytes, BINCODE)?;
    assert_eq!(read, bytes.len(), "trailing bytes");
    Ok(value)
}

/// Decodes all of `bytes`, borrowing (serde's `visit_borrowed_bytes`).
fn from_bincode_borrowed<'de, T: Deserialize<'de>>(
    bytes: &'de [u8],
) -> Result<T, bincode::error::DecodeError> {
    let (value, read) = bincode::serde::borrow_decode_from_slice(bytes, BINCODE)?;
    assert_eq!(read, bytes.len(), "trailing bytes");
    Ok(value)
}

// --- the checkpoint --------------------------------------------------------

/// A simulation's state, as a user of `rand_chacha`'s serde feature writes it.
#[derive(Serialize, Deserialize)]
struct Simulation {
    step: u64,
    chacha: ChaChaKeyErasureRng,
    aes: AesCtrPoolRng,
    turboshake: TurboShakeRng,
}

impl Simulation {
    fn new() -> Self {
        Self {
            step: 0,
            chacha: ChaChaKeyErasureRng::seed_from_u64(47),
            aes: AesCtrPoolRng::seed_from_u64(47),
            turboshake: TurboShakeRng::from_key(b"issue 47"),
        }
    }

    /// Each generator's next `len` bytes.
    fn draw(&mut self, len: usize) -> [Vec<u8>; 3] {
        self.step += 1;
        [
            one_fill(&mut self.chacha, len),
            // A pool is half a minute under Miri: serialized there, not drawn.
            one_fill(&mut self.aes, if cfg!(miri) { 0 } else { len }),
            one_fill(&mut self.turboshake, len),
        ]
    }
}

/// Every generator drawn to the middle of a buffer (ChaCha8 mid-word and past a
/// key period, where Go's encoding has a `readbuf:` part; AES with most of its
/// pool unread, unless under Miri), then checkpointed: both restored copies
/// continue each stream exactly as the original does, across the next refill.
#[test]
fn a_checkpoint_continues_every_stream_through_json_and_bincode() {
    let mut sim = Simulation::new();
    let _ = one_fill(&mut sim.chacha, 1003);
    if !cfg!(miri) {
        sim.aes.next_u64();
    }
    let _ = one_fill(&mut sim.turboshake, 1100);
    sim.turboshake.next_u32();

    let json = to_json(&sim);
    let binary = to_bincode(&sim);
    let mut from_json: Simulation = serde_json::from_str(&json).expect("own JSON");
    let mut from_binary: Simulation = from_bincode(&binary).expect("own bincode");
    let mut borrowed: Simulation = from_bincode_borrowed(&binary).expect("own bincode");
    // The same state serializes to the same bytes again.
    assert_eq!(to_json(&from_json), json);
    assert_eq!(to_bincode(&from_binary), binary);
    assert_eq!(to_bincode(&borrowed), binary);

    let len = if cfg!(miri) { 64 } else { 4100 };
    let want = sim.draw(len);
    assert_eq!(from_json.draw(len), want, "JSON");
    assert_eq!(from_binary.draw(len), want, "bincode");
    assert_eq!(borrowed.draw(len), want, "bincode, borrowed");
    assert_eq!((from_json.step, from_binary.step), (sim.step, sim.step));
}

/// Compact: the form is the saved bytes and the format's length, never
/// `SavedState`'s inline buffer; JSON holds them as an array of numbers.
#[test]
fn the_form_is_the_saved_bytes() {
    let mut rng = ChaCha12KeyErasureRng::from_seed([0x11; 32]);
    let _ = one_fill(&mut rng, 989);
    let saved = rng.save();
    assert_eq!(saved.as_ref().len(), 12 + 32 + 3);
    let mut bincode_form = vec![47u8]; // bincode's varint length
    bincode_form.extend_from_slice(saved.as_ref());
    assert_eq!(to_bincode(&rng), bincode_form);
    let json_numbers: Vec<String> = saved.as_ref().iter().map(u8::to_string).collect();
    assert_eq!(to_json(&rng), format!("[{}]", json_numbers.join(",")));
    // `SavedState` serializes the same way.
    assert_eq!(to_bincode(&saved), bincode_form);
    assert_eq!(to_json(&saved), to_json(&rng));
}

/// `SavedState` is `Clone`, round-trips through both formats, and restores the
/// generator it came from.
#[test]
fn saved_states_round_trip_and_clone() {
    let mut rng = ShakeRng::from_key(b"saved state");
    let _ = one_fill(&mut rng, 77);
    let saved = rng.save();
    let copy = saved.clone();
    assert_eq!(copy.as_ref(), saved.as_ref());
    let from_json: SavedState = serde_json::from_str(&to_json(&saved)).expect("JSON");
    let from_binary: SavedState = from_bincode(&to_bincode(&saved)).expect("bincode");
    assert_eq!(from_json.as_ref(), saved.as_ref());
    assert_eq!(from_binary.as_ref(), saved.as_ref());
    let mut restored = ShakeRng::restore(from_json.as_ref()).expect("restores");
    assert_eq!(one_fill(&mut restored, 2000), one_fill(&mut rng, 2000));
    // A generator's form is a `SavedState`'s, and the other way round.
    let mut via_state: ShakeRng = from_bincode(&to_bincode(&from_binary)).expect("a state");
    let mut direct = ShakeRng::restore(saved.as_ref()).unwrap();
    assert_eq!(one_fill(&mut via_state, 100), one_fill(&mut direct, 100));
    // Every generator's state, the largest one included.
    let states = [
        TurboShakeRng::from_key(b"s").save(),
        ChaChaKeyErasureRng::from_key(b"s").save(),
        ChaCha20KeyErasureRng::from_key(b"s").save(),
        AesCtrPoolRng::from_key(b"s").save(),
        largest_aes_state(),
    ];
    for state in states {
        let back: SavedState = from_bincode(&to_bincode(&state)).expect("a state");
        assert_eq!(back.as_ref(), state.as_ref());
    }
}

/// The largest saved state (`SAVED_STATE_MAX_BYTES`): an AES pool all unread,
/// built without generating one (one pool is half a minute under Miri).
fn largest_aes_state() -> SavedState {
    let mut bytes = b"ratchet:\x01\x06".to_vec();
    bytes.extend_from_slice(&4064u16.to_le_bytes());
    bytes.extend_from_slice(&[0x5A; 32 + 4064]);
    assert_eq!(bytes.len(), SAVED_STATE_MAX_BYTES);
    let state: SavedState = from_bincode(&to_bincode(&serde_bytes(&bytes))).expect("valid");
    state
}

/// `bytes` as a serde byte string (what `save()`'s bytes serialize as).
fn serde_bytes(bytes: &[u8]) -> impl Serialize + '_ {
    struct Bytes<'a>(&'a [u8]);
    impl Serialize for Bytes<'_> {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_bytes(self.0)
        }
    }
    Bytes(bytes)
}

// --- bad input ---------------------------------------------------------------------

/// The JSON error for `json` read as `T`, which must be one.
fn json_error<T: DeserializeOwned>(json: &str) -> String {
    match serde_json::from_str::<T>(json) {
        Ok(_) => panic!("accepted {json:.80}"),
        Err(err) => err.to_string(),
    }
}

/// The bincode error for `bytes` read as `T`, which must be one both when
/// decoding owned bytes and when borrowing them (the error borrowing gives, with
/// the `RestoreError`'s message, is the same).
fn bincode_error<T: DeserializeOwned>(bytes: &[u8]) -> String {
    let owned = match from_bincode::<T>(bytes) {
        Ok(_) => panic!("accepted {:?}", &bytes[..bytes.len().min(40)]),
        Err(err) => err.to_string(),
    };
    let borrowed = match from_bincode_borrowed::<T>(bytes) {
        Ok(_) => panic!("accepted (borrowed) {:?}", &bytes[..bytes.len().min(40)]),
        Err(err) => err.to_string(),
    };
    if owned.starts_with("OtherString") {
        assert_eq!(owned, borrowed);
    }
    owned
}

/// JSON for `bytes` as the array of numbers serde_json writes.
fn json_array(bytes: &[u8]) -> String {
    to_json(&serde_bytes(bytes))
}

#[test]
fn garbage_is_an_error_not_a_panic() {
    let mut rng = ChaCha20KeyErasureRng::from_key(b"garbage");
    let _ = one_fill(&mut rng, 5);
    let saved = rng.save();
    let good = saved.as_ref();

    let wrong_magic = [b"ratchit:", &good[8..]].concat();
    let wrong_version = [&good[..8], &[2], &good[9..]].concat();
    let truncated = &good[..good.len() - 1];
    let trailing = [good, &[0]].concat();
    let too_long = vec![0u8; SAVED_STATE_MAX_BYTES + 1];
    let cases: [(&[u8], &str); 6] = [
        (&wrong_magic, "not a saved generator state (wrong magic)"),
        (&wrong_version, "saved state version 2 is not supported"),
        (truncated, "saved state has the wrong length"),
        (&trailing, "saved state has the wrong length"),
        (&too_long, "saved state has the wrong length"),
        (b"", "saved state has the wrong length"),
    ];
    for (bytes, message) in cases {
        let json = json_array(bytes);
        let binary = to_bincode(&serde_bytes(bytes));
        assert!(
            json_error::<ChaCha20KeyErasureRng>(&json).starts_with(message),
            "{message}"
        );
        assert!(bincode_error::<ChaCha20KeyErasureRng>(&binary).contains(message));
        assert!(json_error::<SavedState>(&json).starts_with(message));
        assert!(bincode_error::<SavedState>(&binary).contains(message));
    }
    // Another generator's state (the id found), and Go's encoding for another one.
    assert!(
        json_error::<ChaCha12KeyErasureRng>(&json_array(good))
            .starts_with("the state was saved by another generator (id 5)")
    );
    let go = ChaChaKeyErasureRng::from_key(b"garbage").save();
    assert!(
        bincode_error::<AesCtrPoolRng>(&to_bincode(&go))
            .contains("not a saved generator state (wrong magic)")
    );
    // A generator's state is a `SavedState` whichever generator it is.
    let _: SavedState = serde_json::from_str(&json_array(go.as_ref())).expect("Go's state");

    // Wrong types: a string, numbers, an object, a map, an element out of `u8`.
    for json in [
        "\"ratchet:\"",
        "7",
        "-1",
        "null",
        "{\"bytes\":[1,2]}",
        "[1,2,256]",
        "[1,2,-3]",
        "[1.5]",
        "[[1]]",
    ] {
        json_error::<ChaCha20KeyErasureRng>(json);
        json_error::<SavedState>(json);
    }
    // A JSON array far longer than any state: refused at its first byte too many.
    let huge = format!("[{}0]", "0,".repeat(1 << 20));
    assert!(json_error::<SavedState>(&huge).starts_with("saved state has the wrong length"));

    // bincode: a length prefix past the input, a cut input, a number for bytes.
    let binary = to_bincode(&rng);
    bincode_error::<ChaCha20KeyErasureRng>(&binary[..binary.len() - 1]);
    bincode_error::<ChaCha20KeyErasureRng>(&binary[..1]);
    bincode_error::<ChaCha20KeyErasureRng>(&[]);
    let mut claims_more = to_bincode(&100_000u64);
    claims_more.extend_from_slice(&good[..20]);
    bincode_error::<ChaCha20KeyErasureRng>(&claims_more);
    bincode_error::<SavedState>(&claims_more);
}

/// What `SavedState` refuses beyond each generator's `restore`: bytes that no
/// generator restores, judged as `restore` would (a version before a generator).
#[test]
fn saved_states_are_only_what_some_generator_restores() {
    let refused: [(&[u8], &str); 7] = [
        (b"ratchet:", "saved state has the wrong length"),
        (b"ratchet:\x01", "saved state has the wrong length"),
        (b"ratchet:\x01\x07\0", "saved state has the wrong length"),
        (
            b"ratchet:\x01\x03\0\0",
            "the state was saved by another generator (id 3)",
        ),
        (
            b"ratchet:\x01\x07\0\0",
            "the state was saved by another generator (id 7)",
        ),
        (
            b"ratchet:\x09\x07\0\0",
            "saved state version 9 is not supported",
        ),
        (b"chacha8:", "saved state has the wrong length"),
    ];
    for (bytes, message) in refused {
        assert!(
            json_error::<SavedState>(&json_array(bytes)).starts_with(message),
            "{message}"
        );
    }
    let mut bad_position = b"ratchet:\x01\x02".to_vec();
    bad_position.extend_from_slice(&1089u16.to_le_bytes());
    bad_position.extend_from_slice(&[0; 200 + 1089]);
    assert!(
        bincode_error::<SavedState>(&to_bincode(&serde_bytes(&bad_position)))
            .contains("saved state position is outside the period")
    );
}

// --- the frozen forms ----------------------------------------------------------------

/// Every seeded generator, at a position inside a buffer past its first refill.
#[derive(Serialize, Deserialize)]
struct Frozen {
    turboshake: TurboShakeRng,
    shake: ShakeRng,
    chacha8: ChaChaKeyErasureRng,
    chacha12: ChaCha12KeyErasureRng,
    chacha20: ChaCha20KeyErasureRng,
    aes_ctr_pool: AesCtrPoolRng,
}

/// The bytes each field's generator read from `from_seed` of the golden "iota"
/// seed (bytes 0, 1, 2, ...) before it was frozen: a few bytes before its
/// buffer's end (ChaCha8 mid-word, so Go's `readbuf:` part is there).
const FROZEN_POSITIONS: [(&str, usize); 6] = [
    ("turboshake", 2170),
    ("shake", 3260),
    ("chacha8", 1003),
    ("chacha12", 1980),
    ("chacha20", 2973),
    ("aes_ctr_pool", 4000),
];

const FROZEN_JSON: &str = include_str!("data/serde_frozen.json");
const FROZEN_BINCODE: &[u8] = include_bytes!("data/serde_frozen.bincode");
const FROZEN_ABOUT: &str = include_str!("data/serde_frozen.txt");
const DATA_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");

/// The side-car `tests/data/serde_frozen.txt`.
const ABOUT: &str = "\
# ratchet-rng serde forms: the value-stability contract of the `serde` feature.
# Written by ratchet-rng 0.1.0's `write_frozen_files` in tests/serde_checkpoints.rs
# (`cargo test --features serde --test contracts -- --ignored --exact
# serde_checkpoints::write_frozen_files`), with the two files beside this one:
#   serde_frozen.json     serde_json 1, compact (one line)
#   serde_frozen.bincode  bincode 2 through its serde layer, config::standard()
#                         (little-endian, variable-length integers)
# Each holds one struct of six fields, in this order: turboshake, shake, chacha8,
# chacha12, chacha20, aes_ctr_pool. Field GEN is GEN::from_seed(iota) (iota = the
# bytes 0, 1, 2, ...: 136 of them for turboshake/shake, 32 for the others) after
# reading N bytes, N = 2170, 3260, 1003, 1980, 2973, 4000 in field order: inside
# a buffer, past the first refill. A generator serializes as the bytes of its
# save() (docs/DERIVATION.md section 2): JSON as an array of numbers, bincode as a
# length and the bytes. Frozen: `frozen_forms_are_stable` deserializes both files,
# checks that each generator continues the golden stream (tests/data/
# golden_streams.txt, GEN/iota, from byte N to 4096), and that the current code
# serializes the same positions to the same bytes; a changed byte is a breaking
# change.
";

fn iota<R: SeedableRng>() -> R {
    let mut seed = R::Seed::default();
    for (i, b) in seed.as_mut().iter_mut().enumerate() {
        *b = i as u8;
    }
    R::from_seed(seed)
}

fn advanced<R: Rng + SeedableRng>(name: &str) -> R {
    let mut rng = iota::<R>();
    let (_, pos) = FROZEN_POSITIONS.iter().find(|(n, _)| *n == name).unwrap();
    let _ = one_fill(&mut rng, *pos);
    rng
}

/// The frozen positions, computed now.
fn frozen_now() -> Frozen {
    Frozen {
        turboshake: advanced("turboshake"),
        shake: advanced("shake"),
        chacha8: advanced("chacha8"),
        chacha12: advanced("chacha12"),
        chacha20: advanced("chacha20"),
        aes_ctr_pool: advanced("aes_ctr_pool"),
    }
}

/// Each field's next bytes, to the end of its golden stream (4096 bytes), and
/// that field's golden bytes there.
fn continued(frozen: &mut Frozen) -> Vec<(&'static str, Vec<u8>, Vec<u8>)> {
    const GOLDEN: &str = include_str!("data/golden_streams.txt");
    let mut out = Vec::new();
    for (name, pos) in FROZEN_POSITIONS {
        let len = 4096 - pos;
        let got = match name {
            "turboshake" => one_fill(&mut frozen.turboshake, len),
            "shake" => one_fill(&mut frozen.shake, len),
            "chacha8" => one_fill(&mut frozen.chacha8, len),
            "chacha12" => one_fill(&mut frozen.chacha12, len),
            "chacha20" => one_fill(&mut frozen.chacha20, len),
            _ => one_fill(&mut frozen.aes_ctr_pool, len),
        };
        let golden = hex(field(GOLDEN, &format!("{name}/iota")))[pos..].to_vec();
        out.push((name, got, golden));
    }
    out
}

#[test]
#[cfg_attr(miri, ignore = "4 KiB of every generator: minutes under Miri")]
fn frozen_forms_are_stable() {
    assert_eq!(FROZEN_ABOUT, ABOUT, "the side-car is the writer's text");
    let now = frozen_now();
    assert_eq!(to_json(&now), FROZEN_JSON.trim_end(), "JSON form changed");
    assert_eq!(to_bincode(&now), FROZEN_BINCODE, "bincode form changed");

    let from_json: Frozen = serde_json::from_str(FROZEN_JSON).expect("frozen JSON");
    let from_binary: Frozen = from_bincode(FROZEN_BINCODE).expect("frozen bincode");
    for mut frozen in [from_json, from_binary, frozen_now()] {
        // The saved bytes restore the same position as the serialized form.
        let mut restored = ChaChaKeyErasureRng::restore(frozen.chacha8.save().as_ref()).unwrap();
        assert!(restored.save().as_ref().starts_with(b"readbuf:"));
        let after = one_fill(&mut restored, 64);
        for (name, got, golden) in continued(&mut frozen) {
            assert_eq!(got, golden, "{name}: not the golden stream");
            if name == "chacha8" {
                assert_eq!(got[..64], after[..]);
            }
        }
    }
}

/// Rewrites the frozen files from the current code. Only for adding a generator
/// or a format (never to "fix" a failing test: a changed form is a breaking
/// change): run `cargo test --features serde --test contracts -- --ignored
/// --exact serde_checkpoints::write_frozen_files`, then review the diff.
#[test]
#[ignore = "writes tests/data/serde_frozen.*; run by hand only"]
fn write_frozen_files() {
    let now = frozen_now();
    std::fs::write(
        format!("{DATA_DIR}/serde_frozen.json"),
        to_json(&now) + "\n",
    )
    .unwrap();
    std::fs::write(format!("{DATA_DIR}/serde_frozen.bincode"), to_bincode(&now)).unwrap();
    std::fs::write(format!("{DATA_DIR}/serde_frozen.txt"), ABOUT).unwrap();
}
