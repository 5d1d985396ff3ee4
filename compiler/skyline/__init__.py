"""The budget index (kind ``skyline``): search, index, estimator, CLI kind."""

# the index compares hundreds to thousands of feature sets where a sweep compares ten to thirty grid points: the
# best of many noisy validation scores is further above its true accuracy (the winner's curse), so its sets are
# cross-validated up to a larger validation part than the sweeps' CV_BELOW (docs/skyline.md, "Cross-validated scores")
SKYLINE_CV_BELOW = 1000
