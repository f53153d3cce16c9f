# A bench job launched the way Hugging Face example scripts are (run_clm.py / run_image_classification.py
# parse TrainingArguments from the command line): `--dataloader_num_workers` (TrainingArguments'
# default is 0, transformers/training_args.py), `--per_device_train_batch_size`,
# `--dataloader_pin_memory`. The progress it prints has the shapes the Trainer prints: a tqdm bar
# (`12/3000 [00:04<17:02,  2.92it/s]`, carriage returns as tqdm writes to a file) and the final
# metrics dict (`{'train_runtime': …, 'train_samples_per_second': …}`). Synthetic data
# (bench/imagedata.py), the small conv net of bench/public/common.py, at most --max-seconds.
# The last line is the harness's JSON (`samples_per_s` over the measured window, after warm-up),
# as bench/train.py prints it. bench/issue26_h200.sh runs it with `--dataloader_num_workers 0`.
import argparse
import json
import sys
import time

import torch
import torch.nn as nn

from common import SyntheticImages, add_harness_args, harness_start, harness_step, small_net

parser = argparse.ArgumentParser(description='image classification (Trainer-style arguments, bench shape)')
parser.add_argument('--output_dir', default='out')
parser.add_argument('--dataloader_num_workers', default=0, type=int)
parser.add_argument('--dataloader_pin_memory', default=True, type=lambda s: s.lower() in ('1', 'true', 'yes'))
parser.add_argument('--per_device_train_batch_size', default=128, type=int)
parser.add_argument('--learning_rate', default=0.1, type=float)
parser.add_argument('--decode_passes', default=0, type=int, help='CPU cost per image')
parser.add_argument('--max_steps', default=100000, type=int)
add_harness_args(parser)


def bar(step, total, elapsed, rate):
    """tqdm's default format: `{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}, {rate_fmt}]`."""
    def mmss(s):
        s = int(s)
        return f"{s // 60:02d}:{s % 60:02d}"
    remaining = (total - step) / rate if rate > 0 else 0
    pct = int(100 * step / total)
    return f"{pct:3d}%|{'#' * (pct // 10):10s}| {step}/{total} [{mmss(elapsed)}<{mmss(remaining)}, {rate:5.2f}it/s]"


def main():
    args = parser.parse_args()
    started = harness_start(args)
    device = torch.device('cuda')
    model = small_net().to(device).to(memory_format=torch.channels_last)
    criterion = nn.CrossEntropyLoss().to(device)
    optimizer = torch.optim.SGD(model.parameters(), args.learning_rate, momentum=0.9)
    loader = torch.utils.data.DataLoader(
        SyntheticImages(decode_passes=args.decode_passes), batch_size=args.per_device_train_batch_size,
        num_workers=args.dataloader_num_workers, pin_memory=args.dataloader_pin_memory)
    model.train()
    warmup = 10
    t0 = None
    samples = 0
    last = time.time()
    for step, (images, target) in enumerate(loader):
        images = images.to(device, non_blocking=True).to(memory_format=torch.channels_last)
        target = target.to(device, non_blocking=True)
        with torch.autocast('cuda', dtype=torch.bfloat16):
            loss = criterion(model(images), target)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if step == warmup:
            torch.cuda.synchronize()
            t0 = time.time()
        elif t0 is not None:
            samples += images.shape[0]
        now = time.time()
        if now - last >= 1.0 and t0 is not None:
            torch.cuda.synchronize()
            rate = (step - warmup) / (time.time() - t0) if time.time() > t0 else 0.0
            sys.stderr.write('\r' + bar(step, args.max_steps, now - started, rate))
            sys.stderr.flush()
            last = now
        if step + 1 >= args.max_steps or not harness_step(args, started, step, warmup_steps=warmup):
            break
    torch.cuda.synchronize()
    elapsed = time.time() - (t0 or started)
    sys.stderr.write('\n')
    print({'train_runtime': round(elapsed, 4), 'train_samples_per_second': round(samples / elapsed, 3),
           'train_steps_per_second': round((step - warmup) / elapsed, 3), 'train_loss': round(loss.item(), 4),
           'epoch': 0.0}, flush=True)
    print(json.dumps({'samples_per_s': round(samples / elapsed, 2) if elapsed > 0 else 0.0,
                      'num_workers': args.dataloader_num_workers}), flush=True)


if __name__ == '__main__':
    main()
