#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# version.sh [HEADER]  Prints the version set in sdk/include/dpm/version.h (or HEADER; "-" reads
# standard input), e.g. "0.1.0": the Makefile, make dist, packaging and the tests read it here,
# so the header stays the one place it is set. Exits 1 if the header lacks the three numbers.
h=${1:-$(dirname "$0")/../sdk/include/dpm/version.h}
awk '$1 == "#define" && $2 ~ /^DPM_VERSION_(MAJOR|MINOR|PATCH)$/ && $3 ~ /^[0-9]+$/ {
       if (!($2 in v)) n++
       v[$2] = $3
     }
     END {
       if (n != 3) { print "version.sh: no DPM_VERSION_MAJOR/MINOR/PATCH in the header" > "/dev/stderr"; exit 1 }
       print v["DPM_VERSION_MAJOR"] "." v["DPM_VERSION_MINOR"] "." v["DPM_VERSION_PATCH"]
     }' "$h"
