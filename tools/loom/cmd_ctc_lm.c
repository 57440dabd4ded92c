/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cmd_ctc_lm.c - `loom ctc-lm convert IN.arpa OUT.bin [--quantize B]`: an
** ARPA n-gram model converted offline to loom's binary format, which the
** audio pack's lm= maps back without parsing (audio.ctc_lm, then its
** method audio.ctc_lm_save; public API only, as any host program would).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char ctc_lm_usage[] =
    "usage: loom ctc-lm convert IN.arpa OUT.bin [--quantize B]\n"
    "  IN.arpa     an ARPA n-gram model (KenLM's own binary files are not read)\n"
    "  OUT.bin     loom's binary n-gram model, for lm= of audio.ctc_lm and audio.ctc_decoder\n"
    "  --quantize  B = 2..8: probabilities and backoffs of orders 2 and up in B bits (default: floats)\n";

static int convert(const char *in, const char *out, long long bits)
{
    loom_attrs *a = NULL;
    loom_object *lm = NULL;
    loom_tensor *bytes = NULL;
    loom_status st = loom_attrs_new(&a);
    if (st == LOOM_OK)
        st = loom_attrs_set_string(a, "lm", in);
    if (st == LOOM_OK)
        st = loom_attrs_set_int(a, "quantize", bits);
    if (st == LOOM_OK)
        st = loom_object_create(&lm, "audio.ctc_lm", a, NULL);
    loom_attrs_free(a);
    a = NULL;
    if (st == LOOM_OK)
        st = loom_attrs_new(&a);
    if (st == LOOM_OK)
        st = loom_attrs_set_string(a, "path", out);
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = lm;
    if (st == LOOM_OK)
        st = loom_run("audio.ctc_lm_save", NULL, 0, a, &bytes, 1, &opt);
    loom_attrs_free(a);
    if (st == LOOM_OK)
        printf("%s: %lld bytes (%s)\n", out, (long long)*(const int64_t *)loom_data(bytes),
               bits == 0 ? "float probabilities" : "quantised");
    loom_tensor_free(bytes);
    loom_object_free(lm);
    return st == LOOM_OK ? CLI_OK : cli_fail();
}

int cmd_ctc_lm(int argc, char **argv)
{
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        fputs(ctc_lm_usage, stdout);
        return CLI_OK;
    }
    if (argc < 2 || strcmp(argv[1], "convert") != 0)
        return cli_usage_error("ctc-lm", ctc_lm_usage, argc < 2 ? "expected convert" : "unknown ctc-lm command '%s' "
                               "(convert)", argc < 2 ? "" : argv[1]);
    const char *files[2] = { NULL, NULL };
    int n_files = 0;
    long long bits = 0;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--quantize") == 0) {
            char *end;
            if (i + 1 == argc)
                return cli_usage_error("ctc-lm", ctc_lm_usage, "--quantize needs a number of bits (2..8)");
            bits = strtoll(argv[++i], &end, 10);
            if (*end != '\0' || end == argv[i] || bits < 2 || bits > 8)
                return cli_usage_error("ctc-lm", ctc_lm_usage, "--quantize '%s': 2..8 bits", argv[i]);
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            return cli_usage_error("ctc-lm", ctc_lm_usage, "unknown option '%s'", argv[i]);
        } else if (n_files == 2) {
            return cli_usage_error("ctc-lm", ctc_lm_usage, "unexpected '%s'", argv[i]);
        } else {
            files[n_files++] = argv[i];
        }
    }
    if (n_files != 2)
        return cli_usage_error("ctc-lm", ctc_lm_usage, "convert needs IN.arpa and OUT.bin");
    if (cli_init() != CLI_OK)
        return CLI_FAIL;
    return convert(files[0], files[1], bits);
}
