#include "support/interrupt.hpp"

#include <cstring>

namespace jiasu {
namespace {

volatile sig_atomic_t raised = 0;
volatile sig_atomic_t handling = 0;  // a handler behind that raises SIGINT again (faulthandler) ends here
struct sigaction behind;  // the handler ours stands in front of

void on_interrupt(int signal, siginfo_t* info, void* context) {
  if (handling) return;
  handling = 1;
  if (behind.sa_handler == SIG_DFL) {  // the default ends the process: let it
    sigaction(SIGINT, &behind, nullptr);
    raise(SIGINT);
  } else if (behind.sa_flags & SA_SIGINFO) {
    raised = 1;
    behind.sa_sigaction(signal, info, context);
  } else {
    raised = 1;
    behind.sa_handler(signal);
  }
  handling = 0;
}

bool is_ours(const struct sigaction& action) {
  return (action.sa_flags & SA_SIGINFO) && action.sa_sigaction == &on_interrupt;
}

}  // namespace

void watch_interrupts() {
  struct sigaction current;
  if (sigaction(SIGINT, nullptr, &current) != 0) return;
  raised = 0;
  // Ours never stands in front of "ignore": unlike a handler, that survives exec into child processes.
  if (is_ours(current) || current.sa_handler == SIG_IGN) return;
  struct sigaction ours;
  std::memset(&ours, 0, sizeof ours);
  ours.sa_sigaction = &on_interrupt;
  // As the handler behind has it: Python's leaves out SA_RESTART so that Ctrl-C interrupts blocking calls.
  ours.sa_flags = SA_SIGINFO | (current.sa_flags & (SA_RESTART | SA_ONSTACK));
  sigemptyset(&ours.sa_mask);
  behind = current;
  sigaction(SIGINT, &ours, nullptr);
}

const volatile sig_atomic_t* interrupt_flag() { return &raised; }

}  // namespace jiasu
