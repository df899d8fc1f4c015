#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Regenerates the seed corpora of every fuzz target (tests/fuzz/corpus/<target>/) from real
encodings. Run it when a wire or storage format changes (after `make all` and
`make build/host/fuzz/make_seeds`):
    OUT=build/host /usr/bin/python3 tests/fuzz/make_corpus.py
request: valid and invalid requests for the campaigns compiled into fuzz_request.c, from
SDK-made reports (tool_emit_reports); the SDK targets: written by tests/fuzz/make_seeds.c, plus
the golden wire vectors of tests/vectors/wire/ as campaign and report seeds; the Prio3 targets
(vdaf_report, vdaf_verifier): every report of the VDAF draft's vectors (tests/vectors/vdaf);
https_response: the answers tests/unit/test_https_client.c scripts, good and bad."""
import json
import os
import subprocess

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
OUT = os.path.join(ROOT, os.environ.get("OUT", "build/host"))
CORPUS = os.path.join(ROOT, "tests", "fuzz", "corpus")
DIR = os.path.join(CORPUS, "request")

rows = [json.loads(line) for line in subprocess.run(
    [os.path.join(OUT, "tests", "e2e", "tool_emit_reports")], check=True, capture_output=True,
    text=True).stdout.splitlines()]


def batch(reports):
    out = b""
    for r in reports:
        raw = bytes.fromhex(r["hex"])
        out += b"\x0a" + bytes([len(raw)]) + raw
    return out


def post(body, extra=b""):
    return (b"POST /v1/reports HTTP/1.1\r\nHost: localhost\r\nContent-Type: "
            b"application/x-protobuf\r\n" + extra + b"Content-Length: "
            + str(len(body)).encode() + b"\r\n\r\n" + body)


def get(path, extra=b""):
    return b"GET " + path.encode() + b" HTTP/1.1\r\nHost: localhost\r\n" + extra + b"\r\n"


mr = [r for r in rows if r["campaign_id"] == 171 and r["eps_q16"] == 65536]
ml = [r for r in rows if r["campaign_id"] == 182 and r["eps_q16"] == 65536]
bad = [r for r in rows if r["campaign_id"] == 171 and r["eps_q16"] != 65536][:3]
other = [r for r in rows if r["campaign_id"] not in (171, 182)][:2]
seeds = {
    "get_healthz": get("/healthz"),
    "get_campaign": get("/v1/campaigns/182"),
    "post_mr_then_estimate": post(batch(mr)) + get("/v1/campaigns/171/estimate"),
    "post_ml_then_estimate": post(batch(ml)) + get("/v1/campaigns/182/estimate",
                                                   b"Connection: close\r\n"),
    "post_rejects": post(batch(ml[:1] + bad + other) + b"\x0a\x03\x01\x02\x03"),
    "post_expect_continue": post(batch(mr[:2]), b"Expect: 100-continue\r\n"),
    "post_wrong_type": post(batch(mr[:1])).replace(b"x-protobuf", b"json"),
    "post_too_large": b"POST /v1/reports HTTP/1.1\r\nContent-Length: 99999999\r\n\r\n",
    "bad_header": b"GET /healthz HTTP/1.1\r\nNo colon here\r\n\r\n",
    "http10_keepalive": b"GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n" + get("/x"),
    "raw_batch": batch(mr + ml),
    "campaigns_file": b"[campaign]\nid = 171\nmechanism = tuple_mr\neps = 1\ngroups = 4\n"
                      b"metrics = tpr\n[campaign]\nid = 182\nmechanism = tuple_ml\neps = 1\n"
                      b"budget = 2\ngroups = 5\nmetrics = tpr, fpr\n",
}
os.makedirs(DIR, exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join(DIR, name), "wb") as f:
        f.write(data)
print(f"{len(seeds)} seeds in {DIR}")
subprocess.run([os.path.join(OUT, "fuzz", "make_seeds"), CORPUS], check=True)
# The golden wire vectors (tests/vectors/wire/<version>/<name>.campaign.hex, .report.hex) as
# campaign and report seeds: every mechanism's encodings, as released.
WIRE = os.path.join(ROOT, "tests", "vectors", "wire")
for version in sorted(os.listdir(WIRE)):
    vdir = os.path.join(WIRE, version)
    if not os.path.isdir(vdir):
        continue
    for fname in sorted(os.listdir(vdir)):
        for kind in ("campaign", "report"):
            if fname.endswith(f".{kind}.hex"):
                name = f"wire_{version}_{fname[:-len(f'.{kind}.hex')]}"
                with open(os.path.join(vdir, fname)) as f:
                    data = bytes.fromhex(f.read().strip())
                with open(os.path.join(CORPUS, kind, name), "wb") as f:
                    f.write(data)


# The Prio3 targets (fuzz_vdaf_report.c, fuzz_vdaf_verifier.c): every report of the VDAF draft's
# vectors (tests/vectors/vdaf), valid and bad, framed as those harnesses read them. The instance
# numbers are tests/fuzz/fuzz_vdaf.h's.
VDAF_INSTANCES = [("Prio3Count", 2), ("Prio3Count", 3), ("Prio3Sum", 2, 255), ("Prio3Sum", 3, 255),
                  ("Prio3Sum", 2, 1337), ("Prio3SumVec", 2, 10, 255, 9),
                  ("Prio3SumVec", 3, 3, 32000, 7), ("Prio3Histogram", 2, 4, 2),
                  ("Prio3Histogram", 3, 11, 3), ("Prio3Histogram", 2, 100, 10),
                  ("Prio3Histogram", 2, 5, 2), ("Prio3MultihotCountVec", 2, 4, 2, 2),
                  ("Prio3MultihotCountVec", 4, 10, 2, 3), ("Prio3MultihotCountVec", 2, 4, 4, 1),
                  ("Prio3SumVecWithMultiproof", 2, 10, 255, 9),
                  ("Prio3SumVecWithMultiproof", 3, 3, 65535, 7), ("Prio3HigherDegree", 2)]
VDAF_PARAMS = {"Prio3Sum": ["max_measurement"], "Prio3SumVec": ["length", "max_measurement", "chunk_length"],
               "Prio3SumVecWithMultiproof": ["length", "max_measurement", "chunk_length"],
               "Prio3Histogram": ["length", "chunk_length"],
               "Prio3MultihotCountVec": ["length", "max_weight", "chunk_length"]}


def lp(b):
    return len(b).to_bytes(2, "little") + b


def vdaf_seeds():
    vdir = os.path.join(ROOT, "tests", "vectors", "vdaf")
    out = {"vdaf_report": {}, "vdaf_verifier": {}}
    for fname in sorted(os.listdir(vdir)):
        if not fname.startswith("Prio3"):
            continue
        with open(os.path.join(vdir, fname)) as f:
            d = json.load(f)
        variant = fname.rsplit("_", 1)[0]
        if variant.endswith("_bad"):
            variant = variant[:-4]
        variant = variant.split("_bad_")[0]
        key = (variant, d["shares"]) + tuple(d[k] for k in VDAF_PARAMS.get(variant, []))
        idx = bytes([VDAF_INSTANCES.index(key)])
        stem = fname[:-len(".json")]
        for r, rep in enumerate(d["reports"]):
            h = bytes.fromhex
            out["vdaf_report"][f"{stem}_{r}"] = (idx + h(rep["nonce"]) + lp(h(rep["public_share"])) +
                                                 b"".join(lp(h(x)) for x in rep["input_shares"]))
            if r > 0:  # the exchanged messages of one report per file are enough
                continue
            if rep["verifier_shares"]:
                out["vdaf_verifier"][f"{stem}_{r}_message"] = (
                    idx + b"\x00" + lp(b"".join(h(x) for x in rep["verifier_shares"][0])))
            if rep["out_shares"] and rep["verifier_messages"]:
                msg = h(rep["verifier_messages"][0])
                out["vdaf_verifier"][f"{stem}_{r}_next"] = (
                    idx + b"\x01" + lp(h(rep["out_shares"][0]) + msg) + lp(msg))
                out["vdaf_verifier"][f"{stem}_{r}_aggregate"] = (
                    idx + b"\x02" + lp(h(rep["out_shares"][0])) + lp(h(rep["out_shares"][1])))
        if d["agg_shares"]:
            out["vdaf_verifier"][f"{stem}_unshard"] = (
                idx + b"\x03" + lp(b"".join(bytes.fromhex(x) for x in d["agg_shares"])))
    for target, seeds in out.items():
        os.makedirs(os.path.join(CORPUS, target), exist_ok=True)
        for name, data in seeds.items():
            with open(os.path.join(CORPUS, target, name), "wb") as f:
                f.write(data)


def https_response_seeds():
    """Byte 0: bit 0 close_notify ends the stream, bit 1 a HEAD, bits 2-3 the capacity (3:
    4096 bytes), bits 4-7 the piece size; then what a server sent (fuzz_https_response.c)."""
    ok, tcp = 0x0D | 0x30, 0x0C | 0x30
    seeds = {
        "content_length": (ok, b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                               b"Content-Length: 13\r\n\r\n{\"status\": 1}"),
        "chunked": (tcp, b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n"
                         b"7;ext=\"x\"\r\n, world\r\n0\r\nX-Trailer: t\r\n\r\n"),
        "close_delimited": (ok, b"HTTP/1.0 200 ok\r\nContent-type: text/plain\r\n\r\nall of it"),
        "close_delimited_tcp": (tcp, b"HTTP/1.1 200 OK\r\n\r\nno close_notify"),
        "continue_then_503": (ok, b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 503 Busy\r\n"
                                  b"Retry-After: Sun, 06 Nov 2094 08:49:37 GMT\r\n"
                                  b"Location: /v1/x/1\r\nContent-Length: 0\r\n\r\n"),
        "retry_seconds": (ok, b"HTTP/1.1 429 Too Many\r\nRetry-After: 120\r\n"
                              b"Content-Length: 4\r\n\r\nslow"),
        "head": (ok | 2, b"HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n"),
        "no_content_bare_lf": (tcp, b"HTTP/1.0 204 No Content\nContent-Length: 99\n\n"),
        "ambiguous": (ok, b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n"
                          b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
        "two_lengths": (ok, b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc"),
        "folded": (ok, b"HTTP/1.1 200 OK\r\nX-A: 1\r\n  folded\r\n\r\n"),
        "truncated": (ok, b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"),
        "bad_chunk": (ok, b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcXY\r\n"),
        "garbage": (ok, b"HELLO\r\n\r\n"),
        "small_cap": (0x05 | 0x30, b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                                   b"1A\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\n\r\n"),
    }
    d = os.path.join(CORPUS, "https_response")
    os.makedirs(d, exist_ok=True)
    for name, (flags, data) in seeds.items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(bytes([flags]) + data)


vdaf_seeds()
https_response_seeds()
for target in sorted(os.listdir(CORPUS)):
    print(f"{len(os.listdir(os.path.join(CORPUS, target)))} seeds in {os.path.join(CORPUS, target)}")
