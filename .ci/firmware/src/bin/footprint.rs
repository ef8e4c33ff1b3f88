#![no_std]
#![no_main]
use ratchet_rng_firmware::{exit, println};
#[unsafe(no_mangle)]
extern "C" fn firmware_main() -> ! {
    println!("baseline");
    exit(true)
}
