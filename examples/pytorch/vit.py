"""Vision Transformer (timm, built from its config without pretrained
weights; ViT-B/16 by default) trained with AdamW on random images and
labels."""
import common  # first: sets CUBLAS_WORKSPACE_CONFIG before torch loads

import timm


def main():
    p = common.make_parser(__doc__, batch_size=32, lr=1e-4)
    p.add_argument("--arch", default="vit_base_patch16_224",
                   help="timm model name (any vit_* that takes --image-size)")
    p.add_argument("--image-size", type=int, default=224, help="height and width of the images")
    p.add_argument("--classes", type=int, default=1000, help="output classes")
    args = p.parse_args()
    common.check_positive(p, args, "image_size", "classes", "batch_size")
    device = common.setup(args)

    with device:  # initialised where it trains: a CPU init of every weight is slow
        model = timm.create_model(args.arch, pretrained=False, num_classes=args.classes,
                                  img_size=args.image_size)
    optimizer = common.adamw(args, model)
    common.train_classifier(args, model, optimizer, (3, args.image_size, args.image_size), args.classes)


if __name__ == "__main__":
    common.run(main)
