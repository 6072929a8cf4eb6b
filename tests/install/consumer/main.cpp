// A program outside the project that links the installed cudatool library: the occupancy
// of a block on an architecture from the table (no GPU), a SHA-256 (libcrypto) and the
// kernel-name filter (RE2).
#include <cudatool/base/sha256.hpp>
#include <cudatool/binary/kernel_filter.hpp>
#include <cudatool/occupancy/device_data.hpp>
#include <cudatool/occupancy/occupancy.hpp>
#include <iostream>
#include <nlohmann/json.hpp>

int main() {
  const cudatool::DeviceData sm90("sm_90");
  const cudatool::OccupancyRecord record(sm90, 256, 10 * 1024, 37);
  nlohmann::json j = record;
  std::cout << "tb_per_mp " << j["tb_per_mp"] << " limited_by " << record.limited_by << '\n'
            << "sha256(abc) " << cudatool::sha256_hex("abc") << '\n';
  const cudatool::KernelNameFilter filter("^gemm_[0-9]+$", "--kernel");
  std::cout << "filter " << filter.matches("gemm_128") << filter.matches("gemm_x") << '\n';
  return record.tb_per_mp == 6 ? 0 : 1;
}
