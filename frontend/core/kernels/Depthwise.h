// Depthwise 2-D convolution on NCHW (each input channel convolved with its own filters),
// read and written in place: no layout reorders around it, which is what a depthwise
// convolution through oneDNN's blocked layouts spends most of its time on.
#pragma once

#include <cstdint>

namespace kiln::kernels {

// Output channel o = c * multiplier + m reads input channel c with filter o.
struct DepthwiseGeometry {
  int64_t batch, channels, height, width;  // x: [batch, channels, height, width]
  int64_t multiplier;                      // w: [channels * multiplier, 1, kh, kw]
  int64_t kh, kw, strideH, strideW, dilationH, dilationW, padTop, padLeft;
  int64_t outH, outW;  // y: [batch, channels * multiplier, outH, outW]
};

// y = conv2d(x, w) for contiguous x, w and y. Each output is
// ((0 + w00*x00) + w01*x01) + ... over the window in row-major order, padding included as
// zeros, in float without fused multiply-adds: the same operations in every vector clone.
void depthwiseConv2d(const float* x, const float* w, float* y, const DepthwiseGeometry& g);

}  // namespace kiln::kernels
