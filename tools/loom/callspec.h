/* SPDX-License-Identifier: BSD-3-Clause */
/*
** callspec.h - one operator call described on the command line, shared by
** `loom run` and `loom bench`.
**
**   OP --in NAME=FILE.npy ... --lines NAME=FILE.txt ... --attr KEY=VALUE ...
**      [--weights FILE.safetensors] [--backend B] [--device cpu|cuda[:N]] [--json]
**   run adds --out NAME=FILE.npy ...; bench adds --repeat N --warmup W.
**
** Life cycle: callspec_parse (command line only, no loom calls) ->
** callspec_prepare (init, look up the op, check names against its schema,
** read inputs, parse attributes, create the object of a method) ->
** callspec_call as often as wanted -> callspec_free (always, also after a
** failed parse or prepare).
**
** --lines NAME=FILE.txt reads a text file as a batch of strings, one per
** line (split at '\n' only; a final '\n' opens no line), into the jagged
** pair of plugin.h: NAME (u8, the bytes of every line) and NAME_offsets (i64
** [B+1]). NAME must be a LOOM_ARG_JAGGED input of the op.
**
** --kjt NAME=FILE.safetensors reads a KeyedJaggedTensor stored with
** torchrec's field names into the op's inputs (kjt_file.c).
**
** Attributes of a method op: a key the object class declares goes to the
** class (used at object creation), every other key to the op.
*/
#ifndef LOOM_CLI_CALLSPEC_H
#define LOOM_CLI_CALLSPEC_H

#include "cli.h"

typedef struct cli_kv {
    char *key;          /* points into argv: the '=' was replaced by NUL */
    char *value;
} cli_kv;

enum { CALLSPEC_RUN = 1, CALLSPEC_BENCH = 2 };

typedef struct callspec {
    /* from the command line */
    int mode;                       /* CALLSPEC_RUN or CALLSPEC_BENCH */
    const char *cmd, *usage;        /* for messages */
    const char *op_name;
    cli_kv *ins, *attrs, *outs, *lines, *kjts;
    int n_ins, n_attrs, n_outs, n_lines, n_kjts;
    const char *weights, *backend, *device_text;
    int json;
    long repeat, warmup;            /* bench only */

    /* resolved by callspec_prepare */
    const loom_op *op;
    const loom_op_schema *schema;
    const loom_object_class *cls;   /* for methods */
    loom_dl_device device;
    loom_tensor **inputs;           /* schema->n_inputs entries, NULL = absent */
    loom_attrs *op_attrs, *class_attrs;
    loom_object *object;
    loom_call_options options;
    loom_tensor **kjt_inputs;       /* schema->n_inputs entries given by --kjt, until read_inputs takes them */
    char **kjt_strings;             /* the keys attributes --kjt added to attrs (name, value per file) */
} callspec;

/* Parse argv (argv[0] is the command). Returns CLI_OK, CLI_USAGE (message
** printed) or CLI_HELP_SHOWN (usage printed to stdout). */
int callspec_parse(callspec *c, int mode, const char *usage, int argc, char **argv);
/* Returns CLI_OK, CLI_USAGE (a name does not fit the schema) or CLI_FAIL. */
int callspec_prepare(callspec *c);
/* Index of output `name` in the schema, or -1. */
int callspec_output_index(const callspec *c, const char *name);
/* One call; outputs[schema->n_outputs] must be NULL entries on entry and
** receive new tensors the caller frees. Waits for device work to finish. */
loom_status callspec_call(callspec *c, loom_tensor **outputs);
void callspec_free(callspec *c);

/* kjt_file.c: the --kjt files into kjt_inputs and their keys into attrs
** (before the names are checked); CLI_OK, CLI_USAGE or CLI_FAIL. */
int callspec_read_kjts(callspec *c);
void callspec_free_kjts(callspec *c);

#endif /* LOOM_CLI_CALLSPEC_H */
