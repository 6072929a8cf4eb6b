// A program outside the project that links the installed cudatool library and calls each
// public area: occupancy from the architecture table (no GPU), SHA-256 (libcrypto), the
// kernel-name filter (RE2), scan_binaries on a real CUDA binary (zstd, LZ4), a compile
// request (NVRTC, opened at run time: linked always, run only where it is found), a memory
// pool, and the device queries of the driver (CUDATOOL_LIBCUDA: the test's fake driver).
// Built with CUDATOOL_CONSUMER_JSON, it also uses an nlohmann/json of its own (another version
// or ABI than the one the library was built with) beside cudatool, and names its version.
// Usage: consumer [CUDA_BINARY...]
#include <cudatool/base/error.hpp>
#include <cudatool/base/sha256.hpp>
#include <cudatool/binary/kernel_filter.hpp>
#include <cudatool/binary/kernel_scan.hpp>
#include <cudatool/compile/compiler.hpp>
#include <cudatool/device/device_info.hpp>
#include <cudatool/memory/allocators.hpp>
#include <cudatool/memory/memory_pool.hpp>
#include <cudatool/occupancy/device_data.hpp>
#include <cudatool/occupancy/occupancy.hpp>
#include <iostream>
#include <set>
#include <string>
#ifdef CUDATOOL_CONSUMER_JSON
#include <nlohmann/json.hpp>
#endif

int main(int argc, char** argv) {
  const cudatool::DeviceData sm90(cudatool::Arch::parse("sm_90", "test"));
  const cudatool::OccupancyRecord record(sm90, 256, 10 * 1024, 37);
  std::cout << "tb_per_mp " << record.tb_per_mp << " limited_by " << record.limited_by << '\n'
            << "sha256(abc) " << cudatool::sha256_hex("abc") << '\n';
  const cudatool::KernelNameFilter filter("^gemm_[0-9]+$", "--kernel");
  std::cout << "filter " << filter.matches("gemm_128") << filter.matches("gemm_x") << '\n';

  cudatool::MemoryPool<cudatool::HostAllocator> pool(cudatool::HostAllocator{});
  { auto block = pool.allocate(1000); }
  std::cout << "pool held " << pool.held_blocks() << '\n';

  if (argc > 1) {
    const cudatool::ScanResult scan = cudatool::scan_binaries({argv + 1, argv + argc}, {});
    // Spelled as `kernels --json` spells them (the script compares the two).
    std::set<std::string> compressions;
    for (const cudatool::ScannedImage& image : scan.images)
      compressions.insert(image.compression == cudatool::FatbinCompression::zstd  ? "zstd"
                          : image.compression == cudatool::FatbinCompression::lz4 ? "lz4"
                                                                                  : "none");
    std::cout << "scan images " << scan.images.size() << " kernels " << scan.kernels.size()
              << " compression";
    for (const std::string& c : compressions) std::cout << ' ' << c;
    std::cout << '\n';
  }

  cudatool::CompileRequest request;
  request.source = "__global__ void k(int* p) { *p = 1; }";
  request.arch = cudatool::Arch::parse("sm_90", "arch");
  request.engine = cudatool::Engine::nvrtc;
  try {
    const cudatool::CompileResult compiled = cudatool::compile_uncached(request);
    std::cerr << "compile: " << compiled.image.size() << " bytes of CUBIN\n";
  } catch (const cudatool::LibraryNotFoundError& e) {
    std::cerr << "compile: no NVRTC here (" << e.what() << ")\n";
  }

  const cudatool::DeviceListing listing = cudatool::list_devices(false);
  std::cout << "devices " << listing.devices.size();
  for (const cudatool::DeviceInfo& device : listing.devices)
    std::cout << ' ' << device.compute_capability.sm();
  std::cout << '\n';
#ifdef CUDATOOL_CONSUMER_JSON
  const nlohmann::json document = {{"tb_per_mp", record.tb_per_mp},
                                   {"limited_by", std::string(record.limited_by)},
                                   {"devices", listing.devices.size()}};
  std::cout << "json " << document.dump() << " nlohmann " << NLOHMANN_JSON_VERSION_MAJOR << '.'
            << NLOHMANN_JSON_VERSION_MINOR << '.' << NLOHMANN_JSON_VERSION_PATCH << '\n';
#endif
  return record.tb_per_mp == 6 ? 0 : 1;
}
