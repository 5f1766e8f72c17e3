// State dicts on disk in the safetensors format, the one users move weights in: save and
// load, written atomically and validated in full when read.
#pragma once

#include <map>
#include <string>

#include "kiln/core/OrderedDict.h"
#include "kiln/core/Tensor.h"

namespace kiln::io {

// safetensors' optional "__metadata__": free-form strings (e.g. {"format": "pt"}).
using Metadata = std::map<std::string, std::string>;

// Writes `tensors` to `path` as safetensors: an 8-byte little-endian header length, a JSON
// header {"<name>": {"dtype": "F32", "shape": [...], "data_offsets": [begin, end]}, ...}
// padded with spaces to a multiple of 8 bytes, then each tensor's bytes, contiguous,
// little-endian, in insertion order. Dtypes: F32 F64 F16 BF16 I32 I64 BOOL. The file is
// written to "<path>.tmp.<pid>", flushed and renamed, so `path` is never left half
// written. IOError naming the file for undefined tensors, the reserved name "__metadata__",
// names or metadata that are not UTF-8, and failures of the file system.
void save(const OrderedDict<Tensor>& tensors, const std::string& path,
          const Metadata& metadata = {}, const SourceLoc& loc = SourceLoc::current());

// Reads a safetensors file into fresh CPU tensors, in the order of the header. Everything
// is checked before it is trusted: the header length against the file size, the JSON,
// each entry's fields, dtype and shape, and that the data_offsets lie in the data section,
// match dtype × shape, do not overlap and leave no bytes unused; BOOL bytes must be 0 or 1.
// IOError "<path>: <what is wrong>" otherwise.
OrderedDict<Tensor> load(const std::string& path, const SourceLoc& loc = SourceLoc::current());

// The "__metadata__" of a safetensors file (empty if it has none), checked as load does.
Metadata load_metadata(const std::string& path, const SourceLoc& loc = SourceLoc::current());

}  // namespace kiln::io
