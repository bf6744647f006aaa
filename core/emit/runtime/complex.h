// complex64 / complex128 in kernels and in the array operations: NumPy's layout (real part first), Python's
// operators and the cmath functions, for both targets. The functions follow CPython's cmath (C99 Annex G's
// special values: infinities, nans and signed zeros) as Numba's CUDA target does, so a kernel gives what the
// same Python code gives to within a few ulps. Math functions overload the real ones of kernel_runtime.h
// (exp_, sqrt_, ...), so one builtin row serves math, cmath and numpy spellings.
#pragma once

namespace jiasu {

// Converts from any real value (imaginary part 0) and, explicitly, to one (the real part, as NumPy's astype).
template <typename F>
struct complex {
  F re, im;
  complex() = default;
  JIASU_FN constexpr complex(F r, F i) : re(r), im(i) {}
  template <typename T>
  JIASU_FN constexpr complex(T r) : re(static_cast<F>(widen(r))), im(0) {}
  template <typename G>
  JIASU_FN constexpr complex(complex<G> c) : re(static_cast<F>(c.re)), im(static_cast<F>(c.im)) {}
  template <typename T>
  JIASU_FN explicit operator T() const { return static_cast<T>(re); }
};
using complex64 = complex<float>;
using complex128 = complex<double>;

template <typename F> JIASU_FN complex<F> operator+(complex<F> a, complex<F> b) { return {a.re + b.re, a.im + b.im}; }
template <typename F> JIASU_FN complex<F> operator-(complex<F> a, complex<F> b) { return {a.re - b.re, a.im - b.im}; }
template <typename F> JIASU_FN complex<F> operator-(complex<F> a) { return {-a.re, -a.im}; }
template <typename F>
JIASU_FN complex<F> operator*(complex<F> a, complex<F> b) {
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
// CPython's quotient (Smith's method, scaled by the larger part of b); division by 0 gives nans as NumPy's.
template <typename F>
JIASU_FN complex<F> operator/(complex<F> a, complex<F> b) {
  F abs_re = fabs_(b.re), abs_im = fabs_(b.im);
  if (abs_re >= abs_im) {
    if (abs_re == 0) return {a.re / abs_re, a.im / abs_re};
    F ratio = b.im / b.re, denom = b.re + b.im * ratio;
    return {(a.re + a.im * ratio) / denom, (a.im - a.re * ratio) / denom};
  }
  if (abs_im >= abs_re) {
    F ratio = b.re / b.im, denom = b.re * ratio + b.im;
    return {(a.re * ratio + a.im) / denom, (a.im * ratio - a.re) / denom};
  }
  F not_a_number = (abs_re - abs_re) / (abs_re - abs_re);  // b has a nan part
  return {not_a_number, not_a_number};
}
template <typename F> JIASU_FN bool operator==(complex<F> a, complex<F> b) { return a.re == b.re && a.im == b.im; }
template <typename F> JIASU_FN bool operator!=(complex<F> a, complex<F> b) { return !(a == b); }
template <typename F> JIASU_FN bool operator!=(complex<F> a, int zero) { return a.re != zero || a.im != zero; }
// NumPy's order of complex numbers (np.less, np.maximum, ...): by real part, then imaginary part. Python's own
// operators refuse to compare complex numbers; the front end sees to that.
template <typename F> JIASU_FN bool operator<(complex<F> a, complex<F> b) { return a.re < b.re || (a.re == b.re && a.im < b.im); }
template <typename F> JIASU_FN bool operator>(complex<F> a, complex<F> b) { return b < a; }
template <typename F> JIASU_FN bool operator<=(complex<F> a, complex<F> b) { return a.re < b.re || (a.re == b.re && a.im <= b.im); }
template <typename F> JIASU_FN bool operator>=(complex<F> a, complex<F> b) { return b <= a; }

template <typename T> struct complex_parts { using type = void; };
template <typename F> struct complex_parts<complex<F>> { using type = F; };
template <typename T> constexpr bool is_complex_v = !is_same_v<typename complex_parts<T>::type, void>;

// ---- Parts and classification
template <typename F> JIASU_FN complex<F> conj_(complex<F> z) { return {z.re, -z.im}; }
template <typename T> JIASU_FN T conj_(T x) { return x; }
template <typename F> JIASU_FN F abs_(complex<F> z) { return hypot_(z.re, z.im); }
template <typename F> JIASU_FN F phase_(complex<F> z) { return atan2_(z.im, z.re); }
template <typename F> JIASU_FN bool isnan_(complex<F> z) { return isnan(z.re) || isnan(z.im); }
template <typename F> JIASU_FN bool isinf_(complex<F> z) { return isinf(z.re) || isinf(z.im); }
template <typename F> JIASU_FN bool isfinite_(complex<F> z) { return isfinite(z.re) && isfinite(z.im); }
// cmath.polar into the kernel's tuple struct R of two floats.
template <typename R, typename F> JIASU_FN R polar_(complex<F> z) { return R{abs_(z), phase_(z)}; }

// cmath.rect(r, phi): r * (cos phi + i sin phi), keeping zeros (and their signs) where r is infinite.
template <typename F>
JIASU_FN complex<F> rect_(F r, F phi) {
  if (!isfinite(phi)) {
    if (r == 0) return {fabs_(r), F(0)};  // rect(0, inf or nan) is 0
    if (isinf(r)) return {r, phi};
  }
  F re = cos_(phi), im = sin_(phi);
  re = re == 0 && isinf(r) ? re / r : re * r;  // 0 * inf would be nan; 0 / inf keeps the zero, sign xor'ed
  im = im == 0 && isinf(r) ? im / r : im * r;
  return {re, im};
}

// ---- Exponentials and logarithms
template <typename F>
JIASU_FN complex<F> exp_(complex<F> z) {
  F x = z.re, y = z.im;
  if (isfinite(x)) {
    if (isfinite(y)) {
      F r = exp_(x);
      return {r * cos_(y), r * sin_(y)};
    }
    F not_a_number = y - y;
    return {not_a_number, not_a_number};
  }
  if (isnan(x)) return y != 0 ? complex<F>{x, x} : complex<F>{x, y};
  if (x > 0) {  // +inf
    if (!isfinite(y)) return {x, y - y};
    F re = cos_(y), im = sin_(y);
    return {re != 0 ? re * x : re, im != 0 ? im * x : im};  // exp(inf + 0j) is inf + 0j, not a nan part
  }
  if (isfinite(y)) {  // -inf
    F r = exp_(x);
    return {r * cos_(y), r * sin_(y)};
  }
  return {F(0), F(0)};
}

template <typename F> JIASU_FN complex<F> log_(complex<F> z) { return {log_(hypot_(z.re, z.im)), atan2_(z.im, z.re)}; }
template <typename F> JIASU_FN complex<F> log_(complex<F> z, complex<F> base) { return log_(z) / log_(base); }
template <typename F>
JIASU_FN complex<F> log2_(complex<F> z) {  // np.log2
  complex<F> l = log_(z);
  return {l.re / F(0.6931471805599453094), l.im / F(0.6931471805599453094)};
}
// log10 divides the parts by ln 10: better at infinities than log(z) / log(10).
template <typename F>
JIASU_FN complex<F> log10_(complex<F> z) {
  complex<F> l = log_(z);
  return {l.re / F(2.302585092994045684), l.im / F(2.302585092994045684)};
}

// NumPy's npy_csqrt (Algorithm 312, CACM 10, 1967), scaled where a part could overflow.
template <typename F>
JIASU_FN complex<F> sqrt_(complex<F> z) {
  F a = z.re, b = z.im;
  if (a == 0 && b == 0) return {F(0), b};
  if (isinf(b)) return {fabs_(b), b};
  if (isnan(a)) return {a, a};
  if (isinf(a)) {
    F nan_or_zero = b - b;
    if (a < 0) return {fabs_(nan_or_zero), copysign_(a, b)};
    return {a, copysign_(nan_or_zero, b)};
  }
  const F threshold = (sizeof(F) == 8 ? F(1.7976931348623157e308) : F(3.4028234663852886e38)) / F(2.414213562373095);
  bool scale = fabs_(a) >= threshold || fabs_(b) >= threshold;
  if (scale) {
    a *= F(0.25);
    b *= F(0.25);
  }
  F re, im;
  if (a >= 0) {
    F t = sqrt_((a + hypot_(a, b)) * F(0.5));
    re = t;
    im = b / (2 * t);
  } else {
    F t = sqrt_((-a + hypot_(a, b)) * F(0.5));
    re = fabs_(b) / (2 * t);
    im = copysign_(t, b);
  }
  return scale ? complex<F>{re * 2, im} : complex<F>{re, im};
}

// z ** w as CPython computes it: integer exponents up to 100 by repeated squaring, others through polar form.
template <typename F>
JIASU_FN complex<F> power(complex<F> base, complex<F> exponent) {
  if (exponent.im == 0 && exponent.re == detail::trunc_(exponent.re) && fabs_(exponent.re) <= 100) {
    long long n = static_cast<long long>(exponent.re);
    complex<F> result{F(1), F(0)}, factor = base;
    for (long long e = n < 0 ? -n : n; e != 0; e >>= 1) {
      if (e & 1) result = result * factor;
      factor = factor * factor;
    }
    return n < 0 ? complex<F>{F(1), F(0)} / result : result;
  }
  if (exponent.re == 0 && exponent.im == 0) return {F(1), F(0)};
  if (base.re == 0 && base.im == 0) {
    if (exponent.im != 0 || exponent.re < 0) {  // CPython raises ZeroDivisionError; NumPy gives nans
      F not_a_number = base.re / base.re;
      return {not_a_number, not_a_number};
    }
    return {F(0), F(0)};
  }
  F magnitude = hypot_(base.re, base.im), length = pow_(magnitude, exponent.re), angle = atan2_(base.im, base.re);
  F phase = angle * exponent.re;
  if (exponent.im != 0) {
    length /= exp_(angle * exponent.im);
    phase += exponent.im * log_(magnitude);
  }
  return {length * cos_(phase), length * sin_(phase)};
}

// ---- Hyperbolic and trigonometric functions (sin z = -i sinh(iz), and so on)
template <typename F>
JIASU_FN complex<F> cosh_(complex<F> z) {
  F x = z.re, y = z.im;
  if (isinf(x)) {
    F re, im;
    if (isnan(y) || y == 0) {
      re = fabs_(x);
      im = y;
    } else {
      re = copysign_(x, cos_(y));
      im = copysign_(x, sin_(y));
    }
    return {re, x < 0 ? -im : im};
  }
  return {cos_(y) * cosh_(x), sin_(y) * sinh_(x)};
}

template <typename F>
JIASU_FN complex<F> sinh_(complex<F> z) {
  F x = z.re, y = z.im;
  if (isinf(x)) {
    if (isnan(y)) return {x, y};
    F re = cos_(y), im = sin_(y);
    return {re != 0 ? re * x : re, im != 0 ? im * fabs_(x) : im};
  }
  return {cos_(y) * sinh_(x), sin_(y) * cosh_(x)};
}

// CPython's c_tanh.
template <typename F>
JIASU_FN complex<F> tanh_(complex<F> z) {
  F x = z.re, y = z.im;
  if (isinf(x)) return {copysign_(F(1), x), isinf(y) ? F(0) : copysign_(F(0), sin_(2 * y))};
  F tx = tanh_(x), ty = tan_(y), cx = 1 / cosh_(x), txty = tx * ty, denom = 1 + txty * txty;
  return {tx * (1 + ty * ty) / denom, ((ty / denom) * cx) * cx};
}

template <typename F> JIASU_FN complex<F> times_i(complex<F> z) { return {-z.im, z.re}; }
template <typename F> JIASU_FN complex<F> times_minus_i(complex<F> z) { return {z.im, -z.re}; }
template <typename F> JIASU_FN complex<F> cos_(complex<F> z) { return cosh_(times_i(z)); }
template <typename F> JIASU_FN complex<F> sin_(complex<F> z) { return times_minus_i(sinh_(times_i(z))); }
template <typename F> JIASU_FN complex<F> tan_(complex<F> z) { return times_minus_i(tanh_(times_i(z))); }

// Above this size a part would overflow the products of the direct formulas (CPython's CM_LARGE_DOUBLE).
template <typename F> JIASU_FN F large_part() { return sizeof(F) == 8 ? F(1.7976931348623157e308 / 4) : F(3.4028234663852886e38 / 4); }
template <typename F> JIASU_FN F smallest_normal() { return sizeof(F) == 8 ? F(2.2250738585072014e-308) : F(1.1754943508222875e-38); }
template <typename F> JIASU_FN F ln4() { return F(1.3862943611198906); }

// CPython's c_acos.
template <typename F>
JIASU_FN complex<F> acos_(complex<F> z) {
  if (fabs_(z.re) > large_part<F>() || fabs_(z.im) > large_part<F>()) {
    return {atan2_(fabs_(z.im), z.re), copysign_(log_(hypot_(z.re * F(0.5), z.im * F(0.5))) + ln4<F>(), -z.im)};
  }
  complex<F> s1 = sqrt_(complex<F>{1 - z.re, -z.im}), s2 = sqrt_(complex<F>{1 + z.re, z.im});
  return {2 * atan2_(s1.re, s2.re), asinh_(s2.re * s1.im - s2.im * s1.re)};
}

// CPython's c_acosh.
template <typename F>
JIASU_FN complex<F> acosh_(complex<F> z) {
  if (fabs_(z.re) > large_part<F>() || fabs_(z.im) > large_part<F>())
    return {log_(hypot_(z.re * F(0.5), z.im * F(0.5))) + ln4<F>(), atan2_(z.im, z.re)};
  complex<F> s1 = sqrt_(complex<F>{z.re - 1, z.im}), s2 = sqrt_(complex<F>{z.re + 1, z.im});
  return {asinh_(s1.re * s2.re + s1.im * s2.im), 2 * atan2_(s1.im, s2.re)};
}

// CPython's c_asinh.
template <typename F>
JIASU_FN complex<F> asinh_(complex<F> z) {
  if (fabs_(z.re) > large_part<F>() || fabs_(z.im) > large_part<F>())
    return {copysign_(log_(hypot_(z.re * F(0.5), z.im * F(0.5))) + ln4<F>(), z.re), atan2_(z.im, fabs_(z.re))};
  complex<F> s1 = sqrt_(complex<F>{1 + z.im, -z.re}), s2 = sqrt_(complex<F>{1 - z.im, z.re});
  return {asinh_(s1.re * s2.im - s2.re * s1.im), atan2_(z.im, s1.re * s2.re - s1.im * s2.im)};
}

template <typename F> JIASU_FN complex<F> asin_(complex<F> z) { return times_minus_i(asinh_(times_i(z))); }

// CPython's c_atanh.
template <typename F>
JIASU_FN complex<F> atanh_(complex<F> z) {
  bool negate = z.re < 0;
  if (negate) z = -z;
  const F large = sqrt_(large_part<F>()), small = sqrt_(smallest_normal<F>()), half_pi = F(1.5707963267948966);
  F ay = fabs_(z.im), re, im;
  if (isnan(z.re) || z.re > large || ay > large) {
    if (isinf(z.im)) re = copysign_(F(0), z.re);
    else if (isinf(z.re)) re = 0;
    else {
      F h = hypot_(z.re * F(0.5), z.im * F(0.5));
      re = z.re / 4 / h / h;
    }
    im = -copysign_(half_pi, -z.im);
  } else if (z.re == 1 && ay < small) {
    if (ay == 0) {
      re = inf<F>();
      im = z.im;
    } else {
      re = -log_(sqrt_(ay) / sqrt_(hypot_(ay, F(2))));
      im = copysign_(atan2_(F(2), -ay) / 2, z.im);
    }
  } else {
    F square = ay * ay, one_minus = 1 - z.re;
    re = log1p_(4 * z.re / (one_minus * one_minus + square)) * F(0.25);
    im = -atan2_(-2 * z.im, one_minus * (1 + z.re) - square) * F(0.5);
  }
  if (isnan(z.im)) im = z.im;
  return negate ? complex<F>{-re, -im} : complex<F>{re, im};
}

template <typename F>
JIASU_FN complex<F> atan_(complex<F> z) {
  complex<F> r = atanh_(times_i(z));
  return isinf(z.re) && isnan(z.im) ? complex<F>{r.im, r.re} : times_minus_i(r);  // as CPython's special value
}

// a.real and a.imag of a complex array (Part 0 and 1): strided views of that part of each element.
template <int Part, typename F, int N>
JIASU_FN ArrayA<F, N> complex_part(const ArrayA<complex<F>, N>& a) {
  ArrayA<F, N> out;
  out.data = reinterpret_cast<F*>(a.data) + Part;
  if constexpr (N > 0)
    for (int d = 0; d < N; ++d) {
      out.shape[d] = a.shape[d];
      out.strides[d] = a.strides[d];
    }
  return out;
}
template <int Part, typename F, int N>
JIASU_FN ArrayA<F, N> complex_part(const ArrayC<complex<F>, N>& a) {
  ArrayA<F, N> out;
  out.data = reinterpret_cast<F*>(a.data) + Part;
  if constexpr (N > 0) {
    long long stride = static_cast<long long>(sizeof(complex<F>));
    for (int d = N - 1; d >= 0; --d) {
      out.shape[d] = a.shape[d];
      out.strides[d] = stride;
      stride *= a.shape[d];
    }
  }
  return out;
}

}  // namespace jiasu
