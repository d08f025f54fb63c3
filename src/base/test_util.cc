#include "base/test_util.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

namespace tern::testutil {

std::vector<float> RandomFloats(size_t n, uint32_t seed, float scale) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

int64_t ArgMax(const std::vector<float>& v) {
  return std::max_element(v.begin(), v.end()) - v.begin();
}

double Rms(const std::vector<float>& v) {
  double s = 0;
  for (float x : v) s += static_cast<double>(x) * x;
  return std::sqrt(s / static_cast<double>(v.size()));
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

CommandRun RunCommand(const std::string& command) {
  CommandRun r;
  const char* dir = getenv("TMPDIR");
  std::string err_path = std::string(dir && *dir ? dir : "/tmp") + "/tern_test_stderr_XXXXXX";
  const int fd = mkstemp(err_path.data());
  if (fd < 0) return r;
  close(fd);
  const std::string cmd = command + " 2>'" + err_path + "'";
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), p)) > 0) r.out.append(buf, n);
    const int status = pclose(p);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  r.err = ReadFile(err_path);
  unlink(err_path.c_str());
  return r;
}

}  // namespace tern::testutil
