// check(): `raise E`, `raise E()` and `raise E("message")`, as Numba's CUDA target takes them. E is an exception
// class the resolver knows (a builtin one such as ValueError, or a subclass of Exception at module level) and the
// message a string constant (a literal, or a global or closure variable holding a str), so that the launch can
// raise E(message) on the host with nothing computed on the device.
#include "frontend/checker.hpp"

namespace jiasu::fe::checking {

void Checker::check_raise(Stmt& s) {
  Expr& value = *s.value;
  Expr& raised = value.kind == ExprKind::Call ? *value.args[0] : value;
  const char* const what = "raise needs an exception class, such as ValueError or a subclass of Exception defined "
                           "at module level";
  if (raised.kind != ExprKind::Name || variables_.count(raised.name)) fail(start_of(raised), what);
  const GlobalValue& g = global(raised.name);
  if (g.kind != GlobalValue::ExceptionClass) fail(start_of(raised), std::string(what) + "; '" + raised.name + "' is not one");
  s.exception = g.name;
  s.exception_handle = g.int_value;
  if (value.kind != ExprKind::Call) return;
  if (!value.keywords.empty()) fail(value.loc, "an exception raised in a kernel takes no keyword arguments");
  if (value.args.size() > 2) fail(start_of(*value.args[2]), "an exception raised in a kernel takes at most one argument, its message");
  if (value.args.size() == 1) return;
  const Expr& message = *value.args[1];
  if (message.kind == ExprKind::String) {
    s.message = message.name;
    return;
  }
  if (message.kind == ExprKind::Name && !variables_.count(message.name) && !assigned_.count(message.name)) {
    const GlobalValue& text = global(message.name);
    if (text.kind == GlobalValue::String) {
      s.message = text.name;
      return;
    }
  }
  fail(start_of(message), "the message of an exception raised in a kernel must be a string constant (a literal, or "
                          "a global or closure variable holding a str)");
}

}  // namespace jiasu::fe::checking
