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


# A driver call that fails with CUDA_ERROR_OUT_OF_MEMORY is a MemoryError (exit 7), one with
# CUDA_ERROR_LAUNCH_FAILED a LaunchError (exit 5): the fake driver's cuInit answers them.
@pytest.mark.parametrize("result, name, status, cuda_error", [
    ("2", "MemoryError", 7, "CUDA_ERROR_OUT_OF_MEMORY"),
    ("719", "LaunchError", 5, "CUDA_ERROR_LAUNCH_FAILED"),
])
@pytest.mark.parametrize("call, command", [
    ("cudatool.devices()", ["devices"]),
    ("cudatool.attributes()", ["attrs"]),
    ("cudatool.DeviceData(device=0)", ["occupancy", "--device", "0", "--threads", "256"]),
])
def test_driver_failures_raise_their_class_with_the_cli_message(result, name, status, cuda_error,
                                                                call, command):
    env = fake_driver_env(FAKE_CUDA_INIT_RESULT=result)
    cli_status, _, err = run_cli(*command, env=env)
    out = run_python(
        "import cudatool, json\n"
        f"try:\n    {call}\nexcept cudatool.Error as e:\n"
        "    print(json.dumps([type(e).__name__, str(e), e.exit_code, e.status, e.call,\n"
        "                      e.cuda_error, e.cuda_error_code,\n"
        f"                      isinstance(e, cudatool.{name}), type(e).exit_code]))", env)
    assert cli_status == status
    assert out == [name, err.strip().removeprefix("cudatool: "), status, out[3], "cuInit",
                   cuda_error, int(result), True, status]
    assert err.strip() == "cudatool: " + out[1] and cuda_error in out[1]
    if name == "MemoryError":
        assert out[3] == "out_of_memory"
    else:
        assert out[3] == "cuda_error"


def test_failed_check_raises_check_failed_with_the_failing_checks():
    # Device 1 of the fake is sm_80: --min-cc 9.0 fails it, exit 9.
    env = fake_driver_env()
    arguments = ["check", "--json", "--only", "identity", "--min-cc", "9.0"]
    status, expected, err = cli_json(*arguments, env=env)
    out = run_python(
        "import cudatool, json\n"
        "r = cudatool.check(only=['identity'], options=['--min-cc', '9.0'])\n"
        "out = [r.passed, r.verdict]\n"
        "try:\n    cudatool.check(only=['identity'], options=['--min-cc', '9.0'],\n"
        "                   raise_on_failure=True)\n"
        "except cudatool.CheckFailed as e:\n"
        "    d = e.report.to_dict()\n"
        "    d.pop('duration_s')\n"
        "    out += [str(e), e.exit_code, e.status, d]\n"
        "print(json.dumps(out))", env)
    expected.pop("duration_s")
    assert status == 9 and err == ""
    assert out[:2] == [False, "fail"]
    # The command prints the report and no line on stderr; the exception's message names each
    # failing check and its reason, as the report has them.
    assert out[2] == "check failed: device 1 identity: compute capability 8.0, need 9.0"
    assert out[3:5] == [9, "check_failed"] and out[5] == expected
