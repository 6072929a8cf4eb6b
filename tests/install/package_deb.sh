#!/usr/bin/env bash
# Builds the .deb packages with CPack into a temporary directory and checks their control
# fields: every shared library the tool needs (the C/C++ runtime; its other dependencies are
# linked statically where their archives exist, CUDATOOL_STATIC_EXECUTABLE) comes from a
# package in Depends, never a CUDA or NVIDIA library (those are opened at run time, and only
# suggested); the -dev package holds the headers (exactly the public ones), the library, the
# CMake package and cudatool.pc.
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
# (Text is matched from here-strings: with pipefail, `echo | grep -q` can fail when grep
# exits before echo has written everything.)
# The requirement: every shared library the packaged binary needs comes from a package in
# Depends. Each NEEDED library is resolved (ldd) and its package asked of dpkg here: its name
# differs between releases (libssl3 / libssl3t64), and a library no package owns (a
# toolchain outside dpkg) cannot be named by dpkg-shlibdeps and is reported, not failed.
dpkg-deb -x "$tool" "$work/tool"
needed=$(readelf -d "$work/tool/usr/bin/cudatool" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
[ -n "$needed" ] || { echo "the packaged cudatool needs no shared library?" >&2; exit 1; }
for soname in $needed; do
  path=$(ldd "$work/tool/usr/bin/cudatool" | awk -v n="$soname" '
    $1 == n && $3 ~ /^\// { print $3; exit }
    $1 ~ /^\// && substr($1, length($1) - length(n)) == "/" n { print $1; exit }')
  [ -n "$path" ] || { echo "$soname: not found by ldd" >&2; exit 1; }
  owner=""
  for candidate in "$path" "$(readlink -f "$path")" "${path#/usr}" "/usr${path}"; do
    # Ubuntu 24.04's usrmerge lists diversions first ("diversion by libc6 from: /lib64/...").
    owner=$(dpkg -S "$candidate" 2>/dev/null | grep -v '^diversion by ' | head -1 | cut -d: -f1) &&
      [ -n "$owner" ] && break
  done
  if [ -z "$owner" ]; then
    echo "note: $soname ($path) belongs to no package here: dpkg-shlibdeps cannot name it"
    continue
  fi
  grep -Eq "(^|, )$(printf '%s' "$owner" | sed 's/[+.]/\\&/g')( |,|$)" <<<"$depends" ||
    { echo "$soname comes from $owner, which Depends lacks: $depends" >&2; exit 1; }
  echo "$soname: $owner in Depends"
done
if grep -Eiq 'cuda|nvidia|nvrtc' <<<"$depends"; then
  echo "a CUDA/NVIDIA library is a hard dependency: $depends" >&2
  exit 1
fi
[ "$(field "$tool" Package)" = cudatool ] && [ "$(field "$dev" Package)" = cudatool-dev ]
[ "$(field "$tool" Architecture)" = "$(dpkg --print-architecture)" ]
# The -dev package depends on the -dev package of everything the library's users link, and
# on nothing its public headers do not include (nlohmann/json, the CUDA toolkit: issue 21).
for pkg in libssl-dev libzstd-dev liblz4-dev libre2-dev; do
  field "$dev" Depends | grep -Eq "(^|, )$pkg( |,|$)" ||
    { echo "$dev: no $pkg in Depends: $(field "$dev" Depends)" >&2; exit 1; }
done
if field "$dev" Depends | grep -Eiq 'nlohmann|cuda'; then
  echo "$dev depends on what no public header includes: $(field "$dev" Depends)" >&2
  exit 1
fi
contents=$(dpkg-deb -c "$tool") dev_contents=$(dpkg-deb -c "$dev")
for f in /bin/cudatool /share/man/man1/cudatool.1.gz /usr/share/doc/cudatool/copyright \
    /bash-completion/completions/cudatool /zsh/vendor-completions/_cudatool \
    /fish/vendor_completions.d/cudatool.fish /cudatool/schemas/devices.schema.json; do
  grep -qF "$f" <<<"$contents" || { echo "$tool lacks $f" >&2; exit 1; }
done
for f in /usr/share/doc/cudatool-dev/copyright /include/cudatool/base/sha256.hpp /libcudatool.a /cmake/cudatool/cudatool-config.cmake \
    /cmake/cudatool/cudatool-dependencies.cmake \
    /pkgconfig/cudatool.pc; do
  grep -qF "$f" <<<"$dev_contents" || { echo "$dev lacks $f" >&2; exit 1; }
done
# Its headers are exactly the public ones (lib/include/cudatool of the source tree the build
# was configured from): no internal header (lib/src) is packaged.
source=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")
public=$(cd "$source/lib/include" && find cudatool -type f | LC_ALL=C sort)
packaged=$(sed -n 's#.* \./usr/include/\(cudatool/.*[^/]\)$#\1#p' <<<"$dev_contents" | LC_ALL=C sort)
[ "$packaged" = "$public" ] || {
  echo "$dev: its headers (>) differ from lib/include (<):"
  diff <(echo "$public") <(echo "$packaged")
  exit 1
} >&2
# Distinct summaries (the first line of each Description).
summary_tool=$(field "$tool" Description | head -1) summary_dev=$(field "$dev" Description | head -1)
[ "$summary_tool" != "$summary_dev" ] || { echo "both packages are summarised '$summary_tool'" >&2; exit 1; }
# The library in Debian's multiarch directory.
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
grep -qF "./usr/lib/$multiarch/libcudatool.a" <<<"$dev_contents" ||
  { echo "$dev: libcudatool.a is not in /usr/lib/$multiarch" >&2; exit 1; }
# The man page gzipped and readable.
gzip -t "$work/tool/usr/share/man/man1/cudatool.1.gz"
man_page=$(zcat "$work/tool/usr/share/man/man1/cudatool.1.gz")
# (its first line may be the preprocessor line '\" t: the page has tbl tables)
grep -qm1 '^\.TH CUDATOOL 1 ' <<<"$(head -2 <<<"$man_page")" ||
  { echo "the packaged man page is not cudatool(1)" >&2; exit 1; }
# Debian's hardening in the packaged binary, where the build has it (CUDATOOL_HARDENING: the
# Release build, which tools/test.sh packages): PIE, full RELRO with BIND_NOW, the stack
# protector and _FORTIFY_SOURCE's checked functions.
binary=$work/tool/usr/bin/cudatool
if grep -qx 'CUDATOOL_HARDENING:BOOL=ON' "$build/CMakeCache.txt"; then
header=$(readelf -h "$binary") segments=$(readelf -lW "$binary") dynamic=$(readelf -dW "$binary")
symbols=$(readelf --dyn-syms -W "$binary")
grep -q 'Type:.*DYN' <<<"$header" || { echo "cudatool is not a PIE" >&2; exit 1; }
grep -q GNU_RELRO <<<"$segments" || { echo "cudatool has no RELRO" >&2; exit 1; }
grep -Eq '\(FLAGS\).*BIND_NOW|\(FLAGS_1\).*NOW' <<<"$dynamic" ||
  { echo "cudatool is not linked with -z now" >&2; exit 1; }
grep -q '__stack_chk_fail' <<<"$symbols" || { echo "cudatool has no stack protector" >&2; exit 1; }
grep -Eq ' __[a-z0-9_]+_chk(@|$)' <<<"$symbols" ||
  { echo "cudatool calls no _FORTIFY_SOURCE checked function" >&2; exit 1; }
echo "hardening: PIE, RELRO, BIND_NOW, stack protector, fortify"
else
  echo "hardening: not checked (CUDATOOL_HARDENING is off in $build)"
fi
# Debian's machine-readable copyright file, Apache-2.0, in both packages.
dpkg-deb -x "$dev" "$work/dev"
for copyright in "$work/tool/usr/share/doc/cudatool/copyright" \
    "$work/dev/usr/share/doc/cudatool-dev/copyright"; do
  head -1 "$copyright" | grep -qx 'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/'
  grep -qx 'License: Apache-2.0' "$copyright"
  grep -qF '/usr/share/common-licenses/Apache-2.0' "$copyright"
done
echo "packages: ok ($(basename "$tool"), $(basename "$dev"))"
