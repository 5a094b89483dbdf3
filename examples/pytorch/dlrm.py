"""A DLRM-style recommender: large embedding tables (EmbeddingBag, sum of a
bag of ids per sample and table), a bottom MLP on dense features, pairwise
dot-product interactions and a top MLP, trained with SGD on random data and
click labels. Embedding gradients are sparse by default, so a step reads and
updates only the rows its ids name; ids follow a power law with the most
frequent ids first (as in a frequency-ranked vocabulary), so some rows are
hot and most are cold."""
import common  # first: sets CUBLAS_WORKSPACE_CONFIG before torch loads

import argparse

import torch
from torch import nn


def mlp(sizes, last_relu):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if last_relu or i < len(sizes) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


class DLRM(nn.Module):
    def __init__(self, args, device):
        super().__init__()
        self.bottom = mlp([args.dense_features] + args.bottom_mlp + [args.dim], last_relu=True)
        self.tables = nn.ModuleList(
            nn.EmbeddingBag(args.rows, args.dim, mode="sum", sparse=not args.dense_grads,
                            device=device)  # made on the device: tables can be large
            for _ in range(args.tables))
        bound = args.rows ** -0.5  # as the DLRM reference initialises them
        for t in self.tables:
            nn.init.uniform_(t.weight, -bound, bound)
        n = args.tables + 1  # features that interact: the bottom MLP output and each table
        pairs = [i * n + j for i in range(n) for j in range(i)]  # strictly lower triangle
        self.register_buffer("pairs", torch.tensor(pairs, dtype=torch.long), persistent=False)
        self.top = mlp([args.dim + len(pairs)] + args.top_mlp + [1], last_relu=False)

    def forward(self, dense, ids):
        # dense: (batch, dense_features); ids: (tables, batch, lookups)
        x = self.bottom(dense)
        feats = torch.stack([x] + [t(ids[i]) for i, t in enumerate(self.tables)], dim=1)
        z = torch.bmm(feats, feats.transpose(1, 2)).flatten(1)
        inter = z.index_select(1, self.pairs)
        return self.top(torch.cat([x, inter], dim=1)).squeeze(1)


def sizes(text):
    """'512,256' -> [512, 256], for argparse's type=; '' is no hidden layer."""
    try:
        layers = [int(s) for s in text.split(",")] if text else []
    except ValueError:
        raise argparse.ArgumentTypeError(
            "%r is not layer sizes N,N,... (as in 512,256)" % text) from None
    if any(n < 1 for n in layers):
        raise argparse.ArgumentTypeError("%r: a layer's size must be at least 1" % text)
    return layers


def main():
    p = common.make_parser(__doc__, batch_size=2048, lr=0.05)
    p.add_argument("--tables", type=int, default=8, help="embedding tables")
    p.add_argument("--rows", type=int, default=250000, help="rows per table")
    p.add_argument("--dim", type=int, default=64, help="embedding dimension")
    p.add_argument("--lookups", type=int, default=16, help="ids per sample and table (bag size)")
    p.add_argument("--skew", type=float, default=2.0,
                   help="id = rows * u**skew for u uniform in [0,1): 1 is uniform, "
                        "larger concentrates on the first rows")
    p.add_argument("--dense-features", type=int, default=13, help="dense input features")
    p.add_argument("--bottom-mlp", type=sizes, default=[512, 256],
                   help="bottom MLP hidden sizes ('' for none)")
    p.add_argument("--top-mlp", type=sizes, default=[512, 256],
                   help="top MLP hidden sizes ('' for none)")
    p.add_argument("--dense-grads", action="store_true",
                   help="dense embedding gradients (the whole table is written each step)")
    args = p.parse_args()
    common.check_positive(p, args, "tables", "rows", "dim", "lookups", "dense_features",
                          "batch_size")
    if args.skew <= 0:
        p.error("--skew must be positive")
    device = common.setup(args)

    model = DLRM(args, device).to(device)
    # Plain SGD: it takes the sparse embedding gradients as they are.
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    criterion = nn.BCEWithLogitsLoss()

    def make_batch(g):
        dense = torch.rand(args.batch_size, args.dense_features, generator=g)
        u = torch.rand(args.tables, args.batch_size, args.lookups, generator=g, dtype=torch.float64)
        ids = (u.pow(args.skew) * args.rows).long().clamp_(max=args.rows - 1)
        clicks = torch.randint(0, 2, (args.batch_size,), generator=g).float()
        return dense, ids, clicks

    def compute_loss(dense, ids, clicks):
        return criterion(model(dense, ids), clicks)

    common.train(args, model, optimizer, common.host_batches(args, make_batch), compute_loss)


if __name__ == "__main__":
    common.run(main)
