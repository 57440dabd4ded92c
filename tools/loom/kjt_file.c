/* SPDX-License-Identifier: BSD-3-Clause */
/*
** kjt_file.c - `--kjt NAME=FILE.safetensors`: a KeyedJaggedTensor read from
** a safetensors file whose tensors carry torchrec's field names
** (docs/rec-kjt.md):
**
**   keys, keys_offsets        the feature names as jagged strings (u8, i64 [K+1])
**   values, lengths, offsets, weights, stride_per_key_per_rank, inverse_indices
**
** Each field fills the op's input NAME_<field> when the op has one, else the
** input <field> (the KJT ops take the KJT itself under the plain names);
** the keys fill the string attribute NAME_keys or keys, joined by ',',
** unless --attr gives it. A field the op has no input for, or an input also
** given by --in, is a usage error naming both.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "callspec.h"

static int find_input(const loom_op_schema *s, const char *name)
{
    for (uint32_t i = 0; i < s->n_inputs; i++)
        if (strcmp(s->inputs[i].name, name) == 0)
            return (int)i;
    return -1;
}

static int has_attr(const loom_op_schema *s, const char *name)
{
    for (uint32_t i = 0; i < s->n_attrs; i++)
        if (strcmp(s->attrs[i].name, name) == 0)
            return 1;
    return 0;
}

/* "a,b": the names of the jagged strings keys (u8) + keys_offsets (i64 [K+1]) */
static char *join_keys(const callspec *c, const char *path, const loom_tensor *keys, const loom_tensor *offs)
{
    if (loom_tensor_dtype_of(keys) != LOOM_DTYPE_U8 || keys->ndim != 1 || loom_tensor_dtype_of(offs) != LOOM_DTYPE_I64
        || offs->ndim != 1 || offs->shape[0] < 1) {
        fprintf(stderr, "loom %s: --kjt %s: 'keys' must be u8 [bytes] and 'keys_offsets' i64 [K+1]\n", c->cmd, path);
        return NULL;
    }
    const uint8_t *k = loom_numel(keys) ? loom_data(keys) : NULL;
    const int64_t *o = loom_data(offs), nb = keys->shape[0], K = offs->shape[0] - 1;
    char *out = malloc((size_t)nb + (size_t)K + 1);
    if (!out) {
        fprintf(stderr, "loom %s: out of memory\n", c->cmd);
        return NULL;
    }
    size_t at = 0;
    for (int64_t i = 0; i < K; i++) {
        if (o[i] < 0 || o[i + 1] < o[i] || o[i + 1] > nb || (i == 0 && o[0] != 0)) {
            fprintf(stderr, "loom %s: --kjt %s: 'keys_offsets'[%lld..%lld] = %lld..%lld is not a row of the %lld "
                    "bytes of 'keys'\n", c->cmd, path, (long long)i, (long long)(i + 1), (long long)o[i],
                    (long long)o[i + 1], (long long)nb);
            free(out);
            return NULL;
        }
        for (int64_t b = o[i]; b < o[i + 1]; b++) {
            if (k[b] == ',' || k[b] == '\0') {
                fprintf(stderr, "loom %s: --kjt %s: key %lld holds a ',' or NUL byte\n", c->cmd, path, (long long)i);
                free(out);
                return NULL;
            }
            out[at++] = (char)k[b];
        }
        if (i + 1 < K)
            out[at++] = ',';
    }
    out[at] = '\0';
    return out;
}

int callspec_read_kjts(callspec *c)
{
    const loom_op_schema *s = c->schema;
    if (c->n_kjts == 0)
        return CLI_OK;
    c->kjt_inputs = calloc(s->n_inputs > 0 ? s->n_inputs : 1, sizeof *c->kjt_inputs);
    c->kjt_strings = calloc((size_t)c->n_kjts * 2, sizeof *c->kjt_strings);
    if (!c->kjt_inputs || !c->kjt_strings) {
        fprintf(stderr, "loom %s: out of memory\n", c->cmd);
        return CLI_FAIL;
    }
    for (int f = 0; f < c->n_kjts; f++) {
        const char *name = c->kjts[f].key, *path = c->kjts[f].value;
        loom_safetensors *st = NULL;
        if (loom_safetensors_open(&st, path) != LOOM_OK)
            return cli_fail();
        const loom_tensor *keys = NULL, *keys_offsets = NULL;
        int rc = CLI_OK;
        for (int64_t i = 0; i < loom_safetensors_count(st) && rc == CLI_OK; i++) {
            const char *field = loom_safetensors_name(st, i);
            const loom_tensor *t = NULL;
            if (loom_safetensors_get(st, field, &t) != LOOM_OK) {
                rc = cli_fail();
                break;
            }
            if (strcmp(field, "keys") == 0) {
                keys = t;
                continue;
            }
            if (strcmp(field, "keys_offsets") == 0) {
                keys_offsets = t;
                continue;
            }
            char prefixed[256];
            snprintf(prefixed, sizeof prefixed, "%s_%s", name, field);
            int idx = find_input(s, prefixed);
            if (idx < 0)
                idx = find_input(s, field);
            if (idx < 0) {
                fprintf(stderr, "loom %s: --kjt %s=%s: %s has no input '%s' or '%s' for the field '%s'\n", c->cmd,
                        name, path, s->name, prefixed, field, field);
                rc = CLI_USAGE;
                break;
            }
            for (int j = 0; j < c->n_ins; j++)
                if (strcmp(c->ins[j].key, s->inputs[idx].name) == 0) {
                    fprintf(stderr, "loom %s: input '%s' given by both --in and --kjt %s\n", c->cmd,
                            s->inputs[idx].name, name);
                    rc = CLI_USAGE;
                }
            if (rc != CLI_OK)
                break;
            if (c->kjt_inputs[idx] != NULL) {
                fprintf(stderr, "loom %s: input '%s' given by two --kjt files\n", c->cmd, s->inputs[idx].name);
                rc = CLI_USAGE;
                break;
            }
            const loom_dl_device cpu = { LOOM_DEVICE_CPU, 0 };      /* read_inputs moves it to --device */
            if (loom_tensor_copy_to(&c->kjt_inputs[idx], t, &cpu) != LOOM_OK)
                rc = cli_fail();
        }
        if (rc == CLI_OK && (keys != NULL) != (keys_offsets != NULL)) {
            fprintf(stderr, "loom %s: --kjt %s: 'keys' and 'keys_offsets' go together\n", c->cmd, path);
            rc = CLI_USAGE;
        }
        if (rc == CLI_OK && keys != NULL) {
            char attr[256];
            snprintf(attr, sizeof attr, "%s_keys", name);
            if (!has_attr(s, attr))
                snprintf(attr, sizeof attr, "keys");
            int given = 0;
            for (int j = 0; j < c->n_attrs; j++)
                given |= strcmp(c->attrs[j].key, attr) == 0;
            if (!given) {
                char *joined = join_keys(c, path, keys, keys_offsets);
                char *key = joined ? strdup(attr) : NULL;
                if (!key) {
                    free(joined);
                    rc = CLI_FAIL;
                } else {
                    c->kjt_strings[2 * f] = key;
                    c->kjt_strings[2 * f + 1] = joined;
                    c->attrs[c->n_attrs].key = key;        /* c->attrs has a slot per argv entry: room for one per --kjt */
                    c->attrs[c->n_attrs++].value = joined;
                }
            }
        }
        loom_safetensors_close(st);
        if (rc != CLI_OK)
            return rc;
    }
    return CLI_OK;
}

void callspec_free_kjts(callspec *c)
{
    if (c->kjt_inputs != NULL && c->schema != NULL)
        for (uint32_t i = 0; i < c->schema->n_inputs; i++)
            loom_tensor_free(c->kjt_inputs[i]);
    free(c->kjt_inputs);
    if (c->kjt_strings != NULL)
        for (int i = 0; i < 2 * c->n_kjts; i++)
            free(c->kjt_strings[i]);
    free(c->kjt_strings);
    free(c->kjts);
}
