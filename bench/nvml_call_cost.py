#!/usr/bin/env python3
"""Wall and CPU time of each NVML call `gpufix record` makes per sample (issue 26).

Run on a GPU host: `python3 bench/nvml_call_cost.py [--n 50]`. Calls libnvidia-ml.so.1 through
ctypes (no pynvml needed), each call N times on GPU 0, and prints one JSON line per call:
mean wall ms, mean CPU ms of this process (user+sys), and the return code of the last call.
Read-only: it never sets anything on the GPU.
"""
import argparse, ctypes, json, time

ap = argparse.ArgumentParser()
ap.add_argument("--n", type=int, default=50)
a = ap.parse_args()
nv = ctypes.CDLL("libnvidia-ml.so.1")
assert nv.nvmlInit_v2() == 0
dev = ctypes.c_void_p()
assert nv.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(dev)) == 0

class Util(ctypes.Structure):
    _fields_ = [("gpu", ctypes.c_uint), ("memory", ctypes.c_uint)]

class Mem(ctypes.Structure):
    _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong), ("used", ctypes.c_ulonglong)]

class Value(ctypes.Union):
    _fields_ = [("d", ctypes.c_double), ("ui", ctypes.c_uint), ("ul", ctypes.c_ulong),
                ("ull", ctypes.c_ulonglong), ("sll", ctypes.c_longlong)]

class FieldValue(ctypes.Structure):
    _fields_ = [("fieldId", ctypes.c_uint), ("scopeId", ctypes.c_uint), ("timestamp", ctypes.c_longlong),
                ("latencyUsec", ctypes.c_longlong), ("valueType", ctypes.c_int),
                ("nvmlReturn", ctypes.c_int), ("value", Value)]

def fields(*ids):
    arr = (FieldValue * len(ids))()
    for i, f in enumerate(ids):
        arr[i].fieldId = f
    rc = nv.nvmlDeviceGetFieldValues(dev, len(ids), arr)
    return rc, [(x.nvmlReturn, x.value.ull) for x in arr]

u = ctypes.c_uint()
ul = ctypes.c_ulonglong()
calls = {
    "device_by_index": lambda: nv.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(ctypes.c_void_p())),
    "utilization_rates": lambda: nv.nvmlDeviceGetUtilizationRates(dev, ctypes.byref(Util())),
    "clock_sm": lambda: nv.nvmlDeviceGetClockInfo(dev, 1, ctypes.byref(u)),
    "power_usage": lambda: nv.nvmlDeviceGetPowerUsage(dev, ctypes.byref(u)),
    "throttle_reasons": lambda: nv.nvmlDeviceGetCurrentClocksThrottleReasons(dev, ctypes.byref(ul)),
    "pcie_link_gen": lambda: nv.nvmlDeviceGetCurrPcieLinkGeneration(dev, ctypes.byref(u)),
    "pcie_link_width": lambda: nv.nvmlDeviceGetCurrPcieLinkWidth(dev, ctypes.byref(u)),
    "temperature": lambda: nv.nvmlDeviceGetTemperature(dev, 0, ctypes.byref(u)),
    "memory_info": lambda: nv.nvmlDeviceGetMemoryInfo(dev, ctypes.byref(Mem())),
    "pcie_throughput_rx": lambda: nv.nvmlDeviceGetPcieThroughput(dev, 1, ctypes.byref(u)),
    "pcie_throughput_tx": lambda: nv.nvmlDeviceGetPcieThroughput(dev, 0, ctypes.byref(u)),
    "fields_pcie_bytes_197_198": lambda: fields(197, 198)[0],
    "fields_power_instant_186": lambda: fields(186)[0],
}
for name, f in calls.items():
    f()
    w0, c0 = time.perf_counter(), time.process_time()
    for _ in range(a.n):
        rc = f()
    w1, c1 = time.perf_counter(), time.process_time()
    print(json.dumps({"call": name, "n": a.n, "wall_ms": round((w1 - w0) * 1e3 / a.n, 3),
                      "cpu_ms": round((c1 - c0) * 1e3 / a.n, 3), "rc": rc}))
# the counters move: two readings 200 ms apart
rc1, v1 = fields(197, 198); time.sleep(0.2); rc2, v2 = fields(197, 198)
print(json.dumps({"counters": "pcie_tx_rx_bytes", "first": v1, "second": v2, "rc": [rc1, rc2]}))
