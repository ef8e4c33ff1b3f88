//! Reproducible parallel Monte Carlo with `SeedTree`: estimate pi from 256 tasks
//! of 20 000 points each, task `i` drawing from `root.child(i)`, on rayon pools
//! of 1, 2 and 8 threads and in reverse order. The result is the same to the bit
//! every time: no stream depends on which thread runs a task or when.
//!
//! `cargo run --release --example parallel`
//!
//! With `--key HEX --tasks T --samples S [--gen G] [--threads N] [--reverse]` it
//! runs that one job and prints only its result line, `tasks=T samples=S hits=H
//! digest=D pi=P`: the line `mpi-pi` (examples/mpi, the same job over MPI
//! processes) prints for the same options, which CI compares. The job is defined
//! once, in `examples/common/pi.rs`; docs/PARALLEL.md tells how to spread it over
//! processes and machines.

// On WASM there are no threads (and rayon does not build): main only says so.
#![cfg_attr(target_family = "wasm", allow(dead_code, unused_imports))]

#[path = "common/pi.rs"]
mod pi;

use std::process::ExitCode;

use pi::{JOB_USAGE, Job};
use ratchet_rng::ChaChaKeyErasureRng;
use ratchet_rng::rand_core::Rng;
#[cfg(not(target_family = "wasm"))]
use rayon::prelude::*;

const USAGE: &str = "\
usage: parallel
       parallel --key HEX --tasks T --samples S [--gen G] [--threads N] [--reverse]

Without options: the demonstration (one job on 1, 2 and 8 threads, in both
orders, checked to give the same line). With options: that job once, printing
only its line, tasks=T samples=S hits=H digest=D pi=P (examples/common/pi.rs).

Options:
";

const MORE_USAGE: &str = "
  --threads N    the rayon pool's threads (default: rayon's, one per CPU)
  --reverse      submit the tasks from T-1 down to 0
  -h, --help     print this help
Errors print a message and exit with status 2.
";

/// One run of a job: the pool size (`None`: rayon's default) and the order.
#[derive(Debug)]
struct Run {
    job: Job,
    threads: Option<usize>,
    reverse: bool,
}

/// Parses the options (the program name excluded); `Ok(None)` for `--help`.
fn parse_args(args: Vec<String>) -> Result<Option<Run>, String> {
    let (mut threads, mut reverse, mut help) = (None, false, false);
    let job = Job::parse(args, |arg, rest| {
        match arg {
            "--threads" if threads.is_none() => {
                let n = rest.next().ok_or("--threads needs a value")?;
                let digits = !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit());
                match n.parse::<usize>() {
                    Ok(count) if digits && count > 0 => threads = Some(count),
                    _ => return Err(format!("--threads {n:?}: a positive integer")),
                }
            }
            "--threads" => return Err("--threads given twice".into()),
            "--reverse" => reverse = true,
            "-h" | "--help" => help = true,
            _ => return Err(format!("unknown option {arg:?}")),
        }
        Ok(())
    });
    if help {
        return Ok(None);
    }
    Ok(Some(Run {
        job: job?,
        threads,
        reverse,
    }))
}

/// Runs `run`'s job on a rayon pool (not on WASM: no threads there); returns
/// the hits per task, in task order.
#[cfg(not(target_family = "wasm"))]
fn per_task_hits(run: &Run) -> Vec<u64> {
    let mut pool = rayon::ThreadPoolBuilder::new();
    if let Some(threads) = run.threads {
        pool = pool.num_threads(threads);
    }
    let pool = pool.build().expect("a rayon pool");
    let job = &run.job;
    let root = job.root();
    let order: Vec<u64> = if run.reverse {
        (0..job.tasks).rev().collect()
    } else {
        (0..job.tasks).collect()
    };
    // Task `i` draws from `root.child(i)`, whichever thread runs it.
    let mut per_task: Vec<(u64, u64)> = pool.install(|| {
        order
            .par_iter()
            .map(|&i| (i, job.hits(&root.child(i))))
            .collect()
    });
    // Reduce in task order (the digest needs it; a floating-point sum would too).
    per_task.sort_unstable();
    per_task.into_iter().map(|(_, hits)| hits).collect()
}

#[cfg(target_family = "wasm")]
fn main() -> ExitCode {
    println!("skipped: the parallel example needs threads (none on this target)");
    ExitCode::SUCCESS
}

#[cfg(not(target_family = "wasm"))]
fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.is_empty() {
        demonstration();
        return ExitCode::SUCCESS;
    }
    match parse_args(args) {
        Ok(Some(run)) => {
            println!("{}", run.job.line(&per_task_hits(&run)));
            ExitCode::SUCCESS
        }
        Ok(None) => {
            print!("{USAGE}{JOB_USAGE}{MORE_USAGE}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("parallel: {message}\n\n{USAGE}{JOB_USAGE}{MORE_USAGE}");
            ExitCode::from(2)
        }
    }
}

/// The demonstration: one job on pools of 1, 2 and 8 threads, in both orders.
#[cfg(not(target_family = "wasm"))]
fn demonstration() {
    let job = Job {
        key: b"ratchet-rng parallel example".to_vec(),
        tasks: 256,
        samples: 20_000,
        generator: pi::Gen::ChaCha8,
    };
    let run = |threads, reverse| Run {
        job: job.clone(),
        threads: Some(threads),
        reverse,
    };
    let reference = job.line(&per_task_hits(&run(1, false)));
    println!("{reference} (pool of 1, forward order)");
    for (threads, reverse) in [(2, false), (8, false), (8, true), (1, true)] {
        let got = job.line(&per_task_hits(&run(threads, reverse)));
        let order = if reverse { "reverse" } else { "forward" };
        println!("{got} (pool of {threads}, {order} order)");
        assert_eq!(
            got, reference,
            "the result must not depend on the threads or the order"
        );
    }
    // One task's node, as a separate process would derive it from the key alone.
    let mut worker = ratchet_rng::SeedTree::new(b"ratchet-rng parallel example")
        .child(3)
        .rng::<ChaChaKeyErasureRng>();
    let mut here = job.root().child(3).rng::<ChaChaKeyErasureRng>();
    assert_eq!(worker.next_u64(), here.next_u64());
    let pi: f64 = reference
        .rsplit_once("pi=")
        .and_then(|(_, pi)| pi.parse().ok())
        .expect("pi=P");
    assert!((pi - core::f64::consts::PI).abs() < 0.01);
    println!("bit-identical with 1, 2 and 8 threads and in reverse order");
}
