"""GPT-2 language model (transformers GPT2LMHeadModel from a GPT2Config, no
download) trained with AdamW on random token ids."""
import common  # first: sets CUBLAS_WORKSPACE_CONFIG before torch loads

import torch
from transformers import GPT2Config, GPT2LMHeadModel


def main():
    p = common.make_parser(__doc__, batch_size=8, lr=3e-4)
    p.add_argument("--n-layer", type=int, default=6, help="transformer blocks")
    p.add_argument("--n-embd", type=int, default=512, help="hidden size")
    p.add_argument("--n-head", type=int, default=8, help="attention heads")
    p.add_argument("--seq-len", type=int, default=256, help="tokens per sample")
    p.add_argument("--vocab-size", type=int, default=50257, help="vocabulary size")
    args = p.parse_args()
    common.check_positive(p, args, "n_layer", "n_embd", "n_head", "seq_len", "vocab_size",
                          "batch_size")
    if args.n_embd % args.n_head:
        p.error("--n-embd must be a multiple of --n-head")
    device = common.setup(args)

    config = GPT2Config(n_layer=args.n_layer, n_embd=args.n_embd, n_head=args.n_head,
                        vocab_size=args.vocab_size, n_positions=args.seq_len,
                        use_cache=False)  # training: keep no key/value cache
    with device:  # initialised where it trains: a CPU init of every weight is slow
        model = GPT2LMHeadModel(config)
    optimizer = common.adamw(args, model)

    def make_batch(g):
        return (torch.randint(0, args.vocab_size, (args.batch_size, args.seq_len), generator=g),)

    def compute_loss(ids):
        # The model shifts the labels itself (next-token prediction).
        return model(input_ids=ids, labels=ids).loss

    common.train(args, model, optimizer, common.host_batches(args, make_batch), compute_loss)


if __name__ == "__main__":
    common.run(main)
