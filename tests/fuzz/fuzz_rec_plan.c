/* SPDX-License-Identifier: BSD-3-Clause */
/*
** fuzz_rec_plan.c - feeds: the rec pack's planner config reader and the
** planner behind it, rec.plan, the input being the config JSON itself.
** Inputs whose topology asks for more than 16 ranks are passed over: the
** search costs proposals x shards x ranks and a 1024-rank grid search does
** not fit the 10 s per input; they reach no reader code that 16 ranks do
** not (the world size is one bounded integer).
** An input of odd length also asks for the search space (every option's
** estimates in the third output).
** Asserts: no sanitizer report; a refused config sets a message; an
** accepted one gives a plan that is JSON with one entry per table, a stats
** table and estimates, every byte of which is read.
*/
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "fuzz_util.h"

#define MAX_FUZZ_WORLD 16

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_init("core,rec");
    FZ_CHECK(loom_op_find("rec.plan") != NULL, "the rec pack did not load");
    return 0;
}

static int too_many_ranks(const uint8_t *data, size_t size)
{
    cJSON *j = cJSON_ParseWithLength((const char *)data, size);
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(j, "topology");
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(t, "world_size");
    const int big = cJSON_IsNumber(w) && w->valuedouble > MAX_FUZZ_WORLD;
    cJSON_Delete(j);
    return big;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0 || too_many_ranks(data, size))
        return 0;
    /* an exact-size heap copy, so a read past the end is reported */
    uint8_t *copy = malloc(size);
    FZ_CHECK(copy != NULL, "malloc");
    memcpy(copy, data, size);
    const int64_t shape[1] = { (int64_t)size };
    loom_tensor *in = NULL, *out[3] = { NULL, NULL, NULL };
    FZ_CHECK(loom_tensor_wrap(&in, copy, LOOM_DTYPE_U8, 1, shape, NULL, NULL) == LOOM_OK, "wrap");
    const loom_tensor *ins[1] = { in };
    loom_attrs *attrs = NULL;
    FZ_CHECK(loom_attrs_new(&attrs) == LOOM_OK
                 && loom_attrs_set_bool(attrs, "search_space", (int)(size & 1)) == LOOM_OK, "attrs");
    const loom_status st = loom_run("rec.plan", ins, 1, attrs, out, 3, NULL);
    loom_attrs_free(attrs);
    if (st != LOOM_OK) {
        const char *msg = loom_last_error();
        FZ_CHECK(msg != NULL && msg[0] != '\0', "a refusal without a message");
    } else {
        for (int i = 0; i < 3; i++)
            fz_touch_tensor(out[i]);
        cJSON *plan = cJSON_ParseWithLength(loom_data(out[0]), loom_tensor_nbytes(out[0]));
        FZ_CHECK(plan != NULL, "the plan is not JSON");
        cJSON *cfg = cJSON_ParseWithLength((const char *)copy, size);
        FZ_CHECK(cfg != NULL, "an accepted config is not JSON");
        FZ_CHECK(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(plan, "tables"))
                     == cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(cfg, "tables")),
                 "the plan does not have one entry per table");
        cJSON_Delete(cfg);
        cJSON_Delete(plan);
    }
    for (int i = 0; i < 3; i++)
        loom_tensor_free(out[i]);
    loom_tensor_free(in);
    free(copy);
    return 0;
}
