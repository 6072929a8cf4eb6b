// SHA-256 (FIPS 180-4), for the compile cache's content-addressed keys and its entries'
// checksums. Incremental: update() any number of times, then hex_digest() once. Computed by
// OpenSSL's libcrypto (EVP API; SHA-NI where the CPU has it); OpenSSL's headers stay out of
// this one.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace cudatool {

class Sha256 {
 public:
  Sha256();  // throws Error when libcrypto cannot set up SHA-256
  ~Sha256();
  Sha256(Sha256&&) noexcept;
  Sha256& operator=(Sha256&&) noexcept;
  Sha256& update(const void* data, std::size_t size);
  Sha256& update(std::string_view text) { return update(text.data(), text.size()); }
  // A length-prefixed field, so that ("ab","c") and ("a","bc") hash differently.
  Sha256& field(std::string_view text);
  std::array<std::uint8_t, 32> digest();  // finishes the hash; call once
  std::string hex_digest();               // 64 lower-case hex digits

 private:
  struct Free {
    void operator()(void* context) const;
  };
  std::unique_ptr<void, Free> context_;  // OpenSSL's EVP_MD_CTX
};

// The hex SHA-256 of `data`.
std::string sha256_hex(std::string_view data);

}  // namespace cudatool
