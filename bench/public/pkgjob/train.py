# A bench job run as `python -m pkgjob.train` from bench/public (case pub_module_w0 of
# bench/pid_only.sh): the DataLoader is built in an imported local module (pkgjob/data.py),
# whose num_workers default is 0. Synthetic data, a small conv net, at most --max-seconds.
import argparse

import torch

from common import SyntheticImages, add_harness_args, harness_start, harness_step, small_net

from .data import build_loader


def get_args_parser():
    parser = argparse.ArgumentParser('pkgjob training', add_help=True)
    parser.add_argument('--lr', default=0.1, type=float)
    parser.add_argument('--batch_size', default=128, type=int)
    parser.add_argument('--decode_passes', default=2, type=int)
    add_harness_args(parser)
    return parser


def main(args):
    started = harness_start(args)
    model = small_net().cuda().to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    data_loader_train = build_loader(SyntheticImages(decode_passes=args.decode_passes), args.batch_size)
    for step, (samples, targets) in enumerate(data_loader_train):
        samples = samples.cuda(non_blocking=True).to(memory_format=torch.channels_last)
        with torch.autocast('cuda', dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(model(samples), targets.cuda(non_blocking=True))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if not harness_step(args, started, step):
            break


if __name__ == '__main__':
    main(get_args_parser().parse_args())
