"""Command-line options of the tree kinds (miser, cascade; the gated trainers reuse the
tree-shape options)."""

from __future__ import annotations

import click

LOSSES = ("squared", "logistic", "multiclass-log")

DEFAULT_GRID = (0.0, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0)

TREE_OPTIONS = [
    click.Option(["--lambda"], type=click.FloatRange(min=0), default=None,
                 help="Feature-cost penalty lambda [miser: default 1; cascade (CSCC): the accuracy/cost trade-off of "
                      "its objective, default: the cheapest on validation of 0.1, 1, 10; cascade --early-exit-every: "
                      "the ensemble's, default 0]."),
    click.Option(["--trees"], type=click.IntRange(min=1), default=None,
                 help="Boosting iterations [miser: at most, chosen on validation with early stopping, default 1000; "
                      "cascade (CSCC): "
                      "trees of the boosting trick per --pool-lambdas entry, default 100; --early-exit-every: 100]."),
    click.Option(["--depth"], type=click.IntRange(1, 16), default=None,
                 help="Tree depth [cascade: default 3; miser: depth-wise trees of this depth (the paper's), default: "
                      "leaf-wise trees of --leaves leaves]."),
    click.Option(["--step"], type=click.FloatRange(0, 1, min_open=True), default=None,
                 help="Learning rate [miser, cascade; default 0.1]."),
    click.Option(["--loss"], type=click.Choice(list(LOSSES)), default=None,
                 help="Boosting loss [miser: default logistic (two classes) or multiclass-log, squared = the paper's "
                      "stage-wise regression; cascade: default logistic]."),
    click.Option(["--tree-cost"], type=click.FloatRange(min=0), default=None,
                 help="Evaluation cost e per tree, added to the feature cost in the test-time cost "
                      "[miser, cascade; default 0]."),
]
MISER_OPTIONS = [
    click.Option(["--leaves"], type=click.IntRange(min=2), default=None,
                 help="Leaves per tree, grown best first (LightGBM's growth; capped by --depth when given) "
                      "[miser; default 8 unless --depth is given]."),
]
CASCADE_OPTIONS = [
    click.Option(["--stages"], type=click.IntRange(min=1), default=None,
                 help="Number of cascade stages K [cascade; default 3]."),
    click.Option(["--pool-lambdas"], default=None,
                 help="Comma-separated Greedy Miser lambdas of the pre-trained trees CSCC weighs (--trees trees each; "
                      "0 = the paper's plain stage-wise regression) [cascade; default 0,3,30]."),
    click.Option(["--rho"], type=click.FloatRange(min=0), default=None,
                 help="l1 regularisation of the CSCC stage weights [cascade; default 0.001]."),
    click.Option(["--early-exit-every"], type=click.IntRange(min=1), default=None,
                 help="Baseline instead of CSCC: one miser ensemble with an exit test every N iterations, exits "
                      "learned on validation on both sides [cascade]."),
    click.Option(["--min-agreement"], type=click.FloatRange(0, 1, min_open=True), default=None,
                 help="Share of validation exits that must agree with the full ensemble [cascade "
                      "--early-exit-every; default 0.9975]."),
]

SWEEP_OPTIONS = [
    click.Option(["--sweep"], is_flag=True, default=False,
                 help="Fit a grid of lambda, print validation accuracy vs test-time cost, keep the cheapest model "
                      "within --tolerance of lambda = 0 [miser]."),
    click.Option(["--tolerance"], type=click.FloatRange(0, 1), default=None,
                 help="Accuracy the --sweep may give up, absolute [miser; default 0.01]."),
    click.Option(["--lambda-grid"], default=None,
                 help="Comma-separated lambdas of --sweep (0 is always added) [miser; default "
                      + ",".join(f"{v:g}" for v in DEFAULT_GRID) + "]."),
]
