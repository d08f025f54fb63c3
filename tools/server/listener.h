// Accepts connections and runs the I/O threads until shutdown. Beyond --max-connections a
// connection gets a 503 with Retry-After and is closed at once. SIGINT/SIGTERM: stop
// accepting, let what is in flight finish for --shutdown-grace, then cancel the rest (a
// stream gets an error event) and return within a second more, whatever clients do.
// Realtime WebSocket sessions get an error event and a close with 1001 at the signal.
#pragma once

#include <string>

#include "http_session.h"

namespace tern::server {

class Listener {
 public:
  explicit Listener(ServerContext& ctx);
  ~Listener();
  // Binds host:port (0: a free port); *bound is the port it got.
  Status Bind(const std::string& host, int port, int* bound);
  // Serves until SIGINT or SIGTERM and the shutdown that follows are done.
  void Run();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tern::server
