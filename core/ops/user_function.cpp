// @jiasu.vectorize's loops (one per dtype signature and backend) and @jiasu.reduce's fold.
#include "ops/user_function.hpp"

#include <atomic>
#include <cctype>

#include "array/layout.hpp"
#include "emit/emit.hpp"
#include "frontend/check.hpp"
#include "ops/join.hpp"
#include "toolchain/disk_cache.hpp"
#include "toolchain/host_compiler.hpp"

namespace jiasu::ops {
namespace {

constexpr const char* kHostLoopName = "jiasu_user_loop";

// The ids of custom loops are the GPU kernel cache's top key bits (elementwise_cuda.cpp).
uint64_t next_custom_id() {
  static std::atomic<uint64_t> next{1};
  const uint64_t id = next++;
  if (id >= (uint64_t(1) << kCustomLoopIdBits))
    throw BadValue("jiasu: more than " + std::to_string((1 << kCustomLoopIdBits) - 1) +
                   " signatures of @jiasu.vectorize functions in one process");
  return id;
}

// The CPU backend's inner loop around the emitted host function `fn`: the elementwise engine's CpuLoop
// (data[0] the output, data[1..] the inputs, byte strides, n elements), with a contiguous case the compiler
// vectorises.
std::string host_loop(const emit::EmittedFunction& fn, const DType* dtypes, int count) {
  std::string types = "  using R = " + std::string(info(fn.result).c_type) + ";\n";
  std::string contiguous = "strides[0] == sizeof(R)", direct, strided;
  for (int i = 0; i < count; ++i) {
    const std::string n = std::to_string(i), k = std::to_string(i + 1);
    types += "  using A" + n + " = " + info(dtypes[i]).c_type + ";\n";
    contiguous += " && strides[" + k + "] == sizeof(A" + n + ")";
    direct += std::string(i ? ", " : "") + "reinterpret_cast<const A" + n + "*>(data[" + k + "])[i]";
    strided += std::string(i ? ", " : "") + "*reinterpret_cast<const A" + n + "*>(data[" + k + "] + i * strides[" + k +
               "])";
  }
  return "\nextern \"C\" void " + std::string(kHostLoopName) +
         "(char* const* data, const long long* strides, long long n) {\n" + types +
         "  const jiasu::HostThread thread{};\n"
         "  if (" + contiguous + ") {\n"
         "    R* out = reinterpret_cast<R*>(data[0]);\n"
         "    for (long long i = 0; i < n; ++i) out[i] = jiasu::cast<R>(" + fn.name + "(thread, " + direct + "));\n"
         "    return;\n  }\n"
         "  for (long long i = 0; i < n; ++i)\n"
         "    *reinterpret_cast<R*>(data[0] + i * strides[0]) = jiasu::cast<R>(" + fn.name + "(thread, " + strided + "));\n"
         "}\n";
}

std::string file_stem(const std::string& name) {
  std::string stem = "jiasu_vectorize_";
  for (char c : name) stem += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  return stem;
}

bool on_gpu(const Operand* inputs, int count, const Array* out) {
  if (out) return !out->on_host();
  for (int i = 0; i < count; ++i)
    if (inputs[i].array) return !inputs[i].array->on_host();
  throw BadArgument("jiasu: a @jiasu.vectorize function needs at least one array operand");
}

}  // namespace

UserFunction::UserFunction(std::shared_ptr<const fe::FunctionSource> source, std::string name, int arity)
    : source_(std::move(source)), name_(std::move(name)), arity_(arity) {
  if (arity_ < 1 || arity_ > 3)
    throw BadArgument("@jiasu.vectorize takes functions of 1 to 3 parameters; " + name_ + " has " +
                      std::to_string(arity_));
}

UserFunction::Compiled& UserFunction::compiled(const DType* dtypes, int count, bool cuda) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::unique_ptr<Compiled>& slot = loops_[{std::vector<DType>(dtypes, dtypes + count), cuda}];
  if (slot) return *slot;
  std::vector<fe::Type> signature;
  for (int i = 0; i < count; ++i) signature.push_back(fe::Type::scalar(dtypes[i]));
  const fe::Program program = fe::check_scalar_function(source_, signature);
  auto made = std::make_unique<Compiled>();
  CustomLoop& loop = made->loop;
  loop.name = name_;
  loop.arity = count;
  for (int i = 0; i < count; ++i) loop.loop[i] = dtypes[i];
  if (cuda) {
    const emit::EmittedFunction fn = emit::emit_cuda_function(program);
    loop.result = fn.result;
    loop.cuda_definitions = fn.definitions;
    loop.cuda_function = fn.name;
    loop.id = next_custom_id();
  } else {
    const emit::EmittedFunction fn = emit::emit_host_function(program);
    loop.result = fn.result;
    made->host_source = emit::host_runtime_header() + fn.definitions + host_loop(fn, dtypes, count);
    HostCompileRequest request;
    request.source = made->host_source;
    request.name = file_stem(name_);
    made->library = compile_host(request, &compile_cache());
    loop.cpu_loop = reinterpret_cast<CustomLoop::CpuLoop>(made->library->symbol(kHostLoopName));
  }
  slot = std::move(made);
  return *slot;
}

std::string UserFunction::source_for(const std::vector<DType>& dtypes, bool cuda) {
  if (static_cast<int>(dtypes.size()) != arity_)
    throw BadArgument(name_ + " takes " + std::to_string(arity_) + " arguments, not " + std::to_string(dtypes.size()));
  if (!cuda) return compiled(dtypes.data(), arity_, false).host_source;
  // Without compiling for a device: the definitions the kernels include.
  std::vector<fe::Type> signature;
  for (DType d : dtypes) signature.push_back(fe::Type::scalar(d));
  return emit::emit_cuda_function(fe::check_scalar_function(source_, signature)).definitions;
}

const CustomLoop& UserFunction::loop_for(const Operand* inputs, int count, const Array* out) {
  if (count != arity_)
    throw BadArgument(name_ + "() takes " + std::to_string(arity_) + " argument" + (arity_ == 1 ? "" : "s") + " (" +
                      std::to_string(count) + " given)");
  DType dtypes[3];
  input_dtypes(inputs, count, dtypes);
  return compiled(dtypes, count, on_gpu(inputs, count, out)).loop;
}

Array UserFunction::call(const Operand* inputs, int count, const Array* out) {
  return apply(loop_for(inputs, count, out), inputs, count, out);
}

DType UserFunction::fold_dtype(DType dtype, bool cuda) {
  DType t = dtype;
  for (int step = 0; step < kDTypeCount; ++step) {  // promotion only climbs: it settles within kDTypeCount steps
    const DType pair[2] = {t, t};
    const DType r = compiled(pair, 2, cuda).loop.result;
    if (r == t) return t;
    t = r;
  }
  throw BadArgument(name_ + ": its result type never settles (f(t, t) changes type each time), so it cannot reduce");
}

const CustomLoop& UserFunction::init_loop(const Scalar& init, DType folded, bool cuda) {
  Operand in[2];
  in[0].scalar = init;
  in[1].scalar.dtype = folded;  // typed as an array of the fold's type would be
  DType dtypes[2];
  input_dtypes(in, 2, dtypes);
  return compiled(dtypes, 2, cuda).loop;
}

DType UserFunction::prepare_reduce(DType dtype, bool cuda, const std::optional<Scalar>& init) {
  if (arity_ != 2)
    throw BadArgument("@jiasu.reduce needs a function of two parameters; " + name_ + " has " + std::to_string(arity_));
  const DType folded = fold_dtype(dtype, cuda);
  if (init) init_loop(*init, folded, cuda);
  return folded;
}

// x (kept..., n) of f's settled type: f of neighbouring pairs, level by level, to (kept..., 1).
Array UserFunction::fold_last_axis(Array x) {
  const DType dtypes[2] = {x.dtype(), x.dtype()};
  const CustomLoop& loop = compiled(dtypes, 2, !x.on_host()).loop;
  while (x.shape().back() > 1) {
    const int64_t n = x.shape().back(), half = n / 2, step = x.layout().strides.back();
    Layout left = x.layout();
    left.shape.back() = half;
    left.strides.back() = 2 * step;
    Layout right = left;
    right.offset += step;
    const Array a = x.view(left), b = x.view(right);
    Operand in[2];
    in[0].array = &a;
    in[1].array = &b;
    Shape shape = x.shape();
    shape.back() = half + n % 2;
    Array y = Array::empty(shape, x.dtype(), x.device());
    Layout pairs = y.layout();
    pairs.shape.back() = half;
    const Array into = y.view(pairs);
    apply(loop, in, 2, &into);
    if (n % 2) {  // the last element goes on to the next level as it is
      Layout from = x.layout(), to = y.layout();
      from.offset += (n - 1) * step;
      from.shape.back() = 1;
      to.offset += half * to.strides.back();
      to.shape.back() = 1;
      assign(y.view(to), x.view(from));
    }
    x = y;
  }
  return x;
}

Array UserFunction::reduce(const Array& a, const std::vector<int64_t>& axes, bool keepdims,
                           const std::optional<Scalar>& init) {
  const int64_t nd = a.ndim();
  std::vector<bool> reduced(nd, false);
  for (int64_t axis : normalize_axes(axes, nd)) reduced[axis] = true;
  std::vector<int64_t> order;
  Shape kept, flat;
  int64_t count = 1;
  for (int64_t d = 0; d < nd; ++d)
    if (!reduced[d]) order.push_back(d), kept.push_back(a.shape()[d]);
  for (int64_t d = 0; d < nd; ++d)
    if (reduced[d]) order.push_back(d), count *= a.shape()[d];
  flat = kept;
  flat.push_back(count);
  const bool cuda = !a.on_host();
  const DType folded = prepare_reduce(a.dtype(), cuda, init);
  auto reduced_values = [&] {
    if (count == 0) {
      if (!init) throw BadValue("zero-size array to reduction operation " + name_ + " which has no identity");
      Array empty_result = Array::empty(kept, init_loop(*init, folded, cuda).result, a.device());
      assign(empty_result, *init);
      return empty_result;
    }
    Array lines = reshape(a.view(transpose_layout(a.layout(), order)), flat);
    if (lines.dtype() != folded) lines = astype(lines, folded);
    Array result = fold_last_axis(lines).reshape(kept);
    if (result.memory() == a.memory()) result = astype(result, folded);  // one element each: a copy
    if (!init) return result;
    Operand in[2];
    in[0].scalar = *init;
    in[1].array = &result;
    return apply(init_loop(*init, folded, cuda), in, 2, nullptr);
  };
  Array result = reduced_values();
  if (!keepdims) return result;
  Shape with_ones = a.shape();
  for (int64_t d = 0; d < nd; ++d)
    if (reduced[d]) with_ones[d] = 1;
  return result.reshape(with_ones);
}

}  // namespace jiasu::ops
