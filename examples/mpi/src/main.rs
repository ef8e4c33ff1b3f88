//! `mpi-pi`: the Monte Carlo job of `examples/common/pi.rs` over MPI, with the
//! tasks handed out dynamically, and a result that does not depend on the number
//! of ranks, the order or the timing (docs/PARALLEL.md).
//!
//! ```sh
//! cargo build --release --manifest-path examples/mpi/Cargo.toml
//! mpirun -n 4 examples/mpi/target/release/mpi-pi --key 6b6579 --tasks 256 --samples 50000
//! ```
//!
//! Rank 0 hands out task indices on request and reduces; every other rank asks
//! for a task, runs it from `root.child(task)` (the task's index, never the rank:
//! which rank runs which task depends on timing) and sends back its hits with
//! the next request. Alone (`-n 1`), rank 0 runs every task itself.

#[path = "../../common/pi.rs"]
mod pi;

use std::process::ExitCode;
use std::time::Duration;

use mpi::Rank;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use pi::{JOB_USAGE, Job};

const USAGE: &str = "\
usage: mpirun -n N mpi-pi --key HEX --tasks T --samples S [--gen G] [--reverse] [--jitter]

Runs task i = 0..T from SeedTree::new(key).child(i) on whichever rank asks for
it next, and prints on rank 0 exactly one line:
  tasks=T samples=S hits=H digest=D pi=P
(the job and the line are defined in examples/common/pi.rs). Which rank ran
how many tasks goes to stderr.

Options:
";

const MORE_USAGE: &str = "
  --reverse      hand the tasks out from T-1 down to 0
  --jitter       the highest rank sleeps 0 to 4 ms (at random, from the OS)
                 before each task
  -h, --help     print this help
Errors print a message and exit with status 2.
";

/// A worker's first request (no result yet): `[0, 0]`.
const TAG_REQUEST: i32 = 1;
/// A worker's result, which is also its next request: `[task, hits]`.
const TAG_RESULT: i32 = 2;
/// Rank 0's answer: the task index to run.
const TAG_TASK: i32 = 3;
/// Rank 0's answer: no task left, stop.
const TAG_STOP: i32 = 4;

/// The command line.
#[derive(Debug)]
struct Options {
    job: Job,
    reverse: bool,
    jitter: bool,
}

/// Parses the arguments (the program name excluded); `Ok(None)` for `--help`.
fn parse_args(args: impl IntoIterator<Item = String>) -> Result<Option<Options>, String> {
    let (mut reverse, mut jitter, mut help) = (false, false, false);
    let job = Job::parse(args, |arg, _| {
        match arg {
            "--reverse" => reverse = true,
            "--jitter" => jitter = true,
            "-h" | "--help" => help = true,
            _ => return Err(format!("unknown option {arg:?}")),
        }
        Ok(())
    });
    if help {
        return Ok(None);
    }
    Ok(Some(Options {
        job: job?,
        reverse,
        jitter,
    }))
}

/// The task indices in the order rank 0 hands them out.
fn order(options: &Options) -> Box<dyn Iterator<Item = u64>> {
    if options.reverse {
        Box::new((0..options.job.tasks).rev())
    } else {
        Box::new(0..options.job.tasks)
    }
}

/// With `--jitter`, a random pause of 0 to 4 ms on the highest rank.
fn jitter(options: &Options, world: &SimpleCommunicator) {
    if options.jitter && world.rank() == world.size() - 1 {
        let micros = ratchet_rng::u64() % 4001;
        std::thread::sleep(Duration::from_micros(micros));
    }
}

/// Rank 0: hands out the tasks (or runs them all when alone) and returns the
/// hits per task, in task order, and the tasks each rank ran.
fn serve(options: &Options, world: &SimpleCommunicator) -> (Vec<u64>, Vec<u64>) {
    let job = &options.job;
    let root = job.root();
    let size = world.size();
    let mut per_rank = vec![0u64; size as usize];
    let mut hits: Vec<Option<u64>> = vec![None; job.tasks as usize];
    if size == 1 {
        for task in order(options) {
            jitter(options, world);
            hits[task as usize] = Some(job.hits(&root.child(task)));
            per_rank[0] += 1;
        }
    } else {
        let mut tasks = order(options);
        let mut working: Rank = size - 1;
        while working > 0 {
            let mut message = [0u64; 2];
            let status = world.any_process().receive_into(&mut message);
            let worker = status.source_rank();
            match status.tag() {
                TAG_REQUEST => {}
                TAG_RESULT => {
                    let [task, count] = message;
                    let slot = &mut hits[task as usize];
                    assert!(slot.is_none(), "task {task} returned twice");
                    *slot = Some(count);
                    per_rank[worker as usize] += 1;
                }
                tag => panic!("unexpected tag {tag} from rank {worker}"),
            }
            let to = world.process_at_rank(worker);
            match tasks.next() {
                Some(task) => to.send_with_tag(&task, TAG_TASK),
                None => {
                    to.send_with_tag(&0u64, TAG_STOP);
                    working -= 1;
                }
            }
        }
    }
    let hits = hits
        .into_iter()
        .enumerate()
        .map(|(task, h)| h.unwrap_or_else(|| panic!("task {task} never returned")))
        .collect();
    (hits, per_rank)
}

/// Any other rank: asks for tasks and runs them until told to stop.
fn work(options: &Options, world: &SimpleCommunicator) {
    let job = &options.job;
    let root = job.root();
    let server = world.process_at_rank(0);
    server.send_with_tag(&[0u64, 0], TAG_REQUEST);
    loop {
        let (task, status) = server.receive::<u64>();
        match status.tag() {
            TAG_TASK => {}
            TAG_STOP => return,
            tag => panic!("unexpected tag {tag} from rank 0"),
        }
        jitter(options, world);
        // The task's node comes from its index: whichever rank runs it, it
        // draws the same points.
        let hits = job.hits(&root.child(task));
        server.send_with_tag(&[task, hits], TAG_RESULT);
    }
}

fn main() -> ExitCode {
    let options = match parse_args(std::env::args().skip(1)) {
        Ok(Some(options)) => options,
        Ok(None) => {
            print!("{USAGE}{JOB_USAGE}{MORE_USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("mpi-pi: {message}\n\n{USAGE}{JOB_USAGE}{MORE_USAGE}");
            return ExitCode::from(2);
        }
    };
    let Some(universe) = mpi::initialize() else {
        eprintln!("mpi-pi: MPI is already initialized");
        return ExitCode::FAILURE;
    };
    let world = universe.world();
    if world.rank() == 0 {
        let (hits, per_rank) = serve(&options, &world);
        println!("{}", options.job.line(&hits));
        let ran: Vec<String> = per_rank
            .iter()
            .enumerate()
            .map(|(rank, n)| format!("{rank}:{n}"))
            .collect();
        eprintln!(
            "mpi-pi: {} ranks; tasks run per rank: {}",
            world.size(),
            ran.join(" ")
        );
    } else {
        work(&options, &world);
    }
    ExitCode::SUCCESS
}
