"""A deep MLP classifier (Linear + ReLU blocks) trained with SGD and momentum
on random inputs and labels."""
import common  # first: sets CUBLAS_WORKSPACE_CONFIG before torch loads

import torch
from torch import nn


def main():
    p = common.make_parser(__doc__, batch_size=512, lr=0.01)
    p.add_argument("--width", type=int, default=2048, help="features per hidden layer")
    p.add_argument("--layers", type=int, default=8, help="hidden layers (width x width)")
    p.add_argument("--classes", type=int, default=10, help="output classes")
    args = p.parse_args()
    common.check_positive(p, args, "width", "layers", "classes", "batch_size")
    device = common.setup(args)

    blocks = []
    for _ in range(args.layers):
        blocks += [nn.Linear(args.width, args.width), nn.ReLU()]
    blocks.append(nn.Linear(args.width, args.classes))
    model = nn.Sequential(*blocks).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    common.train_classifier(args, model, optimizer, (args.width,), args.classes)


if __name__ == "__main__":
    common.run(main)
