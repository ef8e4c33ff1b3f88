//! The seeded generators behind one trait, for generic save/restore checks: used
//! by `tests/save_restore.rs` and by the `restore` fuzz target, which includes
//! this file by path (it uses nothing but `ratchet_rng`).

use ratchet_rng::rand_core::Rng;
use ratchet_rng::{
    AesCtrPoolRng, ChaCha12KeyErasureRng, ChaCha20KeyErasureRng, ChaChaKeyErasureRng, RestoreError,
    SavedState, ShakeRng, TurboShakeRng,
};

/// The generators' save/restore surface.
pub trait Saveable: Rng + Sized {
    /// The generator keyed by `key` (`from_key`).
    fn make(key: &[u8]) -> Self;
    fn save(&self) -> SavedState;
    fn restore(bytes: &[u8]) -> Result<Self, RestoreError>;
}

macro_rules! saveable {
    ($($name:ident),*) => {$(
        impl Saveable for $name {
            fn make(key: &[u8]) -> Self {
                $name::from_key(key)
            }
            fn save(&self) -> SavedState {
                $name::save(self)
            }
            fn restore(bytes: &[u8]) -> Result<Self, RestoreError> {
                $name::restore(bytes)
            }
        }
    )*};
}

saveable!(
    TurboShakeRng,
    ShakeRng,
    ChaChaKeyErasureRng,
    ChaCha12KeyErasureRng,
    ChaCha20KeyErasureRng,
    AesCtrPoolRng
);
