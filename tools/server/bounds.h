// Every bound tern-server keeps, each a command-line option (main.cc) with this default.
#pragma once

#include <cstddef>
#include <string>

#include "tern/tern.h"

namespace tern::server {

struct Limits {
  size_t max_header_bytes = 16 * 1024;  // request line + headers; beyond: 431, closed
  double max_upload_mb = 100;           // request body; beyond: 413, closed
  double max_uploads_mb = 1024;         // bodies held at once, all requests; beyond: 503
  double read_timeout_s = 30;           // a whole request, from its first byte; beyond: 408
  double idle_timeout_s = 10;           // keep-alive: wait for the next request's first byte
  double write_timeout_s = 30;          // each response write (a stream: each event)
  int max_connections = 256;            // open at once; beyond: 503 + Retry-After, closed
  double shutdown_grace_s = 10;         // SIGTERM: in-flight requests may finish this long
  int io_threads = 2;                   // threads reading and writing connections

  size_t max_body_bytes() const { return static_cast<size_t>(max_upload_mb * 1024 * 1024); }
  size_t max_bodies_bytes() const { return static_cast<size_t>(max_uploads_mb * 1024 * 1024); }
  Status Validate() const;
};

}  // namespace tern::server
