import os

import pytest

import cudatool
from conftest import cli_json

SOURCE = """extern "C" __global__ void scale(float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}
"""


def nvrtc_or_skip():
    try:
        return cudatool.compile(SOURCE, arch="sm_90", options=["--no-cache"])
    except cudatool.DriverNotFound as e:
        pytest.skip(f"no NVRTC: {e}")


def test_compile_source_and_path_equal_cli(tmp_path):
    compiled = nvrtc_or_skip()
    assert [k.name for k in compiled.kernels] == ["scale"]
    path = tmp_path / "scale.cu"
    path.write_text(SOURCE)
    result = cudatool.compile(path, arch="sm_90", threads=256, options=["--no-cache"])
    status, expected, _ = cli_json("compile", "--json", "--arch", "sm_90", "--threads", 256,
                                   "--no-cache", path)
    # The same document but for the time the compile took.
    got = result.to_dict()
    assert got.pop("compile_seconds") >= 0 and expected.pop("compile_seconds") >= 0
    assert status == 0 and got == expected
    assert result.kernels[0].num_regs > 0


def test_compile_error_has_the_log(tmp_path):
    nvrtc_or_skip()
    with pytest.raises(cudatool.CompileError) as e:
        cudatool.compile("__global__ void broken( {", arch="sm_90", options=["--no-cache"])
    assert e.value.log and e.value.exit_code == 6 and str(e.value)
    assert isinstance(e.value, cudatool.Error)


def test_hierarchy():
    E = cudatool
    assert issubclass(E.UsageError, E.LogicError) and issubclass(E.LogicError, E.Error)
    assert issubclass(E.InputError, E.UsageError) and E.InputError.exit_code == 2
    assert issubclass(E.DriverNotFound, E.RuntimeError) and issubclass(E.NoDevice, E.RuntimeError)
    assert issubclass(E.UnknownValueError, E.RequirementError)
    assert issubclass(E.RuntimeError, RuntimeError) and issubclass(E.MemoryError, MemoryError)
    for cls in (E.CompileError, E.LaunchError, E.MemoryError, E.CheckFailed):
        assert issubclass(cls, E.Error)
    assert (E.UsageError.exit_code, E.DriverNotFound.exit_code, E.NoDevice.exit_code,
            E.LaunchError.exit_code, E.CompileError.exit_code, E.MemoryError.exit_code,
            E.CheckFailed.exit_code) == (2, 3, 4, 5, 6, 7, 9)


def test_version_equals_cli():
    from conftest import run_cli
    status, out, _ = run_cli("--version")
    # The first line is the version; the second names the CUDA headers of the build.
    assert status == 0 and out.splitlines()[0] == "cudatool " + cudatool.__version__


def test_the_same_source_text_is_a_cache_hit(tmp_path, monkeypatch):
    # Issue 39, defect 11: the text was written to a new temporary path each time, and the
    # key names the source's path: three misses and three entries.
    nvrtc_or_skip()
    monkeypatch.setenv("CUDATOOL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("CUDATOOL_DISABLE_CACHE", raising=False)
    text = SOURCE + "// issue 39 cache test\n"
    first = cudatool.compile(text, arch="sm_90").to_dict()
    assert not first["cache"]["hit"] and not first["memo_hit"]
    for _ in range(2):
        again = cudatool.compile(text, arch="sm_90").to_dict()
        assert again["cache"]["hit"] or again["memo_hit"]
        assert again["cache"]["key"] == first["cache"]["key"]
    entries = [p for p in (tmp_path / "cache").rglob("*.entry")]
    assert len(entries) == 1
    # Another text, another name: other files.
    other = cudatool.compile(text + "\n", arch="sm_90").to_dict()
    assert other["cache"]["key"] != first["cache"]["key"]


def test_arguments_are_refused_or_decoded_as_os_functions_do(tmp_path, kernels_data):
    # Issue 39, defects 8 and 9: a NUL cut the path short (tiny.cubin\0.so read tiny.cubin);
    # bytes became "b'...'" in the message.
    path = next(os.path.join(kernels_data, f) for f in sorted(os.listdir(kernels_data))
                if not f.endswith(".cu"))
    with pytest.raises(ValueError):
        cudatool.kernels(path + "\0.so")
    with pytest.raises(ValueError):
        os.stat(path + "\0.so")
    assert cudatool.kernels(os.fsencode(path)).to_dict() == cudatool.kernels(path).to_dict()
    missing = os.fsencode(str(tmp_path / "missing.cubin"))
    with pytest.raises(cudatool.UsageError) as e:
        cudatool.kernels(missing)
    assert "b'" not in str(e.value) and str(tmp_path / "missing.cubin") in str(e.value)


def test_block_sizes_as_a_string_are_refused():
    # Issue 39, defect 10: "64" was swept as the block sizes 6 and 4.
    d = cudatool.DeviceData("sm_90")
    with pytest.raises(TypeError):
        cudatool.sweep_block_sizes(d, "64")
    assert [r["threads"] for r in cudatool.sweep_block_sizes(d, [64]).to_dict()["records"]] == [64]


INTERRUPTED = r"""
import sys
import cudatool
text = "".join(f"template <int N> __device__ int f{i}(int x) {{ return x * N + {i}; }}\n"
               for i in range(40000))
text += "__global__ void slow_front_end(int* p) { p[0] = f1<3>(p[1]); }\n"
print("started", flush=True)
try:
    cudatool.compile(text, arch="sm_90", options=["--no-cache", "--compiler", "nvrtc"])
    print("finished", flush=True)
except KeyboardInterrupt:
    print("KeyboardInterrupt", flush=True)
finally:
    print("finally", flush=True)
"""


def test_ctrl_c_during_nvrtcs_front_end_is_a_keyboard_interrupt(tmp_path):
    # Issue 39, defect 5: libnvrtc's own SIGINT handler (installed while its front end runs)
    # ended the interpreter with exit status 4: no KeyboardInterrupt, no `finally`.
    import signal
    import subprocess
    import sys
    import time

    nvrtc_or_skip()
    env = dict(os.environ, TMPDIR=str(tmp_path))
    child = subprocess.Popen([sys.executable, "-c", INTERRUPTED], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=env)
    assert child.stdout.readline().strip() == "started"
    time.sleep(1.5)  # into the front end: it takes seconds on this text
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=300)
    assert child.returncode == 0, (child.returncode, out, err)
    assert out.split() in (["KeyboardInterrupt", "finally"], ["finished", "finally"])
    if out.split()[0] == "finished":
        pytest.skip("the compile ended before the signal came")
    # Nothing temporary left: only the folder of sources named by their text.
    left = [p for p in tmp_path.iterdir() if not p.name.startswith("cudatool-sources-")]
    assert left == []
    assert not list(tmp_path.rglob(".partial-*"))
