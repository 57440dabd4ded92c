/* SPDX-License-Identifier: BSD-3-Clause */
/*
** tt_strings.h - what the text.bert_tokenizer tests share: strings as the
** jagged pair of plugin.h, a tokenizer object over a vocab, one call.
*/
#ifndef LOOM_TESTS_TT_STRINGS_H
#define LOOM_TESTS_TT_STRINGS_H

#include <stddef.h>
#include <stdint.h>

#include "loom/loom.h"

/* The outputs of text.bert_tokenizer, in schema order. */
enum { TT_IDS, TT_OFFSETS, TT_TYPES, TT_MASK, TT_CHARS, TT_TOKENS, TT_TOKENS_OFFSETS, TT_N_OUT };

/* n strings as values (u8) + offsets (i64 [n+1]); lens[i] < 0: strlen. */
void tt_strings(const char *const *s, const int64_t *lens, int64_t n, loom_tensor **values, loom_tensor **offsets);
/* The lines of a file (split at '\n'; a final '\n' opens no line). */
void tt_file_lines(const char *path, loom_tensor **values, loom_tensor **offsets);
/* A tokenizer over the vocab file, attributes "k=v;k=v" (NULL: none).
** Returns LOOM_OK or the status (the message is loom_last_error()). */
loom_status tt_make(loom_object **obj, const char *vocab_path, const char *attrs);
/* One call: the outputs (TT_N_OUT entries, freed with tt_free_outputs). */
loom_status tt_run(loom_object *obj, const loom_tensor *text, const loom_tensor *text_off, const loom_tensor *pair,
                   const loom_tensor *pair_off, const char *attrs, int32_t threads, loom_tensor **out);
void tt_free_outputs(loom_tensor **out);
/* A file under the test's temporary folder holding n bytes; the path. */
const char *tt_temp_file(const char *name, const void *data, size_t n);

#endif /* LOOM_TESTS_TT_STRINGS_H */
