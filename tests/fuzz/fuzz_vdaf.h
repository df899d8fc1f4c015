/* SPDX-License-Identifier: Apache-2.0 */
/* What the Prio3 fuzz targets (fuzz_vdaf_report.c, fuzz_vdaf_verifier.c) and their seeds
 * (tests/fuzz/make_corpus.py, from tests/vectors/vdaf) share: the instances of the draft's
 * vector files, in the order make_corpus.py numbers them, with the files' verification key and
 * context, and the length-prefixed message framing of the inputs. */
#ifndef FUZZ_VDAF_H
#define FUZZ_VDAF_H

#include <stddef.h>
#include <stdint.h>

#include "dpm/expert/vdaf.h"

#define FUZZ_VDAF_INSTANCES 17u

/* Instance i % FUZZ_VDAF_INSTANCES: 1 on success. */
static inline int fuzz_vdaf_instance(unsigned i, dpm_prio3_t *v)
{
    dpm_status_t st;
    switch (i % FUZZ_VDAF_INSTANCES) {
    case 0: st = dpm_prio3_count_init(v, 2); break;
    case 1: st = dpm_prio3_count_init(v, 3); break;
    case 2: st = dpm_prio3_sum_init(v, 2, 255); break;
    case 3: st = dpm_prio3_sum_init(v, 3, 255); break;
    case 4: st = dpm_prio3_sum_init(v, 2, 1337); break;
    case 5: st = dpm_prio3_sumvec_init(v, 2, 10, 255, 9); break;
    case 6: st = dpm_prio3_sumvec_init(v, 3, 3, 32000, 7); break;
    case 7: st = dpm_prio3_histogram_init(v, 2, 4, 2); break;
    case 8: st = dpm_prio3_histogram_init(v, 3, 11, 3); break;
    case 9: st = dpm_prio3_histogram_init(v, 2, 100, 10); break;
    case 10: st = dpm_prio3_histogram_init(v, 2, 5, 2); break;
    case 11: st = dpm_prio3_multihot_init(v, 2, 4, 2, 2); break;
    case 12: st = dpm_prio3_multihot_init(v, 4, 10, 2, 3); break;
    case 13: st = dpm_prio3_multihot_init(v, 2, 4, 4, 1); break;
    case 14: st = dpm_prio3_sumvec_multiproof_init(v, 2, 3, 10, 255, 9); break;
    case 15: st = dpm_prio3_sumvec_multiproof_init(v, 3, 3, 3, 65535, 7); break;
    default: st = dpm_prio3_higher_degree_init(v, 2); break;
    }
    return st == DPM_OK;
}

/* The draft's vectors' verification key (bytes 0..31) and context. */
static const uint8_t FUZZ_VDAF_KEY[32] = {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10,
                                          11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
                                          22, 23, 24, 25, 26, 27, 28, 29, 30, 31};
static const uint8_t FUZZ_VDAF_CTX[] = "some application";

/* The next message of the input: [length, 2 bytes little-endian][bytes]; a truncated one takes
 * what is left. */
static inline const uint8_t *fuzz_vdaf_take(const uint8_t **p, size_t *left, size_t *len)
{
    size_t n = 0;
    if (*left >= 2) {
        n = (size_t)(*p)[0] | ((size_t)(*p)[1] << 8);
        *p += 2;
        *left -= 2;
    } else {
        *left = 0;
    }
    n = n < *left ? n : *left;
    const uint8_t *m = *p;
    *p += n;
    *left -= n;
    *len = n;
    return m;
}

#endif
