/* SPDX-License-Identifier: Apache-2.0 */
/* The configuration file as command-line options (see config.h). */
#include "collector/ops/config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ARGS 256

static char *trim(char *s)
{
    while (isspace((unsigned char)*s)) {
        s++;
    }
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1])) {
        s[--n] = '\0';
    }
    return s;
}

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
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        snprintf(err, cap, "cannot read the configuration file %s", path);
        return -1;
    }
    char **v = calloc(MAX_ARGS, sizeof(char *));
    int n = 0, lineno = 0, rc = 0;
    char line[4096];
    if (v == NULL || push(v, &n, argv[0]) != 0) {
        snprintf(err, cap, "out of memory");
        rc = -1;
    }
    while (rc == 0 && fgets(line, sizeof(line), f) != NULL) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash != NULL) {
            *hash = '\0';
        }
        char *s = trim(line);
        if (*s == '\0') {
            continue;
        }
        char *eq = strchr(s, '=');
        if (eq == NULL) {
            snprintf(err, cap, "%s:%d: want NAME = VALUE", path, lineno);
            rc = -1;
            break;
        }
        *eq = '\0';
        char *name = trim(s), *value = trim(eq + 1);
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
    fclose(f);
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
