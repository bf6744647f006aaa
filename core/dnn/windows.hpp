// Sliding windows over NCHW arrays, shared by the convolutions and the pooling operations: the geometry of a
// window walk, and the views of a padded input that read every window without copying it.
#pragma once

#include <cstdint>
#include <string>

#include "array/array.hpp"
#include "dnn/nn.hpp"

namespace jiasu::dnn {

struct Windows {
  int64_t n, c, h, w;  // input
  int64_t r, s;        // window rows and columns
  int64_t hp, wp;      // padded input
  int64_t oh, ow;      // output
  ConvParams p;        // stride, dilation, padding; groups split the channels
};

// The walk of an (r, s) window over input `x_shape` (N, C, H, W); BadValue (after `prefix`) when the window
// is larger than the padded input.
Windows windows_over(const Shape& x_shape, int64_t r, int64_t s, const ConvParams& p, const std::string& prefix);

// Views of a padded input xp (N, C, Hp, Wp):
// its interior, the unpadded input's place (N, C, H, W);
Layout interior(const Array& xp, const Windows& g);
// the elements window position (i, j) meets, for every output position: (N, G, C/G, OH, OW);
Layout window_position(const Array& xp, const Windows& g, int64_t i, int64_t j);
// every window position at once, the im2col matrix without a copy: (N, G, C/G, R, S, OH, OW).
Layout all_windows(const Array& xp, const Windows& g);

// x padded with `fill`, C-contiguous (x itself when it is so and needs no padding).
Array padded(const Array& x, const Windows& g, double fill);
Array zeros(const Shape& shape, DType dtype, int device);

// Whether `a` (N, C, H, W) is channels-last: C the fastest dimension (with C > 1, as PyTorch decides).
bool channels_last(const Array& a);
// An uninitialised (N, C, H, W) array, channels-last when `like` is, else C-contiguous.
Array empty_in_layout_of(const Shape& shape, DType dtype, const Array& like);
// `a` (C-contiguous) in the layout of `like`: a channels-last copy when `like` is channels-last, else `a`.
Array in_layout_of(const Array& a, const Array& like);

}  // namespace jiasu::dnn
