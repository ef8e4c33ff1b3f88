//! The stack scan of `tests/scalar32_stack.rs` and `tests/fixslice32_stack.rs`:
//! run a kernel deep below the test's frame, then read the stack it used
//! through `/proc/self/mem` (Linux).

use std::fs::File;
use std::hint::black_box;
use std::io::{Read, Seek, SeekFrom};

/// Stack between the scan's frame and the kernel's.
pub const DEPTH: usize = 32 * 1024;

/// The address of a local of the caller's frame: about its stack pointer.
#[inline(never)]
pub fn stack_address() -> usize {
    let marker = 0u8;
    black_box(&marker) as *const u8 as usize
}

/// Runs `f` at least [`DEPTH`] bytes further down the stack; returns the
/// address of the padding's low end (the kernel's frames are below it).
#[inline(never)]
pub fn deep(f: &mut dyn FnMut()) -> usize {
    let padding = [0u8; DEPTH];
    black_box(&padding);
    f();
    black_box(&padding);
    padding.as_ptr() as usize
}

/// Reads `len` bytes of this process's memory at `address`.
pub fn read_memory(address: usize, len: usize) -> Vec<u8> {
    let mut mem = File::open("/proc/self/mem").expect("/proc/self/mem");
    mem.seek(SeekFrom::Start(address as u64)).expect("seek");
    let mut bytes = vec![0u8; len];
    mem.read_exact(&mut bytes).expect("read the stack");
    bytes
}
