"""The compiler side of the on-device feature library: the `frugalml features` catalog and feature-plan costs."""
