/* SPDX-License-Identifier: Apache-2.0 */
/* The Batch / BatchResponse codec (dpm/expert/batch.h) behind a line protocol, for an independent
 * protobuf implementation to check (tests/e2e/test_batch_codec_protobuf.py). One command per
 * line on stdin, one answer line on stdout; bytes in hex, "-" for none:
 *   enc_batch LOST [REPORT...]        -> the Batch
 *   dec_batch HEX                     -> LOST [REPORT...]        or "ERR <reason>"
 *   enc_resp ACC DUP [ID,REASON...]   -> the BatchResponse
 *   dec_resp HEX                      -> ACC DUP [ID,REASON...]  or "ERR <reason>" */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dpm/expert/batch.h"

#define MAXB 65536

static size_t unhex(const char *s, uint8_t *out, size_t cap)
{
    size_t n = 0;
    if (strcmp(s, "-") == 0) {
        return 0;
    }
    for (; s[0] != '\0' && s[1] != '\0' && n < cap; s += 2) {
        unsigned v;
        if (sscanf(s, "%2x", &v) != 1) {
            break;
        }
        out[n++] = (uint8_t)v;
    }
    return n;
}

static void puthex(FILE *f, const uint8_t *p, size_t n)
{
    if (n == 0) {
        fputs("-", f);
    }
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "%02x", p[i]);
    }
}

static const char *print_reject(void *ctx, const uint8_t *id, size_t id_len, const uint8_t *reason,
                                size_t reason_len)
{
    FILE *f = ctx;
    fputs(" ", f);
    puthex(f, id, id_len);
    fputs(",", f);
    puthex(f, reason, reason_len);
    return NULL;
}

static int run(char *line)
{
    static uint8_t out[MAXB], in[MAXB], a[MAXB], b[MAXB];
    char *save = NULL;
    const char *cmd = strtok_r(line, " \n", &save);
    if (cmd == NULL) {
        return 1;
    }
    size_t pos = 0;
    dpm_status_t st = DPM_OK;
    const char *why = NULL;
    if (strcmp(cmd, "enc_batch") == 0 || strcmp(cmd, "enc_resp") == 0) {
        int batch = cmd[4] == 'b';
        const char *t = strtok_r(NULL, " \n", &save);
        uint32_t first = (uint32_t)strtoul(t != NULL ? t : "0", NULL, 10);
        if (!batch) {
            t = strtok_r(NULL, " \n", &save);
            st = dpm_batch_response_put_counts(out, sizeof(out), &pos, first,
                                               (uint32_t)strtoul(t != NULL ? t : "0", NULL, 10));
        }
        while (st == DPM_OK && (t = strtok_r(NULL, " \n", &save)) != NULL) {
            if (batch) {
                size_t n = unhex(t, a, sizeof(a));
                st = dpm_batch_put_report(out, sizeof(out), &pos, a, n);
                continue;
            }
            char *comma = strchr(t, ',');
            if (comma == NULL) {
                return 1;
            }
            *comma = '\0';
            size_t ni = unhex(t, a, sizeof(a)), nr = unhex(comma + 1, b, sizeof(b));
            st = dpm_batch_response_put_reject(out, sizeof(out), &pos, a, ni, (const char *)b, nr);
        }
        if (st == DPM_OK && batch) {
            st = dpm_batch_put_lost(out, sizeof(out), &pos, first);
        }
        if (st != DPM_OK) {
            return 1;
        }
        puthex(stdout, out, pos);
        puts("");
        return 0;
    }
    const char *t = strtok_r(NULL, " \n", &save);
    size_t n = unhex(t != NULL ? t : "-", in, sizeof(in));
    if (strcmp(cmd, "dec_resp") == 0) {
        uint32_t acc = 0, dup = 0;
        /* the counts come after the rejects are decoded: print the rejects to a buffer first */
        static char rejects[4 * MAXB];
        rejects[0] = '\0'; /* fmemopen writes no NUL if nothing is written */
        FILE *mem = fmemopen(rejects, sizeof(rejects), "w");
        if (mem == NULL) {
            return 1;
        }
        st = dpm_batch_response_decode(in, n, &acc, &dup, print_reject, mem, &why);
        fclose(mem);
        if (st == DPM_OK) {
            printf("%u %u%s\n", (unsigned)acc, (unsigned)dup, rejects);
        } else {
            printf("ERR %s\n", why);
        }
        return 0;
    }
    if (strcmp(cmd, "dec_batch") != 0) {
        return 1;
    }
    uint64_t lost = 0;
    static char reps[4 * MAXB];
    size_t rl = 0;
    for (;;) {
        dpm_batch_item_t it;
        st = dpm_batch_next(in, n, &pos, &it, &why);
        if (st != DPM_OK || it.field == 0) {
            break;
        }
        if (it.field == DPM_BATCH_FIELD_LOST) {
            lost = it.lost;
            continue;
        }
        reps[rl++] = ' ';
        if (it.report_len == 0) {
            reps[rl++] = '-';
        }
        for (size_t i = 0; i < it.report_len && rl + 3 < sizeof(reps); i++) {
            rl += (size_t)snprintf(reps + rl, 3, "%02x", it.report[i]);
        }
    }
    reps[rl] = '\0';
    if (st == DPM_OK) {
        printf("%llu%s\n", (unsigned long long)lost, reps);
    } else {
        printf("ERR %s\n", why);
    }
    return 0;
}

int main(void)
{
    static char line[8 * MAXB];
    while (fgets(line, sizeof(line), stdin) != NULL) {
        if (run(line) != 0) {
            fprintf(stderr, "tool_batch_codec: bad command\n");
            return 1;
        }
        fflush(stdout);
    }
    return 0;
}
