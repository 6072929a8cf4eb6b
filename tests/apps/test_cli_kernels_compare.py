#!/usr/bin/env python3
"""`cudatool kernels --baseline` and `--sizes` on a small project built twice with nvcc
(tests/data/kernels/compare.cu; the second build with -DNEW_BUILD and one more
architecture): a kernel that raises its registers, one that starts to spill, one with more
static shared memory, one removed, sm_100 added. Every delta reported is checked against
cuobjdump -res-usage (registers, stack, shared), ptxas -v (spill bytes) and cuobjdump -elf
(each kernel's .text size), for the same files; the kernels nothing changed must not be
reported. Also: a saved `kernels --json` as the baseline gives the same changes; --fail-on
exits 13 on the regressions it names and 0 on the others; the Markdown and the schemas.

Usage: test_cli_kernels_compare.py CUDATOOL NVCC SOURCE SCHEMAS_DIR
Exits 77 (skipped) without nvcc or cuobjdump.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

CUDATOOL, NVCC, SOURCE, SCHEMAS = sys.argv[1:5]
OLD_ARCH = ["-gencode", "arch=compute_80,code=sm_80", "-gencode", "arch=compute_90,code=sm_90"]
NEW_ARCH = OLD_ARCH + ["-gencode", "arch=compute_100,code=sm_100"]
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)


def build(out, defines, arch):
    """Compiles the source; returns {(arch, function): (spill stores, spill loads)} from ptxas -v."""
    run = subprocess.run([NVCC, "-O2", "-c", SOURCE, "-o", out, "-Xptxas", "-v"] + defines + arch,
                         capture_output=True, text=True, check=True)
    spills, current = {}, None
    for line in (run.stdout + run.stderr).splitlines():
        m = re.search(r"Compiling entry function '([^']+)' for '(sm_\d+)'", line)
        if m:
            current = (m.group(2), m.group(1))
        m = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m and current:
            spills[current] = (int(m.group(1)), int(m.group(2)))
    return spills


def res_usage(path):
    """{(arch, function): (REG, STACK, SHARED less sm_90+'s 1 KiB reserve)} from cuobjdump."""
    text = subprocess.run(["cuobjdump", "-res-usage", path], capture_output=True, text=True,
                          check=True).stdout
    rows, arch, function = {}, None, None
    for line in text.splitlines():
        m = re.match(r"arch = (sm_\d+)", line)
        if m:
            arch = m.group(1)
        m = re.match(r"\s*Function ([^:]+):", line)
        if m:
            function = m.group(1)
            continue
        if function and "REG:" in line:
            field = lambda name: int(re.search(rf"\b{name}:(\d+)", line).group(1))
            shared = field("SHARED")
            if int(arch[3:]) >= 90:
                shared -= min(shared, 1024)
            rows[(arch, function)] = (field("REG"), field("STACK"), shared)
            function = None
    return rows


def text_sizes(path):
    """{(arch, function): size of .text.<function>} from cuobjdump -elf's section tables."""
    text = subprocess.run(["cuobjdump", "-elf", path], capture_output=True, text=True,
                          check=True).stdout
    sizes, arch = {}, None
    for line in text.splitlines():
        m = re.match(r"arch = (sm_\d+)", line)
        if m:
            arch = m.group(1)
        m = re.match(r"\s+[0-9a-f]+\s+[0-9a-f]+\s+([0-9a-f]+)\s.*PROGBITS.*\s\.text\.(\S+)$", line)
        if m and arch:
            sizes[(arch, m.group(2))] = int(m.group(1), 16)
    return sizes


def cudatool(*args, expect=0):
    run = subprocess.run([CUDATOOL, "kernels", "--no-progress", *args], capture_output=True,
                         text=True)
    check(run.returncode == expect,
          f"kernels {' '.join(args)}: exit {run.returncode}, expected {expect}: {run.stderr}")
    return run.stdout


def validate(document, schema_name):
    try:
        import jsonschema
    except ImportError:
        return
    with open(os.path.join(SCHEMAS, schema_name + ".schema.json"), encoding="utf-8") as f:
        schema = json.load(f)
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(document))
    check(not errors, f"{schema_name}: {errors[:1]}")


def main():
    if not shutil.which(NVCC) or not shutil.which("cuobjdump"):
        print("nvcc or cuobjdump missing: skipped")
        return 77
    tmp = tempfile.mkdtemp()
    try:
        old, new = os.path.join(tmp, "old.o"), os.path.join(tmp, "new.o")
        spills = {"old": build(old, [], OLD_ARCH), "new": build(new, ["-DNEW_BUILD"], NEW_ARCH)}
        usage = {"old": res_usage(old), "new": res_usage(new)}
        code = {"old": text_sizes(old), "new": text_sizes(new)}

        def truth(side, key):
            reg, stack, shared = usage[side][key]
            stores, loads = spills[side][key]
            return {"registers": reg, "local": stack, "shared": shared, "spill_stores": stores,
                    "spill_loads": loads, "code_size": code[side][key]}

        document = json.loads(cudatool("--baseline", old, new, "--json"))
        validate(document, "kernels-compare")
        reported = {(c["arch"], c["name"]): c for c in document["changes"]}
        keys = set(usage["old"]) | set(usage["new"])
        expected_changes = 0
        for key in sorted(keys):
            if key not in usage["new"]:
                check(reported.get(key, {}).get("kind") == "removed", f"{key}: not reported removed")
                expected_changes += 1
                continue
            if key not in usage["old"]:
                check(reported.get(key, {}).get("kind") == "added", f"{key}: not reported added")
                expected_changes += 1
                continue
            before, after = truth("old", key), truth("new", key)
            if key not in reported:
                # Unchanged for cudatool: then nothing the tools say may differ either (the
                # occupancy follows from these).
                check(before == after, f"{key}: {before} -> {after} not reported")
                continue
            expected_changes += 1
            change = reported[key]
            check(change["kind"] == "changed", f"{key}: kind {change['kind']}")
            for metric, value in before.items():
                check(change["old"][metric] == value,
                      f"{key} old {metric}: {change['old'][metric]}, tools say {value}")
                check(change["new"][metric] == after[metric],
                      f"{key} new {metric}: {change['new'][metric]}, tools say {after[metric]}")
        check(len(document["changes"]) == expected_changes,
              f"{len(document['changes'])} changes reported, {expected_changes} expected")
        # The cases the project was built for, so that the test cannot pass on nothing.
        growing = reported.get(("sm_90", "_Z7growingPKfPfi"))
        check(growing and growing["new"]["registers"] > growing["old"]["registers"],
              "growing: registers did not rise")
        spilling = reported.get(("sm_90", "_Z8spillingPKfPfi"))
        check(spilling and spilling["old"]["spill_stores"] == 0
              and spilling["new"]["spill_stores"] > 0, "spilling: no new spill")
        sharing = reported.get(("sm_90", "_Z7sharingPf"))
        check(sharing and sharing["new"]["shared"] == 4 * sharing["old"]["shared"],
              "sharing: shared memory not 4x")
        check(reported.get(("sm_80", "_Z7retiredPi"), {}).get("kind") == "removed",
              "retired: not removed")
        archs = {a["arch"]: a["status"] for a in document["architectures"]}
        check(archs.get("sm_100") == "added" and archs.get("sm_90") == "kept",
              f"architectures: {archs}")
        summary = document["summary"]
        check(summary["passed"] and summary["removed"] == 2 and summary["added"] >= 4,
              f"summary: {summary}")

        # A saved --json as the baseline: the same changes.
        saved = os.path.join(tmp, "old.json")
        with open(saved, "w", encoding="utf-8") as f:
            f.write(cudatool("--json", old))
        from_json = json.loads(cudatool("--baseline", saved, new, "--json"))
        check(from_json["changes"] == document["changes"], "a saved baseline gives other changes")

        # --fail-on: exit 11 on the regressions named, 0 on those not there.
        failed = json.loads(cudatool("--baseline", old, new, "--json", "--fail-on",
                                     "registers,spills,removed", expect=13))
        check(failed["summary"]["broken_rules"] == ["registers", "spills", "removed"],
              f"broken rules: {failed['summary']['broken_rules']}")
        cudatool("--baseline", old, new, "--fail-on", "barriers,registers=200%", expect=0)
        cudatool("--baseline", new, new, "--fail-on", "registers,spills,removed,size", expect=0)
        cudatool("--baseline", old, new, "--fail-on", "no-such-rule", expect=2)
        text = cudatool("--baseline", old, new, "--fail-on", "spills", expect=13)
        check(text.rstrip().splitlines()[-1].endswith("(--fail-on spills)"),
              f"summary line: {text.rstrip().splitlines()[-1]}")
        markdown = cudatool("--baseline", old, new, "--markdown", "--fail-on", "shared",
                            expect=13)
        check(markdown.startswith("### ❌") and "| changed |" in markdown and "`sharing(float*)`"
              in markdown, f"markdown: {markdown[:300]}")

        # --sizes: the architectures add up to the fatbin section (readelf's size).
        sizes = json.loads(cudatool("--sizes", "--json", new))
        validate(sizes, "kernels-sizes")
        f = sizes["files"][0]
        section = sum(s["size"] for s in f["fatbin_sections"])
        check(section == f["fatbin_section_bytes"] and section > 0, "fatbin section bytes")
        check(sum(a["file_bytes"] for a in f["architectures"]) + f["overhead_bytes"] == section,
              f"architectures + overhead != section: {f}")
        readelf = subprocess.run(["readelf", "-SW", new], capture_output=True, text=True)
        if readelf.returncode == 0:
            m = re.search(r"\.nv_fatbin\s+PROGBITS\s+[0-9a-f]+\s+[0-9a-f]+\s+([0-9a-f]+)",
                          readelf.stdout)
            check(m and int(m.group(1), 16) == section, "readelf's .nv_fatbin size differs")
        largest = sizes["largest_kernels"][0]
        check(largest["code_size_bytes"] == max(code["new"].values()), "largest kernel's size")
    finally:
        shutil.rmtree(tmp)
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
