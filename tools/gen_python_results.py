#!/usr/bin/env python3
"""Writes the Python module's typed result classes from the JSON schemas (share/schemas).

Each --json document is a result class of the module (Kernels, Devices, ...) and each object
in it a record class (a kernel, a device, a check, ...); their fields are the schema's keys.
This script writes them in four places, all from the schemas and the names below:

- python/cudatool/results.py and results.pyi: the record classes (run time and stubs);
- python/cudatool/_results.py and __init__.pyi: the fields of the result classes, between
  the lines "# fields: NAME.schema.json" and "# end of fields" of each class (the rest of
  those files is written by hand).

Run after changing a schema: python3 tools/gen_python_results.py
With --check it writes nothing and exits 1 where a file differs from what it would write
(tests/python/test_results.py runs that, so that a schema change without this fails).

A key the document may lack reads None (the stub says `X | None`); a Python keyword as a
key (check's summary "pass") is the attribute with a trailing underscore (`pass_`).
"""

import json
import keyword
import pathlib
import re
import sys
import textwrap

ROOT = pathlib.Path(__file__).resolve().parent.parent
SCHEMAS = ROOT / "share" / "schemas"
PACKAGE = ROOT / "python" / "cudatool"

# The result class of each document (in _results.py and __init__.pyi, by hand).
RESULTS = {
    "devices": "Devices",
    "attrs": "Attributes",
    "occupancy": "Occupancy",
    "kernels": "Kernels",
    "kernels-compare": "KernelComparison",
    "kernels-sizes": "KernelSizes",
    "compile": "Compiled",
    "check": "CheckReport",
    "compat": "CompatReport",
}

# The record class of each object of a document: "schema:path" (path: keys, "[]" for an
# array's items) or "schema:#/$defs/name" for a definition, whichever the object is reached
# by; and the class's one-line docstring. One name for two objects means one concept: their
# fields must be the same (the script stops otherwise). An object with no name here stops
# the script: a new object in a schema needs a name.
RECORDS = {
    "devices:#/$defs/device": ("Device", "A device of `devices`: its identity and limits."),
    "devices:requirements": ("DeviceRequirements",
                             "Whether the devices meet --min-cc/--min-memory/--min-count."),
    "attrs:attributes": ("AttributeValues",
                         "Every attribute the driver answers, by its lower-case name: an int."),
    "occupancy:device": ("OccupancyDevice",
                         "What occupancy depends on (DeviceData.to_dict(); None: unknown)."),
    "occupancy:#/$defs/record": ("SweepRecord", "The occupancy at one point of a sweep."),
    "occupancy:#/$defs/record/block_limits": (
        "BlockLimits", "Blocks per SM each resource allows (None: no limit)."),
    "occupancy:suggestion": ("BlockSizeSuggestion",
                             "The block size cudaOccupancyMaxPotentialBlockSize chooses."),
    "occupancy:steps[]": ("SweepStep", "A run of sweep points with the same occupancy."),
    "occupancy:#/$defs/improvement": (
        "Improvement", "The smallest cut of one resource that fits more blocks per SM."),
    "occupancy:cluster": ("ClusterOccupancy",
                          "The parts of a thread-block-cluster answer (--cluster)."),
    "occupancy:cluster/driver": ("ClusterDriverAnswer",
                                 "The driver's own cluster answers (--device)."),
    "occupancy:cluster/sizes[]": ("ClusterSize", "Active clusters at one cluster size."),
    "occupancy:#/$defs/unknown_answer/unknown": ("UnknownLimits",
                          "Why the architecture's limits are unknown, and which."),
    "occupancy:kernel": ("OccupancyKernel",
                         "The kernel of --kernel-from: its resources and where it is."),
    "kernels:kernels[]": ("Kernel", "A kernel of an image and its resources."),
    "kernels:kernels[]/occupancy": ("KernelOccupancy", "A kernel's occupancy at --threads."),
    "kernels:images[]": ("Image", "A CUDA image (CUBIN, PTX, LTO IR) of a file."),
    "kernels:files[]": ("ScannedFile", "A file that was read."),
    "kernels:files[]/fatbin_sections[]": ("FatbinSection",
                                         "A section of fatbin containers in a file."),
    "kernels-compare:changes[]": ("KernelChange", "A kernel added, removed or changed."),
    "kernels-compare:#/$defs/measures": (
        "KernelMeasures", "A kernel's measures in one build (None: unknown)."),
    "kernels-compare:architectures[]": ("ArchitectureChange",
                                        "An architecture's images in the two builds."),
    "kernels-compare:summary": ("ComparisonSummary",
                                "Counts of the comparison and the --fail-on verdict."),
    "kernels-sizes:files[]": ("FileSizes", "Where the bytes of one file go."),
    "kernels-sizes:files[]/fatbin_sections[]": ("FatbinSection", None),
    "kernels-sizes:files[]/architectures[]": ("ArchitectureSizes",
                                             "The bytes of one architecture in a file."),
    "kernels-sizes:#/$defs/kernel": (
        "KernelSize", "A kernel's code size (and, as a duplicate, its copies)."),
    "kernels-sizes:duplicates/kernels[]": (
        "DuplicateKernel", "A kernel with identical copies: how many, and the bytes they add."),
    "kernels-sizes:template_families[]": ("TemplateFamily",
                                          "The instantiations of one template."),
    "kernels-sizes:duplicates": ("Duplicates", "Identical images and kernel copies."),
    "compile:cache": ("CompileCache", "The compile cache: this compile's entry, or its state."),
    "compile:targets[]/cache": ("CompileCache", None),
    "compile:#/$defs/kernel": ("CompiledKernel", "A compiled kernel and its resources."),
    "compile:#/$defs/kernel/occupancy": ("KernelOccupancy", None),
    "compile:#/$defs/resources": ("KernelResources",
                                  "A kernel's resources as the driver loaded them."),
    "compile:differences[]": ("LoadDifference",
                              "An attribute where the offline reading and the driver differ."),
    "compile:targets[]/differences[]": ("LoadDifference", None),
    "compile:targets[]": ("CompileTarget", "The compile for one of several architectures."),
    "check:kernel_log": ("KernelLog", "Where the xid check read the kernel log."),
    "check:kernel_log/other_gpus[]": ("OtherGpuXids",
                                      "XIDs of a GPU that is not one of the devices."),
    "check:#/$defs/xid": ("Xid", "One XID of the kernel log: how often, what, what to do."),
    "check:summary": ("CheckSummary", "How many checks passed, warned, failed, skipped."),
    "check:#/$defs/check": ("Check", "One check's verdict, value and reason."),
    "check:devices[]": ("CheckedDevice", "A device and its checks."),
    "check:#/$defs/occupancy": ("DeviceUse",
                                "Who else used the device (NVML), before cudatool's context."),
    "check:#/$defs/occupancy/processes[]": ("DeviceProcess",
                                            "Another process with a context on the device."),
    "compat:targets[]": ("CompatTarget", "A GPU the code must run on."),
    "compat:driver": ("CompatDriver", "The driver the verdicts assume."),
    "compat:files[]": ("CompatFile", "A file's CUDA code and whether it runs on each target."),
    "compat:files[]/verdicts[]": ("CompatVerdict", "Whether a file runs on one target, and why."),
    "compat:files[]/container_detail[]": ("CompatContainer",
                                          "A fatbin container and the driver's choices."),
    "compat:files[]/container_detail[]/entries[]": ("CompatEntry",
                                                    "An image of a fatbin container."),
    "compat:files[]/container_detail[]/decisions[]": (
        "CompatDecision", "What the driver would load from the container for a target."),
    "compat:packages[]": ("CompatPackage", "A Python package and its CUDA code."),
    "compat:summary": ("CompatSummary", "Counts of the verdicts and the exit status."),
}

# What the result classes hold besides the document (_results.py): no key may be named so.
RESERVED = {"to_dict", "keys", "warnings", "unreadable_entries", "passed", "exit_status", "ok"}

SCALARS = {"string": "str", "integer": "int", "number": "float", "boolean": "bool",
           "null": "None"}


class Type:
    """A field's type: alternatives of "str", "int", "float", "bool", "None", "Any",
    ("literal", v), ("list", Type), ("record", class name)."""

    def __init__(self, alternatives=()):
        self.alternatives = []
        for a in alternatives:
            self.add(a)

    def add(self, alternative):
        if alternative not in self.alternatives:
            self.alternatives.append(alternative)

    def merge(self, other):
        for a in other.alternatives:
            if isinstance(a, tuple) and a[0] == "list":
                # A list of nothing known (an empty sweep's records) adds nothing to a list
                # of something.
                lists = [b for b in self.alternatives if isinstance(b, tuple) and b[0] == "list"]
                if lists and a[1].alternatives == ["Any"]:
                    continue
                if lists and lists[0][1].alternatives == ["Any"]:
                    self.alternatives.remove(lists[0])
            self.add(a)
        return self

    def optional(self):
        return Type(self.alternatives + ["None"])

    def record(self):
        """(class name, is a list) where the field holds records, else None."""
        for a in self.alternatives:
            if isinstance(a, tuple) and a[0] == "record":
                return a[1], False
            if isinstance(a, tuple) and a[0] == "list":
                inner = a[1].record()
                if inner and not inner[1]:
                    return inner[0], True
        return None

    def stub(self, prefix=""):
        """The annotation: str, int, float, bool, Literal[...], list[...], records (their
        names after `prefix`), None."""
        named = {a for a in self.alternatives if isinstance(a, str)}
        if "Any" in named:
            return "Any"
        literals, lists, records = [], [], []
        for a in self.alternatives:
            if isinstance(a, tuple) and a[0] == "literal":
                if a[1] is None:
                    named.add("None")
                elif not ((isinstance(a[1], str) and "str" in named)
                          or (isinstance(a[1], int) and "int" in named)):
                    literals.append(a[1])
            elif isinstance(a, tuple) and a[0] == "list":
                lists.append(f"list[{a[1].stub(prefix)}]")
            elif isinstance(a, tuple) and a[0] == "record":
                records.append(prefix + a[1])
        if "float" in named:
            named.discard("int")  # a JSON number may be written without a fraction
        parts = [n for n in ("str", "int", "float", "bool") if n in named]
        if literals:
            parts.append("Literal[" + ", ".join(json.dumps(v) for v in literals) + "]")
        parts += lists + records
        if "None" in named:
            parts.append("None")
        return " | ".join(parts) or "Any"


class Generator:
    def __init__(self):
        self.records = {}  # name -> (docstring, {attribute: (key, Type, description)})
        self.used = set()  # the RECORDS entries met

    def load(self, schema_name):
        with open(SCHEMAS / f"{schema_name}.schema.json", encoding="utf-8") as file:
            return json.load(file)

    def resolve(self, schema, node, where):
        """The node behind $ref chains, and the name it is reached by."""
        while "$ref" in node:
            ref = node["$ref"]
            assert ref.startswith("#/$defs/"), ref
            where = ref
            node = schema["$defs"][ref[len("#/$defs/"):]]
        return node, where

    def fields(self, schema, node, where, name, required_here=True):
        """{key: (Type, required, description)} of an object node, over its allOf, anyOf,
        oneOf and if/then/else branches (keys of a branch are optional)."""
        node, where = self.resolve(schema, node, where)
        found = {}

        def put(key, type_, required, description):
            if key in found:
                old_type, old_required, old_description = found[key]
                found[key] = (old_type.merge(type_), old_required or required,
                              old_description or description)
            else:
                found[key] = (type_, required, description)

        required = set(node.get("required", [])) if required_here else set()
        for key, sub in node.get("properties", {}).items():
            put(key, self.type_of(schema, sub, f"{where}/{key}", name), key in required,
                sub.get("description"))
        # A required key without properties (block_limits' resources): typed by
        # additionalProperties where that says how.
        extra = node.get("additionalProperties")
        if isinstance(extra, dict):
            for key in sorted(required - set(node.get("properties", {})),
                              key=node.get("required", []).index):
                put(key, self.type_of(schema, extra, f"{where}/{key}", name), True, None)
        for sub in node.get("allOf", []):
            for key, value in self.fields(schema, sub, where, name, required_here).items():
                put(key, *value)
        for branch in ([node.get("then"), node.get("else")] + node.get("anyOf", [])
                       + node.get("oneOf", [])):
            if isinstance(branch, dict):
                for key, (t, _, d) in self.fields(schema, branch, where, name, False).items():
                    put(key, t, False, d)
        return found

    def type_of(self, schema, node, where, schema_name):
        if not isinstance(node, dict) or not node:
            return Type(["Any"])
        node, where = self.resolve(schema, node, where)
        result = Type()
        for branch in node.get("oneOf", []) + node.get("anyOf", []):
            result.merge(self.type_of(schema, branch, where, schema_name))
        if "enum" in node:
            for value in node["enum"]:
                result.add(("literal", value))
            return result
        if "const" in node:
            result.add(SCALARS[node["type"]] if "type" in node else ("literal", node["const"]))
            return result
        types = node.get("type", [])
        for t in [types] if isinstance(types, str) else types:
            if t == "array":
                items = node.get("items")
                if items is None and node.get("maxItems") == 0:
                    result.add(("list", Type(["Any"])))
                else:
                    result.add(("list", self.type_of(schema, items or {}, f"{where}[]",
                                                     schema_name)))
            elif t == "object":
                result.add(("record", self.record(schema, node, where, schema_name)))
            else:
                result.add(SCALARS[t])
        if not result.alternatives:
            if "allOf" in node or "properties" in node or "required" in node:
                result.add(("record", self.record(schema, node, where, schema_name)))
            else:
                result.add("Any")
        return result

    def record(self, schema, node, where, schema_name):
        key = f"{schema_name}:{where.lstrip('/')}"
        if key not in RECORDS:
            raise SystemExit(f"share/schemas/{schema_name}.schema.json: the object at {where} "
                             f"has no class name: add \"{key}\" to RECORDS in {__file__}")
        name, doc = RECORDS[key]
        self.used.add(key)
        fields = self.fields(schema, node, where, schema_name)
        entry = {attribute(k): (k, t if r else t.optional(), d)
                 for k, (t, r, d) in fields.items()}
        if set(entry) & {"to_dict", "keys"}:
            raise SystemExit(f"{key}: a key named like a method of Result")
        if not node.get("properties") and not node.get("required") and isinstance(
                node.get("additionalProperties"), dict):
            # A map (attrs' attributes): keys are not known, values are.
            value = self.type_of(schema, node["additionalProperties"], where + "/*", schema_name)
            entry = {"*": ("*", value, None)}
        if name in self.records:
            old_doc, old_entry = self.records[name]
            if {a: (k, t.stub()) for a, (k, t, _) in old_entry.items()} != {
                    a: (k, t.stub()) for a, (k, t, _) in entry.items()}:
                raise SystemExit(f"{name}: {key} has other fields than the {name} of "
                                 f"another document; one name, one concept")
            if doc and not old_doc:
                self.records[name] = (doc, old_entry)
        else:
            self.records[name] = (doc, entry)
        return name

    def result_fields(self, schema_name):
        schema = self.load(schema_name)
        fields = self.fields(schema, schema, "", schema_name)
        taken = RESERVED & {attribute(k) for k in fields}
        if taken:
            raise SystemExit(f"{schema_name}: keys {sorted(taken)} are names the result "
                             f"classes already use (_results.py)")
        return {attribute(k): (k, t if r else t.optional(), d)
                for k, (t, r, d) in fields.items()}


def attribute(key):
    return key + "_" if keyword.iskeyword(key) else key


def runtime_field(key, type_, lazy):
    record = type_.record()
    if record is None:
        return f'_Field("{key}")'
    name, many = record
    target = f'"{name}"' if lazy else name
    return f'_Field("{key}", list_of={target})' if many else f'_Field("{key}", {target})'


def docstring(text, indent):
    if not text:
        return []
    # The schemas speak JSON; the stubs, Python.
    text = re.sub(r"\bnull\b", "None", text.strip())
    text = text[0].upper() + text[1:]
    if not text.endswith((".", ")")):
        text += "."
    width = 100 - len(indent) - 6
    lines = textwrap.wrap(text.replace('"""', "'''"), width)
    if len(lines) == 1:
        return [f'{indent}"""{lines[0]}"""']
    return [f'{indent}"""{lines[0]}'] + [indent + line for line in lines[1:]] + [f'{indent}"""']


def stub_fields(fields, indent, prefix=""):
    lines = []
    for name, (key, type_, description) in fields.items():
        annotation = type_.stub(prefix)
        if name == "*":
            lines.append(f"{indent}def __getitem__(self, key: str) -> {annotation}: ...")
            lines.append(f"{indent}def __getattr__(self, name: str) -> {annotation}: ...")
            continue
        lines.append(f"{indent}@property")
        if description:
            lines.append(f"{indent}def {name}(self) -> {annotation}:")
            lines += docstring(description, indent + "    ")
        else:
            lines.append(f"{indent}def {name}(self) -> {annotation}: ...")
    return lines


def dependencies(entry):
    names = []
    for _, (_, type_, _) in entry.items():
        record = type_.record()
        if record:
            names.append(record[0])
    return names


def ordered(records):
    """Records before the records that hold them (so a class names the classes it wraps)."""
    done, out = set(), []

    def visit(name):
        if name in done:
            return
        done.add(name)
        for dependency in dependencies(records[name][1]):
            visit(dependency)
        out.append(name)

    for name in sorted(records):
        visit(name)
    return out


HEADER = ("# Written by tools/gen_python_results.py from share/schemas/*.schema.json: edit the "
          "schemas\n# (or the class names in the script) and run it, not this file.\n")


def all_list(names):
    body = textwrap.wrap(", ".join(f'"{n}"' for n in sorted(names)), 94)
    return ["__all__ = ["] + ["    " + line for line in body] + ["]"]


def results_py(records):
    out = ['"""The records of the results: each object of a `--json` document as a class whose',
           "attributes are its keys (see share/schemas and the stubs, results.pyi). Each is a",
           "`cudatool.Result`: `to_dict()` is the object itself, `record[\"key\"]` and `in` work",
           'as on the result. A key the document lacks reads None."""', "",
           HEADER.rstrip("\n"), "",
           "from ._results import Result, _Field", ""]
    names = ordered(records)
    out += all_list(names)
    for name in names:
        doc, entry = records[name]
        out += ["", "", f"class {name}(Result):"]
        out += docstring(doc, "    ") or [f'    """{name}."""']
        out += ["", "    __slots__ = ()"]
        plain = [(a, k, t) for a, (k, t, _) in entry.items() if a != "*"]
        if plain:
            out.append("")
        for a, k, t in plain:
            out.append(f"    {a} = {runtime_field(k, t, lazy=False)}")
    return "\n".join(out) + "\n"


def results_pyi(records):
    names = ordered(records)
    out = all_list(names)
    for name in names:
        doc, entry = records[name]
        out += ["", f"class {name}(Result):"]
        out += docstring(doc, "    ")
        out += stub_fields(entry, "    ")
    body = "\n".join(out) + "\n"
    used = [n for n in ("Any", "Literal") if re.search(rf"\b{n}\b", body)]
    imports = [f"from typing import {', '.join(used)}", ""] if used else []
    return "\n".join([HEADER.rstrip("\n"), *imports, "from . import Result", "", body])


MARK = re.compile(r"^(?P<indent> *)# fields: (?P<schema>[\w-]+)\.schema\.json.*\n"
                  r"(?P<body>(?:.*\n)*?)(?P=indent)# end of fields\n", re.M)


def replace_regions(text, make):
    def substitute(match):
        indent, schema = match.group("indent"), match.group("schema")
        body = "\n".join(make(schema, indent))
        return (f"{indent}# fields: {schema}.schema.json (tools/gen_python_results.py writes "
                f"these lines)\n{body}\n{indent}# end of fields\n")

    return MARK.sub(substitute, text)


def generate():
    """{path: text} of every file this script writes."""
    generator = Generator()
    result_fields = {name: generator.result_fields(name) for name in RESULTS}
    unused = set(RECORDS) - generator.used
    if unused:
        raise SystemExit(f"RECORDS names objects that no schema has: {sorted(unused)}")

    def runtime(schema, indent):
        return [f"{indent}{a} = {runtime_field(k, t, lazy=True)}"
                for a, (k, t, _) in result_fields[schema].items()]

    def stub(schema, indent):
        return stub_fields(result_fields[schema], indent, prefix="_r.")

    files = {
        PACKAGE / "results.py": results_py(generator.records),
        PACKAGE / "results.pyi": results_pyi(generator.records),
    }
    for path, make in ((PACKAGE / "_results.py", runtime), (PACKAGE / "__init__.pyi", stub)):
        text = path.read_text(encoding="utf-8")
        new = replace_regions(text, make)
        found = set(m.group("schema") for m in MARK.finditer(text))
        if found != set(RESULTS):
            raise SystemExit(f"{path}: '# fields:' regions for {sorted(found)}, expected "
                             f"{sorted(RESULTS)}")
        files[path] = new
    return files


def main():
    check = "--check" in sys.argv[1:]
    stale = []
    for path, text in generate().items():
        old = path.read_text(encoding="utf-8") if path.exists() else None
        if old != text:
            stale.append(path.relative_to(ROOT))
            if not check:
                path.write_text(text, encoding="utf-8")
    if check and stale:
        print("not up to date with share/schemas (run python3 tools/gen_python_results.py): "
              + ", ".join(map(str, stale)))
        return 1
    if not check:
        print("wrote " + (", ".join(map(str, stale)) or "nothing (up to date)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
