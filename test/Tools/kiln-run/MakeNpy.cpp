// make-npy FILE DTYPE DIM...: writes 0, 1, 2, ... in the given dtype (float32, float64,
// int32, int64, bool) and shape as FILE, for kiln-run's tests.
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>

#include "kiln/core/Ops.h"
#include "kiln/io/Npy.h"

int main(int argc, char** argv) {
  using namespace kiln;
  const std::map<std::string, DType> dtypes = {{"float32", kFloat32},
                                               {"float64", kFloat64},
                                               {"int32", kInt32},
                                               {"int64", kInt64},
                                               {"bool", kBool}};
  if (argc < 3 || !dtypes.count(argv[2])) {
    std::cerr << "usage: make-npy FILE float32|float64|int32|int64|bool DIM...\n";
    return 2;
  }
  try {
    Shape shape;
    int64_t numel = 1;
    for (int i = 3; i < argc; ++i) {
      shape.push_back(std::stoll(argv[i]));
      numel *= shape.back();
    }
    io::save_npy(arange(numel).reshape(shape).to(dtypes.at(argv[2])), argv[1]);
  } catch (const std::exception& e) {
    std::cerr << "make-npy: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
