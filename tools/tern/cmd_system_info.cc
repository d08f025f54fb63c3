#include <cstdio>

#include "commands.h"
#include "tern/tern.h"

namespace tern::cli {

int PrintSystemInfo() {
  Result<std::string> info = SystemInfo();
  if (!info.ok()) {
    std::fprintf(stderr, "tern: %s\n", info.status().ToString().c_str());
    return 1;
  }
  std::fputs(info->c_str(), stdout);
  return 0;
}

}  // namespace tern::cli
