#!/usr/bin/env python3
"""Checks that every dependency block the docs ask a user to paste resolves.

    python3 scripts/check-doc-toml.py                    # every block must resolve
    python3 scripts/check-doc-toml.py --negative-control # a misspelt feature must not

A block is a ```toml code block with a `[dependencies]` table in README.md or
docs/*.md, other than the files a guide shows whole (a block right after a
`<!-- file: PATH -->` line: those crates are built and run by their own CI
steps). Each block becomes the manifest of a scratch crate in a temporary
directory outside the checkout, with `ratchet-rng` patched to this checkout (the
version the block names must match it), and `cargo metadata` must resolve it:
the versions exist and every feature named exists. The negative control renames
one feature of the first block that names a ratchet-rng feature and requires
that cargo refuses it. Python 3 standard library and cargo only.
"""

import glob
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def blocks():
    """(where, lines) of every pasteable dependency block."""
    found = []
    for path in ["README.md"] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md"))):
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            lines = f.read().split("\n")
        i = 0
        while i < len(lines):
            if lines[i] == "```toml":
                end = lines.index("```", i + 1)
                shown_file = i > 0 and lines[i - 1].startswith("<!-- file: ")
                body = lines[i + 1 : end]
                if not shown_file and "[dependencies]" in body:
                    found.append((f"{os.path.relpath(path, ROOT)}:{i + 1}", body))
                i = end
            i += 1
    return found


def resolves(body, scratch):
    """Whether cargo resolves a crate whose dependencies are `body`."""
    os.makedirs(os.path.join(scratch, "src"), exist_ok=True)
    with open(os.path.join(scratch, "src", "main.rs"), "w", encoding="utf-8") as f:
        f.write("fn main() {}\n")
    manifest = [
        "[package]",
        'name = "pasted"',
        'version = "0.0.0"',
        'edition = "2024"',
        "",
        *body,
        "",
        "[patch.crates-io]",
        f'ratchet-rng = {{ path = "{ROOT}" }}',
        "",
        "[workspace]",
    ]
    with open(os.path.join(scratch, "Cargo.toml"), "w", encoding="utf-8") as f:
        f.write("\n".join(manifest) + "\n")
    run = subprocess.run(
        ["cargo", "metadata", "--format-version", "1"],
        cwd=scratch,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    return run.returncode == 0, run.stderr


def main():
    found = blocks()
    if not found:
        sys.exit("no dependency block found in README.md or docs/*.md")
    with tempfile.TemporaryDirectory() as tmp:
        if sys.argv[1:] == ["--negative-control"]:
            for where, body in found:
                changed = [line.replace('features = ["', 'features = ["no_such_', 1)
                           if line.startswith("ratchet-rng") else line for line in body]
                if changed != body:
                    ok, _ = resolves(changed, os.path.join(tmp, "negative"))
                    if ok:
                        sys.exit(f"negative control: {where} with a misspelt feature resolved")
                    print(f"negative control: {where} with a misspelt feature is refused")
                    return
            sys.exit("negative control: no block names a ratchet-rng feature")
        failed = False
        for n, (where, body) in enumerate(found):
            ok, err = resolves(body, os.path.join(tmp, str(n)))
            print(f"{'ok  ' if ok else 'FAIL'} {where}: {' '.join(line for line in body if line)}")
            if not ok:
                print(err, file=sys.stderr)
                failed = True
        if failed:
            sys.exit(1)
        print(f"all {len(found)} dependency blocks resolve")


if __name__ == "__main__":
    main()
