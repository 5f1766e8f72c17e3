// Single tensors as NumPy .npy files (format versions 1.0, 2.0 and 3.0), for exchanging
// inputs and outputs with Python and kiln-run.
#pragma once

#include <string>

#include "kiln/core/Tensor.h"

namespace kiln::io {

// Writes `tensor` (any strides) in C order as .npy version 1.0 (2.0 when the header needs
// it) with dtype '<f4', '<f8', '<f2', '<i4', '<i8' or '|b1', atomically as io::save.
// bfloat16 has no NumPy dtype: TypeError (convert to float32 first).
void save_npy(const Tensor& tensor, const std::string& path,
              const SourceLoc& loc = SourceLoc::current());

// Reads an .npy file of one of those dtypes in either byte order; Fortran-order arrays
// are transposed into C order. The magic, version, header dict, shape and data size are
// checked; IOError "<path>: <what is wrong>" otherwise.
Tensor load_npy(const std::string& path, const SourceLoc& loc = SourceLoc::current());

}  // namespace kiln::io
