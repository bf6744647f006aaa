// What each elementwise operation (ops/ufuncs.def) computes on one element: a functor per operation, its
// operands already converted to the loop's type T (NumPy's loop dtype). The one definition of their
// semantics, compiled into the core for the CPU backend's loops (ops/elementwise_cpu.cpp) and embedded
// for NVRTC in every generated GPU kernel (ops/runtime/ops_cuda.h). Built on the kernel runtime
// (emit/runtime/kernel_runtime.h): NumPy's floor division, remainder, power and shifts live there.
//
// Where the results differ from NumPy's (docs/arrays.md): integer division by zero gives 0 without a
// warning; an integer to a negative integer power gives the truncated true result where NumPy raises;
// float -> integer casts of nan or out-of-range values are undefined (NumPy's are too, with a warning).
#pragma once

#include "emit/runtime/kernel_runtime.h"

namespace jiasu::ufunc {

// Integer arithmetic wraps as NumPy's does: computed in 64-bit unsigned, where overflow is defined.
template <typename T>
JIASU_FN unsigned long long bits_u64(T v) { return static_cast<unsigned long long>(v); }

#define JIASU_UFUNC_WRAPPING(Name, op)                                                            \
  struct Name {                                                                                   \
    template <typename T>                                                                         \
    JIASU_FN T operator()(T a, T b) const {                                                       \
      if constexpr (traits<T>::is_signed || traits<T>::is_unsigned)                               \
        return static_cast<T>(bits_u64(a) op bits_u64(b));                                        \
      else return cast<T>(widen(a) op widen(b));                                                  \
    }                                                                                             \
  };
JIASU_UFUNC_WRAPPING(Add, +)
JIASU_UFUNC_WRAPPING(Subtract, -)
JIASU_UFUNC_WRAPPING(Multiply, *)
#undef JIASU_UFUNC_WRAPPING

struct Divide {
  template <typename T> JIASU_FN T operator()(T a, T b) const { return cast<T>(widen(a) / widen(b)); }
};
struct FloorDivide {
  template <typename T> JIASU_FN T operator()(T a, T b) const { return floordiv(a, b); }
};
struct Mod {
  template <typename T> JIASU_FN T operator()(T a, T b) const { return mod(a, b); }
};
struct Power {
  template <typename T> JIASU_FN T operator()(T a, T b) const { return power(a, b); }
};

// NumPy's maximum/minimum: nan wins (from either side).
struct Maximum {
  template <typename T> JIASU_FN T operator()(T a, T b) const {
    if constexpr (is_floating_v<T>) {
      if (isnan_(a)) return a;
      if (isnan_(b)) return b;
    }
    return widen(a) >= widen(b) ? a : b;
  }
};
struct Minimum {
  template <typename T> JIASU_FN T operator()(T a, T b) const {
    if constexpr (is_floating_v<T>) {
      if (isnan_(a)) return a;
      if (isnan_(b)) return b;
    }
    return widen(a) <= widen(b) ? a : b;
  }
};
struct Arctan2 {
  template <typename T> JIASU_FN T operator()(T a, T b) const { return atan2_(a, b); }
};

#define JIASU_UFUNC_COMPARE(Name, op) \
  struct Name { \
    template <typename T> JIASU_FN bool operator()(T a, T b) const { return widen(a) op widen(b); } \
  };
JIASU_UFUNC_COMPARE(Equal, ==)
JIASU_UFUNC_COMPARE(NotEqual, !=)
JIASU_UFUNC_COMPARE(Less, <)
JIASU_UFUNC_COMPARE(LessEqual, <=)
JIASU_UFUNC_COMPARE(Greater, >)
JIASU_UFUNC_COMPARE(GreaterEqual, >=)
#undef JIASU_UFUNC_COMPARE

// Integers and bool only (the type rules see to it).
struct BitwiseAnd {
  template <typename T> JIASU_FN T operator()(T a, T b) const { return static_cast<T>(a & b); }
};
struct BitwiseOr {
  template <typename T> JIASU_FN T operator()(T a, T b) const { return static_cast<T>(a | b); }
};
struct BitwiseXor {
  template <typename T> JIASU_FN T operator()(T a, T b) const { return static_cast<T>(a ^ b); }
};
struct LeftShift {
  template <typename T> JIASU_FN T operator()(T a, T b) const { return lshift(a, b); }
};
struct RightShift {
  template <typename T> JIASU_FN T operator()(T a, T b) const { return rshift(a, b); }
};
struct Invert {
  template <typename T> JIASU_FN T operator()(T a) const {
    if constexpr (is_same_v<T, bool>) return !a;
    else return static_cast<T>(~a);
  }
};

// The logical functions run on bool operands (any value's truth: x != 0, nan is true).
struct LogicalAnd {
  JIASU_FN bool operator()(bool a, bool b) const { return a && b; }
};
struct LogicalOr {
  JIASU_FN bool operator()(bool a, bool b) const { return a || b; }
};
struct LogicalXor {
  JIASU_FN bool operator()(bool a, bool b) const { return a != b; }
};
struct LogicalNot {
  JIASU_FN bool operator()(bool a) const { return !a; }
};

struct Negative {
  template <typename T> JIASU_FN T operator()(T a) const {
    if constexpr (traits<T>::is_signed || traits<T>::is_unsigned) return static_cast<T>(0ULL - bits_u64(a));
    else return cast<T>(-widen(a));
  }
};
struct Positive {
  template <typename T> JIASU_FN T operator()(T a) const { return a; }
};
struct Absolute {
  template <typename T> JIASU_FN T operator()(T a) const {
    if constexpr (is_same_v<T, bool>) return a;
    else return abs_(a);
  }
};
struct Square {
  template <typename T> JIASU_FN T operator()(T a) const { return Multiply{}(a, a); }
};
// -1, 0 or 1 (nan for nan), in the operand's type.
struct Sign {
  template <typename T> JIASU_FN T operator()(T a) const {
    if constexpr (is_floating_v<T>) {
      if (isnan_(a)) return a;
    }
    auto w = widen(a);
    return cast<T>(w > 0 ? 1 : w < 0 ? -1 : 0);
  }
};

// Float functions on float, double and the half types (computed in float, rounded back).
#define JIASU_UFUNC_MATH(Name, function) \
  struct Name { \
    template <typename T> JIASU_FN T operator()(T a) const { return cast<T>(function(widen(a))); } \
  };
JIASU_UFUNC_MATH(Sqrt, sqrt_)
JIASU_UFUNC_MATH(Exp, exp_)
JIASU_UFUNC_MATH(Log, log_)
JIASU_UFUNC_MATH(Log2, log2_)
JIASU_UFUNC_MATH(Log10, log10_)
JIASU_UFUNC_MATH(Log1p, log1p_)
JIASU_UFUNC_MATH(Expm1, expm1_)
JIASU_UFUNC_MATH(Sin, sin_)
JIASU_UFUNC_MATH(Cos, cos_)
JIASU_UFUNC_MATH(Tan, tan_)
JIASU_UFUNC_MATH(Sinh, sinh_)
JIASU_UFUNC_MATH(Cosh, cosh_)
JIASU_UFUNC_MATH(Tanh, tanh_)
JIASU_UFUNC_MATH(Arcsin, asin_)
JIASU_UFUNC_MATH(Arccos, acos_)
JIASU_UFUNC_MATH(Arctan, atan_)
JIASU_UFUNC_MATH(Rint, detail::rint_)
#undef JIASU_UFUNC_MATH

JIASU_FN float exp2_(float x) { return ::exp2f(x); }
JIASU_FN double exp2_(double x) { return ::exp2(x); }
struct Exp2 {
  template <typename T> JIASU_FN T operator()(T a) const { return cast<T>(exp2_(widen(a))); }
};

// floor, ceil, trunc keep integers (and bool) as they are, as NumPy 2 does.
#define JIASU_UFUNC_ROUNDING(Name, function) \
  struct Name { \
    template <typename T> JIASU_FN T operator()(T a) const { \
      if constexpr (is_floating_v<T>) return cast<T>(function(widen(a))); \
      else return a; \
    } \
  };
JIASU_UFUNC_ROUNDING(Floor, detail::floor_)
JIASU_UFUNC_ROUNDING(Ceil, detail::ceil_)
JIASU_UFUNC_ROUNDING(Trunc, detail::trunc_)
#undef JIASU_UFUNC_ROUNDING

struct Isnan {
  template <typename T> JIASU_FN bool operator()(T a) const { return isnan_(a); }
};
struct Isinf {
  template <typename T> JIASU_FN bool operator()(T a) const { return isinf_(a); }
};
struct Isfinite {
  template <typename T> JIASU_FN bool operator()(T a) const { return isfinite_(a); }
};

// where(condition, x, y): the condition arrives as bool.
struct Where {
  template <typename T> JIASU_FN T operator()(bool condition, T x, T y) const { return condition ? x : y; }
};
// NumPy's clip: minimum(maximum(x, low), high), nan propagating.
struct Clip {
  template <typename T> JIASU_FN T operator()(T x, T low, T high) const { return Minimum{}(Maximum{}(x, low), high); }
};
// astype and assignment: the conversion itself happens on the way in (kernel_runtime.h's cast).
struct Copy {
  template <typename T> JIASU_FN T operator()(T a) const { return a; }
};

// ---- jiasu.nn's activations and their gradients, PyTorch's formulas, on float types, computed in float for
// the half types and in double for double. A backward function takes the gradient of the output (dy) and the
// forward's input (x).
template <typename T> using wide_t = decltype(widen(T{}));
template <typename W> JIASU_FN W sigmoid_of(W x) { return W(1) / (W(1) + exp_(-x)); }
template <typename W> JIASU_FN W gelu_cdf(W x) { return W(0.5) * (W(1) + erf_(x * W(0.70710678118654752440))); }
// tanh's approximation of gelu: 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))); its tanh term.
template <typename W> JIASU_FN W gelu_tanh_term(W x) {
  return tanh_(W(0.79788456080286535588) * (x + W(0.044715) * x * x * x));
}

// relu keeps nan, as PyTorch's does.
struct Relu {
  template <typename T> JIASU_FN T operator()(T x) const { return widen(x) > 0 || isnan_(x) ? x : cast<T>(0); }
};
struct LeakyRelu {
  template <typename T> JIASU_FN T operator()(T x, T slope) const {
    return widen(x) > 0 ? x : cast<T>(widen(x) * widen(slope));
  }
};
struct Sigmoid {
  template <typename T> JIASU_FN T operator()(T x) const { return cast<T>(sigmoid_of(widen(x))); }
};
struct Silu {
  template <typename T> JIASU_FN T operator()(T x) const { return cast<T>(widen(x) * sigmoid_of(widen(x))); }
};
struct Gelu {
  template <typename T> JIASU_FN T operator()(T x) const { return cast<T>(widen(x) * gelu_cdf(widen(x))); }
};
struct GeluTanh {
  template <typename T> JIASU_FN T operator()(T x) const {
    const wide_t<T> w = widen(x);
    return cast<T>(wide_t<T>(0.5) * w * (wide_t<T>(1) + gelu_tanh_term(w)));
  }
};

// PyTorch's threshold_backward: the gradient passes where x > 0 (and where x is nan).
struct ReluBackward {
  template <typename T> JIASU_FN T operator()(T dy, T x) const { return widen(x) <= 0 ? cast<T>(0) : dy; }
};
struct LeakyReluBackward {
  template <typename T> JIASU_FN T operator()(T dy, T x, T slope) const {
    return widen(x) > 0 ? dy : cast<T>(widen(dy) * widen(slope));
  }
};
struct SigmoidBackward {
  template <typename T> JIASU_FN T operator()(T dy, T x) const {
    const wide_t<T> s = sigmoid_of(widen(x));
    return cast<T>(widen(dy) * s * (wide_t<T>(1) - s));
  }
};
struct TanhBackward {
  template <typename T> JIASU_FN T operator()(T dy, T x) const {
    const wide_t<T> t = tanh_(widen(x));
    return cast<T>(widen(dy) * (wide_t<T>(1) - t * t));
  }
};
struct SiluBackward {
  template <typename T> JIASU_FN T operator()(T dy, T x) const {
    const wide_t<T> w = widen(x), s = sigmoid_of(w);
    return cast<T>(widen(dy) * s * (wide_t<T>(1) + w * (wide_t<T>(1) - s)));
  }
};
// d/dx x Phi(x) = Phi(x) + x phi(x), phi the standard normal density.
struct GeluBackward {
  template <typename T> JIASU_FN T operator()(T dy, T x) const {
    using W = wide_t<T>;
    const W w = widen(x);
    const W density = W(0.39894228040143267794) * exp_(W(-0.5) * w * w);
    return cast<T>(widen(dy) * (gelu_cdf(w) + w * density));
  }
};
struct GeluTanhBackward {
  template <typename T> JIASU_FN T operator()(T dy, T x) const {
    using W = wide_t<T>;
    const W w = widen(x), t = gelu_tanh_term(w);
    const W inner_slope = W(0.79788456080286535588) * (W(1) + W(3 * 0.044715) * w * w);
    return cast<T>(widen(dy) * (W(0.5) * (W(1) + t) + W(0.5) * w * (W(1) - t * t) * inner_slope));
  }
};

}  // namespace jiasu::ufunc
