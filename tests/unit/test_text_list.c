/* SPDX-License-Identifier: Apache-2.0 */
/* host-sim/common/text_list.h and kv.h: the key=value reader, the file reader, line reader, trim
 * and list splitter of every host-side text format (scenario files, the collector's campaigns,
 * config and credential files, the deny list). The metrics list trims spans of a longer line
 * (text_trim_span), the others whole strings (text_trim): both must agree on every blank, and the
 * span form must not write into the line. Negative controls: a NUL or a character other than a
 * blank, CR or LF inside a span is kept; a file one byte over its limit is refused. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h> /* files: hosted targets only (bare-metal ports have none) */

#include <cmocka.h>

#include "common/kv.h"
#include "common/text_list.h"

static void test_trim_agrees(void **state)
{
    (void)state;
    static const struct {
        const char *in, *want;
    } kCases[] = {
        {"", ""},       {" \t ", ""},     {"a", "a"},         {"  key = v \t\r\n", "key = v"},
        {"\tv\r", "v"}, {"a b", "a b"},   {"\va\f", "\va\f"}, /* only blanks, CR, LF */
        {"x\n\n", "x"}, {"\r x", "\r x"},                     /* a CR leads nothing away */
    };
    for (size_t i = 0; i < sizeof(kCases) / sizeof(kCases[0]); i++) {
        char buf[64], line[64];
        strcpy(buf, kCases[i].in);
        assert_string_equal(text_trim(buf), kCases[i].want);
        /* the same text as a span in the middle of a line, which must stay unwritten */
        snprintf(line, sizeof(line), "[%s]", kCases[i].in);
        char *s = line + 1;
        size_t n = strlen(kCases[i].in);
        text_trim_span(&s, &n);
        assert_int_equal(n, strlen(kCases[i].want));
        assert_memory_equal(s, kCases[i].want, n);
        assert_int_equal(line[strlen(kCases[i].in) + 1], ']');
    }
    /* a NUL inside a span is data, not an end: the span keeps it */
    char nul[] = {' ', 'a', '\0', ' '};
    char *s = nul;
    size_t n = sizeof(nul);
    text_trim_span(&s, &n);
    assert_int_equal(n, 2);
    assert_ptr_equal(s, nul + 1);
}

/* The line reader: numbers count every line (blank, comment-only), the comment is cut, a line
 * of cap - 1 characters fits and one of cap does not, a NUL is refused, the last line needs no
 * LF. Negative controls: the too-long and NUL lines name their own line number. */
static void test_lines(void **state)
{
    (void)state;
    static const char kText[] = "# head\n\n  a = 1  # why\r\n\t[s]\nxyz";
    text_lines_t t;
    text_lines_init(&t, kText, sizeof(kText) - 1);
    char buf[16], *s = NULL;
    assert_int_equal(text_lines_next(&t, buf, sizeof(buf), &s), TEXT_LINE_OK);
    assert_string_equal(s, "a = 1");
    assert_int_equal(t.line, 3);
    assert_int_equal(text_lines_next(&t, buf, sizeof(buf), &s), TEXT_LINE_OK);
    assert_string_equal(s, "[s]");
    assert_int_equal(t.line, 4);
    assert_int_equal(text_lines_next(&t, buf, sizeof(buf), &s), TEXT_LINE_OK);
    assert_string_equal(s, "xyz");
    assert_int_equal(text_lines_next(&t, buf, sizeof(buf), &s), TEXT_LINE_END);
    assert_int_equal(t.line, 5);

    static const char kLong[] = "1234567\n12345678\n";
    text_lines_init(&t, kLong, sizeof(kLong) - 1);
    assert_int_equal(text_lines_next(&t, buf, 8, &s), TEXT_LINE_OK);
    assert_int_equal(text_lines_next(&t, buf, 8, &s), TEXT_LINE_TOO_LONG);
    assert_int_equal(t.line, 2);

    static const char kNul[] = {'a', '\n', '\n', 'b', '\0', 'c', '\n'};
    text_lines_init(&t, kNul, sizeof(kNul));
    assert_int_equal(text_lines_next(&t, buf, sizeof(buf), &s), TEXT_LINE_OK);
    assert_int_equal(text_lines_next(&t, buf, sizeof(buf), &s), TEXT_LINE_NUL);
    assert_int_equal(t.line, 3);
}

static void test_split_messages(void **state)
{
    (void)state;
    char buf[64], why[128];
    char *items[4];
    strcpy(buf, " a ,b\t, c ");
    assert_int_equal(text_list_split(buf, items, 4, why, sizeof(why)), 3);
    assert_string_equal(items[0], "a");
    assert_string_equal(items[2], "c");
    strcpy(buf, "a, b,");
    assert_int_equal(text_list_split(buf, items, 4, why, sizeof(why)), -1);
    assert_non_null(strstr(why, "a trailing comma?"));
    strcpy(buf, "a,b,c,d,e");
    assert_int_equal(text_list_split(buf, items, 4, why, sizeof(why)), -1);
    assert_non_null(strstr(why, "more than 4"));
}

/* Write n bytes of 'x' to a fresh file; its path in path. */
static void write_file(char *path, size_t cap, size_t n)
{
    snprintf(path, cap, "/tmp/dpm-text-list-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "wb");
    assert_non_null(f);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(fputc('x', f), 'x');
    }
    assert_int_equal(fclose(f), 0);
}

/* text_read_file: max bytes fit, max + 1 do not; a file longer than the first 64 KiB step reads
 * whole; an empty file is an empty text; a missing file says TEXT_FILE_OPEN with errno. */
static void test_read_file(void **state)
{
    (void)state;
    static const struct {
        size_t size, max;
        int want;
    } kCases[] = {
        {0, 16, 0},
        {16, 16, 0},
        {17, 16, TEXT_FILE_TOO_BIG},
        {200000, 1u << 20, 0},
        {200000, 199999, TEXT_FILE_TOO_BIG},
        {65536, 65536, 0},
        {65537, 65536, TEXT_FILE_TOO_BIG},
    };
    for (size_t i = 0; i < sizeof(kCases) / sizeof(kCases[0]); i++) {
        char path[64];
        write_file(path, sizeof(path), kCases[i].size);
        char *text = (char *)&kCases; /* must stay untouched on failure */
        size_t len = 7;
        assert_int_equal(text_read_file(path, kCases[i].max, &text, &len), kCases[i].want);
        if (kCases[i].want == 0) {
            assert_int_equal(len, kCases[i].size);
            assert_int_equal(text[len], '\0');
            assert_true(len == 0 || (text[0] == 'x' && text[len - 1] == 'x'));
            free(text);
        } else {
            assert_true(text == (char *)&kCases && len == 7);
        }
        assert_int_equal(unlink(path), 0);
    }
    char *text = NULL;
    size_t len = 0;
    errno = 0;
    assert_int_equal(text_read_file("/nonexistent/dpm/file", 16, &text, &len), TEXT_FILE_OPEN);
    assert_int_equal(errno, ENOENT);
    assert_null(text);
}

/* The key=value reader: every kind of line, in order, with its number; a bad line does not
 * stop the reading (the front-end decides). Negative controls: a line one character under the
 * limit is read, "[x" and "[]" are no sections, an '=' inside a value stays in it. */
static void test_kv_reader(void **state)
{
    (void)state;
    static const char text[] = "# comment\n"
                               "\n"
                               "[scenario]\n"
                               "  [group \t a ]  # named\n"
                               " key = v = w \r\n"
                               "[\n"
                               "[]\n"
                               "free text\n"
                               "[x\n"
                               "k=\n"
                               "=v\n"
                               "[ ]\n"
                               "0123456789abcdef0123456789abcdef\n" /* 32: too long for 32 bytes */
                               "0123456789abcdef0123456789abcde\n"  /* 31: fits */
                               "a\0b\n"
                               "last = 1";
    static const struct {
        int kind, line;
        const char *a, *b;
    } kWant[] = {
        {KV_SECTION, 3, "scenario", ""}, {KV_SECTION, 4, "group", "a"},
        {KV_PAIR, 5, "key", "v = w"},    {KV_BAD_SECTION, 6, "[", NULL},
        {KV_BAD_SECTION, 7, "[]", NULL}, {KV_TEXT, 8, "free text", NULL},
        {KV_BAD_SECTION, 9, "[x", NULL}, {KV_PAIR, 10, "k", ""},
        {KV_PAIR, 11, "", "v"},          {KV_SECTION, 12, "", ""},
        {KV_TOO_LONG, 13, NULL, NULL},   {KV_TEXT, 14, "0123456789abcdef0123456789abcde", NULL},
        {KV_NUL, 15, NULL, NULL},        {KV_PAIR, 16, "last", "1"},
        {KV_END, 16, NULL, NULL},
    };
    char buf[32];
    kv_t kv;
    kv_item_t it;
    kv_init(&kv, text, sizeof(text) - 1, buf, sizeof(buf));
    for (size_t i = 0; i < sizeof(kWant) / sizeof(kWant[0]); i++) {
        int got = kv_next(&kv, &it);
        if (got != kWant[i].kind || it.line != kWant[i].line) {
            print_error("item %zu: want kind %d line %d, got %d line %d\n", i, kWant[i].kind,
                        kWant[i].line, got, it.line);
            fail();
        }
        const char *a = got == KV_PAIR ? it.key : got == KV_SECTION ? it.kind : it.text;
        const char *b = got == KV_PAIR ? it.value : got == KV_SECTION ? it.name : NULL;
        if (kWant[i].a != NULL) {
            assert_string_equal(a, kWant[i].a);
        }
        if (kWant[i].b != NULL) {
            assert_string_equal(b, kWant[i].b);
        }
    }
    kv_init(&kv, "", 0, buf, sizeof(buf)); /* an empty text: the end, at line 0 */
    assert_int_equal(kv_next(&kv, &it), KV_END);
    assert_int_equal(it.line, 0);
}

/* The hints: a close spelling (within 2 edits, the closest, the first of equals) and a trailing
 * comma. Negative controls: 3 edits away, or a comma inside the value, give nothing. */
static void test_kv_hints(void **state)
{
    (void)state;
    static const char *const kCand[] = {"listen", "cert", "key", "metrics", "campaign"};
    static const struct {
        const char *word, *want;
    } kCases[] = {
        {"lisen", " (did you mean 'listen'?)"},
        {"metric", " (did you mean 'metrics'?)"},
        {"campain", " (did you mean 'campaign'?)"},
        {"kye", " (did you mean 'key'?)"},
        {"keys", " (did you mean 'key'?)"},
        {"listen", " (did you mean 'listen'?)"},
        {"frobnicate", ""},
        {"lxxxxn", ""}, /* 3 edits from listen */
        {"", ""},
    };
    char buf[64];
    for (size_t i = 0; i < sizeof(kCases) / sizeof(kCases[0]); i++) {
        assert_string_equal(kv_suggest(kCases[i].word, kCand, 5, buf, sizeof(buf)), kCases[i].want);
    }
    static const char kHint[] = ": an empty value after the last comma (a trailing comma?)";
    assert_string_equal(kv_trailing_comma("tpr, fpr,"), kHint);
    assert_string_equal(kv_trailing_comma("8, \t"), kHint);
    assert_string_equal(kv_trailing_comma(","), kHint);
    assert_string_equal(kv_trailing_comma("tpr, fpr"), "");
    assert_string_equal(kv_trailing_comma(""), "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trim_agrees),    cmocka_unit_test(test_lines),
        cmocka_unit_test(test_split_messages), cmocka_unit_test(test_read_file),
        cmocka_unit_test(test_kv_reader),      cmocka_unit_test(test_kv_hints),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
