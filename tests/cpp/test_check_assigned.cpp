// check(): definite assignment. A read of a local variable that some path reaches without assigning it
// (Python's UnboundLocalError) is a CompileError at the read; every kernel whose reads Python always
// finds assigned compiles.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "frontend_test_support.hpp"

namespace jiasu::fe {
namespace {

using testing::array;
using testing::python;
using testing::scalar;

const std::vector<Type> kArrayAndInt = {array(DType::Float32), scalar(DType::Int64)};

std::string may_be_unassigned(const char* name, int line) {
  return std::string("local variable '") + name + "' may be unassigned here: it is assigned at line " +
         std::to_string(line) + ", but not on every path that reaches this line";
}

struct Case {
  const char* name;
  const char* source;  // def k(a, n): a float32 array and an int64
  std::string message;
  int line;
  int column;
};
std::ostream& operator<<(std::ostream& out, const Case& c) { return out << c.name; }

class Unassigned : public ::testing::TestWithParam<Case> {};

TEST_P(Unassigned, IsACompileErrorAtTheRead) {
  const Case& c = GetParam();
  try {
    check(python(c.source), kArrayAndInt);
    ADD_FAILURE() << "no error for:\n" << c.source;
  } catch (const CompileError& e) {
    EXPECT_EQ(e.message(), c.message);
    EXPECT_EQ(e.line(), c.line) << e.message();
    EXPECT_EQ(e.column(), c.column) << e.message();
  }
}

INSTANTIATE_TEST_SUITE_P(Branches, Unassigned, ::testing::Values(
    Case{"IfWithoutElse", "def k(a, n):\n    if n > 0:\n        y = 1\n    a[0] = y\n", may_be_unassigned("y", 3), 4, 12},
    Case{"ElifWithoutElse",
         "def k(a, n):\n    if n > 0:\n        y = 1\n    elif n < 0:\n        y = 2\n    a[0] = y\n",
         may_be_unassigned("y", 3), 6, 12},
    Case{"OneBranchOfTwo", "def k(a, n):\n    if n > 0:\n        y = 1\n    else:\n        a[1] = 2\n    a[0] = y + 1\n",
         may_be_unassigned("y", 3), 6, 12},
    Case{"NestedIfMissesAPath",
         "def k(a, n):\n    if n > 0:\n        if n > 5:\n            y = 1\n    else:\n        y = 2\n    a[0] = y\n",
         may_be_unassigned("y", 4), 7, 12},
    Case{"LiteralFalse", "def k(a, n):\n    if False:\n        y = 1\n    a[0] = y\n", may_be_unassigned("y", 3), 4, 12},
    Case{"ReadInTheCondition", "def k(a, n):\n    if n > 0:\n        y = 1\n    if y > 0:\n        a[0] = 1\n",
         may_be_unassigned("y", 3), 4, 8},
    Case{"ReadInATarget", "def k(a, n):\n    if n > 0:\n        i = 1\n    a[i] = 1.0\n", may_be_unassigned("i", 3), 4, 7},
    Case{"TupleTargets", "def k(a, n):\n    if n > 0:\n        x, y = 1, 2\n    a[0] = x + y\n",
         may_be_unassigned("x", 3), 4, 12},
    Case{"AugmentedAssignmentReads", "def k(a, n):\n    if n > 0:\n        y = 1\n    y += 1\n",
         may_be_unassigned("y", 3), 4, 5},
    Case{"AugmentedAssignmentOfNothing", "def k(a, n):\n    y += 1\n", "local variable 'y' is used before it is assigned", 2, 5},
    Case{"ReadBeforeTheAssignment", "def k(a, n):\n    a[0] = y\n    y = 1\n", "local variable 'y' is used before it is assigned",
         2, 12},
    Case{"ReturnOnAnotherPath",
         "def k(a, n):\n    if n > 0:\n        y = 1\n    elif n > 1:\n        return\n    a[0] = y\n",
         may_be_unassigned("y", 3), 6, 12}));

INSTANTIATE_TEST_SUITE_P(Loops, Unassigned, ::testing::Values(
    Case{"ForBodyMayNotRun", "def k(a, n):\n    for i in range(n):\n        y = i\n    a[0] = y\n", may_be_unassigned("y", 3), 4, 12},
    Case{"ForVariableAfterTheLoop", "def k(a, n):\n    for i in range(n):\n        a[i] = 1.0\n    a[0] = i\n",
         may_be_unassigned("i", 2), 4, 12},
    Case{"EmptyLiteralRange", "def k(a, n):\n    for i in range(3, 3):\n        y = i\n    a[0] = y\n", may_be_unassigned("y", 3), 4, 12},
    Case{"WrongWayLiteralRange", "def k(a, n):\n    for i in range(0, 4, -1):\n        y = i\n    a[0] = y\n",
         may_be_unassigned("y", 3), 4, 12},
    Case{"WhileBodyMayNotRun", "def k(a, n):\n    while n > 0:\n        y = n\n        n -= 1\n    a[0] = y\n",
         may_be_unassigned("y", 3), 5, 12},
    Case{"BreakBeforeTheAssignment",
         "def k(a, n):\n    for i in range(4):\n        if a[i] > 0:\n            break\n        y = i\n    a[0] = y\n",
         may_be_unassigned("y", 5), 6, 12},
    Case{"ContinueBeforeTheAssignment",
         "def k(a, n):\n    for i in range(4):\n        if i == n:\n            continue\n        y = i\n    a[0] = y\n",
         may_be_unassigned("y", 5), 6, 12},
    Case{"WhileTrueBreakBeforeTheAssignment",
         "def k(a, n):\n    while True:\n        if n > 0:\n            break\n        y = 1\n        break\n    a[0] = y\n",
         may_be_unassigned("y", 5), 7, 12},
    Case{"AssignedLaterInTheBody",  // the first pass reads it before anything assigned it
         "def k(a, n):\n    for i in range(n):\n        if i > 0:\n            a[i] = last\n        last = a[i]\n",
         "local variable 'last' is used before it is assigned", 4, 20},
    Case{"InnerLoopMayNotRun",
         "def k(a, n):\n    for i in range(4):\n        for j in range(n):\n            y = j\n    a[0] = y\n",
         may_be_unassigned("y", 4), 5, 12}));

// Kernels Python runs without UnboundLocalError on every path compile.
TEST(Assigned, EveryPathAssigningIsAccepted) {
  const char* kernels[] = {
      // both branches, and every branch of an elif chain
      "def k(a, n):\n    if n > 0:\n        y = 1\n    else:\n        y = 2\n    a[0] = y\n",
      "def k(a, n):\n    if n > 0:\n        y = 1\n    elif n < 0:\n        y = 2\n    else:\n        y = 3\n    a[0] = y\n",
      // a branch that returns needs no assignment
      "def k(a, n):\n    if n > 0:\n        y = 1\n    else:\n        return\n    a[0] = y\n",
      "def k(a, n):\n    if n <= 0:\n        return\n    y = 1\n    a[0] = y\n",
      // assigned before the loop, and again in it
      "def k(a, n):\n    y = 0\n    for i in range(n):\n        y = i\n    a[0] = y\n",
      // inside the body, after its assignment, and the loop variable inside the body
      "def k(a, n):\n    for i in range(n):\n        y = i\n        a[i] = y + i\n",
      // a literal range runs its body: after it the loop variable and the body's variables are set
      "def k(a, n):\n    for i in range(4):\n        y = i\n    a[0] = y + i\n",
      "def k(a, n):\n    for i in range(3, 0, -1):\n        y = i\n    a[0] = y\n",
      "def k(a, n):\n    for i in range(0, 8, 2):\n        if i == n:\n            y = 1\n            continue\n        y = 2\n    a[0] = y\n",
      // `while True` ends only by break, after the assignment
      "def k(a, n):\n    while True:\n        y = n\n        if y > 3:\n            break\n        n += 1\n    a[0] = y\n",
      "def k(a, n):\n    while 1:\n        if n > 0:\n            y = 1\n            break\n        n += 1\n    a[0] = y\n",
      // `if True` always takes its body
      "def k(a, n):\n    if True:\n        y = 1\n    a[0] = y\n",
      // augmented assignment of an assigned variable; a parameter assigned again
      "def k(a, n):\n    y = 1\n    y += n\n    n += y\n    a[0] = y + n\n",
      // a read in a loop body of a variable assigned earlier in the same pass
      "def k(a, n):\n    for i in range(n):\n        last = a[i]\n        if i > 0:\n            a[i] = last\n",
      // tuple targets from left to right: i is assigned before a[i] is stored
      "def k(a, n):\n    i, a[i] = 1, 2.0\n",
      // code after return never runs, so it reads nothing
      "def k(a, n):\n    y = 1\n    if n > 0:\n        return\n        y += 1\n    a[0] = y\n",
  };
  for (const char* kernel : kernels) {
    try {
      check(python(kernel), kArrayAndInt);
    } catch (const CompileError& e) {
      ADD_FAILURE() << e.what() << "\nfor:\n" << kernel;
    }
  }
}

TEST(Assigned, ALoopElseRunsWhenTheLoopEndsWithoutBreak) {
  // Both paths out of the loop assign y (break after y = 1; the else when no break ran), so the read is
  // fine and the error is the one about for/else itself.
  try {
    check(python("def k(a, n):\n    for i in range(n):\n        y = 1\n        break\n    else:\n        y = 2\n    a[0] = y\n"),
          kArrayAndInt);
    ADD_FAILURE() << "no error";
  } catch (const CompileError& e) {
    EXPECT_EQ(e.message(), "for/else is not supported");
  }
  try {  // the else of a loop that may not run sees the loop variable unassigned
    check(python("def k(a, n):\n    while n > 0:\n        y = 1\n        break\n    else:\n        a[0] = y\n"), kArrayAndInt);
    ADD_FAILURE() << "no error";
  } catch (const CompileError& e) {
    EXPECT_EQ(e.message(), may_be_unassigned("y", 3));
    EXPECT_EQ(e.line(), 6);
  }
}

TEST(Assigned, DeviceFunctionsFollowTheSameRule) {
  testing::Globals globals{{"pick", testing::device_function("def pick(x):\n    if x > 0:\n        y = x\n    return y\n")}};
  try {
    check(python("def k(a, n):\n    a[0] = pick(a[1])\n", globals), kArrayAndInt);
    ADD_FAILURE() << "no error";
  } catch (const CompileError& e) {
    EXPECT_EQ(e.message(), may_be_unassigned("y", 3));
    EXPECT_EQ(e.line(), 4);
    EXPECT_EQ(e.column(), 12);
  }
}

}  // namespace
}  // namespace jiasu::fe
