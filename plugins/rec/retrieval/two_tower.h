/* SPDX-License-Identifier: BSD-3-Clause */
/*
** two_tower.h - torchrec's two-tower retrieval model
** (examples/retrieval/modules/two_tower.py, TwoTower) as the object class
** rec.two_tower.
**
** Two tables of one embedding_dim D: the first is the query tower's, the
** second the candidate tower's (TwoTower's two EmbeddingBagConfigs). Each
** tower is a rec.embedding_bag_collection object over its table and a
** torchrec.modules.mlp.MLP: one core.linear object per layer
** (host->object_create), relu after each layer, after the last too unless
** activation_on_last is false (MLP's default, which TwoTower keeps). The
** weights file is TwoTower's state_dict: ebc.embedding_bags.<table>.weight,
** query_proj._mlp.<i>._linear.weight [out, in] and .bias [out], and the
** same under candidate_proj. The first layer takes the tower's pooled
** features concatenated (TwoTower: in_size D, one feature per table).
**
** Methods: rec.two_tower_query_embed and rec.two_tower_candidate_embed
** (a KJT of the tower's features -> [B, layer_sizes[-1]]); the op
** rec.two_tower_score is TwoTowerTrainTask's logits, (q * c).sum(dim=1).
*/
#ifndef LOOM_REC_TWO_TOWER_H
#define LOOM_REC_TWO_TOWER_H

#include <stdint.h>

#include "rec_pack.h"
#include "../collections/collections.h"

#define REC_TWO_TOWER_CLASS "rec.two_tower"
#define REC_TWO_TOWER_MAX_LAYERS 64

#define REC_TWO_TOWER_CLASS_ATTRS(A, op)                                                          \
    REC_EBC_CLASS_ATTRS(A, op)                                                                    \
    A(op, layer_sizes, INTS, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_POSITIVE,         \
      "each MLP layer's out_size (both towers)", )                                               \
    A(op, activation_on_last, BOOL, LOOM_DEFAULT_BOOL(1), 0,                                     \
      "relu after the last layer too (torchrec MLP's default, as TwoTower)", )
PK_ATTR_ENUM(rec_two_tower_class, REC_TWO_TOWER_CLASS_ATTRS);

enum { REC_TOWER_QUERY, REC_TOWER_CANDIDATE };

typedef struct rec_tower {
    loom_object *ebc;
    int64_t n_layers;
    loom_object *layers[REC_TWO_TOWER_MAX_LAYERS];
    int64_t in_size, out_size;
} rec_tower;

typedef struct rec_two_tower {
    rec_tower towers[2];
    int relu_last;
    const loom_op *ebc_op, *linear_op;
} rec_two_tower;

extern const loom_object_class rec_two_tower_class;

loom_status rec_two_tower_query_embed(loom_call *call);
loom_status rec_two_tower_candidate_embed(loom_call *call);
loom_status rec_two_tower_score(loom_call *call);

#define REC_RETRIEVAL_OPS(X)                                                                      \
    X(rec_two_tower_query_schema) X(rec_two_tower_candidate_schema) X(rec_two_tower_score_schema)
PK_OPS_DECLARE(rec_retrieval_ops, REC_RETRIEVAL_OPS);

#endif /* LOOM_REC_TWO_TOWER_H */
