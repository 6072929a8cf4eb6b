#!/usr/bin/env bash
# Every public header (lib/include/cudatool/**/*.hpp) compiles alone, in a translation unit
# of its own, with only lib/include on the include path (no CUDA toolkit directory), and
# includes neither nlohmann/json nor a CUDA toolkit header (<cuda.h>, nvrtc.h, ...), directly
# or through another header: a consumer builds against the installed headers with any
# nlohmann/json version and without the toolkit (issue 21). The compiler's own list of the
# files it opened (-H) is what is checked, so an include by any spelling is caught.
# Usage: public_headers.sh SOURCE_DIR [CXX]
set -euo pipefail
source_dir=$1 cxx=${2:-c++}
include=$source_dir/lib/include
work=$(mktemp -d "${TMPDIR:-/tmp}/cudatool-headers-XXXXXX")
trap 'rm -rf "$work"' EXIT
# What no public header may open: nlohmann/json's headers and the CUDA toolkit's.
forbidden='/nlohmann/|/(cuda|cuda_runtime|cuda_runtime_api|cuda_occupancy|nvrtc|nvml|driver_types)\.h$'

# HEADER (relative to the include directory) [DIR]: compiles it alone; prints the files opened.
compile_alone() {
  printf '#include "%s"\n#include "%s"\n' "$1" "$1" >"$work/tu.cpp"  # twice: #pragma once
  "$cxx" -std=c++20 -Wall -Wextra -Werror -fsyntax-only -H -I"${2:-$include}" "$work/tu.cpp" \
    2>"$work/trace" || { cat "$work/trace" >&2; return 1; }
  sed -n 's/^\.\+ //p' "$work/trace"
}

# The check must be able to fail: a header that includes nlohmann/json (a stand-in made
# here) is caught.
mkdir -p "$work/probe/cudatool" "$work/probe/nlohmann"
echo '#include <nlohmann/json.hpp>' >"$work/probe/cudatool/probe.hpp"
echo '#pragma once' >"$work/probe/nlohmann/json.hpp"
opened=$(compile_alone cudatool/probe.hpp "$work/probe")
grep -qE "$forbidden" <<<"$opened" ||
  { echo "public_headers.sh: a header including nlohmann/json.hpp was not caught" >&2; exit 1; }

headers=$(cd "$include" && find cudatool -name '*.hpp' | LC_ALL=C sort)
count=$(wc -w <<<"$headers")
[ "$count" -gt 30 ] || { echo "only $count public headers under $include?" >&2; exit 1; }
failed=0
for header in $headers; do
  if ! opened=$(compile_alone "$header"); then
    echo "$header does not compile alone with only lib/include on the include path" >&2
    failed=1
    continue
  fi
  if bad=$(grep -E "$forbidden" <<<"$opened"); then
    echo "$header includes $(tr '\n' ' ' <<<"$bad")" >&2
    failed=1
  fi
done
[ "$failed" -eq 0 ] || exit 1
echo "$count public headers: each compiles alone, none includes nlohmann/json or a CUDA header"
