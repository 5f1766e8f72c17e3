// io::save_npy / io::load_npy: round trips, files identical to numpy's, numpy's Fortran
// order, big-endian data and version 2.0, and each validation error with its message.
#include <gtest/gtest.h>

#include "kiln/core/Ops.h"
#include "kiln/io/Npy.h"
#include "test/unit/frontend/core/ExpectError.h"
#include "test/unit/frontend/io/IoTestSupport.h"

namespace kiln::io {
namespace {

using kiln::testing::at;
using testing::bytesOf;
using testing::fixture;
using testing::freshDir;
using testing::listDir;
using testing::readBytes;
using testing::values;
using testing::writeBytes;

std::vector<Tensor> roundTripCases() {
  return {
      tensor(std::vector<float>{1.5f, -0.0f, 3e38f, -1e-40f}, Shape{2, 2}),
      tensor(std::vector<double>{1.0 / 3, -2.5, 1e300}),
      tensor(std::vector<double>{0.5, -1.0, 65504, 0x1p-24}).to(kFloat16),
      tensor(std::vector<int32_t>{INT32_MIN, 0, INT32_MAX}, Shape{3, 1, 1}),
      tensor(std::vector<int64_t>{INT64_MIN, INT64_MAX}),
      tensor(std::vector<bool>{true, false, false, true, true, false}, Shape{2, 3}),
      scalar_tensor(-7.25, kFloat64),
      zeros({0, 4}, kInt32),
  };
}

TEST(Npy, RoundTripsEveryDTypeNumPyHas) {
  const std::string dir = freshDir();
  for (const Tensor& t : roundTripCases()) {
    SCOPED_TRACE(::testing::Message() << t.dtype() << " " << formatShape(t.sizes()));
    const std::string path = dir + "/t.npy";
    save_npy(t, path);
    Tensor loaded = load_npy(path);
    EXPECT_EQ(loaded.dtype(), t.dtype());
    EXPECT_EQ(loaded.sizes(), t.sizes());
    EXPECT_EQ(bytesOf(loaded), bytesOf(t));
  }
  EXPECT_EQ(listDir(dir), (std::set<std::string>{"t.npy"}));
}

TEST(Npy, SavesNonContiguousTensorsInCOrder) {
  const std::string path = freshDir() + "/t.npy";
  Tensor x = arange(0, 6, 1, kFloat64).reshape({2, 3});
  save_npy(x.t(), path);
  Tensor loaded = load_npy(path);
  EXPECT_EQ(loaded.sizes(), (Shape{3, 2}));
  EXPECT_EQ(values(loaded), (std::vector<double>{0, 3, 1, 4, 2, 5}));
}

// numpy.save's files (scripts/golden/gen_io_fixtures.py), byte for byte.
TEST(Npy, WritesWhatNumPyWrites) {
  const std::string dir = freshDir();
  struct Case {
    const char* file;
    Tensor tensor;
  };
  std::vector<Case> cases = {
      {"f32_c.npy", tensor(std::vector<float>{-1, -0.5, 0, 0.5, 1, 1.5}, Shape{2, 3})},
      {"i64_scalar.npy", full({}, -(int64_t(1) << 40))},
      {"bool.npy", tensor(std::vector<bool>{true, false, true})},
      {"f16.npy", tensor(std::vector<double>{0.5, -1.0, 65504, 0x1p-24}).to(kFloat16)},
      {"empty.npy", zeros({0, 3})},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    save_npy(c.tensor, dir + "/" + c.file);
    EXPECT_EQ(readBytes(dir + "/" + c.file), readBytes(fixture(c.file)));
    Tensor loaded = load_npy(fixture(c.file));
    EXPECT_EQ(loaded.dtype(), c.tensor.dtype());
    EXPECT_EQ(loaded.sizes(), c.tensor.sizes());
    EXPECT_EQ(bytesOf(loaded), bytesOf(c.tensor));
  }
}

TEST(Npy, ReadsFortranOrderBigEndianAndVersion2) {
  Tensor fortran = load_npy(fixture("f64_fortran.npy"));
  EXPECT_EQ(fortran.dtype(), kFloat64);
  EXPECT_EQ(fortran.sizes(), (Shape{3, 4}));
  EXPECT_TRUE(fortran.is_contiguous());
  std::vector<double> quarters;
  for (int i = 0; i < 12; ++i) quarters.push_back(i / 4.0);
  EXPECT_EQ(values(fortran), quarters);

  Tensor big = load_npy(fixture("i32_big_endian.npy"));
  EXPECT_EQ(big.dtype(), kInt32);
  EXPECT_EQ(values(big), (std::vector<double>{1, -2, 300000, -2147483648.0}));

  Tensor v2 = load_npy(fixture("v2.npy"));
  EXPECT_EQ(v2.sizes(), (Shape{2, 2}));
  EXPECT_EQ(values(v2), (std::vector<double>{1, 2, 3, 4}));
}

TEST(Npy, SaveRejectsWhatNumPyCannotHold) {
  const std::string dir = freshDir();
  const std::string path = dir + "/t.npy";
  EXPECT_KILN_ERROR(save_npy(ones({2}).to(kBFloat16), path), TypeError,
                    "kiln::io::save_npy: " + path +
                        ": bfloat16 has no NumPy dtype; convert to float32 first" + at());
  EXPECT_KILN_ERROR(save_npy(Tensor(), path), IOError,
                    "kiln::io::save_npy: " + path + ": the tensor is undefined" + at());
  EXPECT_TRUE(listDir(dir).empty());
}

// ---- validation ----------------------------------------------------------------------

// An .npy file from its parts, with the header length numpy would write.
std::string npyBytes(const std::string& header, const std::string& data, int major = 1) {
  std::string out = "\x93NUMPY";
  out += char(major);
  out += char(0);
  for (int i = 0; i < (major == 1 ? 2 : 4); ++i) out += char((header.size() >> (8 * i)) & 0xFF);
  return out + header + data;
}

class NpyErrors : public ::testing::Test {
 protected:
  void SetUp() override { path_ = freshDir() + "/bad.npy"; }

  std::string loadError(const std::string& bytes) {
    writeBytes(path_, bytes);
    try {
      load_npy(path_);
    } catch (const IOError& e) {
      return e.message();
    }
    return "no error";
  }
  std::string expected(const std::string& what) const { return path_ + ": " + what; }
  std::string headerError(const std::string& what, size_t byte) const {
    return expected("the header is not a valid .npy header: " + what + " at byte " +
                    std::to_string(byte) + " of the header");
  }

  std::string path_;
};

TEST_F(NpyErrors, MessageNamesTheOpTheFileAndTheCaller) {
  writeBytes(path_, "abc");
  EXPECT_KILN_ERROR(load_npy(path_), IOError,
                    "kiln::io::load_npy: " + path_ + ": the file has 3 bytes, too few for an .npy header" + at());
}

TEST_F(NpyErrors, MagicVersionAndHeaderLength) {
  EXPECT_EQ(loadError("PK\x03\x04 not numpy at all"),
            expected("not an .npy file (it does not start with \\x93NUMPY)"));
  std::string v4 = npyBytes("{}", "");
  v4[6] = 4;
  EXPECT_EQ(loadError(v4),
            expected("unsupported .npy format version 4.0 (Kiln reads 1.0, 2.0 and 3.0)"));
  EXPECT_EQ(loadError(npyBytes(std::string(100, ' '), "").substr(0, 50)),
            expected("header length 100 exceeds the 40 bytes after it (a truncated file?)"));
  EXPECT_EQ(loadError(std::string("\x93NUMPY\x02\x00\x05\x00", 10)),
            expected("the file ends inside the header length"));
}

TEST_F(NpyErrors, MalformedHeaderDicts) {
  const std::string noShape = "{'descr': '<f4', 'fortran_order': False}";
  EXPECT_EQ(loadError(npyBytes(noShape, "")),
            headerError("the dict needs 'descr', 'fortran_order' and 'shape'", noShape.size()));
  EXPECT_EQ(loadError(npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}", "")),
            headerError("unexpected key 'x'", 56));
  EXPECT_EQ(loadError(npyBytes("{'descr': '<f4', 'descr': '<f4'}", "")),
            headerError("duplicate key 'descr'", 17));
  EXPECT_EQ(loadError(npyBytes("{'descr': '<f4', 'fortran_order': false, 'shape': ()}", "")),
            headerError("expected True or False", 34));
  EXPECT_EQ(loadError(npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (3)}", "")),
            headerError("'shape' (n) is not a tuple; write (n,)", 53));
  EXPECT_EQ(loadError(npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (-3,)}", "")),
            headerError("expected a non-negative integer in 'shape'", 51));
  EXPECT_EQ(loadError(npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': ()} x", "")),
            headerError("unexpected characters after the dict", 54));
  EXPECT_EQ(loadError(npyBytes("['descr']", "")), headerError("expected '{'", 0));
}

TEST_F(NpyErrors, UnsupportedDTypes) {
  for (const char* descr : {"<u2", "|f4", "<c8", "O", "<f16"}) {
    SCOPED_TRACE(descr);
    EXPECT_EQ(loadError(npyBytes(std::string("{'descr': '") + descr +
                                     "', 'fortran_order': False, 'shape': (), }\n",
                                 "")),
              expected(std::string("unsupported dtype '") + descr +
                       "'; Kiln reads <f4, <f8, <f2, <i4, <i8 and |b1 (either byte order)"));
  }
}

TEST_F(NpyErrors, DataOfTheWrongSize) {
  const std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n";
  EXPECT_EQ(loadError(npyBytes(header, std::string(20, '\0'))),
            expected("the data has 20 bytes but <f4 [2, 3] needs 24 (is the file truncated?)"));
  EXPECT_EQ(loadError(npyBytes(header, std::string(28, '\0'))),
            expected("the data has 4 bytes more than <f4 [2, 3] needs"));
  EXPECT_EQ(loadError(npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': "
                               "(4611686018427387904, 4), }",
                               "")),
            expected("shape [4611686018427387904, 4] is too large"));
  EXPECT_EQ(loadError(npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': "
                               "(9223372036854775808,), }",
                               "")),
            headerError("a dimension in 'shape' is too large", 51));
}

TEST_F(NpyErrors, BoolBytesOtherThanZeroOrOne) {
  EXPECT_EQ(loadError(npyBytes("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }",
                               std::string("\x01\x02\x00", 3))),
            expected("element 1 is 2; bool elements must be 0 or 1"));
}

TEST_F(NpyErrors, EveryTruncationAndRandomCorruptionsAreHandled) {
  save_npy(tensor(std::vector<double>{1, 2, 3, 4, 5, 6}, Shape{3, 2}), path_);
  const std::string valid = readBytes(path_);
  for (size_t n = 0; n < valid.size(); ++n) {
    writeBytes(path_, valid.substr(0, n));
    EXPECT_THROW(load_npy(path_), IOError) << "prefix of " << n << " bytes";
  }
  uint64_t state = 7;
  auto next = [&] { return (state = state * 6364136223846793005ull + 1442695040888963407ull) >> 33; };
  for (int trial = 0; trial < 2000; ++trial) {
    std::string bytes = valid;
    for (int flips = 1 + int(next() % 3); flips > 0; --flips) {
      // Most flips land in the 128-byte header, where the parsing is.
      size_t at = next() % 4 == 0 ? next() % bytes.size() : next() % 128;
      bytes[at] = char(next());
    }
    writeBytes(path_, bytes);
    try {
      load_npy(path_);
    } catch (const IOError&) {
    } catch (const std::exception& e) {
      ADD_FAILURE() << "trial " << trial << ": " << e.what();
    }
  }
}

}  // namespace
}  // namespace kiln::io
