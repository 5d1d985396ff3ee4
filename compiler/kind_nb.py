"""Kinds nb-static and nb-stop: naive Bayes over the top-k features of an
ordering, without or with early-stopping stop points."""

from __future__ import annotations

import click

from .kinds import KindSpec, register
from .pipeline import train_nb

NB_OPTIONS = [
    click.Option(["--ordering"], type=click.Choice(["ig", "chi2", "dcp", "greedy", "fcbf"]), default=None,
                 help="Feature ordering metric [nb-*; default ig]."),
    click.Option(["--budget"], type=click.IntRange(min=1), default=None,
                 help="Features the model may read, k [nb-*; default: best static validation accuracy]."),
    click.Option(["--bins"], default=None, help="Discretization: mean-std (default) or quantile:N [nb-*]."),
]
STOP_OPTIONS = [
    click.Option(["--support"], type=click.FloatRange(0, 1, max_open=True), default=None,
                 help="Share of running validation rows a stop point must stop [nb-stop; default 0.05]."),
    click.Option(["--performance"], type=click.FloatRange(0, 1, max_open=True), default=None,
                 help="The paper's p in R2 / relative error margin [nb-stop; default 0.05]."),
    click.Option(["--criterion"], type=click.Choice(["safe", "agree", "paper", "relerr"]), default=None,
                 help="Stop point acceptance rule [nb-stop; default safe; paper = the IJCAI 2016 rule]."),
    click.Option(["--disagreement"], type=click.FloatRange(0, 1, min_open=True), default=None,
                 help="Bound on (disagreements+3)/stopped rows for --criterion safe [nb-stop; default 0.02]."),
]

register(KindSpec("nb-static", "naive Bayes on the top-k features of an ordering", train_nb, NB_OPTIONS))
register(KindSpec("nb-stop", "early-stopping naive Bayes (stop points)", train_nb, NB_OPTIONS + STOP_OPTIONS))
