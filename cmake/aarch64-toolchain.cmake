# Cross build for aarch64 Linux with Debian's g++-aarch64-linux-gnu; tests run under
# qemu-user (package qemu-user). Usage:
#   cmake -S . -B build-neon -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-toolchain.cmake \
#         -DTERN_KERNELS_ONLY=ON
# The CPU model qemu emulates comes from the QEMU_CPU environment variable at test time
# (e.g. QEMU_CPU=cortex-a53 for ARMv8.0 without dotprod, QEMU_CPU=max for everything).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(TERN_AARCH64_TRIPLE aarch64-linux-gnu)
set(CMAKE_C_COMPILER ${TERN_AARCH64_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${TERN_AARCH64_TRIPLE}-g++)

# Target headers and libraries only from the aarch64 sysroot; host programs from the host.
set(TERN_AARCH64_SYSROOT /usr/${TERN_AARCH64_TRIPLE})
set(CMAKE_FIND_ROOT_PATH ${TERN_AARCH64_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# ctest and gtest_discover_tests run target binaries through this; -L points the
# emulator's dynamic loader at the aarch64 libc/libstdc++.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L ${TERN_AARCH64_SYSROOT})
