#!/bin/bash
exec /opt/torch/.venv/bin/python3 /work/main/bench/train.py --config healthy.yaml --ready-file ready --pid-file pid
