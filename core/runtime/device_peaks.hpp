// The roofs of the advisor's roofline: how fast a device moves memory (measured once per process by a large
// copy, as kernels can reach it) and how fast it computes (theoretical FP32, from its multiprocessors and clock).
#pragma once

#include <string>

namespace jiasu {

struct DevicePeaks {
  double bandwidth_gbs = 0;  // measured: GPU, a device-to-device copy; CPU, host memory copied on every core
  double theoretical_bandwidth_gbs = 0;  // GPU: memory clock x bus width (0 where the driver does not say)
  double fp32_gflops = 0;    // GPU: multiprocessors x FP32 lanes x 2 x clock; 0 on the CPU (not known)
  std::string bandwidth_method;
};

// The peaks of `device` (kCpuDevice: the host), measured on first use (about 0.1 s) and kept.
const DevicePeaks& device_peaks(int device);

// FP32 lanes per multiprocessor of a compute capability (0 for one not known).
int fp32_lanes_per_multiprocessor(int major, int minor);

}  // namespace jiasu
