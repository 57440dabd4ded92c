/* SPDX-License-Identifier: BSD-3-Clause */
/*
** rec_two_tower.c - `loom demo two_tower`: torchrec's two-tower retrieval
** on generated users and items. rec.two_tower (random weights) embeds every
** item with its candidate tower and a few users with its query tower; the
** item embeddings go into a FAISS IndexIVFPQ (rec.knn_index); each user
** gets its top 10 from the index, beside the exact top 10
** (rec.knn_retrieve); then recall@100 of the index against the exact
** search over a batch of users, and the index's queries per second.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "demo.h"

DEMO_DEFINE("two_tower", 110,
            "rec.two_tower_query_embed,rec.two_tower_candidate_embed,rec.knn_index_search,rec.knn_retrieve",
            "two-tower retrieval: tower embeddings into a FAISS IVFPQ index, top-k, recall against exact search");

#define USERS 1000
#define ITEMS 10000
#define D 32            /* the tables' embedding_dim */
#define H 64            /* the towers' hidden layer */
#define E 32            /* the towers' output: the retrieval space */
#define SHOWN 3         /* users whose top 10 are printed */
#define BATCH 200       /* users of the recall and speed figures */
#define K 100

/* TwoTower's state_dict with weights from demo_random, scaled by fan-in. */
static int write_model(const char *path)
{
    static const char *const names[] = {
        "ebc.embedding_bags.t_user.weight", "ebc.embedding_bags.t_item.weight",
        "query_proj._mlp.0._linear.weight", "query_proj._mlp.0._linear.bias",
        "query_proj._mlp.1._linear.weight", "query_proj._mlp.1._linear.bias",
        "candidate_proj._mlp.0._linear.weight", "candidate_proj._mlp.0._linear.bias",
        "candidate_proj._mlp.1._linear.weight", "candidate_proj._mlp.1._linear.bias",
    };
    const int64_t shapes[10][2] = { { USERS, D }, { ITEMS, D }, { H, D }, { H, 0 }, { E, H }, { E, 0 },
                                    { H, D }, { H, 0 }, { E, H }, { E, 0 } };
    const float scale[10] = { 1.0f, 1.0f, 0.35f, 0.1f, 0.25f, 0.1f, 0.35f, 0.1f, 0.25f, 0.1f };
    loom_tensor *t[10] = { NULL };
    int rc = DEMO_OK;
    for (int i = 0; i < 10 && rc == DEMO_OK; i++) {
        const int ndim = shapes[i][1] ? 2 : 1;
        if ((t[i] = demo_f32(ndim, shapes[i], NULL)) == NULL) {
            rc = DEMO_FAIL;
            break;
        }
        float *w = loom_data(t[i]);
        for (int64_t j = 0; j < loom_numel(t[i]); j++)
            w[j] = scale[i] * demo_random();
    }
    if (rc == DEMO_OK && loom_safetensors_write(path, names, (const loom_tensor *const *)t, 10) != LOOM_OK)
        rc = demo_fail();
    for (int i = 0; i < 10; i++)
        loom_tensor_free(t[i]);
    return rc;
}

/* One tower over ids first..first+n-1 (one id per sample): [n, E]. */
static loom_tensor *embed(loom_object *model, const char *op, const char *key, int64_t first, int64_t n)
{
    loom_tensor *values = demo_tensor(LOOM_DTYPE_I64, 1, &n), *lengths = demo_tensor(LOOM_DTYPE_I64, 1, &n);
    loom_tensor *out = NULL;
    loom_attrs *a = NULL;
    if (values && lengths) {
        for (int64_t i = 0; i < n; i++) {
            ((int64_t *)loom_data(values))[i] = first + i;
            ((int64_t *)loom_data(lengths))[i] = 1;
        }
        loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
        opt.object = model;
        const loom_tensor *in[2] = { values, lengths };
        if (loom_attrs_new(&a) == LOOM_OK && loom_attrs_set_string(a, "keys", key) == LOOM_OK &&
            loom_run(op, in, 2, a, &out, 1, &opt) == LOOM_OK)
            demo_record(key);
        else
            demo_fail();
    }
    loom_attrs_free(a);
    loom_tensor_free(values);
    loom_tensor_free(lengths);
    return out;
}

static loom_object *make_model(const char *path)
{
    loom_attrs *a = NULL;
    loom_object *m = NULL;
    const char *cls = "rec.two_tower";
    char ne[32], ed[32], ls[32];
    snprintf(ne, sizeof ne, "%d,%d", USERS, ITEMS);
    snprintf(ed, sizeof ed, "%d,%d", D, D);
    snprintf(ls, sizeof ls, "%d,%d", H, E);
    if (loom_attrs_new(&a) != LOOM_OK || loom_attrs_parse(a, cls, "tables", "t_user,t_item") != LOOM_OK ||
        loom_attrs_parse(a, cls, "num_embeddings", ne) != LOOM_OK ||
        loom_attrs_parse(a, cls, "embedding_dim", ed) != LOOM_OK ||
        loom_attrs_parse(a, cls, "feature_names", "user_id,item_id") != LOOM_OK ||
        loom_attrs_parse(a, cls, "layer_sizes", ls) != LOOM_OK ||
        loom_attrs_parse(a, cls, "activation_on_last", "false") != LOOM_OK ||
        loom_object_create(&m, cls, a, path) != LOOM_OK) {
        demo_fail();
        m = NULL;
    }
    loom_attrs_free(a);
    return m;
}

/* top-k of queries: from the index (object) or exact over items */
static int top_k(loom_object *index, const loom_tensor *q, const loom_tensor *items, int64_t k, loom_tensor **ids,
                 loom_tensor **scores)
{
    loom_attrs *a = NULL;
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = index;
    loom_tensor *out[2] = { NULL, NULL };
    const loom_tensor *in[2] = { q, items };
    int rc = loom_attrs_new(&a) == LOOM_OK && loom_attrs_set_int(a, "k", k) == LOOM_OK &&
                     loom_run(index ? "rec.knn_index_search" : "rec.knn_retrieve", in, index ? 1 : 2, a, out, 2,
                              index ? &opt : NULL) == LOOM_OK
                 ? DEMO_OK
                 : demo_fail();
    loom_attrs_free(a);
    *ids = out[0];
    *scores = out[1];
    return rc;
}

static double recall(const loom_tensor *got, const loom_tensor *exact)
{
    const int64_t Q = got->shape[0], k = got->shape[1];
    const int64_t *g = loom_data(got), *e = loom_data(exact);
    int64_t hits = 0;
    for (int64_t i = 0; i < Q; i++)
        for (int64_t a = 0; a < k; a++)
            for (int64_t b = 0; b < k; b++)
                hits += g[i * k + a] >= 0 && g[i * k + a] == e[i * k + b];
    return (double)hits / (double)(Q * k);
}

int demo_run(void)
{
    char dir[] = "/tmp/loom-demo-XXXXXX", path[64];
    loom_object *model = NULL, *index = NULL;
    loom_tensor *items = NULL, *users = NULL, *ids = NULL, *scores = NULL, *eids = NULL, *escores = NULL;
    int rc = mkdtemp(dir) != NULL ? DEMO_OK : DEMO_FAIL;
    snprintf(path, sizeof path, "%s/two_tower.safetensors", dir);
    if (rc == DEMO_OK)
        rc = write_model(path);
    if (rc == DEMO_OK && (model = make_model(path)) == NULL)
        rc = DEMO_FAIL;
    if (rc == DEMO_OK) {
        printf("  rec.two_tower (random weights): %d users, %d items, tables D = %d, towers %d -> %d\n", USERS, ITEMS,
               D, H, E);
        if ((items = embed(model, "rec.two_tower_candidate_embed", "item_id", 0, ITEMS)) == NULL ||
            (users = embed(model, "rec.two_tower_query_embed", "user_id", 0, BATCH)) == NULL)
            rc = DEMO_FAIL;
    }
    if (rc == DEMO_OK) {   /* the item embeddings into an IVFPQ index, trained on them */
        loom_attrs *a = NULL;
        loom_named_tensor named = { "embeddings", items };
        loom_object_options opt = LOOM_OBJECT_OPTIONS_INIT;
        opt.n_tensors = 1;
        opt.tensors = &named;
        const double t0 = demo_now();
        if (loom_attrs_new(&a) != LOOM_OK || loom_attrs_set_string(a, "index_type", "ivfpq") != LOOM_OK ||
            loom_attrs_set_int(a, "nlist", 50) != LOOM_OK || loom_attrs_set_int(a, "m", 16) != LOOM_OK ||
            loom_attrs_set_int(a, "nbits", 6) != LOOM_OK || loom_attrs_set_int(a, "nprobe", 10) != LOOM_OK ||
            loom_object_create_ex(&index, "rec.knn_index", a, &opt) != LOOM_OK)
            rc = demo_fail();
        else
            printf("  rec.knn_index: IndexIVFPQ over the %d item embeddings (nlist 50, m 16, nbits 6, nprobe 10), "
                   "trained and filled in %.2f s\n", ITEMS, demo_now() - t0);
        loom_attrs_free(a);
    }
    /* the first users' top 10: the index beside the exact search */
    if (rc == DEMO_OK && (rc = top_k(index, users, NULL, 10, &ids, &scores)) == DEMO_OK)
        demo_record("ivfpq top-10");
    if (rc == DEMO_OK && (rc = top_k(NULL, users, items, 10, &eids, &escores)) == DEMO_OK)
        demo_record("exact top-10");
    for (int u = 0; rc == DEMO_OK && u < SHOWN; u++) {
        const int64_t *i = loom_data(ids), *e = loom_data(eids);
        const float *s = loom_data(scores);
        printf("  user %d  ivfpq:", u);
        for (int c = 0; c < 10; c++)
            printf(" %lld", (long long)i[u * 10 + c]);
        printf("  (best score %.3f)\n          exact:", s[u * 10]);
        for (int c = 0; c < 10; c++)
            printf(" %lld", (long long)e[u * 10 + c]);
        printf("\n");
    }
    loom_tensor_free(ids);
    loom_tensor_free(scores);
    loom_tensor_free(eids);
    loom_tensor_free(escores);
    ids = scores = eids = escores = NULL;
    /* recall@100 and speed over the batch */
    if (rc == DEMO_OK) {
        const double t0 = demo_now();
        int runs = 0;
        while (rc == DEMO_OK && (runs < 3 || demo_now() - t0 < 0.5)) {
            loom_tensor_free(ids);
            loom_tensor_free(scores);
            rc = top_k(index, users, NULL, K, &ids, &scores);
            runs++;
        }
        const double per_call = (demo_now() - t0) / runs;
        if (rc == DEMO_OK)
            demo_record("ivfpq top-100");
        if (rc == DEMO_OK && (rc = top_k(NULL, users, items, K, &eids, &escores)) == DEMO_OK) {
            demo_record("exact top-100");
            printf("  %d users, top %d: recall@%d of the index against exact search %.3f, %.0f queries/s\n", BATCH, K,
                   K, recall(ids, eids), BATCH / per_call);
        }
    }
    loom_tensor_free(ids);
    loom_tensor_free(scores);
    loom_tensor_free(eids);
    loom_tensor_free(escores);
    loom_tensor_free(users);
    loom_object_free(index);
    loom_tensor_free(items);
    loom_object_free(model);
    unlink(path);
    rmdir(dir);
    return rc;
}
