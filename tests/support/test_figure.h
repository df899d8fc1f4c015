/* SPDX-License-Identifier: Apache-2.0 */
/* test_figure: a figure a test prints for the documents, as one machine-readable TAP comment
 *
 *   # figure NAME VALUE UNIT
 *
 * `make results RESULTS=tests` (.make/results.py) runs a fixed list of tests and records these
 * lines in tests/results/tests.json, so that the documents quote figures from a record rather
 * than from a run by hand. The tests use fixed seeds, so a figure is the same at every run of
 * one commit. NAME: lower case, digits, '_' and '.', unique within the program (the recorder
 * prefixes the program's name); UNIT: a word ("share", "se", "bytes", "runs", "1" for a pure
 * number). Printing a figure never changes what a test asserts. */
#ifndef TEST_FIGURE_H
#define TEST_FIGURE_H

#include <stdio.h>

/* %.10g: enough digits that every rounding a document quotes can be read back from it. */
static inline void test_figure(const char *name, double value, const char *unit)
{
    printf("# figure %s %.10g %s\n", name, value, unit);
    fflush(stdout);
}

/* The figure WHAT.FIELD, WHAT made a name: lower case, every run of other characters one '_'
 * ("fedauc_rr, eps 8, M 5000" and "cover": fedauc_rr_eps_8_m_5000.cover), so that a test can
 * name its figures by the label it already prints. */
static inline void test_figure_of(const char *what, const char *field, double value,
                                  const char *unit)
{
    char name[128];
    size_t n = 0;
    for (const char *c = what; *c != '\0' && n + 1 < sizeof(name); c++) {
        char ch = *c >= 'A' && *c <= 'Z' ? (char)(*c - 'A' + 'a') : *c;
        int keep = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '.';
        if (keep) {
            name[n++] = ch;
        } else if (n > 0 && name[n - 1] != '_') {
            name[n++] = '_';
        }
    }
    while (n > 0 && name[n - 1] == '_') {
        n--;
    }
    snprintf(name + n, sizeof(name) - n, ".%s", field);
    test_figure(name, value, unit);
}

#endif
