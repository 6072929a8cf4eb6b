#!/usr/bin/python3
"""Validates the real --json output of cudatool against share/schemas/<name>.schema.json.

Usage: validate_json.py --schemas DIR --cases FILE --cudatool BIN --fake-libcuda LIB
                        [--fake-libnvml LIB]
                        --source-dir DIR (--name NAME | --check-coverage)

Every case in tests/schema/cases.json for NAME runs the binary (with the fake driver
where it says "fake_driver", and the fake NVML too where it says "fake_nvml", so no GPU is
needed), expects its exit code, parses stdout as
one JSON document and validates it against the schema (JSON Schema draft 2020-12, with
Debian's python3-jsonschema). --check-coverage checks that every schema file has cases,
every case has a schema, and each schema is itself valid and requires schema_version.
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile

try:
    import jsonschema
except ImportError:  # ctest counts 77 as skipped (SKIP_RETURN_CODE); CI installs it
    print("python3-jsonschema is not installed: skipped")
    sys.exit(77)


def load_schema(schemas, name):
    path = pathlib.Path(schemas) / f"{name}.schema.json"
    with open(path, encoding="utf-8") as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    if schema.get("$schema") != "https://json-schema.org/draft/2020-12/schema":
        raise SystemExit(f"{path}: $schema is not draft 2020-12")
    if "schema_version" not in schema.get("required", []):
        raise SystemExit(f"{path}: does not require schema_version")
    version = schema.get("properties", {}).get("schema_version", {})
    if version.get("type") != "integer":
        raise SystemExit(f"{path}: schema_version is not an integer")
    return schema


def run_case(args, name, schema, case, tmp):
    env = dict(os.environ)
    env.pop("CUDATOOL_LIBCUDA", None)
    subs = {"{source_dir}": args.source_dir, "{tmp}": tmp,
            "{kernels_data}": args.kernels_data or ""}

    def expand(text):
        for key, value in subs.items():
            text = text.replace(key, value)
        return text

    env.pop("CUDATOOL_LIBNVML", None)
    if case.get("fake_driver"):
        env["CUDATOOL_LIBCUDA"] = args.fake_libcuda
        env["CUDATOOL_NO_NVML"] = "1"
    if case.get("fake_nvml"):
        env["CUDATOOL_LIBCUDA"] = args.fake_libcuda
        env.pop("CUDATOOL_NO_NVML", None)
        env["CUDATOOL_LIBNVML"] = args.fake_libnvml
    if case.get("no_driver"):
        env["CUDATOOL_LIBCUDA"] = "/nonexistent/libcuda.so.1"
        env["CUDATOOL_NO_NVML"] = "1"
    for key, value in case.get("env", {}).items():
        env[key] = expand(value)
    for rel, text in case.get("files", {}).items():
        path = pathlib.Path(tmp) / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    argv = [args.cudatool] + [expand(a) for a in case["args"]]
    result = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
    where = f"{name}: {' '.join(case['args'])}"
    expected = case.get("exit_code", 0)
    if result.returncode != expected:
        return f"{where}: exit code {result.returncode}, expected {expected}; stderr: {result.stderr}"
    try:
        document = json.loads(result.stdout)
    except json.JSONDecodeError as e:
        return f"{where}: stdout is not one JSON document ({e}): {result.stdout[:500]!r}"
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(document), key=lambda e: list(e.path))
    if errors:
        return where + ":\n" + "\n".join(
            f"  at /{'/'.join(str(p) for p in e.path)}: {e.message}" for e in errors)
    for key, value in case.get("expect", {}).items():
        node = document
        for part in key.split("/"):
            if isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                node = node.get(part) if isinstance(node, dict) else None
        if node != value:
            return f"{where}: /{key} is {node!r}, expected {value!r}"
    for key in case.get("absent", []):
        if key in document:
            return f"{where}: /{key} is present, expected absent"
    print(f"ok  {where}")
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--schemas", required=True)
    parser.add_argument("--cases", required=True)
    parser.add_argument("--cudatool")
    parser.add_argument("--fake-libcuda")
    parser.add_argument("--fake-libnvml")
    parser.add_argument("--source-dir")
    # The build's nvcc-made test binaries (tests/CMakeLists.txt); cases that name
    # {kernels_data} are skipped, and say so, where nvcc did not make them.
    parser.add_argument("--kernels-data")
    parser.add_argument("--name")
    parser.add_argument("--check-coverage", action="store_true")
    args = parser.parse_args()
    with open(args.cases, encoding="utf-8") as f:
        cases = json.load(f)

    if args.check_coverage:
        names = sorted(p.name[: -len(".schema.json")]
                       for p in pathlib.Path(args.schemas).glob("*.schema.json"))
        problems = [f"share/schemas/{n}.schema.json has no case in {args.cases}"
                    for n in names if not cases.get(n)]
        problems += [f"{args.cases}: cases for '{n}' but no share/schemas/{n}.schema.json"
                     for n in cases if n not in names and not n.startswith("_")]
        # Each document has its own version (cudatool(1), JSON OUTPUT), pinned by its schema,
        # so that a document of another version fails its cases.
        versions = {}
        for n in names:
            pinned = load_schema(args.schemas, n)["properties"].get("schema_version", {})
            if pinned.get("type") != "integer" or not isinstance(pinned.get("const"), int):
                problems.append(f"share/schemas/{n}.schema.json does not pin schema_version to an integer")
            versions[n] = pinned.get("const")
        print("\n".join(problems) or f"ok  {len(names)} schemas, each with cases; versions {versions}")
        return 1 if problems else 0

    schema = load_schema(args.schemas, args.name)
    if not cases.get(args.name):
        print(f"no cases for {args.name}")
        return 1
    failures = []
    for case in cases[args.name]:
        if any("{kernels_data}" in a for a in case["args"]) and not (
                args.kernels_data and os.path.isfile(os.path.join(args.kernels_data, "rdc.o"))):
            print(f"skipped (no nvcc-built test binaries): {' '.join(case['args'])}")
            continue
        with tempfile.TemporaryDirectory(prefix="cudatool-schema-") as tmp:
            failure = run_case(args, args.name, schema, case, tmp)
        if failure:
            failures.append(failure)
    if failures:
        print("\n".join(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
