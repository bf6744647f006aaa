// Ctrl-C while jiasu waits for a GPU or runs a CPU kernel. A SIGINT handler raises a flag that those loops
// check, then passes the signal on to the handler it stands in front of (Python's, which raises
// KeyboardInterrupt once control is back in the interpreter), so nothing else changes for the process.
#pragma once

#include <csignal>

namespace jiasu {

// Makes sure the handler stands in front of whatever SIGINT handler the process has now (another library or
// Python's signal.signal may have replaced it since), and lowers the flag. One sigaction call when nothing
// changed. Call it before each interruptible wait or CPU launch.
void watch_interrupts();

// Raised by a SIGINT since the last watch_interrupts() (unless SIGINT is ignored).
const volatile sig_atomic_t* interrupt_flag();
inline bool interrupted() { return *interrupt_flag() != 0; }

}  // namespace jiasu
