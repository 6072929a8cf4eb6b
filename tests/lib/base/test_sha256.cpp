// SHA-256 comes from libcrypto: the NIST FIPS 180-4 example vectors, and the value of a
// cache key composed the way compile's cache_key composes one, pinned from the hand-written
// implementation it replaced, so existing on-disk cache entries keep their names.
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "cudatool/base/sha256.hpp"

namespace cudatool {
namespace {

TEST(Sha256Libcrypto, NistVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjkl"
                       "mnopqklmnopqrlmnopqrsmnopqrstnopqrstu"),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256Libcrypto, IncrementalEqualsOneShotAndBinaryIsHashed) {
  Sha256 h;
  h.update("ab").update("").update("c");
  EXPECT_EQ(h.hex_digest(), sha256_hex("abc"));
  EXPECT_EQ(sha256_hex(std::string_view("\0\xff", 2)),
            "06eb7d6a69ee19e5fbdf749018d3d2abfa04bcbd1365db312eb86dc7169389b8");
  const auto raw = Sha256().update("abc").digest();
  EXPECT_EQ(raw[0], 0xba);
  EXPECT_EQ(raw[31], 0xad);
}

TEST(Sha256Libcrypto, MovedHasherKeepsItsState) {
  Sha256 a;
  a.update("ab");
  Sha256 b = std::move(a);
  b.update("c");
  EXPECT_EQ(b.hex_digest(), sha256_hex("abc"));
}

// The fields compile's cache_key hashes, in its order; the value the hand-written SHA-256
// gave (commit 9f44e36). A change here renames every cache entry.
TEST(Sha256Libcrypto, CacheKeyValueIsUnchanged) {
  Sha256 h;
  h.field("cudatool-compile-1")
      .field("nvrtc")
      .field("libnvrtc.so.13 123456 1700000000")
      .field("sm_90")
      .field("cubin")
      .field("--gpu-architecture=sm_90")
      .field("saxpy.cu")
      .field("extern \"C\" __global__ void saxpy(float a, const float* x, float* y) {}\n");
  EXPECT_EQ(h.hex_digest(), "0b26b785106fa05ed5f062b0b986b0844f852d502272a022689712968d8894a6");
  // Fields are length-prefixed: ("ab", "c") and ("a", "bc") differ.
  EXPECT_NE(Sha256().field("ab").field("c").hex_digest(),
            Sha256().field("a").field("bc").hex_digest());
}

}  // namespace
}  // namespace cudatool
