#!/usr/bin/env python3
"""Checks the markdown links, the README's code blocks and the stability policy.

    python3 scripts/check-doc-links.py              # the source tree
    python3 scripts/check-doc-links.py --package DIR  # an unpacked `cargo package`
    python3 scripts/check-doc-links.py --negative-control  # file blocks vs altered files

For README.md, CONTRIBUTING.md, CHANGELOG.md, SECURITY.md, docs/*.md and
fuzz/README.md (those of them present): every relative link `[text](path#anchor)`
must name an existing file, and an anchor into a markdown file must match one of
its headings (GitHub's rule: lower case, punctuation other than `-` and `_`
dropped, spaces to `-`; rustdoc's ids are the same).
README.md has no relative link at all (the registry shows it away from any
repository), and neither have the files src/guide.rs renders into rustdoc (a
relative path there is relative to a docs.rs page). A link to docs.rs must name
a guide module src/guide.rs defines, or a file of the package (the `source/`
view), so that it exists once the crate is published.
README.md is at most README_MAX_LINES lines (the front page stays a front page).
In README.md, a code block must be `rust` (a doctest, run through src/lib.rs),
`sh`, `toml` or `text`, and a Rust block must have no hidden `# ` lines (GitHub
shows them). The value-stability policy (the paragraph under a "Value
stability" heading) is word for word the same in README.md, CHANGELOG.md and
docs/STREAMS.md. In every file checked, a line `<!-- file: PATH -->` must be
followed by a code block that is the file PATH of the repository, byte for byte
(a guide shows a companion crate's files whole, and they cannot drift; CI builds
and runs that crate); `<!-- output: NAME -->` marks the block a CI step compares
a program's output with. With --package, DIR is the root: its files alone must
satisfy all this (the companion crates are not in the package: their blocks are
checked in the source tree). Exits 1 and lists every problem. Python 3 standard library only.
"""

import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```(.*)$")
DOCS_RS_GUIDE = "https://docs.rs/ratchet-rng/latest/ratchet_rng/guide/"
DOCS_RS_SOURCE = "https://docs.rs/crate/ratchet-rng/latest/source/"
GUIDE_MODULE = re.compile(r'#\[doc = include_str!\("\.\./([^"]+)"\)\]\s*pub mod (\w+)')
POLICY_FILES = ("README.md", "CHANGELOG.md", "docs/STREAMS.md")
README_MAX_LINES = 200


def slug(heading):
    text = heading.strip().lower().replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    """The GitHub anchors of a markdown file's headings (outside code blocks)."""
    found, in_code = set(), False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if FENCE.match(line):
                in_code = not in_code
            elif not in_code and line.startswith("#"):
                found.add(slug(line.lstrip("#")))
    return found


def strip_code(line):
    """The line without its inline code spans (links inside them are not links)."""
    return re.sub(r"`[^`]*`", "", line)


def guide_modules():
    """src/guide.rs's modules: {module name: the markdown file it renders}."""
    with open(os.path.join(ROOT, "src", "guide.rs"), encoding="utf-8") as f:
        return {module: path for path, module in GUIDE_MODULE.findall(f.read())}


def check_docs_rs(target, where, guides, problems):
    """A docs.rs address must be one that publishing this package creates."""
    if target.startswith(DOCS_RS_GUIDE):
        rest, _, anchor = target[len(DOCS_RS_GUIDE) :].partition("#")
        module = rest.partition("/")[0]
        if rest != "index.html" and (module not in guides or rest != module + "/index.html"):
            problems.append(f"{where}: {target}: no such guide module in src/guide.rs")
        elif anchor and anchor not in anchors(os.path.join(ROOT, guides[module])):
            problems.append(f"{where}: {target}: no heading #{anchor} in {guides[module]}")
    elif target.startswith(DOCS_RS_SOURCE):
        packaged = target[len(DOCS_RS_SOURCE) :].partition("#")[0]
        if not os.path.isfile(os.path.join(ROOT, packaged)):
            problems.append(f"{where}: {target}: no such file in the package")


def check_links(path, problems, guides, relative_allowed):
    in_code = False
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if FENCE.match(line):
                in_code = not in_code
                continue
            if in_code:
                continue
            for target in LINK.findall(strip_code(line)):
                where = f"{os.path.relpath(path, ROOT)}:{number}"
                if re.match(r"^[a-z]+:", target):
                    check_docs_rs(target, where, guides, problems)
                    continue  # http(s):, mailto:
                if not relative_allowed and not target.startswith("#"):
                    problems.append(f"{where}: {target}: relative link (use a docs.rs address)")
                    continue
                file_part, _, anchor = target.partition("#")
                dest = (
                    os.path.normpath(os.path.join(os.path.dirname(path), file_part))
                    if file_part
                    else path
                )
                if not os.path.exists(dest):
                    problems.append(f"{where}: {target}: no such file")
                elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                    problems.append(f"{where}: {target}: no heading #{anchor}")


def check_readme_code(path, problems):
    with open(path, encoding="utf-8") as f:
        lines = sum(1 for _ in f)
    if lines > README_MAX_LINES:
        problems.append(f"README.md: {lines} lines, more than {README_MAX_LINES}")
    lang = None
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            match = FENCE.match(line.rstrip("\n"))
            if match:
                if lang is None:
                    lang = match.group(1).strip()
                    if lang not in ("rust", "sh", "toml", "text"):
                        problems.append(
                            f"README.md:{number}: code block marked {lang!r}; "
                            "use rust, sh, toml or text"
                        )
                else:
                    lang = None
            elif lang == "rust" and (line.startswith("# ") or line.rstrip() == "#"):
                problems.append(f"README.md:{number}: hidden doctest line: {line.rstrip()}")


INCLUDED = re.compile(r"^<!-- (file|output): (\S+) -->$")


def check_included_files(path, problems, package, corrupt=False):
    """Each `<!-- file: PATH -->` block is the file PATH; an output marker has a block.
    With `corrupt`, each file is read with one byte more (the negative control)."""
    with open(path, encoding="utf-8") as f:
        lines = f.readlines()
    where = os.path.relpath(path, ROOT)
    for number, line in enumerate(lines, 1):
        match = INCLUDED.match(line.rstrip("\n"))
        if not match:
            continue
        if number >= len(lines) or not FENCE.match(lines[number].rstrip("\n")):
            problems.append(f"{where}:{number}: no code block right after {line.strip()}")
            continue
        end = next(
            (i for i in range(number + 1, len(lines)) if lines[i].rstrip("\n") == "```"), None
        )
        if end is None:
            problems.append(f"{where}:{number}: the code block after it is not closed")
            continue
        kind, name = match.groups()
        if kind == "output":
            continue
        shown = "".join(lines[number + 1 : end])
        source = os.path.join(ROOT, name)
        if not os.path.isfile(source):
            if not package:
                problems.append(f"{where}:{number}: {name}: no such file")
            continue
        with open(source, encoding="utf-8") as f:
            if f.read() + ("x" if corrupt else "") != shown:
                problems.append(
                    f"{where}:{number + 1}: the block is not {name} as it is: copy the file in"
                )


def policy(path):
    """The paragraph under the file's "Value stability" heading, joined into one line."""
    lines, found = [], False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not found:
                found = line.startswith("#") and line.rstrip().endswith("Value stability")
            elif line.strip() or lines:
                if not line.strip() or line.startswith("#"):
                    break
                lines.append(line.strip())
    return " ".join(lines)


def check_policy(problems):
    texts = {name: policy(os.path.join(ROOT, name)) for name in POLICY_FILES}
    first = texts[POLICY_FILES[0]]
    for name, text in texts.items():
        if not text:
            problems.append(f"{name}: no paragraph under a 'Value stability' heading")
        elif text != first:
            problems.append(f"{name}: the value-stability policy differs from README.md's")


def negative_control():
    """Every file block, compared with its file plus one byte, must be reported."""
    blocks = problems = 0
    docs = sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
    for path in [os.path.join(ROOT, "README.md")] + docs:
        with open(path, encoding="utf-8") as f:
            blocks += sum(1 for line in f if line.startswith("<!-- file: "))
        found = []
        check_included_files(path, found, package=False, corrupt=True)
        problems += len(found)
    if blocks == 0 or problems != blocks:
        sys.exit(f"negative control: {problems} of {blocks} altered file blocks reported")
    print(f"negative control: all {blocks} file blocks fail against an altered file")


def main():
    global ROOT
    if sys.argv[1:] == ["--negative-control"]:
        negative_control()
        return
    package = sys.argv[1:2] == ["--package"]
    if package:
        ROOT = os.path.abspath(sys.argv[2])
    guides = guide_modules()
    rendered = {os.path.join(ROOT, path) for path in guides.values()}
    files = [
        os.path.join(ROOT, name)
        for name in ("README.md", "CONTRIBUTING.md", "CHANGELOG.md", "SECURITY.md")
    ]
    files += sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
    files.append(os.path.join(ROOT, "fuzz", "README.md"))
    files = [path for path in files if os.path.exists(path)]
    problems = []
    for path in files:
        relative_allowed = path not in rendered and os.path.relpath(path, ROOT) != "README.md"
        check_links(path, problems, guides, relative_allowed)
        check_included_files(path, problems, package)
    check_readme_code(os.path.join(ROOT, "README.md"), problems)
    check_policy(problems)
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        sys.exit(1)
    print(f"links, README code blocks and included files OK ({len(files)} files)")


if __name__ == "__main__":
    main()
