// The front end's nesting limits (ast.hpp): deeper code fails with a CompileError at its place, and at the
// limits every stage (parse, check, both emitters, freeing the tree) runs in a thread with a 1 MiB stack
// (8 MiB under AddressSanitizer).
// Each shape is taken at its true limit, found by parsing, so the test follows the limits if they change.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <functional>
#include <iostream>
#include <string>

#include "emit/emit.hpp"
#include "frontend_test_support.hpp"

namespace jiasu::testing {
namespace {

// AddressSanitizer's redzones make every frame several times larger: the same depth needs more stack there (4.3 MiB at most, seen with gcc 12).
#if defined(__SANITIZE_ADDRESS__)
constexpr size_t kStackScale = 8;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr size_t kStackScale = 8;
#else
constexpr size_t kStackScale = 1;
#endif
#else
constexpr size_t kStackScale = 1;
#endif
constexpr size_t kStack = (size_t(1) << 20) * kStackScale;
constexpr unsigned char kPaint = 0xA5;

// Runs `work` on a thread whose stack is `kStack` bytes above a guard page (so an overflow is a crash, not
// silent corruption); returns how many bytes of that stack it used.
size_t stack_used_by(const std::function<void()>& work) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* mapping = mmap(nullptr, kStack + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapping == MAP_FAILED) throw std::runtime_error("mmap failed");
  unsigned char* base = static_cast<unsigned char*>(mapping);
  mprotect(base, page, PROT_NONE);
  unsigned char* stack = base + page;
  std::memset(stack, kPaint, kStack);

  pthread_attr_t attributes;
  pthread_attr_init(&attributes);
  pthread_attr_setstack(&attributes, stack, kStack);
  std::exception_ptr error;
  auto run = [&] {
    try {
      work();
    } catch (...) {
      error = std::current_exception();
    }
  };
  using Run = decltype(run);
  pthread_t thread;
  int failed = pthread_create(&thread, &attributes, [](void* r) -> void* { (*static_cast<Run*>(r))(); return nullptr; }, &run);
  pthread_attr_destroy(&attributes);
  if (failed) throw std::runtime_error("pthread_create failed");
  pthread_join(thread, nullptr);
  size_t untouched = 0;
  while (untouched < kStack && stack[untouched] == kPaint) ++untouched;
  munmap(mapping, kStack + page);
  if (error) std::rethrow_exception(error);
  return kStack - untouched;
}

std::string repeat(const std::string& text, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += text;
  return out;
}

const char* const kHeader = "def k(x, out, idx, n):\n";
const std::vector<fe::Type> kSignature = {array(DType::Float32), array(DType::Float32), array(DType::Int64),
                                          scalar(DType::Int64)};

// A kernel of one shape, n levels deep.
using Shape = std::string (*)(int n);

std::string assign(const std::string& value) { return std::string(kHeader) + "    out[0] = " + value + "\n"; }

const std::pair<const char*, Shape> kShapes[] = {
    {"sum", [](int n) { return assign("x[0]" + repeat(" + x[0]", n)); }},
    {"unary minus", [](int n) { return assign(repeat("-", n) + "x[0]"); }},
    {"not", [](int n) { return assign(repeat("not ", n) + "x[0]"); }},
    {"powers", [](int n) { return assign(repeat("x[0] ** ", n) + "x[0]"); }},
    {"conditionals", [](int n) { return assign(repeat("x[0] if x[1] > 0 else ", n) + "x[0]"); }},
    {"calls", [](int n) { return assign(repeat("abs(", n) + "x[0]" + repeat(")", n)); }},
    {"right operands", [](int n) { return assign(repeat("x[0] - (", n) + "x[0]" + repeat(")", n)); }},
    {"subscripts", [](int n) { return assign("x[" + repeat("idx[", n) + "0" + repeat("]", n) + "]"); }},
    {"tuples", [](int n) {  // nested tuple types: structs of structs in C++
       return std::string(kHeader) + "    t = " + repeat("(", n) + "x[0]" + repeat(",)", n) + "\n    out[0] = t" +
              repeat("[0]", n) + "\n";
     }},
    {"elif", [](int n) {
       std::string s = std::string(kHeader) + "    if n == 0:\n        out[0] = 0\n";
       for (int i = 1; i <= n; ++i) s += "    elif n == " + std::to_string(i) + ":\n        out[0] = " + std::to_string(i) + "\n";
       return s;
     }},
    {"elif with barriers", [](int n) {  // the host target's thread loops walk these at block level
       std::string s = std::string(kHeader) + "    if n == 0:\n        jiasu.syncthreads()\n";
       for (int i = 1; i <= n; ++i) s += "    elif n == " + std::to_string(i) + ":\n        jiasu.syncthreads()\n";
       return s;
     }},
    {"nested blocks", [](int n) {
       std::string s = kHeader;
       for (int i = 1; i <= n; ++i) s += std::string(4 * i, ' ') + "if n > " + std::to_string(i) + ":\n";
       return s + std::string(4 * n + 4, ' ') + "out[0] = " + repeat("abs(", 190) + "x[0]" + repeat(")", 190) + "\n";
     }},
    {"long elif, deep last branch", [](int n) {
       std::string s = std::string(kHeader) + "    if n == 0:\n        out[0] = 0\n";
       for (int i = 1; i <= n; ++i) s += "    elif n == " + std::to_string(i) + ":\n        out[0] = 1\n";
       return s + "    else:\n        out[0] = " + repeat("-abs(", 90) + "x[0]" + repeat(")", 90) + "\n";
     }},
};

bool parses(Shape shape, int n) {
  try {
    fe::parse(fe::SourceText{shape(n), "k.py", 1});
    return true;
  } catch (const fe::CompileError&) {
    return false;
  }
}

// The largest n for which the shape parses: doubling n until it fails, then halving the gap.
int limit_of(Shape shape) {
  int good = 0, bad = 1;
  while (parses(shape, bad)) good = bad, bad *= 2;
  EXPECT_GT(good, 0);
  while (bad - good > 1) {
    int middle = good + (bad - good) / 2;
    (parses(shape, middle) ? good : bad) = middle;
  }
  return good;
}

TEST(Limits, AtEachLimitEveryStageFitsInOneMebibyteOfStack) {
  size_t most = 0;
  for (const auto& [name, shape] : kShapes) {
    const int n = limit_of(shape);
    const std::string text = shape(n);
    size_t used = stack_used_by([&] {
      fe::Program program = fe::check(python(text), kSignature);
      emit::emit_cuda(program);
      emit::emit_host(program);
    });
    std::cout << "  " << name << " at n = " << n << ": " << used / 1024 << " KiB of stack\n";
    most = std::max(most, used);
  }
  std::cout << "  most: " << most / 1024 << " KiB of " << kStack / 1024 << "\n";
}

// f0 calls f1, which calls f2, ...: the chain ends in a CompileError once its calls take
// kCallChainStack of stack, and the function checked last may still be at every limit.
fe::GlobalValue device_chain(int length, const std::string& last_body) {
  fe::GlobalValue next = device_function("def f(a):\n    return " + last_body + "\n");
  for (int i = length - 1; i > 0; --i) {
    Globals globals{{"g", next}};
    next = device_function("def f" + std::to_string(i) + "(a):\n    if a > 0:\n        return g(a) + 1\n    return g(a - 1) - 1\n",
                           globals);
  }
  return next;
}

TEST(Limits, ChainsOfDeviceFunctionCallsEndInACompileError) {
  const std::string deep = repeat("abs(", 190) + "a" + repeat(")", 190);
  bool refused = false;
  for (int length : {1, 10, 100, 10000}) {
    auto kernel = python("def k(x, out, idx, n):\n    out[0] = g(x[0])\n", Globals{{"g", device_chain(length, deep)}});
    size_t used = stack_used_by([&] {
      try {
        fe::Program program = fe::check(kernel, kSignature);
        emit::emit_cuda(program);
        emit::emit_host(program);
      } catch (const fe::CompileError& e) {
        EXPECT_NE(e.message().find("device function calls nested too deeply"), std::string::npos) << e.what();
        EXPECT_EQ(e.file(), "k.py");
        refused = true;
      }
    });
    std::cout << "  a chain of " << length << " calls: " << used / 1024 << " KiB of stack\n";
  }
  EXPECT_TRUE(refused);
}

struct Refusal {
  const char* name;
  std::string text;
  int line, column;
  std::string message;
};

std::string location_and_message(const std::string& text) {
  try {
    fe::parse(fe::SourceText{text, "k.py", 1});
  } catch (const fe::CompileError& e) {
    return e.file() + ":" + std::to_string(e.line()) + ":" + std::to_string(e.column()) + ": " + e.message();
  }
  return "no error";
}

TEST(Limits, TooDeepCodeFailsWithItsPlaceAndTheLimit) {
  const std::string nested = "expression too deeply nested (more than 200 levels)";
  // "    out[0] = " is 13 columns: the first term is at column 14, and each " + x[0]" takes 7.
  EXPECT_EQ(location_and_message(kShapes[0].second(10000)),
            "k.py:2:" + std::to_string(14 + 4 + 1 + 7 * 998) +
                ": expression too deeply nested (more than 1000 levels, each operator of a chain such as a + b + c "
                "counting as one)");
  EXPECT_EQ(location_and_message(assign(repeat("-", 100000) + "x[0]")), "k.py:2:" + std::to_string(14 + 199) + ": " + nested);
  // x[0][0]...: the 200th subscript makes 201 levels (x is the first).
  EXPECT_EQ(location_and_message(assign("x" + repeat("[0]", 1000))), "k.py:2:" + std::to_string(14 + 1 + 3 * 199) + ": " + nested);
  // The 50,000-branch chain fails at elif 999, whose block would be the 1001st level (the function body
  // is the first, the if's block the second).
  std::string chain = std::string(kHeader) + "    if n == 0:\n        out[0] = 0\n";
  for (int i = 1; i < 50000; ++i) chain += "    elif n == " + std::to_string(i) + ":\n        out[0] = 1\n";
  EXPECT_EQ(location_and_message(chain), "k.py:" + std::to_string(2 + 2 * 999) +
                                             ":5: blocks too deeply nested (more than 1000 levels, each elif counting "
                                             "as one): split the if/elif chain");
}

TEST(Limits, DeeplyNestedTupleGlobalsAreRefused) {
  fe::GlobalValue tuple = int_value(1);
  for (int level = 0; level < 1000; ++level) {
    fe::GlobalValue outer;
    outer.kind = fe::GlobalValue::Tuple;
    outer.items.push_back(std::move(tuple));
    tuple = std::move(outer);
  }
  try {
    fe::check(python("def k(x, out, idx, n):\n    out[0] = T[0]\n", Globals{{"T", tuple}}), kSignature);
    FAIL() << "expected a CompileError";
  } catch (const fe::CompileError& e) {
    EXPECT_EQ(e.line(), 2);
    EXPECT_EQ(e.column(), 14);
    EXPECT_EQ(e.message(), "global 'T' is a tuple nested more than 200 levels deep");
  }
}

}  // namespace
}  // namespace jiasu::testing
