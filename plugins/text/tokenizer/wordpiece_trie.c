/* SPDX-License-Identifier: BSD-3-Clause */
/*
** wordpiece_trie.c - the LinMaxMatch automaton of tokenizer.h (Song et al.,
** "Fast WordPiece Tokenization", EMNLP 2021, Algorithm 2), built once when
** a tokenizer is created.
**
** Failure links and pops, by breadth-first order over both tries (a node's
** link always leads to a shallower node, so it is known when needed): for a
** node v = child(u, c),
**   v is a token:   f(v) = sroot, F(v) = [v]  (pop v, go on as a suffix)
**   otherwise:      z = f(u), Z = F(u); while z exists and has no edge c:
**                   Z += F(z), z = f(z); then f(v) = child(z, c) (or none)
**                   and F(v) = Z.
** Both roots have no link: a word whose remaining bytes start no token
** cannot be segmented.
*/
#include <stdlib.h>
#include <string.h>

#include "pack.h"
#include "tokenizer.h"

/* Children with more edges than this get a dense row of 256 entries. */
#define TT_DENSE_MIN_CHILDREN 12
/* Failure pops are stored flat, so their total can grow with the square of
** a token's length for vocabs no tokenizer was trained to (thousands of
** tokens that are prefixes of each other); such a vocab is refused beyond
** this many pops per node, where a real vocab needs about one. */
#define TT_MAX_POPS_PER_NODE 64
/* Nodes are numbered in 24 bits (edges pack child << 8 | byte). */
#define TT_MAX_NODES (1 << 24)

typedef struct builder {
    int32_t n, cap;
    int32_t *first, *next, *token, *depth;
    uint8_t *label;
    int32_t *nchild;
} builder;

static int32_t new_node(builder *b, uint8_t label, int32_t depth)
{
    if (b->n == b->cap) {
        int32_t cap = b->cap ? b->cap * 2 : 1024;
        int32_t *f = realloc(b->first, (size_t)cap * sizeof *f);
        if (f) b->first = f;
        int32_t *x = realloc(b->next, (size_t)cap * sizeof *x);
        if (x) b->next = x;
        int32_t *t = realloc(b->token, (size_t)cap * sizeof *t);
        if (t) b->token = t;
        int32_t *d = realloc(b->depth, (size_t)cap * sizeof *d);
        if (d) b->depth = d;
        int32_t *c = realloc(b->nchild, (size_t)cap * sizeof *c);
        if (c) b->nchild = c;
        uint8_t *l = realloc(b->label, (size_t)cap);
        if (l) b->label = l;
        if (!f || !x || !t || !d || !c || !l)
            return -1;
        b->cap = cap;
    }
    int32_t v = b->n++;
    b->first[v] = -1;
    b->next[v] = -1;
    b->token[v] = -1;
    b->depth[v] = depth;
    b->nchild[v] = 0;
    b->label[v] = label;
    return v;
}

/* The child of u labelled c, made when missing (children kept sorted). */
static int32_t child_or_new(builder *b, int32_t u, uint8_t c)
{
    int32_t prev = -1, e = b->first[u];
    while (e >= 0 && b->label[e] < c) {
        prev = e;
        e = b->next[e];
    }
    if (e >= 0 && b->label[e] == c)
        return e;
    int32_t v = new_node(b, c, b->depth[u] + 1);
    if (v < 0)
        return -1;
    b->next[v] = e;
    if (prev < 0)
        b->first[u] = v;
    else
        b->next[prev] = v;
    b->nchild[u]++;
    return v;
}

static int insert(builder *b, int32_t root, const uint8_t *s, size_t n, int32_t id)
{
    int32_t u = root;
    for (size_t i = 0; i < n; i++)
        if ((u = child_or_new(b, u, s[i])) < 0)
            return -1;
    b->token[u] = id;
    return 0;
}

static void free_builder(builder *b)
{
    free(b->first);
    free(b->next);
    free(b->token);
    free(b->depth);
    free(b->nchild);
    free(b->label);
}

void tt_trie_free(tt_trie *t)
{
    free(t->edge_begin);
    free(t->edges);
    free(t->dense);
    free(t->dense_rows);
    free(t->token);
    free(t->depth);
    free(t->fail);
    free(t->pops_begin);
    free(t->pops_n);
    free(t->pops);
    memset(t, 0, sizeof *t);
}

typedef struct pop_list {
    int32_t *v;
    size_t n, cap;
} pop_list;

static int pops_push(pop_list *p, int32_t x)
{
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 4096;
        int32_t *v = realloc(p->v, cap * sizeof *v);
        if (v == NULL)
            return -1;
        p->v = v;
        p->cap = cap;
    }
    p->v[p->n++] = x;
    return 0;
}

loom_status tt_trie_build(tt_trie *t, const tt_vocab *voc, int32_t max_token_bytes)
{
    builder b = { 0 };
    memset(t, 0, sizeof *t);
    int32_t root = new_node(&b, 0, 0), sroot = new_node(&b, 0, 0);
    int fail_mem = root < 0 || sroot < 0;
    for (int32_t id = 0; id < voc->n && !fail_mem && b.n < TT_MAX_NODES; id++) {
        const uint8_t *s = (const uint8_t *)voc->bytes + voc->start[id];
        size_t n = voc->len[id];
        /* a token longer than any word WordPiece takes can never match */
        if (n > (size_t)max_token_bytes + 2)
            continue;
        if (n <= (size_t)max_token_bytes)
            fail_mem |= insert(&b, root, s, n, id) != 0;
        if (n > 2 && s[0] == '#' && s[1] == '#')
            fail_mem |= insert(&b, sroot, s + 2, n - 2, id) != 0;
    }
    if (!fail_mem && b.n >= TT_MAX_NODES) {
        free_builder(&b);
        return pk_host->fail(LOOM_EINVAL, "%s: the vocab of %d tokens makes more than %d trie nodes", TT_CLASS,
                             (int)voc->n, TT_MAX_NODES);
    }
    const int32_t N = b.n;
    if (!fail_mem) {
        t->n_nodes = N;
        t->root = root;
        t->sroot = sroot;
        t->edge_begin = malloc(((size_t)N + 1) * sizeof *t->edge_begin);
        t->edges = malloc(((size_t)N + 1) * sizeof *t->edges);
        t->dense = malloc((size_t)N * sizeof *t->dense);
        t->token = malloc((size_t)N * sizeof *t->token);
        t->depth = malloc((size_t)N * sizeof *t->depth);
        t->fail = malloc((size_t)N * sizeof *t->fail);
        t->pops_begin = calloc((size_t)N, sizeof *t->pops_begin);
        t->pops_n = calloc((size_t)N, sizeof *t->pops_n);
        fail_mem = !t->edge_begin || !t->edges || !t->dense || !t->token || !t->depth || !t->fail
                || !t->pops_begin || !t->pops_n;
    }
    int32_t rows = 0;
    if (!fail_mem) {
        uint32_t e = 0;
        for (int32_t u = 0; u < N; u++) {
            t->edge_begin[u] = e;
            for (int32_t c = b.first[u]; c >= 0; c = b.next[c])
                t->edges[e++] = ((uint32_t)c << 8) | b.label[c];
            t->dense[u] = b.nchild[u] > TT_DENSE_MIN_CHILDREN || u == root || u == sroot ? rows++ : -1;
        }
        t->edge_begin[N] = e;
        memcpy(t->token, b.token, (size_t)N * sizeof *t->token);
        memcpy(t->depth, b.depth, (size_t)N * sizeof *t->depth);
        t->dense_rows = malloc((size_t)rows * 256 * sizeof *t->dense_rows);
        fail_mem = t->dense_rows == NULL;
    }
    if (!fail_mem) {
        for (size_t i = 0; i < (size_t)rows * 256; i++)
            t->dense_rows[i] = -1;
        for (int32_t u = 0; u < N; u++)
            if (t->dense[u] >= 0)
                for (uint32_t e = t->edge_begin[u]; e < t->edge_begin[u + 1]; e++)
                    t->dense_rows[(size_t)t->dense[u] * 256 + (t->edges[e] & 0xFFu)] = (int32_t)(t->edges[e] >> 8);
    }
    free_builder(&b);

    /* failure links and pops, breadth first from both roots */
    int32_t *queue = fail_mem ? NULL : malloc((size_t)N * sizeof *queue);
    pop_list pops = { 0 };
    int too_many = 0;
    fail_mem |= queue == NULL;
    if (!fail_mem) {
        int32_t head = 0, tail = 0;
        queue[tail++] = root;
        queue[tail++] = sroot;
        t->fail[root] = t->fail[sroot] = -1;
        while (head < tail && !fail_mem && !too_many) {
            int32_t u = queue[head++];
            for (uint32_t e = t->edge_begin[u]; e < t->edge_begin[u + 1] && !fail_mem && !too_many; e++) {
                int32_t v = (int32_t)(t->edges[e] >> 8);
                uint8_t c = (uint8_t)(t->edges[e] & 0xFFu);
                queue[tail++] = v;
                t->pops_begin[v] = (uint32_t)pops.n;
                if (t->token[v] >= 0) {
                    t->fail[v] = sroot;
                    fail_mem |= pops_push(&pops, v) != 0;
                    t->pops_n[v] = 1;
                    continue;
                }
                int32_t z = t->fail[u];
                /* Z = F(u), then F(z) for every z without edge c */
                for (uint32_t k = 0; k < t->pops_n[u] && !fail_mem; k++)
                    fail_mem |= pops_push(&pops, pops.v[t->pops_begin[u] + k]) != 0;
                int32_t w;
                while (z >= 0 && (w = tt_trie_child(t, z, c)) < 0) {
                    for (uint32_t k = 0; k < t->pops_n[z] && !fail_mem; k++)
                        fail_mem |= pops_push(&pops, pops.v[t->pops_begin[z] + k]) != 0;
                    z = t->fail[z];
                }
                if (z >= 0) {
                    t->fail[v] = tt_trie_child(t, z, c);
                    t->pops_n[v] = (uint32_t)(pops.n - t->pops_begin[v]);
                } else {
                    t->fail[v] = -1;
                    pops.n = t->pops_begin[v];      /* no segmentation: nothing to keep */
                    t->pops_n[v] = 0;
                }
                if (pops.n > (size_t)TT_MAX_POPS_PER_NODE * (size_t)N + 4096)
                    too_many = 1;
            }
        }
    }
    free(queue);
    t->pops = pops.v;
    t->n_pops = pops.n;
    if (too_many) {
        tt_trie_free(t);
        return pk_host->fail(LOOM_EINVAL, "%s: the vocab of %d tokens needs more than %d failure pops per trie "
                             "node (tokens nested as prefixes of each other by the thousand)", TT_CLASS,
                             (int)voc->n, TT_MAX_POPS_PER_NODE);
    }
    if (fail_mem) {
        tt_trie_free(t);
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory for the WordPiece trie of %d tokens", TT_CLASS,
                             (int)voc->n);
    }
    pk_host->log(LOOM_LOG_DEBUG, "WordPiece trie of %d tokens: %d nodes, %d dense rows, %zu failure pops",
                 (int)voc->n, (int)N, (int)rows, t->n_pops);
    return LOOM_OK;
}
