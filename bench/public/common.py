"""Shared by the public-style bench jobs (bench/pid_only.sh cases pub_imagenet_j2 and
pub_module_w0): the synthetic image data of bench/imagedata.py as a torch Dataset, a small
conv net, the pid/ready files the harness waits on, and a time limit. Synthetic data only."""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import torch  # noqa: E402
from torch import nn  # noqa: E402

from imagedata import ImageSource  # noqa: E402


class SyntheticImages(torch.utils.data.Dataset):
    def __init__(self, image_size=224, decode_passes=2):
        self.src = ImageSource(image_size=image_size, decode_passes=decode_passes)

    def __len__(self):
        return len(self.src)

    def __getitem__(self, i):
        img, label = self.src[i]
        return torch.from_numpy(img), label


def small_net(classes=1000):
    def block(cin, cout):
        return nn.Sequential(nn.Conv2d(cin, cout, 3, stride=2, padding=1, bias=False),
                             nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
                             nn.Conv2d(cout, cout, 3, padding=1, bias=False),
                             nn.BatchNorm2d(cout), nn.ReLU(inplace=True))
    return nn.Sequential(block(3, 64), block(64, 128), block(128, 256), block(256, 512),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, classes))


def add_harness_args(parser):
    parser.add_argument("--pid-file", default=None, help="write this process's pid here at start")
    parser.add_argument("--ready-file", default=None, help="create this file after the warm-up steps")
    parser.add_argument("--max-seconds", default=45.0, type=float, help="stop after this long")


def harness_start(args):
    if args.pid_file:
        with open(args.pid_file + ".tmp", "w") as f:
            f.write(f"{os.getpid()}\n")
        os.replace(args.pid_file + ".tmp", args.pid_file)
    return time.time()


def harness_step(args, started, step, warmup_steps=10):
    if step == warmup_steps and args.ready_file:
        open(args.ready_file, "w").close()
    return time.time() - started < args.max_seconds
