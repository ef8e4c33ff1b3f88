//! `restore` on arbitrary bytes (issue 13): it never panics, and a state it
//! accepts saves to bytes that restore to the same state and the same stream.
//!
//! Input layout: byte 0 selects the generator (mod 6). If its top bit is clear,
//! the rest is the input as is (arbitrary bytes). If it is set, bytes 1 and 2
//! give a read length (little-endian): a genuine state is saved after that many
//! bytes and the rest of the input is XORed over it (and appended past its end),
//! so the fuzzer also explores near-valid states (a changed length byte,
//! position, readbuf, trailing bytes).
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../tests/common/saveable.rs"]
mod saveable;
use ratchet_rng::rand_core::Rng;
use ratchet_rng::{
    AesCtrPoolRng, ChaCha12KeyErasureRng, ChaCha20KeyErasureRng, ChaChaKeyErasureRng, ShakeRng,
    TurboShakeRng,
};
use saveable::Saveable;

fn next(rng: &mut impl Rng) -> [u8; 64] {
    let mut out = [0u8; 64];
    rng.fill_bytes(&mut out);
    out
}

fn check<G: Saveable>(data: &[u8], near_valid: bool) {
    let input: Vec<u8> = if near_valid {
        let [lo, hi, rest @ ..] = data else { return };
        let mut rng = G::make(b"fuzz restore");
        let mut skip = vec![0u8; usize::from(u16::from_le_bytes([*lo, *hi])) % 9000];
        rng.fill_bytes(&mut skip);
        let mut state = rng.save().as_ref().to_vec();
        for (i, b) in rest.iter().enumerate() {
            match state.get_mut(i) {
                Some(s) => *s ^= b,
                None => state.push(*b),
            }
        }
        state
    } else {
        data.to_vec()
    };
    let Ok(mut rng) = G::restore(&input) else {
        return;
    };
    let saved = rng.save();
    let mut again = G::restore(saved.as_ref()).expect("a saved state restores");
    assert_eq!(
        again.save().as_ref(),
        saved.as_ref(),
        "save does not round-trip"
    );
    assert_eq!(
        next(&mut again),
        next(&mut rng),
        "the restored stream differs"
    );
}

fuzz_target!(|data: &[u8]| {
    let [which, rest @ ..] = data else { return };
    let near_valid = which & 0x80 != 0;
    match which % 6 {
        0 => check::<TurboShakeRng>(rest, near_valid),
        1 => check::<ShakeRng>(rest, near_valid),
        2 => check::<ChaChaKeyErasureRng>(rest, near_valid),
        3 => check::<ChaCha12KeyErasureRng>(rest, near_valid),
        4 => check::<ChaCha20KeyErasureRng>(rest, near_valid),
        _ => check::<AesCtrPoolRng>(rest, near_valid),
    }
});
