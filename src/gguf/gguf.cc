// GGUF type-id mapping, Value helpers, File::Open and the typed KV getters.
// The byte-level parser lives in parse.cc.
#include "gguf/gguf.h"

#include <cmath>
#include <cstdio>
#include <limits>

namespace tern::gguf {

const char* ValueTypeName(ValueType t) {
  switch (t) {
    case ValueType::kU8:
      return "u8";
    case ValueType::kI8:
      return "i8";
    case ValueType::kU16:
      return "u16";
    case ValueType::kI16:
      return "i16";
    case ValueType::kU32:
      return "u32";
    case ValueType::kI32:
      return "i32";
    case ValueType::kF32:
      return "f32";
    case ValueType::kBool:
      return "bool";
    case ValueType::kString:
      return "string";
    case ValueType::kArray:
      return "array";
    case ValueType::kU64:
      return "u64";
    case ValueType::kI64:
      return "i64";
    case ValueType::kF64:
      return "f64";
  }
  return "?";
}

Result<DType> DTypeFromGgufId(uint32_t id) {
  switch (id) {
    case 0:
      return DType::kF32;
    case 1:
      return DType::kF16;
    case 8:
      return DType::kQ8_0;
    case 14:
      return DType::kQ6_K;
    case 30:
      return DType::kBF16;
    case kPublishedI2S:
    case kRemappedI2S:
      return DType::kI2_S;
    case kPublishedI8S:
    case kRemappedI8S:
      return DType::kI8_S;
    case 38:
    case 39:
      return UnsupportedError(
          "type id %u is TL1/TL2 in the BitNet fork and MXFP4 in mainline ggml; VibeASR "
          "files use 36/37 (or 43/42 after audio.cpp's remap)",
          id);
    default:
      return UnsupportedError("unknown GGUF type id %u", id);
  }
}

uint32_t GgufIdFromDType(DType t, TypeIds ids) {
  const bool published = ids == TypeIds::kPublished;
  switch (t) {
    case DType::kF32:
      return 0;
    case DType::kF16:
      return 1;
    case DType::kQ8_0:
      return 8;
    case DType::kQ6_K:
      return 14;
    case DType::kBF16:
      return 30;
    case DType::kI2_S:
      return published ? kPublishedI2S : kRemappedI2S;
    case DType::kI8_S:
      return published ? kPublishedI8S : kRemappedI8S;
  }
  return 0;
}

Value Value::Unsigned(ValueType t, uint64_t v) {
  Value out;
  out.type = t;
  out.u = v;
  return out;
}
Value Value::Signed(ValueType t, int64_t v) {
  Value out;
  out.type = t;
  out.i = v;
  return out;
}
Value Value::Float(ValueType t, double v) {
  Value out;
  out.type = t;
  out.f = v;
  return out;
}
Value Value::String(std::string v) {
  Value out;
  out.type = ValueType::kString;
  out.s = std::move(v);
  return out;
}
Value Value::Array(ValueType elem, std::vector<Value> elems) {
  Value out;
  out.type = ValueType::kArray;
  out.elem_type = elem;
  out.arr = std::move(elems);
  return out;
}

bool operator==(const Value& a, const Value& b) {
  if (a.type != b.type) return false;
  switch (a.type) {
    case ValueType::kU8:
    case ValueType::kU16:
    case ValueType::kU32:
    case ValueType::kU64:
    case ValueType::kBool:
      return a.u == b.u;
    case ValueType::kI8:
    case ValueType::kI16:
    case ValueType::kI32:
    case ValueType::kI64:
      return a.i == b.i;
    case ValueType::kF32:
    case ValueType::kF64:
      // Bitwise-equal payloads (NaN == NaN) are what a round trip must preserve.
      return a.f == b.f || (std::isnan(a.f) && std::isnan(b.f));
    case ValueType::kString:
      return a.s == b.s;
    case ValueType::kArray:
      return a.elem_type == b.elem_type && a.arr == b.arr;
  }
  return false;
}

namespace {

std::string ScalarText(const Value& v) {
  switch (v.type) {
    case ValueType::kU8:
    case ValueType::kU16:
    case ValueType::kU32:
    case ValueType::kU64:
      return std::to_string(v.u);
    case ValueType::kI8:
    case ValueType::kI16:
    case ValueType::kI32:
    case ValueType::kI64:
      return std::to_string(v.i);
    case ValueType::kBool:
      return v.u ? "true" : "false";
    case ValueType::kF32:
    case ValueType::kF64:
      return StrFormat("%.9g", v.f);
    case ValueType::kString: {
      constexpr size_t kMax = 60;
      std::string out = "\"";
      for (size_t k = 0; k < v.s.size() && k < kMax; ++k) {
        const unsigned char c = static_cast<unsigned char>(v.s[k]);
        if (c == '\n')
          out += "\\n";
        else if (c == '"' || c == '\\')
          out += {'\\', static_cast<char>(c)};
        else if (c < 0x20 || c == 0x7f)
          out += StrFormat("\\x%02x", c);
        else
          out += static_cast<char>(c);
      }
      out += v.s.size() > kMax ? "\"..." : "\"";
      return out;
    }
    case ValueType::kArray:
      break;
  }
  return "?";
}

}  // namespace

std::string FormatValue(const Value& v, size_t max_elems) {
  if (v.type != ValueType::kArray) return ScalarText(v);
  std::string out = StrFormat("[%s x %zu]", ValueTypeName(v.elem_type), v.arr.size());
  for (size_t k = 0; k < v.arr.size() && k < max_elems; ++k) {
    out += k == 0 ? " " : ", ";
    out += v.arr[k].type == ValueType::kArray ? FormatValue(v.arr[k], 0) : ScalarText(v.arr[k]);
  }
  if (v.arr.size() > max_elems && max_elems > 0) out += ", ...";
  return out;
}

Result<std::unique_ptr<File>> File::Open(const std::string& path) {
  TERN_ASSIGN_OR_RETURN(std::unique_ptr<MappedFile> map, MappedFile::Open(path));
  TERN_ASSIGN_OR_RETURN(std::unique_ptr<File> file, Parse(map->data(), map->size(), path));
  file->map_ = std::move(map);
  return file;
}

const Value* File::Find(std::string_view key) const {
  auto it = kv_index_.find(key);
  return it == kv_index_.end() ? nullptr : &kv_[it->second].second;
}

const TensorInfo* File::FindTensor(std::string_view name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

void File::ReleasePages(const TensorInfo& t) const {
  ReleasePages(t.data, static_cast<size_t>(t.n_bytes));
}

void File::ReleasePages(const uint8_t* p, size_t n) const {
  if (map_ != nullptr) map_->ReleasePages(p, n);
}

namespace {

bool IsUnsigned(ValueType t) {
  return t == ValueType::kU8 || t == ValueType::kU16 || t == ValueType::kU32 ||
         t == ValueType::kU64;
}
bool IsSigned(ValueType t) {
  return t == ValueType::kI8 || t == ValueType::kI16 || t == ValueType::kI32 ||
         t == ValueType::kI64;
}
bool IsFloat(ValueType t) { return t == ValueType::kF32 || t == ValueType::kF64; }

// Integer value of `v` as int64, if it is an integer that fits.
std::optional<int64_t> AsI64(const Value& v) {
  if (IsSigned(v.type)) return v.i;
  if (IsUnsigned(v.type) && v.u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return static_cast<int64_t>(v.u);
  }
  return std::nullopt;
}

std::optional<double> AsF64(const Value& v) {
  if (IsFloat(v.type)) return v.f;
  if (IsSigned(v.type)) return static_cast<double>(v.i);
  if (IsUnsigned(v.type)) return static_cast<double>(v.u);
  return std::nullopt;
}

std::string TypeText(const Value& v) {
  if (v.type != ValueType::kArray) return ValueTypeName(v.type);
  return StrFormat("array of %s", ValueTypeName(v.elem_type));
}

Status KeyTypeError(const std::string& where, const char* want, const Value& got) {
  return FormatError("%s: expected %s, got %s", where.c_str(), want, TypeText(got).c_str());
}

}  // namespace

std::string File::KeyWhere(std::string_view key) const {
  auto it = kv_index_.find(key);
  const unsigned long long at = it == kv_index_.end() ? 0 : kv_offsets_[it->second];
  return StrFormat("%s: key '%.*s' at offset %llu", name_.c_str(), static_cast<int>(key.size()),
                   key.data(), at);
}

#define TERN_GGUF_LOOKUP(v, key)                                        \
  const Value* v = Find(key);                                           \
  if (v == nullptr) {                                                   \
    return NotFoundError("%s: key '%.*s' not found", name_.c_str(),     \
                         static_cast<int>((key).size()), (key).data()); \
  }

Result<std::string> File::GetString(std::string_view key) const {
  TERN_GGUF_LOOKUP(v, key);
  if (v->type != ValueType::kString) return KeyTypeError(KeyWhere(key), "string", *v);
  return v->s;
}

Result<uint64_t> File::GetU64(std::string_view key) const {
  TERN_GGUF_LOOKUP(v, key);
  if (IsUnsigned(v->type)) return v->u;
  if (IsSigned(v->type) && v->i >= 0) return static_cast<uint64_t>(v->i);
  if (IsSigned(v->type)) {
    return FormatError("%s: expected a non-negative integer, got %lld", KeyWhere(key).c_str(),
                       static_cast<long long>(v->i));
  }
  return KeyTypeError(KeyWhere(key), "an unsigned integer", *v);
}

Result<int64_t> File::GetI64(std::string_view key) const {
  TERN_GGUF_LOOKUP(v, key);
  if (auto i = AsI64(*v)) return *i;
  if (IsUnsigned(v->type)) {
    return FormatError("%s: value %llu does not fit in int64", KeyWhere(key).c_str(),
                       static_cast<unsigned long long>(v->u));
  }
  return KeyTypeError(KeyWhere(key), "an integer", *v);
}

Result<double> File::GetF64(std::string_view key) const {
  TERN_GGUF_LOOKUP(v, key);
  if (auto f = AsF64(*v)) return *f;
  return KeyTypeError(KeyWhere(key), "a number", *v);
}

Result<std::vector<std::string>> File::GetStringArray(std::string_view key) const {
  TERN_GGUF_LOOKUP(v, key);
  if (v->type != ValueType::kArray || v->elem_type != ValueType::kString) {
    return KeyTypeError(KeyWhere(key), "array of string", *v);
  }
  std::vector<std::string> out;
  out.reserve(v->arr.size());
  for (const Value& e : v->arr) out.push_back(e.s);
  return out;
}

Result<std::vector<int64_t>> File::GetIntArray(std::string_view key) const {
  TERN_GGUF_LOOKUP(v, key);
  if (v->type != ValueType::kArray || !(IsSigned(v->elem_type) || IsUnsigned(v->elem_type))) {
    return KeyTypeError(KeyWhere(key), "array of integers", *v);
  }
  std::vector<int64_t> out;
  out.reserve(v->arr.size());
  for (size_t k = 0; k < v->arr.size(); ++k) {
    auto i = AsI64(v->arr[k]);
    if (!i) {
      return FormatError("%s: element %zu does not fit in int64", KeyWhere(key).c_str(), k);
    }
    out.push_back(*i);
  }
  return out;
}

Result<std::vector<double>> File::GetFloatArray(std::string_view key) const {
  TERN_GGUF_LOOKUP(v, key);
  if (v->type != ValueType::kArray ||
      !(IsFloat(v->elem_type) || IsSigned(v->elem_type) || IsUnsigned(v->elem_type))) {
    return KeyTypeError(KeyWhere(key), "array of numbers", *v);
  }
  std::vector<double> out;
  out.reserve(v->arr.size());
  for (const Value& e : v->arr) out.push_back(*AsF64(e));
  return out;
}

#undef TERN_GGUF_LOOKUP

}  // namespace tern::gguf
