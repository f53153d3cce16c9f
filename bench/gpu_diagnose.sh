#!/bin/bash
# [bench] Copied from the source checklist, section 4.3 "自动化排查脚本：一键执行全部初筛"
# [bench] (shared/seed/000_d50e187c06fa1e0e.txt, line 172). The seed text holds the script on one
# [bench] line (its line breaks were lost); the breaks are restored at each command and nothing
# [bench] else is changed, escapes included: bench/test_bench.py checks that joining the lines
# [bench] below with single spaces gives the seed line byte for byte. Lines starting `# [bench]`
# [bench] are ours. bench/overhead.sh runs it as written and records which commands it calls
# [bench] are missing on the host (`lsmod` and `iostat` are absent on the recorded H200) and what
# [bench] it printed: as written, the `\$`/`\"` escapes inside single-quoted awk programs are
# [bench] awk syntax errors, and a missing `lsmod` prints "ERROR: Driver modules missing".
# save as gpu_diagnose.sh
echo "=== GPU Driver Check ==="
lsmod | grep -E "nvidia|uvm|drm" || echo "ERROR: Driver modules missing"
echo -e "\n=== CUDA Context Check ==="
python3 -c "import torch; print(f'Device count: {torch.cuda.device_count()}')" 2>/dev/null || echo "ERROR: CUDA context failed"
echo -e "\n=== IO Check (last 5s) ==="
iostat -x 1 5 | tail -n 5 | awk '{if(NF>10 && \$10>50) print \"WARN: await high at \" \$1}'
echo -e "\n=== GPU Utilization (last 10s) ==="
nvidia-smi dmon -s u -d 1 -c 10 | tail -n 10 | awk '{sum+=\$3} END {print \"Avg util: \" sum/10 \"%\"}'
