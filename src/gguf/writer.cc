// GGUF v3 writer. Layout: gguf/gguf.h; behaviour: gguf/writer.h.
#include "gguf/writer.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "base/check.h"

namespace tern::gguf {
namespace {

void PutBytes(std::string* out, const void* p, size_t n) {
  out->append(static_cast<const char*>(p), n);
}
template <typename T>
void Put(std::string* out, T v) {
  PutBytes(out, &v, sizeof(T));  // little-endian host, as the format
}
void PutString(std::string* out, const std::string& s) {
  Put<uint64_t>(out, s.size());
  out->append(s);
}

// Writes the payload of `v` as type `t` (for array elements `t` is the array's elem type).
void PutValue(std::string* out, ValueType t, const Value& v) {
  switch (t) {
    case ValueType::kU8:
      Put<uint8_t>(out, static_cast<uint8_t>(v.u));
      break;
    case ValueType::kI8:
      Put<int8_t>(out, static_cast<int8_t>(v.i));
      break;
    case ValueType::kU16:
      Put<uint16_t>(out, static_cast<uint16_t>(v.u));
      break;
    case ValueType::kI16:
      Put<int16_t>(out, static_cast<int16_t>(v.i));
      break;
    case ValueType::kU32:
      Put<uint32_t>(out, static_cast<uint32_t>(v.u));
      break;
    case ValueType::kI32:
      Put<int32_t>(out, static_cast<int32_t>(v.i));
      break;
    case ValueType::kF32:
      Put<float>(out, static_cast<float>(v.f));
      break;
    case ValueType::kBool:
      Put<uint8_t>(out, v.u ? 1 : 0);
      break;
    case ValueType::kString:
      PutString(out, v.s);
      break;
    case ValueType::kU64:
      Put<uint64_t>(out, v.u);
      break;
    case ValueType::kI64:
      Put<int64_t>(out, v.i);
      break;
    case ValueType::kF64:
      Put<double>(out, v.f);
      break;
    case ValueType::kArray:
      Put<uint32_t>(out, static_cast<uint32_t>(v.elem_type));
      Put<uint64_t>(out, v.arr.size());
      for (const Value& e : v.arr) PutValue(out, v.elem_type, e);
      break;
  }
}

uint64_t AlignUp(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

// Array elements must carry the array's element type: the bytes are written by elem_type,
// so a mismatch would silently write something else. Values are built by code, not read
// from users, hence a check rather than a Status.
bool ElementTypesConsistent(const Value& v, int depth) {
  if (v.type != ValueType::kArray) return true;
  if (depth >= kMaxArrayDepth) return false;  // the reader would refuse it
  for (const Value& e : v.arr) {
    if (e.type != v.elem_type || !ElementTypesConsistent(e, depth + 1)) return false;
  }
  return true;
}

}  // namespace

Writer::Writer(TypeIds ids, uint32_t alignment) : ids_(ids), alignment_(alignment) {
  // Below kMinAlignment only to let tests produce files the reader must reject.
  TERN_CHECK(alignment >= 1 && alignment <= kMaxAlignment && (alignment & (alignment - 1)) == 0);
  if (alignment != kDefaultAlignment) SetU32("general.alignment", alignment);
}

void Writer::SetValue(const std::string& key, const Value& v) {
  TERN_CHECK(ElementTypesConsistent(v, 0));
  for (auto& [k, old] : kv_) {
    if (k == key) {
      old = v;
      return;
    }
  }
  kv_.emplace_back(key, v);
}

void Writer::SetString(const std::string& key, const std::string& v) {
  SetValue(key, Value::String(v));
}
void Writer::SetU32(const std::string& key, uint32_t v) { SetValue(key, Value::U32(v)); }
void Writer::SetI32(const std::string& key, int32_t v) { SetValue(key, Value::I32(v)); }
void Writer::SetU64(const std::string& key, uint64_t v) { SetValue(key, Value::U64(v)); }
void Writer::SetF32(const std::string& key, float v) { SetValue(key, Value::F32(v)); }
void Writer::SetBool(const std::string& key, bool v) { SetValue(key, Value::Bool(v)); }

void Writer::SetStringArray(const std::string& key, const std::vector<std::string>& v) {
  std::vector<Value> elems;
  elems.reserve(v.size());
  for (const std::string& s : v) elems.push_back(Value::String(s));
  SetValue(key, Value::Array(ValueType::kString, std::move(elems)));
}
void Writer::SetI32Array(const std::string& key, const std::vector<int32_t>& v) {
  std::vector<Value> elems;
  elems.reserve(v.size());
  for (int32_t x : v) elems.push_back(Value::I32(x));
  SetValue(key, Value::Array(ValueType::kI32, std::move(elems)));
}
void Writer::SetF32Array(const std::string& key, const std::vector<float>& v) {
  std::vector<Value> elems;
  elems.reserve(v.size());
  for (float x : v) elems.push_back(Value::F32(x));
  SetValue(key, Value::Array(ValueType::kF32, std::move(elems)));
}

Status Writer::AddTensor(const std::string& name, DType type, const std::vector<int64_t>& ne,
                         std::vector<uint8_t> bytes) {
  if (name.empty()) return InvalidArgumentError("gguf writer: empty tensor name");
  for (const Tensor& t : tensors_) {
    if (t.name == name)
      return InvalidArgumentError("gguf writer: duplicate tensor '%s'", name.c_str());
  }
  if (ne.empty() || ne.size() > 4) {
    return InvalidArgumentError("gguf writer: tensor '%s': %zu dims (1..4 allowed)", name.c_str(),
                                ne.size());
  }
  int64_t n = 1;
  for (int64_t d : ne) {
    if (d < 1 || __builtin_mul_overflow(n, d, &n) || n > (int64_t{1} << 60)) {
      return InvalidArgumentError("gguf writer: tensor '%s': bad dimension %lld", name.c_str(),
                                  static_cast<long long>(d));
    }
  }
  if (!RowLengthValid(type, ne[0])) {
    return InvalidArgumentError(
        "gguf writer: tensor '%s': ne[0] = %lld is not a multiple of %s's "
        "block of %lld",
        name.c_str(), static_cast<long long>(ne[0]), DTypeName(type),
        static_cast<long long>(Traits(type).block_elems));
  }
  const int64_t want = StoredBytes(type, n);
  if (static_cast<int64_t>(bytes.size()) != want) {
    return InvalidArgumentError(
        "gguf writer: tensor '%s': %zu bytes given, %s with %lld elements "
        "stores %lld",
        name.c_str(), bytes.size(), DTypeName(type), static_cast<long long>(n),
        static_cast<long long>(want));
  }
  tensors_.push_back(Tensor{name, type, ne, std::move(bytes)});
  return Status::Ok();
}

std::string Writer::Header() const {
  std::string out;
  Put<uint32_t>(&out, 0x46554747);  // "GGUF"
  Put<uint32_t>(&out, 3);
  Put<uint64_t>(&out, tensors_.size());
  Put<uint64_t>(&out, kv_.size());
  for (const auto& [key, v] : kv_) {
    PutString(&out, key);
    Put<uint32_t>(&out, static_cast<uint32_t>(v.type));
    PutValue(&out, v.type, v);
  }
  uint64_t offset = 0;
  for (const Tensor& t : tensors_) {
    PutString(&out, t.name);
    Put<uint32_t>(&out, static_cast<uint32_t>(t.ne.size()));
    for (int64_t d : t.ne) Put<uint64_t>(&out, static_cast<uint64_t>(d));
    Put<uint32_t>(&out, GgufIdFromDType(t.type, ids_));
    Put<uint64_t>(&out, offset);
    offset = AlignUp(offset + t.bytes.size(), alignment_);
  }
  out.resize(AlignUp(out.size(), alignment_), '\0');
  return out;
}

std::string Writer::Serialize() const {
  std::string out = Header();
  for (const Tensor& t : tensors_) {
    PutBytes(&out, t.bytes.data(), t.bytes.size());
    out.resize(AlignUp(out.size(), alignment_), '\0');
  }
  return out;
}

Status Writer::WriteTo(const std::string& path) const {
  struct Closer {
    void operator()(FILE* f) const {
      if (f) std::fclose(f);
    }
  };
  std::unique_ptr<FILE, Closer> f(std::fopen(path.c_str(), "wb"));
  if (!f) return IoError("%s: cannot open for writing: %s", path.c_str(), std::strerror(errno));
  const std::string header = Header();
  static const char kZeros[kMaxAlignment] = {};
  bool ok = std::fwrite(header.data(), 1, header.size(), f.get()) == header.size();
  for (const Tensor& t : tensors_) {
    if (!ok) break;
    ok = std::fwrite(t.bytes.data(), 1, t.bytes.size(), f.get()) == t.bytes.size();
    const size_t pad = AlignUp(t.bytes.size(), alignment_) - t.bytes.size();
    if (ok && pad > 0) ok = std::fwrite(kZeros, 1, pad, f.get()) == pad;
  }
  if (!ok) return IoError("%s: write failed: %s", path.c_str(), std::strerror(errno));
  if (std::fclose(f.release()) != 0) {
    return IoError("%s: close failed: %s", path.c_str(), std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace tern::gguf
