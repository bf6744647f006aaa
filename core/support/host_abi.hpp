// The structs a host library's entry point reads (see the host runtime header for what each field means):
// defined once here, both for the core (jiasu::HostLaunch, HostError below) and, as text, for the runtime
// header compiled into every host library, so the two sides of the dlopen boundary cannot drift apart.
#pragma once

// The library reports a failure (a deadlock, no memory for fiber stacks, ...) in *error and returns.
#define JIASU_HOST_ABI_STRUCTS                                \
  struct HostError {                                          \
    int failed;                                               \
    char message[512];                                        \
  };                                                          \
  struct HostLaunch {                                         \
    long long grid[3], block[3];                              \
    long long block_begin, block_end;                         \
    long long shared_bytes;                                   \
    HostError* error;                                         \
    void* (*fiber_stacks)(long long count, long long* bytes); \
  };

// A macro's expansion as a string literal (the argument is expanded first).
#define JIASU_STRINGIFY(...) JIASU_STRINGIFY_EXPANDED(__VA_ARGS__)
#define JIASU_STRINGIFY_EXPANDED(...) #__VA_ARGS__

// JIASU_HOST_ABI_STRUCTS as source text, for the runtime header (inside its namespace jiasu).
#define JIASU_HOST_ABI_SOURCE JIASU_STRINGIFY(JIASU_HOST_ABI_STRUCTS)

namespace jiasu {
JIASU_HOST_ABI_STRUCTS
}  // namespace jiasu
