"""The module shares its process with other code: a C++ library loaded with ctypes that
writes to std::cout from another thread must neither corrupt a document the module makes nor
lose its own lines (issue 39, defect 6: the module used to point std::cout at its own output
buffer while a command ran)."""

import os
import subprocess
import sys

import pytest

# A child interpreter: one thread writes a line to std::cout (libstdc++'s own object, through
# std::ostream::write) without end while the main thread sweeps and reads binaries. With
# std::cout redirected the writer's lines land inside the documents (JSONDecodeError), or it
# writes into a buffer the module freed (ASan: heap-use-after-free; a segfault in Release).
CHILD = r"""
import ctypes, json, os, sys, threading
import cudatool

libstdcxx = ctypes.CDLL("libstdc++.so.6")
cout = ctypes.addressof(ctypes.c_char.in_dll(libstdcxx, "_ZSt4cout"))
write = libstdcxx._ZNSo5writeEPKcl  # std::ostream::write(const char*, std::streamsize)
write.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_long]
write.restype = ctypes.c_void_p
flush = libstdcxx._ZNSo5flushEv
flush.argtypes = [ctypes.c_void_p]
flush.restype = ctypes.c_void_p
line = b"written by another thread\n"
stop = threading.Event()
written = 0

def writer():
    global written
    while not stop.is_set():
        write(cout, line, len(line))
        written += 1
    flush(cout)

d = cudatool.DeviceData("sm_90")
expected = cudatool.sweep_block_sizes(d).to_dict()
files = sys.argv[1:]
expected_kernels = cudatool.kernels(files).to_dict() if files else None
thread = threading.Thread(target=writer)
thread.start()
try:
    for _ in range(60):
        assert cudatool.sweep_block_sizes(d).to_dict() == expected
        if files:
            assert cudatool.kernels(files).to_dict() == expected_kernels
finally:
    stop.set()
    thread.join()
sys.stderr.write(f"{written}\n")
"""


def test_another_threads_std_cout_is_not_the_modules(tmp_path, kernels_data):
    files = sorted(os.path.join(kernels_data, f) for f in os.listdir(kernels_data)
                   if not f.endswith(".cu"))[:4]
    stdout = tmp_path / "stdout"
    with open(stdout, "wb") as out:
        done = subprocess.run([sys.executable, "-c", CHILD, *files], stdout=out,
                              stderr=subprocess.PIPE, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    written = int(done.stderr.strip().splitlines()[-1])
    if written == 0:
        pytest.skip("the writer thread never ran")
    # Every line the other thread wrote reached the real standard output, whole.
    lines = stdout.read_bytes().splitlines()
    assert len(lines) == written
    assert set(lines) == {b"written by another thread"}
