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

// A grouped convolution of one image with one output channel per group and few output
// positions, each a sum over whole planes: the form a depthwise convolution's weight
// gradient takes (conv2d's backward convolves the input's planes, grouped by channel, with
// the output gradient's planes as filters). x and w are read through their strides.
struct PlaneDotGeometry {
  int64_t groups, channels;  // x: [1, groups * channels, height, width]; w: [groups, channels, kh, kw]
  int64_t height, width, kh, kw, strideH, strideW, dilationH, dilationW, padTop, padLeft;
  int64_t outH, outW;                    // y: [1, groups, outH, outW], contiguous
  int64_t xChannel, xRow, xCol;          // x's strides, in elements
  int64_t wGroup, wChannel, wRow, wCol;  // w's strides
};

// Floats of scratch each thread needs: a group's input planes and filters, channels last.
int64_t planeDotScratch(const PlaneDotGeometry& g);

// y = conv2d(x, w, groups) for PlaneDotGeometry. Each group's input planes and filters are
// copied with the channels innermost (a vector of 16 channels per position, the channels
// rounded up to whole vectors with zeros), so that every tap of every output is whole
// vector products, however small the planes: a sum over the channels of one tap is what a
// plane-sized window would spread over lanes padding and dilation gaps leave empty. Taps
// that read padding are left out (never multiplied by zero: 0 * inf would be NaN).
void planeDotConv2d(const float* x, const float* w, float* y, const PlaneDotGeometry& g);

}  // namespace kiln::kernels
