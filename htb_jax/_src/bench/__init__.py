"""A versioned benchmark of heavy-tailed bandit policies: the suite, its peers, its runs and report."""
