// Embedding: a lookup table of learnable vectors indexed by integer ids.
#pragma once

#include <optional>

#include "kiln/nn/Arg.h"
#include "kiln/nn/ModuleHolder.h"

namespace kiln::nn {

struct EmbeddingOptions {
  EmbeddingOptions(int64_t num_embeddings, int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
  KILN_ARG(int64_t, num_embeddings);
  KILN_ARG(int64_t, embedding_dim);
  // This row starts as zeros and receives no gradient (negative counts from the end).
  KILN_ARG(std::optional<int64_t>, padding_idx);
};

// weight [num_embeddings, embedding_dim] drawn from N(0, 1), as PyTorch.
class EmbeddingImpl : public Module {
 public:
  EmbeddingImpl(int64_t num_embeddings, int64_t embedding_dim)
      : EmbeddingImpl(EmbeddingOptions(num_embeddings, embedding_dim)) {}
  explicit EmbeddingImpl(const EmbeddingOptions& options);

  void reset_parameters(const SourceLoc& loc = SourceLoc::current());
  // indices of any shape -> indices.shape ++ [embedding_dim].
  Tensor forward(const Tensor& indices, const SourceLoc& loc = SourceLoc::current());
  void pretty_print(std::ostream& os) const override;

  EmbeddingOptions options;
  Tensor weight;
};
KILN_MODULE(Embedding);

}  // namespace kiln::nn
