"""Command-line options of the tree family only (miser's --leaves, cascade's --stages ...). The options
other kinds share (tree shape, lambda sweep) and every default are in compiler.options; their names are
re-exported here for the trainers that import them from this module."""

from __future__ import annotations

import click

from compiler.options import (
    CASCADE_DEFAULTS,
    DEFAULT_GRID,
    LOSSES,
    MISER_DEFAULTS,
    SWEEP_OPTIONS,
    TREE_FRACTIONS,
    TREE_OPTIONS,
    floats_text,
    folds_option,
)
from pyruntime.cli_errors import NumberRange

__all__ = ["CASCADE_OPTIONS", "CLASS_TREES_OPTIONS", "DEFAULT_GRID", "LOSSES", "MISER_OPTIONS", "SWEEP_OPTIONS",
           "TREE_OPTIONS"]

_C = CASCADE_DEFAULTS
CLASS_TREES_OPTIONS = [
    click.Option(["--class-trees"], type=click.Choice(["separate", "shared"]), default=None,
                 help="K > 2 classes: 'separate' (the paper: K trees per iteration, each with its own splits) or "
                      "'shared' (one split structure per iteration for all K classes, K leaf values: a row reads at "
                      "most one path's features per iteration, where separate trees read up to K paths'; "
                      "docs/miser_cascade.md) [miser: default "
                      f"{MISER_DEFAULTS['class_trees']} (the paper's); cascade: default {_C['class_trees']}; "
                      f"adapt-gbrt: the form of f1's trees (docs/gated.md), default {_C['class_trees']}]."),
]
# --refine's default: the lambda grid refined once, as the gated kinds' gamma grid (GATED_REFINE) and the default
# cascade's frontier (FRONTIER_REFINE) are; miser's own sweep since round 60 (docs/miser_cascade.md)
MISER_REFINE = 1
MISER_OPTIONS = [
    click.Option(["--leaves"], type=click.IntRange(min=2), default=None,
                 help="Leaves per tree, grown best first (LightGBM's growth; capped by --depth when given) "
                      f"[miser; default {MISER_DEFAULTS['leaves']} unless --depth is given]."),
    click.Option(["--charge"], type=click.Choice(["model", "row"]), default=None,
                 help="How the split gain charges a feature's cost: 'model' (Greedy Miser: once, when the first tree "
                      "splits on it) or 'row' (per training row whose path has not read it yet: the expected cost of "
                      "the lazy runtime, which reads only the features on a row's path; no feature groups) "
                      f"[miser; default {MISER_DEFAULTS['charge']}]."),
    folds_option("lambda", "each fold's held-out part also stops its boosting",
                 "the kept lambda is then refitted on both parts with the folds' mean number of trees", "miser"),
    click.Option(["--sweep-trees"], is_flag=True, default=None,
                 help="With --sweep: also judge each lambda's model truncated to shares of its early-stopped "
                      f"iterations ({floats_text(TREE_FRACTIONS)}), each with its own accuracy and cost (features "
                      "read plus --tree-cost per tree walked), and keep the cheapest point within the tolerance: "
                      "fewer trees where the last ones buy no accuracy [miser]."),
    click.Option(["--refine"], type=click.IntRange(min=0), default=None,
                 help="With --sweep: R more rounds, each fitting two lambdas between the kept one and the next "
                      "larger of the grid (geometrically), then keeping again: a finer frontier where it matters, "
                      f"2 R more fits; 0: the grid alone [miser; default {MISER_REFINE}]."),
    click.Option(["--one-se"], is_flag=True, default=None,
                 help="With --sweep: give up one standard error of lambda 0's accuracy when that is more than "
                      "--tolerance (Breiman's one-standard-error rule; sqrt(p(1-p)/n) over the rows it was judged on, "
                      "p = (correct+1)/(n+2)) [miser]."),
]
TREE_ORDERS = ("auto", "boosting", "cost")  # how an exit cascade orders its iterations (compiler/trees/tree_order.py)
DEFAULT_TREE_ORDER = "auto"  # the default cascade (its frontier, and its cross-validated form on small sets)
# --early-exit-every, the paper's baseline (and EarlyExitEnsemble): its per-stage thresholds, fitted stage by stage,
# lost 0.6-1.1 points of test accuracy in cost order on digits and wine (round 56), so it keeps the boosting order
EARLY_EXIT_TREE_ORDER = "boosting"
CSCC_GIVEN = "Given, trains CSCC instead of the default frontier"  # kind_cascade.CSCC_ONLY's options
CASCADE_OPTIONS = [
    click.Option(["--stages"], type=click.IntRange(min=1), default=None,
                 help=f"CSCC: number of cascade stages K. {CSCC_GIVEN} [cascade; default {_C['stages']}]."),
    click.Option(["--pool-lambdas"], default=None,
                 help="CSCC: comma-separated Greedy Miser lambdas of the pre-trained trees it weighs (--trees trees "
                      f"each; 0 = the paper's plain stage-wise regression). {CSCC_GIVEN} "
                      f"[cascade; default {floats_text(_C['pool_lambdas'])}]."),
    click.Option(["--rho"], type=NumberRange(min=0, finite=True), default=None,
                 help=f"CSCC: l1 regularisation of the stage weights. {CSCC_GIVEN} [cascade; default {_C['rho']:g}]."),
    click.Option(["--early-exit-every"], type=click.IntRange(min=1), default=None,
                 help="Baseline instead of CSCC: one miser ensemble with an exit test every N iterations, exits "
                      "learned on validation on both sides [cascade]."),
    click.Option(["--exit-folds"], type=click.IntRange(min=2), default=None,
                 help="With --early-exit-every: learn the exits by stratified K-fold cross-validation on the train "
                      "and validation parts pooled (the out-of-fold partial scores of fold ensembles with the same "
                      "--lambda) instead of on the validation part alone, and fit the ensemble on both parts; fold "
                      "ensembles and the ensemble have the folds' mean early-stopped number of iterations (each "
                      "fold's fit stopped on its held-out rows; at most --trees). For small sets, where one "
                      "validation row is several points [cascade]."),
    click.Option(["--exit-lambdas"], default=None,
                 help="With --exit-folds: comma-separated lambdas (0 is always added), each cascade judged held out "
                      "on the same folds (each fold's rows scored by a fold ensemble fitted without them, exiting by "
                      "thresholds learned on the other folds' rows); keeps the cheapest within one standard error "
                      "(at least 0.01) of lambda 0's whole ensembles' out-of-fold accuracy, the rule of miser --sweep "
                      "--folds K --one-se [cascade]."),
    click.Option(["--exit-every-grid"], default=None,
                 help="With --exit-folds: comma-separated N of --early-exit-every judged with each lambda in the "
                      "same way (the ensembles are fitted once per lambda) [cascade]."),
    click.Option(["--exit-budget"], type=NumberRange(0, 1, min_open=True), default=None,
                 help="With --exit-lambdas or --exit-every-grid: a share of the eager cost (every feature read, each "
                      "group once, and every tree walked, in the costs' unit). Among the pairs whose held-out mean "
                      "cost is within it and whose held-out accuracy is within the tolerance, keep the most accurate "
                      "held out (ties: the smallest lambda, then the cheapest) instead of the cheapest: a model far "
                      "under the budget spends it on accuracy. None within the budget: the cheapest within the "
                      "tolerance [cascade]."),
    click.Option(["--cheap-first"], is_flag=True, default=None,
                 help="The default frontier also tries cheap-first starts: for each of the three sweep lambdas "
                      "above the kept one, a model boosted at that lambda for 30% or 100% of its own early-stopped "
                      "iterations, then on at the kept lambda (each with exits). Rows the first, cheap trees decide "
                      "exit having read only their features: lower mean cost, at the risk of choosing on "
                      "validation an operating point a little less accurate on test [cascade; off by default; "
                      "not with --early-exit-every or CSCC's options]."),
    click.Option(["--exit-thresholds"], type=click.Choice(["per-stage", "shared"]), default=None,
                 help="How the exits are learned: 'per-stage' (each stage's thresholds on its own, the largest exit "
                      "set that keeps the rule) or 'shared' (one threshold for every stage, Greedy Miser's early-exit "
                      "baseline: a row exits once its |score| or top-2 margin passes it; fewer parameters fitted to "
                      "the same rows) [cascade; default per-stage with --early-exit-every, shared for the default "
                      "frontier]."),
    click.Option(["--tree-order"], type=click.Choice(list(TREE_ORDERS)), default=None,
                 help="The order the cascade evaluates its boosting iterations in: 'cost' (cheapest worth first: "
                      "iterations that read only features already paid for come next, then the one with the largest "
                      "mean |leaf value| per unit of new feature cost; the exits are learned on that order, so a row "
                      "that exits early has read cheap features), 'boosting' (the order they were boosted, the "
                      "paper's baseline) or 'auto' (both, each with its own exits; the one of lower mean cost where "
                      "the exits are learned is kept). The whole ensemble's score is the same sum either way "
                      f"(float32 rounding aside) [cascade with exits; default {DEFAULT_TREE_ORDER}, with "
                      f"--early-exit-every {EARLY_EXIT_TREE_ORDER}]."),
    click.Option(["--min-agreement"], type=NumberRange(0, 1, min_open=True), default=None,
                 help="Share of validation exits that must agree with the full ensemble [cascade "
                      f"--early-exit-every; default {_C['min_agreement']:g}]."),
]
