"""One histogram gradient-boosting core for every tree trainer (miser, the cascades' trees,
ADAPT-GBRT's gate and f1, CSTC's boosting trick).

- :mod:`~compiler.boosting.binning`: features binned once (<= 255 thresholds, uint8 codes) with
  float32 thresholds that reproduce the binned partition exactly on float32 inputs;
- :mod:`~compiler.boosting.grow`: one regression tree grown on gradient/hessian histograms (Newton
  gain, L2 leaf regularisation, minimum child weight and count, the histogram subtraction trick,
  Greedy Miser's feature-cost term in the gain), depth-wise or leaf-wise;
- :mod:`~compiler.boosting.losses`: squared, logistic and multi-class log-loss (softmax);
- :mod:`~compiler.boosting.booster`: the stage-wise state (K trees per iteration, row and column
  subsampling, float32 scores equal to the runtime's).

The inner loops (histograms, partitions, split search, tree application, binning) are C
(histboost.c, built by cffi at install into ``compiler.boosting._histboost``).
"""
