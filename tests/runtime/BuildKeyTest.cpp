// Build keys: canonical text, round trip, strict parsing, and that every
// field (and nothing else, the rank least of all) changes the hash.
#include "monodc/runtime/BuildKey.h"

#include "support/TestSupport.h"

#include <gtest/gtest.h>

#include <set>

using monodc::runtime::BuildKey;
using monodc::testing::sampleKey;

namespace {

TEST(BuildKey, PrintsCanonicalTextAndParsesItBack) {
  BuildKey key = sampleKey();
  key.options = "-O3 -mllvm x=1%";
  std::string text = key.text();
  EXPECT_EQ(text.rfind("monodc-key/1 model=dsv41 config=0123456789abcdef "
                       "launch=attention_front tp=2 rows=6 ratio=0 grid=256 block=256 "
                       "arch=gfx950 features= backend=clang backend-version=clang+lld%2022.1.0 "
                       "options=-O3%20-mllvm%20x%3D1%25 compiler=",
                       0),
            0u)
      << text;
  EXPECT_EQ(text.find('\n'), std::string::npos);
  auto parsed = BuildKey::parse(text);
  ASSERT_TRUE(parsed.ok()) << parsed.message();
  EXPECT_EQ(*parsed, key);
  EXPECT_EQ(parsed->text(), text);
}

TEST(BuildKey, HashesToAFileName) {
  BuildKey key = sampleKey();
  EXPECT_EQ(key.hash().size(), 64u);
  EXPECT_EQ(key.fileName(), key.hash().substr(0, 32) + ".mco");
  EXPECT_EQ(key.fileName(), monodc::runtime::cacheFileNameForKeyText(key.text()));
}

TEST(BuildKey, EveryFieldChangesTheHash) {
  const BuildKey base = sampleKey();
  std::set<std::string> hashes = {base.hash()};
  for (std::string_view field : BuildKey::fieldNames()) {
    BuildKey changed = base;
    std::string value = base.field(field);
    bool numeric = !value.empty() && value.find_first_not_of("0123456789") == std::string::npos;
    ASSERT_TRUE(changed.setField(field, numeric ? std::to_string(std::stoll(value) + 1)
                                                : value + "x").ok())
        << field;
    EXPECT_NE(changed.hash(), base.hash()) << "field " << field;
    hashes.insert(changed.hash());
  }
  // Distinct per field too: no two fields alias.
  EXPECT_EQ(hashes.size(), BuildKey::fieldNames().size() + 1);
}

TEST(BuildKey, HasNoRank) {
  for (std::string_view field : BuildKey::fieldNames())
    EXPECT_EQ(field.find("rank"), std::string_view::npos);
  EXPECT_EQ(sampleKey().text().find("rank"), std::string::npos);
  BuildKey key = sampleKey();
  EXPECT_FALSE(key.setField("rank", "1").ok());
}

TEST(BuildKey, EscapesEveryByteOutsideThePlainSet) {
  BuildKey key = sampleKey();
  std::string all;
  for (int c = 0; c < 256; ++c)
    all.push_back(static_cast<char>(c));
  key.options = all;
  auto parsed = BuildKey::parse(key.text());
  ASSERT_TRUE(parsed.ok()) << parsed.message();
  EXPECT_EQ(parsed->options, all);
  EXPECT_EQ(key.text().find(' ', key.text().find("options=")), key.text().find(" compiler="));
}

TEST(BuildKey, RefusesWhatItWouldNotPrint) {
  const std::string good = sampleKey().text();
  auto refuse = [](const std::string &text, const std::string &why) {
    auto parsed = BuildKey::parse(text);
    EXPECT_FALSE(parsed.ok()) << "accepted " << text;
    if (!parsed.ok())
      EXPECT_NE(parsed.message().find(why), std::string::npos) << parsed.message();
  };
  refuse("", "must start with monodc-key/1");
  refuse("monodc-key/2" + good.substr(12), "must start with");
  auto replace = [&](const std::string &from, const std::string &to) {
    std::string text = good;
    text.replace(text.find(from), from.size(), to);
    return text;
  };
  refuse(replace(" rows=6", " rows=06"), "decimal integer");
  refuse(replace(" rows=6", " rows=+6"), "decimal integer");
  refuse(replace(" rows=6", " rows=six"), "decimal integer");
  refuse(replace(" rows=6 ratio=0", " ratio=0 rows=6"), "expected field 'rows'");
  refuse(replace(" tp=2", ""), "expected field 'tp'");
  refuse(good + " rank=0", "text after the last field");
  refuse(replace("options=-O3", "options=%4"), "bad percent escape");
  refuse(replace("options=-O3", "options=%2d"), "bad percent escape");  // lower case
  refuse(replace("options=-O3", "options=%2DO3"), "not in canonical form"); // '-' is plain
  refuse(replace(" features=", " features"), "expected field 'features'");
}

} // namespace
