#!/usr/bin/env python3
"""Time each NVML call gpufix's GPU reading (src/host/real.rs read_gpu) makes, through ctypes on
libnvidia-ml.so.1: 5 rounds, each after a fresh nvmlInit_v2; prints JSON (median and runs per call).
Read-only: it only queries. Used for bench/RESULTS.md "NVML reading cost"."""
import ctypes as C, time, json, sys
L = C.CDLL("libnvidia-ml.so.1")
res = {}
def t(name, fn, *args):
    f = getattr(L, fn, None)
    if f is None:
        res.setdefault(name, []).append(None); return None
    s = time.perf_counter(); rc = f(*args); e = time.perf_counter()
    res.setdefault(name, []).append(((e - s) * 1000, rc)); return rc
buf = lambda n=4096: C.create_string_buffer(n)
for rnd in range(5):
    s = time.perf_counter(); rc = L.nvmlInit_v2(); init = (time.perf_counter() - s) * 1000
    res.setdefault("nvmlInit_v2", []).append((init, rc))
    h = C.c_void_p()
    t("GetHandleByIndex", "nvmlDeviceGetHandleByIndex_v2", 0, C.byref(h))
    t("GetName", "nvmlDeviceGetName", h, buf(), 96)
    t("GetUUID", "nvmlDeviceGetUUID", h, buf(), 96)
    t("GetPciInfo", "nvmlDeviceGetPciInfo_v3", h, buf())
    t("GetVbios", "nvmlDeviceGetVbiosVersion", h, buf(), 32)
    t("GetPersistence", "nvmlDeviceGetPersistenceMode", h, buf())
    for c in (1, 0, 2):
        t(f"GetClockInfo{c}", "nvmlDeviceGetClockInfo", h, c, buf())
        t(f"GetMaxClockInfo{c}", "nvmlDeviceGetMaxClockInfo", h, c, buf())
    for c in (0, 2):
        t(f"GetAppClock{c}", "nvmlDeviceGetApplicationsClock", h, c, buf())
        t(f"GetDefaultAppClock{c}", "nvmlDeviceGetDefaultApplicationsClock", h, c, buf())
    t("GetThrottleReasons", "nvmlDeviceGetCurrentClocksThrottleReasons", h, buf())
    t("GetPowerUsage", "nvmlDeviceGetPowerUsage", h, buf())
    t("GetPowerLimit", "nvmlDeviceGetPowerManagementLimit", h, buf())
    t("GetPowerDefaultLimit", "nvmlDeviceGetPowerManagementDefaultLimit", h, buf())
    t("GetEnforcedPowerLimit", "nvmlDeviceGetEnforcedPowerLimit", h, buf())
    t("GetTemperature", "nvmlDeviceGetTemperature", h, 0, buf())
    t("GetTemperatureThreshold", "nvmlDeviceGetTemperatureThreshold", h, 3, buf())
    t("GetEccMode", "nvmlDeviceGetEccMode", h, buf(), buf())
    for (a, b) in ((1, 0), (1, 1), (0, 0)):
        t(f"GetTotalEccErrors{a}{b}", "nvmlDeviceGetTotalEccErrors", h, a, b, buf())
    t("GetRetiredPagesPending", "nvmlDeviceGetRetiredPagesPendingStatus", h, buf())
    for cause in (0, 1):
        cnt = C.c_uint(0)
        t(f"GetRetiredPages{cause}", "nvmlDeviceGetRetiredPages", h, cause, C.byref(cnt), None)
    # nvmlFieldValue_t is 40 bytes: fieldId, scopeId, timestamp, latencyUsec, valueType, nvmlReturn, value
    fv = buf(40 * 4)
    for i, fid in enumerate((142, 143, 144, 145)):
        C.memmove(C.addressof(fv) + 40 * i, C.byref(C.c_uint(fid)), 4)
    t("GetFieldValues", "nvmlDeviceGetFieldValues", h, 4, fv)
    t("GetCurrPcieGen", "nvmlDeviceGetCurrPcieLinkGeneration", h, buf())
    t("GetCurrPcieWidth", "nvmlDeviceGetCurrPcieLinkWidth", h, buf())
    t("GetMaxPcieGen", "nvmlDeviceGetMaxPcieLinkGeneration", h, buf())
    t("GetMaxPcieWidth", "nvmlDeviceGetMaxPcieLinkWidth", h, buf())
    s = time.perf_counter()
    rcs = [L.nvmlDeviceGetNvLinkState(h, link, buf()) for link in range(18)]
    res.setdefault("NvLinkState x18", []).append(((time.perf_counter() - s) * 1000, rcs[0]))
    t("GetComputeMode", "nvmlDeviceGetComputeMode", h, buf())
    t("GetMigMode", "nvmlDeviceGetMigMode", h, buf(), buf())
    t("GetUtilization", "nvmlDeviceGetUtilizationRates", h, buf())
    t("GetMemoryInfo", "nvmlDeviceGetMemoryInfo", h, buf())
    t("GetPerformanceState", "nvmlDeviceGetPerformanceState", h, buf())
    cnt = C.c_uint(0)
    t("GetComputeProcs_v3(count)", "nvmlDeviceGetComputeRunningProcesses_v3", h, C.byref(cnt), None)
    cnt = C.c_uint(64)
    t("GetComputeProcs_v3", "nvmlDeviceGetComputeRunningProcesses_v3", h, C.byref(cnt), buf(64 * 64))
    cnt = C.c_uint(64)
    t("GetGraphicsProcs_v3", "nvmlDeviceGetGraphicsRunningProcesses_v3", h, C.byref(cnt), buf(64 * 64))
    t("SysDriverVersion", "nvmlSystemGetDriverVersion", buf(), 80)
    t("SysCudaDriverVersion", "nvmlSystemGetCudaDriverVersion_v2", buf())
    t("SysNVMLVersion", "nvmlSystemGetNVMLVersion", buf(), 80)
    t("nvmlShutdown", "nvmlShutdown")
out = {k: {"median_ms": sorted(x[0] for x in v if x)[len(v) // 2] if all(v) else None,
           "runs_ms": [round(x[0], 3) if x else None for x in v], "rc": [x[1] if x else None for x in v]} for k, v in res.items()}
tot = sum(v["median_ms"] or 0 for k, v in out.items() if k not in ("nvmlInit_v2", "nvmlShutdown"))
out["_sum_of_medians_excl_init_ms"] = tot
json.dump(out, sys.stdout, indent=1)
