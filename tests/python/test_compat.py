"""cudatool.compat(): the CLI's document and exit status, for architectures and products, in
this process."""

import os

import pytest

import cudatool
from conftest import cli_json

SOURCE = os.path.join(os.path.dirname(__file__), "..", "..")
CUBIN = os.path.join(SOURCE, "fuzz", "corpus", "elf", "sm_90.cubin")
JIT = os.path.join(SOURCE, "fuzz", "corpus", "compat_headers", "sm_86+compute_80.fatbin")


def test_compat_equals_the_cli():
    for arch, expected_status in (("sm_90", 0), ("A100", 11), ("H100,L4", 11)):
        status, expected, _ = cli_json("compat", "--json", "--arch", arch, CUBIN)
        result = cudatool.compat(CUBIN, arch=arch)
        assert status == expected_status
        assert result.exit_status == status
        assert result.ok == (status == 0)
        assert result.to_dict() == expected


def test_compat_jit_and_require_native():
    result = cudatool.compat([JIT], arch=["sm_90"])
    assert result.ok and result.to_dict()["files"][0]["verdict"] == "jit"
    strict = cudatool.compat(JIT, arch="sm_90", require_native=True)
    assert strict.exit_status == 12
    old_driver = cudatool.compat(JIT, arch="9.0", driver="535.104.05")
    assert old_driver.exit_status == 11
    assert old_driver.to_dict()["files"][0]["verdicts"][0]["reason"] == "ptx_too_new"
    forced = cudatool.compat(CUBIN, arch="sm_90", ptx_jit="force")
    assert forced.exit_status == 11


def test_compat_errors(tmp_path):
    with pytest.raises(cudatool.UsageError):
        cudatool.compat(tmp_path / "missing.so", arch="sm_90")
    with pytest.raises(cudatool.UsageError):
        cudatool.compat(CUBIN, arch="Voodoo 2")
