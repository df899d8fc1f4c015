/* SPDX-License-Identifier: Apache-2.0 */
/* The collector's configuration file (--config FILE): the same options as the command line,
 * one per line, so a service unit needs only --config:
 *
 *   # '#' starts a comment; blank lines are ignored
 *   listen = 0.0.0.0:8443        an option:   NAME = VALUE   (NAME is --NAME without dashes)
 *   public-estimates = false     a flag:      NAME = true | false
 *
 * Values run to the end of the line (spaces inside are kept, around them trimmed). Options on
 * the command line come after the file's, so they override it. */
#ifndef DPM_COLLECTOR_CONFIG_H
#define DPM_COLLECTOR_CONFIG_H

#include <stddef.h>

/* A new argument vector: argv[0], the options of the file at path, then argv[1 .. argc) without
 * "--config PATH". flags: the NULL-terminated names that take no value; options: those that take
 * one (any other name is "FILE:LINE: unknown option 'NAME'", with " (did you mean 'x'?)" when
 * one is close). The lines are read by common/kv.h. 0 and *out_argv (free with
 * coll_config_free), or -1 with "FILE:LINE: ..." in err. */
int coll_config_argv(const char *path, int argc, char **argv, const char *const *flags,
                     const char *const *options, int *out_argc, char ***out_argv, char *err,
                     size_t cap);
void coll_config_free(int argc, char **argv);

#endif /* DPM_COLLECTOR_CONFIG_H */
