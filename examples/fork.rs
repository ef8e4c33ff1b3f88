//! Fork safety of the thread-local generator: the parent draws some bytes (so the
//! generator has output buffered), forks, and both processes print their next
//! 16 bytes. They differ: the child reseeded before its first output.
//!
//! `cargo run --example fork`

#[cfg(unix)]
fn main() {
    let mut warm = [0u8; 4];
    ratchet_rng::fill(&mut warm);
    // SAFETY: the child only generates, prints and exits.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    let who = if pid == 0 { "child " } else { "parent" };
    let mut next = [0u8; 16];
    ratchet_rng::fill(&mut next);
    println!("{who} (pid {}): {next:02x?}", std::process::id());
    if pid > 0 {
        let mut status = 0;
        // SAFETY: `status` is a valid out-pointer; `pid` is our child.
        unsafe { libc::waitpid(pid, &mut status, 0) };
    }
}

#[cfg(not(unix))]
fn main() {
    println!("no fork() on this platform");
}
