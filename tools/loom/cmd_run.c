/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cmd_run.c - `loom run OP --in NAME=FILE.npy ... --out NAME=FILE.npy ...`:
** one call of one operator on .npy files, writing the outputs asked for and
** reporting where the call ran (loom_last_dispatch).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "callspec.h"
#include "json.h"

static const char usage[] =
    "usage: loom run OP --in NAME=FILE.npy ... [--lines NAME=FILE.txt ...] [--kjt NAME=FILE ...]\n"
    "                [--attr KEY=VALUE ...]\n"
    "                [--weights FILE.safetensors] [--backend B] [--device cpu|cuda[:N]]\n"
    "                [--out NAME=FILE.npy ...] [--json]\n"
    "  Run OP once. Inputs and outputs are named as in `loom info OP`.\n"
    "  --in NAME=FILE     input NAME from a .npy file\n"
    "  --in NAME=@FILE    input NAME: the raw bytes of FILE as u8 [N] (an image\n"
    "                     for vision.decode_image, an audio file for audio.load)\n"
    "  --lines NAME=FILE  strings, one per line of a text file: inputs NAME (u8)\n"
    "                     and NAME_offsets (i64 [B+1])\n"
    "  --kjt NAME=FILE    a KeyedJaggedTensor from a safetensors file with torchrec's\n"
    "                     field names (values, lengths, offsets, weights, keys, ...):\n"
    "                     inputs NAME_<field> or <field>, attribute keys\n"
    "  --attr KEY=VALUE   an attribute: ints 3, floats 0.5, bools true/false,\n"
    "                     lists 7,7; for a method, attributes of its object class\n"
    "                     go to the object\n"
    "  --weights FILE     safetensors weights of the object (methods only)\n"
    "  --backend B        force a backend (cpu, onednn, cuda)\n"
    "  --device D         where the inputs live (default cpu; cuda:0 with --backend cuda)\n"
    "  --out NAME=FILE    write output NAME to a .npy file\n"
    "  --json             print {\"outputs\": {...}, \"backend\": ..., \"impl\": ...}\n";

/* The --out file asked for output `name`, or NULL. */
static const char *out_file(const callspec *c, const char *name)
{
    for (int i = 0; i < c->n_outs; i++) {
        if (strcmp(c->outs[i].key, name) == 0)
            return c->outs[i].value;
    }
    return NULL;
}

static int report_json(const callspec *c, loom_tensor **outputs, const loom_dispatch_info *d)
{
    cJSON *root = cJSON_CreateObject(), *outs = cJSON_CreateObject();

    json_add_str(root, "op", c->schema->name);
    for (uint32_t i = 0; i < c->schema->n_outputs; i++) {
        cJSON *o = cJSON_CreateObject();
        if (outputs[i] == NULL) {
            cJSON_Delete(o);
            continue;
        }
        cJSON_AddItemToObject(o, "shape", json_shape(outputs[i]));
        json_add_str(o, "dtype", loom_dtype_name(loom_tensor_dtype_of(outputs[i])));
        json_add_str(o, "file", out_file(c, c->schema->outputs[i].name));
        cJSON_AddItemToObject(outs, c->schema->outputs[i].name, o);
    }
    cJSON_AddItemToObject(root, "outputs", outs);
    json_add_str(root, "backend", d->backend);
    json_add_str(root, "impl", d->impl);
    cJSON_AddItemToObject(root, "fallback", cJSON_CreateBool(d->fallback != 0));
    return json_emit(root);
}

static int report_text(const callspec *c, loom_tensor **outputs, const loom_dispatch_info *d)
{
    char shape[256];

    printf("%s ran on %s (%s)%s\n", c->schema->name, d->backend != NULL ? d->backend : "?",
           d->impl != NULL ? d->impl : "?", d->fallback ? ", after a preferred backend declined" : "");
    for (uint32_t i = 0; i < c->schema->n_outputs; i++) {
        const char *file;
        if (outputs[i] == NULL)
            continue;
        file = out_file(c, c->schema->outputs[i].name);
        printf("  %s: %s%s", c->schema->outputs[i].name, loom_dtype_name(loom_tensor_dtype_of(outputs[i])),
               cli_shape(outputs[i], shape, sizeof shape));
        if (file != NULL)
            printf(" -> %s", file);
        printf("\n    ");
        if (cli_print_values(outputs[i], 8) != CLI_OK)
            return CLI_FAIL;
        printf("\n");
    }
    return CLI_OK;
}

static int run(callspec *c)
{
    uint32_t n_out = c->schema->n_outputs;
    loom_tensor **outputs = calloc(n_out > 0 ? n_out : 1, sizeof *outputs);
    loom_dispatch_info d = LOOM_DISPATCH_INFO_INIT;
    int rc = CLI_OK;

    if (outputs == NULL) {
        fprintf(stderr, "loom run: out of memory\n");
        return CLI_FAIL;
    }
    if (callspec_call(c, outputs) != LOOM_OK || loom_last_dispatch(&d) != LOOM_OK)
        rc = cli_fail();
    for (int i = 0; rc == CLI_OK && i < c->n_outs; i++) {
        int idx = callspec_output_index(c, c->outs[i].key);
        if (outputs[idx] == NULL) {
            fprintf(stderr, "loom: %s produced no output '%s'\n", c->schema->name, c->outs[i].key);
            rc = CLI_FAIL;
        } else if (loom_npy_write(c->outs[i].value, outputs[idx]) != LOOM_OK) {
            rc = cli_fail();
        }
    }
    if (rc == CLI_OK)
        rc = c->json ? report_json(c, outputs, &d) : report_text(c, outputs, &d);
    for (uint32_t i = 0; i < n_out; i++)
        loom_tensor_free(outputs[i]);
    free(outputs);
    return rc;
}

int cmd_run(int argc, char **argv)
{
    callspec c;
    int rc = callspec_parse(&c, CALLSPEC_RUN, usage, argc, argv);

    if (rc == CLI_OK)
        rc = callspec_prepare(&c);
    if (rc == CLI_OK)
        rc = run(&c);
    callspec_free(&c);
    return rc == CLI_HELP_SHOWN ? CLI_OK : rc;
}
