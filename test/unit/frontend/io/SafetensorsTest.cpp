// io::save / io::load in the safetensors format: round trips of every dtype, the exact
// bytes written, non-contiguous inputs, a file written by Python, each validation error
// with its message, and atomic writes.
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/stat.h>

#include <cmath>
#include <csignal>
#include <limits>

#include "kiln/core/Ops.h"
#include "kiln/io/Safetensors.h"
#include "test/unit/frontend/core/ExpectError.h"
#include "test/unit/frontend/io/IoTestSupport.h"

namespace kiln::io {
namespace {

using kiln::testing::at;
using testing::bytesOf;
using testing::freshDir;
using testing::listDir;
using testing::readBytes;
using testing::values;
using testing::writeBytes;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

OrderedDict<Tensor> everyDType() {
  OrderedDict<Tensor> state;
  state.insert("f32", tensor(std::vector<float>{1.5f, -0.0f, float(kNaN), -float(kInf)}, Shape{2, 2}));
  state.insert("f64", tensor(std::vector<double>{1.0 / 3, -0.0, kInf, 1e-300}));
  state.insert("f16", tensor(std::vector<double>{0.5, -1.0, 65504, 0x1p-24, kNaN}).to(kFloat16));
  state.insert("bf16", tensor(std::vector<double>{1.5, -2.25, 0x1p100, -kInf}, Shape{2, 2}).to(kBFloat16));
  state.insert("i32", tensor(std::vector<int32_t>{7, -8, INT32_MAX, INT32_MIN}));
  state.insert("i64", tensor(std::vector<int64_t>{1, -(int64_t(1) << 62), INT64_MAX}, Shape{3, 1}));
  state.insert("bool", tensor(std::vector<bool>{true, false, true}));
  state.insert("scalar", scalar_tensor(3.25, kFloat64));
  state.insert("empty", zeros({0, 5}, kInt64));
  state.insert("empty_bool", zeros({2, 0}, kBool));
  return state;
}

void expectSameTensors(const OrderedDict<Tensor>& actual, const OrderedDict<Tensor>& expected) {
  ASSERT_EQ(actual.keys(), expected.keys());
  for (const auto& [name, want] : expected) {
    SCOPED_TRACE(name);
    const Tensor& got = actual[name];
    EXPECT_EQ(got.dtype(), want.dtype());
    EXPECT_EQ(got.sizes(), want.sizes());
    EXPECT_TRUE(got.is_contiguous());
    EXPECT_EQ(bytesOf(got), bytesOf(want));
  }
}

TEST(Safetensors, RoundTripsEveryDTypeBitForBit) {
  std::string path = freshDir() + "/model.safetensors";
  OrderedDict<Tensor> state = everyDType();
  save(state, path);
  expectSameTensors(load(path), state);
  EXPECT_TRUE(load_metadata(path).empty());
}

TEST(Safetensors, WritesTheDocumentedLayout) {
  std::string path = freshDir() + "/small.safetensors";
  OrderedDict<Tensor> state;
  state.insert("w", tensor(std::vector<float>{1.0f, -2.0f}));
  state.insert("step", full({}, int64_t(3)));
  save(state, path, {{"format", "pt"}});
  std::string json =
      R"({"__metadata__":{"format":"pt"},"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
      R"("step":{"dtype":"I64","shape":[],"data_offsets":[8,16]}})";
  json.append((8 - json.size() % 8) % 8, ' ');
  std::string length(8, '\0');
  for (int i = 0; i < 8; ++i) length[size_t(i)] = char((json.size() >> (8 * i)) & 0xFF);
  std::string data = bytesOf(state["w"]) + bytesOf(state["step"]);
  EXPECT_EQ(readBytes(path), length + json + data);
  EXPECT_EQ(load_metadata(path), (Metadata{{"format", "pt"}}));
}

TEST(Safetensors, SavesNonContiguousTensorsInCOrder) {
  std::string path = freshDir() + "/views.safetensors";
  Tensor x = arange(0, 12, 1, kFloat32).reshape({3, 4});
  OrderedDict<Tensor> state;
  state.insert("transposed", x.t());
  state.insert("strided", x.slice(1, 0, 4, 2));
  state.insert("offset", x.narrow(0, 1, 2));
  state.insert("broadcast", tensor(std::vector<int32_t>{1, 2, 3}).expand({2, 3}));
  ASSERT_FALSE(state["transposed"].is_contiguous());
  OrderedDict<Tensor> loaded;
  save(state, path);
  loaded = load(path);
  for (const auto& [name, value] : state) {
    SCOPED_TRACE(name);
    EXPECT_EQ(loaded[name].sizes(), value.sizes());
    EXPECT_EQ(values(loaded[name]), values(value));
  }
  EXPECT_EQ(values(loaded["transposed"]), (std::vector<double>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
}

TEST(Safetensors, SavesParametersThatRequireGradAndLoadsPlainTensors) {
  std::string path = freshDir() + "/params.safetensors";
  OrderedDict<Tensor> state;
  state.insert("weight", ones({2, 2}).requires_grad_());
  save(state, path);
  Tensor loaded = load(path)["weight"];
  EXPECT_FALSE(loaded.requires_grad());
  EXPECT_EQ(values(loaded), (std::vector<double>{1, 1, 1, 1}));
}

// Written by scripts/golden/gen_io_fixtures.py: header order differs from data order,
// json.dumps spacing, metadata, every dtype.
TEST(Safetensors, ReadsAFileWrittenByPython) {
  std::string path = testing::fixture("python.safetensors");
  OrderedDict<Tensor> state = load(path);
  EXPECT_EQ(state.keys(), (std::vector<std::string>{"weight", "bias", "half", "brain", "ids",
                                                     "small_ids", "mask", "scalar", "empty"}));
  auto expect = [&](const std::string& name, DType dtype, Shape shape, std::vector<double> v) {
    SCOPED_TRACE(name);
    const Tensor& t = state[name];
    EXPECT_EQ(t.dtype(), dtype);
    EXPECT_EQ(t.sizes(), shape);
    EXPECT_EQ(values(t), v);
  };
  expect("weight", kFloat32, {2, 3}, {1.5, -2.25, 3.0, 0.125, -0.0, 1024.0});
  expect("bias", kFloat64, {3}, {1.0 / 3.0, -2.5, 1e10});
  expect("half", kFloat16, {2, 2}, {0.5, -1.0, 65504.0, 0x1p-24});
  expect("brain", kBFloat16, {4}, {1.5, -2.25, 0x1p100, 0x1p-7});
  expect("ids", kInt64, {2, 2}, {1, -2, 0x1p40, -0x1p62});
  expect("small_ids", kInt32, {3}, {7, -8, 2147483647});
  expect("mask", kBool, {4}, {1, 0, 0, 1});
  expect("scalar", kFloat32, {}, {42});
  expect("empty", kFloat32, {0, 3}, {});
  EXPECT_EQ(load_metadata(path),
            (Metadata{{"format", "pt"}, {"note", "written by gen_io_fixtures.py"}}));
}

// ---- validation ----------------------------------------------------------------------

// A safetensors file from its parts: the length of `header`, `header`, `data`.
std::string safetensorsBytes(const std::string& header, const std::string& data) {
  std::string length(8, '\0');
  for (int i = 0; i < 8; ++i) length[size_t(i)] = char((header.size() >> (8 * i)) & 0xFF);
  return length + header + data;
}

class SafetensorsErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = freshDir();
    path_ = dir_ + "/bad.safetensors";
  }

  // The IOError message io::load gives for a file of these bytes.
  std::string loadError(const std::string& bytes) {
    writeBytes(path_, bytes);
    try {
      load(path_);
    } catch (const IOError& e) {
      return e.message();
    }
    return "no error";
  }
  std::string loadError(const std::string& header, const std::string& data) {
    return loadError(safetensorsBytes(header, data));
  }
  std::string expected(const std::string& what) const { return path_ + ": " + what; }

  std::string dir_;
  std::string path_;
};

TEST_F(SafetensorsErrors, MessageNamesTheOpTheFileAndTheCaller) {
  writeBytes(path_, "tiny");
  EXPECT_KILN_ERROR(load(path_), IOError,
                    "kiln::io::load: " + path_ +
                        ": the file has 4 bytes, too few for a safetensors header (an 8-byte "
                        "length, then JSON)" + at());
  std::string missing = path_ + ".missing";
  EXPECT_KILN_ERROR(load(missing), IOError,
                    "kiln::io::load: " + missing + ": cannot open: No such file or directory" + at());
  EXPECT_KILN_ERROR(load(dir_), IOError, "kiln::io::load: " + dir_ + ": is a directory" + at());
  EXPECT_KILN_ERROR(load_metadata(path_), IOError,
                    "kiln::io::load_metadata: " + path_ +
                        ": the file has 4 bytes, too few for a safetensors header (an 8-byte "
                        "length, then JSON)" + at());
}

TEST_F(SafetensorsErrors, TruncatedFiles) {
  OrderedDict<Tensor> state;
  state.insert("a", ones({2, 2}));
  state.insert("b", full({3}, int64_t(1)));
  save(state, path_);
  const std::string full = readBytes(path_);
  const size_t headerLength = full.size() - 8 - 40;
  EXPECT_EQ(loadError(full.substr(0, full.size() - 8)),
            expected("tensor 'b' has data_offsets [16, 40] beyond the end of the data section "
                     "(32 bytes; is the file truncated?)"));
  EXPECT_EQ(loadError(full.substr(0, 20)),
            expected("header length " + std::to_string(headerLength) +
                     " exceeds the 12 bytes after it (a truncated file, or not safetensors)"));
  EXPECT_EQ(loadError(full.substr(0, 5)),
            expected("the file has 5 bytes, too few for a safetensors header (an 8-byte length, "
                     "then JSON)"));
}

TEST_F(SafetensorsErrors, BadHeaderLength) {
  EXPECT_EQ(loadError(std::string(8, '\xFF') + "{}"),
            expected("header length 18446744073709551615 exceeds the 2 bytes after it (a "
                     "truncated file, or not safetensors)"));
}

TEST_F(SafetensorsErrors, BadJson) {
  EXPECT_EQ(loadError(R"({"a":{"dtype":"F32" "shape":[1]}})", "abcd"),
            expected("header is not valid JSON: expected ',' or '}' after an object member at "
                     "byte 20 of the header"));
  EXPECT_EQ(loadError("", ""),
            expected("header is not valid JSON: unexpected end of input at byte 0 of the header"));
  EXPECT_EQ(loadError("[]", ""), expected("the header must be a JSON object, got an array"));
  EXPECT_EQ(loadError(R"({"a":3})", ""),
            expected("tensor 'a': expected an object with dtype, shape and data_offsets, got a "
                     "number"));
  EXPECT_EQ(loadError(R"({"__metadata__":{"n":1}})", ""),
            expected("\"__metadata__\" must be an object of strings, but 'n' is a number"));
}

TEST_F(SafetensorsErrors, MissingOrUnexpectedFields) {
  EXPECT_EQ(loadError(R"({"a":{"dtype":"F32","shape":[1]}})", "abcd"),
            expected("tensor 'a': missing 'data_offsets'"));
  EXPECT_EQ(loadError(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"x":1}})", "abcd"),
            expected("tensor 'a': unexpected field 'x'"));
  EXPECT_EQ(loadError(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", "abcd"),
            expected("tensor 'a': 'shape' must be an array of non-negative integers"));
  EXPECT_EQ(loadError(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0]}})", "abcd"),
            expected("tensor 'a': 'data_offsets' must be two non-negative integers [begin, end]"));
  EXPECT_EQ(loadError(R"({"a":{"dtype":32,"shape":[1],"data_offsets":[0,4]}})", "abcd"),
            expected("tensor 'a': 'dtype' must be a string, got a number"));
}

TEST_F(SafetensorsErrors, UnknownDType) {
  EXPECT_EQ(loadError(R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}})", "abcd"),
            expected("tensor 'a' has unknown dtype 'U8'; Kiln reads F32, F64, F16, BF16, I32, I64 "
                     "and BOOL"));
}

TEST_F(SafetensorsErrors, OffsetsOutOfRangeOrNotMatchingTheShape) {
  EXPECT_EQ(loadError(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", "abcd"),
            expected("tensor 'a' has data_offsets [0, 8] beyond the end of the data section (4 "
                     "bytes; is the file truncated?)"));
  EXPECT_EQ(loadError(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,18446744073709551615]}})",
                      "abcd"),
            expected("tensor 'a' has data_offsets [0, 18446744073709551615] beyond the end of the "
                     "data section (4 bytes; is the file truncated?)"));
  EXPECT_EQ(loadError(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,0]}})", "abcd"),
            expected("tensor 'a': data_offsets [4, 0] end before they begin"));
  EXPECT_EQ(loadError(R"({"a":{"dtype":"F32","shape":[2,2],"data_offsets":[0,12]}})",
                      std::string(12, '\0')),
            expected("tensor 'a' is F32 [2, 2] (16 bytes) but its data_offsets [0, 12] span 12 "
                     "bytes"));
  EXPECT_EQ(loadError(R"({"a":{"dtype":"F32","shape":[4611686018427387904,4],"data_offsets":[0,0]}})", ""),
            expected("tensor 'a': shape [4611686018427387904, 4] is too large"));
}

TEST_F(SafetensorsErrors, OverlapsAndUnusedBytes) {
  EXPECT_EQ(loadError(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                      R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                      std::string(12, '\0')),
            expected("tensors 'a' and 'b' overlap: data_offsets [0, 8] and [4, 12]"));
  EXPECT_EQ(loadError(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                      R"("b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
                      std::string(12, '\0')),
            expected("bytes [4, 8) of the data section belong to no tensor"));
  EXPECT_EQ(loadError(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
                      std::string(8, '\0')),
            expected("bytes [4, 8) of the data section belong to no tensor"));
}

TEST_F(SafetensorsErrors, BoolBytesOtherThanZeroOrOne) {
  EXPECT_EQ(loadError(R"({"m":{"dtype":"BOOL","shape":[3],"data_offsets":[0,3]}})",
                      std::string("\x01\x00\x02", 3)),
            expected("tensor 'm' holds 2 at element 2; BOOL elements must be 0 or 1"));
}

TEST_F(SafetensorsErrors, TorchSaveIsNotSafetensors) {
  std::string path = testing::fixture("torch_save.pt");
  EXPECT_KILN_ERROR(load(path), IOError,
                    "kiln::io::load: " + path +
                        ": is a zip archive (torch.save writes those), not a safetensors file" + at());
}

TEST_F(SafetensorsErrors, WhatSaveRejectsBeforeWritingAnything) {
  const std::string path = dir_ + "/out.safetensors";
  OrderedDict<Tensor> undefined;
  undefined.insert("x", Tensor());
  EXPECT_KILN_ERROR(save(undefined, path), IOError,
                    "kiln::io::save: " + path + ": tensor 'x' is undefined" + at());
  OrderedDict<Tensor> reserved;
  reserved.insert("__metadata__", ones({1}));
  EXPECT_KILN_ERROR(save(reserved, path), IOError,
                    "kiln::io::save: " + path +
                        ": the tensor name \"__metadata__\" is reserved for metadata" + at());
  OrderedDict<Tensor> notUtf8;
  notUtf8.insert("bad\xFF", ones({1}));
  EXPECT_KILN_ERROR(save(notUtf8, path), IOError,
                    "kiln::io::save: " + path + ": tensor name 'bad\xFF' is not valid UTF-8" + at());
  EXPECT_KILN_ERROR(save(everyDType(), path, {{"k", "\xC3"}}), IOError,
                    "kiln::io::save: " + path + ": metadata 'k' is not valid UTF-8" + at());
  EXPECT_TRUE(listDir(dir_).empty());
}

// Every proper prefix of a valid file, and random byte corruptions of it, are rejected
// with an IOError or (for corruptions of tensor data) read; none may crash.
TEST_F(SafetensorsErrors, EveryTruncationAndRandomCorruptionsAreHandled) {
  save(everyDType(), path_);
  const std::string valid = readBytes(path_);
  for (size_t n = 0; n < valid.size(); ++n) {
    writeBytes(path_, valid.substr(0, n));
    EXPECT_THROW(load(path_), IOError) << "prefix of " << n << " bytes";
  }
  uint64_t state = 42;
  auto next = [&] { return (state = state * 6364136223846793005ull + 1442695040888963407ull) >> 33; };
  for (int trial = 0; trial < 2000; ++trial) {
    std::string bytes = valid;
    for (int flips = 1 + int(next() % 4); flips > 0; --flips)
      bytes[next() % bytes.size()] = char(next());
    writeBytes(path_, bytes);
    try {
      load(path_);
    } catch (const IOError&) {
    } catch (const std::exception& e) {
      ADD_FAILURE() << "trial " << trial << ": " << e.what();
    }
  }
}

// ---- atomic writes ----------------------------------------------------------------------

TEST(SafetensorsAtomicWrite, ReplacesTheFileAndLeavesNoTemporary) {
  const std::string dir = freshDir();
  const std::string path = dir + "/ckpt.safetensors";
  writeBytes(path, "old contents");
  save(everyDType(), path);
  expectSameTensors(load(path), everyDType());
  EXPECT_EQ(listDir(dir), (std::set<std::string>{"ckpt.safetensors"}));
}

TEST(SafetensorsAtomicWrite, MissingDirectory) {
  const std::string path = freshDir() + "/no/such/dir/ckpt.safetensors";
  EXPECT_KILN_ERROR(save(everyDType(), path), IOError,
                    "kiln::io::save: " + path + ": cannot create the temporary file " +
                        testing::tempPathOf(path) + ": No such file or directory" + at());
}

TEST(SafetensorsAtomicWrite, RenameFailureRemovesTheTemporaryAndKeepsTheDestination) {
  const std::string dir = freshDir();
  const std::string path = dir + "/ckpt.safetensors";
  ASSERT_EQ(::mkdir(path.c_str(), 0755), 0);  // a non-empty directory cannot be replaced
  writeBytes(path + "/keep", "keep");
  EXPECT_KILN_ERROR(save(everyDType(), path), IOError,
                    "kiln::io::save: " + path + ": cannot rename " + testing::tempPathOf(path) +
                        " into place: Is a directory" + at());
  EXPECT_EQ(listDir(dir), (std::set<std::string>{"ckpt.safetensors"}));
  EXPECT_EQ(readBytes(path + "/keep"), "keep");
}

// A write that fails halfway (here: the file size limit, which binds root too) leaves the
// old file as it was and no temporary file.
TEST(SafetensorsAtomicWrite, FailedWriteKeepsTheOldFile) {
  const std::string dir = freshDir();
  const std::string path = dir + "/ckpt.safetensors";
  writeBytes(path, "old contents");
  OrderedDict<Tensor> big;
  big.insert("w", ones({4096}));
  rlimit previous;
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &previous), 0);
  auto previousHandler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit limited = previous;
  limited.rlim_cur = 1024;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limited), 0);
  std::string message;
  try {
    save(big, path);
  } catch (const IOError& e) {
    message = e.message();
  }
  ::setrlimit(RLIMIT_FSIZE, &previous);
  std::signal(SIGXFSZ, previousHandler);
  EXPECT_EQ(message, path + ": writing " + testing::tempPathOf(path) + " failed: File too large");
  EXPECT_EQ(readBytes(path), "old contents");
  EXPECT_EQ(listDir(dir), (std::set<std::string>{"ckpt.safetensors"}));
}

TEST(SafetensorsAtomicWrite, UnwritableDirectory) {
  if (::geteuid() == 0) GTEST_SKIP() << "root writes into read-only directories";
  const std::string dir = freshDir();
  const std::string path = dir + "/ckpt.safetensors";
  writeBytes(path, "old contents");
  ASSERT_EQ(::chmod(dir.c_str(), 0555), 0);
  EXPECT_KILN_ERROR(save(everyDType(), path), IOError,
                    "kiln::io::save: " + path + ": cannot create the temporary file " +
                        testing::tempPathOf(path) + ": Permission denied" + at());
  ::chmod(dir.c_str(), 0755);
  EXPECT_EQ(readBytes(path), "old contents");
  EXPECT_EQ(listDir(dir), (std::set<std::string>{"ckpt.safetensors"}));
}

}  // namespace
}  // namespace kiln::io
