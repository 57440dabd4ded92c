/* SPDX-License-Identifier: BSD-3-Clause */
/*
** tokenizer_object.c - the text.bert_tokenizer object class: create reads
** the vocab (vocab.c), builds the LinMaxMatch trie (wordpiece_trie.c) and
** the per-byte ASCII tables of the mode, and resolves the special tokens.
** The object is read-only afterwards, so calls may run on many threads.
*/
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <utf8proc.h>

#include "tokenizer.h"
#include "tokenizer_attrs.h"

PK_ATTR_TABLE(tt_class, TT_CLASS_ATTRS);

static const char *const compat_values[] = { "torchtext", "hf", NULL };
static const loom_attr_choices tt_class_choices[] = {
    { .attr = PK_ATTR(tt_class, compat), .values = compat_values },
};

static const loom_dl_device cpu = { LOOM_DEVICE_CPU, 0 };

static void tt_destroy(void *state)
{
    tt_tokenizer *t = state;
    if (t == NULL)
        return;
    tt_vocab_free(&t->vocab);
    tt_trie_free(&t->trie);
    free(t->never_split);
    free(t->never_split_bytes);
    pk_host->free(cpu, t);
}

/* The ASCII tables: the class and the byte after lower-casing of every
** byte below 0x80, from the same class functions the rest uses. */
static void make_ascii_tables(tt_tokenizer *t)
{
    for (int ns = 0; ns < 2; ns++) {
        for (int32_t b = 0; b < 128; b++) {
            uint8_t cls;
            int lower = t->do_lower_case && !ns;
            if (t->compat == TT_COMPAT_HF) {
                cls = b == 0 || tt_hf_is_control(b) ? TT_CH_DROP
                    : tt_hf_is_whitespace(b)        ? TT_CH_SPACE
                    : tt_hf_is_punct(b)             ? TT_CH_SPLIT
                                                    : TT_CH_WORD;
            } else {
                cls = b == 0 || tt_torchtext_is_control(b) ? TT_CH_DROP
                    : tt_torchtext_is_whitespace(b)        ? TT_CH_SPACE
                    : !ns && tt_torchtext_is_punct(b)      ? TT_CH_SPLIT
                                                           : TT_CH_WORD;
            }
            t->ascii_class[ns][b] = cls;
            t->ascii_lower[ns][b] = (uint8_t)(lower ? utf8proc_tolower(b) : b);
        }
    }
}

/* One never_split token s[0..n), copied to *w; skipped when already there
** or, in hf mode, when the vocab lacks it. */
static void add_never_split(tt_tokenizer *t, const char *s, size_t n, char **w)
{
    if (n == 0)
        return;
    for (int32_t m = 0; m < t->n_never_split; m++)
        if (t->never_split[m].len == n && memcmp(t->never_split[m].s, s, n) == 0)
            return;
    int32_t id = tt_vocab_find(&t->vocab, s, n);
    if (t->compat == TT_COMPAT_HF && id < 0)
        return;
    memcpy(*w, s, n);
    (*w)[n] = '\0';
    t->never_split[t->n_never_split++] = (tt_special){ .s = *w, .len = (uint32_t)n, .id = id };
    if (t->compat == TT_COMPAT_HF)
        t->special_first[(uint8_t)s[0]] = 1;
    *w += n + 1;
}

/* never_split: space-separated tokens. torchtext keeps them all (they are
** compared with whole pieces); hf keeps those in the vocab, after the
** special tokens tokenizers' BertWordPieceTokenizer adds (unk, sep, cls,
** pad, mask: each one only when the vocab has it, as it does). */
static loom_status parse_never_split(tt_tokenizer *t, const loom_attr_value *a)
{
    const char *list = a[PK_ATTR(tt_class, never_split)].u.s;
    const char *specials[5] = { NULL };
    int n_specials = 0;
    if (t->compat == TT_COMPAT_HF) {
        specials[n_specials++] = a[PK_ATTR(tt_class, unk_token)].u.s;
        specials[n_specials++] = a[PK_ATTR(tt_class, sep_token)].u.s;
        specials[n_specials++] = a[PK_ATTR(tt_class, cls_token)].u.s;
        specials[n_specials++] = a[PK_ATTR(tt_class, pad_token)].u.s;
        specials[n_specials++] = a[PK_ATTR(tt_class, mask_token)].u.s;
    }
    const size_t list_len = list != NULL ? strlen(list) : 0;
    size_t total = list_len + 1;
    for (int k = 0; k < n_specials; k++)
        total += strlen(specials[k]) + 1;
    /* every token takes at least two bytes of `total` (itself and a NUL) */
    t->never_split_bytes = malloc(total);
    t->never_split = malloc((total / 2 + 1) * sizeof *t->never_split);
    if (t->never_split_bytes == NULL || t->never_split == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory for never_split", TT_CLASS);
    char *w = t->never_split_bytes;
    for (int k = 0; k < n_specials; k++)
        add_never_split(t, specials[k], strlen(specials[k]), &w);
    for (size_t i = 0; i < list_len;) {
        while (i < list_len && list[i] == ' ')
            i++;
        size_t j = i;
        while (j < list_len && list[j] != ' ')
            j++;
        add_never_split(t, list + i, j - i, &w);
        i = j;
    }
    return LOOM_OK;
}

static const char *vocab_path(const loom_object_args *args)
{
    for (int32_t i = 0; i < args->n_files && args->files != NULL; i++)
        if (args->files[i].name != NULL && strcmp(args->files[i].name, "vocab") == 0)
            return args->files[i].path;
    const loom_attr_value *v = &args->attrs[PK_ATTR(tt_class, vocab)];
    return v->is_set ? v->u.s : NULL;
}

static loom_status tt_create(const loom_object_args *args, void **state_out)
{
    const loom_attr_value *a = args->attrs;
    const char *path = vocab_path(args);
    if (path == NULL || path[0] == '\0')
        return pk_host->fail(LOOM_EINVAL, "%s: no vocab: give the attribute vocab=FILE (one token per line)", TT_CLASS);
    const int64_t max_chars = a[PK_ATTR(tt_class, max_input_chars_per_word)].u.i;
    if (max_chars < 1 || max_chars > 1024)
        return pk_host->fail(LOOM_EINVAL, "%s: max_input_chars_per_word %lld is not in [1, 1024]", TT_CLASS,
                             (long long)max_chars);
    tt_tokenizer *t = pk_host->alloc(cpu, sizeof *t, 64);
    if (t == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", TT_CLASS);
    memset(t, 0, sizeof *t);
    t->compat = strcmp(a[PK_ATTR(tt_class, compat)].u.s, "hf") == 0 ? TT_COMPAT_HF : TT_COMPAT_TORCHTEXT;
    t->do_lower_case = a[PK_ATTR(tt_class, do_lower_case)].u.b != 0;
    const loom_attr_value *sa = &a[PK_ATTR(tt_class, strip_accents)];
    if (t->compat == TT_COMPAT_TORCHTEXT)
        t->strip = sa->is_set ? 1 : t->do_lower_case;      /* strip_accents_.has_value() */
    else
        t->strip = sa->is_set ? sa->u.b != 0 : t->do_lower_case;
    t->return_tokens = a[PK_ATTR(tt_class, return_tokens)].u.b != 0;
    t->max_chars = (int32_t)max_chars;
    const char *unk = a[PK_ATTR(tt_class, unk_token)].u.s;
    loom_status st = tt_vocab_load(&t->vocab, path, t->compat, unk);
    if (st == LOOM_OK) {
        t->unk_id = tt_vocab_find(&t->vocab, unk, strlen(unk));
        const char *cls = a[PK_ATTR(tt_class, cls_token)].u.s, *sep = a[PK_ATTR(tt_class, sep_token)].u.s;
        const char *pad = a[PK_ATTR(tt_class, pad_token)].u.s;
        t->cls_id = tt_vocab_find(&t->vocab, cls, strlen(cls));
        t->sep_id = tt_vocab_find(&t->vocab, sep, strlen(sep));
        t->pad_id = tt_vocab_find(&t->vocab, pad, strlen(pad));
        /* torchtext's limit is in bytes, tokenizers' in characters (4 bytes at most) */
        st = tt_trie_build(&t->trie, &t->vocab, t->compat == TT_COMPAT_HF ? t->max_chars * 4 : t->max_chars);
    }
    if (st == LOOM_OK)
        st = parse_never_split(t, a);
    if (st != LOOM_OK) {
        tt_destroy(t);
        return st;
    }
    make_ascii_tables(t);
    *state_out = t;
    return LOOM_OK;
}

const loom_object_class tt_bert_tokenizer_class = {
    .struct_size = sizeof(loom_object_class),
    .name = TT_CLASS,
    .doc = "BERT WordPiece tokenizer from a vocab file: torchtext 0.18's BERTTokenizer, or tokenizers' "
           "BertWordPieceTokenizer with compat=hf (linear-time LinMaxMatch)",
    .n_attrs = PK_COUNT(tt_class_attrs), .attrs = tt_class_attrs,
    .create = tt_create,
    .destroy = tt_destroy,
    .n_choices = PK_COUNT(tt_class_choices), .choices = tt_class_choices,
};
