/* SPDX-License-Identifier: Apache-2.0 */
/* Resource limits shared by every connection: requests per second per client address (token
 * buckets), the process's memory budget for connections and request bodies, and the counters
 * /metrics shows. Thread-safe (one mutex); the fuzzer runs without it (coll_app_t.limits NULL).
 *
 * Per address means per client key (coll_limits_addr_key): an IPv4 address, or an IPv6 /64.
 * A host is routinely given a whole /64 (SLAAC, privacy addresses): keyed on the full address,
 * one host would have 2^64 rate buckets and connection caps.
 *
 * Rate limit: each key has a bucket of `burst` tokens refilled at `rate` per second; a request
 * takes one, and is answered 429 (Retry-After: 1) when the bucket is empty. Buckets live in a
 * table of COLL_RATE_BUCKETS entries indexed by a keyed hash of the client key (the hash key is
 * random per process), so an attacker cannot aim at a victim's bucket; two keys that share an
 * entry share its tokens.
 *
 * Memory: a connection reserves COLL_CONN_RESERVE bytes while it is open (TLS record buffers,
 * the HTTP state, its thread), a request with a body reserves COLL_REQUEST_RESERVE(len) from
 * its head until its answer is sent (the body, its decoded reports, the response). When a
 * reservation would exceed the budget, the connection is refused / the request is answered
 * 503 without its body being read. */
#ifndef DPM_COLLECTOR_LIMITS_H
#define DPM_COLLECTOR_LIMITS_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#define COLL_RATE_BUCKETS 4096
/* Per open connection: Mbed TLS's 2 x 16 KiB record buffers and handshake state, the 8 KiB
 * head buffer and 16 KiB read chunk, the thread's touched stack. */
#define COLL_CONN_RESERVE ((size_t)96 * 1024)
/* Per request: its body, the decoded reports (64 bytes each for >= 35 encoded bytes: < 2x the
 * body), the rejects listed in the answer and the answer itself. */
#define COLL_REQUEST_RESERVE(len) (3 * (size_t)(len) + (size_t)1024 * 1024)

typedef struct {
    uint64_t tokens_milli; /* thousandths of a request */
    uint64_t last_ms;
} coll_bucket_t;

typedef struct {
    uint64_t conns_accepted, conns_refused_addr, conns_refused_full, conns_refused_memory,
        conns_evicted, rate_limited, memory_refused, unauthorized, conns_active;
    size_t memory_reserved, memory_peak;
} coll_limit_stats_t;

typedef struct {
    pthread_mutex_t mu;
    uint32_t rate_per_s; /* 0: no rate limit */
    uint32_t burst;
    size_t memory_budget; /* 0: unlimited */
    uint64_t key[2];      /* random: the bucket hash key */
    coll_limit_stats_t st;
    coll_bucket_t bucket[COLL_RATE_BUCKETS];
} coll_limits_t;

/* 0, or -1 if the random key cannot be drawn. */
int coll_limits_init(coll_limits_t *l, uint32_t rate_per_s, uint32_t burst, size_t memory_budget);
void coll_limits_free(coll_limits_t *l);

/* The key per-address limits count under, of a 16-byte address (IPv4 as ::ffff:a.b.c.d): an
 * IPv4 address itself, else the IPv6 address's /64 (its last 8 bytes zero). */
void coll_limits_addr_key(const uint8_t addr[16], uint8_t key[16]);

/* Take one request token for the 16-byte address's key; 0, or -1 (rate limited, counted). */
int coll_limits_take(coll_limits_t *l, const uint8_t addr[16], uint64_t now_ms);

/* Reserve / release bytes of the memory budget. 0, or -1 (over budget, nothing reserved). */
int coll_limits_reserve(coll_limits_t *l, size_t bytes);
void coll_limits_release(coll_limits_t *l, size_t bytes);

/* Add delta to one of l->st's counters (a pointer into it), and read them all. */
void coll_limits_count(coll_limits_t *l, uint64_t *counter, int64_t delta);
void coll_limits_stats(coll_limits_t *l, coll_limit_stats_t *out);

#endif /* DPM_COLLECTOR_LIMITS_H */
