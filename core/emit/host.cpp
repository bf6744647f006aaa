// emit_host(): a typed Program becomes one host C++17 translation unit, written by the same
// FunctionEmitter as emit_cuda() with the host Target: every function takes the thread's
// `const jiasu::HostThread& jiasu_thread` first (thread and block indices are read from it), the kernel
// body becomes a function called once per thread (so `return` ends that thread only), and the extern "C"
// entry point runs a range of blocks with the runtime header's jiasu::HostBlocks: thread after thread, or,
// when any function of the program has a barrier (decided here, per kernel), as fibers that switch at
// each barrier. Shared arrays are thread_local arrays (the block's, as one OS thread runs one block at a
// time); dynamic shared memory is the launch's shared_bytes.
//
// Warp operations (syncwarp, shuffles, votes, activemask) need warps in the scheduler: refused for now.
#include <stdexcept>

#include "emit/cuda_emitter.hpp"
#include "support/error.hpp"

namespace jiasu::emit {
namespace cuda {
namespace {

using fe::BuiltinId;

const char* axis_name(int axis) { return axis == 0 ? "x" : axis == 1 ? "y" : "z"; }

// A builtin needs warps in the block scheduler (not there yet): the lanes of a warp must run together.
bool needs_scheduler(BuiltinId id) {
  switch (id) {
    case BuiltinId::SyncWarp: case BuiltinId::ShflSync: case BuiltinId::ShflUpSync: case BuiltinId::ShflDownSync:
    case BuiltinId::ShflXorSync:
    case BuiltinId::BallotSync: case BuiltinId::AnySync: case BuiltinId::AllSync: case BuiltinId::ActiveMask:
      return true;
    default:
      return false;
  }
}

// A block barrier: the threads of the block run as fibers.
bool is_barrier(BuiltinId id) {
  switch (id) {
    case BuiltinId::SyncThreads: case BuiltinId::SyncThreadsCount: case BuiltinId::SyncThreadsAnd:
    case BuiltinId::SyncThreadsOr:
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
    case BuiltinId::LaneId:  // the lane of the linear thread index, as CUDA forms warps
      return "((" + prefix + "threadIdx.x + " + prefix + "blockDim.x * (" + prefix + "threadIdx.y + " + prefix +
             "blockDim.y * " + prefix + "threadIdx.z)) % 32LL)";
    case BuiltinId::SyncThreads: return "jiasu::syncthreads";
    case BuiltinId::SyncThreadsCount: return "jiasu::syncthreads_count";
    case BuiltinId::SyncThreadsAnd: return "jiasu::syncthreads_and";
    case BuiltinId::SyncThreadsOr: return "jiasu::syncthreads_or";
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

// Throws BadValue for the first use of a builtin that needs warps; true when the code has a barrier.
bool scan(const fe::Expr& e, const fe::Function& fn) {
  bool barrier = false;
  if (e.meaning == fe::Meaning::Builtin && e.builtin >= 0 &&
      (e.kind == fe::ExprKind::Call || e.kind == fe::ExprKind::Attribute)) {
    const fe::Builtin& b = fe::builtin(e.builtin);
    if (needs_scheduler(b.id))
      throw BadValue("the CPU backend cannot run " + fn.name + "(): " + b.path + " (line " + std::to_string(e.loc.line) +
                     ") needs warps in the block scheduler (not available yet)");
    barrier = is_barrier(b.id);
  }
  for (const fe::ExprPtr& arg : e.args)
    if (arg) barrier |= scan(*arg, fn);
  return barrier;
}

bool scan(const std::vector<fe::StmtPtr>& body, const fe::Function& fn) {
  bool barrier = false;
  for (const fe::StmtPtr& s : body) {
    if (s->value) barrier |= scan(*s->value, fn);
    if (s->test) barrier |= scan(*s->test, fn);
    for (const fe::ExprPtr& target : s->targets)
      if (target) barrier |= scan(*target, fn);
    barrier |= scan(s->body, fn);
    barrier |= scan(s->orelse, fn);
  }
  return barrier;
}

// The host form of dynamic shared memory: the CUDA emitter declares it as an extern __shared__ array.
std::string host_dynamic_shared(std::string code) {
  const std::string cuda = "extern __shared__ __align__(16) unsigned char jiasu_dynamic_shared[];";
  const std::string host = "unsigned char* const jiasu_dynamic_shared = jiasu::dynamic_shared_memory();";
  for (size_t at = code.find(cuda); at != std::string::npos; at = code.find(cuda, at + host.size()))
    code.replace(at, cuda.size(), host);
  if (code.find("extern __shared__") != std::string::npos)
    throw std::logic_error("emit_host: an extern __shared__ declaration the host emitter does not know");
  return code;
}

// The extern "C" entry point: unpacks the parameters, then runs each block of the range with
// jiasu::HostBlocks: thread after thread (x fastest, as CUDA numbers them), or as fibers.
std::string entry_point(const fe::Function& kernel, const std::string& name, FunctionEmitter& types, bool fibers) {
  std::string out = "extern \"C\" void " + name + "(const jiasu::HostLaunch* launch, void* const* params) {\n";
  std::string args = "thread";
  for (size_t i = 0; i < kernel.params.size(); ++i) {
    const std::string p = "p" + std::to_string(i), type = "jiasu_param" + std::to_string(i) + "_t";
    out += "  using " + type + " = " + types.param_type(i) + ";\n";
    out += "  const " + type + " " + p + " = *static_cast<const " + type + "*>(params[" + std::to_string(i) + "]);\n";
    args += ", " + p;
  }
  out += "  auto body = [&](const jiasu::HostThread& thread) { jiasu_kernel_body(" + args + "); };\n"
         "  jiasu::HostBlocks blocks(launch);\n" +
         std::string(fibers ? "  blocks.run_fibers(body);  // the kernel has barriers\n" : "  blocks.run(body);\n") + "}\n";
  return out;
}

}  // namespace
}  // namespace cuda

EmittedKernel emit_host(const fe::Program& program) {
  bool fibers = false;
  for (const auto& fn : program.functions) fibers |= cuda::scan(fn->body, *fn);
  cuda::TupleStructs tuples;
  std::string functions;
  for (size_t i = 0; i < program.functions.size(); ++i)
    functions += "\n" + cuda::host_dynamic_shared(
        cuda::FunctionEmitter(cuda::host_target(), *program.functions[i], program.sources[i]->source, tuples).emit());
  const fe::Function& kernel = program.kernel();
  EmittedKernel out;
  out.entry_name = kernel.mangled_name.empty() ? cuda::user_name(kernel.name) : kernel.mangled_name;
  cuda::FunctionEmitter types(cuda::host_target(), kernel, program.sources.back()->source, tuples);
  out.source = cuda_runtime_header() + "\n// ---- generated by jiasu (host) from " + program.sources.back()->source.file +
               ": kernel " + kernel.name + "\n" + tuples.definitions() + functions + "\n" +
               cuda::entry_point(kernel, out.entry_name, types, fibers);
  return out;
}

}  // namespace jiasu::emit
