/* SPDX-License-Identifier: BSD-3-Clause */
/*
** tokenizer_cpu.c - the text.bert_tokenizer op (a method of the class of
** the same name) and the module: a batch of strings, or of string pairs,
** to WordPiece ids.
**
** Inputs: text (u8) + text_offsets (i64 [B+1]), the jagged strings of
** plugin.h; optionally text_pair + text_pair_offsets with the same B.
** Outputs (every one always exists; one not asked for is empty):
**   input_ids       i64 [T] jagged by offsets, or [B, L] with padding
**   offsets         i64 [B+1]: row b is input_ids[offsets[b]:offsets[b+1]]
**                   (the unpadded lengths also with padding)
**   token_type_ids  i64, input_ids' layout: 0 for [CLS] A [SEP], 1 for B [SEP]
**   attention_mask  i64 [B, L] with padding (1 = token, 0 = pad), else [0, 0]
**   char_offsets    i64 [T, 2] or [B, L, 2] with return_char_offsets, else [0, 2]
**   tokens          u8, the token strings (return_tokens), with tokens_offsets
**                   i64 [T+1] (T counts the unpadded tokens), else empty
** Pairs and add_special_tokens give [CLS] A [SEP] B [SEP]; truncation
** follows tokenizers' truncate_encodings (stride 0, from the right) with
** max_length minus the special tokens.
**
** The batch is cut into contiguous chunks of rows spread over the core's
** threads; each chunk writes its own growable buffers, which are then
** copied in order, so the result does not depend on the thread count.
*/
#include <stdlib.h>
#include <string.h>

#include "text_pack.h"
#include "tokenizer.h"
#include "tokenizer_attrs.h"

/* ---------------------------------------------------------------- schema */

static const loom_arg_def tt_inputs[] = {
    { .name = "text", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_U8), .flags = LOOM_ARG_JAGGED, .ndim = 1,
      .doc = "the UTF-8 bytes of every string, concatenated" },
    { .name = "text_offsets", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64), .flags = LOOM_ARG_OFFSETS, .ndim = 1,
      .doc = "[B+1]: string b is text[text_offsets[b]:text_offsets[b+1]]" },
    { .name = "text_pair", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_U8), .flags = LOOM_ARG_JAGGED | LOOM_ARG_OPTIONAL,
      .ndim = 1, .doc = "second strings of sentence pairs: [CLS] A [SEP] B [SEP]" },
    { .name = "text_pair_offsets", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64),
      .flags = LOOM_ARG_OFFSETS | LOOM_ARG_OPTIONAL, .ndim = 1, .doc = "[B+1], the same B as text" },
};

#define I64 LOOM_DTYPE_BIT(LOOM_DTYPE_I64)
static const loom_arg_def tt_outputs[] = {
    { .name = "input_ids", .dtypes = I64, .ndim = -1, .doc = "[T] jagged by offsets, or [B, L] with padding" },
    { .name = "offsets", .dtypes = I64, .ndim = 1, .doc = "[B+1]: the rows of input_ids (unpadded lengths)" },
    { .name = "token_type_ids", .dtypes = I64, .ndim = -1, .doc = "input_ids' layout: 0 first segment, 1 second" },
    { .name = "attention_mask", .dtypes = I64, .ndim = 2, .doc = "[B, L] with padding, else [0, 0]" },
    { .name = "char_offsets", .dtypes = I64, .ndim = -1,
      .doc = "[T, 2] or [B, L, 2]: [start, end) characters in the input string (return_char_offsets), else [0, 2]" },
    { .name = "tokens", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_U8), .flags = LOOM_ARG_JAGGED, .ndim = 1,
      .doc = "the token strings, concatenated (return_tokens), else empty" },
    { .name = "tokens_offsets", .dtypes = I64, .flags = LOOM_ARG_OFFSETS, .ndim = 1,
      .doc = "[T+1]: token t is tokens[tokens_offsets[t]:tokens_offsets[t+1]]" },
};

PK_ATTR_TABLE(tt_op, TT_OP_ATTRS);

static const char *const truncation_values[] = { "longest_first", "only_first", "only_second", "do_not_truncate",
                                                 NULL };
static const char *const padding_values[] = { "do_not_pad", "max_length", "longest", NULL };
static const loom_attr_choices tt_op_choices[] = {
    { .attr = PK_ATTR(tt_op, truncation), .values = truncation_values },
    { .attr = PK_ATTR(tt_op, padding), .values = padding_values },
};

PK_SCHEMA(tt_bert_tokenizer_schema, TT_CLASS, 1,
          "strings (jagged u8 + offsets) to BERT WordPiece ids (jagged, or dense with padding)",
          PK_INPUTS(tt_inputs), PK_OUTPUTS(tt_outputs), PK_ATTRS(tt_op_attrs), PK_CHOICES(tt_op_choices),
          .object_class = TT_CLASS);

#define TT_OPS(X) X(tt_bert_tokenizer_schema)
PK_OPS_DECLARE(tt_ops, TT_OPS);
PK_OPS_DEFINE(tt_ops, TT_OPS);

/* ---------------------------------------------------------------- kernel */

typedef enum { TR_LONGEST_FIRST, TR_ONLY_FIRST, TR_ONLY_SECOND, TR_NONE } trunc_mode;

typedef struct chunk {
    tt_tokens out;              /* the rows of this chunk, in order */
    tt_tokens a, b;             /* one string's tokens before composing */
    int64_t err_row;            /* first failing row, or -1 */
    tt_error err;
    int err_pair;               /* the failing string is text_pair */
    loom_status err_status;
    const char *err_text;       /* a composed-row failure, or NULL */
} chunk;

typedef struct job {
    const tt_tokenizer *t;
    const uint8_t *text, *pair;
    const int64_t *toff, *poff;
    int64_t B;
    int64_t n_chunks;
    chunk *chunks;
    int64_t *len, *first_len;   /* per row: tokens, tokens of type 0 */
    int specials;
    int64_t budget;             /* max tokens of the segments, -1 = no truncation */
    trunc_mode trunc;
    int spans;
} job;

static loom_status fail_row(chunk *c, int64_t row, loom_status st, const char *what)
{
    if (c->err_row < 0) {
        c->err_row = row;
        c->err_status = st;
        c->err_text = what;
    }
    return st;
}

/* tokenizers' truncate_encodings for one row: the lengths kept. */
static const char *truncate_lengths(const job *j, int64_t *na, int64_t *nb, int pair)
{
    if (j->budget < 0)
        return NULL;
    int64_t total = *na + (pair ? *nb : 0);
    if (total <= j->budget)
        return NULL;
    int64_t to_remove = total - j->budget, max = j->budget;
    switch (j->trunc) {
    case TR_LONGEST_FIRST:
        if (!pair) {
            *na = total - to_remove;
        } else {
            int64_t n1 = *na, n2 = *nb;
            int swap = n1 > n2;
            if (swap) {
                int64_t x = n1; n1 = n2; n2 = x;
            }
            n2 = n1 > max ? n1 : (n1 > max - n1 ? n1 : max - n1);
            if (n1 + n2 > max) {
                n1 = max / 2;
                n2 = n1 + max % 2;
            }
            if (swap) {
                int64_t x = n1; n1 = n2; n2 = x;
            }
            if (n1 < *na) *na = n1;
            if (n2 < *nb) *nb = n2;
        }
        return NULL;
    case TR_ONLY_FIRST:
    case TR_ONLY_SECOND: {
        int64_t *target = j->trunc == TR_ONLY_FIRST ? na : nb;
        if (j->trunc == TR_ONLY_SECOND && !pair)
            return "truncation only_second needs text_pair";
        if (*target <= to_remove)
            return j->trunc == TR_ONLY_FIRST ? "truncation only_first cannot make the row fit max_length: the "
                                               "first sequence is too short"
                                             : "truncation only_second cannot make the row fit max_length: the "
                                               "second sequence is too short";
        *target -= to_remove;
        return NULL;
    }
    default:
        return NULL;
    }
}

static int push(tt_tokens *o, int64_t id, int64_t s0, int64_t s1)
{
    if (tt_tokens_reserve(o, 1) != LOOM_OK)
        return -1;
    o->ids[o->n] = id;
    if (o->want_spans) {
        o->spans[2 * o->n] = s0;
        o->spans[2 * o->n + 1] = s1;
    }
    o->n++;
    return 0;
}

static int append(tt_tokens *o, const tt_tokens *src, int64_t n)
{
    if (n == 0)
        return 0;
    if (tt_tokens_reserve(o, (size_t)n) != LOOM_OK)
        return -1;
    memcpy(o->ids + o->n, src->ids, (size_t)n * sizeof *o->ids);
    if (o->want_spans)
        memcpy(o->spans + 2 * o->n, src->spans, (size_t)n * 2 * sizeof *o->spans);
    o->n += (size_t)n;
    return 0;
}

static void encode_rows(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    job *j = user;
    const tt_tokenizer *t = j->t;
    for (int64_t k = begin; k < end; k++) {
        chunk *c = &j->chunks[k];
        const int64_t r0 = k * j->B / j->n_chunks, r1 = (k + 1) * j->B / j->n_chunks;
        for (int64_t r = r0; r < r1 && c->err_row < 0; r++) {
            c->a.n = c->b.n = 0;
            loom_status st = tt_encode(t, j->text + j->toff[r], (size_t)(j->toff[r + 1] - j->toff[r]), &c->a, &c->err);
            if (st == LOOM_OK && j->pair != NULL) {
                st = tt_encode(t, j->pair + j->poff[r], (size_t)(j->poff[r + 1] - j->poff[r]), &c->b, &c->err);
                c->err_pair = st == LOOM_EINVAL;
            }
            if (st != LOOM_OK) {
                fail_row(c, r, st, NULL);
                break;
            }
            int64_t na = (int64_t)c->a.n, nb = (int64_t)c->b.n;
            const char *why = truncate_lengths(j, &na, &nb, j->pair != NULL);
            if (why != NULL) {
                fail_row(c, r, LOOM_EINVAL, why);
                break;
            }
            const size_t before = c->out.n;
            int bad = 0;
            if (j->specials)
                bad |= push(&c->out, t->cls_id, 0, 0);
            bad |= append(&c->out, &c->a, na);
            if (j->specials)
                bad |= push(&c->out, t->sep_id, 0, 0);
            j->first_len[r] = (int64_t)(c->out.n - before);
            if (j->pair != NULL) {
                bad |= append(&c->out, &c->b, nb);
                bad |= push(&c->out, t->sep_id, 0, 0);
            }
            j->len[r] = (int64_t)(c->out.n - before);
            if (bad) {
                fail_row(c, r, LOOM_ENOMEM, NULL);
                break;
            }
        }
    }
}

static loom_status empty_output(loom_call *call, int32_t index, loom_dtype dt, int32_t ndim, int64_t inner)
{
    const int64_t shape[2] = { 0, inner };
    loom_tensor *o;
    return pk_host->alloc_output(call, index, dt, ndim, shape, &o);
}

static const char *attr_s(const loom_call *call, int i)
{
    return call->attrs[i].u.s;
}

/* What was given: the batch and the options, checked before any work. */
static loom_status setup(loom_call *call, job *j, int64_t *L_fixed, int *dense)
{
    const tt_tokenizer *t = call->object;
    const loom_tensor *text = call->inputs[0], *toff = call->inputs[1];
    const loom_tensor *pair = call->inputs[2], *poff = call->inputs[3];
    char b1[64], b2[64];
    j->t = t;
    j->B = toff->shape[0] - 1;
    j->text = loom_data(text);
    j->toff = loom_data(toff);
    if (pair != NULL) {
        if (poff == NULL || poff->shape[0] != toff->shape[0])
            return pk_host->fail(LOOM_EINVAL, "'text_pair_offsets' %s must be i64 [B+1] with the B of "
                                 "'text_offsets' %s", poff != NULL ? pk_describe(pk_host, poff, b1, sizeof b1) : "(absent)",
                                 pk_describe(pk_host, toff, b2, sizeof b2));
        j->pair = loom_data(pair);
        j->poff = loom_data(poff);
    } else if (poff != NULL) {
        return pk_host->fail(LOOM_EINVAL, "'text_pair_offsets' given without 'text_pair'");
    }
    const loom_attr_value *as = &call->attrs[PK_ATTR(tt_op, add_special_tokens)];
    j->specials = pair != NULL || (as->is_set ? as->u.b != 0 : t->compat == TT_COMPAT_HF);
    if (j->specials && (t->cls_id < 0 || t->sep_id < 0))
        return pk_host->fail(LOOM_EINVAL, "special tokens need [CLS] and [SEP] (cls_token, sep_token) in the vocab; "
                             "it lacks %s", t->cls_id < 0 ? "cls_token" : "sep_token");
    const int64_t max_length = call->attrs[PK_ATTR(tt_op, max_length)].u.i;
    const char *tr = attr_s(call, PK_ATTR(tt_op, truncation));
    const char *pad = attr_s(call, PK_ATTR(tt_op, padding));
    j->trunc = strcmp(tr, "only_first") == 0 ? TR_ONLY_FIRST : strcmp(tr, "only_second") == 0 ? TR_ONLY_SECOND
             : strcmp(tr, "do_not_truncate") == 0 ? TR_NONE : TR_LONGEST_FIRST;
    const int64_t added = j->specials ? (pair != NULL ? 3 : 2) : 0;
    j->budget = -1;
    if (max_length > 0 && j->trunc != TR_NONE) {
        if (max_length < added)
            return pk_host->fail(LOOM_EINVAL, "max_length %lld leaves no room: the special tokens alone take %lld",
                                 (long long)max_length, (long long)added);
        j->budget = max_length - added;
    }
    *dense = strcmp(pad, "do_not_pad") != 0;
    *L_fixed = -1;
    if (strcmp(pad, "max_length") == 0) {
        if (max_length <= 0)
            return pk_host->fail(LOOM_EINVAL, "padding max_length needs max_length > 0");
        *L_fixed = max_length;
    }
    if (*dense && t->pad_id < 0)
        return pk_host->fail(LOOM_EINVAL, "padding needs pad_token in the vocab");
    j->spans = call->attrs[PK_ATTR(tt_op, return_char_offsets)].u.b != 0;
    return LOOM_OK;
}

static loom_status report_error(const job *j)
{
    for (int64_t k = 0; k < j->n_chunks; k++) {
        const chunk *c = &j->chunks[k];
        if (c->err_row < 0)
            continue;
        if (c->err_status == LOOM_ENOMEM)
            return pk_host->fail(LOOM_ENOMEM, "out of memory at row %lld", (long long)c->err_row);
        if (c->err_text != NULL)
            return pk_host->fail(c->err_status, "row %lld: %s", (long long)c->err_row, c->err_text);
        return pk_host->fail(LOOM_EINVAL, "%s %lld %s at byte %lld of the string (byte %lld of '%s')",
                             c->err_pair ? "text_pair" : "text", (long long)c->err_row, c->err.what,
                             (long long)c->err.byte,
                             (long long)((c->err_pair ? j->poff : j->toff)[c->err_row] + c->err.byte),
                             c->err_pair ? "text_pair" : "text");
    }
    return LOOM_OK;
}

/* The outputs, from the chunks' buffers. */
static loom_status write_outputs(loom_call *call, job *j, int dense, int64_t L_fixed)
{
    const tt_tokenizer *t = j->t;
    const int64_t B = j->B;
    loom_tensor *ids_t, *off_t, *type_t, *mask_t, *span_t;
    int64_t shape[3] = { B + 1 };
    loom_status st = pk_host->alloc_output(call, 1, LOOM_DTYPE_I64, 1, shape, &off_t);
    if (st != LOOM_OK)
        return st;
    int64_t *off = loom_data(off_t), T = 0, longest = 0;
    off[0] = 0;
    for (int64_t r = 0; r < B; r++) {
        T += j->len[r];
        off[r + 1] = T;
        if (j->len[r] > longest)
            longest = j->len[r];
    }
    if (!dense) {
        shape[0] = T;
        if ((st = pk_host->alloc_output(call, 0, LOOM_DTYPE_I64, 1, shape, &ids_t)) != LOOM_OK
            || (st = pk_host->alloc_output(call, 2, LOOM_DTYPE_I64, 1, shape, &type_t)) != LOOM_OK
            || (st = empty_output(call, 3, LOOM_DTYPE_I64, 2, 0)) != LOOM_OK)
            return st;
        shape[0] = j->spans ? T : 0;
        shape[1] = 2;
        if ((st = pk_host->alloc_output(call, 4, LOOM_DTYPE_I64, 2, shape, &span_t)) != LOOM_OK)
            return st;
        int64_t *ids = loom_data(ids_t), *types = loom_data(type_t), *sp = loom_data(span_t);
        int64_t at = 0;
        for (int64_t k = 0; k < j->n_chunks; k++) {
            const tt_tokens *o = &j->chunks[k].out;
            if (o->n > 0) {
                memcpy(ids + at, o->ids, o->n * sizeof *ids);
                if (j->spans)
                    memcpy(sp + 2 * at, o->spans, o->n * 2 * sizeof *sp);
            }
            at += (int64_t)o->n;
        }
        for (int64_t r = 0; r < B; r++)
            for (int64_t i = off[r]; i < off[r + 1]; i++)
                types[i] = i - off[r] >= j->first_len[r];
    } else {
        const int64_t L = L_fixed >= 0 ? L_fixed : longest;
        for (int64_t r = 0; r < B; r++)
            if (j->len[r] > L)
                return pk_host->fail(LOOM_EINVAL, "row %lld has %lld tokens, more than the %lld of padding max_length "
                                     "(truncation is do_not_truncate)", (long long)r, (long long)j->len[r],
                                     (long long)L);
        shape[0] = B;
        shape[1] = L;
        if ((st = pk_host->alloc_output(call, 0, LOOM_DTYPE_I64, 2, shape, &ids_t)) != LOOM_OK
            || (st = pk_host->alloc_output(call, 2, LOOM_DTYPE_I64, 2, shape, &type_t)) != LOOM_OK
            || (st = pk_host->alloc_output(call, 3, LOOM_DTYPE_I64, 2, shape, &mask_t)) != LOOM_OK)
            return st;
        int64_t sshape[3] = { j->spans ? B : 0, j->spans ? L : 2, 2 };
        if ((st = pk_host->alloc_output(call, 4, LOOM_DTYPE_I64, j->spans ? 3 : 2, sshape, &span_t)) != LOOM_OK)
            return st;
        int64_t *ids = loom_data(ids_t), *types = loom_data(type_t), *mask = loom_data(mask_t);
        int64_t *sp = loom_data(span_t);
        int64_t r = 0;
        for (int64_t k = 0; k < j->n_chunks; k++) {
            const tt_tokens *o = &j->chunks[k].out;
            const int64_t r1 = (k + 1) * B / j->n_chunks;
            size_t at = 0;
            for (; r < r1; r++) {
                const int64_t n = j->len[r];
                for (int64_t i = 0; i < L; i++) {
                    const int in = i < n;
                    ids[r * L + i] = in ? o->ids[at + (size_t)i] : t->pad_id;
                    types[r * L + i] = in && i >= j->first_len[r];
                    mask[r * L + i] = in;
                    if (j->spans) {
                        sp[2 * (r * L + i)] = in ? o->spans[2 * (at + (size_t)i)] : 0;
                        sp[2 * (r * L + i) + 1] = in ? o->spans[2 * (at + (size_t)i) + 1] : 0;
                    }
                }
                at += (size_t)n;
            }
        }
    }
    /* the token strings */
    loom_tensor *tok_t, *toff_t;
    int64_t nbytes = 0;
    if (t->return_tokens)
        for (int64_t k = 0; k < j->n_chunks; k++)
            for (size_t i = 0; i < j->chunks[k].out.n; i++)
                nbytes += t->vocab.len[j->chunks[k].out.ids[i]];
    shape[0] = nbytes;
    if ((st = pk_host->alloc_output(call, 5, LOOM_DTYPE_U8, 1, shape, &tok_t)) != LOOM_OK)
        return st;
    shape[0] = t->return_tokens ? T + 1 : 0;
    if ((st = pk_host->alloc_output(call, 6, LOOM_DTYPE_I64, 1, shape, &toff_t)) != LOOM_OK)
        return st;
    if (t->return_tokens) {
        uint8_t *tb = loom_data(tok_t);
        int64_t *to = loom_data(toff_t), at = 0, n = 0;
        to[0] = 0;
        for (int64_t k = 0; k < j->n_chunks; k++)
            for (size_t i = 0; i < j->chunks[k].out.n; i++) {
                int64_t id = j->chunks[k].out.ids[i];
                uint32_t len = t->vocab.len[id];
                if (len > 0)
                    memcpy(tb + at, t->vocab.bytes + t->vocab.start[id], len);
                at += len;
                to[++n] = at;
            }
    }
    return LOOM_OK;
}

static loom_status tt_run_cpu(loom_call *call)
{
    job j = { 0 };
    int64_t L_fixed = -1;
    int dense = 0;
    loom_status st = setup(call, &j, &L_fixed, &dense);
    if (st != LOOM_OK)
        return st;
    const int32_t threads = call->ctx->n_threads > 0 ? call->ctx->n_threads : 1;
    j.n_chunks = j.B < (int64_t)threads * 8 ? j.B : (int64_t)threads * 8;
    if (j.n_chunks < 1)
        j.n_chunks = 1;
    j.chunks = calloc((size_t)j.n_chunks, sizeof *j.chunks);
    j.len = calloc((size_t)j.B + 1, sizeof *j.len);
    j.first_len = calloc((size_t)j.B + 1, sizeof *j.first_len);
    if (j.chunks == NULL || j.len == NULL || j.first_len == NULL) {
        st = pk_host->fail(LOOM_ENOMEM, "out of memory for a batch of %lld strings", (long long)j.B);
        goto done;
    }
    for (int64_t k = 0; k < j.n_chunks; k++) {
        j.chunks[k].err_row = -1;
        j.chunks[k].out.want_spans = j.chunks[k].a.want_spans = j.chunks[k].b.want_spans = j.spans;
    }
    if (j.B > 0) {
        st = pk_host->parallel_for(call->ctx, j.n_chunks, 1, encode_rows, &j);
        if (st == LOOM_OK)
            st = report_error(&j);
    }
    if (st == LOOM_OK)
        st = write_outputs(call, &j, dense, L_fixed);
done:
    if (j.chunks != NULL)
        for (int64_t k = 0; k < j.n_chunks; k++) {
            tt_tokens_free(&j.chunks[k].out);
            tt_tokens_free(&j.chunks[k].a);
            tt_tokens_free(&j.chunks[k].b);
        }
    free(j.chunks);
    free(j.len);
    free(j.first_len);
    return st;
}

/* ---------------------------------------------------------------- module */

static const loom_object_class *const tt_classes[] = { &tt_bert_tokenizer_class };

static const loom_kernel_desc tt_cpu_kernels[] = {
    PK_KERNEL_CPU(tt_bert_tokenizer_schema, "cpu:linmaxmatch", 0, tt_run_cpu),
};

const pk_module text_tokenizer_cpu = {
    .name = "tokenizer",
    .ops = tt_ops, .n_ops = PK_COUNT(tt_ops),
    .classes = tt_classes, .n_classes = PK_COUNT(tt_classes),
    .kernels = tt_cpu_kernels, .n_kernels = PK_COUNT(tt_cpu_kernels),
};
