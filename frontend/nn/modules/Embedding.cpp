#include "kiln/nn/Embedding.h"

#include "kiln/core/Autograd.h"
#include "kiln/nn/Functional.h"
#include "kiln/nn/Init.h"

namespace kiln::nn {

EmbeddingImpl::EmbeddingImpl(const EmbeddingOptions& options) : options(options) {
  const SourceLoc loc = SourceLoc::current();
  const int64_t count = options.num_embeddings();
  if (count < 0 || options.embedding_dim() < 0)
    throw Error::make(loc, "Embedding", "num_embeddings and embedding_dim must be >= 0, got ", count,
                      " and ", options.embedding_dim());
  if (auto& pad = this->options.padding_idx()) {
    if (*pad < -count || *pad >= count)
      throw Error::make(loc, "Embedding", "padding_idx ", *pad, " is out of range for ", count,
                        " embeddings");
    if (*pad < 0) *pad += count;
  }
  weight = register_parameter("weight", empty({count, options.embedding_dim()}));
  reset_parameters();
}

void EmbeddingImpl::reset_parameters(const SourceLoc& loc) {
  init::normal_(weight, 0.0, 1.0, loc);
  if (options.padding_idx()) {
    NoGradGuard noGrad;
    weight.narrow(0, *options.padding_idx(), 1, loc).zero_(loc);
  }
}

Tensor EmbeddingImpl::forward(const Tensor& indices, const SourceLoc& loc) {
  return functional::embedding(indices, weight,
                               functional::EmbeddingFuncOptions().padding_idx(options.padding_idx()),
                               loc);
}

void EmbeddingImpl::pretty_print(std::ostream& os) const {
  os << "Embedding(" << options.num_embeddings() << ", " << options.embedding_dim();
  if (options.padding_idx()) os << ", padding_idx=" << *options.padding_idx();
  os << ")";
}

}  // namespace kiln::nn
