// The .npy format (numpy.lib.format): the magic, a version, a little-endian header length,
// a Python dict literal {'descr': ..., 'fortran_order': ..., 'shape': (...), } padded to
// 64 bytes, then the array's bytes.
#include "kiln/io/Npy.h"

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <optional>

#include "frontend/io/TensorBytes.h"
#include "kiln/core/Autograd.h"
#include "support/BinaryFile.h"

namespace kiln::io {

using support::AtomicFileWriter;
using support::FileReader;

static_assert(std::endian::native == std::endian::little, "the writer emits little-endian data");

namespace {

constexpr std::string_view kMagic = "\x93NUMPY";
constexpr size_t kAlignment = 64;  // numpy's ARRAY_ALIGN

// NumPy's kind and item size for each dtype Kiln reads and writes.
struct NpyType {
  DType dtype;
  char kind;
  size_t size;
};
constexpr std::array<NpyType, 6> kNpyTypes{{{kFloat32, 'f', 4},
                                            {kFloat64, 'f', 8},
                                            {kFloat16, 'f', 2},
                                            {kInt32, 'i', 4},
                                            {kInt64, 'i', 8},
                                            {kBool, 'b', 1}}};

// ---- the header dict ------------------------------------------------------------------

// What a header holds once parsed.
struct NpyHeader {
  std::string descr;
  bool fortranOrder = false;
  Shape shape;
};

// Parses the subset of Python literals numpy writes: a dict of quoted keys to quoted
// strings, True/False and tuples of non-negative integers. Errors name what was expected
// and the byte offset into the header.
class HeaderParser {
 public:
  HeaderParser(const FileReader& file, std::string_view text) : file_(file), text_(text) {}

  NpyHeader parse() {
    NpyHeader header;
    bool seenDescr = false, seenOrder = false, seenShape = false;
    skipSpace();
    expect('{', "'{'");
    while (true) {
      skipSpace();
      if (peek() == '}') break;
      const size_t keyStart = pos_;
      const std::string key = parseString();
      bool* seen = key == "descr" ? &seenDescr
                   : key == "fortran_order" ? &seenOrder
                   : key == "shape" ? &seenShape
                   : nullptr;
      if (!seen || *seen) {
        pos_ = keyStart;
        fail((seen ? "duplicate key '" : "unexpected key '") + key + "'");
      }
      *seen = true;
      skipSpace();
      expect(':', "':' after a key");
      skipSpace();
      if (key == "descr") header.descr = parseString();
      else if (key == "fortran_order") header.fortranOrder = parseBool();
      else header.shape = parseTuple();
      skipSpace();
      if (peek() != ',') break;
      ++pos_;
    }
    expect('}', "',' or '}'");
    skipSpace();
    if (pos_ != text_.size()) fail("unexpected characters after the dict");
    if (!seenDescr || !seenOrder || !seenShape)
      fail("the dict needs 'descr', 'fortran_order' and 'shape'");
    return header;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    file_.fail("the header is not a valid .npy header: ", what, " at byte ", pos_, " of the header");
  }

  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skipSpace() {
    while (peek() == ' ' || peek() == '\n' || peek() == '\t' || peek() == '\r') ++pos_;
  }
  void expect(char c, const char* what) {
    if (peek() != c) fail(std::string("expected ") + what);
    ++pos_;
  }

  std::string parseString() {
    const char quote = peek();
    if (quote != '\'' && quote != '"') fail("expected a quoted string");
    const size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string_view::npos) fail("unterminated string");
    std::string value(text_.substr(pos_ + 1, end - pos_ - 1));
    if (value.find('\\') != std::string::npos) fail("escapes are not supported in strings");
    pos_ = end + 1;
    return value;
  }

  bool parseBool() {
    for (bool value : {true, false}) {
      std::string_view word = value ? "True" : "False";
      if (text_.substr(pos_, word.size()) == word) {
        pos_ += word.size();
        return value;
      }
    }
    fail("expected True or False");
  }

  // (), (n,), (n, m), ... ; a single element needs its comma, as in Python.
  Shape parseTuple() {
    expect('(', "a tuple for 'shape'");
    Shape shape;
    bool trailingComma = false;
    while (true) {
      skipSpace();
      if (peek() == ')') break;
      const size_t start = pos_;
      while (peek() >= '0' && peek() <= '9') ++pos_;
      if (pos_ == start) fail("expected a non-negative integer in 'shape'");
      int64_t dim = 0;
      if (std::from_chars(text_.data() + start, text_.data() + pos_, dim).ec != std::errc()) {
        pos_ = start;
        fail("a dimension in 'shape' is too large");
      }
      shape.push_back(dim);
      skipSpace();
      trailingComma = peek() == ',';
      if (!trailingComma) break;
      ++pos_;
    }
    expect(')', "',' or ')' in 'shape'");
    if (shape.size() == 1 && !trailingComma) fail("'shape' (n) is not a tuple; write (n,)");
    return shape;
  }

  const FileReader& file_;
  std::string_view text_;
  size_t pos_ = 0;
};

// The dtype and whether the data is big-endian, from a descr such as '<f4'.
std::pair<DType, bool> parseDescr(const FileReader& file, const std::string& descr) {
  const char order = descr.size() == 3 ? descr[0] : '?';
  if (order == '<' || order == '>' || order == '=' || order == '|') {
    for (const NpyType& t : kNpyTypes) {
      // '|' means "byte order does not apply": one-byte types only.
      if (descr[1] != t.kind || descr[2] != char('0' + t.size) || (order == '|' && t.size != 1))
        continue;
      return {t.dtype, order == '>' && t.size > 1};
    }
  }
  file.fail("unsupported dtype '", descr,
            "'; Kiln reads <f4, <f8, <f2, <i4, <i8 and |b1 (either byte order)");
}

void swapBytes(Tensor& t) {
  auto* bytes = static_cast<uint8_t*>(t.rawData());
  const size_t size = t.element_size();
  for (int64_t i = 0; i < t.numel(); ++i) std::reverse(bytes + i * size, bytes + (i + 1) * size);
}

uint32_t getLittleEndian(const std::string& bytes, size_t offset, size_t count) {
  uint32_t value = 0;
  for (size_t i = count; i-- > 0;) value = (value << 8) | uint8_t(bytes[offset + i]);
  return value;
}

// ---- writing --------------------------------------------------------------------------

std::string descrOf(DType dtype) {
  for (const NpyType& t : kNpyTypes)
    if (t.dtype == dtype) return std::string(1, t.size == 1 ? '|' : '<') + t.kind + char('0' + t.size);
  return "";
}

// The magic, version and header, padded as numpy pads it (1 to 64 spaces, then '\n').
std::string headerBytes(const Tensor& t) {
  std::string dict = "{'descr': '" + descrOf(t.dtype()) + "', 'fortran_order': False, 'shape': (";
  for (int64_t i = 0; i < t.dim(); ++i) dict += (i ? ", " : "") + std::to_string(t.size(i));
  dict += t.dim() == 1 ? ",), }" : "), }";
  for (int major : {1, 2}) {
    const size_t lengthBytes = major == 1 ? 2 : 4;
    const size_t unpadded = kMagic.size() + 2 + lengthBytes + dict.size() + 1;
    const size_t pad = kAlignment - unpadded % kAlignment;
    const size_t headerLength = dict.size() + pad + 1;
    if (major == 1 && headerLength > 0xFFFF) continue;
    std::string out(kMagic);
    out += char(major);
    out += char(0);
    for (size_t i = 0; i < lengthBytes; ++i) out += char((headerLength >> (8 * i)) & 0xFF);
    return out + dict + std::string(pad, ' ') + "\n";
  }
  return "";  // a header of 4 GiB: unreachable with Kiln's ranks
}

}  // namespace

void save_npy(const Tensor& tensor, const std::string& path, const SourceLoc& loc) {
  constexpr std::string_view op = "io::save_npy";
  if (!tensor.defined()) throw IOError::make(loc, op, path, ": the tensor is undefined");
  if (tensor.dtype() == kBFloat16)
    throw TypeError::make(loc, op, path, ": bfloat16 has no NumPy dtype; convert to float32 first");
  Tensor contiguous = contiguousForWrite(tensor, loc);
  AtomicFileWriter out(path, op, loc);
  out.write(headerBytes(contiguous));
  out.write(contiguous.rawData(), size_t(contiguous.numel()) * contiguous.element_size());
  out.commit();
}

Tensor load_npy(const std::string& path, const SourceLoc& loc) {
  FileReader file(path, "io::load_npy", loc);
  if (file.size() < kMagic.size() + 4)
    file.fail("the file has ", file.size(), " bytes, too few for an .npy header");
  const std::string prefix = file.read(0, std::min<uint64_t>(file.size(), kMagic.size() + 6));
  if (!prefix.starts_with(kMagic)) file.fail("not an .npy file (it does not start with \\x93NUMPY)");
  const int major = uint8_t(prefix[6]), minor = uint8_t(prefix[7]);
  if ((major != 1 && major != 2 && major != 3) || minor != 0)
    file.fail("unsupported .npy format version ", major, ".", minor, " (Kiln reads 1.0, 2.0 and 3.0)");
  const size_t lengthBytes = major == 1 ? 2 : 4;
  if (prefix.size() < 8 + lengthBytes) file.fail("the file ends inside the header length");
  const uint64_t headerLength = getLittleEndian(prefix, 8, lengthBytes);
  const uint64_t dataStart = 8 + lengthBytes + headerLength;
  if (dataStart > file.size())
    file.fail("header length ", headerLength, " exceeds the ", file.size() - 8 - lengthBytes,
              " bytes after it (a truncated file?)");
  const NpyHeader header =
      HeaderParser(file, file.read(8 + lengthBytes, size_t(headerLength))).parse();
  const auto [dtype, bigEndian] = parseDescr(file, header.descr);

  // A Fortran-order array is the C-order array of the reversed shape, transposed.
  Shape stored = header.shape;
  if (header.fortranOrder) std::reverse(stored.begin(), stored.end());
  const std::optional<uint64_t> bytes = byteSize(stored, dtype);
  if (!bytes) file.fail("shape ", header.shape, " is too large");
  const uint64_t available = file.size() - dataStart;
  if (available < *bytes)
    file.fail("the data has ", available, " bytes but ", header.descr, " ", header.shape, " needs ",
              *bytes, " (is the file truncated?)");
  if (available > *bytes)
    file.fail("the data has ", available - *bytes, " bytes more than ", header.descr, " ",
              header.shape, " needs");

  Tensor t = allocateForRead(stored, dtype, loc);
  file.read(dataStart, t.rawData(), size_t(*bytes));
  if (bigEndian) swapBytes(t);
  if (dtype == kBool)
    if (int64_t bad = firstInvalidBool(t); bad >= 0)
      file.fail("element ", bad, " is ", int(static_cast<const uint8_t*>(t.rawData())[bad]),
                "; bool elements must be 0 or 1");
  if (!header.fortranOrder || t.dim() < 2) return t;
  Shape reversed(size_t(t.dim()));
  for (int64_t i = 0; i < t.dim(); ++i) reversed[size_t(i)] = t.dim() - 1 - i;
  NoGradGuard noGrad;
  return t.permute(reversed, loc).contiguous(loc);
}

}  // namespace kiln::io
