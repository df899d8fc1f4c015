/* SPDX-License-Identifier: Apache-2.0 */
/* The configuration file as command-line options (see config.h). */
#include "collector/ops/config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/text_list.h"

#define MAX_ARGS 256
#define FILE_MAX_BYTES (1u << 20)

static int is_flag(const char *name, const char *const *flags)
{
    for (; *flags != NULL; flags++) {
        if (strcmp(name, *flags) == 0) {
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

int coll_config_argv(const char *path, int argc, char **argv, const char *const *flags,
                     int *out_argc, char ***out_argv, char *err, size_t cap)
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
    text_lines_t lines;
    text_lines_init(&lines, text, len);
    char line[4096], *s;
    int got;
    while (rc == 0 && (got = text_lines_next(&lines, line, sizeof(line), &s)) != TEXT_LINE_END) {
        int lineno = lines.line;
        if (got != TEXT_LINE_OK) {
            snprintf(err, cap, "%s:%d: %s", path, lineno,
                     got == TEXT_LINE_NUL ? "a NUL byte" : "longer than 4095 characters");
            rc = -1;
            break;
        }
        char *eq = strchr(s, '=');
        if (eq == NULL) {
            snprintf(err, cap, "%s:%d: want NAME = VALUE", path, lineno);
            rc = -1;
            break;
        }
        *eq = '\0';
        char *name = text_trim(s), *value = text_trim(eq + 1);
        char opt[128];
        if (*name == '\0' || strlen(name) > 100 || strncmp(name, "-", 1) == 0 ||
            strcmp(name, "config") == 0) {
            snprintf(err, cap, "%s:%d: '%s' is not an option name", path, lineno, name);
            rc = -1;
            break;
        }
        snprintf(opt, sizeof(opt), "--%s", name);
        if (is_flag(name, flags)) {
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
