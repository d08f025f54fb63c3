// Chooses the kernel table once per process (no ISA flags on this file: it runs everywhere).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "base/cpu_features.h"
#include "kernels/kernels.h"
#include "kernels/tables.h"

namespace tern::kernels {
namespace {

struct IsaList {
  Isa isas[4];
  size_t count = 0;
};

// Can this CPU run `isa`, and does this build contain it?
bool Runnable(Isa isa, [[maybe_unused]] const CpuFeatures& f) {
  switch (isa) {
    case Isa::kScalar:
      return true;
#if defined(TERN_KERNELS_HAVE_X86)
    case Isa::kAvx2:
      return f.HasAvx2Tier();
    case Isa::kAvx512:
      return f.HasAvx512Tier();
#endif
#if defined(__aarch64__)
    // TableOf picks kNeonDotTable when the CPU has dotprod, else kNeonTable.
    case Isa::kNeon:
      return f.neon;
#endif
    default:
      return false;
  }
}

const KernelTable* TableOf(Isa isa) {
  switch (isa) {
    case Isa::kScalar:
      return &kScalarTable;
#if defined(TERN_KERNELS_HAVE_X86)
    case Isa::kAvx2:
      return &kAvx2Table;
    case Isa::kAvx512:
      return &kAvx512Table;
#endif
#if defined(__aarch64__)
    case Isa::kNeon:
      return GetCpuFeatures().dotprod ? &kNeonDotTable : &kNeonTable;
#endif
    default:
      return nullptr;
  }
}

const IsaList& Available() {
  static const IsaList list = [] {
    IsaList l;
    const CpuFeatures& f = GetCpuFeatures();
    for (Isa isa : {Isa::kAvx512, Isa::kAvx2, Isa::kNeon, Isa::kScalar}) {
      if (Runnable(isa, f)) l.isas[l.count++] = isa;
    }
    return l;
  }();
  return list;
}

}  // namespace

const char* IsaName(Isa isa) {
  switch (isa) {
    case Isa::kScalar:
      return "scalar";
    case Isa::kAvx2:
      return "avx2";
    case Isa::kAvx512:
      return "avx512";
    case Isa::kNeon:
      return "neon";
  }
  return "?";
}

Result<Isa> IsaFromName(std::string_view name) {
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512, Isa::kNeon}) {
    if (name == IsaName(isa)) return isa;
  }
  return InvalidArgumentError("unknown ISA '%s' (accepted: scalar, avx2, avx512, neon)",
                              std::string(name).c_str());
}

const Isa* AvailableIsas(size_t* count) {
  const IsaList& l = Available();
  *count = l.count;
  return l.isas;
}

Isa BestIsa() { return Available().isas[0]; }

Result<const KernelTable*> TableFor(Isa isa) {
  if (!Runnable(isa, GetCpuFeatures())) {
    return UnsupportedError("kernel ISA '%s' is not available (cpu features: %s; build: %s)",
                            IsaName(isa), GetCpuFeatures().ToString().c_str(),
#if defined(TERN_KERNELS_HAVE_X86)
                            "x86-64: scalar avx2 avx512"
#elif defined(__aarch64__)
                            "aarch64: scalar neon"
#else
                            "scalar only"
#endif
    );
  }
  return TableOf(isa);
}

Result<Isa> SelectIsa() {
  const char* env = std::getenv("TERN_ISA");
  if (env == nullptr || env[0] == '\0') return BestIsa();
  Result<Isa> isa = IsaFromName(env);
  if (!isa.ok()) return isa.status().WithPrefix("TERN_ISA");
  Result<const KernelTable*> table = TableFor(*isa);
  if (!table.ok()) return table.status().WithPrefix("TERN_ISA");
  return *isa;
}

// Tools call SelectIsa() first and report its error; reaching the abort below means a
// caller skipped that check, so it is treated as a fatal configuration error (the only one
// in this layer, since a silent downgrade to another ISA would hide the misconfiguration).
const KernelTable& Kernels() {
  static const KernelTable* table = [] {
    Result<Isa> isa = SelectIsa();
    if (!isa.ok()) {
      std::fprintf(stderr, "tern: fatal: %s\n", isa.status().ToString().c_str());
      std::abort();
    }
    return TableOf(*isa);
  }();
  return *table;
}

}  // namespace tern::kernels
