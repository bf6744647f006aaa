// A stand-in for libcuda.so.1 with one pretend GPU whose "device memory" is host memory and whose
// launches run nothing: the last one's configuration and parameters are kept for tests to read. Loaded through JIASU_LIBCUDA, it lets measure.py time what jiasu itself spends on a
// launch (argument classification, signature lookup, packing) on any machine, with no driver cost mixed in.
// Kernels' parameter layouts are read from the CUBIN as a real driver does, so launches take the same path.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace {

using CUresult = int;
constexpr CUresult kSuccess = 0, kInvalidValue = 1, kNotFound = 500, kCooperativeLaunchTooLarge = 720,
                   kGraphUpdateFailure = 910;
char dummy_object[64];  // every handle points here

CUresult ok() { return kSuccess; }

int attribute(int which) {
  switch (which) {
    case 1: return 1024;                          // max threads per block
    case 2: case 3: return 1024;                  // max block dim x, y
    case 4: return 64;                            // max block dim z
    case 5: return 2147483647;                    // max grid dim x
    case 6: case 7: return 65535;                 // max grid dim y, z
    case 8: return 48 * 1024;                     // shared memory per block
    case 10: return 32;                           // warp size
    case 16: return 132;                          // multiprocessors
    case 75: return 9;                            // compute capability 9.0
    case 76: return 0;
    case 97: return 227 * 1024;                   // opt-in shared memory per block
    case 115: return 1;                           // memory pools
    default: return 1;
  }
}

// The functions whose results jiasu reads; everything else just succeeds.
CUresult driver_version(int* v) { *v = 13000; return kSuccess; }
CUresult error_name(CUresult, const char** name) { *name = "CUDA_ERROR_FAKE"; return kSuccess; }
CUresult device_count(int* n) { *n = 1; return kSuccess; }
CUresult device_get(int* d, int ordinal) { *d = ordinal; return ordinal == 0 ? kSuccess : 101; }
CUresult device_name(char* name, int length, int) { std::strncpy(name, "jiasu fake GPU", length); return kSuccess; }
CUresult device_attribute(int* v, int which, int) { *v = attribute(which); return kSuccess; }
CUresult total_mem(size_t* bytes, int) { *bytes = size_t(1) << 34; return kSuccess; }
CUresult handle_out(void** handle) { *handle = dummy_object; return kSuccess; }
CUresult handle_out2(void** handle, int) { *handle = dummy_object; return kSuccess; }
CUresult mem_info(size_t* free_bytes, size_t* total) { *free_bytes = *total = size_t(1) << 34; return kSuccess; }
CUresult alloc(uint64_t* ptr, size_t bytes) { *ptr = reinterpret_cast<uint64_t>(std::malloc(bytes ? bytes : 1)); return kSuccess; }
CUresult alloc_async(uint64_t* ptr, size_t bytes, void*) { return alloc(ptr, bytes); }
CUresult free_mem(uint64_t ptr) { std::free(reinterpret_cast<void*>(ptr)); return kSuccess; }
CUresult free_async(uint64_t ptr, void*) { return free_mem(ptr); }
CUresult host_alloc(void** ptr, size_t bytes, unsigned) { *ptr = std::malloc(bytes); return kSuccess; }
CUresult host_free(void* ptr) { std::free(ptr); return kSuccess; }
CUresult host_device_pointer(uint64_t* ptr, void* host, unsigned) { *ptr = reinterpret_cast<uint64_t>(host); return kSuccess; }
CUresult alloc_managed(uint64_t* ptr, size_t bytes, unsigned) { return alloc(ptr, bytes); }
CUresult copy(uint64_t dst, uint64_t src, size_t bytes) {
  std::memcpy(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), bytes);
  return kSuccess;
}
CUresult copy_async(uint64_t dst, uint64_t src, size_t bytes, void*) { return copy(dst, src, bytes); }
CUresult memset8(uint64_t dst, unsigned char v, size_t n, void*) { std::memset(reinterpret_cast<void*>(dst), v, n); return kSuccess; }
CUresult pointer_attribute(void*, int, uint64_t) { return kInvalidValue; }  // plain host memory, as for NumPy
CUresult func_attribute(int* v, int which, void*) { *v = which == 0 ? 1024 : which == 8 ? 48 * 1024 : 0; return kSuccess; }
// A loaded module: each kernel's parameters (offset, size) from the CUBIN's .nv.info.<kernel> sections, whose
// EIATTR_KPARAM_INFO records (attribute 0x17) give each parameter's ordinal, offset and size.
struct Param { size_t offset, size; };
using Module = std::map<std::string, std::vector<Param>>;

void read_kernel_params(const unsigned char* elf, Module& module) {
  if (std::memcmp(elf, "\x7f" "ELF", 4) != 0) return;  // PTX: layouts stay unknown
  auto u16 = [&](size_t at) { uint16_t v; std::memcpy(&v, elf + at, 2); return v; };
  auto u32 = [&](size_t at) { uint32_t v; std::memcpy(&v, elf + at, 4); return v; };
  auto u64 = [&](size_t at) { uint64_t v; std::memcpy(&v, elf + at, 8); return v; };
  const uint64_t headers = u64(0x28);
  const unsigned entry = u16(0x3a), count = u16(0x3c), names = u16(0x3e);
  const uint64_t name_table = u64(headers + names * entry + 0x18);
  for (unsigned i = 0; i < count; ++i) {
    const uint64_t h = headers + i * entry;
    const std::string name = reinterpret_cast<const char*>(elf + name_table + u32(h));
    if (name.rfind(".nv.info.", 0) != 0) continue;
    std::vector<Param>& params = module[name.substr(9)];
    for (uint64_t at = u64(h + 0x18), end = at + u64(h + 0x20); at < end;) {
      const unsigned format = elf[at], attribute = elf[at + 1];
      if (format != 4) {  // fixed-size records: no payload, 1-byte or 2-byte value
        at += format == 3 ? 4 : format == 2 ? 3 : 2;
        continue;
      }
      const unsigned size = u16(at + 2);
      if (attribute == 0x17) {
        const unsigned ordinal = u16(at + 8), offset = u16(at + 10), bytes = (u32(at + 12) >> 18) & 0x3fff;
        if (params.size() <= ordinal) params.resize(ordinal + 1);
        params[ordinal] = {offset, bytes};
      }
      at += 4 + size;
    }
  }
}

CUresult load_module(void** module, const void* image) {
  auto* m = new Module();
  read_kernel_params(static_cast<const unsigned char*>(image), *m);
  *module = m;
  return kSuccess;
}
CUresult unload_module(void* module) { delete static_cast<Module*>(module); return kSuccess; }
CUresult get_function(void** f, void* module, const char* name) {
  auto& m = *static_cast<Module*>(module);
  auto it = m.find(name);
  if (it == m.end()) it = m.emplace(name, std::vector<Param>()).first;  // PTX: known by name only
  *f = &it->second;
  return kSuccess;
}
CUresult param_info(void* f, size_t index, size_t* offset, size_t* size) {
  const auto& params = *static_cast<std::vector<Param>*>(f);
  if (index >= params.size()) return kInvalidValue;
  *offset = params[index].offset;
  *size = params[index].size;
  return kSuccess;
}
constexpr int kResidentBlocks = 2;  // per multiprocessor, whatever the kernel
CUresult occupancy(int* blocks, void*, int, size_t) { *blocks = kResidentBlocks; return kSuccess; }
CUresult elapsed(float* ms, void*, void*) { *ms = 0.001f; return kSuccess; }

// The last launch, as tests read it back through jiasu_fake_last_launch: kernel, configuration and
// parameter bytes (padding zeroed); whether it was cooperative, through jiasu_fake_last_launch_cooperative, and
// whether it may overlap the kernel before it, through jiasu_fake_last_launch_overlaps.
struct Launch {
  void* function;
  unsigned config[7];  // grid x, y, z, block x, y, z, shared bytes
  void* stream;
  unsigned char params[4096];
  size_t size;
  bool cooperative;
  bool overlaps;
} last_launch;

// Stream capture: launches on the capturing stream are recorded into the graph, not made; a graph launch makes
// each recorded one in turn (so the last launch is the graph's last node) and counts itself.
void* capturing = nullptr;
std::vector<Launch>* captured = nullptr;
int graph_launches = 0;

CUresult launch_kernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                       unsigned shared, void* stream, void** params, void** extra) {
  Launch recorded;
  Launch& l = captured && stream == capturing ? recorded : last_launch;
  const auto& layout = *static_cast<std::vector<Param>*>(f);
  size_t size = 0;
  if (params)  // one pointer per parameter, placed by the layout read from the CUBIN
    for (const Param& p : layout) size = std::max(size, p.offset + p.size);
  else if (extra)  // {BUFFER_POINTER, data, BUFFER_SIZE, &size, END}
    size = *static_cast<size_t*>(extra[3]);
  if (size > sizeof l.params) return kInvalidValue;
  const unsigned config[7] = {gx, gy, gz, bx, by, bz, shared};
  std::memcpy(l.config, config, sizeof config);
  l.function = f;
  l.stream = stream;
  l.size = size;
  l.cooperative = false;
  l.overlaps = false;
  std::memset(l.params, 0, size);
  if (params)
    for (size_t i = 0; i < layout.size(); ++i) std::memcpy(l.params + layout[i].offset, params[i], layout[i].size);
  else if (extra)
    std::memcpy(l.params, extra[1], size);
  if (&l == &recorded) captured->push_back(recorded);
  return kSuccess;
}

using Graph = std::vector<Launch>;
CUresult begin_capture(void* stream, int) {
  if (captured) return kInvalidValue;
  capturing = stream;
  captured = new Graph();
  return kSuccess;
}
CUresult end_capture(void* stream, void** graph) {
  if (!captured || stream != capturing) return kInvalidValue;
  *graph = captured;
  captured = nullptr;
  capturing = nullptr;
  return kSuccess;
}
CUresult graph_nodes(void* graph, void**, size_t* count) { *count = static_cast<Graph*>(graph)->size(); return kSuccess; }
CUresult graph_instantiate(void** exec, void* graph, unsigned long long) {
  *exec = new Graph(*static_cast<Graph*>(graph));
  return kSuccess;
}
CUresult graph_update(void* exec, void* graph, void*) {  // the same kernels in the same order: new parameters
  Graph& to = *static_cast<Graph*>(exec);
  const Graph& from = *static_cast<Graph*>(graph);
  if (to.size() != from.size()) return kGraphUpdateFailure;
  for (size_t i = 0; i < to.size(); ++i)
    if (to[i].function != from[i].function) return kGraphUpdateFailure;
  to = from;
  return kSuccess;
}
CUresult graph_launch(void* exec, void*) {
  for (const Launch& l : *static_cast<Graph*>(exec)) last_launch = l;
  ++graph_launches;
  return kSuccess;
}
CUresult graph_destroy(void* graph) { delete static_cast<Graph*>(graph); return kSuccess; }

// A cooperative launch: refused when the grid is more than every multiprocessor holds at once.
CUresult launch_cooperative(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                            unsigned shared, void* stream, void** params) {
  if (1ull * gx * gy * gz > 1ull * kResidentBlocks * attribute(16)) return kCooperativeLaunchTooLarge;
  const CUresult r = launch_kernel(f, gx, gy, gz, bx, by, bz, shared, stream, params, nullptr);
  last_launch.cooperative = r == kSuccess;
  return r;
}

// cuLaunchKernelEx: a launch as above, which may carry the programmatic-stream-serialization attribute (id 6).
struct LaunchAttribute {
  int id;
  char pad[4];
  union { char bytes[64]; int value; } value;
};
struct LaunchConfig {
  unsigned config[7];
  void* stream;
  LaunchAttribute* attributes;
  unsigned attribute_count;
};
CUresult launch_kernel_ex(const LaunchConfig* c, void* f, void** params, void** extra) {
  const unsigned* g = c->config;
  bool overlaps = false;
  for (unsigned i = 0; i < c->attribute_count; ++i)
    if (c->attributes[i].id == 6) overlaps = c->attributes[i].value.value != 0;
    else return kInvalidValue;  // no other attribute is expected
  const bool into_graph = captured && c->stream == capturing;
  const CUresult r = launch_kernel(f, g[0], g[1], g[2], g[3], g[4], g[5], g[6], c->stream, params, extra);
  if (r == kSuccess) (into_graph ? captured->back() : last_launch).overlaps = overlaps;
  return r;
}

struct Entry {
  const char* name;
  void* fn;
};
#define FN(name, impl) {#name, reinterpret_cast<void*>(impl)}
const Entry kTable[] = {
    FN(cuDriverGetVersion, driver_version), FN(cuGetErrorName, error_name), FN(cuGetErrorString, error_name),
    FN(cuDeviceGetCount, device_count), FN(cuDeviceGet, device_get), FN(cuDeviceGetName, device_name),
    FN(cuDeviceGetAttribute, device_attribute), FN(cuDeviceTotalMem, total_mem), FN(cuDeviceGetPCIBusId, device_name),
    FN(cuDeviceGetDefaultMemPool, handle_out2), FN(cuDevicePrimaryCtxRetain, handle_out2),
    FN(cuCtxGetCurrent, handle_out), FN(cuMemGetInfo, mem_info), FN(cuMemAlloc, alloc), FN(cuMemFree, free_mem),
    FN(cuMemAllocAsync, alloc_async), FN(cuMemFreeAsync, free_async), FN(cuMemHostAlloc, host_alloc),
    FN(cuMemFreeHost, host_free), FN(cuMemHostGetDevicePointer, host_device_pointer),
    FN(cuMemAllocManaged, alloc_managed), FN(cuMemcpyHtoD, copy), FN(cuMemcpyDtoH, copy), FN(cuMemcpyDtoD, copy),
    FN(cuMemcpyHtoDAsync, copy_async), FN(cuMemcpyDtoHAsync, copy_async), FN(cuMemcpyDtoDAsync, copy_async),
    FN(cuMemsetD8Async, memset8), FN(cuPointerGetAttribute, pointer_attribute),
    FN(cuStreamCreateWithPriority, handle_out), FN(cuEventCreate, handle_out), FN(cuEventElapsedTime, elapsed),
    FN(cuModuleLoadData, load_module), FN(cuModuleUnload, unload_module), FN(cuModuleGetFunction, get_function),
    FN(cuFuncGetParamInfo, param_info), FN(cuFuncGetAttribute, func_attribute),
    FN(cuOccupancyMaxActiveBlocksPerMultiprocessor, occupancy), FN(cuLaunchKernel, launch_kernel),
    FN(cuLaunchCooperativeKernel, launch_cooperative), FN(cuLaunchKernelEx, launch_kernel_ex),
    FN(cuStreamBeginCapture, begin_capture),
    FN(cuStreamEndCapture, end_capture), FN(cuGraphGetNodes, graph_nodes), FN(cuGraphInstantiateWithFlags, graph_instantiate),
    FN(cuGraphExecUpdate, graph_update), FN(cuGraphLaunch, graph_launch), FN(cuGraphDestroy, graph_destroy),
    FN(cuGraphExecDestroy, graph_destroy),
};
// Functions of CUDA 12.4+ this driver does not have: jiasu then falls back as on an older driver.
const char* const kMissing[] = {"cuModuleGetFunctionCount", "cuModuleEnumerateFunctions", "cuFuncGetName"};

}  // namespace

extern "C" {

CUresult cuInit(unsigned) { return kSuccess; }

// Linked directly by bench/launch_loop_lib.cpp (the in-process C++ anchor of bench/launch.py).
CUresult cuCtxSynchronize() { return kSuccess; }
CUresult cuLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shared, void* stream, void** params, void** extra) {
  return launch_kernel(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra);
}

// Copies the last launch's kernel, configuration (7 values), stream and parameter bytes out; returns their size.
size_t jiasu_fake_last_launch(void** function, unsigned* config, void** stream, unsigned char* params,
                              size_t capacity) {
  *function = last_launch.function;
  std::memcpy(config, last_launch.config, sizeof last_launch.config);
  *stream = last_launch.stream;
  std::memcpy(params, last_launch.params, std::min(capacity, last_launch.size));
  return last_launch.size;
}

int jiasu_fake_last_launch_cooperative() { return last_launch.cooperative; }
int jiasu_fake_last_launch_overlaps() { return last_launch.overlaps; }
int jiasu_fake_graph_launches() { return graph_launches; }

CUresult cuGetProcAddress_v2(const char* symbol, void** fn, int, uint64_t, int* status) {
  for (const char* name : kMissing)
    if (std::strcmp(name, symbol) == 0) {
      *fn = nullptr;
      return kNotFound;
    }
  for (const Entry& e : kTable)
    if (std::strcmp(e.name, symbol) == 0) {
      *fn = e.fn;
      if (status) *status = 0;
      return kSuccess;
    }
  *fn = reinterpret_cast<void*>(ok);  // every other call succeeds and returns nothing
  if (status) *status = 0;
  return kSuccess;
}

}  // extern "C"
