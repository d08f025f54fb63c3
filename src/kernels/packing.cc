// Packed weight layouts shared by the AVX2 and AVX-512 kernels (see packing.h). Plain C++
// with no ISA flags: packing runs once at load time.
#include "kernels/packing.h"
