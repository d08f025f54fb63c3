// Type-id rewriting for `tern-dev convert`: only the 4-byte type field of I2_S / I8_S tensor
// infos changes (36/37 <-> 43/42); every other byte of the file is copied unchanged.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "gguf/writer.h"

namespace tern::gguf {

std::vector<TypeIdPatch> PlanTypeIdRewrite(const File& f, TypeIds target) {
  std::vector<TypeIdPatch> patches;
  for (const TensorInfo& t : f.tensors()) {
    if (t.type != DType::kI2_S && t.type != DType::kI8_S) continue;
    const uint32_t want = GgufIdFromDType(t.type, target);
    if (t.type_id != want) patches.push_back({t.name, t.type_field_offset, t.type_id, want});
  }
  return patches;
}

Status ApplyTypeIdPatches(const std::vector<TypeIdPatch>& patches, uint8_t* data, size_t size) {
  for (const TypeIdPatch& p : patches) {
    if (p.field_offset > size || size - p.field_offset < 4) {
      return InvalidArgumentError("tensor '%s': type field offset %llu outside the %zu-byte image",
                                  p.tensor.c_str(), static_cast<unsigned long long>(p.field_offset),
                                  size);
    }
    std::memcpy(data + p.field_offset, &p.new_id, 4);
  }
  return Status::Ok();
}

namespace {

Status WriteAll(int fd, const uint8_t* p, size_t n, const std::string& path) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return IoError("%s: write failed: %s", path.c_str(), std::strerror(errno));
    p += w;
    n -= static_cast<size_t>(w);
  }
  return Status::Ok();
}

// Writes the input image with the patches applied to a fresh temporary file next to
// `output`, checks that the copy parses with the expected ids, and renames it over
// `output`. The temporary is removed on any failure, so `output` is either untouched or
// complete.
Status WriteAtomically(const File& in, const uint8_t* data, size_t size,
                       const std::vector<TypeIdPatch>& patches, mode_t mode,
                       const std::string& output) {
  std::string tmp = output + ".tmp.XXXXXX";
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) {
    return IoError("%s: cannot create a temporary file next to it: %s", output.c_str(),
                   std::strerror(errno));
  }
  bool open = true;
  auto fail = [&](Status s) {
    if (open) ::close(fd);
    ::unlink(tmp.c_str());
    return s;
  };
  Status s = WriteAll(fd, data, size, tmp);
  if (!s.ok()) return fail(s);
  for (const TypeIdPatch& p : patches) {
    if (p.field_offset > size || size - p.field_offset < 4) {
      return fail(InternalError("tensor '%s': type field offset out of range", p.tensor.c_str()));
    }
    if (::pwrite(fd, &p.new_id, 4, static_cast<off_t>(p.field_offset)) != 4) {
      return fail(IoError("%s: write failed: %s", tmp.c_str(), std::strerror(errno)));
    }
  }
  if (::fchmod(fd, mode & 07777) != 0 || ::fsync(fd) != 0) {
    return fail(IoError("%s: cannot set mode or sync: %s", tmp.c_str(), std::strerror(errno)));
  }
  open = false;
  if (::close(fd) != 0) {
    return fail(IoError("%s: close failed: %s", tmp.c_str(), std::strerror(errno)));
  }
  // The copy must describe the same tensors, now with the target ids.
  Result<std::unique_ptr<File>> out = File::Open(tmp);
  if (!out.ok()) return fail(out.status().WithPrefix("converted copy does not parse"));
  if ((*out)->tensors().size() != in.tensors().size()) {
    return fail(InternalError("%s: converted copy has a different tensor count", tmp.c_str()));
  }
  for (size_t k = 0; k < in.tensors().size(); ++k) {
    const TensorInfo& a = in.tensors()[k];
    const TensorInfo& b = (*out)->tensors()[k];
    if (a.name != b.name || a.type != b.type || a.offset != b.offset || a.n_bytes != b.n_bytes) {
      return fail(InternalError("%s: tensor '%s' changed in the converted copy", tmp.c_str(),
                                a.name.c_str()));
    }
  }
  if (::rename(tmp.c_str(), output.c_str()) != 0) {
    return fail(IoError("%s: cannot rename %s over it: %s", output.c_str(), tmp.c_str(),
                        std::strerror(errno)));
  }
  return Status::Ok();
}

}  // namespace

Result<size_t> RewriteTypeIds(const std::string& input, const std::string& output, TypeIds target) {
  TERN_ASSIGN_OR_RETURN(std::unique_ptr<MappedFile> map, MappedFile::Open(input));
  TERN_ASSIGN_OR_RETURN(std::unique_ptr<File> f, File::Parse(map->data(), map->size(), input));
  struct stat st;
  if (::stat(input.c_str(), &st) != 0) {
    return IoError("%s: cannot stat: %s", input.c_str(), std::strerror(errno));
  }
  const std::vector<TypeIdPatch> patches = PlanTypeIdRewrite(*f, target);
  // Replace what a symlink points to, not the link itself.
  std::string dest = output;
  if (char* real = ::realpath(output.c_str(), nullptr)) {
    dest = real;
    std::free(real);
  }
  TERN_RETURN_IF_ERROR(WriteAtomically(*f, map->data(), map->size(), patches, st.st_mode, dest));
  return patches.size();
}

}  // namespace tern::gguf
