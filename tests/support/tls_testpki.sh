#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tls_testpki.sh DIR
# Makes a throw-away PKI for TLS tests with the openssl command line (keys are never reused and
# never leave DIR). Everything is PEM; the CA certificates also come as DER (*.der).
#
#   ca.crt ca.key ca.der            test CA "dpmetrics test CA" (ECDSA P-256)
#   server.crt server.key           "localhost" (SAN DNS:localhost, IP:127.0.0.1), signed by ca
#   server_v6.crt server_v6.key     "localhost" (SAN DNS:localhost, IP:::1), signed by ca
#   wrong_name.crt wrong_name.key   "wrong.example" (SAN DNS:wrong.example), signed by ca
#   other_ca.crt other_ca.key       a second, unrelated CA (ECDSA P-256)
#   other_server.crt other_server.key  "localhost", signed by other_ca (untrusted for ca pins)
#   rsa_ca.crt rsa_ca.key rsa_ca.der   an RSA-2048 CA (sha256WithRSAEncryption)
#   rsa_server.crt rsa_server.key   "localhost", ECDSA P-256 key, signed by rsa_ca
#   rsa_key_server.crt rsa_key_server.key  "localhost", RSA-2048 key, signed by ca
#   client.crt client.key           "device-0001", a TLS client (device) certificate, signed by ca
#
# Leaves are valid for 30 days from now; CAs for 60. Prints nothing on success, exits non-zero
# with openssl's message on failure. Runs in well under a second (two RSA key generations).
set -euo pipefail
dir=${1:?usage: tls_testpki.sh DIR}
mkdir -p "$dir"
cd "$dir"

ec_key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }

# make_ca NAME CN KEYSPEC...
make_ca() {
  local name=$1 cn=$2
  openssl req -x509 -new -key "$name.key" -sha256 -days 60 -subj "/O=dpmetrics tests/CN=$cn" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -out "$name.crt" 2>/dev/null
  openssl x509 -in "$name.crt" -outform DER -out "$name.der"
}

# make_leaf NAME CA DNSNAME [IP]   (a server; EKU=clientAuth in the environment: a client;
# KEY=rsa: an RSA-2048 key instead of P-256)
make_leaf() {
  local name=$1 ca=$2 dns=$3 ip=${4:-}
  if [ "${KEY:-}" = rsa ]; then
    openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$name.key" 2>/dev/null
  else
    ec_key "$name.key"
  fi
  openssl req -new -key "$name.key" -subj "/O=dpmetrics tests/CN=$dns" -out "$name.csr" 2>/dev/null
  {
    echo "basicConstraints=critical,CA:FALSE"
    echo "keyUsage=critical,digitalSignature"
    echo "extendedKeyUsage=${EKU:-serverAuth}"
    [ -n "${EKU:-}" ] || echo "subjectAltName=DNS:$dns${ip:+,IP:$ip}"
  } >"$name.ext"
  # A random 64-bit serial: no .srl file, and two runs never issue the same serial.
  openssl x509 -req -in "$name.csr" -CA "$ca.crt" -CAkey "$ca.key" -sha256 -days 30 \
    -set_serial "0x$(openssl rand -hex 8)" -extfile "$name.ext" -out "$name.crt" 2>/dev/null
  rm -f "$name.csr" "$name.ext"
}

ec_key ca.key
make_ca ca "dpmetrics test CA"
ec_key other_ca.key
make_ca other_ca "dpmetrics other CA"
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out rsa_ca.key 2>/dev/null
make_ca rsa_ca "dpmetrics RSA CA"

make_leaf server ca localhost 127.0.0.1
make_leaf server_v6 ca localhost ::1
make_leaf wrong_name ca wrong.example
make_leaf other_server other_ca localhost 127.0.0.1
make_leaf rsa_server rsa_ca localhost 127.0.0.1
KEY=rsa make_leaf rsa_key_server ca localhost 127.0.0.1
EKU=clientAuth make_leaf client ca device-0001
