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
