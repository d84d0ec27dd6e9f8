"""Keyword spotting: pretrain a small CNN on 25 spoken words, fine-tune it on 10 new ones.

``python -m graphgrad.examples.speech_commands [--quick] [--leak] [--nproc N] [--data PATH]``
trains (offline: the words are synthesized with eSpeak NG, or read from a Speech Commands v2
folder with --data; data-parallel on N ranks with --nproc N) and writes a checkpoint and a PNG
of the curves and of memory per batch; ``... predict FILE.wav --checkpoint PATH`` says which
word a recording is. Needs ``pip install graphgrad[examples]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

import graphgrad as torch
from graphgrad import distributed as dist

from . import data
from .model import KeywordSpotter
from .plots import plot_run
from .train import accuracy, features, make_optimizer, rank_and_world, sum_over_ranks, train_stage

# Clips per word and split (held-out voices for validation and test), epochs, model width.
FULL = {"pretrain_words": data.PRETRAIN_WORDS, "finetune_words": data.FINETUNE_WORDS,
        "pretrain_counts": {"train": 160, "validation": 20, "test": 40},
        "finetune_counts": {"train": 100, "validation": 20, "test": 60},
        "pretrain_epochs": 12, "finetune_epochs": 10, "batch_size": 64, "width": 16,
        "max_per_word": 400, "lr": 3e-3}
QUICK = {"pretrain_words": data.PRETRAIN_WORDS[:6], "finetune_words": data.FINETUNE_WORDS[:4],
         "pretrain_counts": {"train": 40, "validation": 8, "test": 10},
         "finetune_counts": {"train": 32, "validation": 8, "test": 10},
         "pretrain_epochs": 2, "finetune_epochs": 3, "batch_size": 32, "width": 8,
         "max_per_word": 40, "lr": 3e-3}


def load_clips(args, config, say=print):
    """(pretraining clips, fine-tuning clips, background noises), synthesized or read."""
    if args.data:
        clips, noises = data.read_speech_commands(args.data, max_per_word=config["max_per_word"],
                                                  seed=args.seed)
        pre = [w for w in config["pretrain_words"] if w in clips.words]
        fine = [w for w in config["finetune_words"] if w in clips.words]
        if not pre or not fine:
            sys.exit(f"{args.data}: needs words of both sets: pretraining "
                     f"{config['pretrain_words']}"
                     f" and fine-tuning {config['finetune_words']}")
        say(f"data: {len(clips)} clips of {len(clips.words)} words from {args.data}")
        return clips.select_words(pre), clips.select_words(fine), noises
    cache = args.cache_dir or data.cache_dir()
    pre = data.synthesize(config["pretrain_words"], config["pretrain_counts"], args.seed, cache,
                          log=say)
    fine = data.synthesize(config["finetune_words"], config["finetune_counts"], args.seed + 1,
                           cache, log=say)
    return pre, fine, ()


def held_out(clips, seed, split):
    """Fixed features of a held-out split: shifted and noised once, with its own seed."""
    part = clips.split(split)
    return features(part, np.random.default_rng([seed, 7, len(split)])), part.labels


def make_config(args) -> dict:
    config = dict(QUICK if args.quick else FULL)
    for key in ("pretrain_epochs", "finetune_epochs"):
        if getattr(args, key) is not None:
            config[key] = getattr(args, key)
    return config


def _quiet(*args, **kwargs):
    pass


def run(args) -> dict:
    """Both stages, in this process or, inside a process group of several ranks (started by
    ``--nproc``), data-parallel: every rank trains on its shard; rank 0 alone prints, saves the
    checkpoint and draws the figure."""
    config = make_config(args)
    rank, world = rank_and_world()
    say = print if rank == 0 else _quiet
    start = time.perf_counter()
    if rank == 0:
        os.makedirs(args.out, exist_ok=True)
    if world > 1:
        say(f"data-parallel on {world} ranks: {config['batch_size'] // world} clips per rank "
            f"and step")
    pre_clips, fine_clips, noises = load_clips(args, config, say)
    data_seconds = time.perf_counter() - start
    kw = {"batch_size": config["batch_size"], "noises": noises, "progress": not args.no_progress}

    # Stage 1: pretraining on the first set of words.
    torch.manual_seed(args.seed)
    model = KeywordSpotter(len(pre_clips.words), width=config["width"])
    train_pre = pre_clips.split("train")
    # Feature statistics for the model's standardisation, over every rank's share of clips.
    probe = features(train_pre.take(range(rank, len(train_pre), world)),
                     np.random.default_rng([args.seed, 0]), noises).astype(np.float64)
    total, squares, count = sum_over_ranks(probe.sum(), np.square(probe).sum(), probe.size)
    mean = total / count
    model.mean.fill_(mean)
    model.std.fill_(float(np.sqrt(max(squares / count - mean * mean, 0.0))))
    say(f"pretraining on {len(pre_clips.words)} words: {len(train_pre)} clips, "
        f"{config['pretrain_epochs']} epochs")
    pretrain = train_stage(model, make_optimizer(model, config["lr"]), train_pre,
                           held_out(pre_clips, args.seed, "validation"), name="pretrain",
                           epochs=config["pretrain_epochs"], seed=args.seed, **kw)
    pretrain.test_accuracy = accuracy(model, *held_out(pre_clips, args.seed, "test"))
    say(f"pretrained: held-out voices accuracy {pretrain.test_accuracy:.1%} "
        f"({len(pre_clips.words)} words, {pretrain.seconds:.0f} s)")
    pretrained = {k: v.clone() for k, v in model.state_dict().items()}

    # Stage 2: fine-tuning on new words with a new head; with --leak also the leaky loop,
    # from the same starting point, so the two memory curves can be compared.
    train_fine = fine_clips.split("train")
    val_fine = held_out(fine_clips, args.seed + 1, "validation")
    test_fine = held_out(fine_clips, args.seed + 1, "test")
    runs = {}
    for leak in (False, True) if args.leak else (False,):
        model = KeywordSpotter(len(pre_clips.words), width=config["width"])
        model.load_state_dict(pretrained)
        torch.manual_seed(args.seed + 1)
        model.replace_head(len(fine_clips.words))
        label = "fine-tune (leak)" if leak else "fine-tune"
        say(f"{label}: new head for {len(fine_clips.words)} words, {len(train_fine)} clips, "
            f"{config['finetune_epochs']} epochs" +
            (", logging `total_loss += loss` (no .item())" if leak else ""))
        optimizer = make_optimizer(model, config["lr"], body_lr=config["lr"] / 3)
        history = train_stage(model, optimizer, train_fine, val_fine, name=label,
                              epochs=config["finetune_epochs"], seed=args.seed + 1, leak=leak,
                              **kw)
        history.test_accuracy = accuracy(model, *test_fine)
        say(f"{label}: held-out voices accuracy {history.test_accuracy:.1%} "
            f"({len(fine_clips.words)} words, {history.seconds:.0f} s)")
        runs[leak] = history
        if not leak:
            finetuned = {k: v.clone() for k, v in model.state_dict().items()}
    finetune, leaky = runs[False], runs.get(True)
    if leaky is not None:
        a, b = finetune.batch_memory, leaky.batch_memory
        say(f"memory.allocated() per batch, {len(a)} batches: total += loss.item(): "
            f"{a[0] / 1024:.0f} -> {a[-1] / 1024:.0f} KiB; total += loss: "
            f"{b[0] / 1024:.0f} -> {b[-1] / 1024:.0f} KiB "
            f"(+{(b[-1] - b[0]) / max(len(b) - 1, 1) / 1024:.1f} KiB a batch)")
        say(f"graph-retention warnings: {len(finetune.warnings)} with .item(), "
            f"{len(leaky.warnings)} with the leak")
        model.load_state_dict(finetuned)     # the same weights: the leak changes memory only

    checkpoint = os.path.join(args.out, "keyword_spotter.pt")
    figure = os.path.join(args.out, "training.png")
    if rank == 0:    # the ranks hold the same weights; one writes
        torch.save({"model": model.state_dict(), "words": list(fine_clips.words),
                    "pretrain_words": list(pre_clips.words),
                    "config": {"width": config["width"], "seed": args.seed},
                    "accuracy": {"pretrain": pretrain.test_accuracy,
                                 "finetune": finetune.test_accuracy}}, checkpoint)
        plot_run(pretrain, finetune, figure, leaky)
    seconds = time.perf_counter() - start
    say(f"checkpoint: {checkpoint}\nfigure: {figure}")
    say(f"pretrain accuracy (held-out voices): {pretrain.test_accuracy:.1%}\n"
        f"fine-tune accuracy (held-out voices): {finetune.test_accuracy:.1%}\n"
        f"time: {seconds:.0f} s (data {data_seconds:.0f} s, pretraining {pretrain.seconds:.0f}"
        f" s, fine-tuning {finetune.seconds:.0f} s)")
    return {"pretrain": pretrain, "finetune": finetune, "leaky": leaky,
            "checkpoint": checkpoint, "figure": figure, "seconds": seconds}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["predict"]:
        from .predict import main as predict_main
        return predict_main(argv[1:])
    if argv[:1] == ["export"]:
        from .export import main as export_main
        return export_main(argv[1:])
    ap = argparse.ArgumentParser(prog="python -m graphgrad.examples.speech_commands",
                                 description=__doc__.splitlines()[0],
                                 epilog="predict: python -m graphgrad.examples.speech_commands "
                                        "predict FILE.wav --checkpoint PATH; ONNX: ... export "
                                        "--checkpoint PATH [--output model.onnx]")
    ap.add_argument("--quick", action="store_true", help="a small run (under a minute)")
    ap.add_argument("--leak", action="store_true",
                    help="also fine-tune with `total += loss` and compare memory per batch")
    ap.add_argument("--data", metavar="PATH",
                    help="a Speech Commands v2 folder (<word>/<clip>.wav, validation_list.txt, "
                         "testing_list.txt) instead of synthesized speech")
    ap.add_argument("--out", default="speech_commands_out",
                    help="where the checkpoint and the figure go (default: %(default)s)")
    ap.add_argument("--cache-dir", help=f"synthesized clips' cache (default: {data.cache_dir()})")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--pretrain-epochs", type=int)
    ap.add_argument("--finetune-epochs", type=int)
    ap.add_argument("--no-progress", action="store_true", help="no progress bars")
    ap.add_argument("--nproc", type=int, default=1, metavar="N",
                    help="train data-parallel on N ranks (MPI: pip install graphgrad[distributed])")
    ap.add_argument("--threads", type=int, default=1, metavar="N",
                    help="BLAS threads per process (default 1; 0: the BLAS library's default)")
    args = ap.parse_args(argv)
    if args.threads > 0:
        limit_blas_threads(args.threads)
    # Inside the launcher's ranks this joins their group; started plainly it is a world of one.
    dist.init_process_group("mpi")
    try:
        if args.nproc > 1 and dist.get_world_size() == 1:
            return launch_ranks(args, argv)
        return run(args)
    finally:
        dist.destroy_process_group()


def limit_blas_threads(n: int) -> None:
    """Caps NumPy's BLAS thread pool (threadpoolctl comes with scikit-learn, in the examples
    extra). One thread is the default: this model's matrix products are small, so a second
    thread gained nothing measurable on 2 idle-ish cores, and its spinning made steps up to 15
    times slower whenever other work shared the cores (docs/examples.md)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return
    threadpool_limits(limits=n, user_api="blas")


def launch_ranks(args, argv) -> int:
    """Starts ``args.nproc`` ranks of this command through graphgrad.distributed.run, after
    synthesizing the clips here once (the ranks then read them from the cache)."""
    from graphgrad.distributed.run import find_mpiexec, launch
    try:
        find_mpiexec()
    except FileNotFoundError as e:
        sys.exit(f"--nproc {args.nproc}: {e}")
    if not args.data:
        load_clips(args, make_config(args))
    return launch(args.nproc, ["-m", "graphgrad.examples.speech_commands", *argv])


if __name__ == "__main__":
    result = main()
    sys.exit(result if isinstance(result, int) else 0)
