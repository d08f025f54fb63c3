// The bundled model (models/tiny-en) and its held-out clips, for the tests in tests/ and
// tools/server that run the engine through the public API. Header-only; the model is
// loaded once per test binary and shared, as a server shares it.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "tern/tern.h"

namespace tern::bundled {

inline const std::string kModelDir = TERN_SOURCE_DIR "/models/tiny-en";
inline const std::string kHeldout = TERN_SOURCE_DIR "/tests/data/heldout/";

inline std::shared_ptr<const Model> TinyModel() {
  static const std::shared_ptr<const Model> model = [] {
    ModelOptions o;
    o.model_dir = kModelDir;
    Result<std::shared_ptr<const Model>> m = Model::Load(o);
    EXPECT_TRUE(m.ok()) << m.status().ToString();
    return m.ok() ? *m : nullptr;
  }();
  return model;
}

}  // namespace tern::bundled
