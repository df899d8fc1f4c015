/* SPDX-License-Identifier: Apache-2.0 */
/* The [dap_task] blocks of the campaigns file and the aggregators' key files
 * (host-sim/aggregator/dap_tasks.h). Checked:
 *   - a full block: the decoded task (VDAF, precision, batch size, ε, URLs, interval), the
 *     default sensitivity (the VDAF's L1 bound) and chunk, the id's base64url both ways;
 *   - the campaigns parser skips [dap_task] blocks and accepts a file of only those, and this
 *     parser skips [campaign] blocks;
 *   - each refusal names its line and cause: a missing required key, an unknown key (with a
 *     spelling hint), a bad id, a sensitivity above the VDAF's bound, start without duration,
 *     an interval off the precision, an http:// URL, the same id twice, an unreadable
 *     verification key, a key file without its secret;
 *   - the task digest (DPM-Task-Digest): equal for the same block read twice, different when
 *     ε, the sensitivity or the verification key differ;
 *   - base64url: RFC 4648's alphabet, unpadded; non-zero trailing bits, a wrong length and a
 *     '+' refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "aggregator/dap_tasks.h"
#include "collector/ingest/campaigns.h"

#define ID "8BY0RzZMzxvA46_8ymhzycOB9krN-QIGYvg_RsByGec"

static char dir[64];
static char hpke[3][160]; /* three configs in hex */

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/test_dap_tasks.%d", (int)getpid());
    char cmd[200];
    snprintf(cmd, sizeof(cmd), "mkdir -p %s", dir);
    assert_int_equal(system(cmd), 0);
    char path[128];
    snprintf(path, sizeof(path), "%s/verify.key", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n");
    fclose(f);
    snprintf(path, sizeof(path), "%s/other.key", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "ff0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n");
    fclose(f);
    for (int i = 0; i < 3; i++) { /* key files as dap-keygen writes them */
        snprintf(path, sizeof(path), "%s/k%d", dir, i);
        f = fopen(path, "w");
        assert_non_null(f);
        fprintf(f, "config_id = %d\nsecret = %064x\n", i + 1, i + 7);
        fclose(f);
        dpm_dap_hpke_key_t key;
        dpm_hpke_config_t cfg;
        char err[300];
        assert_int_equal(dap_key_load(path, &key, &cfg, err, sizeof(err)), 0);
        uint8_t enc[64];
        size_t n = 0;
        assert_int_equal(dpm_hpke_config_encode(&cfg, enc, sizeof(enc), &n), DPM_OK);
        for (size_t k = 0; k < n; k++) {
            snprintf(hpke[i] + 2 * k, 3, "%02x", enc[k]);
        }
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[200];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* A full block with `extra` lines added and the key `drop` left out (NULL: none). */
static void block(char *out, size_t cap, const char *extra, const char *drop)
{
    const char *lines[][2] = {{"id", ID},
                              {"vdaf", "sumvec"},
                              {"length", "8"},
                              {"max", "15"},
                              {"eps", "2"},
                              {"min_batch_size", "100"},
                              {"time_precision", "3600"},
                              {"leader", "https://leader.example:8443/dap"},
                              {"helper", "https://helper.example/dap"},
                              {"leader_hpke_config", hpke[0]},
                              {"helper_hpke_config", hpke[1]},
                              {"collector_hpke_config", hpke[2]},
                              {"verify_key", "verify.key"}};
    size_t o = (size_t)snprintf(out, cap, "# a task\n[dap_task]\n");
    for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
        if (drop == NULL || strcmp(drop, lines[i][0]) != 0) {
            o += (size_t)snprintf(out + o, cap - o, "%s = %s\n", lines[i][0], lines[i][1]);
        }
    }
    snprintf(out + o, cap - o, "%s", extra != NULL ? extra : "");
}

static int parse(const char *text, dap_tasks_t *ts, char *err, size_t cap)
{
    return dap_tasks_parse(text, strlen(text), dir, ts, err, cap);
}

static void refused(const char *text, const char *want)
{
    dap_tasks_t *ts = calloc(1, sizeof(*ts));
    char err[400] = "";
    assert_int_equal(parse(text, ts, err, sizeof(err)), -1);
    if (strstr(err, want) == NULL) {
        fail_msg("want '%s' in: %s", want, err);
    }
    free(ts);
}

static void a_full_block_decodes(void **state)
{
    (void)state;
    char text[4096];
    block(text, sizeof(text), "start = 1767225600\nduration = 7200\n", NULL);
    dap_tasks_t *ts = calloc(1, sizeof(*ts));
    char err[400] = "";
    if (parse(text, ts, err, sizeof(err)) != 0) {
        fail_msg("%s", err);
    }
    assert_int_equal(ts->n, 1);
    const dap_task_spec_t *s = &ts->t[0];
    assert_int_equal(s->t.vdaf.kind, DPM_PRIO3_SUMVEC);
    assert_int_equal(s->t.vdaf.length, 8);
    assert_int_equal(s->t.vdaf.max_measurement, 15);
    assert_int_equal(s->t.vdaf.chunk_length, 6); /* round(sqrt(8 x 4 bits)) */
    assert_int_equal(s->t.time_precision, 3600);
    assert_int_equal(s->t.min_batch_size, 100);
    assert_int_equal(s->t.central_eps, 2u << 16);
    assert_int_equal(s->t.has_interval, 1);
    assert_int_equal(s->t.interval_start, 1767225600u / 3600u);
    assert_int_equal(s->t.interval_duration, 2);
    assert_int_equal(s->sensitivity, 8 * 15);
    assert_int_equal(s->t.leader_url.len, strlen("https://leader.example:8443/dap"));
    assert_int_equal(s->verify_key[31], 0x1f);
    char b64[64];
    dap_b64url_encode(s->t.id, sizeof(s->t.id), b64);
    assert_string_equal(b64, ID);
    assert_ptr_equal(dap_tasks_find(ts, ID, strlen(ID)), s);
    assert_null(dap_tasks_find(ts, ID, strlen(ID) - 1));
    /* the campaigns parser skips the block and takes a file of only [dap_task] */
    coll_campaigns_t *cs = calloc(1, sizeof(*cs));
    assert_int_equal(coll_campaigns_parse(text, strlen(text), cs, err, sizeof(err)), 0);
    assert_int_equal(cs->n, 0);
    assert_int_equal(cs->dap_tasks, 1);
    /* and this parser skips [campaign] blocks around it */
    char both[6000];
    snprintf(both, sizeof(both),
             "[campaign]\nid = 1\nmechanism = tuple_mr\neps = 1\ngroups = 2\nmetrics = tpr\n%s"
             "[campaign]\nid = 2\nmechanism = tuple_mr\neps = 1\ngroups = 2\nmetrics = fpr\n",
             text);
    assert_int_equal(coll_campaigns_parse(both, strlen(both), cs, err, sizeof(err)), 0);
    assert_int_equal(cs->n, 2);
    assert_int_equal(parse(both, ts, err, sizeof(err)), 0);
    assert_int_equal(ts->n, 1);
    /* a misspelt section gets a hint in the campaigns parser */
    const char *typo = "[dap_tsk]\nid = 1\n";
    assert_int_equal(coll_campaigns_parse(typo, strlen(typo), cs, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "dap_task"));
    free(cs);
    free(ts);
}

static void refusals_name_line_and_cause(void **state)
{
    (void)state;
    char text[4096];
    block(text, sizeof(text), NULL, "min_batch_size");
    refused(text, "min_batch_size is required");
    block(text, sizeof(text), NULL, "verify_key");
    refused(text, "verify_key is required");
    block(text, sizeof(text), "min_bach_size = 3\n", NULL);
    refused(text, "did you mean 'min_batch_size'");
    block(text, sizeof(text), "sensitivity = 121\n", NULL);
    refused(text, "sensitivity 121 is above the VDAF's bound 120");
    block(text, sizeof(text), "vdaf = histogram\nsensitivity = 3\n", NULL);
    refused(text,
            "sensitivity 3 is above the VDAF's bound 2"); /* one-hot: out of one, into another */
    block(text, sizeof(text), "start = 3600\n", NULL);
    refused(text, "give start and duration together");
    block(text, sizeof(text), "start = 1800\nduration = 3600\n", NULL);
    refused(text, "multiples of time_precision");
    block(text, sizeof(text), "leader = http://leader.example/dap\n", NULL);
    refused(text, "line 16: bad leader");
    block(text, sizeof(text), "vdaf = prio2\n", NULL);
    refused(text, "want count, sum, sumvec or histogram");
    block(text, sizeof(text), "verify_key = missing.key\n", NULL);
    refused(text, "verify_key: cannot open");
    block(text, sizeof(text), "eps = 0.001\n", NULL);
    refused(text, "bad eps");
    char two[9000];
    block(text, sizeof(text), NULL, NULL);
    snprintf(two, sizeof(two), "%s%s", text, strstr(text, "[dap_task]"));
    refused(two, "is also the task at line 2");
    block(text, sizeof(text), NULL, "id");
    char bad_id[4200];
    snprintf(bad_id, sizeof(bad_id), "%sid = %.42s+\n", text, ID);
    refused(bad_id, "want 32 bytes in unpadded base64url");
    /* a key file without its secret */
    char path[128], err[300];
    snprintf(path, sizeof(path), "%s/bad.key", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "config_id = 1\n");
    fclose(f);
    dpm_dap_hpke_key_t key;
    dpm_hpke_config_t cfg;
    assert_int_equal(dap_key_load(path, &key, &cfg, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "dap-keygen"));
    /* the AEAD line: ChaCha20-Poly1305 taken (the same secret's key, another AEAD), another
     * name refused with the ones it takes */
    static const char *const aead_line[3] = {"", "aead = chacha20poly1305\n", "aead = aes256\n"};
    dpm_hpke_config_t c3[3];
    for (int i = 0; i < 3; i++) {
        f = fopen(path, "w");
        assert_non_null(f);
        fprintf(f, "config_id = 4\n%ssecret = %064x\n", aead_line[i], 9);
        fclose(f);
        err[0] = 0;
        assert_int_equal(dap_key_load(path, &key, &c3[i], err, sizeof(err)), i < 2 ? 0 : -1);
    }
    assert_int_equal(c3[0].aead_id, DPM_HPKE_AEAD_AES_128_GCM);
    assert_int_equal(c3[1].aead_id, DPM_HPKE_AEAD_CHACHA20_POLY1305);
    assert_int_equal(key.aead_id, DPM_HPKE_AEAD_CHACHA20_POLY1305); /* the last one taken */
    assert_memory_equal(c3[0].public_key, c3[1].public_key, DPM_HPKE_NPK);
    assert_non_null(strstr(err, "'aead = chacha20poly1305'"));
}

/* noise = gaussian: sigma2 = ceil(l2_sensitivity_sq / (2 rho)) with rho rounded down to
 * k / 2^32, and the eps devices charge, rho' + 2 sqrt(rho' ln(1/delta)) rounded up, against
 * values computed apart (mpmath, 50 digits); the keys of one mechanism refused on the other. */
static void gaussian_noise_from_rho_and_delta(void **state)
{
    (void)state;
    char text[4096], err[400] = "";
    dap_tasks_t *ts = calloc(1, sizeof(*ts));
    block(text, sizeof(text), "noise = gaussian\nrho = 0.5\ndelta = 1e-9\n", "eps");
    if (parse(text, ts, err, sizeof(err)) != 0) {
        fail_msg("%s", err);
    }
    const dap_task_spec_t *s = &ts->t[0];
    assert_int_equal(s->t.dp_mechanism, DPM_DAP_DP_DISCRETE_GAUSSIAN);
    assert_int_equal(s->sensitivity, 8 * 15 * 15); /* the sumvec's bound, length x max^2 */
    assert_int_equal(s->t.central_sigma2, 1800);
    assert_int_equal(s->t.central_eps, 454683); /* 6.93789807886804 */
    block(text, sizeof(text),
          "noise = gaussian\nrho = 0.3\ndelta = 1e-9\nl2_sensitivity_sq = 100\n", "eps");
    assert_int_equal(parse(text, ts, err, sizeof(err)), 0);
    assert_int_equal(s->sensitivity, 100);
    assert_int_equal(s->t.central_sigma2, 167); /* 166.67 up: rho' = 0.2994 */
    assert_int_equal(s->t.central_eps, 346109); /* 5.28119629971977 */
    free(ts);
    block(text, sizeof(text), "noise = gaussian\nrho = 0.5\ndelta = 1e-9\n", NULL);
    refused(text, "noise = gaussian takes rho and delta");
    block(text, sizeof(text), "noise = gaussian\nrho = 0.5\n", "eps");
    refused(text, "noise = gaussian takes rho and delta");
    block(text, sizeof(text), "rho = 0.5\n", NULL);
    refused(text, "are for noise = gaussian");
    block(text, sizeof(text),
          "noise = gaussian\nrho = 0.5\ndelta = 1e-9\nl2_sensitivity_sq = 1801\n", "eps");
    refused(text, "l2_sensitivity_sq 1801 is above the VDAF's bound");
    block(text, sizeof(text),
          "vdaf = sum\nmax = 1000000\nnoise = gaussian\nrho = 0.5\ndelta = 1e-9\n", "eps");
    refused(text, "above 2^30");
    block(text, sizeof(text), "noise = gaussian\nrho = 0\ndelta = 1e-9\n", "eps");
    refused(text, "bad rho");
    block(text, sizeof(text), "noise = gaussian\nrho = 0.5\ndelta = 1e-4\n", "eps");
    refused(text, "bad delta '1e-4' (want a decimal in (0, 1e-5]");
    block(text, sizeof(text), "rho = 0.5\ndelta = 1e-9\n", "eps"); /* noise = gaussian forgotten */
    refused(text, "need noise = gaussian (or give eps");
    block(text, sizeof(text), "noise = normal\n", NULL);
    refused(text, "want laplace or gaussian");
}

/* The hybrid: local_eps and local_bins go into the label-RR task extension (the block's sumvec
 * has length 8 = 2 groups x 2 x 2 bins, or 1 group x 2 x 4). */
static void label_rr_from_local_eps_and_bins(void **state)
{
    (void)state;
    char text[4096], err[400] = "";
    dap_tasks_t *ts = calloc(1, sizeof(*ts));
    block(text, sizeof(text), "local_eps = 1.5\nlocal_bins = 4\n", NULL);
    if (parse(text, ts, err, sizeof(err)) != 0) {
        fail_msg("%s", err);
    }
    assert_int_equal(ts->t[0].t.local_eps, 98304); /* 1.5 in Q16.16 */
    assert_int_equal(ts->t[0].t.local_bins, 4);
    char plain[65];
    block(text, sizeof(text), "", NULL);
    assert_int_equal(parse(text, ts, err, sizeof(err)), 0);
    assert_int_equal(ts->t[0].t.local_eps, 0);
    memcpy(plain, ts->t[0].digest, sizeof(plain));
    block(text, sizeof(text), "local_eps = 1.5\nlocal_bins = 2\n", NULL);
    assert_int_equal(parse(text, ts, err, sizeof(err)), 0);
    assert_int_equal(ts->t[0].t.local_bins, 2);
    assert_string_not_equal(ts->t[0].digest, plain); /* a TaskConfiguration of its own */
    free(ts);
    block(text, sizeof(text), "local_eps = 1.5\n", NULL);
    refused(text, "local_eps and local_bins go together");
    block(text, sizeof(text), "local_bins = 4\n", NULL);
    refused(text, "local_eps and local_bins go together");
    block(text, sizeof(text), "local_eps = 1.5\nlocal_bins = 3\n", NULL);
    refused(text, "whose length is groups x 2 x local_bins");
    block(text, sizeof(text), "vdaf = sum\nlocal_eps = 1.5\nlocal_bins = 4\n", NULL);
    refused(text, "on a sumvec");
    block(text, sizeof(text), "local_eps = 0\nlocal_bins = 4\n", NULL);
    refused(text, "bad local_eps '0'");
    block(text, sizeof(text), "local_eps = 1.5\nlocal_bins = 0\n", NULL);
    refused(text, "bad local_bins '0'");
}

static void the_digest_names_every_parameter(void **state)
{
    (void)state;
    const char *variants[] = {"", "eps = 1\n", "sensitivity = 60\n", "verify_key = other.key\n",
                              "min_batch_size = 101\n"};
    char digest[5][65];
    for (int i = 0; i < 5; i++) {
        char text[4096], err[400] = "";
        block(text, sizeof(text), variants[i], NULL);
        dap_tasks_t *ts = calloc(1, sizeof(*ts));
        if (parse(text, ts, err, sizeof(err)) != 0) {
            fail_msg("%s", err);
        }
        memcpy(digest[i], ts->t[0].digest, 65);
        assert_int_equal(strlen(digest[i]), 64);
        free(ts);
    }
    for (int i = 1; i < 5; i++) {
        assert_string_not_equal(digest[i], digest[0]);
    }
    char text[4096], err[400];
    block(text, sizeof(text), "", NULL);
    dap_tasks_t *ts = calloc(1, sizeof(*ts));
    assert_int_equal(parse(text, ts, err, sizeof(err)), 0);
    assert_string_equal(ts->t[0].digest, digest[0]); /* the same block: the same digest */
    free(ts);
}

static void base64url(void **state)
{
    (void)state;
    /* RFC 4648 section 10's vectors, base64url without padding */
    const char *in[] = {"f", "fo", "foo", "foob", "fooba", "foobar"};
    const char *want[] = {"Zg", "Zm8", "Zm9v", "Zm9vYg", "Zm9vYmE", "Zm9vYmFy"};
    for (int i = 0; i < 6; i++) {
        char out[16];
        uint8_t back[8];
        size_t n = strlen(in[i]);
        dap_b64url_encode((const uint8_t *)in[i], n, out);
        assert_string_equal(out, want[i]);
        assert_int_equal(dap_b64url_decode(out, strlen(out), back, n), 0);
        assert_memory_equal(back, in[i], n);
    }
    const uint8_t ff[2] = {0xfb, 0xff};
    char out[8];
    dap_b64url_encode(ff, 2, out);
    assert_string_equal(out, "-_8"); /* the URL-safe alphabet */
    uint8_t back[4];
    assert_int_equal(dap_b64url_decode("Zh", 2, back, 1), -1);  /* trailing bits set */
    assert_int_equal(dap_b64url_decode("Zm9", 3, back, 1), -1); /* another length */
    assert_int_equal(dap_b64url_decode("Z+", 2, back, 1), -1);  /* not base64url */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_full_block_decodes),
        cmocka_unit_test(refusals_name_line_and_cause),
        cmocka_unit_test(gaussian_noise_from_rho_and_delta),
        cmocka_unit_test(label_rr_from_local_eps_and_bins),
        cmocka_unit_test(the_digest_names_every_parameter),
        cmocka_unit_test(base64url),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
