"""BERT masked-language model (transformers BertForMaskedLM from a BertConfig,
no download; BERT-large by default) trained with AdamW on random token ids,
15 % of the positions masked as in BERT's pre-training."""
import common  # first: sets CUBLAS_WORKSPACE_CONFIG before torch loads

import torch
from transformers import BertConfig, BertForMaskedLM

MASK_ID = 103  # [MASK] in BERT's uncased vocabulary
IGNORE = -100  # label of the positions the loss skips


def main():
    p = common.make_parser(__doc__, batch_size=8, lr=1e-4)
    p.add_argument("--n-layer", type=int, default=24, help="transformer blocks")
    p.add_argument("--hidden", type=int, default=1024, help="hidden size")
    p.add_argument("--n-head", type=int, default=16, help="attention heads")
    p.add_argument("--seq-len", type=int, default=512, help="tokens per sample")
    p.add_argument("--vocab-size", type=int, default=30522, help="vocabulary size")
    args = p.parse_args()
    common.check_positive(p, args, "n_layer", "hidden", "n_head", "seq_len", "vocab_size",
                          "batch_size")
    if args.hidden % args.n_head:
        p.error("--hidden must be a multiple of --n-head")
    if args.vocab_size <= MASK_ID:
        p.error("--vocab-size must be above %d (the [MASK] id)" % MASK_ID)
    device = common.setup(args)

    config = BertConfig(num_hidden_layers=args.n_layer, hidden_size=args.hidden,
                        num_attention_heads=args.n_head, intermediate_size=4 * args.hidden,
                        vocab_size=args.vocab_size, max_position_embeddings=args.seq_len)
    with device:  # initialised where it trains: a CPU init of every weight is slow
        model = BertForMaskedLM(config)
    optimizer = common.adamw(args, model)

    def make_batch(g):
        ids = torch.randint(MASK_ID + 1, args.vocab_size, (args.batch_size, args.seq_len),
                            generator=g)
        masked = torch.rand(ids.shape, generator=g) < 0.15
        labels = torch.where(masked, ids, torch.full_like(ids, IGNORE))
        return ids.masked_fill(masked, MASK_ID), labels

    def compute_loss(ids, labels):
        return model(input_ids=ids, labels=labels).loss

    common.train(args, model, optimizer, common.host_batches(args, make_batch), compute_loss)


if __name__ == "__main__":
    common.run(main)
