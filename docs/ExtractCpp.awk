# Turns every ```cpp block of a Markdown file into the body of one gtest, in order, so a
# guide's code is compiled and run as written. `#line` points compile errors at the
# Markdown. Each test runs in $TEST_TMPDIR, so files the code writes land there.
BEGIN {
  print "#include <unistd.h>"
  print "#include <cstdlib>"
  print "#include <string>"
  print "#include <vector>"
  print "#include <gtest/gtest.h>"
  print "#include \"kiln/kiln.h\""
  print "using namespace kiln;"
  print "namespace {"
  print "class UserGuide : public ::testing::Test {"
  print " protected:"
  print "  void SetUp() override {"
  print "    const char* dir = std::getenv(\"TEST_TMPDIR\");"
  print "    ASSERT_TRUE(dir && chdir(dir) == 0);"
  print "  }"
  print "};"
  blocks = 0
}
/^```cpp$/ {
  inside = 1
  blocks++
  print "TEST_F(UserGuide, Block" blocks ") {"
  print "#line " NR + 1 " \"" FILENAME "\""
  next
}
/^```$/ && inside { inside = 0; print "}"; next }
inside { print }
END {
  print "}  // namespace"
  if (blocks == 0) { print "#error \"no ```cpp blocks found\""; }
}
