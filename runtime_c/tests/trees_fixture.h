/* Tree tables the unit tests set up, float32 (fm_trees) or q15 (fm_trees_q15): the two structs share
 * their field names but for the thresholds, leaves and base scores, which the caller names (THR, LEAF,
 * BASE: threshold / threshold_q, leaf / leaf_q, base_score / base_q). TREES_TABLES zeroes the struct
 * first: no child table (implicit layout), depth 0, decision threshold 0; the caller sets what differs. */
#ifndef TREES_FIXTURE_H
#define TREES_FIXTURE_H

#include <string.h>

#include "fm_trees.h"

#define TREES_TABLES(t, nf_, no_, nt_, nn_, end_, feat_, out_, THR, thr_, LEAF, leaf_, BASE, base_, cost_) \
    do {                                                                                                 \
        memset(&(t), 0, sizeof(t));                                                                      \
        (t).n_features = (nf_);                                                                          \
        (t).n_outputs = (no_);                                                                           \
        (t).n_trees = (nt_);                                                                             \
        (t).n_nodes = (nn_);                                                                             \
        (t).node_end = (end_);                                                                           \
        (t).feature = (feat_);                                                                           \
        (t).THR = (thr_);                                                                                \
        (t).LEAF = (leaf_);                                                                              \
        (t).tree_output = (out_);                                                                        \
        (t).BASE = (base_);                                                                              \
        (t).costs = (cost_);                                                                             \
    } while (0)

#endif /* TREES_FIXTURE_H */
