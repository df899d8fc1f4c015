/* SPDX-License-Identifier: Apache-2.0 */
/* Reference numbers of Juarez & Korolova (2022): see disparity_paper.h. */
#include "estimate/disparity_paper.h"

#include <math.h>

#define DASH NAN

const double dpm_paper_table1_k[5] = {1e5, 1e6, 1e7, 1e8, 1e9};
const double dpm_paper_table1_alpha[3] = {1e-1, 1e-2, 1e-3};

const double dpm_paper_table1_printed[5][6] = {
    {1.86, DASH, DASH, 2.56, 17.89, 178.89}, {0.63, DASH, DASH, 0.71, 6.32, 56.57},
    {0.23, 1.86, DASH, 0.21, 2.56, 17.89},   {0.08, 0.63, DASH, 0.07, 0.71, 6.32},
    {0.02, 0.23, 1.86, 0.02, 0.21, 2.56},
};

/* The notebook's later version prints NaN ("-") where no root exists. */
const double dpm_paper_table1_repo[5][6] = {
    {1.860958, DASH, DASH, 2.560316, 17.888992, 178.885438},
    {0.632751, DASH, DASH, 0.714442, 6.322309, 56.568542},
    {0.228162, 1.860958, DASH, 0.213885, 2.560316, 17.888992},
    {0.077071, 0.632751, DASH, 0.066845, 0.714442, 6.322309},
    {0.024987, 0.228162, 1.860958, 0.021067, 0.213885, 2.560316},
};

const double dpm_paper_table1_correct[5][6] = {
    {2.06, DASH, DASH, 2.46, 17.94, 178.89}, {0.69, DASH, DASH, 0.93, 6.42, 56.57},
    {0.24, 2.06, DASH, 0.33, 2.46, 17.94},   {0.08, 0.69, DASH, 0.11, 0.93, 6.42},
    {0.03, 0.24, 2.06, 0.04, 0.33, 2.46},
};

const double dpm_paper_table2_eps[4] = {0.01, 0.1, 1.0, 10.0};
const double dpm_paper_table2_alpha[4][2] = {
    {1.2586, 1.0525}, {0.1206, 0.1060}, {0.0094, 0.0118}, {0.0032, 0.0009}};
const double dpm_paper_table2_alpha_correct[4][2] = {
    {1.2618, 1.7844}, {0.1234, 0.1746}, {0.0105, 0.0146}, {0.0032, 0.0009}};
