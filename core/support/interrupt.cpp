#include "support/interrupt.hpp"

#include <cstring>

namespace jiasu {
namespace {

volatile sig_atomic_t raised = 0;
struct sigaction behind;  // the handler ours stands in front of

void on_interrupt(int signal, siginfo_t* info, void* context) {
  if (behind.sa_flags & SA_SIGINFO) {
    raised = 1;
    if (behind.sa_sigaction) behind.sa_sigaction(signal, info, context);
  } else if (behind.sa_handler == SIG_DFL) {  // the default ends the process: let it
    sigaction(SIGINT, &behind, nullptr);
    raise(SIGINT);
  } else if (behind.sa_handler != SIG_IGN) {
    raised = 1;
    behind.sa_handler(signal);
  }
}

bool is_ours(const struct sigaction& action) {
  return (action.sa_flags & SA_SIGINFO) && action.sa_sigaction == &on_interrupt;
}

}  // namespace

void watch_interrupts() {
  struct sigaction current;
  if (sigaction(SIGINT, nullptr, &current) != 0) return;
  raised = 0;
  if (is_ours(current)) return;
  struct sigaction ours;
  std::memset(&ours, 0, sizeof ours);
  ours.sa_sigaction = &on_interrupt;
  ours.sa_flags = SA_SIGINFO | SA_RESTART | (current.sa_flags & SA_ONSTACK);
  sigemptyset(&ours.sa_mask);
  behind = current;
  sigaction(SIGINT, &ours, nullptr);
}

const volatile sig_atomic_t* interrupt_flag() { return &raised; }

}  // namespace jiasu
