// Python enums in kernels: members of an enum class used by name (Color.red, Color["red"]) and passed as
// arguments are int64 values that remember their class. Checked, run on the CPU, compiled by NVRTC, and keyed.
// `is` between bools (flag is True) is equality too.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "emit_cuda_test_support.hpp"
#include "host_test_support.hpp"
#include "program/signature.hpp"

namespace jiasu {
namespace {

using emit_test::compile_error;
using emit_test::EmitCuda;
using fe::GlobalValue;
using fe::Type;
using host_test::view;
using testing::array;
using testing::python;

// Color: a plain Enum (members numbered 0, 1, 2); Shape: an IntEnum (circle = 2, square = 500).
std::shared_ptr<const fe::EnumClass> color() {
  static auto cls = std::make_shared<fe::EnumClass>(fe::EnumClass{"Color", 0x1000, false, {{"red", 0}, {"green", 1},
                                                                                          {"blue", 2}, {"crimson", 0}}});
  return cls;
}
std::shared_ptr<const fe::EnumClass> shape() {
  static auto cls = std::make_shared<fe::EnumClass>(fe::EnumClass{"Shape", 0x2000, true, {{"circle", 2}, {"square", 500}}});
  return cls;
}

testing::Globals enums() {
  GlobalValue c, s;
  c.kind = s.kind = GlobalValue::Enum;
  c.enumeration = color();
  s.enumeration = shape();
  return {{"Color", c}, {"Shape", s}};
}

constexpr const char* kKernel =
    "def k(r, a, s):\n"
    "    r[0] = a == Color.green\n"
    "    r[1] = a is Color.red\n"
    "    r[2] = a is not Color.crimson\n"     // an alias is its member
    "    r[3] = s + 1\n"                      // an IntEnum's member is an int
    "    r[4] = Color['blue'] == Color.blue\n"
    "    r[5] = a == 0\n"                     // a plain enum's member equals no number
    "    r[6] = Shape.circle == 2\n"
    "    r[7] = s is Shape.square\n"
    "    r[8] = a == s\n"                     // members of two classes
    "    c = Color.blue if s > Shape.circle else Color.green\n"
    "    r[9] = c == Color.blue\n"
    "    r[10] = s * Shape.square\n";

std::vector<Type> signature() { return {array(DType::Int64), Type::enum_member(color()), Type::enum_member(shape())}; }

TEST(Enums, MembersCompareByClassAndValue) {
  fe::Program program = fe::check(python(kKernel, enums()), signature());
  auto kernel = compile_host_kernel(program);
  auto run = [&](long long a, long long s) {
    std::vector<long long> r(11, -1);
    auto rv = view(r);
    void* params[] = {&rv, &a, &s};
    kernel->launch({1, 1, 1}, {1, 1, 1}, params, 0);
    return r;
  };
  // a = Color.red, s = Shape.square
  EXPECT_EQ(run(0, 500), (std::vector<long long>{0, 1, 0, 501, 1, 0, 1, 1, 0, 1, 250000}));
  // a = Color.green, s = Shape.circle
  EXPECT_EQ(run(1, 2), (std::vector<long long>{1, 0, 1, 3, 1, 0, 1, 0, 0, 0, 1000}));
}

TEST_F(EmitCuda, EnumMembersCompileForTheGpu) { compile(kKernel, signature(), enums()); }

TEST(Enums, ErrorsNameTheMemberOrTheOperation) {
  auto error = [](const std::string& body) {
    return compile_error("def k(r, a):\n    " + body + "\n", {array(DType::Int64), Type::enum_member(color())}, enums());
  };
  EXPECT_EQ(error("r[0] = Color.purple"), "2:18: 'purple' is not a member of enum Color");
  EXPECT_EQ(error("r[0] = Color[0]"), "2:17: an enum class takes a member's name in quotes: Color[\"name\"]");
  EXPECT_EQ(error("r[0] = a + 1"), "2:14: unsupported operand types for +: enum(Color) and int64");
  EXPECT_EQ(error("r[0] = -a"), "2:12: bad operand type for unary -: enum(Color)");
  EXPECT_EQ(error("r[0] = a < Color.blue"), "2:14: '<' is not supported between members of enum Color");
  EXPECT_EQ(error("r[0] = a < 3"), "2:14: unsupported operand types for <: enum(Color) and int64");
  EXPECT_EQ(error("r[0] = a == Color.red == a"), "2:14: chained comparisons of enum members are not supported in kernels");
  EXPECT_EQ(error("r[0] = a is 3"), "2:14: 'is' compares enum members in kernels; compare numbers with == or !=");
  EXPECT_EQ(error("r[0] = Color.red if a == Color.red else 1"),
            "2:22: the branches of a conditional expression are enum(Color) and int64: members of one enum, or numbers");
}

TEST(Identity, BoolsAreSingletons) {
  fe::Program program = fe::check(python("def k(r, flag):\n    r[0] = flag is True\n    r[1] = flag is not False\n"),
                                  {array(DType::Int64), testing::scalar(DType::Bool)});
  auto kernel = compile_host_kernel(program);
  for (bool flag : {false, true}) {
    std::vector<long long> r(2, -1);
    auto rv = view(r);
    void* params[] = {&rv, &flag};
    kernel->launch({1, 1, 1}, {1, 1, 1}, params, 0);
    EXPECT_EQ(r, (std::vector<long long>{flag, flag}));
  }
}

TEST(Enums, ArgumentsKeyTheirClass) {
  std::string key;
  append_enum_key(key, *color());
  append_enum_key(key, *shape());
  const std::vector<Type> types = signature_types(key);
  ASSERT_EQ(types.size(), 2u);
  EXPECT_EQ(types[0], Type::enum_member(color()));
  EXPECT_EQ(types[1], Type::enum_member(shape()));
  EXPECT_TRUE(types[1].weak);  // an IntEnum's member is an int
  EXPECT_NE(types[0], Type::enum_member(shape()));
  EXPECT_NE(types[0], Type::scalar(DType::Int64));
  EXPECT_EQ(describe_signature(key), "(enum(Color), enum(Shape))");
}

}  // namespace
}  // namespace jiasu
