//! Property tests of the crate's SHAKE256 / TurboSHAKE256 against RustCrypto's
//! independent implementations (`shake` 0.1 and `turboshake` 0.7), for random
//! messages and output lengths, with absorbs and squeezes split at random points.

use crate::common;

use common::oracle::{shake256 as oracle_shake, turboshake256 as oracle_turbo};
use common::proptest_config;
use proptest::prelude::*;
use ratchet_rng::xof::{Shake256, TurboShake256, shake256, turboshake256};

/// Cuts `len` into consecutive pieces at the given (unsorted) cut points.
fn pieces(len: usize, cuts: &[usize]) -> Vec<std::ops::Range<usize>> {
    let mut points: Vec<usize> = cuts.iter().map(|&c| c % (len + 1)).collect();
    points.push(0);
    points.push(len);
    points.sort_unstable();
    points.windows(2).map(|w| w[0]..w[1]).collect()
}

/// Absorbs `msg` into `hasher` in the pieces `absorb_cuts` gives, finalizes, and
/// squeezes `out_len` bytes in the pieces `squeeze_cuts` gives. A macro: the two
/// XOFs have the same methods but share no trait.
macro_rules! absorb_and_squeeze_in_pieces {
    ($hasher:expr, $msg:expr, $absorb_cuts:expr, $out_len:expr, $squeeze_cuts:expr) => {{
        let mut hasher = $hasher;
        for r in pieces($msg.len(), $absorb_cuts) {
            hasher.absorb(&$msg[r]);
        }
        let mut reader = hasher.finalize();
        let mut got = vec![0u8; $out_len];
        for r in pieces($out_len, $squeeze_cuts) {
            reader.squeeze(&mut got[r]);
        }
        got
    }};
}

proptest! {
    #![proptest_config(proptest_config(256))]

    #[test]
    fn shake256_matches_oracle(
        msg in proptest::collection::vec(any::<u8>(), 0..700),
        out_len in 0usize..1200,
        absorb_cuts in proptest::collection::vec(any::<usize>(), 0..6),
        squeeze_cuts in proptest::collection::vec(any::<usize>(), 0..6),
    ) {
        let want = oracle_shake(&msg, out_len);
        let got =
            absorb_and_squeeze_in_pieces!(Shake256::new(), msg, &absorb_cuts, out_len, &squeeze_cuts);
        prop_assert_eq!(&got, &want);
        if out_len >= 64 {
            prop_assert_eq!(&shake256::<64>(&msg)[..], &want[..64]);
        }
    }

    #[test]
    fn turboshake256_matches_oracle(
        msg in proptest::collection::vec(any::<u8>(), 0..700),
        domain in prop::sample::select(vec![0x01u8, 0x06, 0x1F, 0x7F]),
        out_len in 0usize..1200,
        absorb_cuts in proptest::collection::vec(any::<usize>(), 0..6),
        squeeze_cuts in proptest::collection::vec(any::<usize>(), 0..6),
    ) {
        let want = oracle_turbo(&msg, domain, out_len);
        let hasher = TurboShake256::new(domain).unwrap();
        let got = absorb_and_squeeze_in_pieces!(hasher, msg, &absorb_cuts, out_len, &squeeze_cuts);
        prop_assert_eq!(&got, &want);
        if out_len >= 64 {
            prop_assert_eq!(&turboshake256::<64>(&msg, domain).unwrap()[..], &want[..64]);
        }
    }
}
