// Test helpers shared by the realtime tests (in process, over a socket, and through the
// tern-server binary): the four-sentence stream they all send and the client's `input_audio_buffer.append` event. Header-only: each test links it on its own.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/test_bundled_model.h"
#include "tern/tern.h"

namespace tern::realtime_test {

using bundled::kHeldout;
using bundled::TinyModel;

// Standard base64 with padding, as OpenAI's clients send audio; the server's strict decoder
// (DecodeBase64) is tested against fixed strings, so this encoder is checked through it.
inline std::string Base64(const std::string& in) {
  static const char* t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 3 <= in.size(); i += 3) {
    const uint32_t w = static_cast<unsigned char>(in[i]) << 16 |
                       static_cast<unsigned char>(in[i + 1]) << 8 |
                       static_cast<unsigned char>(in[i + 2]);
    for (int k = 3; k >= 0; --k) out.push_back(t[(w >> (6 * k)) & 63]);
  }
  if (i < in.size()) {
    uint32_t w = static_cast<unsigned char>(in[i]) << 16;
    if (i + 1 < in.size()) w |= static_cast<unsigned char>(in[i + 1]) << 8;
    out.push_back(t[(w >> 18) & 63]);
    out.push_back(t[(w >> 12) & 63]);
    out.push_back(i + 1 < in.size() ? t[(w >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

// Four held-out sentences, each followed by 0.9 s of faint noise (a pause the server's
// turn detection ends an item at), as 24 kHz pcm16.
inline std::vector<int16_t> StreamPcm() {
  std::vector<int16_t> pcm;
  std::mt19937 rng(3);
  std::normal_distribution<float> g(0, 30.0f);
  for (const char* f : {"000.wav", "002.wav", "003.wav", "004.wav"}) {
    Result<Audio> a = LoadAudio(kHeldout + f);
    EXPECT_TRUE(a.ok());
    if (!a.ok()) continue;
    for (float v : a->samples)
      pcm.push_back(
          static_cast<int16_t>(std::lround(std::clamp(v * 32768.0f, -32768.0f, 32767.0f))));
    for (int i = 0; i < 21600; ++i) pcm.push_back(static_cast<int16_t>(std::lround(g(rng))));
  }
  return pcm;
}

// The client event carrying n samples of pcm16.
inline std::string Append(const int16_t* p, size_t n) {
  return nlohmann::json{{"type", "input_audio_buffer.append"},
                        {"audio", Base64(std::string(reinterpret_cast<const char*>(p), n * 2))}}
      .dump();
}

}  // namespace tern::realtime_test
