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
