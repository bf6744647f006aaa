// emit_host(): a typed Program becomes one host C++17 translation unit, written by the same
// FunctionEmitter as emit_cuda() with the host Target: every function takes the thread's
// `const jiasu::HostThread& jiasu_thread` first (thread and block indices are read from it), the kernel
// body becomes a function called once per thread (so `return` ends that thread only), and the extern "C"
// entry point runs a range of blocks, thread after thread.
//
// Without a block scheduler, threads of a block cannot wait for each other: kernels that use barriers,
// shared arrays or warp operations are refused for now.
#include "emit/cuda_emitter.hpp"
#include "support/error.hpp"

namespace jiasu::emit {
namespace cuda {
namespace {

using fe::BuiltinId;

const char* axis_name(int axis) { return axis == 0 ? "x" : axis == 1 ? "y" : "z"; }

// A builtin needs the block scheduler when threads of a block must run together for it.
bool needs_scheduler(BuiltinId id) {
  switch (id) {
    case BuiltinId::SyncThreads: case BuiltinId::SyncThreadsCount: case BuiltinId::SyncThreadsAnd:
    case BuiltinId::SyncThreadsOr: case BuiltinId::SyncWarp: case BuiltinId::SharedArray:
    case BuiltinId::ShflSync: case BuiltinId::ShflUpSync: case BuiltinId::ShflDownSync: case BuiltinId::ShflXorSync:
    case BuiltinId::BallotSync: case BuiltinId::AnySync: case BuiltinId::AllSync: case BuiltinId::ActiveMask:
    case BuiltinId::LaneId:
      return true;
    default:
      return false;
  }
}

std::string host_spelling(const fe::Builtin& b) {
  if (b.host[0]) return b.host;
  const std::string prefix = "jiasu_thread.";
  switch (b.id) {
    case BuiltinId::ThreadIdxX: return prefix + "threadIdx.x";
    case BuiltinId::ThreadIdxY: return prefix + "threadIdx.y";
    case BuiltinId::ThreadIdxZ: return prefix + "threadIdx.z";
    case BuiltinId::BlockIdxX: return prefix + "blockIdx.x";
    case BuiltinId::BlockIdxY: return prefix + "blockIdx.y";
    case BuiltinId::BlockIdxZ: return prefix + "blockIdx.z";
    case BuiltinId::BlockDimX: return prefix + "blockDim.x";
    case BuiltinId::BlockDimY: return prefix + "blockDim.y";
    case BuiltinId::BlockDimZ: return prefix + "blockDim.z";
    case BuiltinId::GridDimX: return prefix + "gridDim.x";
    case BuiltinId::GridDimY: return prefix + "gridDim.y";
    case BuiltinId::GridDimZ: return prefix + "gridDim.z";
    case BuiltinId::WarpSize: return "32LL";
    case BuiltinId::ThreadFence: case BuiltinId::ThreadFenceBlock: case BuiltinId::ThreadFenceSys:
      return "jiasu::threadfence";
    default:
      break;
  }
  switch (b.rule) {  // the host part of the runtime header has these under their device names
    case fe::BuiltinRule::Atomic: case fe::BuiltinRule::AtomicInt: case fe::BuiltinRule::AtomicUnsigned:
    case fe::BuiltinRule::AtomicCas: case fe::BuiltinRule::BitCount: case fe::BuiltinRule::SameInteger1:
      return b.cuda;
    default:
      return "";
  }
}

std::string host_grid_axis(bool grid, int axis) {
  std::string a = axis_name(axis), t = "jiasu_thread.";
  if (grid) return "(" + t + "blockIdx." + a + " * " + t + "blockDim." + a + " + " + t + "threadIdx." + a + ")";
  return "(" + t + "blockDim." + a + " * " + t + "gridDim." + a + ")";
}

const Target& host_target() {
  static const Target target{"host C++", "static void ", "jiasu_kernel_body", "static ",
                             "const jiasu::HostThread& jiasu_thread", "jiasu_thread", host_spelling, host_grid_axis};
  return target;
}

// Throws BadValue for the first use of a builtin that needs the block scheduler.
void refuse_scheduled(const fe::Expr& e, const fe::Function& fn) {
  if (e.meaning == fe::Meaning::Builtin && e.builtin >= 0 &&
      (e.kind == fe::ExprKind::Call || e.kind == fe::ExprKind::Attribute)) {
    const fe::Builtin& b = fe::builtin(e.builtin);
    if (needs_scheduler(b.id))
      throw BadValue("the CPU backend cannot run " + fn.name + "(): " + b.path + " (line " + std::to_string(e.loc.line) +
                     ") needs the block scheduler (not available yet)");
  }
  for (const fe::ExprPtr& arg : e.args)
    if (arg) refuse_scheduled(*arg, fn);
}

void refuse_scheduled(const std::vector<fe::StmtPtr>& body, const fe::Function& fn) {
  for (const fe::StmtPtr& s : body) {
    if (s->value) refuse_scheduled(*s->value, fn);
    if (s->test) refuse_scheduled(*s->test, fn);
    for (const fe::ExprPtr& target : s->targets)
      if (target) refuse_scheduled(*target, fn);
    refuse_scheduled(s->body, fn);
    refuse_scheduled(s->orelse, fn);
  }
}

// The extern "C" entry point: unpacks the parameters, then runs each block of the range, each thread in
// turn (x fastest, as CUDA numbers them).
std::string entry_point(const fe::Function& kernel, const std::string& name, FunctionEmitter& types) {
  std::string out = "extern \"C\" void " + name + "(const jiasu::HostLaunch* launch, void* const* params) {\n";
  std::string args = "thread";
  for (size_t i = 0; i < kernel.params.size(); ++i) {
    const std::string p = "p" + std::to_string(i), type = "jiasu_param" + std::to_string(i) + "_t";
    out += "  using " + type + " = " + types.param_type(i) + ";\n";
    out += "  const " + type + " " + p + " = *static_cast<const " + type + "*>(params[" + std::to_string(i) + "]);\n";
    args += ", " + p;
  }
  out +=
      "  jiasu::HostThread thread{};\n"
      "  thread.gridDim = {launch->grid[0], launch->grid[1], launch->grid[2]};\n"
      "  thread.blockDim = {launch->block[0], launch->block[1], launch->block[2]};\n"
      "  for (long long b = launch->block_begin; b < launch->block_end; ++b) {\n"
      "    thread.blockIdx = {b % launch->grid[0], b / launch->grid[0] % launch->grid[1], "
      "b / (launch->grid[0] * launch->grid[1])};\n"
      "    for (long long z = 0; z < launch->block[2]; ++z)\n"
      "      for (long long y = 0; y < launch->block[1]; ++y)\n"
      "        for (long long x = 0; x < launch->block[0]; ++x) {\n"
      "          thread.threadIdx = {x, y, z};\n"
      "          jiasu_kernel_body(" + args + ");\n"
      "        }\n"
      "  }\n"
      "}\n";
  return out;
}

}  // namespace
}  // namespace cuda

EmittedKernel emit_host(const fe::Program& program) {
  for (const auto& fn : program.functions) cuda::refuse_scheduled(fn->body, *fn);
  cuda::TupleStructs tuples;
  std::string functions;
  for (size_t i = 0; i < program.functions.size(); ++i)
    functions += "\n" + cuda::FunctionEmitter(cuda::host_target(), *program.functions[i], program.sources[i]->source, tuples).emit();
  const fe::Function& kernel = program.kernel();
  EmittedKernel out;
  out.entry_name = kernel.mangled_name.empty() ? cuda::user_name(kernel.name) : kernel.mangled_name;
  cuda::FunctionEmitter types(cuda::host_target(), kernel, program.sources.back()->source, tuples);
  out.source = cuda_runtime_header() + "\n// ---- generated by jiasu (host) from " + program.sources.back()->source.file +
               ": kernel " + kernel.name + "\n" + tuples.definitions() + functions + "\n" +
               cuda::entry_point(kernel, out.entry_name, types);
  return out;
}

}  // namespace jiasu::emit
