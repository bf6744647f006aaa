#include "ops/gufunc.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <utility>

#include "array/promotion.hpp"
#include "support/error.hpp"

namespace jiasu::ops {
namespace {

bool name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::string dims_string(const std::vector<std::string>& dims) {
  std::string out = "(";
  for (size_t i = 0; i < dims.size(); ++i) out += (i ? "," : "") + dims[i];
  return out + ")";
}

std::string ordinal_operand(size_t k, size_t nin) {
  return k < nin ? "input " + std::to_string(k) : "output " + std::to_string(k - nin);
}

// How many leading dimensions of length 1 a shape has (a given output and the loop may differ by those).
std::ptrdiff_t leading_ones(const Shape& shape) {
  std::ptrdiff_t ones = 0;
  while (ones < static_cast<std::ptrdiff_t>(shape.size()) && shape[ones] == 1) ++ones;
  return ones;
}

Layout without_leading_ones(Layout layout) {
  const std::ptrdiff_t ones = leading_ones(layout.shape);
  layout.shape.erase(layout.shape.begin(), layout.shape.begin() + ones);
  layout.strides.erase(layout.strides.begin(), layout.strides.begin() + ones);
  return layout;
}

bool equal_but_leading_ones(const Shape& a, const Shape& b) {
  return std::equal(a.begin() + leading_ones(a), a.end(), b.begin() + leading_ones(b), b.end());
}

Shape concatenated(Shape a, const Shape& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// The last `count` dimensions of `shape`: an operand's core shape.
Shape core_of(const Shape& shape, size_t count) {
  return Shape(shape.end() - static_cast<std::ptrdiff_t>(count), shape.end());
}

}  // namespace

GufuncLayout parse_gufunc_layout(const std::string& text) {
  auto bad = [&](const std::string& why) { return BadValue("bad gufunc layout '" + text + "': " + why); };
  std::string s;  // whitespace is free anywhere, as Numba's parser takes it
  for (char c : text)
    if (!std::isspace(static_cast<unsigned char>(c))) s += c;
  const size_t arrow = s.find("->");
  if (arrow == std::string::npos) throw bad("no '->' between the inputs and the outputs, as in (m,n),(n,p)->(m,p)");
  // One side: parenthesised groups of dimension names, each group and name followed by an optional comma.
  auto side = [&](const std::string& part, const char* what) {
    std::vector<std::vector<std::string>> operands;
    size_t i = 0;
    while (i < part.size()) {
      if (part[i] != '(') throw bad(std::string("expected '(' where the ") + what + " have '" + part.substr(i) + "'");
      ++i;
      std::vector<std::string> dims;
      while (i < part.size() && part[i] != ')') {
        if (!name_start(part[i]))
          throw bad(std::string("a dimension is a name (m, n, rows, ...), not '") + part[i] + "'");
        const size_t start = i;
        while (i < part.size() && name_char(part[i])) ++i;
        dims.push_back(part.substr(start, i - start));
        if (i < part.size() && part[i] == ',') ++i;
        else if (i < part.size() && part[i] != ')')
          throw bad(std::string("unexpected '") + part[i] + "' after " + dims.back());
      }
      if (i == part.size()) throw bad("a '(' is not closed");
      ++i;
      operands.push_back(std::move(dims));
      if (i < part.size()) {
        if (part[i] != ',') throw bad(std::string("expected ',' between operands, not '") + part[i] + "'");
        ++i;
      }
    }
    if (operands.empty()) throw bad(std::string("no ") + what);
    return operands;
  };
  GufuncLayout layout{side(s.substr(0, arrow), "inputs"), side(s.substr(arrow + 2), "outputs")};
  for (const auto& dims : layout.outputs)
    for (const std::string& d : dims) {
      const bool bound = std::any_of(layout.inputs.begin(), layout.inputs.end(), [&](const auto& in) {
        return std::find(in.begin(), in.end(), d) != in.end();
      });
      if (!bound) throw bad("the output dimension " + d + " is no input's, so its length is unknown");
    }
  return layout;
}

std::string layout_string(const GufuncLayout& layout) {
  std::string out;
  for (size_t k = 0; k < layout.inputs.size(); ++k) out += (k ? "," : "") + dims_string(layout.inputs[k]);
  out += "->";
  for (size_t k = 0; k < layout.outputs.size(); ++k) out += (k ? "," : "") + dims_string(layout.outputs[k]);
  return out;
}

Gufunc::Gufunc(const std::string& layout, std::vector<std::vector<GufuncParam>> signatures)
    : layout_(parse_gufunc_layout(layout)), signatures_(std::move(signatures)) {
  if (signatures_.empty()) throw BadArgument("a gufunc needs at least one signature");
  const size_t nin = this->nin(), operands = nin + nout();
  for (size_t i = 0; i < signatures_.size(); ++i) {
    const std::vector<GufuncParam>& sig = signatures_[i];
    const std::string where = "signature " + signature_string(i) + " of the gufunc " + layout_string(layout_) + ": ";
    if (sig.size() != operands)
      throw BadArgument(where + "it has " + std::to_string(sig.size()) + " parameters and the layout has " +
                        std::to_string(operands) + " operands");
    for (size_t k = 0; k < operands; ++k) {
      const auto& core = k < nin ? layout_.inputs[k] : layout_.outputs[k - nin];
      const int ndim = sig[k].ndim;
      if (ndim == GufuncParam::kScalar && k >= nin)
        throw BadArgument(where + ordinal_operand(k, nin) +
                          " is a number; outputs are arrays, which the function writes");
      if (ndim == GufuncParam::kScalar && !core.empty())
        throw BadValue(where + ordinal_operand(k, nin) + " is a number where the layout gives it the core dimensions " +
                       dims_string(core));
      if (ndim != GufuncParam::kScalar && ndim != static_cast<int>(core.size()) && !(core.empty() && ndim == 1))
        throw BadArgument(where + ordinal_operand(k, nin) + " is an array of " + std::to_string(ndim) +
                          " dimensions where the layout gives it " + std::to_string(core.size()) + ", " +
                          dims_string(core));
    }
  }
}

std::string Gufunc::signature_string(size_t index) const {
  const std::vector<GufuncParam>& sig = signatures_[index];
  std::string out = "(";
  for (size_t k = 0; k < sig.size(); ++k) {
    out += std::string(k ? ", " : "") + info(sig[k].dtype).name;
    if (sig[k].ndim != GufuncParam::kScalar) {
      out += "[";
      for (int d = 0; d < sig[k].ndim; ++d) out += d ? ", :" : ":";
      out += "]";
    }
  }
  return out + ")";
}

size_t Gufunc::choose(const std::vector<DType>& inputs) const {
  if (inputs.size() != nin())
    throw BadArgument("the gufunc " + layout_string(layout_) + " takes " + std::to_string(nin()) + " inputs, not " +
                      std::to_string(inputs.size()));
  auto matches = [&](auto&& accepts) {
    for (size_t i = 0; i < signatures_.size(); ++i) {
      bool all = true;
      for (size_t k = 0; k < inputs.size() && all; ++k) all = accepts(signatures_[i][k].dtype, inputs[k]);
      if (all) return i;
    }
    return signatures_.size();
  };
  size_t found = matches([](DType takes, DType given) { return takes == given; });
  if (found == signatures_.size())
    found = matches([](DType takes, DType given) { return can_cast_safe(takes, given); });
  if (found < signatures_.size()) return found;
  std::string given, known;
  for (size_t k = 0; k < inputs.size(); ++k) given += std::string(k ? ", " : "") + info(inputs[k]).name;
  for (size_t i = 0; i < signatures_.size(); ++i) known += std::string(i ? "; " : "") + signature_string(i);
  throw BadArgument("no signature of the gufunc " + layout_string(layout_) + " takes inputs of dtypes (" + given +
                    "); its signatures: " + known);
}

GufuncShapes Gufunc::shapes(const std::vector<Shape>& inputs) const {
  const std::string layout = layout_string(layout_);
  if (inputs.size() != nin())
    throw BadArgument("the gufunc " + layout + " takes " + std::to_string(nin()) + " inputs, not " +
                      std::to_string(inputs.size()));
  std::map<std::string, std::pair<int64_t, size_t>> bound;  // a core dimension's length, and the input it is from
  std::vector<Shape> loops;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Shape& shape = inputs[k];
    const auto& core = layout_.inputs[k];
    if (shape.size() < core.size())
      throw BadValue("input " + std::to_string(k) + " of the gufunc " + layout + " has shape " + shape_string(shape) +
                     ", fewer dimensions than its core dimensions " + dims_string(core));
    const size_t loop_rank = shape.size() - core.size();
    loops.emplace_back(shape.begin(), shape.begin() + static_cast<std::ptrdiff_t>(loop_rank));
    for (size_t j = 0; j < core.size(); ++j) {
      const int64_t length = shape[loop_rank + j];
      const auto [it, fresh] = bound.emplace(core[j], std::make_pair(length, k));
      if (!fresh && it->second.first != length)
        throw BadValue("the gufunc " + layout + " has inputs of shapes " + shape_string(inputs[it->second.second]) +
                       " (input " + std::to_string(it->second.second) + ") and " + shape_string(shape) + " (input " +
                       std::to_string(k) + "), which disagree on its core dimension " + core[j] + ": " +
                       std::to_string(it->second.first) + " and " + std::to_string(length));
    }
  }
  GufuncShapes out;
  try {
    out.loop = broadcast_shapes(loops);
  } catch (const BadValue&) {
    std::string listed;
    for (size_t k = 0; k < loops.size(); ++k) listed += (k ? " " : "") + shape_string(loops[k]);
    throw BadValue("the gufunc " + layout + " has inputs whose loop dimensions (those before the core dimensions) "
                   "do not broadcast together: " + listed);
  }
  for (const auto& core : layout_.outputs) {
    Shape shape = out.loop;
    for (const std::string& d : core) shape.push_back(bound.at(d).first);
    checked_size(shape);
    out.outputs.push_back(std::move(shape));
  }
  return out;
}

GufuncLaunch Gufunc::prepare(size_t index, const std::vector<Array>& inputs,
                             const std::vector<std::optional<Array>>& outputs) const {
  const std::vector<GufuncParam>& sig = signature(index);
  const std::string layout = layout_string(layout_);
  if (outputs.size() != nout())
    throw BadArgument("the gufunc " + layout + " has " + std::to_string(nout()) + " outputs, not " +
                      std::to_string(outputs.size()));
  std::vector<Shape> input_shapes;
  for (const Array& a : inputs) input_shapes.push_back(a.shape());
  const GufuncShapes shapes = this->shapes(input_shapes);
  const int device = inputs.front().device();
  auto check_device = [&](const Array& a, size_t k) {
    if (a.device() != device)
      throw BadValue("the gufunc " + layout + " has operands on different devices: input 0 on device " +
                     std::to_string(device) + ", " + ordinal_operand(k, nin()) + " on device " +
                     std::to_string(a.device()));
  };
  for (size_t k = 0; k < inputs.size(); ++k) {
    check_device(inputs[k], k);
    if (inputs[k].dtype() != sig[k].dtype)
      throw BadArgument("input " + std::to_string(k) + " of the gufunc " + layout + " is a device array of " +
                        info(inputs[k].dtype()).name + " where its signature " + signature_string(index) + " takes " +
                        info(sig[k].dtype).name + ": a device array is not converted (a Numba device array does not "
                        "support .astype()); convert it first");
  }

  GufuncLaunch launch;
  launch.loop = shapes.loop.empty() ? Shape{1} : shapes.loop;
  launch.count = checked_size(launch.loop);
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Shape target = concatenated(launch.loop, core_of(inputs[k].shape(), layout_.inputs[k].size()));
    launch.operands.push_back(inputs[k].view(broadcast_layout(inputs[k].layout(), target)));
  }
  for (size_t k = 0; k < outputs.size(); ++k) {
    const DType dtype = sig[nin() + k].dtype;
    const Shape& shape = shapes.outputs[k];
    Array out = outputs[k] ? *outputs[k] : Array::empty(shape, dtype, device);
    if (outputs[k]) {
      check_device(out, nin() + k);
      if (out.dtype() != dtype)
        throw BadArgument("output " + std::to_string(k) + " of the gufunc " + layout + " is an array of " +
                          info(out.dtype()).name + " where its signature " + signature_string(index) + " makes " +
                          info(dtype).name);
      if (!equal_but_leading_ones(out.shape(), shape))
        throw BadValue("output " + std::to_string(k) + " of the gufunc " + layout + " has shape " +
                       shape_string(out.shape()) + " where the result has shape " + shape_string(shape));
    }
    const Shape target = concatenated(launch.loop, core_of(shape, layout_.outputs[k].size()));
    launch.operands.push_back(out.view(broadcast_layout(without_leading_ones(out.layout()), target)));
    launch.outputs.push_back(std::move(out));
  }
  return launch;
}

std::string Gufunc::kernel_source(size_t index, size_t loop_rank, const std::string& name) const {
  const std::vector<GufuncParam>& sig = signature(index);
  if (loop_rank == 0) throw BadValue("a gufunc kernel has at least one loop dimension");
  std::string params, indices, args;
  for (size_t k = 0; k < sig.size(); ++k) params += ", arg" + std::to_string(k);
  for (size_t d = 0; d < loop_rank; ++d) indices += (d ? ", i" : "i") + std::to_string(d);
  std::string text = "def " + name + "(n, loop" + params + "):\n    t = jiasu.grid(1)\n    if t < n:\n";
  if (loop_rank == 1) {
    text += "        i0 = t\n";
  } else {  // the loop is in C order: the last index varies fastest
    text += "        k = t\n";
    for (size_t d = loop_rank - 1; d > 0; --d) {
      const std::string dim = "loop[" + std::to_string(d) + "]";
      text += "        i" + std::to_string(d) + " = k % " + dim + "\n";
      text += d > 1 ? "        k = k // " + dim + "\n" : "        i0 = k // " + dim + "\n";
    }
  }
  const std::string last = "i" + std::to_string(loop_rank - 1);
  for (size_t k = 0; k < sig.size(); ++k) {
    const auto& core = k < nin() ? layout_.inputs[k] : layout_.outputs[k - nin()];
    // A 1-D parameter of core () gets the 1-element slice at its index, which the function reads or writes as x[0].
    const bool cell = core.empty() && sig[k].ndim == 1;
    args += std::string(k ? ", " : "") + "arg" + std::to_string(k) + "[" + indices +
            (cell ? ":" + last + " + 1" : "") + "]";
  }
  return text + "        core(" + args + ")\n";
}

}  // namespace jiasu::ops
