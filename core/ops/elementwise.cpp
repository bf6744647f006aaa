// The elementwise engine's front: devices, types, shapes and the output, then the backend's loop.
#include "ops/elementwise.hpp"

#include <cstring>
#include <functional>
#include <string>

#include "ops/engine.hpp"
#include "runtime/memory.hpp"

namespace jiasu::ops {
namespace {

std::string device_name(int device) { return device == kCpuDevice ? "the CPU" : "GPU " + std::to_string(device); }

// The one device of the call's arrays; InvalidArrayError when they are on two.
// `what` names the function as Python sees it ("jiasu.add").
int common_device(const Operand* inputs, int count, const Array* out, const std::string& what) {
  int device = out ? out->device() : kCpuDevice - 1;
  bool found = out != nullptr;
  for (int i = 0; i < count; ++i) {
    if (!inputs[i].array) continue;
    const int d = inputs[i].array->device();
    if (!found) {
      device = d;
      found = true;
    } else if (d != device) {
      throw InvalidArrayError(cu::CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE",
                              what + " got arrays on " + device_name(device) + " and on " +
                                  device_name(d) + "; copy one of them first (jiasu.asarray(x, device=...))");
    }
  }
  if (!found) throw BadArgument(what + " needs at least one array operand");
  return device;
}

// Whether writing `out` element by element could change an input element not yet read: the same memory
// under another layout.
bool overlaps(const Array& out, const Array& in) {
  if (out.memory() != in.memory() || out.size() == 0 || in.size() == 0) return false;
  const Layout &a = out.layout(), &b = in.layout();
  if (a.offset == b.offset && a.strides == b.strides && a.shape == b.shape) return false;  // in place
  return a.span_begin() < b.span_end() && b.span_begin() < a.span_end();
}

void run(Ufunc op, const Resolution& r, const Operand* inputs, int count, const Array& out,
         const CustomLoop* custom = nullptr) {
  for (int i = 0; i < count; ++i) {
    if (inputs[i].array && overlaps(out, *inputs[i].array)) {
      Array separate = Array::empty(out.shape(), out.dtype(), out.device());
      run(op, r, inputs, count, separate, custom);
      return assign(out, separate);
    }
  }
  if (out.on_host())
    detail::run_cpu(op, r, inputs, count, out, custom);
  else
    detail::run_cuda(op, r, inputs, count, out, custom);
}

void check_arity(const std::string& name, int arity, int count) {
  if (count != arity)
    throw BadArgument(name + " takes " + std::to_string(arity) + " operand" +
                      (arity == 1 ? "" : "s") + ", not " + std::to_string(count));
}

// The broadcast, the output and the loop, once the types are resolved (r) by op's rules or by `custom`.
Array apply_resolved(Ufunc op, const CustomLoop* custom, const std::string& name, const Operand* inputs, int count,
                     const Array* out, const std::function<Resolution()>& resolve) {
  const int device = common_device(inputs, count, out, name);
  std::shared_ptr<const void> held[kMaxOperands];
  const Shape* first = nullptr;
  bool same_shapes = true;  // the common case, which needs no broadcasting
  for (int i = 0; i < count; ++i) {
    if (!inputs[i].array) continue;
    held[i] = inputs[i].array->memory()->hold();
    const Shape& s = inputs[i].array->shape();
    if (!first) first = &s;
    else same_shapes = same_shapes && s == *first;
  }
  const Resolution r = resolve();
  Shape shape;
  if (same_shapes) {
    if (first) shape = *first;
  } else {
    std::vector<Shape> shapes(count);
    for (int i = 0; i < count; ++i)
      if (inputs[i].array) shapes[i] = inputs[i].array->shape();
    shape = broadcast_shapes(shapes);
  }
  if (out) {
    held[count] = out->memory()->hold();
    if (out->shape() != shape)
      throw BadValue("non-broadcastable output operand with shape " + shape_string(out->shape()) +
                     " doesn't match the broadcast shape " + shape_string(shape));
    if (!can_cast_same_kind(r.result, out->dtype()))
      throw BadArgument("Cannot cast ufunc '" + name.substr(name.rfind('.') + 1) + "' output from dtype('" + info(r.result).name +
                        "') to dtype('" + info(out->dtype()).name + "') with casting rule 'same_kind'");
    run(op, r, inputs, count, *out, custom);
    return *out;
  }
  Array result = Array::empty(shape, r.result, device);
  run(op, r, inputs, count, result, custom);
  return result;
}

}  // namespace

Array apply(Ufunc op, const Operand* inputs, int count, const Array* out) {
  const std::string name = qualified_name(op);
  check_arity(name, info(op).arity, count);
  return apply_resolved(op, nullptr, name, inputs, count, out,
                        [&] { return resolve_types(op, inputs, count, out ? out->dtype() : DType::Bool); });
}

Array apply(const CustomLoop& loop, const Operand* inputs, int count, const Array* out) {
  const std::string name = "jiasu." + loop.name;
  check_arity(name, loop.arity, count);
  return apply_resolved(Ufunc::Copy, &loop, name, inputs, count, out, [&] {
    Resolution r;
    for (int i = 0; i < count; ++i) {
      if (inputs[i].array && inputs[i].array->dtype() != loop.loop[i])
        throw BadArgument("internal: " + loop.name + "'s loop takes " + info(loop.loop[i]).name + ", not " +
                          info(inputs[i].array->dtype()).name);
      r.loop[i] = loop.loop[i];
    }
    check_weak_ints(inputs, count, r.loop);
    r.result = loop.result;
    return r;
  });
}

void assign(const Array& dst, const Array& src) {
  Operand in;
  in.array = &src;
  common_device(&in, 1, &dst, "jiasu.copyto");
  const auto held_dst = dst.memory()->hold();
  const auto held_src = src.memory()->hold();
  bool fits = src.ndim() <= dst.ndim();
  for (int64_t d = 1; fits && d <= src.ndim(); ++d) {
    const int64_t extent = src.shape()[src.ndim() - d];
    fits = extent == 1 || extent == dst.shape()[dst.ndim() - d];
  }
  if (!fits)
    throw BadValue("could not broadcast input array from shape " + shape_string(src.shape()) + " into shape " +
                   shape_string(dst.shape()));
  if (src.dtype() == dst.dtype() && src.shape() == dst.shape() && src.c_contiguous() && dst.c_contiguous() &&
      !overlaps(dst, src)) {  // a plain copy of the bytes
    if (src.size() == 0 || src.data() == dst.data()) return;
    if (dst.on_host())
      std::memcpy(reinterpret_cast<void*>(dst.data()), reinterpret_cast<const void*>(src.data()), dst.nbytes());
    else
      copy_device_to_device(dst.data(), src.data(), dst.nbytes(), nullptr, false);
    return;
  }
  Resolution r;
  r.loop[0] = r.result = dst.dtype();
  run(Ufunc::Copy, r, &in, 1, dst);
}

void assign(const Array& dst, const Scalar& value) {
  Operand in;
  in.scalar = value;
  const DType to = dst.dtype();
  check_weak_ints(&in, 1, &to);  // a[k] = 1000 on int8: OverflowError, as NumPy
  common_device(&in, 1, &dst, "jiasu.copyto");
  const auto held = dst.memory()->hold();
  if (dst.c_contiguous()) {  // a memset
    alignas(16) unsigned char bytes[16];
    detail::scalar_bytes(value, dst.dtype(), bytes);
    return dst.fill(bytes);
  }
  Resolution r;
  r.loop[0] = r.result = dst.dtype();
  run(Ufunc::Copy, r, &in, 1, dst);
}

Array astype(const Array& a, DType dtype) {
  Array out = Array::empty(a.shape(), dtype, a.device());
  assign(out, a);
  return out;
}

}  // namespace jiasu::ops
