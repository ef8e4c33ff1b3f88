//! Pipes between a test and the children it forks: shared by `tests/fork.rs`
//! and `tests/vm_generation.rs` through `#[path]`. Only `read`, `write` and
//! `pipe`: safe in the child of a multithreaded process.

/// A new pipe: (read end, write end).
pub fn pipe() -> (libc::c_int, libc::c_int) {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `fds` has room for the two descriptors.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    (fds[0], fds[1])
}

/// Writes all of `buf`; false if the pipe failed (no panic: children call it).
pub fn write_all(fd: libc::c_int, mut buf: &[u8]) -> bool {
    while !buf.is_empty() {
        // SAFETY: `buf` is valid for reads of its length.
        let n = unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) };
        if n <= 0 {
            return false;
        }
        buf = &buf[n as usize..];
    }
    true
}

/// Reads exactly `buf.len()` bytes; panics if the pipe closes first (the
/// child failed).
pub fn read_exact(fd: libc::c_int, buf: &mut [u8]) {
    let mut done = 0;
    while done < buf.len() {
        // SAFETY: the rest of `buf` is valid for writes of its length.
        let n = unsafe { libc::read(fd, buf[done..].as_mut_ptr().cast(), buf.len() - done) };
        assert!(n > 0, "pipe closed early (the child failed)");
        done += n as usize;
    }
}
