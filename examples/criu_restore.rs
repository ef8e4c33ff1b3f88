//! A process for `scripts/criu-restore.sh` to checkpoint and restore with CRIU
//! (Linux): writes one `ratchet_rng::u64()` value every 20 ms into `DIR/NNNNN`
//! (a new file each time: no open file for CRIU to restore), forever.
//!
//! ```sh
//! cargo build --example criu_restore
//! CRIU=/path/to/criu scripts/criu-restore.sh target/debug/examples/criu_restore
//! ```
//!
//! Two restores of one dump must then write different values (SECURITY.md,
//! "VM snapshots": the word in a droppable page, which CRIU does not dump).

use std::time::Duration;

fn main() {
    let Some(dir) = std::env::args().nth(1) else {
        eprintln!("usage: criu_restore DIR");
        std::process::exit(2);
    };
    let _ = ratchet_rng::u64(); // the first use probes what to watch
    let backends = ratchet_rng::backends();
    eprintln!(
        "vm generation: {}; process restore: {}",
        backends.vm_generation(),
        backends.process_restore()
    );
    for i in 0u32.. {
        let value = ratchet_rng::u64();
        if let Err(e) = std::fs::write(format!("{dir}/{i:05}"), format!("{value:016x}\n")) {
            eprintln!("{dir}: {e}");
            std::process::exit(1);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
