// How a kernel receives an array: the parameter layout of ArrayC and ArrayA, defined once. Compiled into
// every kernel (kernel_runtime.h includes it, on both targets) and read by the launch engine that packs
// the parameters (program/launch.cpp checks its sizes and offsets against these structs). No includes:
// NVRTC reads it too.
#pragma once

namespace jiasu {

// ArrayC: C-contiguous, offsets from the shape. ArrayA: any layout, strides in bytes. Rank 0 is the data
// pointer alone.
template <typename T, int N> struct ArrayC { T* data; long long shape[N]; };
template <typename T> struct ArrayC<T, 0> { T* data; };
template <typename T, int N> struct ArrayA { T* data; long long shape[N]; long long strides[N]; };
template <typename T> struct ArrayA<T, 0> { T* data; };

}  // namespace jiasu
