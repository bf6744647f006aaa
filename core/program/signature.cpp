#include "program/signature.hpp"

#include <cstring>
#include <memory>

#include "support/error.hpp"

namespace jiasu {

namespace {

void append_int64(std::string& key, int64_t v) { key.append(reinterpret_cast<const char*>(&v), sizeof v); }

int64_t read_int64(const std::string& key, size_t& i) {
  int64_t v;
  std::memcpy(&v, key.data() + i, sizeof v);
  i += sizeof v;
  return v;
}

std::shared_ptr<const fe::RecordLayout> read_record(const std::string& key, size_t& i) {
  auto layout = std::make_shared<fe::RecordLayout>();
  layout->itemsize = read_int64(key, i);
  const size_t count = static_cast<unsigned char>(key[i++]);
  for (size_t k = 0; k < count; ++k) {
    fe::RecordField& f = layout->fields.emplace_back();
    const size_t length = static_cast<unsigned char>(key[i]);
    f.name = key.substr(i + 1, length);
    i += 1 + length;
    f.dtype = static_cast<DType>(key[i++]);
    f.offset = read_int64(key, i);
    const size_t rank = static_cast<unsigned char>(key[i++]);
    for (size_t d = 0; d < rank; ++d) f.shape.push_back(read_int64(key, i));
  }
  fe::check_record_layout(*layout);  // the key was made from a checked layout: this only sets its alignment
  return layout;
}

// The entry at key[i], moving i past it.
fe::Type entry_type(const std::string& key, size_t& i) {
  if (key[i] == 'r') return fe::Type::record_of(read_record(key, ++i));
  if (key[i] == 'R') {
    fe::Type array = fe::Type::array(DType::UInt8, key[i + 1], key[i + 2] != 0);
    i += 3;
    array.record = read_record(key, i);
    return array;
  }
  if (key[i] == 'E') {
    auto enumeration = std::make_shared<fe::EnumClass>();
    enumeration->int_valued = key[i + 1] != 0;
    i += 2;
    enumeration->identity = static_cast<uint64_t>(read_int64(key, i));
    const size_t length = static_cast<unsigned char>(key[i]);
    enumeration->name = key.substr(i + 1, length);
    i += 1 + length;
    return fe::Type::enum_member(std::move(enumeration));
  }
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

void append_enum_key(std::string& key, const fe::EnumClass& enumeration) {
  key += 'E';
  key += static_cast<char>(enumeration.int_valued);
  append_int64(key, static_cast<int64_t>(enumeration.identity));
  const std::string name = enumeration.name.substr(0, 255);
  key += static_cast<char>(name.size());
  key += name;
}

void append_record_key(std::string& key, const fe::RecordLayout& layout, int ndim, bool contiguous) {
  if (layout.fields.size() > 255) throw BadArgument("records passed to kernels have at most 255 fields");
  if (ndim < 0) {
    key += 'r';
  } else {
    key += 'R';
    key += static_cast<char>(ndim);
    key += static_cast<char>(contiguous);
  }
  append_int64(key, layout.itemsize);
  key += static_cast<char>(layout.fields.size());
  for (const fe::RecordField& f : layout.fields) {
    if (f.name.size() > 255 || f.shape.size() > 255) throw BadArgument("record field '" + f.name + "' is too large");
    key += static_cast<char>(f.name.size());
    key += f.name;
    key += static_cast<char>(f.dtype);
    append_int64(key, f.offset);
    key += static_cast<char>(f.shape.size());
    for (int64_t d : f.shape) append_int64(key, d);
  }
}

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
    std::string name = t.weak && !t.enumeration ? (t.is_float() ? "float" : "int") : fe::to_string(t);
    out += (i ? ", " : "") + name;
  }
  return out + ")";
}

}  // namespace jiasu
