// LibTorch's torch::save / torch::load for a tensor, a list of tensors, a module (its
// state dict) and an optimizer (its state), as safetensors files (io::save, written
// atomically). The file's metadata records which of the four it holds, so loading it into
// another kind of value is an error that says so.
#pragma once

#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "kiln/core/Tensor.h"
#include "kiln/nn/Module.h"
#include "kiln/nn/ModuleHolder.h"
#include "kiln/optim/Optimizer.h"

namespace kiln {

// A tensor is saved with its values (as a CPU copy, detached); load replaces `tensor`
// with a fresh CPU leaf holding them.
void save(const Tensor& tensor, const std::string& path, const SourceLoc& loc = SourceLoc::current());
void load(Tensor& tensor, const std::string& path, const SourceLoc& loc = SourceLoc::current());
void save(const std::vector<Tensor>& tensors, const std::string& path,
          const SourceLoc& loc = SourceLoc::current());
void load(std::vector<Tensor>& tensors, const std::string& path,
          const SourceLoc& loc = SourceLoc::current());

// A module's state_dict(); load copies it into the module with load_state_dict (strict:
// a missing, unexpected or differently shaped tensor is an error naming it).
void save(const nn::Module& module, const std::string& path, const SourceLoc& loc = SourceLoc::current());
void load(nn::Module& module, const std::string& path, const SourceLoc& loc = SourceLoc::current());

// An optimizer's state_dict() (hyperparameters and per-parameter state); load restores it
// with load_state_dict into an optimizer of the same kind over as many parameters.
void save(const optim::Optimizer& optimizer, const std::string& path,
          const SourceLoc& loc = SourceLoc::current());
void load(optim::Optimizer& optimizer, const std::string& path,
          const SourceLoc& loc = SourceLoc::current());

// LibTorch passes modules as holders (torch::save(model, path)) or shared_ptrs.
template <class M>
void save(const nn::ModuleHolder<M>& module, const std::string& path,
          const SourceLoc& loc = SourceLoc::current()) {
  save(static_cast<const nn::Module&>(*module), path, loc);
}
template <class M>
void load(nn::ModuleHolder<M>& module, const std::string& path,
          const SourceLoc& loc = SourceLoc::current()) {
  load(static_cast<nn::Module&>(*module), path, loc);
}
template <class M>
  requires std::is_base_of_v<nn::Module, M>
void save(const std::shared_ptr<M>& module, const std::string& path,
          const SourceLoc& loc = SourceLoc::current()) {
  save(static_cast<const nn::Module&>(*module), path, loc);
}
template <class M>
  requires std::is_base_of_v<nn::Module, M>
void load(const std::shared_ptr<M>& module, const std::string& path,
          const SourceLoc& loc = SourceLoc::current()) {
  load(static_cast<nn::Module&>(*module), path, loc);
}

}  // namespace kiln
