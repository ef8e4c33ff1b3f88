#!/usr/bin/env python3
"""Checks the repository's markdown links and the README's code blocks.

    python3 scripts/check-doc-links.py

For README.md, CONTRIBUTING.md, CHANGELOG.md, SECURITY.md, docs/*.md and
fuzz/README.md: every relative link `[text](path#anchor)` must name an existing
file, and an anchor into a markdown file must match one of its headings (GitHub's
rule: lower case, punctuation other than `-` and `_` dropped, spaces to `-`).
In README.md, a code block must be `rust` (a doctest, run through src/lib.rs),
`sh` or `text`, and a Rust block must have no hidden `# ` lines (GitHub shows
them). Exits 1 and lists every problem. Python 3 standard library only.
"""

import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```(.*)$")


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


def check_links(path, problems):
    in_code = False
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if FENCE.match(line):
                in_code = not in_code
                continue
            if in_code:
                continue
            for target in LINK.findall(strip_code(line)):
                if re.match(r"^[a-z]+:", target):
                    continue  # http(s):, mailto:
                file_part, _, anchor = target.partition("#")
                where = f"{os.path.relpath(path, ROOT)}:{number}"
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
    lang = None
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            match = FENCE.match(line.rstrip("\n"))
            if match:
                if lang is None:
                    lang = match.group(1).strip()
                    if lang not in ("rust", "sh", "text"):
                        problems.append(
                            f"README.md:{number}: code block marked {lang!r}; "
                            "use rust, sh or text"
                        )
                else:
                    lang = None
            elif lang == "rust" and (line.startswith("# ") or line.rstrip() == "#"):
                problems.append(f"README.md:{number}: hidden doctest line: {line.rstrip()}")


def main():
    files = [
        os.path.join(ROOT, name)
        for name in ("README.md", "CONTRIBUTING.md", "CHANGELOG.md", "SECURITY.md")
    ]
    files += sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
    files.append(os.path.join(ROOT, "fuzz", "README.md"))
    problems = []
    for path in files:
        if os.path.exists(path):
            check_links(path, problems)
    check_readme_code(os.path.join(ROOT, "README.md"), problems)
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        sys.exit(1)
    print(f"links and README code blocks OK ({len(files)} files)")


if __name__ == "__main__":
    main()
