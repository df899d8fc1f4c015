#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# make install: copies the SDK and the posix port into DESTDIR + PREFIX and prints every file.
#   include/dpm/*.h                   the app's headers (dpm/dpm.h and what it includes) and the
#                                     ports', dpm/build_config.h = the DPM_* options libdpm.a was
#                                     built with (config.h includes it)
#   include/dpm/bits/*.h              the layouts of the structs an app allocates
#   include/dpm/expert/*.h            the expert API, except dpm/expert/http.h (the SDK's own
#                                     HTTP client) and dpm/expert/simulator.h (simulators and
#                                     tests only): not an app's API, not installed
#   lib/libdpm.a                      the SDK, nanopb inside (renamed dpm_pb_*)
#   lib/libdpm_posix.a                posix port + TLS client
#   lib/libdpm_mbed{tls,x509,crypto}.a  the port's own Mbed TLS 3.6, renamed so it can never be
#                                     taken for (or by) a system Mbed TLS
#   lib/pkgconfig/dpmetrics.pc, dpmetrics-posix.pc
#   lib/cmake/dpmetrics/dpmetricsConfig.cmake, dpmetricsConfigVersion.cmake
#   bin/dpm-collector, bin/dpm-sim    the collector (its web console inside) and the simulator
#   share/dpmetrics/collector/        examples/collector: systemd units, config, alert rules
#   share/doc/dpmetrics/              README.md, licences (ours, Mbed TLS, nanopb)
# Env (set by the Makefile): OUT MBEDTLS_LIBDIR MBEDTLS_SRC NANOPB_DIR BUILD_CONFIG PREFIX
# LIBDIR INCLUDEDIR DESTDIR CC. The version comes from sdk/include/dpm/version.h.
set -euo pipefail
: "${OUT:?}" "${MBEDTLS_LIBDIR:?}" "${BUILD_CONFIG:?}" "${PREFIX:?}" "${CC:?}"
LIBDIR=${LIBDIR:-$PREFIX/lib}
INCLUDEDIR=${INCLUDEDIR:-$PREFIX/include}
DESTDIR=${DESTDIR:-}
CMAKEDIR=$LIBDIR/cmake/dpmetrics
case "$PREFIX" in /*) ;; *) echo "install: PREFIX must be an absolute path (got $PREFIX)" >&2; exit 1 ;; esac

# The release version, from the header when it exists. Until sdk/include/dpm/version.h lands
# (the release work adds it), packages say 0.0.0: "unreleased", never a made-up number.
version=0.0.0
if [ -f sdk/include/dpm/version.h ]; then
  version=$(awk '$1 == "#define" && $2 ~ /^DPM_VERSION_(MAJOR|MINOR|PATCH)$/ {v[$2] = $3}
    END {if (length(v) == 3) printf "%d.%d.%d", v["DPM_VERSION_MAJOR"], v["DPM_VERSION_MINOR"], v["DPM_VERSION_PATCH"]}' \
    sdk/include/dpm/version.h)
  [ -n "$version" ] || { echo "install: cannot read DPM_VERSION_MAJOR/MINOR/PATCH from version.h" >&2; exit 1; }
fi
pointer_bytes=$("$CC" -dM -E - </dev/null | awk '$2 == "__SIZEOF_POINTER__" {print $3}')

count=0
put() { # MODE SRC DEST(under DESTDIR)
  install -D -m "$1" "$2" "$DESTDIR$3"
  echo "install: $3"
  count=$((count + 1))
}
# fill TEMPLATE DEST: a template with its @VAR@ filled in (the SPDX line stays).
fill() {
  local tmp; tmp=$(mktemp)
  sed -e "s|@PREFIX@|$PREFIX|g" -e "s|@LIBDIR@|$LIBDIR|g" -e "s|@INCLUDEDIR@|$INCLUDEDIR|g" \
      -e "s|@VERSION@|$version|g" -e "s|@SIZEOF_VOID_P@|$pointer_bytes|g" \
      -e "s|@CMAKE_TO_PREFIX@|$(realpath -m --relative-to="$CMAKEDIR" "$PREFIX")|g" \
      -e "s|@LIBDIR_REL@|$(realpath -m --relative-to="$PREFIX" "$LIBDIR")|g" \
      -e "s|@INCLUDEDIR_REL@|$(realpath -m --relative-to="$PREFIX" "$INCLUDEDIR")|g" "$1" >"$tmp"
  if grep -q '@[A-Z_]*@' "$tmp"; then echo "install: unfilled variable in $1" >&2; rm -f "$tmp"; exit 1; fi
  put 644 "$tmp" "$2"
  rm -f "$tmp"
}

# Headers. config.h gets one line: the build's own options come first, so an app compiled
# against this tree sees the values its libdpm.a has.
for h in sdk/include/dpm/*.h sdk/include/dpm/bits/*.h sdk/include/dpm/expert/*.h \
         port/include/dpm/*.h; do
  rel=${h#*/include/dpm/}
  case $rel in config.h | expert/http.h | expert/simulator.h) continue ;; esac
  put 644 "$h" "$INCLUDEDIR/dpm/$rel"
done
put 644 "$BUILD_CONFIG" "$INCLUDEDIR/dpm/build_config.h"
tmp=$(mktemp)
awk '/^#if defined\(DPM_CONFIG_FILE\)/ && !done {
       print "/* Installed tree: the options libdpm.a was built with (make install). */"
       print "#include \"dpm/build_config.h\""; print ""; done = 1 }
     {print} END {if (!done) exit 1}' sdk/include/dpm/config.h >"$tmp" ||
  { echo "install: config.h has no DPM_CONFIG_FILE step to insert the build config before" >&2; exit 1; }
put 644 "$tmp" "$INCLUDEDIR/dpm/config.h"
rm -f "$tmp"

# Libraries.
put 644 "$OUT/libdpm.a" "$LIBDIR/libdpm.a"
if [ -f "$OUT/libdpm_posix.a" ]; then
  put 644 "$OUT/libdpm_posix.a" "$LIBDIR/libdpm_posix.a"
  for lib in mbedtls mbedx509 mbedcrypto; do
    put 644 "$MBEDTLS_LIBDIR/lib$lib.a" "$LIBDIR/libdpm_$lib.a"
  done
  fill port/dpmetrics-posix.pc.in "$LIBDIR/pkgconfig/dpmetrics-posix.pc"
fi
fill sdk/dpmetrics.pc.in "$LIBDIR/pkgconfig/dpmetrics.pc"
fill sdk/cmake/dpmetricsConfig.cmake.in "$CMAKEDIR/dpmetricsConfig.cmake"
fill sdk/cmake/dpmetricsConfigVersion.cmake.in "$CMAKEDIR/dpmetricsConfigVersion.cmake"

# The collector and the simulator (host builds), where examples/collector's systemd units expect
# them (PREFIX/bin; the units say /usr/local/bin), with those examples and the README.
if [ -x "$OUT/dpm-collector" ] && [ -x "$OUT/dpm-sim" ]; then
  put 755 "$OUT/dpm-collector" "$PREFIX/bin/dpm-collector"
  put 755 "$OUT/dpm-sim" "$PREFIX/bin/dpm-sim"
  for f in examples/collector/*; do
    put 644 "$f" "$PREFIX/share/dpmetrics/collector/$(basename "$f")"
  done
  put 644 README.md "$PREFIX/share/doc/dpmetrics/README.md"
fi

# Licences of what the libraries contain.
put 644 LICENSE "$PREFIX/share/doc/dpmetrics/LICENSE"
[ -n "${MBEDTLS_SRC:-}" ] && [ -f "$MBEDTLS_SRC/LICENSE" ] &&
  put 644 "$MBEDTLS_SRC/LICENSE" "$PREFIX/share/doc/dpmetrics/LICENSE.mbedtls"
[ -n "${NANOPB_DIR:-}" ] && [ -f "$NANOPB_DIR/LICENSE.txt" ] &&
  put 644 "$NANOPB_DIR/LICENSE.txt" "$PREFIX/share/doc/dpmetrics/LICENSE.nanopb"

echo "install: dpmetrics $version, $count files into ${DESTDIR}$PREFIX"
