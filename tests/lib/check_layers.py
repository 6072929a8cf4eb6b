#!/usr/bin/env python3
"""The library's layers, checked: lib/README.md's table lists lib/src's folders in the order
the data flows, and a folder may include the folders listed before it, never one after it.
Reads every #include "cudatool/<folder>/..." and "<folder>/..." in lib/src/<folder>/ and
lib/include/cudatool/<folder>/ and fails on each edge against that order, naming the file,
the line and both folders. With --self-test it first checks that it catches a back edge.

Usage: check_layers.py SOURCE_DIR [--self-test]
"""
import pathlib
import re
import sys
import tempfile

INCLUDE = re.compile(r'^\s*#\s*include\s+"(?:cudatool/)?([a-z_]+)/')


def folder_order(readme: str) -> list[str]:
    # The map's rows: | `base/` | concern | uses |, in order.
    order = re.findall(r"^\| `([a-z_]+)/` \|", readme, re.MULTILINE)
    if len(order) < 2:
        raise SystemExit("check_layers: no folder table in lib/README.md")
    return order


def back_edges(root: pathlib.Path, order: list[str]) -> list[str]:
    rank = {name: i for i, name in enumerate(order)}
    problems = []
    for base in (root / "lib/src", root / "lib/include/cudatool"):
        for folder in order:
            for path in sorted((base / folder).rglob("*")):
                if path.suffix not in (".hpp", ".cpp", ".cu", ".inc", ".h"):
                    continue
                for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                    match = INCLUDE.match(line)
                    if match and match.group(1) in rank and rank[match.group(1)] > rank[folder]:
                        problems.append(
                            f"{path.relative_to(root)}:{number}: {folder}/ includes "
                            f"{match.group(1)}/, which lib/README.md lists after it")
        for path in sorted(base.iterdir()) if base.is_dir() else []:
            if path.is_dir() and path.name not in rank:
                problems.append(f"{path.relative_to(root)}: a folder lib/README.md does not map")
    return problems


def self_test(root: pathlib.Path, order: list[str]) -> None:
    # A copy of the tree's layout with one back edge (the first folder including the last).
    with tempfile.TemporaryDirectory() as scratch:
        fake = pathlib.Path(scratch)
        for folder in order:
            (fake / "lib/src" / folder).mkdir(parents=True)
            (fake / "lib/include/cudatool" / folder).mkdir(parents=True)
        (fake / f"lib/src/{order[-1]}/ok.cpp").write_text(f'#include "cudatool/{order[0]}/a.hpp"\n')
        (fake / f"lib/src/{order[0]}/bad.cpp").write_text(f'#include "{order[-1]}/b.hpp"\n')
        found = back_edges(fake, order)
        if len(found) != 1 or "bad.cpp:1" not in found[0]:
            raise SystemExit(f"check_layers: self-test expected one back edge, got {found}")


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    root = pathlib.Path(sys.argv[1])
    order = folder_order((root / "lib/README.md").read_text())
    if "--self-test" in sys.argv[2:]:
        self_test(root, order)
    problems = back_edges(root, order)
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        return 1
    print(f"layers: {' -> '.join(order)}; no include against the order")
    return 0


if __name__ == "__main__":
    sys.exit(main())
