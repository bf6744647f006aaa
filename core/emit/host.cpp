// emit_host(): a typed Program becomes one host C++17 translation unit, written by the same
// FunctionEmitter as emit_cuda() with the host Target: every function takes the thread's
// `const jiasu::HostThread& jiasu_thread` first (thread and block indices are read from it), the kernel
// body becomes a function called once per thread (so `return` ends that thread only), and the extern "C"
// entry point runs a range of blocks with the runtime header's jiasu::HostBlocks: thread after thread, or,
// when any function of the program has a barrier or a warp operation (decided here, per kernel), as fibers
// that switch at each barrier and meet, warp by warp, at each warp operation (syncwarp, shuffles, votes).
// Shared arrays are static thread_local arrays (the block's, as one OS thread runs one block at a time);
// dynamic shared memory is the launch's shared_bytes, at jiasu::dynamic_shared_memory().
#include "emit/cuda_emitter.hpp"

namespace jiasu::emit {
namespace cuda {
namespace {

using fe::BuiltinId;

const char* axis_name(int axis) { return axis == 0 ? "x" : axis == 1 ? "y" : "z"; }

// A warp operation: the lanes of a warp meet in the fiber scheduler.
bool is_warp_operation(BuiltinId id) {
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
    case BuiltinId::SyncWarp: return "jiasu::syncwarp";
    case BuiltinId::ShflSync: return "jiasu::shfl_sync";
    case BuiltinId::ShflUpSync: return "jiasu::shfl_up_sync";
    case BuiltinId::ShflDownSync: return "jiasu::shfl_down_sync";
    case BuiltinId::ShflXorSync: return "jiasu::shfl_xor_sync";
    case BuiltinId::BallotSync: return "jiasu::ballot_sync";
    case BuiltinId::AnySync: return "jiasu::any_sync";
    case BuiltinId::AllSync: return "jiasu::all_sync";
    case BuiltinId::ActiveMask: return "jiasu::activemask";
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

// Shared arrays: static storage of the OS thread, and one OS thread runs one block at a time (all its
// threads, as fibers or one after another), so it is the block's shared memory. Its content at the start
// of a block is unspecified, as in CUDA (what the last block run on that OS thread left).
std::string host_shared_array(const std::string& element, const std::string& name, int64_t size) {
  return "static thread_local " + element + " " + name + "[" + std::to_string(size) + "];";
}

const Target& host_target() {
  static const Target target{"host C++", "static void ", "jiasu_kernel_body", "static ",
                             "[[maybe_unused]] const jiasu::HostThread& jiasu_thread", "jiasu_thread", host_spelling, host_grid_axis,
                             host_shared_array, "", "jiasu::dynamic_shared_memory()"};
  return target;
}

// True when the code has a barrier or a warp operation: its threads must run as fibers.
bool scan(const fe::Expr& e) {
  bool fibers = false;
  if (e.meaning == fe::Meaning::Builtin && e.builtin >= 0 &&
      (e.kind == fe::ExprKind::Call || e.kind == fe::ExprKind::Attribute)) {
    const fe::BuiltinId id = fe::builtin(e.builtin).id;
    fibers = is_barrier(id) || is_warp_operation(id);
  }
  for (const fe::ExprPtr& arg : e.args)
    if (arg) fibers |= scan(*arg);
  return fibers;
}

bool scan(const std::vector<fe::StmtPtr>& body) {
  bool fibers = false;
  for (const fe::StmtPtr& s : body) {
    if (s->value) fibers |= scan(*s->value);
    if (s->test) fibers |= scan(*s->test);
    for (const fe::ExprPtr& target : s->targets)
      if (target) fibers |= scan(*target);
    fibers |= scan(s->body);
    fibers |= scan(s->orelse);
  }
  return fibers;
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
         std::string(fibers ? "  blocks.run_fibers(body);  // the kernel has barriers or warp operations\n"
                            : "  blocks.run(body);\n") +
         "}\n";
  return out;
}

}  // namespace
}  // namespace cuda

EmittedKernel emit_host(const fe::Program& program, bool debug) {
  bool fibers = false;
  for (const auto& fn : program.functions) fibers |= cuda::scan(fn->body);
  cuda::TupleStructs tuples;
  std::string functions;
  for (size_t i = 0; i < program.functions.size(); ++i)
    functions += "\n" + cuda::FunctionEmitter(cuda::host_target(), *program.functions[i], program.sources[i]->source,
                                              tuples, debug).emit();
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
