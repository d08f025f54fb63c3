"""Keep a recipe stage's checkpoint in the repository, in fp16, so that a recipe cut short by
the machine's time resumes at the next stage (recipe.sh looks for checkpoints/<split>-<stage>.pt).

usage: /usr/bin/python3 keep.py work/mixrecipe/A/ckpt.pt checkpoints/mix_train-A.pt

Floating tensors are stored as fp16 (half the bytes; the next stage starts from these values,
so a resumed recipe is close to, not bit-identical with, an uninterrupted one); everything
else is kept as it is.
"""
import sys

import torch


def fp16(state):
    """A state dict with its floating tensors in fp16."""
    return {k: v.half() if v.is_floating_point() else v for k, v in state.items()}


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    ck = torch.load(sys.argv[1], map_location="cpu")
    ck["model"] = fp16(ck["model"])
    torch.save(ck, sys.argv[2])


if __name__ == "__main__":
    main()
