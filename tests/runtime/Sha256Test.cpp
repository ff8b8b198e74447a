// SHA-256 against the FIPS 180-4 examples, whole and in pieces.
#include "monodc/runtime/Sha256.h"

#include <gtest/gtest.h>

using monodc::runtime::Sha256;

namespace {

TEST(Sha256, MatchesTheStandardExamples) {
  EXPECT_EQ(Sha256::hex(Sha256::digest("")),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256::hex(Sha256::digest("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256::hex(Sha256::digest(
                "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(Sha256::hex(Sha256::digest(std::string(1000000, 'a'))),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, PiecesOfAnySizeGiveTheSameDigest) {
  std::string text;
  for (int i = 0; i < 1000; ++i)
    text.push_back(static_cast<char>(i * 7 + 3));
  Sha256::Digest whole = Sha256::digest(text);
  for (size_t piece : {1u, 3u, 55u, 56u, 63u, 64u, 65u, 127u, 999u}) {
    Sha256 sha;
    for (size_t at = 0; at < text.size(); at += piece)
      sha.update(text.substr(at, piece));
    EXPECT_EQ(sha.finish(), whole) << "pieces of " << piece;
  }
}

} // namespace
