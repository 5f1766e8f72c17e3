// Finding and reading data set files for the readers: gzip by magic bytes, errors as IOError.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/core/Error.h"

namespace kiln::data::detail {

// Every byte of `path`, inflated when it starts with the gzip magic (1f 8b). IOError from
// `op` at `loc` naming the file when it cannot be opened or read or its gzip data is
// corrupt or truncated.
std::vector<uint8_t> readFileBytes(const std::string& path, std::string_view op,
                                   const SourceLoc& loc);

// The path of the first of `names` present in the first of `dirs` holding one, trying
// each name also with ".gz". IOError listing the names and the directories tried.
std::string findFile(const std::vector<std::string>& dirs, const std::string& name,
                     std::string_view op, const SourceLoc& loc);

// out[i] = in[i] / 255.0f: pixel bytes as torchvision's ToTensor reads them.
void bytesToUnitFloats(const uint8_t* in, size_t count, float* out);

}  // namespace kiln::data::detail
