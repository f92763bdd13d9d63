#!/usr/bin/env python3
"""Writes the offline assets TorchTitan's trainer reads, so no run needs a download.

    make_assets.py OUT_DIR [--words 2000] [--documents 400]

OUT_DIR/tokenizer/   a word-level Hugging Face tokenizer (tokenizer.json, built with the
                     `tokenizers` library, and tokenizer_config.json naming BOS and EOS):
                     pass it as --model.hf_assets_path
OUT_DIR/c4_test/     data.json, one {"text": ...} object per line, the layout of
                     TorchTitan's own tests/assets/c4_test: pass it as
                     --training.dataset_path with --training.dataset c4_test

The text is made of pseudo-random words drawn from the tokenizer's vocabulary (seeded,
so the same arguments give the same bytes). What the model learns does not matter
under the simulator; the shapes do, and they come from the model's config (the debug
model's vocabulary is 2048 entries, so --words must stay below that).
"""

import argparse
import json
import os
import random
import sys

from tokenizers import Tokenizer, models, pre_tokenizers

SPECIAL_TOKENS = ["<|unk|>", "<|begin_of_text|>", "<|end_of_text|>"]


def make_words(count: int) -> list[str]:
    # Short letter strings: "ba", "be", ..., deterministic and distinct.
    consonants = "bcdfghjklmnprstvz"
    vowels = "aeiou"
    words: list[str] = []
    length = 1
    while len(words) < count:
        length += 1
        for index in range(len(consonants) ** length):
            word = ""
            rest = index
            for position in range(length):
                rest, digit = divmod(rest, len(consonants))
                word += consonants[digit] + vowels[(index + position) % len(vowels)]
            words.append(word)
            if len(words) == count:
                break
    return words


def write_tokenizer(directory: str, words: list[str]) -> None:
    os.makedirs(directory, exist_ok=True)
    vocab = {token: i for i, token in enumerate(SPECIAL_TOKENS + words)}
    tokenizer = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<|unk|>"))
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer.save(os.path.join(directory, "tokenizer.json"))
    # TorchTitan's HuggingFaceTokenizer reads BOS/EOS from here and adds them itself.
    config = {
        "bos_token": "<|begin_of_text|>",
        "eos_token": "<|end_of_text|>",
        "unk_token": "<|unk|>",
        "add_bos_token": True,
        "add_eos_token": True,
        "model_max_length": 131072,
    }
    with open(os.path.join(directory, "tokenizer_config.json"), "w") as f:
        json.dump(config, f, indent=2)


def write_dataset(directory: str, words: list[str], documents: int, seed: int) -> None:
    os.makedirs(directory, exist_ok=True)
    rng = random.Random(seed)
    with open(os.path.join(directory, "data.json"), "w") as f:
        for _ in range(documents):
            length = rng.randint(200, 1200)
            text = " ".join(rng.choice(words) for _ in range(length))
            f.write(json.dumps({"text": text}) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", help="folder to write tokenizer/ and c4_test/ into")
    parser.add_argument("--words", type=int, default=2000,
                        help="vocabulary size without the special tokens (default 2000)")
    parser.add_argument("--documents", type=int, default=400,
                        help="documents in data.json (default 400, about 280k words)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.words < 1 or args.words + len(SPECIAL_TOKENS) > 2048:
        print(f"make_assets.py: --words {args.words}: must be 1..{2048 - len(SPECIAL_TOKENS)} "
              "(the Llama3 debug model's vocabulary is 2048 entries)", file=sys.stderr)
        return 2
    words = make_words(args.words)
    write_tokenizer(os.path.join(args.out_dir, "tokenizer"), words)
    write_dataset(os.path.join(args.out_dir, "c4_test"), words, args.documents, args.seed)
    print(f"wrote {args.out_dir}/tokenizer (vocabulary {len(words) + len(SPECIAL_TOKENS)}) "
          f"and {args.out_dir}/c4_test/data.json ({args.documents} documents)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
