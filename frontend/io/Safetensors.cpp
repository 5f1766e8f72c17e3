// The safetensors format (https://github.com/huggingface/safetensors): writer, and a
// reader that validates the header and the data layout before reading any tensor.
#include "kiln/io/Safetensors.h"

#include <algorithm>
#include <array>
#include <bit>
#include <optional>
#include <vector>

#include "frontend/io/Json.h"
#include "frontend/io/TensorBytes.h"
#include "support/BinaryFile.h"

namespace kiln::io {

using support::AtomicFileWriter;
using support::FileReader;

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; a big-endian host would need byte swaps");

namespace {

constexpr std::string_view kMetadataKey = "__metadata__";

struct DTypeCode {
  DType dtype;
  std::string_view code;
};
constexpr std::array<DTypeCode, 7> kDTypeCodes{{{kFloat32, "F32"},
                                                {kFloat64, "F64"},
                                                {kFloat16, "F16"},
                                                {kBFloat16, "BF16"},
                                                {kInt32, "I32"},
                                                {kInt64, "I64"},
                                                {kBool, "BOOL"}}};

std::string_view codeOf(DType dtype) {
  for (const DTypeCode& c : kDTypeCodes)
    if (c.dtype == dtype) return c.code;
  return "?";
}

std::optional<DType> dtypeOfCode(std::string_view code) {
  for (const DTypeCode& c : kDTypeCodes)
    if (c.code == code) return c.dtype;
  return std::nullopt;
}

// One tensor of a header.
struct Entry {
  std::string name;
  DType dtype;
  Shape shape;
  uint64_t begin = 0, end = 0;  // within the data section
};

std::string offsetsText(const Entry& e) {
  return "[" + std::to_string(e.begin) + ", " + std::to_string(e.end) + "]";
}

// ---- writing --------------------------------------------------------------------------

std::string headerJson(const std::vector<Entry>& entries, const Metadata& metadata) {
  std::string out = "{";
  auto separate = [&] {
    if (out.size() > 1) out += ",";
  };
  if (!metadata.empty()) {
    out += json::quote(kMetadataKey) + ":{";
    bool first = true;
    for (const auto& [key, value] : metadata) {
      out += (first ? "" : ",") + json::quote(key) + ":" + json::quote(value);
      first = false;
    }
    out += "}";
  }
  for (const Entry& e : entries) {
    separate();
    out += json::quote(e.name) + ":{\"dtype\":\"" + std::string(codeOf(e.dtype)) + "\",\"shape\":[";
    for (size_t i = 0; i < e.shape.size(); ++i) out += (i ? "," : "") + std::to_string(e.shape[i]);
    out += "],\"data_offsets\":[" + std::to_string(e.begin) + "," + std::to_string(e.end) + "]}";
  }
  return out + "}";
}

void putLittleEndian64(char* out, uint64_t value) {
  for (int i = 0; i < 8; ++i) out[i] = char((value >> (8 * i)) & 0xFF);
}

uint64_t getLittleEndian64(const char* in) {
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = (value << 8) | uint8_t(in[i]);
  return value;
}

// ---- reading --------------------------------------------------------------------------

struct Header {
  std::vector<Entry> entries;
  Metadata metadata;
  uint64_t dataStart = 0;  // file offset of the data section
};

json::Value parseHeaderJson(const FileReader& file, const std::string& text) {
  try {
    return json::parse(text);
  } catch (const json::ParseError& e) {
    file.fail("header is not valid JSON: ", e.what(), " at byte ", e.offset(), " of the header");
  }
}

Metadata parseMetadata(const FileReader& file, const json::Value& value) {
  if (!value.isObject())
    file.fail("\"__metadata__\" must be an object of strings, got ", json::describe(value.kind()));
  Metadata metadata;
  for (const auto& [key, v] : value.members()) {
    if (!v.isString())
      file.fail("\"__metadata__\" must be an object of strings, but '", key, "' is ",
                json::describe(v.kind()));
    metadata.emplace(key, v.text());
  }
  return metadata;
}

// An array of non-negative integers below `limit`.
std::optional<std::vector<uint64_t>> asIntegers(const json::Value& value, uint64_t limit) {
  if (!value.isArray()) return std::nullopt;
  std::vector<uint64_t> out;
  for (const json::Value& item : value.items()) {
    std::optional<uint64_t> v = item.asUint64();
    if (!v || *v > limit) return std::nullopt;
    out.push_back(*v);
  }
  return out;
}

Entry parseEntry(const FileReader& file, const std::string& name, const json::Value& value,
                 uint64_t dataSize) {
  auto bad = [&](const auto&... args) { file.fail("tensor '", name, "': ", args...); };
  if (!value.isObject())
    bad("expected an object with dtype, shape and data_offsets, got ", json::describe(value.kind()));
  for (const auto& [field, v] : value.members())
    if (field != "dtype" && field != "shape" && field != "data_offsets")
      bad("unexpected field '", field, "'");
  const json::Value* dtype = value.find("dtype");
  const json::Value* shape = value.find("shape");
  const json::Value* offsets = value.find("data_offsets");
  if (!dtype) bad("missing 'dtype'");
  if (!shape) bad("missing 'shape'");
  if (!offsets) bad("missing 'data_offsets'");

  Entry e{name, kFloat32, {}, 0, 0};
  if (!dtype->isString()) bad("'dtype' must be a string, got ", json::describe(dtype->kind()));
  std::optional<DType> parsed = dtypeOfCode(dtype->text());
  if (!parsed)
    file.fail("tensor '", name, "' has unknown dtype '", dtype->text(),
              "'; Kiln reads F32, F64, F16, BF16, I32, I64 and BOOL");
  e.dtype = *parsed;

  std::optional<std::vector<uint64_t>> dims = asIntegers(*shape, uint64_t(INT64_MAX));
  if (!dims) bad("'shape' must be an array of non-negative integers");
  e.shape.assign(dims->begin(), dims->end());

  std::optional<std::vector<uint64_t>> range = asIntegers(*offsets, UINT64_MAX);
  if (!range || range->size() != 2) bad("'data_offsets' must be two non-negative integers [begin, end]");
  e.begin = (*range)[0];
  e.end = (*range)[1];
  if (e.begin > e.end) bad("data_offsets ", offsetsText(e), " end before they begin");
  if (e.end > dataSize)
    file.fail("tensor '", name, "' has data_offsets ", offsetsText(e),
              " beyond the end of the data section (", dataSize, " bytes; is the file truncated?)");
  std::optional<uint64_t> bytes = byteSize(e.shape, e.dtype);
  if (!bytes) bad("shape ", e.shape, " is too large");
  if (*bytes != e.end - e.begin)
    file.fail("tensor '", name, "' is ", codeOf(e.dtype), " ", e.shape, " (", *bytes,
              " bytes) but its data_offsets ", offsetsText(e), " span ", e.end - e.begin, " bytes");
  return e;
}

// Tensors may not share bytes, and every byte of the data section belongs to one (the
// format's rule; it also catches files with bytes appended). Empty tensors take no room.
void checkLayout(const FileReader& file, const std::vector<Entry>& entries, uint64_t dataSize) {
  std::vector<const Entry*> sorted;
  for (const Entry& e : entries)
    if (e.begin != e.end) sorted.push_back(&e);
  std::sort(sorted.begin(), sorted.end(), [](const Entry* a, const Entry* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  uint64_t covered = 0;
  const Entry* previous = nullptr;
  for (const Entry* e : sorted) {
    if (e->begin < covered)
      file.fail("tensors '", previous->name, "' and '", e->name, "' overlap: data_offsets ",
                offsetsText(*previous), " and ", offsetsText(*e));
    if (e->begin > covered)
      file.fail("bytes [", covered, ", ", e->begin, ") of the data section belong to no tensor");
    covered = e->end;
    previous = e;
  }
  if (covered < dataSize)
    file.fail("bytes [", covered, ", ", dataSize, ") of the data section belong to no tensor");
}

Header readHeader(const FileReader& file) {
  if (file.size() < 8)
    file.fail("the file has ", file.size(),
              " bytes, too few for a safetensors header (an 8-byte length, then JSON)");
  const std::string lengthBytes = file.read(0, 8);
  if (lengthBytes.starts_with("PK\x03\x04"))
    file.fail("is a zip archive (torch.save writes those), not a safetensors file");
  const uint64_t length = getLittleEndian64(lengthBytes.data());
  if (length > file.size() - 8)
    file.fail("header length ", length, " exceeds the ", file.size() - 8,
              " bytes after it (a truncated file, or not safetensors)");
  const json::Value root = parseHeaderJson(file, file.read(8, size_t(length)));
  if (!root.isObject()) file.fail("the header must be a JSON object, got ", json::describe(root.kind()));

  Header header;
  header.dataStart = 8 + length;
  const uint64_t dataSize = file.size() - header.dataStart;
  for (const auto& [name, value] : root.members()) {
    if (name == kMetadataKey) header.metadata = parseMetadata(file, value);
    else header.entries.push_back(parseEntry(file, name, value, dataSize));
  }
  checkLayout(file, header.entries, dataSize);
  return header;
}

}  // namespace

void save(const OrderedDict<Tensor>& tensors, const std::string& path, const Metadata& metadata,
          const SourceLoc& loc) {
  constexpr std::string_view op = "io::save";
  auto fail = [&](const auto&... args) { throw IOError::make(loc, op, path, ": ", args...); };
  for (const auto& [key, value] : metadata)
    if (!json::isValidUtf8(key) || !json::isValidUtf8(value))
      fail("metadata '", key, "' is not valid UTF-8");

  // Everything is checked and made contiguous before the file is created.
  std::vector<Entry> entries;
  std::vector<Tensor> data;
  uint64_t offset = 0;
  for (const auto& [name, value] : tensors) {
    if (name == kMetadataKey) fail("the tensor name \"__metadata__\" is reserved for metadata");
    if (!json::isValidUtf8(name)) fail("tensor name '", name, "' is not valid UTF-8");
    if (!value.defined()) fail("tensor '", name, "' is undefined");
    Tensor contiguous = contiguousForWrite(value, loc);
    const uint64_t bytes = uint64_t(contiguous.numel()) * contiguous.element_size();
    entries.push_back({name, contiguous.dtype(), contiguous.sizes(), offset, offset + bytes});
    data.push_back(contiguous);
    offset += bytes;
  }
  std::string header = headerJson(entries, metadata);
  header.append((8 - header.size() % 8) % 8, ' ');  // so the data section is 8-byte aligned
  char length[8];
  putLittleEndian64(length, header.size());

  AtomicFileWriter out(path, op, loc);
  out.write(length, sizeof length);
  out.write(header);
  for (const Tensor& t : data) out.write(t.rawData(), size_t(t.numel()) * t.element_size());
  out.commit();
}

OrderedDict<Tensor> load(const std::string& path, const SourceLoc& loc) {
  FileReader file(path, "io::load", loc);
  const Header header = readHeader(file);
  OrderedDict<Tensor> out;
  for (const Entry& e : header.entries) {
    Tensor t = allocateForRead(e.shape, e.dtype, loc);
    file.read(header.dataStart + e.begin, t.rawData(), size_t(e.end - e.begin));
    if (e.dtype == kBool)
      if (int64_t bad = firstInvalidBool(t); bad >= 0)
        file.fail("tensor '", e.name, "' holds ",
                  int(static_cast<const uint8_t*>(t.rawData())[bad]), " at element ", bad,
                  "; BOOL elements must be 0 or 1");
    out.insert(e.name, t, loc);
  }
  return out;
}

Metadata load_metadata(const std::string& path, const SourceLoc& loc) {
  FileReader file(path, "io::load_metadata", loc);
  return readHeader(file).metadata;
}

}  // namespace kiln::io
