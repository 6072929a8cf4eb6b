#!/usr/bin/env bash
# Builds the .deb packages with CPack into a temporary directory and checks their control
# fields: the tool depends on libssl3 (libcrypto) and the C/C++ runtime, never on a CUDA or
# NVIDIA library (those are opened at run time, and only suggested); the -dev package holds
# the headers, the library, the CMake package and cudatool.pc.
# Usage: package_deb.sh BUILD_DIR
set -euo pipefail
build=$1
command -v dpkg-deb >/dev/null && command -v dpkg-shlibdeps >/dev/null ||
  { echo "dpkg-deb/dpkg-shlibdeps (dpkg-dev) not installed: skipped" >&2; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/cudatool-deb-XXXXXX")
trap 'rm -rf "$work"' EXIT
cpack --config "$build/CPackConfig.cmake" -G DEB -B "$work" >"$work/cpack.log" ||
  { cat "$work/cpack.log"; exit 1; }
tool=$(ls "$work"/cudatool_*.deb) dev=$(ls "$work"/cudatool-dev_*.deb)
dpkg-deb -I "$tool"
dpkg-deb -I "$dev" control
field() { dpkg-deb -f "$1" "$2"; }
depends=$(field "$tool" Depends)
echo "$depends" | grep -Eq '(^|, )libssl3(t64)? ' || { echo "no libssl3 in Depends: $depends" >&2; exit 1; }
echo "$depends" | grep -q 'libstdc++6' || { echo "no libstdc++6 in Depends: $depends" >&2; exit 1; }
if echo "$depends" | grep -Eiq 'cuda|nvidia|nvrtc'; then
  echo "a CUDA/NVIDIA library is a hard dependency: $depends" >&2
  exit 1
fi
[ "$(field "$tool" Package)" = cudatool ] && [ "$(field "$dev" Package)" = cudatool-dev ]
[ "$(field "$tool" Architecture)" = "$(dpkg --print-architecture)" ]
field "$dev" Depends | grep -q 'libssl-dev'
contents=$(dpkg-deb -c "$tool") dev_contents=$(dpkg-deb -c "$dev")
# Here-strings, not `echo | grep -q`: grep -q leaves at the first match, echo then dies of
# SIGPIPE, and pipefail fails the pipeline (the test failed so, now and then, under load).
for f in /bin/cudatool /share/man/man1/cudatool.1 \
    /bash-completion/completions/cudatool /zsh/vendor-completions/_cudatool \
    /fish/vendor_completions.d/cudatool.fish /cudatool/schemas/devices.schema.json; do
  grep -qF "$f" <<<"$contents" || { echo "$tool lacks $f" >&2; exit 1; }
done
for f in /include/cudatool/base/sha256.hpp /libcudatool.a /cmake/cudatool/cudatool-config.cmake \
    /pkgconfig/cudatool.pc; do
  grep -qF "$f" <<<"$dev_contents" || { echo "$dev lacks $f" >&2; exit 1; }
done
echo "packages: ok ($(basename "$tool"), $(basename "$dev"))"
