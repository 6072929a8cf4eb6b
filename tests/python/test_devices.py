"""devices(), attributes(), DeviceData(device=...) and check(): without a driver they raise
DriverNotFound with the command's message; with the fake driver (made-up values, never
instead of a GPU run) their documents equal the command's."""

import json

import pytest

import cudatool
from conftest import cli_json, fake_driver_env, no_driver_env, run_cli, run_python

CALLS = {
    "devices": "cudatool.devices()",
    "attributes": "cudatool.attributes()",
    "device_data": "cudatool.DeviceData(device=0)",
    "check": "cudatool.check()",
}


def test_without_a_driver_every_gpu_call_raises_driver_not_found():
    status, _, err = run_cli("devices", env=no_driver_env())
    assert status == 3
    code = "import cudatool, json\nout = {}\n"
    for name, call in CALLS.items():
        code += (f"try:\n    {call}\n    out[{name!r}] = None\n"
                 f"except cudatool.DriverNotFound as e:\n"
                 f"    out[{name!r}] = [str(e), e.exit_code, e.status, e.library]\n")
    code += "print(json.dumps(out))"
    out = run_python(code, no_driver_env())
    for name in CALLS:
        message, exit_code, status_name, library = out[name]
        assert err.strip() == "cudatool: " + message, name
        assert (exit_code, status_name) == (3, "no_driver")


def test_import_loads_no_driver():
    # Importing and offline occupancy work with no libcuda at all.
    out = run_python("import cudatool, json; d = cudatool.DeviceData('sm_90');"
                     "print(json.dumps(cudatool.OccupancyRecord(d, 128).tb_per_mp))",
                     no_driver_env())
    assert out == 16


def test_fake_driver_documents_equal_cli():
    env = fake_driver_env()
    _, devices, _ = cli_json("devices", "--json", env=env)
    _, attrs, _ = cli_json("attrs", "--json", "--device", "1", env=env)
    out = run_python(
        "import cudatool, json\n"
        "d = cudatool.DeviceData(device=1)\n"
        "print(json.dumps({'devices': cudatool.devices().to_dict(),"
        " 'attrs': cudatool.attributes(1).to_dict(),"
        " 'some': cudatool.attributes(names=['warp_size']).to_dict(),"
        " 'record': cudatool.OccupancyRecord(d, 256, registers=32).to_dict(),"
        " 'count': len(cudatool.devices().devices), 'cc': d.compute_capability}))", env)
    assert out["devices"] == devices and out["attrs"] == attrs
    assert out["some"]["attributes"] == {"warp_size": 32}
    assert out["count"] == 2 and out["cc"] == [8, 0]
    _, record, _ = cli_json("occupancy", "--json", "--device", "1", "--threads", 256, "--smem", 0,
                            "--regs", 32, "--barriers", 1, env=env)
    assert out["record"] == record


def test_no_device_and_bad_device():
    env = fake_driver_env(FAKE_CUDA_DEVICES="")
    status, _, err = run_cli("devices", env=fake_driver_env(FAKE_CUDA_INIT_RESULT="100"))
    out = run_python(
        "import cudatool, json\nout = []\n"
        "for call in (lambda: cudatool.attributes(), lambda: cudatool.DeviceData(device=0)):\n"
        "    try:\n        call()\n    except cudatool.NoDevice as e:\n"
        "        out.append([str(e), e.exit_code])\n"
        "print(json.dumps(out))", fake_driver_env(FAKE_CUDA_INIT_RESULT="100"))
    assert status == 4 and len(out) == 2 and out[0][1] == 4
    status, _, err = run_cli("attrs", "--device", "7", env=env)
    out = run_python(
        "import cudatool, json\n"
        "try:\n    cudatool.attributes(7)\nexcept cudatool.NoDevice as e:\n"
        "    print(json.dumps(str(e)))", fake_driver_env())
    _, _, err = run_cli("attrs", "--device", "7", env=fake_driver_env())
    assert err.strip() == "cudatool: " + out


def test_check_with_the_fake_driver_reports_like_cli():
    env = fake_driver_env()
    status, _, _ = run_cli("check", "--json", "--only", "identity", env=env)
    out = run_python(
        "import cudatool, json\nr = cudatool.check(only=['identity'])\n"
        "print(json.dumps([r.passed, sorted(r.to_dict())]))", env)
    _, doc, _ = cli_json("check", "--json", "--only", "identity", env=env)
    assert out[0] == (status == 0) and out[1] == sorted(doc)
