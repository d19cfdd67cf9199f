"""Data: the federated dataset, one loader module per source (behind `loaders.load_data`), synthetic data, the split."""
from dpfed_core.data.dataset import FederatedDataset  # noqa: F401
