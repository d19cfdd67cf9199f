"""The audit's defaults and labels: light enough for the CLI to build its parser without the audit."""

#: Methods audited by default (CLI): the recommended DP method (the summable ``dp-cooccurrence``)
#: over an ε grid and the two non-private baselines. The dashboard audits the run's own
#: method at the run's ε by default.
DEFAULT_METHODS = ("dp-cooccurrence", "kmeans", "krandom")
DEFAULT_EPSILONS = (0.5, 1.0, 2.0, 4.0, 8.0)
DEFAULT_TARGETS = ("synthetic", "outlier", "typical")
#: Every released quantity is attacked: the prototypes (distance, LR on prototype and count
#: features) and the released cluster sizes on their own ("counts").
DEFAULT_ATTACKS = ("distance", "lr", "counts")
DEFAULT_FPRS = (0.01, 0.1)
#: Points kept of each ROC curve in the result document (keeps the JSON small).
ROC_POINTS = 101

TARGET_LABELS = {
    "synthetic": "synthetic worst case (Λ∞ on the entity's rarest items)",
    "outlier": "real user farthest from the rest",
    "typical": "typical real user (closest to the others on average)",
}
ATTACK_LABELS = {
    "distance": "distance to nearest prototype",
    "lr": "likelihood ratio (Gaussian, shadow-fitted)",
    "v-residual": "residual of the target on V",
    "counts": "released cluster sizes (total)",
}
