// launch_loop: the C++ anchor for bench/launch.py.
//
// Times a plain loop of cuLaunchKernel calls (CUDA driver API only, no jiasu code) for the vector add
//
//   extern "C" __global__ void add(const float* x, const float* y, float* out, int n)
//
// launched as <<<blocks, threads>>> on the default stream. Each repetition is
//   cuCtxSynchronize; t0 = now; launch K times; cuCtxSynchronize; t1 = now
// and the result is the median over the repetitions of (t1 - t0) / K, printed as one JSON object.
//
// The kernel comes from a CUBIN or PTX file given with --module (bench/launch.py passes the CUBIN that
// jiasu.compile_cuda(src, arch="sm_90") produced); without --module a PTX copy of the same kernel that is
// embedded below is JIT-compiled by the driver, so the program also runs on its own.
//
// Build:  nvcc -O2 -o launch_loop bench/launch_loop.cpp -lcuda
//    or:  g++ -O2 -std=c++17 -I/usr/local/cuda/include bench/launch_loop.cpp
//             -L/usr/local/cuda/lib64/stubs -lcuda -o launch_loop   (one line)
// Run:    launch_loop [--module FILE] [--kernel add] [--n 1000] [--threads 256] [--launches 20000]
//                     [--reps 7] [--warmup 2000] [--device 0]

#include <cuda.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

// nvcc -ptx -arch=compute_75 of the kernel above (PTX ISA lowered to 7.0 so older drivers load it too).
const char kEmbeddedPtx[] = R"PTX(
.version 7.0
.target sm_75
.address_size 64

.visible .entry add(
	.param .u64 add_param_0,
	.param .u64 add_param_1,
	.param .u64 add_param_2,
	.param .u32 add_param_3
)
{
	.reg .pred 	%p<2>;
	.reg .f32 	%f<4>;
	.reg .b32 	%r<6>;
	.reg .b64 	%rd<11>;

	ld.param.u64 	%rd1, [add_param_0];
	ld.param.u64 	%rd2, [add_param_1];
	ld.param.u64 	%rd3, [add_param_2];
	ld.param.u32 	%r2, [add_param_3];
	mov.u32 	%r3, %ctaid.x;
	mov.u32 	%r4, %ntid.x;
	mov.u32 	%r5, %tid.x;
	mad.lo.s32 	%r1, %r3, %r4, %r5;
	setp.ge.s32 	%p1, %r1, %r2;
	@%p1 bra 	$L__BB0_2;

	cvta.to.global.u64 	%rd4, %rd1;
	mul.wide.s32 	%rd5, %r1, 4;
	add.s64 	%rd6, %rd4, %rd5;
	cvta.to.global.u64 	%rd7, %rd2;
	add.s64 	%rd8, %rd7, %rd5;
	ld.global.f32 	%f1, [%rd8];
	ld.global.f32 	%f2, [%rd6];
	add.f32 	%f3, %f2, %f1;
	cvta.to.global.u64 	%rd9, %rd3;
	add.s64 	%rd10, %rd9, %rd5;
	st.global.f32 	[%rd10], %f3;

$L__BB0_2:
	ret;
}
)PTX";

std::string json_escape(const std::string& text) {
  std::string escaped;
  for (char c : text) {
    if (c == '"' || c == '\\') escaped += '\\';
    if (c == '\n') { escaped += "\\n"; continue; }
    if (static_cast<unsigned char>(c) < 0x20) continue;
    escaped += c;
  }
  return escaped;
}

// Every CUDA call goes through check(): on failure print a JSON error object and exit 1.
void fail(const std::string& message) {
  std::printf("{\"ok\": false, \"error\": \"%s\"}\n", json_escape(message).c_str());
  std::fflush(stdout);
  std::exit(1);
}

void check(CUresult result, const char* what) {
  if (result == CUDA_SUCCESS) return;
  const char* name = nullptr;
  const char* text = nullptr;
  cuGetErrorName(result, &name);
  cuGetErrorString(result, &text);
  fail(std::string(what) + " failed: " + (name ? name : "?") + " (" + std::to_string(static_cast<int>(result)) +
       "): " + (text ? text : "unknown error"));
}

struct Options {
  std::string module_path;  // empty: the embedded PTX
  std::string kernel = "add";
  int n = 1000;
  int threads = 256;
  long launches = 20000;
  int reps = 7;
  long warmup = 2000;
  int device = 0;
};

long parse_long(const char* flag, const char* value, long minimum) {
  char* end = nullptr;
  long v = std::strtol(value, &end, 10);
  if (end == value || *end != '\0' || v < minimum) fail(std::string("bad value for ") + flag + ": " + value);
  return v;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "-h" || flag == "--help") {
      std::printf("usage: %s [--module CUBIN_OR_PTX] [--kernel add] [--n 1000] [--threads 256]\n"
                  "          [--launches 20000] [--reps 7] [--warmup 2000] [--device 0]\n", argv[0]);
      std::exit(0);
    }
    if (i + 1 >= argc) fail("missing value after " + flag);
    const char* value = argv[++i];
    if (flag == "--module") o.module_path = value;
    else if (flag == "--kernel") o.kernel = value;
    else if (flag == "--n") o.n = static_cast<int>(parse_long("--n", value, 1));
    else if (flag == "--threads") o.threads = static_cast<int>(parse_long("--threads", value, 1));
    else if (flag == "--launches") o.launches = parse_long("--launches", value, 1);
    else if (flag == "--reps") o.reps = static_cast<int>(parse_long("--reps", value, 1));
    else if (flag == "--warmup") o.warmup = parse_long("--warmup", value, 0);
    else if (flag == "--device") o.device = static_cast<int>(parse_long("--device", value, 0));
    else fail("unknown option " + flag);
  }
  return o;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot open module file " + path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);

  check(cuInit(0), "cuInit");
  int driver_version = 0;
  check(cuDriverGetVersion(&driver_version), "cuDriverGetVersion");
  CUdevice device;
  check(cuDeviceGet(&device, o.device), "cuDeviceGet");
  char device_name[256] = {0};
  check(cuDeviceGetName(device_name, sizeof(device_name) - 1, device), "cuDeviceGetName");
  // The primary context, as the CUDA runtime, CuPy, Numba and jiasu use.
  CUcontext context;
  check(cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
  check(cuCtxSetCurrent(context), "cuCtxSetCurrent");

  // Load the module. A file: cuModuleLoadData takes CUBIN or NUL-terminated PTX alike.
  std::string image = o.module_path.empty() ? std::string(kEmbeddedPtx) : read_file(o.module_path);
  image.push_back('\0');
  CUmodule module;
  check(cuModuleLoadData(&module, image.data()), "cuModuleLoadData");
  CUfunction function;
  check(cuModuleGetFunction(&function, module, o.kernel.c_str()), "cuModuleGetFunction");

  // Three arrays of n floats; x = i, y = 2i.
  const size_t bytes = static_cast<size_t>(o.n) * sizeof(float);
  std::vector<float> hx(o.n), hy(o.n), hout(o.n, -1.0f);
  for (int i = 0; i < o.n; ++i) {
    hx[i] = static_cast<float>(i);
    hy[i] = 2.0f * static_cast<float>(i);
  }
  CUdeviceptr x, y, out;
  check(cuMemAlloc(&x, bytes), "cuMemAlloc(x)");
  check(cuMemAlloc(&y, bytes), "cuMemAlloc(y)");
  check(cuMemAlloc(&out, bytes), "cuMemAlloc(out)");
  check(cuMemcpyHtoD(x, hx.data(), bytes), "cuMemcpyHtoD(x)");
  check(cuMemcpyHtoD(y, hy.data(), bytes), "cuMemcpyHtoD(y)");

  int n = o.n;
  void* params[] = {&x, &y, &out, &n};
  const unsigned blocks = static_cast<unsigned>((o.n + o.threads - 1) / o.threads);
  const unsigned threads = static_cast<unsigned>(o.threads);
  CUstream stream = nullptr;  // the default (legacy) stream, as jiasu/CuPy/Numba use without a stream argument

  // Warm-up, then check the result once.
  for (long i = 0; i < o.warmup; ++i)
    check(cuLaunchKernel(function, blocks, 1, 1, threads, 1, 1, 0, stream, params, nullptr), "cuLaunchKernel");
  if (o.warmup == 0)
    check(cuLaunchKernel(function, blocks, 1, 1, threads, 1, 1, 0, stream, params, nullptr), "cuLaunchKernel");
  check(cuCtxSynchronize(), "cuCtxSynchronize");
  check(cuMemcpyDtoH(hout.data(), out, bytes), "cuMemcpyDtoH(out)");
  for (int i = 0; i < o.n; ++i)
    if (hout[i] != 3.0f * static_cast<float>(i)) fail("wrong result at index " + std::to_string(i));

  using clock = std::chrono::steady_clock;
  std::vector<double> us_per_launch;
  for (int r = 0; r < o.reps; ++r) {
    check(cuCtxSynchronize(), "cuCtxSynchronize");
    const auto t0 = clock::now();
    for (long i = 0; i < o.launches; ++i)
      check(cuLaunchKernel(function, blocks, 1, 1, threads, 1, 1, 0, stream, params, nullptr), "cuLaunchKernel");
    check(cuCtxSynchronize(), "cuCtxSynchronize");
    const auto t1 = clock::now();
    us_per_launch.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / static_cast<double>(o.launches));
  }
  std::vector<double> sorted = us_per_launch;
  std::sort(sorted.begin(), sorted.end());
  const size_t m = sorted.size();
  const double median = m % 2 ? sorted[m / 2] : 0.5 * (sorted[m / 2 - 1] + sorted[m / 2]);

  check(cuMemFree(x), "cuMemFree(x)");
  check(cuMemFree(y), "cuMemFree(y)");
  check(cuMemFree(out), "cuMemFree(out)");
  check(cuModuleUnload(module), "cuModuleUnload");
  check(cuDevicePrimaryCtxRelease(device), "cuDevicePrimaryCtxRelease");

  std::printf("{\"ok\": true, \"us_per_launch\": %.4f, \"reps_us\": [", median);
  for (size_t i = 0; i < us_per_launch.size(); ++i) std::printf("%s%.4f", i ? ", " : "", us_per_launch[i]);
  const std::string module_name = o.module_path.empty() ? "embedded-ptx" : json_escape(o.module_path);
  std::printf("], \"min_us\": %.4f, \"launches\": %ld, \"reps\": %d, \"warmup\": %ld, \"n\": %d, \"blocks\": %u, "
              "\"threads\": %u, \"module\": \"%s\", \"device\": \"%s\", \"driver_version\": %d}\n",
              sorted.front(), o.launches, o.reps, o.warmup, o.n, blocks, threads, module_name.c_str(),
              json_escape(device_name).c_str(), driver_version);
  return 0;
}
