// A read-only memory map of a whole file (RAII). Weights are used in place from the map.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "base/status.h"

namespace tern {

class MappedFile {
 public:
  // Maps `path` read-only. An empty file maps to size 0 with a null data pointer.
  static Result<std::unique_ptr<MappedFile>> Open(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

  // Drops the resident pages wholly inside [p, p + n) (which must lie in this mapping) from
  // the process: a weight that now lives in a packed copy need not be resident twice. The
  // bytes stay valid (a later read pages them back in from the file); advice only, so a
  // failure is harmless and not reported.
  void ReleasePages(const uint8_t* p, size_t n) const;

 private:
  MappedFile(std::string path, const uint8_t* data, size_t size)
      : path_(std::move(path)), data_(data), size_(size) {}
  std::string path_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

// Reads a whole file into a string (small text files: vocabularies, transcripts).
Result<std::string> ReadFileToString(const std::string& path);
// Writes (replaces) a whole file.
Status WriteStringToFile(const std::string& path, const std::string& data);

}  // namespace tern
