/* SPDX-License-Identifier: Apache-2.0 */
/* Reference numbers of Juarez & Korolova (2022) that we reproduce, in one place for the
 * reproduction program (dpm-repro) and the tests. NAN stands for a printed "-" (no ε reaches
 * the target). Sources: /work/shared/spec/disparity-juarez2022.md §7.3 and §7.6. */
#ifndef DPM_DISPARITY_PAPER_H
#define DPM_DISPARITY_PAPER_H

/* Table 1: rows K, columns M_R α = 1e-1, 1e-2, 1e-3 then M_L α = 1e-1, 1e-2, 1e-3. */
extern const double dpm_paper_table1_k[5];
extern const double dpm_paper_table1_alpha[3];
extern const double dpm_paper_table1_printed[5][6]; /* [PAPER] verbatim, 2 decimals */
extern const double dpm_paper_table1_repo[5][6];    /* [REPO] table1.ipynb, 6 decimals */
extern const double dpm_paper_table1_correct[5][6]; /* [MINE] the correct splits, 2 decimals */

/* Table 2's bound column (α = 5 sqrt(MSE), K = 1e7): rows ε, columns M_R, M_L. */
extern const double dpm_paper_table2_eps[4];
extern const double dpm_paper_table2_alpha[4][2];         /* [PAPER] paper splits */
extern const double dpm_paper_table2_alpha_correct[4][2]; /* [MINE] correct splits */

#endif /* DPM_DISPARITY_PAPER_H */
