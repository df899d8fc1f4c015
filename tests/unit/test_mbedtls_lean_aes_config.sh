#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The lean TLS profile with AES-128-GCM (port/tls/config/dpm_mbedtls_device_lean_aes.h): the
# checks of test_mbedtls_lean_config.sh (real TLS 1.3 sessions against openssl s_server, with a
# client certificate, DER only; refusals of TLS 1.2-only and RSA servers and of PEM; DPM_VDAF=1
# refused at compile time), run with PROFILE=device_lean_aes.
PROFILE=device_lean_aes exec bash "$(dirname "$0")/test_mbedtls_device_config.sh" "$@"
