// SHA-256 through OpenSSL's EVP digest API (libcrypto).
#include "cudatool/base/sha256.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "cudatool/base/error.hpp"

namespace cudatool {
namespace {

// SHA-256 from OpenSSL's default provider, fetched once per process. The system's OpenSSL
// configuration (openssl.cnf, or a file named by $OPENSSL_CONF) is not read: a digest of
// cache keys needs no policy, and reading it cost 0.3-0.6 ms of every `devices` run (issue 24)
// and would let a file of anyone's choosing load provider modules into the process.
const EVP_MD* sha256_algorithm() {
  static const EVP_MD* const algorithm = [] {
    if (OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG, nullptr) != 1)
      return static_cast<EVP_MD*>(nullptr);
    return EVP_MD_fetch(nullptr, "SHA2-256", nullptr);
  }();
  return algorithm;
}

}  // namespace
void Sha256::Free::operator()(void* context) const {
  EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(context));
}

Sha256::Sha256() : context_(EVP_MD_CTX_new()) {
  const EVP_MD* algorithm = sha256_algorithm();
  if (!context_ || !algorithm ||
      EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(context_.get()), algorithm, nullptr) != 1)
    throw Error("libcrypto could not set up SHA-256");
}

Sha256::~Sha256() = default;
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;

Sha256& Sha256::update(const void* data, std::size_t size) {
  if (size > 0 && EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(context_.get()), data, size) != 1)
    throw Error("libcrypto failed to hash data with SHA-256");
  return *this;
}

Sha256& Sha256::field(std::string_view text) {
  const std::string length = std::to_string(text.size()) + ":";
  update(length);
  return update(text);
}

std::array<std::uint8_t, 32> Sha256::digest() {
  std::array<std::uint8_t, 32> out{};
  unsigned int size = 0;
  if (EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(context_.get()), out.data(), &size) != 1 ||
      size != out.size())
    throw Error("libcrypto failed to finish a SHA-256 digest");
  return out;
}

std::string Sha256::hex_digest() {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (const std::uint8_t byte : digest()) {
    hex += kHex[byte >> 4];
    hex += kHex[byte & 15];
  }
  return hex;
}

std::string sha256_hex(std::string_view data) {
  return Sha256().update(data).hex_digest();
}

}  // namespace cudatool
