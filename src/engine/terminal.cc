// TerminalColumns (tern.h): the CLI is a client of the public API only, so the one POSIX
// question it needs answered lives here.
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>

#include "tern/tern.h"

namespace tern {

int TerminalColumns(std::FILE* f) {
  if (f == nullptr) return 0;
  const int fd = fileno(f);
  if (fd < 0 || isatty(fd) != 1) return 0;
  struct winsize w {};
  if (ioctl(fd, TIOCGWINSZ, &w) == 0 && w.ws_col > 1) return w.ws_col;
  return 80;
}

}  // namespace tern
