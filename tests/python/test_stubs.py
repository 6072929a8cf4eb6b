"""The type stubs (cudatool/__init__.pyi) against the module: every public name and member of
the stub exists at run time and the other way round; mypy's stubtest (signatures, read-only
properties, __all__) where mypy is installed (tools/python-env.sh pins it); and mypy
checking code that uses the stubs."""

import ast
import inspect
import os
import subprocess
import sys

import pytest

import cudatool

ALLOWLIST = os.path.join(os.path.dirname(__file__), "stubtest-allowlist.txt")


def stub_tree():
    path = os.path.join(os.path.dirname(cudatool.__file__), "__init__.pyi")
    with open(path, encoding="utf-8") as file:
        return ast.parse(file.read(), path)


def public(names):
    return {n for n in names if not n.startswith("_")}


def stub_names(tree):
    """Top-level names and, per class, its member names."""
    top, members = set(), {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            top.add(node.name)
            names = set()
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    names.add(item.name)
                elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    names.add(item.target.id)
            members[node.name] = names
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            top.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            top.add(node.target.id)
        elif isinstance(node, ast.Assign):
            top.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return top, members


def test_stub_names_equal_the_module():
    top, members = stub_names(stub_tree())
    assert public(top) == public(cudatool.__all__)
    for name in cudatool.__all__:
        assert hasattr(cudatool, name), name
    for cls_name, names in members.items():
        cls = getattr(cudatool, cls_name)
        # What the class itself defines (not what every object has), public.
        runtime = set()
        for klass in inspect.getmro(cls):
            if klass.__module__.startswith("cudatool"):
                runtime |= public(vars(klass))
        documented = public(names)
        assert documented <= runtime | {"__init__"}, (cls_name, documented - runtime)
        # Every public member of the module's own classes is in the stub, inherited ones from
        # a stub class too.
        inherited = set()
        for base in inspect.getmro(cls)[1:]:
            inherited |= public(members.get(base.__name__, set()))
        missing = runtime - documented - inherited
        assert not missing, (cls_name, missing)


def mypy_or_skip():
    try:
        import mypy  # noqa: F401
    except ImportError:
        pytest.skip("mypy is not installed (tools/python-env.sh installs it)")


def test_stubtest_finds_no_difference():
    mypy_or_skip()
    done = subprocess.run([sys.executable, "-m", "mypy.stubtest", "--allowlist", ALLOWLIST,
                           "cudatool"], capture_output=True, text=True, timeout=600,
                          cwd=os.path.dirname(os.path.dirname(cudatool.__file__)))
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_checks_code_against_the_stubs(tmp_path):
    mypy_or_skip()
    good = tmp_path / "good.py"
    good.write_text(
        "import cudatool\n"
        "d = cudatool.DeviceData('sm_90')\n"
        "r = cudatool.OccupancyRecord(d, 256, registers=64)\n"
        "blocks: int = r.tb_per_mp\n"
        "occupancy: float = r.occupancy\n"
        "threads: int | None = d.max_threads\n"
        "k = cudatool.kernels(['x.o'], arch='sm_90', threads=128)\n"
        "warnings: list[str] = k.warnings\n"
        "try:\n"
        "    cudatool.check(raise_on_failure=True)\n"
        "except cudatool.CheckFailed as e:\n"
        "    report = e.report\n"
        "except cudatool.CompileError as e:\n"
        "    log: str = e.log\n")
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import cudatool\n"
        "r = cudatool.OccupancyRecord(cudatool.DeviceData('sm_90'), 256)\n"
        "name: str = r.tb_per_mp\n"
        "r.threads = 128\n")
    base = [sys.executable, "-m", "mypy", "--no-incremental", "--cache-dir", os.devnull]
    # The same interpreter and environment: mypy finds the cudatool this test imported.
    done = subprocess.run(base + ["--strict", str(good)], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    done = subprocess.run(base + [str(bad)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "bad.py:3: error: Incompatible types in assignment" in done.stdout, done.stdout
    assert "bad.py:4: error: Property \"threads\"" in done.stdout, done.stdout
