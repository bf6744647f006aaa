// The watchdog: one background thread that checks every live communicator a few times per millisecond-scale
// tick (Communicator::watch): finished work is retired, overdue work or an asynchronous NCCL error aborts the
// communicator, so that a lost peer makes the survivors raise instead of hanging.
#pragma once

#include <memory>

namespace jiasu::distributed {

class Communicator;

// Watches `comm` for as long as it lives; starts the thread at the first call.
void watch_communicator(const std::weak_ptr<Communicator>& comm);
// At exit: stops and joins the thread, and aborts the communicators still alive (their outstanding work was
// waited for by the Python layer's exit hook). Communicators made later are not watched: no thread may start
// that could outlive the interpreter.
void shutdown();

}  // namespace jiasu::distributed
