"""The typed results (cudatool/_results.py, cudatool/results.py, the stubs): the classes are
what tools/gen_python_results.py writes from share/schemas; on real documents of every
command, every key is a declared field of its class (recursively) and every field's value
has the type the stubs declare; the records behave as the results do; mypy checks code
against the declared fields."""

import ast
import json
import keyword
import os
import pathlib
import subprocess
import sys

import pytest

import cudatool
from conftest import fake_driver_env, run_python

SOURCE = pathlib.Path(__file__).resolve().parent.parent.parent
CASES = SOURCE / "tests" / "schema" / "cases.json"
CUBIN = SOURCE / "fuzz" / "corpus" / "elf" / "sm_90.cubin"
JIT = SOURCE / "fuzz" / "corpus" / "compat_headers" / "sm_86+compute_80.fatbin"


def test_generated_files_are_up_to_date():
    # A schema changed without running the generator fails here.
    done = subprocess.run([sys.executable, str(SOURCE / "tools" / "gen_python_results.py"),
                           "--check"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


# --- the stubs, read as a table: class -> {attribute: annotation} -------------------------

def stub_classes():
    package = pathlib.Path(cudatool.__file__).parent
    classes = {}
    for name in ("__init__.pyi", "results.pyi"):
        tree = ast.parse((package / name).read_text(encoding="utf-8"))
        for node in tree.body:
            if not isinstance(node, ast.ClassDef):
                continue
            fields = {}
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and any(
                        isinstance(d, ast.Name) and d.id == "property"
                        for d in item.decorator_list):
                    fields[item.name] = item.returns
                elif isinstance(item, ast.FunctionDef) and item.name == "__getitem__" and (
                        node.name != "Result"):
                    fields["*"] = item.returns  # a map: any key, values of this type
                elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    fields[item.target.id] = item.annotation
            classes[node.name] = fields
    return classes


STUBS = stub_classes()


def class_name(annotation):
    if isinstance(annotation, ast.Attribute):  # _r.Kernel in __init__.pyi
        return annotation.attr
    if isinstance(annotation, ast.Name) and annotation.id in STUBS:
        return annotation.id
    return None


def mismatch(value, annotation, where):
    """None where `value` has the type `annotation` says, else why not."""
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        left = mismatch(value, annotation.left, where)
        if left is None:
            return None
        right = mismatch(value, annotation.right, where)
        return None if right is None else f"{left}; {right}"
    if isinstance(annotation, ast.Constant) and annotation.value is None:
        return None if value is None else f"{where}: {value!r} is not None"
    if isinstance(annotation, ast.Subscript):
        outer = annotation.value.id
        if outer == "list":
            if not isinstance(value, list):
                return f"{where}: {value!r} is not a list"
            for i, item in enumerate(value):
                why = mismatch(item, annotation.slice, f"{where}[{i}]")
                if why:
                    return why
            return None
        if outer == "Literal":
            elements = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else [
                annotation.slice]
            allowed = [e.value for e in elements]
            return None if value in allowed else f"{where}: {value!r} is not one of {allowed}"
        raise AssertionError(f"{where}: no check for {ast.unparse(annotation)}")
    record = class_name(annotation)
    if record:
        if type(value).__name__ != record:
            return f"{where}: {type(value).__name__} is not a {record}"
        return "; ".join(record_problems(value, where)) or None
    name = annotation.id
    if name == "Any":
        return None
    if name == "bool":
        return None if isinstance(value, bool) else f"{where}: {value!r} is not a bool"
    if name == "int":
        return None if isinstance(value, int) and not isinstance(value, bool) else (
            f"{where}: {value!r} is not an int")
    if name == "float":  # a JSON number may be written without a fraction
        return None if isinstance(value, (int, float)) and not isinstance(value, bool) else (
            f"{where}: {value!r} is not a float")
    if name == "str":
        return None if isinstance(value, str) else f"{where}: {value!r} is not a str"
    raise AssertionError(f"{where}: no check for {name}")


def record_problems(result, where):
    """Every key of the result's document is a field its class declares, and every declared
    field reads a value of its declared type (recursively)."""
    name = type(result).__name__
    fields = STUBS[name]
    document = result.to_dict()
    problems = []
    if "*" in fields:
        for key in document:
            why = mismatch(result[key], fields["*"], f"{where}.{key}")
            if why:
                problems.append(why)
        return problems
    for key in document:
        attribute = key + "_" if keyword.iskeyword(key) else key
        if attribute not in fields:
            problems.append(f"{where}.{key}: not a declared field of {name}")
    for attribute, annotation in fields.items():
        why = mismatch(getattr(result, attribute), annotation, f"{where}.{attribute}")
        if why:
            problems.append(why)
    return problems


def assert_typed(result, where):
    problems = record_problems(result, where)
    assert not problems, "\n".join(problems)


# --- every schema case's document (tests/schema/cases.json), as its result class -----------

def make_result(schema, status, out):
    document = json.loads(out)
    if schema == "kernels":
        return cudatool.Kernels(out, [], status == 10)
    if schema == "kernels-compare":
        return cudatool.KernelComparison(out, [], status != 13)
    if schema == "kernels-sizes":
        return cudatool.KernelSizes(out, [])
    if schema == "compile":
        return cudatool.Compiled(document, [])
    if schema == "check":
        return cudatool.CheckReport(document, status == 0)
    if schema == "compat":
        return cudatool.CompatReport(document, status)
    return {"devices": cudatool.Devices, "attrs": cudatool.Attributes,
            "occupancy": cudatool.Occupancy}[schema](document)


SCHEMAS = ["devices", "attrs", "occupancy", "kernels", "kernels-compare", "kernels-sizes",
           "compile", "check", "compat"]


def schema_cases():
    cases = json.loads(CASES.read_text(encoding="utf-8"))
    for schema in SCHEMAS:
        for i, case in enumerate(cases[schema]):
            yield pytest.param(schema, case, id=f"{schema}-{i}")


@pytest.mark.parametrize("schema, case", list(schema_cases()))
def test_every_key_of_every_case_is_a_typed_field(schema, case, tmp_path):
    from conftest import cli_path

    fake = os.environ.get("CUDATOOL_FAKE_LIBCUDA", "")
    env = dict(os.environ)
    env.pop("CUDATOOL_LIBCUDA", None)
    env.pop("CUDATOOL_LIBNVML", None)
    if case.get("fake_driver") or case.get("fake_nvml"):
        env = fake_driver_env()
    if case.get("fake_nvml"):
        nvml = os.path.join(os.path.dirname(fake), "libfakenvml.so")
        if not os.path.exists(nvml):
            pytest.skip("no fake NVML beside the fake driver")
        env.pop("CUDATOOL_NO_NVML", None)
        env["CUDATOOL_LIBNVML"] = nvml
    if case.get("no_driver"):
        env["CUDATOOL_LIBCUDA"] = "/nonexistent/libcuda.so.1"
        env["CUDATOOL_NO_NVML"] = "1"
    kernels_data = os.environ.get("CUDATOOL_KERNELS_DATA", "")
    if any("{kernels_data}" in a for a in case["args"]) and not os.path.isdir(kernels_data):
        pytest.skip("no kernels test binaries (CUDATOOL_KERNELS_DATA)")

    def expand(text):
        return (text.replace("{source_dir}", str(SOURCE)).replace("{tmp}", str(tmp_path))
                .replace("{kernels_data}", kernels_data))

    for key, value in case.get("env", {}).items():
        env[key] = expand(value)
    for relative, text in case.get("files", {}).items():
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    done = subprocess.run([cli_path(), *map(expand, case["args"])], env=env,
                          capture_output=True, timeout=300)
    if schema == "compile" and done.returncode != case.get("exit_code", 0):
        pytest.skip(f"no compiler here: {done.stderr.decode(errors='replace').strip()}")
    assert done.returncode == case.get("exit_code", 0), done.stderr
    result = make_result(schema, done.returncode, done.stdout)
    assert_typed(result, type(result).__name__)


# --- documents the module's own calls return ------------------------------------------------

def test_kernels_compare_and_sizes_are_typed(kernels_data):
    files = sorted(os.path.join(kernels_data, f) for f in os.listdir(kernels_data)
                   if not f.endswith(".cu") and os.path.isfile(os.path.join(kernels_data, f)))
    for path in files:
        for threads in (None, 256):
            assert_typed(cudatool.kernels(path, threads=threads), f"kernels({path})")
    zstd, lz4 = os.path.join(kernels_data, "zstd.o"), os.path.join(kernels_data, "lz4.o")
    assert_typed(cudatool.compare_kernels(zstd, lz4, fail_on="removed"), "compare_kernels")
    assert_typed(cudatool.compare_kernels(lz4, zstd, threads=128), "compare_kernels")
    assert_typed(cudatool.kernel_sizes(files), "kernel_sizes")
    name = cudatool.kernels(os.path.join(kernels_data, "none.o")).kernels[0].name
    assert_typed(cudatool.kernel_occupancy(os.path.join(kernels_data, "none.o"),
                                           "^" + name + "$", 128, arch="sm_90"),
                 "kernel_occupancy")


def test_occupancy_documents_are_typed():
    for arch in ("sm_90", "sm_80", "sm_88", "sm_120"):
        d = cudatool.DeviceData(arch)
        assert_typed(cudatool.Occupancy({"device": d.to_dict()}).device, f"DeviceData({arch})")
        assert_typed(cudatool.sweep_block_sizes(d, registers=40), f"sweep_block_sizes({arch})")
        assert_typed(cudatool.sweep_registers(d, 256, registers=64), f"sweep_registers({arch})")
        assert_typed(cudatool.sweep_shared_memory(d, 256, shared_mem=50000),
                     f"sweep_shared_memory({arch})")
        if not d.unknown_fields:
            record = cudatool.OccupancyRecord(d, 256, registers=64)
            assert_typed(cudatool.Occupancy(record.to_dict()), f"OccupancyRecord({arch})")
            assert_typed(cudatool.suggest_block_size(d), f"suggest_block_size({arch})")


def test_compat_is_typed():
    for arch in ("sm_90", "A100", "H100,L4"):
        assert_typed(cudatool.compat(str(CUBIN), arch=arch), f"compat({arch})")
    assert_typed(cudatool.compat(str(JIT), arch=["sm_90", "sm_86"], driver="535.104.05",
                                 containers=True), "compat(containers)")


def test_compile_is_typed(tmp_path):
    source = 'extern "C" __global__ void scale(float* x, float a) { x[threadIdx.x] *= a; }\n'
    try:
        compiled = cudatool.compile(source, arch="sm_90", threads=256, options=["--no-cache"])
    except cudatool.DriverNotFound as e:
        pytest.skip(f"no NVRTC: {e}")
    assert_typed(compiled, "compile")
    assert [type(k).__name__ for k in compiled] == ["CompiledKernel"]
    both = cudatool.compile(source, arch=["sm_80", "sm_90"], options=["--no-cache"])
    assert_typed(both, "compile(sm_80, sm_90)")
    assert [t.arch for t in both.targets] == ["sm_80", "sm_90"]


def test_devices_attributes_check_with_the_fake_driver_are_typed():
    out = run_python(
        "import cudatool, json\n"
        "print(json.dumps([cudatool.devices().to_dict(), cudatool.attributes(1).to_dict(),\n"
        "                  cudatool.check(only=['identity']).to_dict()]))", fake_driver_env())
    devices, attributes, check = out
    assert_typed(cudatool.Devices(devices), "devices")
    assert_typed(cudatool.Attributes(attributes), "attributes")
    report = cudatool.CheckReport(check, True)
    assert_typed(report, "check")
    assert [type(d).__name__ for d in report] == ["CheckedDevice"] * len(check["devices"])
    assert report.summary.pass_ == check["summary"]["pass"] == report.summary["pass"]


# --- behaviour of the records -----------------------------------------------------------------

def test_records_are_classes_with_the_results_behaviour(kernels_data):
    path = os.path.join(kernels_data, "none.o")
    result = cudatool.kernels(path, threads=128)
    kernel = result.kernels[0]
    assert type(kernel) is cudatool.results.Kernel and isinstance(kernel, cudatool.Result)
    assert type(kernel.occupancy) is cudatool.results.KernelOccupancy
    # Item access gives the same typed record; the document is the one to_dict() holds.
    assert type(kernel["occupancy"]) is cudatool.results.KernelOccupancy
    assert kernel.to_dict() is result.to_dict()["kernels"][0]
    assert "num_regs" in kernel and "num_regs" in kernel.keys() and "num_regs" in dir(kernel)
    assert kernel == cudatool.results.Kernel(dict(kernel.to_dict()))
    assert repr(kernel).startswith("Kernel(") and "num_regs=" in repr(kernel)
    # Fields are read-only: the result is the command's document.
    with pytest.raises(AttributeError):
        kernel.num_regs = 1
    # Iterating makes the records one at a time, from the list the document holds.
    iterator = iter(result)
    assert not isinstance(iterator, list)
    assert type(next(iterator)) is cudatool.results.Kernel
    # A key the document lacks reads None; one no schema declares is still an attribute.
    assert cudatool.results.Kernel({"name": "k"}).occupancy is None
    extra = cudatool.results.Kernel({"name": "k", "new_key": {"a": 1}})
    assert extra.new_key.a == 1 and extra["new_key"]["a"] == 1
    with pytest.raises(AttributeError):
        extra.no_such_key  # noqa: B018
    with pytest.raises(TypeError):
        iter(kernel)
    # A list read from a field is a copy: changing it leaves the document as it was.
    kernel = cudatool.results.Kernel({"name": "k", "required_block_size": [32, 1, 1]})
    kernel.required_block_size.append(0)
    assert kernel.to_dict()["required_block_size"] == [32, 1, 1]


def test_large_documents_stay_text_until_read():
    text = json.dumps({"schema_version": 1, "kernels": [{"name": f"k{i}"} for i in range(3)],
                       "images": [], "files": []}).encode()
    result = cudatool.Kernels(text, [], False)
    assert result._document is None and result._text == text
    assert [k.name for k in result] == ["k0", "k1", "k2"]
    assert result._text is None


def test_import_stays_lean():
    # Importing cudatool imports no typing module and not the records (made at first read).
    out = run_python("import sys, json\n"
                     "before = set(sys.modules)\n"
                     "import cudatool\n"
                     "print(json.dumps(sorted(set(sys.modules) - before)))", dict(os.environ))
    assert not {"typing", "dataclasses", "cudatool.results"} & set(out), out


# --- mypy on code that uses the results ---------------------------------------------------------

def test_mypy_knows_the_fields(tmp_path):
    try:
        import mypy  # noqa: F401
    except ImportError:
        pytest.skip("mypy is not installed (tools/python-env.sh installs it)")
    good = tmp_path / "good.py"
    good.write_text(
        "import cudatool\n"
        "from cudatool.results import Kernel, KernelOccupancy\n"
        "k = cudatool.kernels(['x.o'], threads=128)\n"
        "for kernel in k:\n"
        "    regs: int = kernel.num_regs\n"
        "    occupancy: KernelOccupancy | None = kernel.occupancy\n"
        "    if occupancy is not None:\n"
        "        fraction: float | None = occupancy.occupancy\n"
        "first: Kernel = k.kernels[0]\n"
        "size: int = cudatool.kernel_sizes(['x.o']).files[0].architectures[0].file_bytes\n"
        "rules: list[str] = cudatool.compare_kernels('a.o', 'b.o').summary.broken_rules\n"
        "s = cudatool.suggest_block_size(cudatool.DeviceData('sm_90'))\n"
        "block: int = s.block_size\n"
        "report = cudatool.check()\n"
        "passed: int = report.summary.pass_\n"
        "for device in report:\n"
        "    for c in device.checks:\n"
        "        verdict: str = c.verdict\n"
        "warp: int = cudatool.attributes().attributes['warp_size']\n"
        "for f in cudatool.compat('x.so', arch='sm_90'):\n"
        "    for v in f.verdicts:\n"
        "        fix: str | None = v.fix\n")
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import cudatool\n"
        "k = cudatool.kernels(['x.o'])\n"
        "name: int = k.kernels[0].name\n"
        "k.kernels[0].nmu_regs\n"
        "for r in cudatool.sweep_block_sizes(cudatool.DeviceData('sm_90')):\n"
        "    pass\n"
        "k.kernels[0].num_regs = 3\n")
    base = [sys.executable, "-m", "mypy", "--no-incremental", "--cache-dir", os.devnull]
    done = subprocess.run(base + ["--strict", str(good)], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    done = subprocess.run(base + [str(bad)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 1, done.stdout + done.stderr
    for line, what in ((3, "Incompatible types in assignment"),
                       (4, '"Kernel" has no attribute "nmu_regs"'),
                       (5, '"Occupancy" has no attribute "__iter__"'),
                       (7, 'Property "num_regs" defined in "Kernel" is read-only')):
        assert f"bad.py:{line}: error: {what}" in done.stdout, done.stdout
