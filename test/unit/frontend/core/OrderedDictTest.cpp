// OrderedDict: insertion order, lookup, duplicate and missing keys.
#include <gtest/gtest.h>

#include "kiln/core/OrderedDict.h"

namespace kiln {
namespace {

TEST(OrderedDict, KeepsInsertionOrderAndFindsKeys) {
  OrderedDict<int> d;
  d.insert("b", 2);
  d.insert("a", 1);
  d.insert_or_assign("b", 3);
  EXPECT_EQ(d.keys(), (std::vector<std::string>{"b", "a"}));
  EXPECT_EQ(d.values(), (std::vector<int>{3, 1}));
  EXPECT_EQ(d["a"], 1);
  EXPECT_TRUE(d.contains("b"));
  EXPECT_EQ(d.find("c"), nullptr);
  EXPECT_EQ(d.size(), 2u);
}

TEST(OrderedDict, DuplicateAndMissingKeysAreErrorsNamingTheKey) {
  OrderedDict<int> d;
  d.insert("w", 1);
  try {
    d.insert("w", 2);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("key 'w' is already present"), std::string::npos) << e.what();
  }
  try {
    (void)d.at("v");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no key 'v'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kiln
