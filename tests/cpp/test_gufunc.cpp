// Generalized ufuncs: the layout's grammar, signatures, core-dimension binding, loop broadcasting, outputs, the
// operands' views and the per-index kernel's text.
#include <gtest/gtest.h>

#include "ops/gufunc.hpp"
#include "ops_test_support.hpp"
#include "test_support.hpp"

namespace jiasu::ops {
namespace {

using testing::message_of;
using Names = std::vector<std::vector<std::string>>;
constexpr int kScalar = GufuncParam::kScalar;

std::vector<GufuncParam> params(DType dtype, std::vector<int> ndims) {
  std::vector<GufuncParam> out;
  for (int n : ndims) out.push_back({dtype, n});
  return out;
}

Gufunc matmul_gufunc() { return Gufunc("(m,n),(n,p)->(m,p)", {params(DType::Float32, {2, 2, 2})}); }

TEST(GufuncLayout, ParsesOperandsAndDimensionNames) {
  GufuncLayout l = parse_gufunc_layout(" (m, n), (n,p) -> (m,p) ");
  EXPECT_EQ(l.inputs, (Names{{"m", "n"}, {"n", "p"}}));
  EXPECT_EQ(l.outputs, (Names{{"m", "p"}}));
  EXPECT_EQ(layout_string(l), "(m,n),(n,p)->(m,p)");
  // Scalars, several outputs, trailing commas (as Numba's grammar allows), longer names.
  l = parse_gufunc_layout("(),(rows,)->(),(rows),");
  EXPECT_EQ(l.inputs, (Names{{}, {"rows"}}));
  EXPECT_EQ(l.outputs, (Names{{}, {"rows"}}));
}

TEST(GufuncLayout, BadLayoutsAreValueErrorsSayingWhy) {
  auto why = [](const char* text) { return message_of<BadValue>([&] { parse_gufunc_layout(text); }); };
  EXPECT_EQ(why("(m,n)(n)"), "bad gufunc layout '(m,n)(n)': no '->' between the inputs and the outputs, as in "
                             "(m,n),(n,p)->(m,p)");
  EXPECT_EQ(why("(n)->(q)"), "bad gufunc layout '(n)->(q)': the output dimension q is no input's, so its length is "
                             "unknown");
  EXPECT_EQ(why("(3)->()"), "bad gufunc layout '(3)->()': a dimension is a name (m, n, rows, ...), not '3'");
  EXPECT_EQ(why("(n;m)->(n)"), "bad gufunc layout '(n;m)->(n)': unexpected ';' after n");
  EXPECT_EQ(why("(n->(n)"), "bad gufunc layout '(n->(n)': a '(' is not closed");
  EXPECT_EQ(why("(n)->(n"), "bad gufunc layout '(n)->(n': a '(' is not closed");
  EXPECT_EQ(why("n->(n)"), "bad gufunc layout 'n->(n)': expected '(' where the inputs have 'n'");
  EXPECT_EQ(why("(n)(n)->(n)"), "bad gufunc layout '(n)(n)->(n)': expected ',' between operands, not '('");
  EXPECT_EQ(why("->(n)"), "bad gufunc layout '->(n)': no inputs");
  EXPECT_EQ(why("(n)->"), "bad gufunc layout '(n)->': no outputs");
}

TEST(GufuncSignatures, MustFitTheLayout) {
  EXPECT_EQ(message_of<BadArgument>([] { Gufunc("(n)->(n)", {params(DType::Float32, {1})}); }),
            "signature (float32[:]) of the gufunc (n)->(n): it has 1 parameters and the layout has 2 operands");
  EXPECT_EQ(message_of<BadValue>([] { Gufunc("(n)->()", {params(DType::Int32, {kScalar, 1})}); }),
            "signature (int32, int32[:]) of the gufunc (n)->(): input 0 is a number where the layout gives it the "
            "core dimensions (n)");
  EXPECT_EQ(message_of<BadArgument>([] { Gufunc("()->()", {params(DType::Int32, {kScalar, kScalar})}); }),
            "signature (int32, int32) of the gufunc ()->(): output 0 is a number; outputs are arrays, which the "
            "function writes");
  EXPECT_EQ(message_of<BadArgument>([] { Gufunc("(m,n)->(m)", {params(DType::Int32, {1, 1})}); }),
            "signature (int32[:], int32[:]) of the gufunc (m,n)->(m): input 0 is an array of 1 dimensions where the "
            "layout gives it 2, (m,n)");
  EXPECT_EQ(message_of<BadArgument>([] { Gufunc("(n)->(n)", {}); }), "a gufunc needs at least one signature");
  // A 1-D array for an operand of core () is Numba's older spelling of a scalar (a 1-element view).
  Gufunc("(n),()->(n)", {params(DType::Int32, {1, 1, 1})});
}

TEST(GufuncSignatures, ChosenAsNumbaChoosesThem) {
  Gufunc f("(),()->()", {params(DType::Int32, {kScalar, kScalar, 1}), params(DType::Float64, {kScalar, kScalar, 1}),
                         params(DType::Float32, {kScalar, kScalar, 1})});
  EXPECT_EQ(f.choose({DType::Float32, DType::Float32}), 2u);  // exact, though float64 comes first
  EXPECT_EQ(f.choose({DType::Int64, DType::Int64}), 0u);      // the first whose int32 casts safely to int64
  EXPECT_EQ(f.choose({DType::Float64, DType::Float64}), 1u);
  // Numba casts from the signature's dtype to the input's: int32 -> float64 is safe, so (int32, int32) takes a
  // float64 input (which the caller then converts to int32, as Numba does).
  EXPECT_EQ(f.choose({DType::Int32, DType::Float64}), 0u);
  EXPECT_EQ(message_of<BadArgument>([&] { f.choose({DType::Int8, DType::Int8}); }),
            "no signature of the gufunc (),()->() takes inputs of dtypes (int8, int8); its signatures: (int32, int32, "
            "int32[:]); (float64, float64, float64[:]); (float32, float32, float32[:])");
}

TEST(GufuncShapes, CoreDimensionsBindAndLoopDimensionsBroadcast) {
  Gufunc f = matmul_gufunc();
  GufuncShapes s = f.shapes({{100, 4, 5}, {1, 5, 7}});
  EXPECT_EQ(s.loop, (Shape{100}));
  EXPECT_EQ(s.outputs, (std::vector<Shape>{{100, 4, 7}}));
  s = f.shapes({{12, 34, 4, 5}, {5, 7}});  // a matrix for every loop index
  EXPECT_EQ(s.loop, (Shape{12, 34}));
  EXPECT_EQ(s.outputs[0], (Shape{12, 34, 4, 7}));
  s = f.shapes({{3, 1, 4, 5}, {6, 5, 7}});  // NumPy's broadcasting of the loop dimensions
  EXPECT_EQ(s.outputs[0], (Shape{3, 6, 4, 7}));
  s = f.shapes({{4, 5}, {5, 7}});
  EXPECT_EQ(s.loop, Shape{});
  EXPECT_EQ(s.outputs[0], (Shape{4, 7}));
  s = Gufunc("(),()->()", {params(DType::Int32, {kScalar, kScalar, 1})}).shapes({{5}, {}});
  EXPECT_EQ(s.outputs[0], (Shape{5}));
}

TEST(GufuncShapes, MismatchesAreValueErrorsNamingTheShapes) {
  Gufunc f = matmul_gufunc();
  EXPECT_EQ(message_of<BadValue>([&] { f.shapes({{10, 4, 5}, {10, 6, 7}}); }),
            "the gufunc (m,n),(n,p)->(m,p) has inputs of shapes (10,4,5) (input 0) and (10,6,7) (input 1), which "
            "disagree on its core dimension n: 5 and 6");
  EXPECT_EQ(message_of<BadValue>([&] { f.shapes({{4}, {4, 7}}); }),
            "input 0 of the gufunc (m,n),(n,p)->(m,p) has shape (4,), fewer dimensions than its core dimensions (m,n)");
  EXPECT_EQ(message_of<BadValue>([&] { f.shapes({{3, 4, 5}, {2, 5, 7}}); }),
            "the gufunc (m,n),(n,p)->(m,p) has inputs whose loop dimensions (those before the core dimensions) do not "
            "broadcast together: (3,) (2,)");
  EXPECT_EQ(message_of<BadArgument>([&] { f.shapes({{4, 5}}); }),
            "the gufunc (m,n),(n,p)->(m,p) takes 2 inputs, not 1");
  // A dimension repeated within one operand must agree with itself: a square matrix.
  EXPECT_EQ(message_of<BadValue>([] {
              Gufunc("(n,n)->(n)", {params(DType::Int32, {2, 1})}).shapes({{2, 3}});
            }),
            "the gufunc (n,n)->(n) has inputs of shapes (2,3) (input 0) and (2,3) (input 0), which disagree on its "
            "core dimension n: 2 and 3");
}

TEST(GufuncPrepare, OperandsAreViewsOfLoopThenCoreDimensions) {
  Gufunc f = matmul_gufunc();
  Array a = Array::empty({3, 2, 4}, DType::Float32, kCpuDevice), b = Array::empty({4, 5}, DType::Float32, kCpuDevice);
  GufuncLaunch launch = f.prepare(0, {a, b}, {std::nullopt});
  EXPECT_EQ(launch.loop, (Shape{3}));
  EXPECT_EQ(launch.count, 3);
  ASSERT_EQ(launch.operands.size(), 3u);
  EXPECT_EQ(launch.operands[1].shape(), (Shape{3, 4, 5}));
  EXPECT_EQ(launch.operands[1].strides(), (Shape{0, 20, 4}));  // b, the same matrix at every loop index
  ASSERT_EQ(launch.outputs.size(), 1u);
  EXPECT_EQ(launch.outputs[0].shape(), (Shape{3, 2, 5}));
  EXPECT_EQ(launch.outputs[0].dtype(), DType::Float32);
  EXPECT_EQ(launch.operands[2].data(), launch.outputs[0].data());
  // No loop dimension: the kernel's loop is (1,), and the operands get a leading axis of length 1.
  launch = f.prepare(0, {a.index({IndexItem{IndexItem::Integer, 1}}), b}, {std::nullopt});
  EXPECT_EQ(launch.loop, (Shape{1}));
  EXPECT_EQ(launch.operands[0].shape(), (Shape{1, 2, 4}));
  EXPECT_EQ(launch.outputs[0].shape(), (Shape{2, 5}));
}

TEST(GufuncPrepare, GivenOutputsAreCheckedAndMayDifferByLeadingOnes) {
  Gufunc f("(n),()->(n)", {params(DType::Int32, {1, 1, 1})});
  Array x = Array::empty({4}, DType::Int32, kCpuDevice), y = Array::empty({1}, DType::Int32, kCpuDevice);
  Array out = Array::empty({4}, DType::Int32, kCpuDevice);  // the result is (1,4): y's loop dimension
  GufuncLaunch launch = f.prepare(0, {x, y}, {out});
  EXPECT_EQ(launch.operands[2].shape(), (Shape{1, 4}));
  EXPECT_EQ(launch.outputs[0].shape(), (Shape{4}));
  EXPECT_EQ(message_of<BadValue>([&] { f.prepare(0, {x, y}, {Array::empty({5}, DType::Int32, kCpuDevice)}); }),
            "output 0 of the gufunc (n),()->(n) has shape (5,) where the result has shape (1,4)");
  EXPECT_EQ(message_of<BadArgument>([&] { f.prepare(0, {x, y}, {Array::empty({4}, DType::Int64, kCpuDevice)}); }),
            "output 0 of the gufunc (n),()->(n) is an array of int64 where its signature (int32[:], int32[:], "
            "int32[:]) makes int32");
  EXPECT_EQ(message_of<BadArgument>([&] {
              f.prepare(0, {Array::empty({4}, DType::Int64, kCpuDevice), y}, {std::nullopt});
            }),
            "input 0 of the gufunc (n),()->(n) is a device array of int64 where its signature (int32[:], int32[:], "
            "int32[:]) takes int32: a device array is not converted (a Numba device array does not support "
            ".astype()); convert it first");
}

TEST(GufuncKernel, UnravelsTheLoopIndexAndCallsTheFunctionOnViews) {
  EXPECT_EQ(matmul_gufunc().kernel_source(0, 1, "gufunc_matmul"),
            "def gufunc_matmul(n, loop, arg0, arg1, arg2):\n"
            "    t = jiasu.grid(1)\n"
            "    if t < n:\n"
            "        i0 = t\n"
            "        core(arg0[i0], arg1[i0], arg2[i0])\n");
  // A number parameter gets the element; a 1-D parameter of core () the 1-element slice.
  Gufunc f("(),(),(t)->()", {{{DType::Float32, kScalar}, {DType::Float32, 1}, {DType::Float32, 1},
                              {DType::Float32, 1}}});
  EXPECT_EQ(f.kernel_source(0, 3, "g"),
            "def g(n, loop, arg0, arg1, arg2, arg3):\n"
            "    t = jiasu.grid(1)\n"
            "    if t < n:\n"
            "        k = t\n"
            "        i2 = k % loop[2]\n"
            "        k = k // loop[2]\n"
            "        i1 = k % loop[1]\n"
            "        i0 = k // loop[1]\n"
            "        core(arg0[i0, i1, i2], arg1[i0, i1, i2:i2 + 1], arg2[i0, i1, i2], arg3[i0, i1, i2:i2 + 1])\n");
}

}  // namespace
}  // namespace jiasu::ops
