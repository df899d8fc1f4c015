/* SPDX-License-Identifier: Apache-2.0 */
/* Rate buckets, memory budget and counters (see limits.h). */
#include "collector/ingest/limits.h"

#include <string.h>
#include <sys/random.h>

int coll_limits_init(coll_limits_t *l, uint32_t rate_per_s, uint32_t burst, size_t memory_budget)
{
    memset(l, 0, sizeof(*l));
    l->rate_per_s = rate_per_s;
    l->burst = burst > 0 ? burst : 1;
    l->memory_budget = memory_budget;
    if (getrandom(l->key, sizeof(l->key), 0) != (ssize_t)sizeof(l->key)) {
        return -1;
    }
    return pthread_mutex_init(&l->mu, NULL) == 0 ? 0 : -1;
}

void coll_limits_free(coll_limits_t *l)
{
    pthread_mutex_destroy(&l->mu);
}

void coll_limits_addr_key(const uint8_t addr[16], uint8_t key[16])
{
    static const uint8_t v4_mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF};
    memcpy(key, addr, 16);
    if (memcmp(addr, v4_mapped, sizeof(v4_mapped)) != 0) {
        memset(key + 8, 0, 8); /* IPv6: the /64, whatever the interface identifier */
    }
}

/* A keyed mix of the address (two rounds of a 64-bit multiply-xorshift per word): not a MAC,
 * but without the key an outsider cannot pick an address that lands on a given bucket. */
static uint32_t bucket_of(const coll_limits_t *l, const uint8_t addr[16])
{
    uint64_t a, b;
    memcpy(&a, addr, 8);
    memcpy(&b, addr + 8, 8);
    uint64_t h = l->key[0] ^ a;
    for (int r = 0; r < 2; r++) {
        h ^= h >> 33;
        h *= 0xFF51AFD7ED558CCDull;
        h ^= b ^ l->key[1];
        h ^= h >> 29;
        h *= 0xC4CEB9FE1A85EC53ull;
    }
    h ^= h >> 32;
    return (uint32_t)(h % COLL_RATE_BUCKETS);
}

int coll_limits_take(coll_limits_t *l, const uint8_t addr[16], uint64_t now_ms)
{
    if (l->rate_per_s == 0) {
        return 0;
    }
    uint64_t cap = (uint64_t)l->burst * 1000u;
    pthread_mutex_lock(&l->mu);
    uint8_t key[16];
    coll_limits_addr_key(addr, key);
    coll_bucket_t *bk = &l->bucket[bucket_of(l, key)];
    if (bk->last_ms == 0) {
        bk->tokens_milli = cap; /* a new address starts with a full bucket */
    } else if (now_ms > bk->last_ms) {
        uint64_t add = (now_ms - bk->last_ms) * l->rate_per_s; /* thousandths */
        bk->tokens_milli = bk->tokens_milli + add > cap ? cap : bk->tokens_milli + add;
    }
    bk->last_ms = now_ms > 0 ? now_ms : 1;
    int ok = bk->tokens_milli >= 1000u;
    if (ok) {
        bk->tokens_milli -= 1000u;
    } else {
        l->st.rate_limited++;
    }
    pthread_mutex_unlock(&l->mu);
    return ok ? 0 : -1;
}

int coll_limits_reserve(coll_limits_t *l, size_t bytes)
{
    pthread_mutex_lock(&l->mu);
    int ok = l->memory_budget == 0 || l->st.memory_reserved + bytes <= l->memory_budget;
    if (ok) {
        l->st.memory_reserved += bytes;
        if (l->st.memory_reserved > l->st.memory_peak) {
            l->st.memory_peak = l->st.memory_reserved;
        }
    }
    pthread_mutex_unlock(&l->mu);
    return ok ? 0 : -1;
}

void coll_limits_release(coll_limits_t *l, size_t bytes)
{
    pthread_mutex_lock(&l->mu);
    l->st.memory_reserved -= bytes <= l->st.memory_reserved ? bytes : l->st.memory_reserved;
    pthread_mutex_unlock(&l->mu);
}

void coll_limits_count(coll_limits_t *l, uint64_t *counter, int64_t delta)
{
    pthread_mutex_lock(&l->mu);
    *counter = (uint64_t)((int64_t)*counter + delta);
    pthread_mutex_unlock(&l->mu);
}

void coll_limits_stats(coll_limits_t *l, coll_limit_stats_t *out)
{
    pthread_mutex_lock(&l->mu);
    *out = l->st;
    pthread_mutex_unlock(&l->mu);
}
