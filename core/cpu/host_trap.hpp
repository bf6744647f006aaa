// Memory faults inside host kernels become failed launches: HostLaunch::arm as the core provides it.
#pragma once

#include "cpu/runtime/host_abi.h"

namespace jiasu {

// Arms (trap) or disarms (null) this OS thread's trap. The first call installs the process's handlers for
// SIGSEGV, SIGBUS and SIGFPE, which stand in front of the ones there were: a fault outside an armed range
// goes to those as before. Each thread that arms gets an alternate signal stack (unless it has one), so a
// fiber whose stack overflowed into its guard page is caught too.
void arm_host_trap(HostTrap* trap);

}  // namespace jiasu
