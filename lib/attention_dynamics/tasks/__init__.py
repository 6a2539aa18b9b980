"""Tasks whose Bayes-optimal answer is known exactly ("Bayesian wind tunnels")."""
