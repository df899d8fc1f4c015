#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The lean TLS profile (port/tls/config/dpm_mbedtls_device_lean.h, issue 32): the same checks as
# the device profile's test, run with PROFILE=device_lean: TLS 1.3 sessions against openssl
# s_server with and without a client certificate, and refusals of a TLS 1.2-only server, an
# RSA server key and an RSA CA (which test_mbedtls_device_config.sh shows the device profile
# accepts), and the compile-time refusal of the two-aggregator mode. The profile reads DER only:
# the sessions use DER pins, certificate and key, and a PEM CA, certificate or key must be
# refused with the reason that says how to convert it.
PROFILE=device_lean exec bash "$(dirname "$0")/test_mbedtls_device_config.sh" "$@"
