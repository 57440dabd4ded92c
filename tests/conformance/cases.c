/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cases.c - the one table of case generators: every domain's rows
** (cases_<domain>.c), looked up by op name. An op that no row names fails
** the harness by name (conformance.c), so a new op cannot go unchecked.
*/
#include <string.h>

#include "conformance.h"

static const struct {
    const char *prefix;             /* the ops of the domain: "<domain>." */
    const char *file;
    const cf_gen *gens;
    const size_t *n;
} domains[] = {
    { "core.", "cases_core.c", cf_core_gens, &cf_core_n_gens },
    { "vision.", "cases_vision.c", cf_vision_gens, &cf_vision_n_gens },
    { "fbgemm.", "cases_fbgemm.c", cf_fbgemm_gens, &cf_fbgemm_n_gens },
    { "audio.", "cases_audio.c", cf_audio_gens, &cf_audio_n_gens },
    { "audio.", "cases_audio_beamform.c", cf_audio_beamform_gens, &cf_audio_beamform_n_gens },
    { "text.", "cases_text.c", cf_text_gens, &cf_text_n_gens },
    { "rl.", "cases_rl.c", cf_rl_gens, &cf_rl_n_gens },
    { "rl.", "cases_rl_td.c", cf_rl_td_gens, &cf_rl_td_n_gens },
    { "rec.", "cases_rec.c", cf_rec_gens, &cf_rec_n_gens },
};
#define N_DOMAINS (sizeof domains / sizeof domains[0])

const cf_gen *cf_find_gen(const char *op)
{
    for (size_t d = 0; d < N_DOMAINS; d++)
        for (size_t i = 0; i < *domains[d].n; i++)
            if (strcmp(domains[d].gens[i].op, op) == 0)
                return &domains[d].gens[i];
    return NULL;
}

const char *cf_domain_file(const char *op)
{
    for (size_t d = 0; d < N_DOMAINS; d++)
        if (strncmp(op, domains[d].prefix, strlen(domains[d].prefix)) == 0)
            return domains[d].file;
    return "cases_<domain>.c (a new file for a new domain, listed in cases.c)";
}
