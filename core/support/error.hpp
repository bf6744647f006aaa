// The one exception hierarchy of the C++ core. The binding layer translates each class, once, into a
// Python exception; nothing else in the core knows about Python.
#pragma once

#include <stdexcept>
#include <string>

namespace jiasu {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A CUDA driver call failed, or a request the driver would refuse. Carries the driver's error name.
class CudaError : public Error {
 public:
  CudaError(int code, std::string name, const std::string& message)
      : Error(message), code_(code), name_(std::move(name)) {}
  int code() const { return code_; }
  const std::string& name() const { return name_; }

 private:
  int code_;
  std::string name_;
};

class OutOfMemoryError : public CudaError {
 public:
  using CudaError::CudaError;
};

// A launch configuration the device cannot run (block too large, too much shared memory, ...).
class LaunchError : public CudaError {
 public:
  using CudaError::CudaError;
};

// An array that was freed, or that lives on another device than the one asked for.
class InvalidArrayError : public CudaError {
 public:
  using CudaError::CudaError;
};

// NVRTC refused the source; the log holds its messages with line numbers.
class NvrtcError : public Error {
 public:
  NvrtcError(const std::string& message, std::string log) : Error(message), log_(std::move(log)) {}
  const std::string& log() const { return log_; }

 private:
  std::string log_;
};

// The host C++ compiler refused the source (CPU backend); the log holds its diagnostics with line
// numbers.
class HostCompileError : public Error {
 public:
  HostCompileError(const std::string& message, std::string log)
      : Error(message), log_(std::move(log)) {}
  const std::string& log() const { return log_; }

 private:
  std::string log_;
};

// A shared library (driver, NVRTC, cuDNN, ...) could not be found; the message names the fix.
class LibraryNotFound : public Error {
 public:
  using Error::Error;
};

// Wrong kind of argument (maps to TypeError) and wrong value (maps to ValueError).
class BadArgument : public Error {
 public:
  using Error::Error;
};
class BadValue : public Error {
 public:
  using Error::Error;
};
// An index outside an array (maps to IndexError).
class OutOfRange : public Error {
 public:
  using Error::Error;
};
// An integer division or modulo by zero in a debug kernel (maps to ZeroDivisionError).
class DivisionByZero : public Error {
 public:
  using Error::Error;
};
// An axis outside an array's dimensions, or given twice (maps to NumPy's AxisError, both a ValueError and an
// IndexError).
class AxisError : public Error {
 public:
  using Error::Error;
};
// A kernel raised an exception (maps to the Python class registered under `handle`, given the message).
class KernelRaised : public Error {
 public:
  KernelRaised(int64_t handle, const std::string& message) : Error(message), handle_(handle) {}
  int64_t handle() const { return handle_; }

 private:
  int64_t handle_;
};
// Ctrl-C stopped a wait or a CPU kernel (maps to KeyboardInterrupt, or what Python's SIGINT handler raises).
class Interrupted : public Error {
 public:
  using Error::Error;
};

// A collective, a communicator or the rendezvous store failed (maps to jiasu.DistributedError). `code` is the
// library's result code where there is one (ncclResult_t), 0 otherwise.
class DistributedError : public Error {
 public:
  explicit DistributedError(const std::string& message, int code = 0) : Error(message), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};
// A peer did not answer within the timeout (maps to jiasu.DistributedTimeoutError, also a TimeoutError).
class DistributedTimeout : public DistributedError {
 public:
  using DistributedError::DistributedError;
};

}  // namespace jiasu
