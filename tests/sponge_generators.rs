//! Properties specific to `ShakeRng` and `TurboShakeRng` (the shared ones are in
//! `streams.rs`): the first ratchet period is the plain XOF output, computed by
//! an independent implementation (RustCrypto), and the ratchet then departs from
//! it; `SpongeSeed`'s conversions.

use crate::common;

use common::{one_fill, proptest_config};
use proptest::prelude::*;
use ratchet_rng::{ShakeRng, SpongeSeed, TurboShakeRng};
use shake::{ExtendableOutput, Update, XofReader};

/// Output bytes between two ratchets.
const PERIOD: usize = 1088;

proptest! {
    #![proptest_config(proptest_config(256))]
    /// The first ratchet period is the plain XOF output of the key, computed by an
    /// independent implementation.
    #[test]
    fn first_period_is_the_xof_output(key in proptest::collection::vec(any::<u8>(), 0..400)) {
        let mut want = vec![0u8; PERIOD];
        let mut h = shake::Shake256::default();
        h.update(&key);
        h.finalize_xof().read(&mut want);
        prop_assert_eq!(one_fill(&mut ShakeRng::from_key(&key), PERIOD), want);

        let mut want = vec![0u8; PERIOD];
        let mut h = turboshake::TurboShake256::default();
        h.update(&key);
        h.finalize_xof().read(&mut want);
        prop_assert_eq!(one_fill(&mut TurboShakeRng::from_key(&key), PERIOD), want);
    }
}

/// After the first period the stream is *not* the XOF's continuation: the ratchet
/// changed the state.
#[test]
fn ratchet_departs_from_the_plain_xof() {
    let mut plain = vec![0u8; 2 * PERIOD];
    let mut h = turboshake::TurboShake256::default();
    h.update(b"key");
    h.finalize_xof().read(&mut plain);
    let ours = one_fill(&mut TurboShakeRng::from_key(b"key"), 2 * PERIOD);
    assert_eq!(ours[..PERIOD], plain[..PERIOD]);
    assert_ne!(ours[PERIOD..PERIOD + 32], plain[PERIOD..PERIOD + 32]);
}

#[test]
fn spongeseed_conversions() {
    let bytes: [u8; 136] = core::array::from_fn(|i| i as u8);
    let mut seed = SpongeSeed::from(bytes);
    assert_eq!(seed.as_ref(), &bytes[..]);
    seed.as_mut()[0] = 0xff;
    assert_eq!(seed.as_ref()[0], 0xff);
    assert!(SpongeSeed::default().as_ref().iter().all(|&b| b == 0));
    assert_eq!(format!("{seed:?}"), "SpongeSeed { .. }");
}
