// The one translation unit that includes cudnn-frontend (see cudnn_graphs.hpp). The frontend runs in its
// dynamic-loading mode: it calls libcudnn through `cudnn_frontend::cudnn_dlhandle`, defined here and set by
// set_library(); the graphs name the device's compute capability, so the frontend never needs the CUDA runtime.
#include "dnn/cudnn_graphs.hpp"

#ifdef JIASU_HAVE_CUDNN_FRONTEND

#include <cudnn_frontend.h>

#include <map>
#include <memory>
#include <mutex>
#include <tuple>

namespace cudnn_frontend {
void* cudnn_dlhandle = nullptr;
}

namespace jiasu::dnn::cudnn {
namespace {

namespace fe = cudnn_frontend;

fe::DataType_t data_type(Type t) {
  switch (t) {
    case Type::Half: return fe::DataType_t::HALF;
    case Type::BFloat16: return fe::DataType_t::BFLOAT16;
    case Type::Float: return fe::DataType_t::FLOAT;
    case Type::Double: return fe::DataType_t::DOUBLE;
  }
  return fe::DataType_t::FLOAT;
}

std::vector<int64_t> vec(const std::array<int64_t, 4>& a) { return {a.begin(), a.end()}; }
std::vector<int64_t> vec(const std::array<int64_t, 2>& a) { return {a.begin(), a.end()}; }

struct Plan {
  std::shared_ptr<fe::graph::Graph> graph;
  std::shared_ptr<fe::graph::Tensor_attributes> x, w, y;
  int64_t workspace = 0;
};

using Key = std::tuple<int, int, int, std::array<int64_t, 4>, std::array<int64_t, 4>, std::array<int64_t, 4>,
                       std::array<int64_t, 4>, std::array<int64_t, 4>, std::array<int64_t, 4>,
                       std::array<int64_t, 8>, std::array<int, 5>>;

Key key_of(const ConvProblem& p) {
  return {static_cast<int>(p.pass), static_cast<int>(p.type), p.device, p.x.dims, p.x.strides, p.w.dims,
          p.w.strides, p.y.dims, p.y.strides,
          {p.stride[0], p.stride[1], p.dilation[0], p.dilation[1], p.pad_before[0], p.pad_before[1], p.pad_after[0],
           p.pad_after[1]},
          {p.allow_tf32, p.sm_version, p.alignment[0], p.alignment[1], p.alignment[2]}};
}

// A failure while a plan is built is cuDNN declining the problem (the caller takes another path); while it runs,
// a fault.
void check(fe::error_t status, const char* step, bool building = true) {
  if (status.is_good()) return;
  const std::string message = std::string("cuDNN ") + step + ": " + status.get_message();
  if (building) throw Unsupported(message);
  throw Failure(message);
}

std::shared_ptr<fe::graph::Tensor_attributes> tensor(fe::graph::Graph& g, const char* name, const Tensor& t) {
  return g.tensor(fe::graph::Tensor_attributes().set_name(name).set_dim(vec(t.dims)).set_stride(vec(t.strides)));
}

std::unique_ptr<Plan> build(const ConvProblem& p, void* handle) {
  auto plan = std::make_unique<Plan>();
  plan->graph = std::make_shared<fe::graph::Graph>();
  fe::graph::Graph& g = *plan->graph;
  const fe::DataType_t io = data_type(p.type);
  const fe::DataType_t compute = p.type == Type::Double ? fe::DataType_t::DOUBLE : fe::DataType_t::FLOAT;
  g.set_io_data_type(io).set_intermediate_data_type(compute).set_compute_data_type(compute);
  g.set_sm_version(p.sm_version);
  const auto stride = vec(p.stride), dilation = vec(p.dilation), before = vec(p.pad_before), after = vec(p.pad_after);
  switch (p.pass) {
    case Pass::Forward: {
      plan->x = tensor(g, "x", p.x);
      plan->w = tensor(g, "w", p.w);
      plan->y = g.conv_fprop(plan->x, plan->w, fe::graph::Conv_fprop_attributes().set_pre_padding(before)
                                                   .set_post_padding(after).set_stride(stride).set_dilation(dilation));
      plan->y->set_output(true).set_dim(vec(p.y.dims)).set_stride(vec(p.y.strides));
      break;
    }
    case Pass::DataGradient: {
      plan->y = tensor(g, "dy", p.y);
      plan->w = tensor(g, "w", p.w);
      plan->x = g.conv_dgrad(plan->y, plan->w, fe::graph::Conv_dgrad_attributes().set_pre_padding(before)
                                                   .set_post_padding(after).set_stride(stride).set_dilation(dilation));
      plan->x->set_output(true).set_dim(vec(p.x.dims)).set_stride(vec(p.x.strides));
      break;
    }
    case Pass::WeightGradient: {
      plan->y = tensor(g, "dy", p.y);
      plan->x = tensor(g, "x", p.x);
      plan->w = g.conv_wgrad(plan->y, plan->x, fe::graph::Conv_wgrad_attributes().set_pre_padding(before)
                                                   .set_post_padding(after).set_stride(stride).set_dilation(dilation));
      plan->w->set_output(true).set_dim(vec(p.w.dims)).set_stride(vec(p.w.strides));
      break;
    }
  }
  auto cudnn = static_cast<cudnnHandle_t>(handle);
  check(g.validate(), "graph validation");
  check(g.build_operation_graph(cudnn), "operation graph");
  check(g.create_execution_plans({fe::HeurMode_t::A, fe::HeurMode_t::FALLBACK}), "heuristics");
  // float32 as float32, unless TF32 is allowed (PyTorch's rule): no tensor-core engine, which would round to TF32.
  if (p.type == Type::Float && !p.allow_tf32) g.deselect_numeric_notes({fe::NumericalNote_t::TENSOR_CORE});
  check(g.check_support(cudnn), "support check");
  check(g.build_plans(fe::BuildPlanPolicy_t::HEURISTICS_CHOICE), "plan build");
  check(g.get_workspace_size(plan->workspace), "workspace size");
  return plan;
}

std::mutex& plans_mutex() {
  static auto* m = new std::mutex;  // never destroyed: plans may be used while statics are torn down
  return *m;
}
std::map<Key, std::unique_ptr<Plan>>& plans() {
  static auto* p = new std::map<Key, std::unique_ptr<Plan>>;
  return *p;
}

const Plan& plan_for(const ConvProblem& p, void* handle) {
  std::lock_guard<std::mutex> lock(plans_mutex());
  std::unique_ptr<Plan>& slot = plans()[key_of(p)];
  if (!slot) {
    try {
      slot = build(p, handle);
    } catch (const std::runtime_error&) {
      plans().erase(key_of(p));
      throw;
    }
  }
  return *slot;
}

}  // namespace

bool built() { return true; }

std::string frontend_version() {
  return std::to_string(CUDNN_FRONTEND_MAJOR_VERSION) + "." + std::to_string(CUDNN_FRONTEND_MINOR_VERSION) + "." +
         std::to_string(CUDNN_FRONTEND_PATCH_VERSION);
}

void set_library(void* dlhandle) { fe::cudnn_dlhandle = dlhandle; }

void* create_handle() {
  cudnnHandle_t handle = nullptr;
  const cudnnStatus_t status = fe::detail::create_handle(&handle);
  if (status != CUDNN_STATUS_SUCCESS)
    throw Failure(std::string("cudnnCreate failed: ") + fe::detail::get_error_string(status));
  return handle;
}

void set_stream(void* handle, void* stream) {
  const cudnnStatus_t status = fe::detail::set_stream(static_cast<cudnnHandle_t>(handle), static_cast<cudaStream_t>(stream));
  if (status != CUDNN_STATUS_SUCCESS)
    throw Failure(std::string("cudnnSetStream failed: ") + fe::detail::get_error_string(status));
}

size_t prepare(const ConvProblem& problem, void* handle) {
  return static_cast<size_t>(plan_for(problem, handle).workspace);
}

void execute(const ConvProblem& problem, void* handle, void* x, void* w, void* y, void* workspace) {
  const Plan& plan = plan_for(problem, handle);
  std::unordered_map<std::shared_ptr<fe::graph::Tensor_attributes>, void*> pointers = {
      {plan.x, x}, {plan.w, w}, {plan.y, y}};
  check(plan.graph->execute(static_cast<cudnnHandle_t>(handle), pointers, workspace), "execution", false);
}

}  // namespace jiasu::dnn::cudnn

#else  // built without cudnn-frontend: nothing here is called (built() is false).

namespace jiasu::dnn::cudnn {

bool built() { return false; }
std::string frontend_version() { return ""; }
void set_library(void*) {}
void* create_handle() { throw Unsupported("jiasu was built without cudnn-frontend"); }
void set_stream(void*, void*) {}
size_t prepare(const ConvProblem&, void*) { throw Unsupported("jiasu was built without cudnn-frontend"); }
void execute(const ConvProblem&, void*, void*, void*, void*, void*) {
  throw Unsupported("jiasu was built without cudnn-frontend");
}

}  // namespace jiasu::dnn::cudnn

#endif
