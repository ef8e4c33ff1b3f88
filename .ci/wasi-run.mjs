// Runs a wasm32-wasip1 program under Node's WASI (preview1): the cargo runner for
// the wasm32-wasip1 test suite (issue 14 §5),
//
//   CARGO_TARGET_WASM32_WASIP1_RUNNER="node .ci/wasi-run.mjs" \
//       cargo test --target wasm32-wasip1
//
// `node .ci/wasi-run.mjs PROGRAM.wasm [ARGS...]`: the program gets ARGS (with its
// own name first, as argv[0]), this process's environment (so that
// RATCHET_RNG_PROPTEST_CASES, RATCHET_RNG_BACKEND, RUST_BACKTRACE... reach it), the
// standard streams, and one directory: the current one (cargo runs tests from the
// package root), readable and writable at "/" and at its own absolute path, so
// relative and absolute paths to the package's files both work (proptest's failure
// persistence, say); nothing else of the host's file system. Exits with the
// program's exit code; a trap (a panic with panic=abort, an `unreachable`) is
// reported and exits 134, like an abort on the host.
import { readFile } from "node:fs/promises";
import process from "node:process";
import { WASI } from "node:wasi";

// Node 20's V8 crashed (SIGSEGV in the interpreter, at exit or soon after) once a
// program had grown its memory by about 100 MB, as tests/xof_kat.rs's 24 MB
// vector does, unless its garbage collector runs on the main thread: this
// script runs itself again with --single-threaded-gc (not allowed in NODE_OPTIONS).
if (!process.execArgv.includes("--single-threaded-gc")) {
    const { spawnSync } = await import("node:child_process");
    const { constants } = await import("node:os");
    const argv = ["--single-threaded-gc", ...process.execArgv, ...process.argv.slice(1)];
    const child = spawnSync(process.execPath, argv, { stdio: "inherit" });
    process.exit(child.status ?? 128 + (constants.signals[child.signal] ?? 6));
}

const [program, ...args] = process.argv.slice(2);
if (program === undefined) {
    process.stderr.write("usage: node .ci/wasi-run.mjs PROGRAM.wasm [ARGS...]\n");
    process.exit(2);
}

const cwd = process.cwd();
const wasi = new WASI({
    version: "preview1",
    args: [program, ...args],
    env: process.env,
    preopens: { "/": cwd, [cwd]: cwd },
    returnOnExit: true,
});

let code;
try {
    const module = await WebAssembly.compile(await readFile(program));
    const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
    code = wasi.start(instance);
} catch (error) {
    process.stderr.write(`wasi-run: ${program}: ${error?.stack ?? error}\n`);
    code = 134;
}
process.exitCode = code;
