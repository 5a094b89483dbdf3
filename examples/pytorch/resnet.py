"""torchvision ResNet (18/34/50/101/152) trained with SGD and momentum on
random images and labels."""
import common  # first: sets CUBLAS_WORKSPACE_CONFIG before torch loads

import torch
import torchvision


def main():
    p = common.make_parser(__doc__, batch_size=32, lr=0.01)
    p.add_argument("--depth", type=int, default=50, choices=[18, 34, 50, 101, 152],
                   help="which torchvision resnet")
    p.add_argument("--image-size", type=int, default=224, help="height and width of the images")
    p.add_argument("--classes", type=int, default=100, help="output classes")
    args = p.parse_args()
    common.check_positive(p, args, "image_size", "classes", "batch_size")
    device = common.setup(args)

    with device:  # initialised where it trains: a CPU init of every weight is slow
        model = getattr(torchvision.models, "resnet%d" % args.depth)(
            weights=None, num_classes=args.classes)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    common.train_classifier(args, model, optimizer, (3, args.image_size, args.image_size), args.classes)


if __name__ == "__main__":
    common.run(main)
