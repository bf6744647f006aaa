#include "dnn/windows.hpp"

#include "array/layout.hpp"
#include "ops/elementwise.hpp"
#include "support/error.hpp"

namespace jiasu::dnn {

Windows windows_over(const Shape& x, int64_t r, int64_t s, const ConvParams& p, const std::string& prefix) {
  Windows g{};
  g.n = x[0], g.c = x[1], g.h = x[2], g.w = x[3];
  g.r = r, g.s = s;
  g.p = p;
  g.hp = g.h + p.pad_before[0] + p.pad_after[0];
  g.wp = g.w + p.pad_before[1] + p.pad_after[1];
  const int64_t span_h = p.dilation[0] * (r - 1) + 1, span_w = p.dilation[1] * (s - 1) + 1;
  if (span_h > g.hp || span_w > g.wp)
    throw BadValue(prefix + "the kernel (" + std::to_string(span_h) + " x " + std::to_string(span_w) +
                   (p.dilation[0] > 1 || p.dilation[1] > 1 ? " with dilation" : "") +
                   ") is larger than the padded input (" + std::to_string(g.hp) + " x " + std::to_string(g.wp) + ")");
  g.oh = (g.hp - span_h) / p.stride[0] + 1;
  g.ow = (g.wp - span_w) / p.stride[1] + 1;
  return g;
}

Layout interior(const Array& xp, const Windows& g) {
  Layout l = xp.layout();
  l.shape = {g.n, g.c, g.h, g.w};
  l.offset += g.p.pad_before[0] * l.strides[2] + g.p.pad_before[1] * l.strides[3];
  return l;
}

Layout window_position(const Array& xp, const Windows& g, int64_t i, int64_t j) {
  const Shape st = xp.strides();
  Layout l = xp.layout();
  const int64_t cg = g.c / g.p.groups;
  l.shape = {g.n, g.p.groups, cg, g.oh, g.ow};
  l.strides = {st[0], cg * st[1], st[1], g.p.stride[0] * st[2], g.p.stride[1] * st[3]};
  l.offset += i * g.p.dilation[0] * st[2] + j * g.p.dilation[1] * st[3];
  return l;
}

Layout all_windows(const Array& xp, const Windows& g) {
  const Shape st = xp.strides();
  Layout l = window_position(xp, g, 0, 0);
  l.shape.insert(l.shape.begin() + 3, {g.r, g.s});
  l.strides.insert(l.strides.begin() + 3, {g.p.dilation[0] * st[2], g.p.dilation[1] * st[3]});
  return l;
}

Array padded(const Array& x, const Windows& g, double fill) {
  const bool no_padding = g.hp == g.h && g.wp == g.w;
  if (no_padding && x.c_contiguous()) return x;
  Array out = Array::empty({g.n, g.c, g.hp, g.wp}, x.dtype(), x.device());
  if (!no_padding) {
    ops::Scalar value;
    value.dtype = DType::Float64;
    value.f = fill;
    ops::assign(out, value);
  }
  ops::assign(out.view(interior(out, g)), x);
  return out;
}

Array zeros(const Shape& shape, DType dtype, int device) {
  Array a = Array::empty(shape, dtype, device);
  if (a.size() > 0) a.fill(std::string(a.layout().itemsize, '\0').data());
  return a;
}

bool channels_last(const Array& a) {
  const Shape& st = a.strides();
  return a.ndim() == 4 && a.shape()[1] > 1 && !a.c_contiguous() && st[1] == a.layout().itemsize &&
         st[3] == st[1] * a.shape()[1] && st[2] == st[3] * a.shape()[3] && st[0] == st[2] * a.shape()[2];
}

Array empty_in_layout_of(const Shape& shape, DType dtype, const Array& like) {
  if (!channels_last(like)) return Array::empty(shape, dtype, like.device());
  const Array nhwc = Array::empty({shape[0], shape[2], shape[3], shape[1]}, dtype, like.device());
  return nhwc.view(transpose_layout(nhwc.layout(), {0, 3, 1, 2}));
}

Array in_layout_of(const Array& a, const Array& like) {
  if (!channels_last(like) || channels_last(a)) return a;
  const Array out = empty_in_layout_of(a.shape(), a.dtype(), like);
  ops::assign(out, a);
  return out;
}

}  // namespace jiasu::dnn
