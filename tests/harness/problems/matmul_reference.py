"""PyTorch reference for matmul.py (use with --reference)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)
