// Where work runs when nothing says otherwise: the CUDA backend (the current GPU) or the CPU backend
// (kernels compiled for the host, arrays in host memory).
#pragma once

#include <string>

namespace jiasu {

enum class Backend { Cuda, Cpu };

// The process-wide active backend. Chosen on first use: $JIASU_BACKEND ("cpu" or "cuda") when set, else
// CUDA when a usable GPU is present, else CPU. Throws BadValue for another $JIASU_BACKEND.
Backend active_backend();
// Throws CudaError when asked for CUDA and no GPU is usable.
void set_active_backend(Backend backend);

const char* backend_name(Backend backend);
Backend backend_from_name(const std::string& name);  // "cpu" or "cuda"; else BadValue

// The device new arrays and launches use by default: kCpuDevice on the CPU backend, else the
// calling thread's current GPU.
int default_device();

}  // namespace jiasu
