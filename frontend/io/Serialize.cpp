// torch::save / torch::load on top of io::save / io::load: the value's tensors by name,
// and "kiln.kind" in the metadata naming what they are.
#include "kiln/io/Serialize.h"

#include <string>

#include "kiln/core/Autograd.h"
#include "kiln/io/Safetensors.h"

namespace kiln {
namespace {

constexpr const char* kKindKey = "kiln.kind";

void saveAs(const OrderedDict<Tensor>& tensors, const char* kind, const std::string& path,
            const SourceLoc& loc) {
  io::save(tensors, path, {{"format", "pt"}, {kKindKey, kind}}, loc);
}

// The tensors of a file that save() wrote for a value of `kind`.
OrderedDict<Tensor> loadAs(const char* kind, const std::string& path, const SourceLoc& loc) {
  io::Metadata metadata = io::load_metadata(path, loc);
  auto found = metadata.find(kKindKey);
  if (found == metadata.end())
    throw IOError::make(loc, "load", path, ": has no \"", kKindKey, "\" metadata, so it was not ",
                        "written by kiln::save; read it with io::load");
  if (found->second != kind)
    throw IOError::make(loc, "load", path, ": holds a ", found->second, ", not a ", kind);
  return io::load(path, loc);
}

Tensor savedValues(const Tensor& tensor) { return tensor.detach().cpu(); }

}  // namespace

void save(const Tensor& tensor, const std::string& path, const SourceLoc& loc) {
  OrderedDict<Tensor> tensors;
  tensors.insert("tensor", savedValues(tensor));
  saveAs(tensors, "tensor", path, loc);
}

void load(Tensor& tensor, const std::string& path, const SourceLoc& loc) {
  OrderedDict<Tensor> tensors = loadAs("tensor", path, loc);
  if (tensors.size() != 1 || !tensors.contains("tensor"))
    throw IOError::make(loc, "load", path, ": a tensor file holds one entry named \"tensor\", found ",
                        tensors.size());
  tensor = tensors["tensor"];
}

void save(const std::vector<Tensor>& tensors, const std::string& path, const SourceLoc& loc) {
  OrderedDict<Tensor> named;
  for (size_t i = 0; i < tensors.size(); ++i) named.insert(std::to_string(i), savedValues(tensors[i]));
  saveAs(named, "tensor list", path, loc);
}

void load(std::vector<Tensor>& tensors, const std::string& path, const SourceLoc& loc) {
  OrderedDict<Tensor> named = loadAs("tensor list", path, loc);
  std::vector<Tensor> values;
  for (size_t i = 0; i < named.size(); ++i) {
    if (!named.contains(std::to_string(i)))
      throw IOError::make(loc, "load", path, ": a tensor list of ", named.size(),
                          " entries lacks entry \"", i, "\"");
    values.push_back(named[std::to_string(i)]);
  }
  tensors = std::move(values);
}

void save(const nn::Module& module, const std::string& path, const SourceLoc& loc) {
  saveAs(module.state_dict(), "module", path, loc);
}

void load(nn::Module& module, const std::string& path, const SourceLoc& loc) {
  module.load_state_dict(loadAs("module", path, loc), /*strict=*/true, loc);
}

void save(const optim::Optimizer& optimizer, const std::string& path, const SourceLoc& loc) {
  saveAs(optimizer.state_dict(), "optimizer", path, loc);
}

void load(optim::Optimizer& optimizer, const std::string& path, const SourceLoc& loc) {
  optimizer.load_state_dict(loadAs("optimizer", path, loc), loc);
}

}  // namespace kiln
