/// A random (version 4) UUID from this thread's generator, `ratchet_rng::rng()`.
/// `uuid::Uuid::new_v4()` would read `getrandom` instead.
pub fn new_v4() -> uuid::Uuid {
    let mut bytes = [0u8; 16];
    ratchet_rng::fill(&mut bytes);
    uuid::Builder::from_random_bytes(bytes).into_uuid()
}
