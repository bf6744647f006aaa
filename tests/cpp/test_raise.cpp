// `raise` in kernels and device functions, and tuples indexed at run time (with the loops over tuples they give):
// the front end's rules, the emitted code, and what the CPU backend's launch reports.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cpu/host_kernel.hpp"
#include "emit/emit.hpp"
#include "emit_cuda_test_support.hpp"
#include "frontend/token.hpp"
#include "frontend_test_support.hpp"
#include "host_test_support.hpp"
#include "support/error.hpp"
#include "test_support.hpp"

namespace jiasu {
namespace {

using fe::GlobalValue;
using fe::Type;
using host_test::view;
using testing::array;
using testing::Globals;
using testing::python;
using testing::scalar;

GlobalValue exception_class(const std::string& name, int64_t handle) {
  GlobalValue g;
  g.kind = GlobalValue::ExceptionClass;
  g.name = name;
  g.int_value = handle;
  return g;
}

GlobalValue text(const std::string& value) {
  GlobalValue g;
  g.kind = GlobalValue::String;
  g.name = value;
  return g;
}

Globals exceptions() {
  return {{"ValueError", exception_class("ValueError", 3)}, {"MyError", exception_class("MyError", 7)},
          {"MESSAGE", text("from a global")}, {"N", testing::int_value(4)}};
}

const fe::Stmt& first_raise(const std::vector<fe::StmtPtr>& body) {
  for (const fe::StmtPtr& s : body) {
    if (s->kind == fe::StmtKind::Raise) return *s;
    for (const auto* inner : {&s->body, &s->orelse})
      if (!inner->empty()) return first_raise(*inner);
  }
  throw std::logic_error("no raise");
}

std::string compile_error(const std::string& source, const std::vector<Type>& signature) {
  try {
    fe::check(python(source, exceptions()), signature);
  } catch (const fe::CompileError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Raise, CheckRecordsTheClassAndItsMessage) {
  const std::vector<Type> signature = {array(DType::Float32)};
  struct Case { const char* source; const char* exception; int64_t handle; const char* message; };
  for (const Case& c : {Case{"def k(a):\n    if a[0] > 0:\n        raise ValueError\n", "ValueError", 3, ""},
                        Case{"def k(a):\n    raise MyError()\n", "MyError", 7, ""},
                        Case{"def k(a):\n    raise MyError('it''s \\\\n' \"x\\ty\")\n", "MyError", 7, "its \\nx\ty"},
                        Case{"def k(a):\n    raise ValueError(MESSAGE)\n", "ValueError", 3, "from a global"}}) {
    fe::Program program = fe::check(python(c.source, exceptions()), signature);
    const fe::Stmt& s = first_raise(program.kernel().body);
    EXPECT_EQ(s.exception, c.exception) << c.source;
    EXPECT_EQ(s.exception_handle, c.handle) << c.source;
    EXPECT_EQ(s.message, c.message) << c.source;
  }
}

TEST(Raise, CheckRejectsWhatCannotBeRaised) {
  const std::vector<Type> signature = {array(DType::Float32)};
  struct Case { const char* source; const char* message; };
  for (const Case& c : {
           Case{"def k(a):\n    raise N\n", "2:11: error: raise needs an exception class, such as ValueError or a "
                                           "subclass of Exception defined at module level; 'N' is not one"},
           Case{"def k(a):\n    raise 'x'\n", "raise needs an exception class"},
           Case{"def k(a):\n    raise ValueError(N)\n", "2:22: error: the message of an exception raised in a kernel "
                                                        "must be a string constant"},
           Case{"def k(a):\n    raise ValueError('a', 'b')\n", "takes at most one argument, its message"},
           Case{"def k(a):\n    raise ValueError(msg='a')\n", "takes no keyword arguments"},
           Case{"def k(a):\n    a[0] = MESSAGE\n", "global 'MESSAGE' is a str: kernels take a string only as the "
                                                 "message of an exception they raise"},
           Case{"def k(a):\n    x = ValueError\n", "'ValueError' is an exception class: kernels can only raise it"}}) {
    EXPECT_NE(compile_error(c.source, signature).find(c.message), std::string::npos)
        << c.source << "\n" << compile_error(c.source, signature);
  }
}

TEST(Raise, StringLiteralsDecodeAsPython) {
  EXPECT_EQ(fe::string_value("'a\\'b'"), "a'b");
  EXPECT_EQ(fe::string_value("r'a\\n'"), "a\\n");
  EXPECT_EQ(fe::string_value("\"\"\"x\"y\"\"\""), "x\"y");
  EXPECT_EQ(fe::string_value("'\\x41\\0'"), std::string("\\x41") + '\0');
}

TEST(Raise, EmittedForBothTargets) {
  const char* const source =
      "@jiasu.func\ndef f(x):\n    if x > 1:\n        raise ValueError('too \"big\"')\n    return x\n";
  Globals globals = exceptions();
  globals["f"] = testing::device_function(source, exceptions());
  fe::Program program = fe::check(python("def k(a, x):\n    a[0] = f(x)\n", globals), {array(DType::Float32), scalar(DType::Int64)});
  const std::string cuda = emit::emit_cuda(program).source;
  EXPECT_NE(cuda.find("jiasu::raise_exception(jiasu::RaiseSite{3, \"ValueError\", \"too \\\"big\\\"\", \"f\", \"k.py\", 4, 9});"),
            std::string::npos) << cuda;
  const std::string host = emit::emit_host(program).source;
  EXPECT_NE(host.find("jiasu::raise_exception(jiasu_thread, jiasu::RaiseSite{3, \"ValueError\""), std::string::npos) << host;
}

// A debug kernel records its first raise or failed check on the device (the module defines jiasu_device_error for
// the launch to read); without debug the module has no record and the launch reads nothing.
using RaiseCuda = emit_test::EmitCuda;
TEST_F(RaiseCuda, DebugKernelsRecordTheRaise) {
  const std::vector<Type> signature = {array(DType::Float32), scalar(DType::Int64)};
  const char* const raising = "def k(a, x):\n    if x > 1:\n        raise ValueError('big')\n    a[0] = 1.0\n";
  const char* const quiet = "def k(a, x):\n    a[0] = 1.0\n";
  for (auto [source, debug] : {std::pair{raising, true}, {raising, false}, {quiet, true}, {quiet, false}}) {
    const emit::EmittedKernel kernel = emitted(source, signature, exceptions(), debug);
    EXPECT_EQ(kernel.device_errors, debug);
    EXPECT_EQ(kernel.source.rfind("#define JIASU_DEVICE_ERRORS 1\n", 0) == 0, debug);
    EXPECT_EQ(emit_test::contains(ptx(kernel), ".global .align 8 .b8 jiasu_device_error["), debug);
  }
}

TEST(Raise, TupleIndexAtRunTime) {
  fe::Program program = fe::check(python("def k(a, i):\n    a[0] = a.shape[-i]\n"), {array(DType::Float32), scalar(DType::Int64)});
  EXPECT_NE(emit::emit_cuda(program).source.find("jiasu::tuple_item<long long, 1>({"), std::string::npos);
  EXPECT_NE(emit::emit_host(program, true).source.find("jiasu::tuple_item_checked<long long, 1>(jiasu_thread, jiasu::CheckSite{\"tuple\", \"k.py\", 2, 12}"),
            std::string::npos);
  EXPECT_NE(emit::emit_cuda(program, true).source.find("jiasu::tuple_item_checked<long long, 1>(jiasu::CheckSite{\"tuple\", \"k.py\", 2, 12}"),
            std::string::npos);
}

// The launch raises the class the kernel named (its handle), with Numba's message: where, and which thread.
TEST(Raise, HostLaunchReportsTheException) {
  const char* const source =
      "def k(out, x):\n"
      "    i = jiasu.grid(1)\n"
      "    out[i] = 1.0\n"
      "    jiasu.syncthreads()\n"
      "    if i == x:\n"
      "        raise MyError(MESSAGE)\n"
      "    out[i] = 2.0\n";
  const std::vector<Type> signature = {array(DType::Float32), scalar(DType::Int64)};
  for (bool debug : {false, true}) {
    auto kernel = compile_host_kernel(fe::check(python(source, exceptions()), signature), debug);
    std::vector<float> out(8, 0.0f);
    auto ov = view(out);
    long long x = 100;  // no thread raises
    void* params[] = {&ov, &x};
    kernel->launch({2, 1, 1}, {4, 1, 1}, params, 0);
    EXPECT_EQ(out, std::vector<float>(8, 2.0f));
    x = 5;
    try {
      kernel->launch({2, 1, 1}, {4, 1, 1}, params, 0);
      FAIL() << "no error";
    } catch (const KernelRaised& e) {
      EXPECT_EQ(e.handle(), 7);
      EXPECT_STREQ(e.what(), "In function 'k', file k.py, line 6, column 9, tid=[1, 0, 0] ctaid=[1, 0, 0]: from a global");
    }
  }
}

TEST(Raise, HostTupleIndexOutOfRange) {
  const char* const source = "def k(out, i):\n    out[0] = out.shape[-i]\n";
  const std::vector<Type> signature = {array(DType::Int64), scalar(DType::Int64)};
  std::vector<int64_t> out(3, 0);
  auto ov = view(out);
  long long i = 2;
  void* params[] = {&ov, &i};
  // Without debug mode an index out of range reads the first item.
  compile_host_kernel(fe::check(python(source), signature), false)->launch({1, 1, 1}, {1, 1, 1}, params, 0);
  EXPECT_EQ(out[0], 3);
  try {
    compile_host_kernel(fe::check(python(source), signature), true)->launch({1, 1, 1}, {1, 1, 1}, params, 0);
    FAIL() << "no error";
  } catch (const OutOfRange& e) {
    EXPECT_NE(std::string(e.what()).find("tuple index out of range: index -2 of a tuple of 1 items at k.py:2:14"),
              std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace jiasu
