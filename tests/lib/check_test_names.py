#!/usr/bin/env python3
"""Tests named after the file they test (issue 35): every library source lib/src/<folder>/
<name>.cpp has a tests/lib/<folder>/test_<name>.cpp. Fails naming each source without one,
and each test_<name>.cpp under tests/lib/ that names no source (a test file left behind by a
rename); a source's GPU tests may sit beside it (test_<name>_gpu.cpp). NOT_A_SOURCE lists
the few test files that test no one source. With --self-test it first checks that it catches
both on a made-up tree.

Usage: check_test_names.py SOURCE_DIR [--self-test]
"""
import pathlib
import sys
import tempfile

# Test files under tests/lib/ that test no single source, each with why.
NOT_A_SOURCE = {
    "parallel": "base/parallel.hpp, a header with no source",
    "kernels_gpu": "binary/'s offline resources against the driver's, on a GPU",
    "compile_gpu": "compile/'s corpus compiled and loaded, against the driver, on a GPU",
}


def problems_in(root: pathlib.Path) -> list[str]:
    problems = []
    sources = sorted((root / "lib/src").rglob("*.cpp"))
    names = {path.stem for path in sources}
    tests = {path.stem.removeprefix("test_"): path
             for path in (root / "tests/lib").rglob("test_*.cpp")}
    for source in sources:
        folder = source.parent.relative_to(root / "lib/src")
        wanted = root / "tests/lib" / folder / f"test_{source.stem}.cpp"
        if not wanted.is_file():
            where = tests.get(source.stem)
            also = f" (there is {where.relative_to(root)}, in another folder)" if where else ""
            problems.append(f"{source.relative_to(root)}: no {wanted.relative_to(root)}{also}")
    for stem, path in sorted(tests.items()):
        if stem.removesuffix("_gpu") not in names and stem not in NOT_A_SOURCE:
            problems.append(f"{path.relative_to(root)}: tests no lib/src/**/{stem}.cpp "
                            "(name it after the file it tests)")
    return problems


def self_test() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        fake = pathlib.Path(scratch)
        for path in ("lib/src/a/tested.cpp", "lib/src/a/untested.cpp", "lib/src/b/moved.cpp",
                     "tests/lib/a/test_tested.cpp", "tests/lib/a/test_moved.cpp",
                     "tests/lib/b/test_stray.cpp", "tests/lib/a/test_tested_gpu.cpp"):
            (fake / path).parent.mkdir(parents=True, exist_ok=True)
            (fake / path).write_text("")
        found = problems_in(fake)
        expected = ["lib/src/a/untested.cpp: no tests/lib/a/test_untested.cpp",
                    "lib/src/b/moved.cpp: no tests/lib/b/test_moved.cpp (there is "
                    "tests/lib/a/test_moved.cpp, in another folder)",
                    "tests/lib/b/test_stray.cpp: tests no lib/src/**/stray.cpp "
                    "(name it after the file it tests)"]
        if sorted(found) != sorted(expected):
            raise SystemExit(f"check_test_names: self-test expected {expected}, got {found}")


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    root = pathlib.Path(sys.argv[1])
    if "--self-test" in sys.argv[2:]:
        self_test()
    problems = problems_in(root)
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        return 1
    count = len(list((root / "lib/src").rglob("*.cpp")))
    print(f"test names: each of the {count} sources in lib/src has its tests/lib/**/test_<name>.cpp")
    return 0


if __name__ == "__main__":
    sys.exit(main())
