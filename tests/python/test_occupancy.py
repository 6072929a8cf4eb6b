import itertools

import pytest

import cudatool
from conftest import cli_json, run_cli

PYCUDA_FIELDS = ["max_threads", "warp_size", "warps_per_mp", "thread_blocks_per_mp", "registers",
                 "shared_memory", "smem_granularity", "smem_alloc_granularity"]


def test_device_data_pycuda_fields_sm_90():
    d = cudatool.DeviceData("sm_90")
    assert (d.max_threads, d.warp_size, d.warps_per_mp, d.thread_blocks_per_mp) == (1024, 32, 64, 32)
    assert d.registers == 65536 and d.shared_memory == 49152
    assert d.smem_granularity == 32 and d.smem_alloc_granularity == 128
    assert d.compute_capability == (9, 0) and d.name == "sm_90" and d.family == "Hopper"
    assert d.origin == "architecture_table"
    assert d.column("shared_memory_per_multiprocessor") == 233472
    assert d.align_bytes() == 128 and d.align(1) == 128 and d.align_words(4) == 32
    assert d.align_dtype(3, 4) == 32
    assert cudatool.DeviceData.make_valid_tex_channel_count(3) == 4
    assert "sm_90" in repr(d)
    # to_dict is the "device" member of `cudatool occupancy --json`.
    status, doc, _ = cli_json("occupancy", "--json", "--arch", "sm_90", "--threads", "128")
    assert status == 0 and d.to_dict() == doc["device"]


def test_device_data_unknown_values_are_none():
    d = cudatool.DeviceData("sm_88")
    for field in ["max_threads", "warp_size", "warps_per_mp", "registers", "shared_memory"]:
        assert getattr(d, field) is None, field
    assert d.thread_blocks_per_mp == 16  # one of the values cuda_occupancy.h does know
    assert "warp_size" in d.unknown_fields and d.unknown_reason
    with pytest.raises(cudatool.UnknownValueError) as e:
        cudatool.OccupancyRecord(d, 128)
    assert e.value.unknown["architecture"] == "sm_88"
    assert isinstance(e.value, cudatool.RequirementError) and e.value.exit_code == 4


def test_device_data_every_table_architecture_matches_cli():
    for arch in ["sm_50", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90a", "sm_100f", "sm_120",
                 "compute_90", "9.0", "sm_101"]:
        d = cudatool.DeviceData(arch)
        status, doc, _ = cli_json("occupancy", "--json", "--arch", arch, "--threads", "64")
        assert status == 0 and d.to_dict() == doc["device"], arch


def test_bad_architecture_is_the_cli_usage_error():
    with pytest.raises(cudatool.UsageError) as e:
        cudatool.DeviceData("sm_1")
    status, _, err = run_cli("occupancy", "--arch", "sm_1", "--threads", "1")
    assert status == 2 and err.strip() == "cudatool: " + str(e.value)
    assert e.value.exit_code == 2 and isinstance(e.value, ValueError)
    with pytest.raises(cudatool.UsageError):
        cudatool.DeviceData("sm_90", device=0)


# A grid of inputs: to_dict() equals `cudatool occupancy --json` for the same inputs.
GRID = list(itertools.product(["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"],
                              [32, 96, 128, 256, 1024], [0, 4096, 65536], [0, 32, 64, 255]))


@pytest.mark.parametrize("arch,threads,smem,regs", GRID[::7])
def test_record_to_dict_equals_cli(arch, threads, smem, regs):
    d = cudatool.DeviceData(arch)
    try:
        r = cudatool.OccupancyRecord(d, threads, shared_mem=smem, registers=regs)
    except cudatool.UsageError as e:
        status, _, err = run_cli("occupancy", "--arch", arch, "--threads", threads, "--smem", smem,
                                 "--regs", regs)
        assert status == 2 and err.strip() == "cudatool: " + str(e)
        return
    status, doc, _ = cli_json("occupancy", "--json", "--arch", arch, "--threads", threads,
                              "--smem", smem, "--regs", regs)
    assert status == 0
    assert r.to_dict() == doc
    assert (r.tb_per_mp, r.limited_by, r.warps_per_mp, r.occupancy) == (
        doc["tb_per_mp"], doc["limited_by"], doc["warps_per_mp"], doc["occupancy"])
    assert r.block_limits == doc["block_limits"] and r.limiting_factors == doc["limiting_factors"]
    assert r.improvements == doc["improvements"]
    assert r.max_warps_per_mp == doc["max_warps_per_mp"] and r.opted_in == doc["opted_in"]
    assert r.allocated_registers_per_block == doc["allocated_registers_per_block"]
    assert r.allocated_shared_mem_per_block == doc["allocated_shared_mem_per_block"]


def test_record_pycuda_signature_and_repr():
    d = cudatool.DeviceData("sm_90")
    r = cudatool.OccupancyRecord(d, 256, 0, 64)  # PyCUDA's positional order
    assert (r.tb_per_mp, r.limited_by, r.warps_per_mp, r.occupancy) == (4, "regs", 32, 0.5)
    assert r.devdata is d and r.threads == 256 and r.registers == 64 and r.shared_mem == 0
    assert "tb_per_mp=4" in repr(r)
    with pytest.raises(cudatool.UsageError):
        cudatool.OccupancyRecord(d, 0)
    with pytest.raises(TypeError):
        cudatool.OccupancyRecord("sm_90", 128)


def test_sweeps_and_suggestion_equal_cli():
    d = cudatool.DeviceData("sm_90")
    s = cudatool.sweep_block_sizes(d, registers=40)
    assert s.to_dict() == cli_json("occupancy", "--json", "--arch", "sm_90", "--sweep", "--smem",
                                   0, "--regs", 40, "--barriers", 1)[1]
    assert s.parameter == "threads" and len(s.records) == 32
    listed = cudatool.sweep_block_sizes(d, [64, 128, 256])
    assert [r.threads for r in listed.records] == [64, 128, 256]
    regs = cudatool.sweep_registers(d, 256, registers=64)
    assert regs.to_dict() == cli_json("occupancy", "--json", "--arch", "sm_90", "--sweep-regs",
                                      "--threads", 256, "--smem", 0, "--regs", 64, "--barriers",
                                      1)[1]
    assert regs.improvement.value == 48
    smem = cudatool.sweep_shared_memory(d, 256, shared_mem=50000)
    assert smem.to_dict() == cli_json("occupancy", "--json", "--arch", "sm_90", "--sweep-smem",
                                      "--threads", 256, "--regs", 0, "--barriers", 1, "--smem",
                                      50000)[1]
    suggestion = cudatool.suggest_block_size(d, registers=64)
    assert suggestion.to_dict() == s.__class__(
        cli_json("occupancy", "--json", "--arch", "sm_90", "--sweep", "--regs", 64)[1]
    ).to_dict()["suggestion"]
    assert suggestion.block_size == 1024 and "block_size=1024" in repr(suggestion)


def test_kernel_occupancy_equals_cli(kernels_data):
    import os
    path = os.path.join(kernels_data, "none.o")
    names = cudatool.kernels(path, arch="sm_90").kernels
    name = names[0].name
    doc = cudatool.kernel_occupancy(path, "^" + name + "$", 128, arch="sm_90")
    status, expected, _ = cli_json("occupancy", "--json", "--kernel-from", path, "--kernel",
                                   "^" + name + "$", "--threads", 128, "--arch", "sm_90")
    assert status == 0 and doc.to_dict() == expected and doc.kernel.name == name
    with pytest.raises(cudatool.UsageError):
        cudatool.kernel_occupancy(path, "no such kernel at all", 128, arch="sm_90")


def test_clusters_match_the_cli_and_the_recorded_driver_answers():
    # Issue 36's figures, measured with the driver on H200 boards: 8 registers, 256 threads.
    r = cudatool.OccupancyRecord(cudatool.DeviceData("sm_90"), 256, registers=8)
    assert r.tb_per_mp == 8
    assert [r.max_active_clusters(c, non_portable=True) for c in (1, 2, 3, 16)] == [1056, 528, 327, 58]
    assert r.max_active_clusters((2, 2, 1)) == r.max_active_clusters(4) == 248
    assert r.max_active_clusters(9) == 0  # above the portable 8: the driver refuses it
    assert r.max_potential_cluster_size() == 8
    assert r.max_potential_cluster_size(non_portable=True) == 16
    detail = r.cluster_occupancy(3)
    assert detail["max_active_clusters"] == 327 and detail["product"] == "H200"
    assert sum(detail["gpc_sms"]) == 132 and detail["limited_by"] == "occupancy"
    status, doc, _ = cli_json("occupancy", "--json", "--arch", "sm_90", "--threads", "256",
                              "--regs", "8", "--cluster", "3")
    assert status == 0 and doc["max_active_clusters"] == 327
    assert doc["max_potential_cluster_size"] == r.max_potential_cluster_size()
    with pytest.raises(TypeError):
        r.max_active_clusters("3")


def test_clusters_unknown_where_no_product_is_measured():
    r = cudatool.OccupancyRecord(cudatool.DeviceData("sm_100"), 256)
    with pytest.raises(cudatool.RequirementError, match="unknown"):
        r.max_active_clusters(2)
    with pytest.raises(cudatool.RequirementError, match="no thread-block clusters"):
        cudatool.OccupancyRecord(cudatool.DeviceData("sm_80"), 256).max_potential_cluster_size()
