//! SHAKE256 and TurboSHAKE256 from RustCrypto's independent implementations
//! (`shake` 0.1, `turboshake` 0.7): the oracle of `tests/xof_oracle.rs` and of
//! the `from_key` fuzz target (`fuzz/fuzz_targets/from_key.rs`, which includes
//! this file by path). Only those two crates are used here: the fuzz crate has
//! none of the test crates' other dependencies.

use shake::{ExtendableOutput, Update, XofReader};

/// The first `len` bytes of SHAKE256(`msg`).
pub fn shake256(msg: &[u8], len: usize) -> Vec<u8> {
    let mut h = shake::Shake256::default();
    h.update(msg);
    let mut out = vec![0u8; len];
    h.finalize_xof().read(&mut out);
    out
}

/// The first `len` bytes of TurboSHAKE256(`msg`, `domain`), for the domain
/// bytes the tests and the generators use (the oracle takes its domain byte as
/// a const generic).
pub fn turboshake256(msg: &[u8], domain: u8, len: usize) -> Vec<u8> {
    fn run<const D: u8>(msg: &[u8], len: usize) -> Vec<u8> {
        let mut h = turboshake::CTurboShake256::<D>::default();
        h.update(msg);
        let mut out = vec![0u8; len];
        h.finalize_xof().read(&mut out);
        out
    }
    match domain {
        // The generators' domains: TurboShakeRng, then ChaCha8/12/20 and AES
        // key derivation.
        0x1F => run::<0x1F>(msg, len),
        0x08 => run::<0x08>(msg, len),
        0x0C => run::<0x0C>(msg, len),
        0x14 => run::<0x14>(msg, len),
        0x41 => run::<0x41>(msg, len),
        // Further domains the XOF tests draw from.
        0x01 => run::<0x01>(msg, len),
        0x06 => run::<0x06>(msg, len),
        0x7F => run::<0x7F>(msg, len),
        _ => unreachable!("domain {domain:#04x} not instantiated"),
    }
}
