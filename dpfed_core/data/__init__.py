"""Data: the federated dataset, its loaders (long tables, MovieLens, eICU), synthetic data, the split."""
from dpfed_core.data.dataset import FederatedDataset  # noqa: F401
