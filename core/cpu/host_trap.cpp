// siglongjmp leaves the signal's stack for the range's own: glibc's fortified longjmp checks that a jump goes
// up the stack it starts on, which a jump from a fiber's stack need not.
#undef _FORTIFY_SOURCE
#include "cpu/host_trap.hpp"

#include <cstring>
#include <mutex>

#include <sys/mman.h>
#include <unistd.h>

namespace jiasu {
namespace {

constexpr int kFaultSignals[] = {SIGSEGV, SIGBUS, SIGFPE};
struct sigaction behind[3];  // the handlers ours stand in front of, as kFaultSignals

// Initial-exec: read in the signal handler, where a __tls_get_addr call could allocate or take a lock.
[[gnu::tls_model("initial-exec")]] thread_local HostTrap* armed = nullptr;

// This thread's alternate signal stack, if jiasu gave it one: released when the thread ends.
struct SignalStack {
  void* base = nullptr;
  size_t bytes = 0;
  ~SignalStack() {
    if (!base) return;
    stack_t off{};
    off.ss_flags = SS_DISABLE;
    sigaltstack(&off, nullptr);
    munmap(base, bytes);
  }
};
thread_local SignalStack signal_stack;

void on_fault(int signal, siginfo_t* info, void* context) {
  HostTrap* trap = armed;
  if (trap && info && info->si_code > 0) {  // a fault of this thread's kernel, not a signal sent with kill
    armed = nullptr;  // a fault while leaving goes to the handlers behind
    trap->signal = signal;
    trap->address = info ? info->si_addr : nullptr;
    siglongjmp(trap->jump, 1);
  }
  int i = 0;
  while (kFaultSignals[i] != signal) ++i;
  const struct sigaction& next = behind[i];
  if (next.sa_handler == SIG_DFL || next.sa_handler == SIG_IGN) {
    // A fault's instruction runs again and meets the default action; a signal sent is sent again.
    sigaction(signal, &next, nullptr);
    if (!info || info->si_code <= 0) raise(signal);
  } else if (next.sa_flags & SA_SIGINFO) {
    next.sa_sigaction(signal, info, context);
  } else {
    next.sa_handler(signal);
  }
}

void install_handlers() {
  struct sigaction ours;
  std::memset(&ours, 0, sizeof ours);
  ours.sa_sigaction = &on_fault;
  // On the alternate stack (an overflowed stack cannot run a handler); not blocked while it runs, so a
  // siglongjmp that does not restore the mask leaves it as it was.
  ours.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
  sigemptyset(&ours.sa_mask);
  for (int i = 0; i < 3; ++i) {  // what was there first, so that ours never runs with behind unset
    sigaction(kFaultSignals[i], nullptr, &behind[i]);
    sigaction(kFaultSignals[i], &ours, nullptr);
  }
}

void ensure_signal_stack() {
  if (signal_stack.base) return;
  stack_t current{};
  if (sigaltstack(nullptr, &current) == 0 && !(current.ss_flags & SS_DISABLE)) return;  // it has one
  size_t bytes = 64 * 1024;
#ifdef _SC_SIGSTKSZ
  const long least = sysconf(_SC_SIGSTKSZ);  // large on CPUs with wide vector registers
  if (least > 0 && static_cast<size_t>(least) * 4 > bytes) bytes = static_cast<size_t>(least) * 4;
#endif
  void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) return;
  stack_t stack{};
  stack.ss_sp = base;
  stack.ss_size = bytes;
  if (sigaltstack(&stack, nullptr) != 0) {
    munmap(base, bytes);
    return;
  }
  signal_stack.base = base;
  signal_stack.bytes = bytes;
}

}  // namespace

void arm_host_trap(HostTrap* trap) {
  if (trap) {
    static std::once_flag installed;
    std::call_once(installed, install_handlers);
    ensure_signal_stack();
  }
  armed = trap;
}

}  // namespace jiasu
