// SHA-256 (FIPS 180-4), for the compile cache's content-addressed keys and its entries'
// checksums. Incremental: update() any number of times, then hex_digest() once.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace cudatool {

class Sha256 {
 public:
  Sha256();
  Sha256& update(const void* data, std::size_t size);
  Sha256& update(std::string_view text) { return update(text.data(), text.size()); }
  // A length-prefixed field, so that ("ab","c") and ("a","bc") hash differently.
  Sha256& field(std::string_view text);
  std::array<std::uint8_t, 32> digest();  // finishes the hash; call once
  std::string hex_digest();               // 64 lower-case hex digits

 private:
  void block(const std::uint8_t* p);
  std::array<std::uint32_t, 8> state_;
  std::array<std::uint8_t, 64> buffer_{};
  std::size_t buffered_ = 0;
  std::uint64_t total_ = 0;
};

// The hex SHA-256 of `data`.
std::string sha256_hex(std::string_view data);

}  // namespace cudatool
