// Building checked programs from Python source text in C++ tests, as the Python layer would hand it over.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "frontend/check.hpp"

namespace jiasu::testing {

inline fe::Type array(DType dtype, int ndim = 1, bool contiguous = true) {
  return fe::Type::array(dtype, ndim, contiguous);
}
inline fe::Type scalar(DType dtype) { return fe::Type::scalar(dtype); }

inline fe::GlobalValue module_value(const std::string& name) {
  fe::GlobalValue g;
  g.kind = fe::GlobalValue::Module;
  g.name = name;
  return g;
}

inline fe::GlobalValue int_value(int64_t value) {
  fe::GlobalValue g;
  g.kind = fe::GlobalValue::Int;
  g.int_value = value;
  return g;
}

using Globals = std::map<std::string, fe::GlobalValue>;

// A function's source in a module "k.py" that imports jiasu, math and numpy as np, plus `globals`.
inline std::shared_ptr<const fe::FunctionSource> python(const std::string& text, Globals globals = {}) {
  auto source = std::make_shared<fe::FunctionSource>();
  source->source = fe::SourceText{text, "k.py", 1};
  source->identity = text;
  globals.emplace("jiasu", module_value("jiasu"));
  globals.emplace("math", module_value("math"));
  globals.emplace("np", module_value("numpy"));
  source->resolve = [globals](const std::string& name) {
    auto it = globals.find(name);
    return it == globals.end() ? fe::GlobalValue{} : it->second;
  };
  return source;
}

// A @jiasu.func global.
inline fe::GlobalValue device_function(const std::string& text, Globals globals = {}) {
  fe::GlobalValue g;
  g.kind = fe::GlobalValue::Function;
  g.function = python(text, std::move(globals));
  return g;
}

}  // namespace jiasu::testing
