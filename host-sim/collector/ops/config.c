/* SPDX-License-Identifier: Apache-2.0 */
/* The configuration file as command-line options (see config.h). */
#include "collector/ops/config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/kv.h"

#define MAX_ARGS 256
#define FILE_MAX_BYTES (1u << 20)
#define MAX_NAMES 64

static int listed(const char *name, const char *const *names)
{
    for (; *names != NULL; names++) {
        if (strcmp(name, *names) == 0) {
            return 1;
        }
    }
    return 0;
}

void coll_config_free(int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        free(argv[i]);
    }
    free(argv);
}

static int push(char **v, int *n, const char *s)
{
    if (*n >= MAX_ARGS - 1 || (v[*n] = strdup(s)) == NULL) {
        return -1;
    }
    (*n)++;
    return 0;
}

/* "FILE:LINE: unknown option 'NAME'", with the closest of flags and options as a hint. */
static void unknown(char *err, size_t cap, const char *path, int line, const char *name,
                    const char *const *flags, const char *const *options)
{
    const char *cand[MAX_NAMES];
    int n = 0;
    for (const char *const *l = flags; *l != NULL && n < MAX_NAMES; l++) {
        cand[n++] = *l;
    }
    for (const char *const *l = options; *l != NULL && n < MAX_NAMES; l++) {
        cand[n++] = *l;
    }
    char hint[128];
    snprintf(err, cap, "%s:%d: unknown option '%s'%s", path, line, name,
             kv_suggest(name, cand, n, hint, sizeof(hint)));
}

int coll_config_argv(const char *path, int argc, char **argv, const char *const *flags,
                     const char *const *options, int *out_argc, char ***out_argv, char *err,
                     size_t cap)
{
    err[0] = '\0';
    char *text = NULL;
    size_t len = 0;
    if (text_read_file(path, FILE_MAX_BYTES, &text, &len) != 0) {
        snprintf(err, cap, "cannot read the configuration file %s (or larger than 1 MiB)", path);
        return -1;
    }
    char **v = calloc(MAX_ARGS, sizeof(char *));
    int n = 0, rc = 0;
    if (v == NULL || push(v, &n, argv[0]) != 0) {
        snprintf(err, cap, "out of memory");
        rc = -1;
    }
    kv_t kv;
    kv_item_t it;
    char line[4096];
    kv_init(&kv, text, len, line, sizeof(line));
    int got;
    while (rc == 0 && (got = kv_next(&kv, &it)) != KV_END) {
        int lineno = it.line;
        if (got == KV_NUL || got == KV_TOO_LONG) {
            snprintf(err, cap, "%s:%d: %s", path, lineno,
                     got == KV_NUL ? "a NUL byte" : "longer than 4095 characters");
            rc = -1;
            break;
        }
        if (got != KV_PAIR) {
            snprintf(err, cap, "%s:%d: want NAME = VALUE", path, lineno);
            rc = -1;
            break;
        }
        const char *name = it.key, *value = it.value;
        char opt[128];
        if (*name == '\0' || strlen(name) > 100 || strncmp(name, "-", 1) == 0 ||
            strcmp(name, "config") == 0) {
            snprintf(err, cap, "%s:%d: '%s' is not an option name", path, lineno, name);
            rc = -1;
            break;
        }
        snprintf(opt, sizeof(opt), "--%s", name);
        if (!listed(name, flags) && !listed(name, options)) {
            unknown(err, cap, path, lineno, name, flags, options);
            rc = -1;
        } else if (listed(name, flags)) {
            if (strcmp(value, "true") == 0 || strcmp(value, "yes") == 0) {
                rc = push(v, &n, opt);
            } else if (strcmp(value, "false") != 0 && strcmp(value, "no") != 0) {
                snprintf(err, cap, "%s:%d: %s wants true or false", path, lineno, name);
                rc = -1;
            }
        } else if (*value == '\0') {
            snprintf(err, cap, "%s:%d: %s needs a value", path, lineno, name);
            rc = -1;
        } else {
            rc = push(v, &n, opt) != 0 || push(v, &n, value) != 0 ? -1 : 0;
        }
        if (rc != 0 && err[0] == '\0') {
            snprintf(err, cap, "%s:%d: too many options", path, lineno);
        }
    }
    free(text);
    for (int i = 1; rc == 0 && i < argc; i++) {
        if (strcmp(argv[i], "--config") == 0 && i + 1 < argc) {
            i++;
            continue;
        }
        if (push(v, &n, argv[i]) != 0) {
            snprintf(err, cap, "too many options");
            rc = -1;
        }
    }
    if (rc != 0) {
        coll_config_free(n, v);
        return -1;
    }
    *out_argc = n;
    *out_argv = v;
    return 0;
}
