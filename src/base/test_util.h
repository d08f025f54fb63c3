// Helpers the tests of every layer share (linked into test binaries only, as
// tern_test_util). Kernel-specific fixtures (guarded buffers, the ISA tables) are in
// kernels/test_util.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tern::testutil {

// n values drawn from N(0, scale^2) by std::mt19937(seed): the same values on every
// platform for a given seed.
std::vector<float> RandomFloats(size_t n, uint32_t seed, float scale);

// The bit pattern of a float (bit-exact comparisons that also tell -0 from +0).
uint32_t Bits(float f);

// The index of the first largest value (0 for an empty vector).
int64_t ArgMax(const std::vector<float>& v);

// Root mean square, summed in double.
double Rms(const std::vector<float>& v);

// A whole file's bytes; empty when it cannot be read.
std::string ReadFile(const std::string& path);

// What a command printed and how it ended.
struct CommandRun {
  int exit_code = -1;  // -1 when it could not start or did not exit normally
  std::string out;     // stdout
  std::string err;     // stderr
};

// Runs `command` with /bin/sh and waits for it: stdout through a pipe, stderr through a
// temporary file (two pipes read in turn could fill one and block the child).
CommandRun RunCommand(const std::string& command);

}  // namespace tern::testutil
