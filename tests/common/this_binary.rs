//! Re-running the test binary in a fresh process: shared by
//! `tests/injection.rs` and `tests/vm_generation.rs` through `#[path]`.

use std::process::Command;

/// A command that runs this test binary again: under qemu-user through the
/// cargo runner that runs this one (the emulator execs host programs, and the
/// guest binary needs it), else directly.
pub fn this_binary() -> Command {
    let exe = std::env::current_exe().unwrap();
    let under_qemu =
        std::fs::read_to_string("/proc/self/comm").is_ok_and(|name| name.starts_with("qemu-"));
    let runner = std::env::vars()
        .find(|(k, v)| {
            k.starts_with("CARGO_TARGET_")
                && k.ends_with("_RUNNER")
                && v.contains(&format!("qemu-{}", std::env::consts::ARCH))
        })
        .map(|(_, v)| v);
    match runner {
        Some(runner) if under_qemu => {
            let mut words = runner.split_whitespace();
            let mut command = Command::new(words.next().unwrap());
            command.args(words).arg(exe);
            command
        }
        _ => Command::new(exe),
    }
}
