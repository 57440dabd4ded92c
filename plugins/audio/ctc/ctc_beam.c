/* SPDX-License-Identifier: BSD-3-Clause */
/*
** ctc_beam.c - the trie, the LM state tree and the beam search
** (ctc_beam.h).
*/
#include "ctc_beam.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ----------------------------------------------------------------- trie */

typedef struct build_node {
    int32_t first, next;          /* first child, next sibling (-1: none) */
    int32_t token;
} build_node;

/* flashlight's TrieLogAdd: log(e^a + e^b) with its cutoff. */
static double trie_log_add(double a, double b)
{
    if (a < b) {
        double t = a;
        a = b;
        b = t;
    }
    double d = b - a;
    return d < -39.14 ? a : a + log1p(exp(d));
}

static int grow(void **p, int64_t *cap, int64_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    int64_t c = *cap * 2 > need ? *cap * 2 : need + 64;
    void *q = realloc(*p, (size_t)c * elem);
    if (q == NULL)
        return -1;
    *p = q;
    *cap = c;
    return 0;
}

/* The LM's score of one word from <s> (the trie's insertion score), all
** from one start state as torchaudio's _construct_trie does (*started:
** whether the custom LM's start state is made yet). */
static int start_score(const ctc_model *m, int32_t word, float *score, uint64_t *start, int *started)
{
    if (m->lm_kind == CTC_LM_ZERO) {
        *score = 0.0f;
    } else if (m->lm_kind == CTC_LM_ARPA) {
        ctc_lm_context a, b;
        ctc_arpa_lm_begin(m->arpa, &a);
        *score = ctc_arpa_lm_score(m->arpa, &a, m->usr_to_lm[word], &b);
    } else {
        uint64_t child;
        if (!*started && m->custom.start(m->custom.self, 0, start) != 0)
            return -2;
        *started = 1;
        if (m->custom.score(m->custom.self, *start, word, &child, score) != 0)
            return -2;
    }
    return 0;
}

int ctc_model_build_trie(ctc_model *m)
{
    const ctc_lexicon *lx = &m->lexicon;
    ctc_trie *t = &m->trie;
    build_node *bn = NULL;
    int64_t bcap = 0, ncap = 0, n = 1;
    int st = 0;
    float *word_score = malloc((size_t)ctc_dict_size(&lx->words) * sizeof(float) + 1);
    if (word_score == NULL || grow((void **)&bn, &bcap, 1, sizeof *bn) != 0
        || grow((void **)&t->nodes, &ncap, 1, sizeof *t->nodes) != 0) {
        st = -1;
        goto done;
    }
    uint64_t start = 0;
    int started = 0;
    for (int32_t w = 0; w < ctc_dict_size(&lx->words); w++) {
        /* the word's id in the word dictionary of the LM */
        int32_t id = m->words == &lx->words ? w : ctc_dict_find(m->words, ctc_dict_name(&lx->words, w),
                                                              strlen(ctc_dict_name(&lx->words, w)));
        if ((st = start_score(m, id, &word_score[w], &start, &started)) != 0)
            goto done;
    }
    bn[0] = (build_node){ -1, -1, -1 };
    memset(&t->nodes[0], 0, sizeof t->nodes[0]);
    for (int64_t s = 0; s < lx->n_spell; s++) {
        int32_t node = 0;
        for (int64_t k = lx->spell_off[s]; k < lx->spell_off[s + 1]; k++) {
            int32_t tok = lx->tokens[k], c = bn[node].first;
            while (c >= 0 && bn[c].token != tok)
                c = bn[c].next;
            if (c < 0) {
                if (grow((void **)&bn, &bcap, n + 1, sizeof *bn) != 0
                    || grow((void **)&t->nodes, &ncap, n + 1, sizeof *t->nodes) != 0) {
                    st = -1;
                    goto done;
                }
                c = (int32_t)n++;
                bn[c] = (build_node){ -1, bn[node].first, tok };
                bn[node].first = c;
                memset(&t->nodes[c], 0, sizeof t->nodes[c]);
            }
            node = c;
        }
        ctc_trie_node *tn = &t->nodes[node];
        const int32_t w = lx->spell_word[s];
        if (tn->n_labels < CTC_TRIE_MAX_LABEL) {
            tn->labels[tn->n_labels] = m->words == &lx->words ? w
                                       : ctc_dict_find(m->words, ctc_dict_name(&lx->words, w),
                                                       strlen(ctc_dict_name(&lx->words, w)));
            tn->scores[tn->n_labels++] = word_score[w];
        } else {
            t->dropped_labels++;
        }
    }
    t->n_nodes = (int32_t)n;
    t->child_token = malloc((size_t)n * sizeof(int32_t));
    t->child_node = malloc((size_t)n * sizeof(int32_t));
    if (t->child_token == NULL || t->child_node == NULL) {
        st = -1;
        goto done;
    }
    /* children contiguous per node (in token order, for a stable layout) */
    int32_t k = 0;
    for (int32_t v = 0; v < n; v++) {
        t->nodes[v].first_child = k;
        for (int32_t c = bn[v].first; c >= 0; c = bn[c].next) {
            int32_t j = k++;
            while (j > t->nodes[v].first_child && t->child_token[j - 1] > bn[c].token) {
                t->child_token[j] = t->child_token[j - 1];
                t->child_node[j] = t->child_node[j - 1];
                j--;
            }
            t->child_token[j] = bn[c].token;
            t->child_node[j] = c;
        }
        t->nodes[v].n_children = k - t->nodes[v].first_child;
    }
    /* smear(MAX), children before parents: a child's id is above its parent's */
    for (int32_t v = (int32_t)n - 1; v >= 0; v--) {
        ctc_trie_node *tn = &t->nodes[v];
        float mx = -INFINITY;
        for (int32_t i = 0; i < tn->n_labels; i++)
            mx = (float)trie_log_add(mx, tn->scores[i]);
        for (int32_t i = 0; i < tn->n_children; i++) {
            float c = t->nodes[t->child_node[tn->first_child + i]].max_score;
            if (c > mx)
                mx = c;
        }
        tn->max_score = mx;
    }
done:
    free(bn);
    free(word_score);
    return st;
}

void ctc_model_free(ctc_model *m)
{
    ctc_dict_free(&m->tokens);
    ctc_lexicon_free(&m->lexicon);
    ctc_dict_free(&m->lm_dict);
    free(m->trie.nodes);
    free(m->trie.child_token);
    free(m->trie.child_node);
    ctc_arpa_lm_free(m->arpa);
    free(m->usr_to_lm);
    memset(m, 0, sizeof *m);
}

/* ------------------------------------------------------- LM state tree */

typedef struct lm_node {
    uint64_t custom;              /* the custom LM's state */
    int32_t ident;                /* the state as the merge compares it: this node, or for a custom LM
                                  ** the first node with the same handle */
    int32_t parent, word;
    float score;                  /* score(parent, word) */
    ctc_lm_context ctx;           /* the ARPA model's context */
} lm_node;

typedef struct ctc_hyp {
    double score;
    int32_t lm_state, lex, parent, token, word;
    int32_t prev_blank;
    int32_t lm_ident;             /* lm_state's ident */
} ctc_hyp;

struct ctc_search {
    const ctc_model *m;
    lm_node *lm;
    int64_t n_lm, lm_cap;
    int32_t *lm_slots;            /* (parent, word) -> node + 1 */
    uint64_t lm_mask;
    int32_t *handle_slots;        /* custom LM: handle -> first node + 1 */
    uint64_t handle_mask;
    int64_t n_handles;
    ctc_hyp *pool;                /* every frame's hypotheses, frame after frame */
    int64_t n_pool, pool_cap;
    int64_t *frame_start;         /* frame f: pool[frame_start[f] .. frame_start[f + 1]) */
    int64_t n_frames, frames_cap;
    ctc_hyp *cand;
    int64_t n_cand, cand_cap;
    int32_t *order;               /* cand_store: the leader of each group of equal states */
    int64_t order_cap;
    int32_t *next;                /* the group's other members */
    int64_t next_cap;
    int32_t *slots;               /* the groups' hash table */
    int64_t slots_cap;
    double best;
    int32_t *topk;
    uint8_t *in_topk;
    int64_t topk_n;
    int64_t decoded;
    int failed;                   /* the custom LM failed */
};

static uint64_t lm_hash(int32_t parent, int32_t word)
{
    uint64_t x = ((uint64_t)(uint32_t)parent << 32) | (uint32_t)word;
    x ^= x >> 33;
    x *= UINT64_C(0xff51afd7ed558ccd);
    x ^= x >> 33;
    return x;
}

static int lm_rehash(ctc_search *s, uint64_t slots)
{
    int32_t *t = calloc(slots, sizeof *t);
    if (t == NULL)
        return -1;
    free(s->lm_slots);
    s->lm_slots = t;
    s->lm_mask = slots - 1;
    for (int64_t i = 0; i < s->n_lm; i++) {
        if (s->lm[i].parent < 0)
            continue;
        uint64_t h = lm_hash(s->lm[i].parent, s->lm[i].word) & s->lm_mask;
        while (t[h] != 0)
            h = (h + 1) & s->lm_mask;
        t[h] = (int32_t)i + 1;
    }
    return 0;
}

static uint64_t handle_hash(uint64_t x)
{
    x ^= x >> 33;
    x *= UINT64_C(0xc4ceb9fe1a85ec53);
    x ^= x >> 33;
    return x;
}

/* A custom LM's states are its handles: the node takes the ident of the
** first node with the same handle. */
static int handle_ident(ctc_search *s, int32_t id)
{
    if ((uint64_t)(s->n_handles + 1) * 2 > s->handle_mask + 1) {
        uint64_t slots = s->handle_mask == 0 ? 1024 : (s->handle_mask + 1) * 2;
        int32_t *t = calloc(slots, sizeof *t);
        if (t == NULL)
            return -1;
        for (uint64_t i = 0; s->handle_slots != NULL && i <= s->handle_mask; i++) {
            int32_t v = s->handle_slots[i];
            if (v == 0)
                continue;
            uint64_t h = handle_hash(s->lm[v - 1].custom) & (slots - 1);
            while (t[h] != 0)
                h = (h + 1) & (slots - 1);
            t[h] = v;
        }
        free(s->handle_slots);
        s->handle_slots = t;
        s->handle_mask = slots - 1;
    }
    const uint64_t key = s->lm[id].custom;
    for (uint64_t h = handle_hash(key) & s->handle_mask;; h = (h + 1) & s->handle_mask) {
        int32_t v = s->handle_slots[h];
        if (v == 0) {
            s->handle_slots[h] = id + 1;
            s->n_handles++;
            s->lm[id].ident = id;
            return 0;
        }
        if (s->lm[v - 1].custom == key) {
            s->lm[id].ident = v - 1;
            return 0;
        }
    }
}

static int32_t lm_new_node(ctc_search *s)
{
    if (grow((void **)&s->lm, &s->lm_cap, s->n_lm + 1, sizeof *s->lm) != 0)
        return -1;
    return (int32_t)s->n_lm++;
}

static int32_t lm_start(ctc_search *s)
{
    const ctc_model *m = s->m;
    int32_t id = lm_new_node(s);
    if (id < 0)
        return -1;
    lm_node *n = &s->lm[id];
    n->parent = -1;
    n->word = -1;
    n->score = 0.0f;
    n->ident = id;
    if (m->lm_kind == CTC_LM_ARPA) {
        ctc_arpa_lm_begin(m->arpa, &n->ctx);
    } else if (m->lm_kind == CTC_LM_CUSTOM) {
        if (m->custom.start(m->custom.self, 0, &n->custom) != 0) {
            s->failed = 1;
            return -1;
        }
        if (handle_ident(s, id) != 0)
            return -1;
    }
    return id;
}

/* The child of state for word (word -1: </s>), made on first use with its
** score; its id, or -1 (out of memory, or the custom LM failed). */
static int32_t lm_child(ctc_search *s, int32_t state, int32_t word)
{
    uint64_t h = lm_hash(state, word) & s->lm_mask;
    for (;; h = (h + 1) & s->lm_mask) {
        int32_t v = s->lm_slots[h];
        if (v == 0)
            break;
        if (s->lm[v - 1].parent == state && s->lm[v - 1].word == word)
            return v - 1;
    }
    const ctc_model *m = s->m;
    int32_t id = lm_new_node(s);
    if (id < 0)
        return -1;
    lm_node *p = &s->lm[state], *n = &s->lm[id];
    n->parent = state;
    n->word = word;
    if (m->lm_kind == CTC_LM_ZERO) {
        n->score = 0.0f;
    } else if (m->lm_kind == CTC_LM_ARPA) {
        int32_t w = word < 0 ? ctc_arpa_lm_eos(m->arpa) : m->usr_to_lm[word];
        n->score = ctc_arpa_lm_score(m->arpa, &p->ctx, w, &n->ctx);
    } else {
        int r = word < 0 ? m->custom.finish(m->custom.self, p->custom, &n->custom, &n->score)
                         : m->custom.score(m->custom.self, p->custom, word, &n->custom, &n->score);
        if (r != 0) {
            s->failed = 1;
            s->n_lm--;
            return -1;
        }
    }
    n->ident = id;
    if (m->lm_kind == CTC_LM_CUSTOM && handle_ident(s, id) != 0)
        return -1;
    s->lm_slots[h] = id + 1;
    if ((uint64_t)s->n_lm * 2 > s->lm_mask + 1 && lm_rehash(s, (s->lm_mask + 1) * 2) != 0)
        return -1;
    return id;
}

/* flashlight's finish: ZeroLM keeps the state, the others take a child. */
static int32_t lm_finish(ctc_search *s, int32_t state, float *score)
{
    if (s->m->lm_kind == CTC_LM_ZERO) {
        *score = 0.0f;
        return state;
    }
    int32_t c = lm_child(s, state, -1);
    if (c >= 0)
        *score = s->lm[c].score;
    return c;
}

/* ---------------------------------------------------------------- search */

ctc_search *ctc_search_new(const ctc_model *m)
{
    ctc_search *s = calloc(1, sizeof *s);
    if (s == NULL)
        return NULL;
    s->m = m;
    return s;
}

void ctc_search_free(ctc_search *s)
{
    if (s == NULL)
        return;
    free(s->lm);
    free(s->lm_slots);
    free(s->handle_slots);
    free(s->pool);
    free(s->frame_start);
    free(s->cand);
    free(s->order);
    free(s->next);
    free(s->slots);
    free(s->topk);
    free(s->in_topk);
    free(s);
}

int ctc_search_begin(ctc_search *s)
{
    s->n_lm = 0;
    s->n_pool = 0;
    s->n_frames = 0;
    s->decoded = 0;
    s->failed = 0;
    s->n_handles = 0;
    if (s->handle_slots != NULL)
        memset(s->handle_slots, 0, (s->handle_mask + 1) * sizeof *s->handle_slots);
    if (lm_rehash(s, 1024) != 0 || grow((void **)&s->frame_start, &s->frames_cap, 2, sizeof *s->frame_start) != 0
        || grow((void **)&s->pool, &s->pool_cap, 1, sizeof *s->pool) != 0)
        return -1;
    int32_t root = lm_start(s);
    if (root < 0)
        return s->failed ? -2 : -1;
    s->pool[0] = (ctc_hyp){ .score = 0.0, .lm_state = root, .lex = 0, .parent = -1, .token = s->m->sil,
                            .word = -1, .prev_blank = 0, .lm_ident = s->lm[root].ident };
    s->n_pool = 1;
    s->frame_start[0] = 0;
    s->frame_start[1] = 1;
    s->n_frames = 1;
    return 0;
}

int64_t ctc_search_frames(const ctc_search *s) { return s->decoded; }

/* flashlight's candidatesAdd: the running best, and a candidate only when
** it is within the threshold of it. */
static int cand_add(ctc_search *s, double score, int32_t lm_state, int32_t lex, int32_t parent, int32_t token,
                    int32_t word, int32_t prev_blank)
{
    if (score >= s->best)
        s->best = score;
    if (!(score >= s->best - s->m->opt.beam_threshold))
        return 0;
    if (grow((void **)&s->cand, &s->cand_cap, s->n_cand + 1, sizeof *s->cand) != 0)
        return -1;
    s->cand[s->n_cand++] = (ctc_hyp){ score, lm_state, lex, parent, token, word, prev_blank, s->lm[lm_state].ident };
    return 0;
}

/* compareNoScoreStates: LM state, trie node, token, prevBlank. */
static int same_state(const ctc_hyp *a, const ctc_hyp *b)
{
    return a->lm_ident == b->lm_ident && a->lex == b->lex && a->token == b->token && a->prev_blank == b->prev_blank;
}

static uint64_t state_hash(const ctc_hyp *h)
{
    uint64_t x = ((uint64_t)(uint32_t)h->lm_ident << 32) ^ ((uint64_t)(uint32_t)h->lex << 7)
                 ^ ((uint64_t)(uint32_t)h->token << 1) ^ (uint64_t)(h->prev_blank != 0);
    x ^= x >> 31;
    x *= UINT64_C(0x9e3779b97f4a7c15);
    x ^= x >> 29;
    return x;
}

/* Scores of a group of equal states, best first (insertion sort: groups are small). */
static void sort_desc(double *v, int64_t n)
{
    for (int64_t i = 1; i < n; i++) {
        double x = v[i];
        int64_t j = i;
        while (j > 0 && v[j - 1] < x) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = x;
    }
}

/* Move the k best of idx[0..n) (by score) to the front (quickselect). */
static void select_best(const ctc_hyp *c, int32_t *idx, int64_t n, int64_t k)
{
    int64_t lo = 0, hi = n - 1;
    while (lo < hi) {
        const double pivot = c[idx[lo + (hi - lo) / 2]].score;
        int64_t i = lo, j = hi;
        while (i <= j) {
            while (c[idx[i]].score > pivot)
                i++;
            while (c[idx[j]].score < pivot)
                j--;
            if (i <= j) {
                int32_t t = idx[i];
                idx[i] = idx[j];
                idx[j] = t;
                i++;
                j--;
            }
        }
        if (k - 1 <= j)
            hi = j;
        else if (k - 1 >= i)
            lo = i;
        else
            break;
    }
}

/* flashlight's candidatesStore: keep those within the threshold of the
** best, merge equal states (LM state, trie node, token, prevBlank) into the
** best of them, with the max or, under log_add, flashlight's running
** log-add over the group best first; keep the beam_size best (the set
** flashlight's nth_element keeps), best first, as a new frame of the pool.
** Groups are found by hashing instead of flashlight's sort: the same groups
** and the same sums. */
static int cand_store(ctc_search *s)
{
    const ctc_options *o = &s->m->opt;
    const double threshold = s->best - o->beam_threshold;
    const int64_t nc = s->n_cand;
    uint64_t slots = 16;
    while (slots < (uint64_t)nc * 2)
        slots <<= 1;
    if (grow((void **)&s->order, &s->order_cap, nc + 1, sizeof *s->order) != 0
        || grow((void **)&s->next, &s->next_cap, nc + 1, sizeof *s->next) != 0
        || grow((void **)&s->slots, &s->slots_cap, (int64_t)slots, sizeof *s->slots) != 0)
        return -1;
    memset(s->slots, 0, slots * sizeof *s->slots);
    const uint64_t mask = slots - 1;
    int64_t groups = 0, multi = 0;
    for (int64_t i = 0; i < nc; i++) {
        ctc_hyp *c = &s->cand[i];
        if (!(c->score >= threshold))
            continue;
        uint64_t h = state_hash(c) & mask;
        for (;; h = (h + 1) & mask) {
            int32_t g = s->slots[h] - 1;
            if (g < 0) {
                s->slots[h] = (int32_t)groups + 1;
                s->order[groups++] = (int32_t)i;
                s->next[i] = -1;
                break;
            }
            ctc_hyp *r = &s->cand[s->order[g]];
            if (!same_state(r, c))
                continue;
            /* the group's best leads it; the others follow in a list */
            if (c->score > r->score) {
                s->next[i] = s->order[g];
                s->order[g] = (int32_t)i;
            } else {
                s->next[i] = s->next[s->order[g]];
                s->next[s->order[g]] = (int32_t)i;
            }
            multi = 1;
            break;
        }
    }
    if (multi) {
        for (int64_t g = 0; g < groups; g++) {
            ctc_hyp *r = &s->cand[s->order[g]];
            if (s->next[s->order[g]] < 0)
                continue;
            if (!o->log_add)
                continue;                  /* the leader holds the max */
            double v[64], *vals = v;
            int64_t n = 0, cap = 64;
            for (int32_t m = s->order[g]; m >= 0; m = s->next[m]) {
                if (n == cap) {
                    double *w = malloc((size_t)cap * 2 * sizeof *w);
                    if (w == NULL) {
                        if (vals != v)
                            free(vals);
                        return -1;
                    }
                    memcpy(w, vals, (size_t)n * sizeof *w);
                    if (vals != v)
                        free(vals);
                    vals = w;
                    cap *= 2;
                }
                vals[n++] = s->cand[m].score;
            }
            sort_desc(vals, n);
            double acc = vals[0];
            for (int64_t k = 1; k < n; k++) {
                const double mx = acc > vals[k] ? acc : vals[k], mn = acc < vals[k] ? acc : vals[k];
                acc = mx + log1p(exp(mn - mx));
            }
            r->score = acc;
            if (vals != v)
                free(vals);
        }
    }
    int32_t *ord = s->order;
    const int64_t keep = groups < o->beam_size ? groups : o->beam_size;
    if (groups > keep)
        select_best(s->cand, ord, groups, keep);
    /* best first (insertion sort of at most beam_size) */
    for (int64_t i = 1; i < keep; i++) {
        int32_t x = ord[i];
        int64_t j = i;
        while (j > 0 && s->cand[ord[j - 1]].score < s->cand[x].score) {
            ord[j] = ord[j - 1];
            j--;
        }
        ord[j] = x;
    }
    if (grow((void **)&s->pool, &s->pool_cap, s->n_pool + keep, sizeof *s->pool) != 0
        || grow((void **)&s->frame_start, &s->frames_cap, s->n_frames + 2, sizeof *s->frame_start) != 0)
        return -1;
    for (int64_t i = 0; i < keep; i++)
        s->pool[s->n_pool++] = s->cand[ord[i]];
    s->frame_start[++s->n_frames] = s->n_pool;
    return 0;
}

/* The frame's top beam_size_token tokens (in_topk marks them). */
static int pick_tokens(ctc_search *s, const float *e, int64_t N)
{
    const int64_t K = s->m->opt.beam_size_token < N ? s->m->opt.beam_size_token : N;
    if (s->topk_n < N) {
        free(s->topk);
        free(s->in_topk);
        s->topk = malloc((size_t)N * sizeof *s->topk);
        s->in_topk = malloc((size_t)N);
        if (s->topk == NULL || s->in_topk == NULL) {
            s->topk_n = 0;
            return -1;
        }
        s->topk_n = N;
    }
    memset(s->in_topk, 0, (size_t)N);
    if (K == N) {
        memset(s->in_topk, 1, (size_t)N);
        return 0;
    }
    /* the K largest by a partial selection sort of indices (K is small) */
    for (int64_t i = 0; i < N; i++)
        s->topk[i] = (int32_t)i;
    for (int64_t r = 0; r < K; r++) {
        int64_t b = r;
        for (int64_t i = r + 1; i < N; i++)
            if (e[s->topk[i]] > e[s->topk[b]])
                b = i;
        int32_t t = s->topk[r];
        s->topk[r] = s->topk[b];
        s->topk[b] = t;
        s->in_topk[s->topk[r]] = 1;
    }
    return 0;
}

static int step_lexicon(ctc_search *s, const float *e, int64_t N, int64_t prev_begin, int64_t prev_end)
{
    const ctc_model *m = s->m;
    const ctc_options *o = &m->opt;
    const ctc_trie *t = &m->trie;
    for (int64_t h = prev_begin; h < prev_end; h++) {
        const ctc_hyp prev = s->pool[h];
        const ctc_trie_node *pl = &t->nodes[prev.lex];
        const float lex_max = prev.lex == 0 ? 0.0f : pl->max_score;
        /* (1) the children of the node among the frame's tokens */
        for (int32_t c = 0; c < pl->n_children; c++) {
            const int32_t n = t->child_token[pl->first_child + c];
            if (n >= N || !s->in_topk[n])
                continue;
            const int32_t lex = t->child_node[pl->first_child + c];
            const ctc_trie_node *ln = &t->nodes[lex];
            double score = prev.score + (double)e[n];
            if (n == m->sil)
                score += o->sil_score;
            if (prev.prev_blank || n != prev.token) {
                if (ln->n_children > 0) {
                    const double lm_score = (float)(ln->max_score - lex_max);
                    if (cand_add(s, score + o->lm_weight * lm_score, prev.lm_state, lex, (int32_t)h, n, -1, 0) != 0)
                        return -1;
                }
            }
            for (int32_t k = 0; k < ln->n_labels; k++) {
                if (prev.lex == 0 && prev.token == n)
                    continue;
                int32_t child = lm_child(s, prev.lm_state, ln->labels[k]);
                if (child < 0)
                    return s->failed ? -2 : -1;
                const double lm_score = (float)(s->lm[child].score - lex_max);
                if (cand_add(s, score + o->lm_weight * lm_score + o->word_score, child, 0, (int32_t)h, n,
                             ln->labels[k], 0) != 0)
                    return -1;
            }
            if (ln->n_labels == 0 && o->unk_score > -INFINITY) {
                int32_t child = lm_child(s, prev.lm_state, m->unk);
                if (child < 0)
                    return s->failed ? -2 : -1;
                const double lm_score = (float)(s->lm[child].score - lex_max);
                if (cand_add(s, score + o->lm_weight * lm_score + o->unk_score, child, 0, (int32_t)h, n, m->unk, 0)
                    != 0)
                    return -1;
            }
        }
        /* (2) the same node: repeat the token, or silence at the root */
        if (!prev.prev_blank || prev.lex == 0) {
            const int32_t n = prev.lex == 0 ? m->sil : prev.token;
            double score = prev.score + (double)e[n];
            if (n == m->sil)
                score += o->sil_score;
            if (cand_add(s, score, prev.lm_state, prev.lex, (int32_t)h, n, -1, 0) != 0)
                return -1;
        }
        /* (3) blank, always */
        if (cand_add(s, prev.score + (double)e[m->blank], prev.lm_state, prev.lex, (int32_t)h, m->blank, -1, 1) != 0)
            return -1;
    }
    return 0;
}

static int step_lexicon_free(ctc_search *s, const float *e, int64_t N, int64_t prev_begin, int64_t prev_end)
{
    const ctc_model *m = s->m;
    const ctc_options *o = &m->opt;
    for (int64_t h = prev_begin; h < prev_end; h++) {
        const ctc_hyp prev = s->pool[h];
        for (int32_t n = 0; n < N; n++) {
            if (!s->in_topk[n])
                continue;
            double score = prev.score + (double)e[n];
            if (n == m->sil)
                score += o->sil_score;
            int r;
            if (n != m->blank && (n != prev.token || prev.prev_blank)) {
                int32_t child = lm_child(s, prev.lm_state, n);
                if (child < 0)
                    return s->failed ? -2 : -1;
                const float lm_score = s->lm[child].score;
                r = cand_add(s, score + o->lm_weight * lm_score, child, 0, (int32_t)h, n, -1, 0);
            } else if (n == m->blank) {
                r = cand_add(s, score, prev.lm_state, 0, (int32_t)h, n, -1, 1);
            } else {
                r = cand_add(s, score, prev.lm_state, 0, (int32_t)h, n, -1, 0);
            }
            if (r != 0)
                return -1;
        }
    }
    return 0;
}

int ctc_search_step(ctc_search *s, const float *emissions, int64_t T, int64_t N)
{
    for (int64_t t = 0; t < T; t++) {
        const float *e = emissions + t * N;
        if (pick_tokens(s, e, N) != 0)
            return -1;
        s->best = -INFINITY;
        s->n_cand = 0;
        const int64_t b = s->frame_start[s->n_frames - 1], end = s->frame_start[s->n_frames];
        int r = s->m->lexicon_mode ? step_lexicon(s, e, N, b, end) : step_lexicon_free(s, e, N, b, end);
        if (r != 0 || (r = cand_store(s)) != 0)
            return r;
        s->decoded++;
    }
    return 0;
}

int ctc_search_end(ctc_search *s)
{
    const ctc_model *m = s->m;
    const int64_t b = s->frame_start[s->n_frames - 1], end = s->frame_start[s->n_frames];
    int nice = 0;
    if (m->lexicon_mode)
        for (int64_t h = b; h < end; h++)
            nice |= s->pool[h].lex == 0;
    s->best = -INFINITY;
    s->n_cand = 0;
    for (int64_t h = b; h < end; h++) {
        const ctc_hyp prev = s->pool[h];
        if (m->lexicon_mode && nice && prev.lex != 0)
            continue;
        float lm_score;
        int32_t st = lm_finish(s, prev.lm_state, &lm_score);
        if (st < 0)
            return s->failed ? -2 : -1;
        if (cand_add(s, prev.score + m->opt.lm_weight * lm_score, st, prev.lex, (int32_t)h, m->sil, -1, 0) != 0)
            return -1;
    }
    return cand_store(s);
}

/* ------------------------------------------------------------- results */

void ctc_results_init(ctc_results *r)
{
    memset(r, 0, sizeof *r);
}

void ctc_results_free(ctc_results *r)
{
    free(r->score);
    free(r->tok_off);
    free(r->tokens);
    free(r->timesteps);
    free(r->word_off);
    free(r->words);
    memset(r, 0, sizeof *r);
}

/* Append the path that ends at pool[h], frames 0..last, reduced as
** torchaudio's _to_hypo does. */
static int add_path(const ctc_search *s, int64_t h, int64_t last, ctc_results *r)
{
    const ctc_model *m = s->m;
    const int64_t len = last + 1;
    int32_t *tok = malloc((size_t)len * 2 * sizeof(int32_t));
    if (tok == NULL)
        return -1;
    int32_t *word = tok + len;
    int64_t i = last;
    for (int64_t v = h; v >= 0 && i >= 0; v = s->pool[v].parent, i--) {
        tok[i] = s->pool[v].token;
        word[i] = s->m->lexicon_mode ? s->pool[v].word : -1;
    }
    for (; i >= 0; i--)
        tok[i] = -1, word[i] = -1;
    int64_t cap = r->hyp_cap, cap2 = r->hyp_cap, cap3 = r->hyp_cap;
    if (grow((void **)&r->score, &cap, r->n_hyp + 1, sizeof *r->score) != 0
        || grow((void **)&r->tok_off, &cap2, r->n_hyp + 2, sizeof *r->tok_off) != 0
        || grow((void **)&r->word_off, &cap3, r->n_hyp + 2, sizeof *r->word_off) != 0) {
        free(tok);
        return -1;
    }
    r->hyp_cap = cap < cap2 ? (cap < cap3 ? cap : cap3) : (cap2 < cap3 ? cap2 : cap3);
    if (r->n_hyp == 0)
        r->tok_off[0] = r->word_off[0] = 0;
    r->score[r->n_hyp] = s->pool[h].score;
    int64_t tcap = r->tok_cap, tcap2 = r->tok_cap;
    if (grow((void **)&r->tokens, &tcap, r->n_tok + len, sizeof *r->tokens) != 0
        || grow((void **)&r->timesteps, &tcap2, r->n_tok + len, sizeof *r->timesteps) != 0) {
        free(tok);
        return -1;
    }
    r->tok_cap = tcap < tcap2 ? tcap : tcap2;
    for (int64_t k = 0; k < len; k++) {
        /* groupby then drop blanks, and the start of each non-blank run */
        if (tok[k] == m->blank || (k > 0 && tok[k] == tok[k - 1]))
            continue;
        r->tokens[r->n_tok] = tok[k];
        r->timesteps[r->n_tok] = k;
        r->n_tok++;
    }
    r->tok_off[r->n_hyp + 1] = r->n_tok;
    for (int64_t k = 0; k < len; k++) {
        if (word[k] < 0 || m->words == NULL)
            continue;
        const char *w = ctc_dict_name(m->words, word[k]);
        size_t wl = w != NULL ? strlen(w) : 0;
        int64_t wcap = r->words_cap;
        if (grow((void **)&r->words, &wcap, r->n_words_bytes + (int64_t)wl + 1, 1) != 0) {
            free(tok);
            return -1;
        }
        r->words_cap = wcap;
        if (r->n_words_bytes > r->word_off[r->n_hyp])
            r->words[r->n_words_bytes++] = ' ';
        memcpy(r->words + r->n_words_bytes, w, wl);
        r->n_words_bytes += (int64_t)wl;
    }
    r->word_off[r->n_hyp + 1] = r->n_words_bytes;
    r->n_hyp++;
    free(tok);
    return 0;
}

int ctc_search_final(const ctc_search *s, ctc_results *out)
{
    const int64_t b = s->frame_start[s->n_frames - 1], end = s->frame_start[s->n_frames];
    const int64_t n = end - b < s->m->opt.nbest ? end - b : s->m->opt.nbest;
    for (int64_t i = 0; i < n; i++)
        if (add_path(s, b + i, s->n_frames - 1, out) != 0)
            return -1;
    return 0;
}

int ctc_search_best(const ctc_search *s, ctc_results *out)
{
    const int64_t b = s->frame_start[s->n_frames - 1], end = s->frame_start[s->n_frames];
    if (end == b || s->n_frames < 2)
        return 0;
    int64_t best = b;
    for (int64_t h = b + 1; h < end; h++)
        if (s->pool[h].score > s->pool[best].score)
            best = h;
    /* findBestAncestor(lookBack 0): back to the first complete node */
    int64_t node = best, back = 0;
    while (node >= 0 && back < 100) {
        const int64_t p = s->pool[node].parent;
        if (!s->m->lexicon_mode || p < 0 || s->pool[p].word >= 0)
            break;
        node = p;
        back++;
    }
    if (node < 0)
        return 0;
    return add_path(s, node, s->n_frames - 1 - back, out);
}
