import glob
import os

import pytest

import cudatool
from conftest import cli_json, run_cli


def data_files(directory):
    # The nvcc-built binaries only (the directory also holds generated sources).
    files = sorted(p for p in glob.glob(os.path.join(directory, "*"))
                   if os.path.isfile(p) and not p.endswith(".cu"))
    assert files
    return files


def test_kernels_equal_cli_on_every_test_binary(kernels_data):
    for path in data_files(kernels_data):
        for threads in (None, 256):
            flags = [] if threads is None else ["--threads", threads]
            status, expected, _ = cli_json("kernels", "--json", "--no-progress", *flags, path)
            result = cudatool.kernels(path, threads=threads)
            assert result.to_dict() == expected, path
            assert result.unreadable_entries == (status == 10)


def test_kernels_all_files_at_once_with_filters(kernels_data):
    files = data_files(kernels_data)
    status, expected, _ = cli_json("kernels", "--json", "--no-progress", "--arch", "sm_90",
                                   "--kernel", "a", "--threads", 128, "--relocatable", *files)
    result = cudatool.kernels(files, arch=["sm_90"], kernel="a", threads=128, relocatable=True)
    assert result.to_dict() == expected
    assert all(k.arch.startswith("sm_90") for k in result.kernels)
    k = result.kernels[0]
    assert k.occupancy.threads == 128 and isinstance(k.num_regs, int)
    assert "kernels=[" in repr(result)


def test_kernels_errors(tmp_path):
    plain = tmp_path / "plain.txt"
    plain.write_text("no CUDA here")
    status, _, err = run_cli("kernels", "--json", plain)
    with pytest.raises(cudatool.UsageError) as e:
        cudatool.kernels(plain)
    assert status == 2 and str(e.value) == err.strip().removeprefix("cudatool: ")
    with pytest.raises(cudatool.UsageError) as e:
        cudatool.kernels(tmp_path / "missing.o")
    status, _, err = run_cli("kernels", tmp_path / "missing.o")
    assert status == 2 and err.strip() == "cudatool: " + str(e.value)
    with pytest.raises(cudatool.UsageError):
        cudatool.kernels(plain, kernel="(")
    with pytest.raises(cudatool.UsageError):
        cudatool.kernels(plain, threads=0)


def test_kernels_releases_the_gil():
    # Another Python thread runs while kernels() reads a large library: the call does not
    # hold the GIL. Held for the whole call, the ticks could not come while it runs.
    import threading
    import time

    lib = os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "lib64")
    candidates = sorted(glob.glob(os.path.join(lib, "libcu*.so*")), key=os.path.getsize)
    if not candidates:
        pytest.skip(f"no CUDA library in {lib}")
    # A library of some tens of MB (a second or so on one thread), else the largest.
    path = os.path.realpath(next((c for c in candidates if os.path.getsize(c) > 30 << 20),
                                 candidates[-1]))
    ticks = []
    done = threading.Event()
    call = []

    def read():
        start = time.perf_counter()
        cudatool.kernels(path, jobs=1)
        call.append((start, time.perf_counter()))
        done.set()

    reader = threading.Thread(target=read)
    reader.start()
    while not done.is_set():
        ticks.append(time.perf_counter())
        time.sleep(0.001)
    reader.join()
    start, end = call[0]
    during = [t for t in ticks if start < t < end]
    assert end - start > 0.05 and len(during) >= 10, (path, end - start, len(during))


def test_compare_kernels_and_sizes_equal_cli(kernels_data):
    old, new = os.path.join(kernels_data, "zstd.o"), os.path.join(kernels_data, "lz4.o")
    status, expected, _ = cli_json("kernels", "--json", "--no-progress", "--baseline", old,
                                   "--fail-on", "removed,registers", new)
    result = cudatool.compare_kernels(old, new, fail_on=["removed", "registers"])
    assert status == 13 and not result.passed
    assert result.to_dict() == expected
    assert result.summary.broken_rules == ["removed"]
    assert cudatool.compare_kernels(new, new, fail_on="removed").passed
    status, expected, _ = cli_json("kernels", "--json", "--no-progress", "--sizes", "--top", 3,
                                   new)
    sizes = cudatool.kernel_sizes(new, top=3)
    assert status == 0 and sizes.to_dict() == expected
    assert len(sizes.largest_kernels) <= 3 and sizes.files[0].architectures[0].file_bytes > 0
    with pytest.raises(cudatool.UsageError):
        cudatool.compare_kernels(old, new, fail_on="no-such-rule")


def test_results_iterate_over_their_lists(kernels_data):
    result = cudatool.kernels(os.path.join(kernels_data, "none.o"), threads=128)
    names = [k.name for k in result]
    assert names and names == [k["name"] for k in result.to_dict()["kernels"]]
    assert all(k.occupancy.threads == 128 for k in result)
    # A result that is not a collection says so (Python would otherwise try result[0]).
    with pytest.raises(TypeError):
        iter(cudatool.sweep_block_sizes(cudatool.DeviceData("sm_90")))
