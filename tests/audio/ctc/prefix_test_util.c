/* SPDX-License-Identifier: BSD-3-Clause */
/*
** prefix_test_util.c - the goldens of audio.cuda_ctc_decoder and their
** comparison (prefix_test_util.h).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "prefix_test_util.h"

pt_goldens PT;

int pt_setup(void **state)
{
    if (tu_setup(state) != 0)
        return -1;
    pt_goldens_load(&PT);
    return 0;
}

int pt_teardown(void **state)
{
    pt_goldens_free(&PT);
    return tu_teardown(state);
}

void pt_goldens_load(pt_goldens *g)
{
    memset(g, 0, sizeof *g);
    FILE *f = fopen(tu_data_path("audio/ctc/cuda_ctc_cases.txt"), "r");
    assert_non_null(f);
    g->emissions = tu_npy("audio/ctc/cuda_ctc_emissions");
    g->lengths = tu_npy("audio/ctc/cuda_ctc_lengths");
    g->tokens = tu_npy("audio/ctc/cuda_ctc_tokens");
    g->offsets = tu_npy("audio/ctc/cuda_ctc_offsets");
    g->score = tu_npy("audio/ctc/cuda_ctc_score");
    const int64_t B = g->emissions->shape[0];
    while (g->n_cases < 16 && fgets(g->lines[g->n_cases], sizeof g->lines[0], f) != NULL) {
        char *line = g->lines[g->n_cases];
        line[strcspn(line, "\n")] = '\0';
        const char *nb = strstr(line, "nbest=");
        assert_non_null(nb);
        g->nbest[g->n_cases] = atoi(nb + 6);
        g->first_row[g->n_cases + 1] = g->first_row[g->n_cases] + B * g->nbest[g->n_cases];
        g->n_cases++;
    }
    fclose(f);
    assert_true(g->n_cases >= 5);
    assert_int_equal(g->first_row[g->n_cases] + 1, g->offsets->shape[0]);
}

void pt_goldens_free(pt_goldens *g)
{
    loom_tensor_free(g->emissions);
    loom_tensor_free(g->lengths);
    loom_tensor_free(g->tokens);
    loom_tensor_free(g->offsets);
    loom_tensor_free(g->score);
}

loom_attrs *pt_attrs(const char *text)
{
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    char copy[128], *save = NULL;
    snprintf(copy, sizeof copy, "%s", text);
    for (char *kv = strtok_r(copy, ";", &save); kv != NULL; kv = strtok_r(NULL, ";", &save)) {
        char *eq = strchr(kv, '=');
        assert_non_null(eq);
        *eq = '\0';
        if (loom_attrs_parse(a, "audio.cuda_ctc_decoder", kv, eq + 1) != LOOM_OK)
            fail_msg("%s=%s: %s", kv, eq + 1, loom_last_error());
    }
    return a;
}

loom_attrs *pt_case_attrs(const pt_goldens *g, int c)
{
    return pt_attrs(g->lines[c]);
}

void pt_check(const pt_goldens *g, int c, loom_tensor *const *out, double atol, const char *what)
{
    const int64_t r0 = g->first_row[c], rows = g->first_row[c + 1] - r0;
    const int64_t *go = loom_data(g->offsets), *gt = loom_data(g->tokens);
    const float *gs = loom_data(g->score);
    const int64_t *o = loom_data(out[1]), *t = loom_data(out[0]);
    const float *s = loom_data(out[2]);
    if (out[1]->shape[0] != rows + 1)
        fail_msg("%s, case %d (%s): %lld hypotheses, the goldens have %lld", what, c, g->lines[c],
                 (long long)out[1]->shape[0] - 1, (long long)rows);
    assert_int_equal(out[2]->shape[0] * out[2]->shape[1], rows);
    for (int64_t h = 0; h < rows; h++) {
        const int64_t n = o[h + 1] - o[h], gn = go[r0 + h + 1] - go[r0 + h];
        if (n != gn || memcmp(t + o[h], gt + go[r0 + h], (size_t)n * sizeof(int64_t)) != 0)
            fail_msg("%s, case %d (%s), hypothesis %lld: %lld tokens differ from the goldens' %lld", what, c,
                     g->lines[c], (long long)h, (long long)n, (long long)gn);
        if (!(fabs((double)s[h] - (double)gs[r0 + h]) <= atol))
            fail_msg("%s, case %d (%s), hypothesis %lld: score %.7g, the goldens' %.7g", what, c, g->lines[c],
                     (long long)h, (double)s[h], (double)gs[r0 + h]);
    }
}
