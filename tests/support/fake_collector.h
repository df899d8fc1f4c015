/* SPDX-License-Identifier: Apache-2.0 */
/* A fake collector behind a dpm_transport_t, for tests: it parses the HTTP request the SDK
 * writes (strictly: request line, Host, Content-Type, Content-Length, keep-alive), decodes
 * the dpm.v1.Batch body report by report with dpm_report_decode, stores report ids with
 * de-duplication (a re-sent id must carry byte-identical bytes), and answers as scripted.
 *
 * A healthy answer (FC_OK) stores every valid report and rejects those of reject_campaign
 * ("never acceptable"): 200 with a BatchResponse if none was rejected, else 400 with a
 * BatchResponse listing the rejected ids. Batch.lost_reports is added to `lost_reports`
 * when the batch is answered 200. Other actions model failures. Like dpm-collector, it answers
 * 401 (and closes) when `token` is set and a request does not carry it as a bearer token, and
 * 413 (and closes) to a body above `max_body`, before anything else. Anything the SDK gets
 * wrong on the wire sets `fatal` with a reason instead of aborting.
 *
 * It also answers GET /v1/campaigns/<id> (the request dpm_campaign_get writes) from its table
 * of campaigns: 200 with the encoded campaign, 404 for an id it does not hold. A malicious
 * collector (answer_with != 0) answers every such GET with the campaign of that id instead. */
#ifndef FAKE_COLLECTOR_H
#define FAKE_COLLECTOR_H

#include <stddef.h>
#include <stdint.h>

#include "dpm/expert/mech.h"
#include "dpm/port.h"
#include "dpm/expert/report.h"

typedef enum {
    FC_OK,               /* healthy: store, 200 (or 400 with rejects) */
    FC_BAD_400,          /* 400 with an empty BatchResponse; nothing stored */
    FC_503,              /* 503, nothing stored, connection kept */
    FC_DROP_BEFORE,      /* the connection drops when the request arrives; nothing stored */
    FC_DROP_AFTER_STORE, /* stores the batch, then the connection drops before any answer */
    FC_TIMEOUT,          /* stores nothing and never answers (recv returns 0 forever) */
    FC_CLOSE_OK,         /* healthy, with "Connection: close"; drops after the answer */
    FC_CHUNKED,          /* stores, then answers 200 with chunked encoding (unsupported) */
    FC_EMPTY_200,        /* a misconfigured proxy: 200 with an empty body, nothing stored */
    FC_GARBAGE_200,      /* 200 whose body is not a BatchResponse; nothing stored */
    FC_SHORT_200,        /* stores, but its BatchResponse accounts for one report too few */
    FC_STATUS,           /* answers `status` with a text body and `extra` header lines, and
                            closes if `status_close`; nothing stored */
    FC_RAW               /* answers `status` with the protobuf body raw[0, raw_len); nothing
                            stored */
} fc_action_t;

#define FC_MAX_REPORTS 1024
#define FC_MAX_CAMPAIGNS 8

typedef struct {
    uint8_t id[DPM_REPORT_ID_BYTES];
    uint32_t campaign;
    uint32_t period;
    uint32_t eps;
    uint8_t bytes[DPM_REPORT_MAX_BYTES];
    size_t len;
    uint32_t received; /* how many times this id arrived */
} fc_report_t;

typedef struct {
    uint64_t now;
    uint64_t step; /* added after every reading: time passes while the SDK spins */
    uint64_t reads;
} fake_clock_t;

typedef struct {
    const char *host;
    const char *path;
    const fc_action_t *script; /* actions for requests 1, 2, ...; then `after` */
    size_t script_len;
    size_t script_pos;
    int cycle;                 /* 1: repeat the script forever */
    fc_action_t after;         /* action once the script is used up */
    uint32_t reject_campaign;  /* reports of this campaign are rejected (0 = none) */
    int reject_status;         /* status of a response with rejects (0: 400) */
    size_t recv_max;           /* at most this many bytes per recv (0 = no limit) */
    size_t send_max;           /* accept at most this many bytes per send (0 = no limit) */
    const char *reject_reason; /* Reject.reason of rejects (NULL: "campaign N is closed") */
    int status;                /* FC_STATUS: the status line's code */
    const char *extra;         /* FC_STATUS: header lines, each ending in CRLF (NULL: none) */
    int status_close;          /* FC_STATUS: "Connection: close", then the connection drops */
    const uint8_t *raw;        /* FC_RAW: the body */
    size_t raw_len;
    const char *token;         /* NULL: no credential needed; else the bearer token required */
    size_t max_body;           /* 0: any body; else a larger one gets 413 and a close */
    dpm_campaign_t campaigns[FC_MAX_CAMPAIGNS]; /* what GET /v1/campaigns/<id> serves */
    size_t ncampaigns;
    uint32_t answer_with; /* != 0: answer every campaign GET with this campaign (malicious) */
    uint32_t campaign_gets;
    /* connection */
    int dead;
    int silent;
    int close_after;
    uint8_t req[8192];
    size_t req_len;
    uint8_t resp[2048];
    size_t resp_len;
    size_t resp_pos;
    /* what arrived */
    fc_report_t stored[FC_MAX_REPORTS];
    size_t nstored;
    fc_report_t rejected[FC_MAX_REPORTS];
    size_t nrejected;
    uint64_t requests;
    uint64_t duplicates;
    uint64_t lost_reports; /* sum of Batch.lost_reports over batches acknowledged (FC_OK and
                              FC_CLOSE_OK answered 200) */
    uint64_t lost_seen;    /* ... over every batch that arrived */
    uint64_t reconnects;
    uint64_t unauthorized;   /* requests answered 401 for their credential */
    uint64_t too_large;      /* requests answered 413 */
    char authorization[300]; /* the last request's Authorization value ("" if none) */
    fc_action_t last;
    int fatal;
    char why[200];
} fake_collector_t;

void fake_collector_init(fake_collector_t *fc, const char *host, const char *path);
dpm_transport_t fake_collector_port(fake_collector_t *fc);
/* The device opened a new connection: forget any half-done exchange. */
void fake_collector_reconnect(fake_collector_t *fc);
/* The stored report with this id, or NULL. */
const fc_report_t *fake_collector_find(const fake_collector_t *fc, const uint8_t *id);
int fake_collector_was_rejected(const fake_collector_t *fc, const uint8_t *id);

dpm_clock_t fake_clock_port(fake_clock_t *c);

#endif
