// A program outside the project that links the installed cudatool library: the occupancy
// of a block on an architecture from the table (no GPU) and a SHA-256 (libcrypto).
#include <cudatool/base/sha256.hpp>
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
  return record.tb_per_mp == 6 ? 0 : 1;
}
