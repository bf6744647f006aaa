// The one translation unit that includes cudnn-frontend (see cudnn_graphs.hpp). The frontend runs in its
// dynamic-loading mode: it calls libcudnn through `cudnn_frontend::cudnn_dlhandle`, defined here and set by
// set_library(); the graphs name the device's compute capability, so the frontend never needs the CUDA runtime.
#include "dnn/cudnn_graphs.hpp"

#ifdef JIASU_HAVE_CUDNN_FRONTEND

#include <cudnn_frontend.h>

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

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

// Benchmark mode skips candidates that need more workspace than this: the pool would have to hold it for
// every run of the problem.
constexpr int64_t kCandidateWorkspaceCap = int64_t{1} << 30;

using Pointers = std::unordered_map<std::shared_ptr<fe::graph::Tensor_attributes>, void*>;

struct Candidate {
  int64_t index = 0, workspace = 0;
};

struct Plan {
  std::shared_ptr<fe::graph::Graph> graph;
  std::shared_ptr<fe::graph::Tensor_attributes> x, w, y;
  std::mutex choice;                  // guards the fields below: one problem's passes may run on several threads
  int64_t workspace = 0;              // what the next run needs; until a candidate is chosen, the largest one's
  std::vector<Candidate> candidates;  // benchmark mode: the plans to time on the first run (then cleared)
  int64_t chosen = -1;                // the plan that runs; -1: the heuristic's (the graph's own candidate)
  std::string declined;               // benchmark mode: why no candidate ran (every later run is declined too)
};

using Key = std::tuple<int, int, int, std::array<int64_t, 4>, std::array<int64_t, 4>, std::array<int64_t, 4>,
                       std::array<int64_t, 4>, std::array<int64_t, 4>, std::array<int64_t, 4>,
                       std::array<int64_t, 8>, std::array<int, 6>>;

Key key_of(const ConvProblem& p) {
  return {static_cast<int>(p.pass), static_cast<int>(p.type), p.device, p.x.dims, p.x.strides, p.w.dims,
          p.w.strides, p.y.dims, p.y.strides,
          {p.stride[0], p.stride[1], p.dilation[0], p.dilation[1], p.pad_before[0], p.pad_before[1], p.pad_after[0],
           p.pad_after[1]},
          {p.allow_tf32, p.benchmark, p.sm_version, p.alignment[0], p.alignment[1], p.alignment[2]}};
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
  if (!p.benchmark) {
    check(g.build_plans(fe::BuildPlanPolicy_t::HEURISTICS_CHOICE), "plan build");
    check(g.get_workspace_size(plan->workspace), "workspace size");
    return plan;
  }
  check(g.build_plans(fe::BuildPlanPolicy_t::ALL), "plan build");
  for (int64_t i = 0; i < g.get_execution_plan_count(); ++i) {
    int64_t bytes = 0;
    // A configuration that did not build has no workspace size.
    if (g.get_workspace_size_plan_at_index(i, bytes).is_bad() || bytes > kCandidateWorkspaceCap) continue;
    plan->candidates.push_back({i, bytes});
    plan->workspace = std::max(plan->workspace, bytes);
  }
  if (plan->candidates.empty())
    throw Unsupported("cuDNN: every plan that built needs more than " + std::to_string(kCandidateWorkspaceCap >> 20) +
                      " MiB of workspace");
  return plan;
}

// Benchmark mode's first run: each candidate on the caller's buffers, the fastest kept. The plan changes only
// at the end, so an exception from the timer (Ctrl-C, a fault) leaves it to be timed again.
void choose_fastest(Plan& plan, cudnnHandle_t cudnn, Pointers& pointers, void* workspace, const GpuTimer& timer) {
  const Candidate* fastest = nullptr;
  double fastest_ms = std::numeric_limits<double>::infinity();
  std::string last_failure;
  for (const Candidate& candidate : plan.candidates) {
    fe::error_t status;
    const double ms = timer([&] {
      if (status.is_good()) status = plan.graph->execute_plan_at_index(cudnn, pointers, workspace, candidate.index);
    });
    if (status.is_bad()) {
      last_failure = status.get_message();
      continue;
    }
    if (ms < fastest_ms) {
      fastest_ms = ms;
      fastest = &candidate;
    }
  }
  if (fastest) {
    plan.chosen = fastest->index;
    plan.workspace = fastest->workspace;
  } else {
    plan.declined = "cuDNN: no candidate plan ran (the last failure: " + last_failure + ")";
  }
  plan.candidates.clear();
}

std::mutex& plans_mutex() {
  static auto* m = new std::mutex;  // never destroyed: plans may be used while statics are torn down
  return *m;
}
std::map<Key, std::unique_ptr<Plan>>& plans() {
  static auto* p = new std::map<Key, std::unique_ptr<Plan>>;
  return *p;
}

Plan& plan_for(const ConvProblem& p, void* handle) {
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
  Plan& plan = plan_for(problem, handle);
  std::lock_guard<std::mutex> lock(plan.choice);
  if (!plan.declined.empty()) throw Unsupported(plan.declined);
  return static_cast<size_t>(plan.workspace);
}

void execute(const ConvProblem& problem, void* handle, void* x, void* w, void* y, void* workspace,
             const GpuTimer& timer) {
  Plan& plan = plan_for(problem, handle);
  Pointers pointers = {{plan.x, x}, {plan.w, w}, {plan.y, y}};
  const auto cudnn = static_cast<cudnnHandle_t>(handle);
  std::lock_guard<std::mutex> lock(plan.choice);
  if (!plan.candidates.empty()) choose_fastest(plan, cudnn, pointers, workspace, timer);
  if (!plan.declined.empty()) throw Unsupported(plan.declined);
  // Also after timing: the buffers hold the last candidate's result, which need not be the chosen plan's.
  if (plan.chosen < 0)
    check(plan.graph->execute(cudnn, pointers, workspace), "execution", false);
  else
    check(plan.graph->execute_plan_at_index(cudnn, pointers, workspace, plan.chosen), "execution", false);
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
void execute(const ConvProblem&, void*, void*, void*, void*, void*, const GpuTimer&) {
  throw Unsupported("jiasu was built without cudnn-frontend");
}

}  // namespace jiasu::dnn::cudnn

#endif
