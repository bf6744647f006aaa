#include "program/signature.hpp"

namespace jiasu {

namespace {

// The entry at key[i], moving i past it.
fe::Type entry_type(const std::string& key, size_t& i) {
  if (key[i] == 'T' || key[i] == 'N') {  // a tuple: its count, then its items' entries (a namedtuple's named)
    const bool named = key[i] == 'N';
    const size_t count = static_cast<unsigned char>(key[i + 1]);
    i += 2;
    std::vector<fe::Type> items;
    std::vector<std::string> fields;
    for (size_t k = 0; k < count; ++k) {
      if (named) {
        const size_t length = static_cast<unsigned char>(key[i]);
        fields.push_back(key.substr(i + 1, length));
        i += 1 + length;
      }
      items.push_back(entry_type(key, i));
    }
    fe::Type tuple = fe::Type::tuple(std::move(items));
    tuple.fields = std::move(fields);
    return tuple;
  }
  auto dtype = static_cast<DType>(key[i + 1]);
  if (key[i] == 'A') {
    i += 4;
    return fe::Type::array(dtype, key[i - 2], key[i - 1] != 0);
  }
  i += 3;
  return fe::Type::scalar(dtype, key[i - 1] != 0);
}

}  // namespace

std::vector<fe::Type> signature_types(const std::string& key) {
  std::vector<fe::Type> types;
  for (size_t i = 0; i < key.size();) types.push_back(entry_type(key, i));
  return types;
}

std::string describe_signature(const std::string& key) {
  std::string out = "(";
  auto types = signature_types(key);
  for (size_t i = 0; i < types.size(); ++i) {
    const fe::Type& t = types[i];
    // A weak scalar came from a Python int or float: name it so, apart from a NumPy int64 or float64.
    std::string name = t.weak ? (t.is_float() ? "float" : "int") : fe::to_string(t);
    out += (i ? ", " : "") + name;
  }
  return out + ")";
}

}  // namespace jiasu
