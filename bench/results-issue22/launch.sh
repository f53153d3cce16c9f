#!/bin/bash
# debugging a hang
CUDA_LAUNCH_BLOCKING=1 /opt/torch/.venv/bin/python3 /work/main/.dev/train.py --config config.yaml \
    --ready-file ready --pid-file pid
