# A bench job written the way pytorch/examples imagenet/main.py is
# (https://github.com/pytorch/examples/blob/main/imagenet/main.py): `-j/--workers` (default 4)
# passed as DataLoader(num_workers=args.workers, pin_memory=True). Synthetic data
# (bench/imagedata.py), a small conv net, at most --max-seconds. bench/pid_only.sh runs it
# with `-j 2` (case pub_imagenet_j2).
import argparse

import torch
import torch.nn as nn

from common import SyntheticImages, add_harness_args, harness_start, harness_step, small_net

parser = argparse.ArgumentParser(description='PyTorch ImageNet Training (bench shape)')
parser.add_argument('-j', '--workers', default=4, type=int, metavar='N',
                    help='number of data loading workers (default: 4)')
parser.add_argument('-b', '--batch-size', default=128, type=int,
                    metavar='N', help='mini-batch size (default: 128)')
parser.add_argument('--lr', '--learning-rate', default=0.1, type=float,
                    metavar='LR', help='initial learning rate', dest='lr')
parser.add_argument('--decode-passes', default=2, type=int, help='CPU cost per image')
add_harness_args(parser)


def main():
    args = parser.parse_args()
    started = harness_start(args)
    device = torch.device('cuda')
    model = small_net().to(device).to(memory_format=torch.channels_last)
    criterion = nn.CrossEntropyLoss().to(device)
    optimizer = torch.optim.SGD(model.parameters(), args.lr, momentum=0.9)
    train_dataset = SyntheticImages(decode_passes=args.decode_passes)
    train_loader = torch.utils.data.DataLoader(
        train_dataset, batch_size=args.batch_size, shuffle=False,
        num_workers=args.workers, pin_memory=True, sampler=None)
    model.train()
    for step, (images, target) in enumerate(train_loader):
        images = images.to(device, non_blocking=True).to(memory_format=torch.channels_last)
        target = target.to(device, non_blocking=True)
        with torch.autocast('cuda', dtype=torch.bfloat16):
            loss = criterion(model(images), target)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if not harness_step(args, started, step):
            break


if __name__ == '__main__':
    main()
