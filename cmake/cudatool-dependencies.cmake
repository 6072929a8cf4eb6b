# The libraries libcudatool links privately, as imported targets: cudatool_dep::zstd,
# cudatool_dep::lz4 and cudatool_dep::re2. Included by lib/CMakeLists.txt when building and
# by the installed cudatool-config.cmake, so a consumer finds them on its own machine: the
# installed targets file names these targets, never the builder's paths.
#
# RE2 through its CMake package where it has one (newer releases). zstd and LZ4 (and RE2
# otherwise) by their headers and libraries, with pkg-config's directories as hints: Debian
# 12's liblz4-dev and libre2-dev ship only .pc files, and zstd's CMake package requires its
# static library to exist (a dependency tree unpacked without it, as on the GPU host, would
# fail). A tree unpacked elsewhere is found through CMAKE_PREFIX_PATH. What is not found is
# named in CUDATOOL_DEPENDENCIES_MISSING (empty when all are found).
#
# With CUDATOOL_STATIC_DEPENDENCIES (the wheel) the static archives are linked instead:
# zstd's and LZ4's everywhere, RE2's into executables only, shared objects (the Python
# module) keeping libre2.so: Debian 12's libre2.a is not position-independent (its
# thread-local variables are local-exec, R_X86_64_TPOFF32), which a shared object cannot
# take, so auditwheel copies libre2.so into the wheel for the module.

# A target with the property CUDATOOL_LINK_STATIC set (the cudatool executable of a build,
# option CUDATOOL_STATIC_EXECUTABLE) links the static archives where this machine has them:
# four fewer shared libraries to load and relocate, ~3 ms of every run's start on the H100
# host (issue 24, bench/RESULTS.md). Everything else, and every consumer of the installed
# package, links the shared libraries.
set(cudatool_link_static "$<BOOL:$<TARGET_PROPERTY:CUDATOOL_LINK_STATIC>>")

find_package(PkgConfig QUIET)
set(CUDATOOL_DEPENDENCIES_MISSING "")

# cudatool_dependency(NAME HEADER LIBRARY PKG): cudatool_dep::NAME, or what is missing
# appended to CUDATOOL_DEPENDENCIES_MISSING.
function(cudatool_dependency name header library pkg)
  if(TARGET cudatool_dep::${name})
    return()
  endif()
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(cudatool_pc_${name} QUIET ${pkg})
  endif()
  find_path(CUDATOOL_${name}_INCLUDE_DIR ${header} HINTS ${cudatool_pc_${name}_INCLUDE_DIRS})
  find_library(CUDATOOL_${name}_LIBRARY ${library} HINTS ${cudatool_pc_${name}_LIBRARY_DIRS})
  if(NOT CUDATOOL_${name}_INCLUDE_DIR OR NOT CUDATOOL_${name}_LIBRARY)
    set(CUDATOOL_DEPENDENCIES_MISSING
        "${CUDATOOL_DEPENDENCIES_MISSING}${name} (${header} and lib${library}.so) "
        PARENT_SCOPE)
    return()
  endif()
  if(CUDATOOL_STATIC_DEPENDENCIES)
    find_library(CUDATOOL_${name}_STATIC_LIBRARY lib${library}.a
                 HINTS ${cudatool_pc_${name}_LIBRARY_DIRS})
    if(NOT CUDATOOL_${name}_STATIC_LIBRARY)
      set(CUDATOOL_DEPENDENCIES_MISSING
          "${CUDATOOL_DEPENDENCIES_MISSING}${name} (lib${library}.a, CUDATOOL_STATIC_DEPENDENCIES) "
          PARENT_SCOPE)
      return()
    endif()
    set(static "${CUDATOOL_${name}_STATIC_LIBRARY}")
    if(static_in_executables_only)
      set(static "$<IF:$<STREQUAL:$<TARGET_PROPERTY:TYPE>,EXECUTABLE>,${static},${CUDATOOL_${name}_LIBRARY}>")
    endif()
    add_library(cudatool_dep::${name} INTERFACE IMPORTED)
    set_target_properties(cudatool_dep::${name} PROPERTIES
      INTERFACE_LINK_LIBRARIES "${static}"
      INTERFACE_INCLUDE_DIRECTORIES "${CUDATOOL_${name}_INCLUDE_DIR}")
    return()
  endif()
  find_library(CUDATOOL_${name}_STATIC_LIBRARY lib${library}.a
               HINTS ${cudatool_pc_${name}_LIBRARY_DIRS})
  add_library(cudatool_dep::${name} INTERFACE IMPORTED)
  if(CUDATOOL_${name}_STATIC_LIBRARY)
    set_target_properties(cudatool_dep::${name} PROPERTIES INTERFACE_LINK_LIBRARIES
      "$<IF:${cudatool_link_static},${CUDATOOL_${name}_STATIC_LIBRARY},${CUDATOOL_${name}_LIBRARY}>")
  else()
    set_target_properties(cudatool_dep::${name} PROPERTIES
      INTERFACE_LINK_LIBRARIES "${CUDATOOL_${name}_LIBRARY}")
  endif()
  set_target_properties(cudatool_dep::${name} PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${CUDATOOL_${name}_INCLUDE_DIR}")
endfunction()

cudatool_dependency(zstd zstd.h zstd libzstd)
cudatool_dependency(lz4 lz4.h lz4 liblz4)
if(NOT TARGET cudatool_dep::re2)
  # RE2's own CMake package names only its shared library: by its files instead where the
  # executable may link it statically.
  if(NOT CUDATOOL_STATIC_DEPENDENCIES AND NOT CUDATOOL_STATIC_EXECUTABLE)
    find_package(re2 CONFIG QUIET)
  endif()
  set(static_in_executables_only TRUE)
  if(re2_FOUND)
    add_library(cudatool_dep::re2 INTERFACE IMPORTED)
    set_target_properties(cudatool_dep::re2 PROPERTIES INTERFACE_LINK_LIBRARIES re2::re2)
  else()
    cudatool_dependency(re2 re2/re2.h re2 re2)
  endif()
  unset(static_in_executables_only)
endif()

# libcrypto (SHA-256) as cudatool_dep::crypto: OpenSSL::Crypto (found before this file is
# included), or its static archive beside it for a target with CUDATOOL_LINK_STATIC.
if(NOT TARGET cudatool_dep::crypto)
  add_library(cudatool_dep::crypto INTERFACE IMPORTED)
  if(OPENSSL_CRYPTO_LIBRARY AND NOT CUDATOOL_STATIC_DEPENDENCIES)
    get_filename_component(cudatool_crypto_dir "${OPENSSL_CRYPTO_LIBRARY}" DIRECTORY)
    find_library(CUDATOOL_crypto_STATIC_LIBRARY libcrypto.a HINTS "${cudatool_crypto_dir}"
                 NO_DEFAULT_PATH)
  endif()
  if(CUDATOOL_crypto_STATIC_LIBRARY AND NOT CUDATOOL_STATIC_DEPENDENCIES)
    set_target_properties(cudatool_dep::crypto PROPERTIES INTERFACE_LINK_LIBRARIES
      "$<${cudatool_link_static}:${CUDATOOL_crypto_STATIC_LIBRARY}>;$<$<NOT:${cudatool_link_static}>:OpenSSL::Crypto>")
    set_target_properties(cudatool_dep::crypto PROPERTIES
      INTERFACE_INCLUDE_DIRECTORIES "${OPENSSL_INCLUDE_DIR}")
  else()
    set_target_properties(cudatool_dep::crypto PROPERTIES INTERFACE_LINK_LIBRARIES OpenSSL::Crypto)
  endif()
endif()
