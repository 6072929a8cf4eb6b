"""Shared fixtures: the `cudatool` executable to compare with (CUDATOOL_CLI, else the one on
PATH, which is the wheel's in an installed venv), the fake driver (CUDATOOL_FAKE_LIBCUDA)
and the kernels test binaries (CUDATOOL_KERNELS_DATA)."""

import json
import os
import shutil
import subprocess
import sys

import pytest


def cli_path():
    path = os.environ.get("CUDATOOL_CLI") or shutil.which("cudatool")
    if not path:
        pytest.skip("no cudatool executable (set CUDATOOL_CLI)")
    return path


def run_cli(*arguments, env=None):
    """(exit status, stdout, stderr) of the executable."""
    done = subprocess.run([cli_path(), *map(str, arguments)], capture_output=True, text=True,
                          env=env, timeout=300)
    return done.returncode, done.stdout, done.stderr


def cli_json(*arguments, env=None):
    status, out, err = run_cli(*arguments, env=env)
    return status, json.loads(out), err


def no_driver_env():
    env = dict(os.environ)
    env["CUDATOOL_LIBCUDA"] = "/nonexistent/libcuda.so.1"
    return env


def fake_driver_env(**settings):
    fake = os.environ.get("CUDATOOL_FAKE_LIBCUDA")
    if not fake or not os.path.exists(fake):
        pytest.skip("no fake driver (CUDATOOL_FAKE_LIBCUDA)")
    env = dict(os.environ)
    env["CUDATOOL_LIBCUDA"] = fake
    env["CUDATOOL_NO_NVML"] = "1"
    env.update(settings)
    return env


def run_python(code, env):
    """Runs `code` in a fresh interpreter (the driver is opened once per process, so each
    driver set-up needs its own) and returns what it printed, parsed as JSON."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture
def kernels_data():
    directory = os.environ.get("CUDATOOL_KERNELS_DATA")
    if not directory or not os.path.isdir(directory):
        pytest.skip("no kernels test binaries (CUDATOOL_KERNELS_DATA)")
    return directory
