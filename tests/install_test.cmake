# install_test: `cmake --install` into a fresh prefix, then a program outside the tree
# (tests/install) built against it twice, with find_package(tern) and with pkg-config, run on
# the installed bundled model: both must print exactly what the installed `tern transcribe`
# prints. Also checks the tree's contents and that libtern.so exports no internals.
#   cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK=... -DCXX=... -DCLIP=... -DLIBDIR=lib
#         -P install_test.cmake
foreach(v BUILD_DIR SOURCE_DIR WORK CXX CLIP LIBDIR)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "install_test: -D${v}= is required")
  endif()
endforeach()

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "install_test: ${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(run_out "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK})
set(prefix ${WORK}/prefix)
run("cmake --install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})

# The tree: the binaries, the public headers and nothing else of include/, the library, both
# package descriptions, the model.
set(libdir ${prefix}/${LIBDIR})
foreach(f bin/tern bin/tern-server bin/tern-dev bin/tern-bench include/tern/tern.h
    include/tern/status.h ${LIBDIR}/libtern.so
    ${LIBDIR}/cmake/tern/ternConfig.cmake
    ${LIBDIR}/cmake/tern/ternConfigVersion.cmake
    ${LIBDIR}/pkgconfig/tern.pc
    share/tern/models/tiny-en/vibeasr-lm-i2_s-embed-q6_k.gguf
    share/tern/models/tiny-en/vibeasr-vae-encoder-i8_s.gguf)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "install_test: ${f} was not installed")
  endif()
endforeach()
file(GLOB_RECURSE headers RELATIVE ${prefix}/include ${prefix}/include/*)
foreach(h ${headers})
  if(NOT h MATCHES "^tern/[a-z_]+\\.h$")
    message(FATAL_ERROR "install_test: ${h} installed; only include/tern/*.h is public")
  endif()
endforeach()

# The exports: the public API, no layer's own namespace, no third-party code.
run("nm" nm -DC --defined-only ${libdir}/libtern.so)
foreach(sym "tern::Model::Load(" "tern::Session::Transcribe(" "tern::LoadAudio("
    "tern::FormatTranscript" "tern::VersionString")
  string(FIND "${run_out}" "${sym}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "install_test: libtern.so does not export ${sym}")
  endif()
endforeach()
foreach(internal "tern::kernels::" "tern::ops::" "tern::gguf::" "tern::vibeasr::" "::Impl"
    "tern::engine::" "tern::text::" "tern::audio::" "nlohmann")
  string(FIND "${run_out}" "${internal}" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "install_test: libtern.so exports ${internal}...:\n${run_out}")
  endif()
endforeach()

set(model ${prefix}/share/tern/models/tiny-en)
run("installed tern transcribe" ${prefix}/bin/tern transcribe --model ${model} -q ${CLIP})
set(want "${run_out}")
if(want STREQUAL "")
  message(FATAL_ERROR "install_test: tern transcribe printed nothing for ${CLIP}")
endif()

# find_package(tern): configure and build the outside program against the prefix only.
run("configure tests/install" ${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/install -B ${WORK}/build
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_PREFIX_PATH=${prefix}
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
run("build tests/install" ${CMAKE_COMMAND} --build ${WORK}/build)
run("find_package example" ${WORK}/build/transcribe_one ${model} ${CLIP})
if(NOT run_out STREQUAL want)
  message(FATAL_ERROR "install_test: find_package example printed\n'${run_out}'\n"
                      "tern transcribe printed\n'${want}'")
endif()

# pkg-config: the flags alone must be enough (C++17, no other -I or -l).
set(ENV{PKG_CONFIG_PATH} ${libdir}/pkgconfig)
run("pkg-config" pkg-config --cflags --libs tern)
string(STRIP "${run_out}" flags)
separate_arguments(flags UNIX_COMMAND "${flags}")
run("compile with pkg-config flags" ${CXX} -std=c++17 -O1 ${SOURCE_DIR}/tests/install/main.cc
  ${flags} -o ${WORK}/transcribe_one_pc)
set(ENV{LD_LIBRARY_PATH} ${libdir})
run("pkg-config example" ${WORK}/transcribe_one_pc ${model} ${CLIP})
if(NOT run_out STREQUAL want)
  message(FATAL_ERROR "install_test: pkg-config example printed\n'${run_out}'\n"
                      "tern transcribe printed\n'${want}'")
endif()

message(STATUS "install_test: ${prefix} ok; both examples printed: ${want}")
file(REMOVE_RECURSE ${WORK})
