//! Collective failures as PyTorch and NCCL print them, inside whatever log holds them. Written
//! from:
//!
//! - `torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp` (pytorch/pytorch, 1.x and 2.x):
//!   `WorkNCCL::checkTimeout` / `abortTimedOutCollectives` print `<prefix>Watchdog caught
//!   collective operation timeout: <work> ran for <N> milliseconds before timing out.`, where
//!   the prefix is `[Rank R] ` (≤ 2.2) or `logPrefix()` (`[PG 1 Rank 0] `, `[PG ID 0 PG GUID
//!   0(default_pg) Rank 1] `), and `operator<<(WorkNCCL)` prints `WorkNCCL(SeqNum=S,
//!   OpType=OP, NumelIn=I, NumelOut=O, Timeout(ms)=T)` (2.x), `WorkNCCL(SeqNum=S, OpType=OP,
//!   Timeout(ms)=T)` (1.11–1.13) or `WorkNCCL(OpType=OP, TensorShape=[…], Timeout(ms)=T)`
//!   (1.8–1.10); the watchdog then prints `Exception (either an error or timeout) detected by
//!   watchdog at work: S, last enqueued NCCL work: E, last completed NCCL work: C.` (2.2+) for
//!   an error or a timeout alike, and, only `if (timedOut)`, `<logPrefix()>Timeout at NCCL work:
//!   S, last enqueued NCCL work: E, last completed NCCL work: C.` (`watchdogHandler`, read in
//!   the index's stored copy of a fork that keeps it as PyTorch 2.4–2.5 wrote it; axolotl#2267
//!   pastes it from torch 2.5's `ProcessGroupNCCL.cpp:1834`): that line alone is a timeout of
//!   work S on that rank, whatever else the paste lost;
//! - the same file, 2.2 on: `checkTimeout` builds the timeout's exception with
//!   `C10_BUILD_ERROR(DistBackendError, exceptionMsg)`, so the C++ back trace c10 attaches to it
//!   (`c10/util/Exception.cpp`: `Exception raised from <function> at <file>:<line> (most recent
//!   call first):`, then `c10/util/Backtrace.cpp`'s `frame #N: <symbol> + 0x… (0x… in <lib>)`)
//!   starts `Exception raised from checkTimeout at …ProcessGroupNCCL.cpp:N` and names
//!   `c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(` right under `c10::Error::Error`.
//!   `checkTimeout` returns before building anything unless the work's time is up, so either
//!   line is a collective timeout where the message line itself was cut off
//!   (Megatron-LM#935's paste starts at the frames);
//! - `torch/csrc/distributed/c10d/NCCLUtils.cpp` (`getNcclErrorDetailStr`): `NCCL error in:
//!   FILE:LINE, <ncclGetErrorString>, NCCL version X` followed by `ncclSystemError: System call
//!   (e.g. socket, malloc) or external library call failed or device error.`,
//!   `ncclInternalError: Internal check failed.`, `ncclUnhandledCudaError: Call to CUDA function
//!   failed.`, `ncclInvalidArgument: Invalid value for an argument.`, `ncclInvalidUsage: This
//!   usually reflects invalid usage of NCCL library.`, `ncclRemoteError: A call failed possibly
//!   due to a network error or a remote process exiting prematurely.`, then `Last error:` and
//!   NCCL's own last WARN on the next line;
//! - NVIDIA/nccl (read at 5067397c, 2.28): `ncclGetErrorString` in `src/init.cc` ("unhandled
//!   system error", "unhandled cuda error", "internal error - please report this issue to the
//!   NCCL developers", "invalid usage", "remote process exited or there was a network error"),
//!   the result enum in `src/nccl.h.in`, `src/os/linux.cc`'s shared-memory WARNs ("Error while
//!   creating shared memory segment %s (size %ld)", "Error while attaching to shared memory
//!   segment …", "Error: failed to extend %s to %ld bytes"); before `linux.cc` (2.3.7–2.12,
//!   `src/include/shm.h` `shmSetup`), `SYSCHECK(shm_allocate(*fd, shmsize), "posix_fallocate")`
//!   printed through `src/include/core.h`'s `SYSCHECKVAL` as `Call to posix_fallocate failed :
//!   <strerror>` (and 2.3.5's `Unable to allocate shared memory (%d bytes) : %s`): the same
//!   failure to create a segment in /dev/shm (and, from 2.22, `unlink shared memory %s failed,
//!   error: %s (%d)` / `munmap of shared memory … failed`, a segment NCCL could not remove or
//!   unmap: see `shm_teardown_failed`); and `src/include/checks.h`'s
//!   `Cuda failure '%s'` / `Cuda failure %d '%s'` and `Call to %s failed: %s`;
//! - the same result text after `NCCL error: ` where no file and line are printed: torch's
//!   `WorkNCCL::checkForNCCLErrors` (`ProcessGroupNCCL.cpp`, 2.x) builds an async failure as
//!   `"NCCL error: " + ncclGetErrorWithVersion(err)` (`NCCL error: remote process exited or
//!   there was a network error, NCCL version 2.21.5`), and the ctypes wrappers of vLLM and
//!   SGLang (`distributed/device_communicators/pynccl_wrapper.py`, `NCCL_CHECK`) raise
//!   `RuntimeError(f"NCCL error: {error_str}")`; wrappers that print the result code first
//!   give `NCCL error N: <text>` (`NCCL Error 2: unhandled system error` in vLLM 0.5's log);
//!   the same message quoted inside a sentence (`系统报错"NCCL error: internal error - …"。`, a
//!   blog's write-up of a vLLM failure) is read up to its closing quote;
//! - the `NCCLCHECK` macro programs print a failed call's result with: NVIDIA/nccl-tests
//!   `src/common.h` (`%s: Test NCCL failure %s:%d '%s'`, since 2.x `'%s / %s'` with
//!   `ncclGetLastError`), the NCCL developer guide's examples (`Failed, NCCL error %s:%d
//!   '%s'`) and the programs copied from either (`NCCL failure %s:%d '%s'`): FILE:LINE and
//!   `ncclGetErrorString`'s text in single quotes.
//!
//! - NVIDIA/nccl `src/include/checks.h` (2.4 through 2.28): `NCCLCHECK` / `NCCLCHECKGOTO` /
//!   `SYSCHECKGOTO` print a failed call's back trace as `INFO(NCCL_ALL, "%s:%d -> %d", __FILE__,
//!   __LINE__, res)` (2.19+ also `"%s:%d -> %d (%s)"` with `strerror(errno)`, and the
//!   `[Async thread]` suffix of `NCCLCHECKTHREAD`), one line per frame, after the `WARN` that
//!   names the reason; `res` is `ncclResult_t` of `src/nccl.h.in` (1 `ncclUnhandledCudaError`,
//!   2 `ncclSystemError`, 3 `ncclInternalError`, 4 `ncclInvalidArgument`, 5 `ncclInvalidUsage`,
//!   6 `ncclRemoteError`). Such a trace is an error result only when the same `host:pid:tid`
//!   printed a `NCCL WARN` before it: a plugin NCCL skips (`NCCL_IBEXT_DISABLE=1` gives
//!   `net.cc:55 -> 3` without a WARN) is not a failure.
//!
//! - NVIDIA/nccl `src/transport/net_ib.cc` (2.4 through 2.28): two WARNs are followed at once by
//!   the result they name, with or without a back trace after them (a log cut there, or one
//!   pasted without its INFO lines, has only the WARN): `ncclIbTest`'s `NET/IB : Got completion
//!   from peer %s with error %d, opcode %d, len %d, vendor err %d` (2.5–2.18; `with status=%d
//!   opcode=%d len=%u vendor err %u (%s)… hca %s` from 2.19, `status=%s(%d)` later) then `return
//!   ncclRemoteError;` (`ncclSystemError` before that result existed, as 2.4's `Got completion
//!   with error %d, …` did), and `ncclIbStatsCheckFatalCount`'s `communicator encountered a fatal
//!   error (detected in %s)` (2.20+, after the async thread's `async fatal event on QP`) then
//!   `return ncclSystemError;`. Such a WARN is that error, its text the reason; where the same
//!   thread's back trace follows, the trace's code names the result. Likewise
//!   `src/transport/nvls.cc`'s `Failed to bind NVLink SHARP (NVLS) Multicast memory of size %ld
//!   : CUDA error %d '%s'. …` (2.23 on, read at 5067397c), followed by `ret =
//!   ncclUnhandledCudaError`: the NVSwitch multicast NVLS needs could not be bound (a fabric
//!   manager, NVSwitch or NVLink fault, or a container without the multicast capability).
//! - NVIDIA/nccl `src/misc/socket.cc` (read at v2.16.2-1, v2.18.6-1, v2.21.5-1, v2.27.3-1 and
//!   v2.28.3-1; `src/os/linux.cc` at v2.29.3-1): the socket layer under bootstrap, the proxy and
//!   the socket transport WARNs and returns at once. `socketStartConnect: Connect to A failed :
//!   E` and `socketPollConnect: Connect to A returned N(E) errno N(E)` (2.16–2.26), `<function>:
//!   connect to A failed : E` (2.27 on; `ncclOsSocketStartConnect` / `ncclOsSocketPollConnect`
//!   from 2.29) and `socketPollConnect to A failed with error E` return `ncclSystemError`;
//!   `… exceeded retries (N)` / `… exceeded timeouts (N)` (2.16–2.26), `… connect to A returned
//!   E, exceeded error retry count after N attempts` (2.27 on), `socketPollConnect poll() failed
//!   with error E`, `socketProgressOpt: Call to recv from A failed : E` (`recv from` / `send to`
//!   from 2.27) and `socketProgress: Connection closed by remote peer A` return
//!   `ncclRemoteError`. Bootstrap, the proxy and `net_ib.cc`'s own connection pass each up with
//!   `NCCLCHECK`, so such a WARN is that error even where the paste kept it alone (a maintainer
//!   quoting one line, gpustack/gpustack#2275) or as torch relays it after `Last error:`; the IB
//!   plugin's copy of the file (`socket.c`, nccl-rdma-sharp-plugins) prints the same text. The
//!   `Net : …` wordings before 2.16 are left out: 2.12 returned `ncclSystemError` and 2.13–2.14
//!   `ncclRemoteError` for the same text, so a line alone cannot name its result (the back trace
//!   after it still does). RAS (2.24 on) may warn the same on its own connections and go on; from
//!   2.27 its sockets are made with `customRetry` (`src/ras/rasnet.cc`), so a refused,
//!   unreachable or timed-out connect of RAS retries without any WARN.
//! - aws/aws-ofi-nccl, the EFA net plugin (read at v0.9.1, v1.1.0, v1.4.0, v1.6.0, v1.7.0-aws,
//!   v1.14.0 and HEAD, 2026): `NCCL_OFI_WARN` prints `NET/OFI <message>` through NCCL's logger.
//!   The libfabric calls that build a connection's endpoint warn `Couldn't allocate endpoint.
//!   RC: %d, ERROR: %s`, `Couldn't open AV. …`, `Couldn't bind EP-CQ. …`, `Couldn't bind EP-AV.
//!   …` (1.7 on) and `Couldn't enable endpoint. …` and fail: `create_nccl_ofi_component`
//!   (`src/nccl_ofi_net.c`, 0.9 to 1.6, called from `ofi_listen` / `ofi_connect` only, so after
//!   NCCL chose the plugin) sets `ret = ncclSystemError` after each; 1.7's
//!   `nccl_ofi_init_connection` (`src/nccl_ofi_net.c`) and later
//!   `nccl_ofi_ofiutils_init_connection` / `nccl_ofi_ofiutils_ep_create`
//!   (`src/nccl_ofi_ofiutils.c[pp]`) return the error up through the endpoint a listen or
//!   connect creates. Such a WARN is that error (`ncclSystemError`). `Couldn't open a fabric
//!   provider` / `… access domain` are left out: in later releases (`src/nccl_ofi_rdma.c`,
//!   `src/nccl_ofi_sendrecv.c` at v1.9.0-aws) they run in the plugin's device set-up too, where
//!   a failure can make NCCL fall back to its own transports rather than fail the job.
//! - NVIDIA/nccl `src/proxy.cc` (2.12 through 2.30, read at v2.12.12-1, v2.14.3-1, v2.18.3-1,
//!   v2.21.5-1 and 5067397c): the proxy service thread, which runs a rank's transport setup,
//!   prints the result the operation returned itself, `[Service thread] Error encountered
//!   progressing operation=%s, res=%d, closing connection` (2.17+) and `[Proxy Service %d]
//!   Failed to execute operation %s from rank %d, retcode %d` (not while the communicator is
//!   being aborted); the rank that asked for it fails its proxy call. A WARN naming result 1–6
//!   so is that error, with no back trace after it in its own thread (the service thread's
//!   frames print before it). `Proxy Call to rank %d failed (%s)` names no result: the caller's
//!   trace after it does.
//! - NVIDIA/nccl `src/misc/ibvwrap.cc` (read at f9835511; the same macros from 2.4's
//!   `ibvwrap.cu` on) and `src/include/ibvwrap.h`: every verbs call NCCL wraps prints `Call to
//!   <ibv_call> failed` (`IBV_PTR_CHECK`, `IBV_INT_CHECK`), `Call to <ibv_call> failed with error
//!   <strerror>` (`IBV_PTR_CHECK_ERRNO`, and `IBV_INT_CHECK_RET_ERRNO` before 2.19) or `… with
//!   error <strerror> errno <N>` (2.19+) and returns `ncclSystemError`; the inline post calls
//!   print `ibv_post_send() failed with error %s, …` / `ibv_post_recv() failed with error %s`
//!   and return the same. Only the calls that build and drive a connection's queue pair and
//!   memory registration are read as the error, because `net_ib.cc` passes their result up
//!   with `NCCLCHECK` (`ibv_alloc_pd`, `ibv_create_cq`, `ibv_create_qp`, `ibv_modify_qp`,
//!   `ibv_query_qp`, `ibv_create_ah`, `ibv_reg_mr`, `ibv_reg_mr_iova2`, `ibv_reg_dmabuf_mr`,
//!   `ibv_post_send`, `ibv_post_recv`); device discovery skips a device whose `ibv_open_device`
//!   or `ibv_query_port` fails and goes on, and the `_OPTIONAL` probes (`ibv_query_ece`, …)
//!   only WARN for a supported call that failed, so those are not taken for the job's error.
//!
//! - `torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp` `HeartbeatMonitor::runLoop` (pytorch/pytorch
//!   2.4 on; read in the index's stored copy, and the same text in the backends forked from it:
//!   ProcessGroupHCCL, ProcessGroupMCCL, ProcessGroupECCL): when the watchdog thread itself makes
//!   no progress for `TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC` (480 or 600 s), the monitor logs
//!   `<logPrefix()>ProcessGroupNCCL's watchdog got stuck for <N> seconds without making progress
//!   in monitoring enqueued collectives. This typically indicates a NCCL/CUDA API … hang …` and
//!   later terminates the process "due to ProcessGroupNCCL watchdog hang"; 2.2–2.3 (and the HCCL
//!   fork) log `<logPrefix()>Heartbeat monitor timed out! Process will be terminated after dumping
//!   debug info. workMetaList_.size()=N` first and put the `… watchdog got stuck for N seconds …`
//!   sentence in the exit message. Either is a collective (or a CUDA call under one) that hangs,
//!   unless the message says the watchdog had no work (`workMetaList_.size()=0`): a hang in the
//!   process group's teardown, not in a collective (see `idle_monitors`).
//!   PyTorch 2.6–2.11 (`HeartbeatMonitor::runLoop` and `getNCCLWatchdogTimeoutExitMsg`, read in
//!   the index's stored copy of the 2.8+ `Watchdog` / `HeartbeatMonitor` classes) then logs, at
//!   FATAL through `terminateProcess` (so `logPrefix()` twice), `<logPrefix()><logPrefix()>
//!   Terminating the process after attempting to dump debug info, due to ProcessGroupNCCL
//!   watchdog hang.`: the same hang where the paste kept only that line (`exitReason` is
//!   "collective timeout or exception" for a timeout or an error the watchdog already printed,
//!   which is not read as one).
//! - `logPrefix()` (`createLogPrefix`, 2.4–2.11): `[PG ID <local id> PG GUID <uid>(<desc>) Rank
//!   <rank>] `, without `(<desc>)` when the group has none; the uid is empty for a group created
//!   without one (`[PG ID 4 PG GUID  Rank 2] `, NVIDIA/Fuser#3055 with NCCL 2.23.4) and the
//!   description is whatever name the framework gave (`99(EXPERT_MODEL_PARALLEL_GROUP)`), so
//!   the reader takes anything up to ` Rank N]`.
//! - the watchdog's state line, 2.6–2.11 (`Watchdog::runLoop`, any exception of a work, error or
//!   timeout): `<logPrefix()> failure detected by watchdog at work sequence id: S PG status: last
//!   enqueued work: E, last completed work: C`, read like the older `detected by watchdog at
//!   work: S, last enqueued NCCL work: E, …` (the last completed and enqueued work); not a
//!   timeout by itself.
//!
//! - the flight recorder's dump signal (`ProcessGroupNCCL.cpp`, pytorch/pytorch 2.4 on; read in
//!   the index's stored copy of 2.6's `watchdogHandler` / `heartbeatMonitor` and of 2.8+'s
//!   `HeartbeatMonitor::getWatchdogTimeoutErrorMsg`): when a work of any group hits an exception,
//!   "either an error or timeout", and `TORCH_NCCL_DUMP_ON_TIMEOUT` is on (the default), the
//!   watchdog logs `<logPrefix()>Broadcasting flight-recorder dump signal to other processes via
//!   TCPStore.` and writes its global rank to the store; the heartbeat monitor of every rank's
//!   default group polls it, logs `<logPrefix()>Observed flight recorder dump signal from another
//!   rank via TCPStore.` and then `<logPrefix()>Received a dump signal due to a collective timeout
//!   from  rank N and we will try our best to dump the debug info. Last enqueued NCCL work: E,
//!   last completed NCCL work: C.This is most likely caused by …` (` rank N` with its own leading
//!   space, so two spaces; `N` is -1 where the store could not be read; `from this local rank`
//!   on the rank whose own watchdog set the flag; 2.8+ prints the backend's name, `NCCL`, in
//!   `Last enqueued NCCL work`), and terminates the process `due to collective timeout or
//!   exception`. Such a line is a collective that failed on rank N (PyTorch's words say
//!   timeout; the same signal follows a collective's error) while this rank waited: the rank
//!   that printed it is not where the cause is, rank N's own log is (see `dump_signals`). The
//!   `Observed …` and `Broadcasting …` lines are read as this kind and count nothing.
//!
//! - NVIDIA/nccl `src/ras/client_support.cc` (RAS, NCCL 2.24 on; read at 12df1a11): the text
//!   report `ncclras` (or `echo STATUS | nc localhost 28028`) prints: `Job summary`, then
//!   `Communicators... (Ns)` and the table `Group     Comms     Nodes     Ranks     Ranks
//!   Ranks    Status  Errors` whose rows (`"%5d  %8d  %8d  %8s  %8d  %8d  %8s  %6s"`) give a
//!   status (`NOCOMM`, `INIT`, `RUNNING`, `FINALIZE`, `ABORT`) and errors (`OK`, or
//!   `INCOMPLETE` / `ERROR` / `MISMATCH` joined by commas); then `Errors` (`INCOMPLETE` /
//!   `Missing communicator data from N job process(es)`, `DEAD` / `N job processes are
//!   considered dead (unreachable via the RAS network)`, `#G-C (hash) ERROR` with
//!   `Initialization error(s) on N rank(s)` / `Asynchronous error(s) on N rank(s)` and
//!   `rasClientBreakDownErrors`' `N ranks reported <error>` / `Rank R reported <error> -- GPU …`,
//!   where `<error>` is RAS's own `ncclErrorToString`: "Unhandled CUDA error", "System error",
//!   "Internal error", "Invalid argument", "Invalid usage", "Remote process error") and
//!   `Warnings` (`TIMEOUT` / `Encountered N communication timeout(s) while gathering
//!   communicator data`, `#G-C (hash) MISMATCH` / `Communicator ranks have different status` /
//!   `Communicator ranks have different <Op> operation counts`). A rank's reported error is that
//!   NCCL result; a report whose rows are all `OK` shows nothing wrong (nccl#1730: RAS said OK
//!   while PyTorch timed out: the report is a moment, and says nothing of a hang in a
//!   collective every rank entered). `MISMATCH`, `INCOMPLETE` and `DEAD` are kept as figures:
//!   RAS itself says counts can differ for a moment while a collective is being launched.
//!   A terminal pastes the sentence hard-wrapped at its width, anywhere in a word
//!   (`ProcessGroupNCCL'` / `s watchdog got stuck …`, github.com/om-ai-lab/VLM-R1/issues/257):
//!   the rows are read joined.
//!
//! - `torch/csrc/distributed/c10d/logging.h` (pytorch/pytorch 2.x): the `C10D_ERROR` /
//!   `C10D_WARNING` / `C10D_INFO` macros write `[c10d] <message>`, `C10D_DEBUG` `[c10d - debug]
//!   <message>` and `C10D_TRACE` `[c10d - trace] <message>` through c10's `LOG(...)`, whose
//!   `MessageLogger` (`c10/util/logging_is_not_google_glog.h`, `c10/util/Logging.cpp`) puts
//!   `[<I|W|E|F><month-day> <HH:MM:SS>.<fraction> <file>:<line>] ` in front, where month-day is
//!   `(timeinfo->tm_mon + 1) * 100 + timeinfo->tm_mday` streamed as a plain integer before the
//!   `std::setfill('0')` that pads the clock (the expression in `Logging.cpp`'s stored copy,
//!   printed from 2.4 on): three digits from January to September (`[W427 01:04:16.149509694
//!   socket.cpp:752] [c10d] …`, gensyn-ai/rl-swarm#197), four after, and torchrun's per-rank
//!   redirect `[rankN]:` before that. Such a line (the TCPStore's socket and libuv backend,
//!   rendezvous, process-group set-up) is PyTorch's distributed log: it is read as this kind so
//!   that a paste of it alone is not "cannot tell what this is"; it names no collective failure
//!   by itself, and nothing is counted from it.
//!
//! A line is looked at only if it holds one of a few fixed markers, so a long log streams fast.

use regex::Regex;
use serde::Serialize;
use std::sync::LazyLock;

use super::scan::has;

/// One watchdog timeout (the first line seen for each sequence number and rank).
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct CollectiveTimeout {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rank: Option<u32>,
    /// Process group id where the prefix names it (`PG 1`, `PG ID 0`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pg: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
    /// `ALLREDUCE`, `_ALLGATHER_BASE`, `BROADCAST`, `COALESCED`, …
    pub op: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub numel_in: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub numel_out: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tensor_shape: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ran_for_ms: Option<u64>,
}

/// The heartbeat monitor saw the collective watchdog make no progress (a hang).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct WatchdogStuck {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rank: Option<u32>,
    /// Process group id where the prefix names it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pg: Option<String>,
    /// `… got stuck for N seconds` (absent for 2.2's `Heartbeat monitor timed out!` alone).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seconds: Option<u64>,
}

/// A collective of PyTorch's flight recorder dumps that not every rank of its group reached,
/// as the recorder's analyzer reports it (see `flight_recorder_not_joined`).
#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct NotJoined {
    /// The collective's sequence number in its group.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
    /// `nccl:all_reduce`: the recorder's profiling name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub op: Option<String>,
    /// The ranks whose dumps hold no entry for it.
    pub missing_ranks: Vec<u32>,
    /// `scheduled`, `started`, `completed` on the ranks that did reach it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
}

/// PyTorch's flight-recorder dump signal as a rank received it (see the header): a collective
/// failed (timed out, or raised an error) on the rank it names.
#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct DumpSignal {
    /// The rank that printed the line (its log prefix's `Rank N`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rank: Option<u32>,
    /// Process group id of the prefix (the default group's monitor prints it: `0`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pg: Option<String>,
    /// The rank whose collective failed (`from  rank N`); absent for `from this local rank` and
    /// for `rank -1` (the store could not be read).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from_rank: Option<u32>,
    /// `from this local rank`: the printing rank's own watchdog raised it.
    pub from_self: bool,
    /// This rank's `Last enqueued NCCL work: E` (-1: none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_enqueued: Option<i64>,
    /// This rank's `last completed NCCL work: C` (-1: none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_completed: Option<i64>,
}

/// An NCCL error result with NCCL's own reason.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct NcclError {
    /// `ncclSystemError`, `ncclInternalError`, `ncclUnhandledCudaError`, `ncclInvalidArgument`,
    /// `ncclInvalidUsage`, `ncclRemoteError`, `ncclTimeout`.
    pub result: String,
    /// The line after `Last error:` (or on it), where printed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// `FILE:LINE` of `NCCL error in:`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nccl_version: Option<String>,
    pub count: u64,
}

#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct NcclErrors {
    pub timeouts: Vec<CollectiveTimeout>,
    /// Every watchdog timeout line, including those beyond the kept list.
    pub timeout_count: u64,
    /// Distinct ranks that reported a timeout.
    pub timeout_ranks: Vec<u32>,
    /// Distinct ops that timed out.
    pub timeout_ops: Vec<String>,
    /// The heartbeat monitor's `… watchdog got stuck for N seconds …` / `Heartbeat monitor timed
    /// out!`, one per rank and process group.
    pub watchdog_stuck: Vec<WatchdogStuck>,
    /// The flight recorder analyzer's `Not all ranks joining collective …` reports: a collective
    /// some ranks of its group never reached (the hang's place, read from every rank's dump).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_joined: Vec<NotJoined>,
    /// Where a back trace shows PyTorch built a timeout's exception (`checkTimeout at FILE:LINE`,
    /// or the `WorkNCCL::checkTimeout` frame): a timeout whose message line may be missing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_raised_at: Option<String>,
    /// The flight recorder's `Received a dump signal due to a collective timeout from  rank N`
    /// lines (one per printing rank and source): a collective failed on rank N while the
    /// printing rank waited (see the header).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub dump_signals: Vec<DumpSignal>,
    /// "… detected by watchdog at work: S, last enqueued NCCL work: E, last completed NCCL
    /// work: C": the lowest completed sequence any rank reports. Signed as PyTorch keeps it:
    /// `struct ProcessGroupStatus` (`torch/csrc/distributed/c10d/logger.hpp`, 2.4 on, read in the
    /// index's stored copy) holds `int64_t lastCompletedSeq{-1}` ("initialized to be -1 to
    /// indicate no collective has been completed") and `lastEnqueuedSeq{-1}` likewise, and the
    /// watchdog prints them as they are: `-1` is a group none of whose collectives had
    /// completed (or been enqueued), not a number to drop.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_completed_work: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_enqueued_work: Option<i64>,
    pub errors: Vec<NcclError>,
    /// Distinct NCCL results named (`errors[].result`).
    pub error_results: Vec<String>,
    /// NCCL could not create or grow a shared-memory segment (`/dev/shm` too small).
    pub shm_create_failed: bool,
    /// NCCL could not attach to another process's segment (a peer gone, or /dev/shm not shared).
    pub shm_attach_failed: bool,
    /// Size of the segment NCCL asked for, bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shm_segment_bytes: Option<u64>,
    /// The first shared-memory WARN line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shm_error: Option<String>,
    /// `Bus error` in the same text (a process killed by SIGBUS touching shared memory).
    pub bus_error: bool,
    /// `Cuda failure 'out of memory'` inside NCCL.
    pub cuda_oom_in_nccl: bool,
    /// The NCCL version a `NCCL error in:` line or the log names.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nccl_version: Option<String>,
    /// Lines that carried one of these messages.
    pub lines: u64,
    /// NCCL's RAS status report, where the text holds one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ras: Option<RasReport>,
}

static PREFIX: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\[(?:PG (?:ID )?(\S+)(?: PG GUID [^\]]*?)? )?Rank (\d+)\]\s*(?:Watchdog caught|Caught collective)")
        .expect("static regex")
});
static WORK: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"WorkNCCL\(([^)]*(?:\)[^)]*)?)\)").expect("static regex"));
static RAN_FOR: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"ran for (\d+) milliseconds").expect("static regex"));
static WORK_STATE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:watchdog at work|Timeout at NCCL work|watchdog at work sequence id): (\d+),? (?:PG status: )?last enqueued (?:NCCL )?work: (-?\d+), last completed (?:NCCL )?work: (-?\d+)")
        .expect("static regex")
});
/// `<logPrefix()>Timeout at NCCL work: S` (printed only for a timed-out work, see the header).
static TIMEOUT_AT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:\[(?:PG (?:ID )?(\S+)(?: PG GUID [^\]]*?)? )?Rank (\d+)\]\s*)?Timeout at NCCL work: (\d+), last enqueued NCCL work: -?\d+")
        .expect("static regex")
});
/// The dump signal a rank's heartbeat monitor received (see the header): prefix, source, and the
/// rank's own last enqueued and completed work.
static DUMP_SIGNAL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:\[(?:PG (?:ID )?(\S+)(?: PG GUID [^\]]*?)? )?Rank (\d+)\]\s*)?Received a dump signal due to a collective timeout from\s+(this local rank|rank\s+(-?\d+))(?:.*?Last enqueued (?:\S+ )?work: (-?\d+), last completed (?:\S+ )?work: (-?\d+))?")
        .expect("static regex")
});
/// The flight recorder's other two lines about the signal (read, counting nothing).
const DUMP_SIGNAL_NOTICES: [&str; 2] = [
    "Observed flight recorder dump signal from another rank via TCPStore",
    "Broadcasting flight-recorder dump signal to other processes via TCPStore",
];
/// c10's back trace of the exception `WorkNCCL::checkTimeout` built (see the header).
static RAISED_IN_CHECK_TIMEOUT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"Exception raised from checkTimeout at (\S*ProcessGroupNCCL\.cpp:\d+)|frame #\d+: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout\(")
        .expect("static regex")
});
/// A c10d log line under c10's log prefix (see the header): `[I1107 01:20:27.770733060
/// TCPStoreLibUvBackend.cpp:119] [c10d - debug] …`, with or without torchrun's `[rankN]:`.
static C10D_LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*(?:\[rank\d+\]:)?\[[IWEF]\d{3,4} \d{2}:\d{2}:\d{2}\.\d+ [^\s\]]+:\d+\] \[c10d(?: - (?:debug|trace))?\] ")
        .expect("static regex")
});
/// The `ncclResult_t` names of a failure, as NCCL and PyTorch print them.
const RESULT_NAMES: [&str; 7] = [
    "ncclSystemError",
    "ncclInternalError",
    "ncclUnhandledCudaError",
    "ncclInvalidArgument",
    "ncclInvalidUsage",
    "ncclRemoteError",
    "ncclTimeout",
];
static RESULT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(r"\b({})\b", RESULT_NAMES.join("|"))).expect("static regex")
});
static ERROR_IN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"NCCL error in: (\S+?),\s*([^,]+?)(?:,\s*NCCL version (\S+?))?\s*$")
        .expect("static regex")
});
// an `NCCLCHECK` macro's line (see the header): FILE:LINE and the result's text in quotes
/// `NCCL error: <ncclGetErrorString>` / `NCCL error N: …` (see the header), an optional
/// `, NCCL version V` after it.
static ERROR_TEXT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"NCCL [Ee]rror(?: ([1-6]))?: ([a-z][^,]*?)(?:,\s*NCCL version (\S+?))?\s*$")
        .expect("static regex")
});
/// The same `NCCL error: <text>` between quote marks, as a write-up or a chat quotes the
/// wrapper's message inside a sentence (`系统报错"NCCL error: internal error - please report this
/// issue to the NCCL developers"。…`): the text ends at the closing quote, not at the line's end.
static QUOTED_ERROR_TEXT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"["'“「]NCCL [Ee]rror(?: ([1-6]))?: ([a-z][^"'”」,]*?)(?:,\s*NCCL version ([^\s"'”」]+?))?["'”」]"#)
        .expect("static regex")
});
static CHECK_FAILED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"NCCL (?:failure|error) (\S+?:\d+) '([^']+)'").expect("static regex")
});
static SHM_SIZE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\(size (\d+)\)|to (\d+) bytes").expect("static regex"));
static VERSION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"NCCL version (\d+\.\d+\.\d+)").expect("static regex"));

/// `NCCLCHECK`'s back-trace line: `host:pid:tid [dev] NCCL INFO file:line -> R` (R 1–6).
static CHECK_TRACE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(\S+:\d+:\d+) \[\d+\] NCCL INFO \S+?\.(?:cc|c|h|cu|cpp):\d+ -> ([1-6])\b")
        .expect("static regex")
});
/// A WARN's `host:pid:tid [dev]` prefix (the thread whose trace may follow).
/// NCCL 2.27+ (`src/debug.cc`, read at 5067397c) prints the calling function too, `[%d] %s:%d
/// (%s) NCCL WARN %s`.
static WARN_AT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(\S+:\d+:\d+) \[\d+\] \S*\s*(?:\([^()\s]*\)\s*)?NCCL WARN ").expect("static regex")
});

/// The heartbeat monitor's two wordings (see the header) with `logPrefix()` before them; the
/// optional whitespace stands for a space a word wrap took.
static STUCK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:\[(?:PG (?:ID )?(\S+)(?: PG GUID [^\]]*?)? )?Rank (\d+)\]\s*)?(?:ProcessGroup\w*'s\s?watchdog\s?got\s?stuck\s?for\s?(\d+)\s?seconds|Heartbeat\s?monitor\s?timed\s?out!|Terminating\s?the\s?process\s?after\s?attempting\s?to\s?dump\s?debug\s?info,\s?due\s?to\s?ProcessGroup\w*\s?watchdog\s?hang)")
        .expect("static regex")
});

/// The heartbeat monitor's messages in `text`, its rows joined first where a terminal wrapped
/// them (rows are joined without a separator: a hard wrap keeps the spaces on its rows).
fn watchdog_stuck(text: &str) -> Vec<WatchdogStuck> {
    let mut out: Vec<WatchdogStuck> = Vec::new();
    // (whole-text searches with searchers built once: `str::contains` is a slower search)
    if !(has!(text, "stuck") || has!(text, "monitor timed") || has!(text, "watchdog hang")) {
        return out;
    }
    // a commented-out line (a launch script's note of an earlier hang) is not one
    let joined: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .collect();
    let idle = idle_monitors(text);
    for c in STUCK.captures_iter(&joined) {
        let w = WatchdogStuck {
            rank: c.get(2).and_then(|m| m.as_str().parse().ok()),
            pg: c.get(1).map(|m| m.as_str().to_string()),
            seconds: c.get(3).and_then(|m| m.as_str().parse().ok()),
        };
        if idle.contains(&(w.rank, w.pg.clone())) {
            continue;
        }
        match out.iter_mut().find(|o| o.rank == w.rank && o.pg == w.pg) {
            Some(o) => {
                if o.seconds.is_none() {
                    o.seconds = w.seconds;
                }
            }
            None => out.push(w),
        }
    }
    out
}

/// The (rank, process group) of each heartbeat monitor whose own message says its watchdog had
/// no work to watch: `… workMetaList_.size()=0` (2.2–2.3's `Heartbeat monitor timed out!` line,
/// and the ` workMetaList_.size() = 0` the fatal exit line of some 2.3 builds ends with), and none
/// of its lines a non-zero size.
///
/// PyTorch 2.3's `ProcessGroupNCCL.cpp` (read in the index's stored copy of the 2.3 file, the
/// `heartbeatMonitor` and `~ProcessGroupNCCL` quoted here): the monitor logs `workMetaList_.size()`
/// when the watchdog's `heartbeat_` has not moved for `heartbeatTimeoutInSec_`; `workMetaList_`
/// holds the works enqueued and not yet retired, so 0 is no collective in flight on that group.
/// The destructor joins the watchdog thread first (its heartbeat stops) and only then runs
/// `abort(…)` on the communicators, stopping the monitor after it ("We need to wait for abort to
/// finish before we can safely shut down heartbeat monitoring thread"; the monitor's own comment:
/// "Or we get stuck in destructors"); when `ncclCommAbort` hangs there (2.3 logs `Future for
/// ProcessGroup abort timed out after N ms`, mit-han-lab/distrifuser#6 at exit after the run
/// finished), the monitor reports a stuck watchdog with no work: a hang in teardown, not a
/// collective that timed out or hangs.
fn idle_monitors(text: &str) -> Vec<(Option<u32>, Option<String>)> {
    const SIZE: &str = "workMetaList_.size()";
    let mut zero = Vec::new();
    let mut busy = Vec::new();
    if !text.contains(SIZE) {
        return zero;
    }
    for l in super::scan::lines(text) {
        let Some(at) = l.rfind(SIZE) else {
            continue;
        };
        let Some(c) = STUCK.captures(l) else {
            continue;
        };
        let digits: String = l[at + SIZE.len()..]
            .trim_start_matches([' ', '='])
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        let Ok(n) = digits.parse::<u64>() else {
            continue;
        };
        let key = (
            c.get(2).and_then(|m| m.as_str().parse().ok()),
            c.get(1).map(|m| m.as_str().to_string()),
        );
        if n == 0 {
            zero.push(key);
        } else {
            busy.push(key);
        }
    }
    zero.retain(|k| !busy.contains(k));
    zero
}

/// PyTorch's flight recorder analyzer (`torch/distributed/flight_recorder/components/builder.py`
/// and `utils.py`, `python -m torch.distributed.flight_recorder.fr_trace` / `torchfrtrace`, read
/// in the index's stored copies from its first version in `tools/flight_recorder/fr_trace.py`,
/// 2.5, to 2.9) reports a collective that the dumps of some ranks of its group do not hold as
/// `Not all ranks joining collective …`. The head line varies with the version: `for group
/// G:DESC collective NAME` then `Missing ranks are {…}` on the same line (2.5); `N at entry E`
/// (2.6); `: sequence number: N` (pytorch/pytorch#140969); `, sequence number: N` (2.7 on,
/// `EntryState.log`); the lines below it give `collective: nccl:all_reduce`, `missing ranks:
/// {3, 4}` and `collective state: scheduled`. Each is a hang's collective: the ranks that
/// reached it wait for the missing ones.
/// The head line of the flight recorder analyzer's report of a collective not all ranks joined.
const FLIGHT_RECORDER_HEAD: &str = "Not all ranks joining collective";

fn flight_recorder_not_joined(text: &str) -> Vec<NotJoined> {
    let mut out: Vec<NotJoined> = Vec::new();
    if !text.contains(FLIGHT_RECORDER_HEAD) {
        return out;
    }
    let ranks = |s: &str| -> Vec<u32> {
        let Some(inner) = s.split_once('{').and_then(|(_, r)| r.split_once('}')) else {
            return Vec::new();
        };
        inner
            .0
            .split(',')
            .filter_map(|r| r.trim().parse().ok())
            .take(4096)
            .collect()
    };
    let mut open = false;
    for l in super::scan::lines(text) {
        let l = after_prefix(l);
        if let Some(at) = l.find(FLIGHT_RECORDER_HEAD) {
            if out.len() >= super::MAX_ITEMS {
                break;
            }
            let rest = l[at + FLIGHT_RECORDER_HEAD.len()..].trim_start_matches([',', ':', ' ']);
            let mut n = NotJoined::default();
            if let Some(num) = rest.strip_prefix("sequence number:") {
                n.seq = num
                    .trim()
                    .split(|c: char| !c.is_ascii_digit())
                    .next()
                    .and_then(|d| d.parse().ok());
            } else if let Some((num, _)) = rest.split_once(" at entry") {
                n.seq = num.trim().parse().ok();
            } else if let Some(g) = rest.strip_prefix("for group ") {
                // 2.5: `… for group G:DESC collective NAME Missing ranks are {…}`
                if let Some((_, name)) = g.split_once(" collective ") {
                    n.op = name.split_whitespace().next().map(|o| super::clip(o, 80));
                }
                n.missing_ranks = rest
                    .split_once("Missing ranks are")
                    .map(|(_, r)| ranks(r))
                    .unwrap_or_default();
            }
            out.push(n);
            open = true;
            continue;
        }
        if l.trim().is_empty() {
            continue;
        }
        let Some(n) = out.last_mut().filter(|_| open) else {
            continue;
        };
        let t = l.trim();
        if let Some(op) = t.strip_prefix("collective: ") {
            n.op = Some(super::clip(op.trim(), 80));
        } else if let Some(r) = t.strip_prefix("missing ranks: ") {
            n.missing_ranks = ranks(r);
        } else if let Some(st) = t.strip_prefix("collective state: ") {
            n.state = Some(super::clip(st.trim(), 40));
        } else if t.starts_with("collective stack trace") || t.starts_with("Collective stack trace")
        {
            open = false;
        }
    }
    out
}

/// A collective timeout's own message: the watchdog's (`Watchdog caught collective operation
/// timeout: <work> ran for N milliseconds before timing out.`) or, with the same work and
/// tail, the one `WorkNCCL::synchronizeInternal` throws where the caller waits on the work
/// itself (`NCCL_BLOCKING_WAIT=1` / `TORCH_NCCL_BLOCKING_WAIT=1`, PyTorch 1.8 through 2.1:
/// `"[Rank ", rank_, "] ", "Caught collective operation timeout: ", (*this), " ran for ", …`,
/// read in the index's stored copies of `ProcessGroupNCCL.cpp` of that era and of the MLU and
/// MUSA backends forked from it).
fn timeout_line(line: &str) -> bool {
    line.contains("Watchdog caught collective operation timeout")
        || line.contains("Caught collective operation timeout: ")
}

/// PaddlePaddle's own NCCL failure (`paddle/fluid/platform/enforce.h`, later
/// `paddle/phi/core/enforce.h`, `build_nvidia_error_msg(ncclResult_t)`, read in the index's
/// stored copies): Paddle 2.0–2.2 print `" Nccl error, " + ncclGetErrorString(r)` (`, detail:
/// <strerror>` and advice after it for ENOSPC/EAGAIN), raised as `ExternalError:  Nccl error,
/// unhandled cuda error  (at FILE:LINE)` / `OSError: (External)  Nccl error, …`; 2.3 on print
/// `"NCCL error(" << r << "), " << ncclGetErrorString(r) << ". "` (` Detail: …` the same way)
/// and then the hint line `[Hint: 'ncclUnhandledCudaError'. …]`, which the result pattern
/// reads where it was pasted. The code is `ncclResult_t`'s number, the text NCCL's own.
static PADDLE_ERROR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:\bNccl error, ([a-z][a-z -]*[a-z])|\bNCCL error\(([1-6])\), [a-z])")
        .expect("static regex")
});

/// Paddle's `(at FILE:LINE)` after its message.
static PADDLE_AT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\(at (\S+:\d+)\)").expect("static regex"));

/// OneFlow's own NCCL failure: `OF_NCCL_CHECK` (Oneflow-Inc/oneflow
/// `oneflow/core/device/cuda_util.h`, read in the index's stored copies, the CUDA and ROCm
/// headers alike) runs the call and, on any result but `ncclSuccess`, `LOG(FATAL) << "Check
/// failed: " #condition " : " << ncclGetErrorString(r) << " (" << r << "). "` (later releases
/// add `To see more detail, please run OneFlow with system variable NCCL_DEBUG=INFO`;
/// `OF_NCCL_CHECK_OR_RETURN` builds the same text into its error): the call as written, then
/// NCCL's own text (`Check failed: ncclGroupEnd() : unhandled system error (2)`). Read where the
/// checked expression is an `nccl…(…)` call and the text is one of `ncclGetErrorString`'s.
static ONEFLOW_CHECK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"Check failed: (nccl[A-Za-z]+\([^)]*\)) : ([a-z][a-z -]*[a-z])")
        .expect("static regex")
});

/// The result a OneFlow `OF_NCCL_CHECK` line names and the call it checked (see
/// [`ONEFLOW_CHECK`]).
fn oneflow_error(line: &str) -> Option<(&'static str, &str)> {
    let c = ONEFLOW_CHECK.captures(line)?;
    Some((result_of_string(c.get(2)?.as_str())?, c.get(1)?.as_str()))
}

/// The result a PaddlePaddle NCCL failure line names (see [`PADDLE_ERROR`]).
fn paddle_error(line: &str) -> Option<&'static str> {
    let c = PADDLE_ERROR.captures(line)?;
    match (c.get(1), c.get(2)) {
        (Some(t), _) => result_of_string(t.as_str()),
        (None, Some(code)) => result_of_code(code.as_str()),
        _ => None,
    }
}

/// The NCCL version as torch printed it, in NCCL's own numbering. `getNcclVersion()`
/// (`torch/csrc/distributed/c10d/NCCLUtils.cpp`, PyTorch ≤ 1.11, and Paddle's copy in
/// `paddle/fluid/imperative/nccl_context.cc`) decoded `ncclGetVersion`'s code as
/// `major = v / 1000, minor = (v % 1000) / 100, patch = v % (major * 1000 + minor * 100)`, right
/// for the codes before NCCL 2.9 (`2708` → 2.7.8) but not for the `major * 10000 + minor * 100 +
/// patch` codes NCCL uses since (`21003`, NCCL 2.10.3, printed `21.0.3`); PyTorch 1.12 on choose
/// the base by `version < 2900`. A major of 20–29 is such a code: minor `(major - 20) * 10 +
/// minor`, the same patch.
fn nccl_version_of(printed: &str) -> String {
    let mut it = printed.splitn(3, '.');
    if let (Some(a), Some(b), Some(c)) = (it.next(), it.next(), it.next())
        && let (Ok(major), Ok(minor)) = (a.parse::<u32>(), b.parse::<u32>())
        && (20..30).contains(&major)
        && minor < 10
        && c.chars().next().is_some_and(|ch| ch.is_ascii_digit())
    {
        return format!("2.{}.{}", (major - 20) * 10 + minor, c);
    }
    printed.to_string()
}

/// `Watchdog caught collective operation timeout` broken at its first space by a word wrap.
const WRAPPED_WATCHDOG: &str = "Watchdog\ncaught collective";

/// `ncclResult_t` (`src/nccl.h.in`) by number.
/// A back-trace frame of an async job's own result: NVIDIA/nccl `src/group.cc`
/// `ncclAsyncJobMain` (2.13 on, read at v2.13.4-1, v2.18.1-1 and 5067397c) runs a communicator's init (and
/// the other jobs `ncclGroupEnd` waits for) on its own thread and, when the job returns an
/// error, prints `INFO(NCCL_INIT,"%s:%d -> %d [Async thread]", __FILE__, __LINE__,
/// job->result)`; before that `src/include/checks.h`'s `NCCLCHECKTHREAD` (2.12) and
/// `group.cc`'s own async thread (v2.11.4-1) printed the same suffix for the init thread's
/// result. `groupLaunch` collects the job's result and the group
/// call returns it to the caller, so such a frame is an error result whether or not a WARN came
/// first: `EQCHECK` / `NEQCHECK` / `SYSCHECKGOTO` print only their frame, no WARN (`"%s:%d ->
/// %d"`, from 2.19 `"%s:%d -> %d (%s)"` with `strerror(errno)`), as `src/misc/socket.cc`'s
/// `EQCHECK(ret == 1 && (pfd.revents & POLLOUT), 0)` in `socketPollConnect` does (line 505 at
/// v2.19.3-1 to v2.21.5-1, under `socket.cc:570`, `bootstrap.cc:275` and `group.cc:64` at
/// v2.20.5-1). A plugin NCCL skips fails inside the init and is passed over, so its trace never
/// reaches this frame.
fn async_frame(line: &str) -> bool {
    line.trim_end().ends_with("[Async thread]")
}

/// The first frame of a thread's back trace in NCCL's socket layer, `misc/socket.cc:N -> R`:
/// a socket that failed to connect or accept, whether or not a WARN came first. NVIDIA/nccl
/// `src/misc/socket.cc` (read at v2.16.2-1, v2.17.1-1, v2.18.3-1, v2.18.6-1, v2.19.3-1 and
/// v2.20.5-1): `socketPollConnect`, when `getsockopt(SO_ERROR)` gives anything but success,
/// `ECONNREFUSED`, `ETIMEDOUT` or `EINPROGRESS` (an unreachable host or network), sets the
/// socket's state to error and `return ncclSystemError;` with no WARN in 2.16 to 2.19; its
/// caller `socketProgressState` prints the first frame (`NCCLCHECK(socketPollConnect(sock))`,
/// `socket.cc:557` at 2.16.2, `:564` at 2.17.1, `:567` at 2.18, `:568` at 2.19.3), and 2.20 added
/// the WARN `socketPollConnect: Connect to %s returned %d(%s) errno %d(%s)` for that very
/// branch. Every other failure the file returns warns first or is an `EQCHECK`/`SYSCHECK` frame
/// of its own, and the file's callers (bootstrap, the proxy's connection, the socket transport)
/// pass the result up with `NCCLCHECK`: a connection of the job that failed. A plugin NCCL
/// skips fails in `net.cc` or the plugin's init, never here. Only `ncclSystemError` (`-> 2`) is
/// read so: an aborted communicator's sockets return `ncclInternalError` with no WARN
/// (`socketProgressOpt`'s `INFO(NCCL_NET, "socketProgressOpt: abort called"); return
/// ncclInternalError;`, v2.21.5-1), the `socket.cc:47 -> 3` frames a watchdog's abort of a
/// timed-out job leaves (NVIDIA/nccl#1610's log), which are the abort, not a failure of their own.
fn socket_layer_frame(line: &str) -> bool {
    let frame = line
        .split_once(" NCCL INFO ")
        .map_or(line, |(_, m)| m)
        .trim_start();
    frame.starts_with("misc/socket.cc:")
        && frame
            .split_once(" -> ")
            .is_some_and(|(_, r)| r.split_whitespace().next() == Some("2"))
}

/// `file:line` of a back-trace frame and the `(strerror)` after its code, if printed
/// (`misc/socket.cc:505 -> 2 (Operation now in progress)`).
fn frame_at(line: &str) -> (String, Option<String>) {
    let after = line
        .split_once(" NCCL INFO ")
        .map_or(line, |(_, m)| m)
        .trim();
    let at = after.split_whitespace().next().unwrap_or("").to_string();
    let why = after
        .split_once(" -> ")
        .and_then(|(_, r)| r.split_once(" ("))
        .and_then(|(_, r)| r.strip_suffix(')'))
        .filter(|w| !w.is_empty())
        .map(|w| super::clip(w, super::MAX_TEXT));
    (super::clip(&at, 200), why)
}

fn note_traced(traced: &mut Vec<String>, thread: &str) {
    if traced.len() < super::MAX_ITEMS && !traced.iter().any(|t| t == thread) {
        traced.push(thread.to_string());
    }
}

fn result_of_code(c: &str) -> Option<&'static str> {
    Some(match c {
        "1" => "ncclUnhandledCudaError",
        "2" => "ncclSystemError",
        "3" => "ncclInternalError",
        "4" => "ncclInvalidArgument",
        "5" => "ncclInvalidUsage",
        "6" => "ncclRemoteError",
        _ => return None,
    })
}

/// ncclGetErrorString's text → the result's name (an `NCCL error in:` line gives only the text).
fn result_of_string(s: &str) -> Option<&'static str> {
    let s = s.trim();
    Some(if s.starts_with("unhandled system error") {
        "ncclSystemError"
    } else if s.starts_with("unhandled cuda error") {
        "ncclUnhandledCudaError"
    } else if s.starts_with("internal error") {
        "ncclInternalError"
    } else if s.starts_with("invalid argument") {
        "ncclInvalidArgument"
    } else if s.starts_with("invalid usage") {
        "ncclInvalidUsage"
    } else if s.starts_with("remote process exited") {
        "ncclRemoteError"
    } else {
        return None;
    })
}

/// One fast check per line before any regex runs.
/// The result NCCL returns right after this WARN message (see the header): IB completions with
/// an error status, and a communicator an IB async event made fatal.
fn warn_result(warn: &str) -> Option<&'static str> {
    let w = warn.trim();
    if let Some(rest) = w
        .strip_prefix("NET/IB : Got completion from peer ")
        .or_else(|| w.strip_prefix("NET/IB: Got completion from peer "))
        && (rest.contains(" with error ") || rest.contains(" with status="))
    {
        return Some("ncclRemoteError");
    }
    // 2.4's wording, before the peer was named and before ncclRemoteError existed
    if w.starts_with("NET/IB : Got completion with error ") {
        return Some("ncclSystemError");
    }
    if w.starts_with("communicator encountered a fatal error (detected in ") {
        return Some("ncclSystemError");
    }
    // `src/transport/nvls.cc` (`nvlsAllocateMem`, 2.23 on, read at 5067397c): a failed
    // `cuMulticastBindMem` warns `Failed to bind NVLink SHARP (NVLS) Multicast memory of size %ld
    // : CUDA error %d '%s'. …` then `ret = ncclUnhandledCudaError; goto fail3;`
    if w.starts_with("Failed to bind NVLink SHARP (NVLS) Multicast memory of size ") {
        return Some("ncclUnhandledCudaError");
    }
    if cuda_failure_warn(w) {
        return Some("ncclUnhandledCudaError");
    }
    if verbs_call_failed(w) {
        return Some("ncclSystemError");
    }
    if shm_teardown_failed(w) {
        return Some("ncclSystemError");
    }
    if ofi_endpoint_failed(w) {
        return Some("ncclSystemError");
    }
    if let Some(r) = socket_warn_result(w) {
        return Some(r);
    }
    if connect_address_failed(w) {
        return Some("ncclSystemError");
    }
    if net_init_failed(w) {
        return Some("ncclInvalidUsage");
    }
    if duplicate_gpu(w) {
        return Some("ncclInvalidUsage");
    }
    // the proxy service thread names the result the operation it ran for a rank returned
    let code = |after: &str| -> Option<&'static str> {
        let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
        result_of_code(&digits)
    };
    if let Some(rest) = w.strip_prefix("[Service thread] Error encountered progressing operation=")
        && let Some((_, after)) = rest.split_once(", res=")
    {
        return code(after);
    }
    if w.starts_with("[Proxy Service ")
        && w.contains("] Failed to execute operation ")
        && let Some((_, after)) = w.split_once(", retcode ")
    {
        return code(after);
    }
    None
}

/// Two ranks of one host on the same GPU: NVIDIA/nccl `src/init.cc` (`initTransportsRank`, read
/// at v2.18.1-1 and 5067397c) compares each peer's `hostHash` and `busId` with its own and, on a
/// match, `WARN("Duplicate GPU detected : rank %d and rank %d both on CUDA device %lx", rank, i,
/// busId); ret = ncclInvalidUsage; goto fail;`: the communicator's init fails with that result
/// (torch relays it as `ncclInvalidUsage … Last error: Duplicate GPU detected : …`). The body
/// `rank %d and rank %d both on CUDA device %lx` is the format's own and no other NCCL message
/// has it, so it is read wherever a paste keeps it: after NCCL's words, or retyped behind the
/// poster's own `Error: ` (thomaskalnik.com's 24-GPU DeepSeek run, h142).
fn duplicate_gpu(w: &str) -> bool {
    DUPLICATE_GPU.is_match(w)
}

static DUPLICATE_GPU: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:^|Duplicate GPU detected : |^Error: )rank \d+ and rank \d+ both on CUDA device [0-9a-fA-F]+\b")
        .expect("static regex")
});

/// NCCL could not set up any network for the communicator: NVIDIA/nccl `src/plugin/net.cc`
/// `ncclNetInit` (2.27 on, read at v2.27.3-1, v2.28.3-1 and 5067397c) tries the plugins
/// NCCL_NET_PLUGIN names, then its internal IB and Socket, and where none initializes and is
/// assigned to the communicator `WARN("Failed to initialize any NET plugin"); return
/// ncclInvalidUsage;`; `src/net.cc` `ncclNetInit` (2.12 to 2.26, read at v2.12.12-1, v2.18.1-1
/// and v2.23.4-1) `WARN("Error: network %s not found.", …); return ncclInvalidUsage;` where no
/// enabled network matches NCCL_NET (a plugin that failed to load or initialize, a misspelt
/// name). The communicator's init fails with that result.
fn net_init_failed(w: &str) -> bool {
    w.starts_with("Failed to initialize any NET plugin")
        || (w.starts_with("Error: network ") && w.trim_end().ends_with(" not found."))
}

/// A WARN that is CUDA's failure inside NCCL: NVIDIA/nccl `src/include/checks.h` (`CUDACHECK`,
/// `CUDACHECKGOTO`) and `src/include/cudawrap.h` (`CUCHECK`, `CUCHECKGOTO`), read at 5067397c
/// (2.28) and v2.21.5-1, are the only WARNs that print `Cuda failure '%s'` / `Cuda failure %d
/// '%s'`, and each is followed at once by `return ncclUnhandledCudaError` (or `RES =
/// ncclUnhandledCudaError; goto label`, the function returning RES: `ncclInitKernelsForDevice`
/// in `src/enqueue.cc`, whose result `init.cc` checks with `NCCLCHECK`); the `…IGNORE` forms
/// print the same words at INFO and go on. So the WARN alone, where the paste stops at it or
/// lost the INFO lines after it, is NCCL's `ncclUnhandledCudaError` with the CUDA text as its
/// reason (h108: PKU-YuanGroup/Open-Sora-Plan#386's `enqueue.cc:1085 NCCL WARN Cuda failure
/// 'out of memory'`, titled "NCCL Error 1: unhandled cuda error"). `w` is the WARN's message.
pub fn cuda_failure_warn(w: &str) -> bool {
    let w = w.trim_start();
    w.starts_with("Cuda failure '")
        || w.strip_prefix("Cuda failure ").is_some_and(|r| {
            let digits = r.bytes().take_while(u8::is_ascii_digit).count();
            digits > 0 && r[digits..].starts_with(" '")
        })
}

/// True when a line of `text` is NCCL's `NCCL WARN Cuda failure …` (see [`cuda_failure_warn`]):
/// NCCL returned `ncclUnhandledCudaError`, the CUDA failure being its reason.
pub fn cuda_failure_warned(text: &str) -> bool {
    text.contains("Cuda failure")
        && text.lines().any(|l| {
            l.contains("Cuda failure")
                && l.split_once(" WARN ")
                    .is_some_and(|(_, w)| cuda_failure_warn(w))
        })
}

/// NCCL 2.4–2.9's socket connect failing: `connectAddress` of NVIDIA/nccl `src/include/socket.h`
/// (read at v2.4.8-1, v2.5.6-1, v2.6.4-1, v2.7.3-1, v2.7.8-1, v2.8.4-1 and v2.9.9-1) gives up on
/// any errno but a refused or timed-out connect it is still retrying with `WARN("Connect to %s
/// failed : %s", socketToString(&remoteAddr->sa, line), strerror(errno)); return
/// ncclSystemError;`, the address as `socketToString` prints it, `<host><<port>>` (an IPv6
/// link-local one with its `%<interface>`). Bootstrap and the socket transport pass the result up
/// with `NCCLCHECK`, so the WARN is that error where the paste kept no back trace after it
/// (wenet-e2e/wenet#1891, torch 1.9's NCCL 2.7.8: `include/socket.h:403 NCCL WARN Connect to
/// fe80::…%6<57335> failed : Network is unreachable`). 2.10–2.12 prefixed it `Net : ` and
/// 2.13–2.14 returned `ncclRemoteError` for that wording (see the header), and 2.16 on names the
/// function first (see [`socket_warn_result`]): those texts are not this one. Read only after
/// ` WARN ` (a line without NCCL's header could be anyone's words).
fn connect_address_failed(w: &str) -> bool {
    static CONNECT_ADDRESS: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^Connect to \S+<\d+> failed : \S").expect("static regex"));
    CONNECT_ADDRESS.is_match(w)
}

/// The result NCCL's socket layer returns right after one of its WARNs (see the header):
/// NVIDIA/nccl `src/misc/socket.cc` 2.16–2.28 (`src/os/linux.cc` from 2.29, the same text with
/// `ncclOs` before the function's name), read at v2.16.2-1, v2.18.6-1, v2.21.5-1, v2.27.3-1,
/// v2.28.3-1 and v2.29.3-1.
fn socket_warn_result(w: &str) -> Option<&'static str> {
    const CONNECT: [&str; 4] = [
        "socketStartConnect: ",
        "socketPollConnect: ",
        "ncclOsSocketStartConnect: ",
        "ncclOsSocketPollConnect: ",
    ];
    if let Some(rest) = CONNECT.iter().find_map(|f| w.strip_prefix(f)) {
        // the retries given up: `exceeded retries (N)` / `exceeded timeouts (N)` (2.16–2.26),
        // `connect to A returned E, exceeded error retry count after N attempts` (2.27 on)
        if rest.starts_with("exceeded retries (")
            || rest.starts_with("exceeded timeouts (")
            || (rest.starts_with("connect to ")
                && rest.contains(", exceeded error retry count after "))
        {
            return Some("ncclRemoteError");
        }
        // any other errno: `Connect to A failed : E` (2.16–2.26), `connect to A failed : E`
        // (2.27 on), and `socketPollConnect`'s `Connect to A returned N(E) errno N(E)`
        // (2.16–2.26)
        let to = rest.starts_with("Connect to ") || rest.starts_with("connect to ");
        if to
            && (rest.contains(" failed : ")
                || (rest.contains(" returned ") && rest.contains(") errno ")))
        {
            return Some("ncclSystemError");
        }
        return None;
    }
    // `poll()` itself failing: `socketPollConnect poll() failed with error E` (2.16–2.26),
    // `socketPollConnect to A failed with error E` (2.27–2.28, `ncclOsSocketPollConnect` 2.29)
    if w.starts_with("socketPollConnect poll() failed with error ") {
        return Some("ncclRemoteError");
    }
    if (w.starts_with("socketPollConnect to ") || w.starts_with("ncclOsSocketPollConnect to "))
        && w.contains(" failed with error ")
    {
        return Some("ncclSystemError");
    }
    // an established connection's send or receive failing, or its peer gone
    if let Some(rest) = w
        .strip_prefix("socketProgressOpt: Call to ")
        .or_else(|| w.strip_prefix("ncclOsSocketProgressOpt: Call to "))
        && (rest.starts_with("recv from ") || rest.starts_with("send to "))
        && rest.contains(" failed : ")
    {
        return Some("ncclRemoteError");
    }
    if w.starts_with("socketProgress: Connection closed by remote peer ") {
        return Some("ncclRemoteError");
    }
    None
}

/// A result WARN of `net_ib.cc` (see [`warn_result`]) without NCCL's `host:pid:tid [dev]
/// file:line NCCL WARN` header: NVIDIA/nccl `src/debug.cc` (2.4 through 2.28) keeps every WARN's
/// message, formatted from its `fmt` alone, as `ncclLastError`, and torch's
/// `getNcclErrorDetailStr` (`NCCLUtils.cpp`) prints `ncclGetLastError` on the line after `Last
/// error:`; posters paste that line with or without the one above it. Only the IB wordings
/// that start NCCL's own message are read this way (`NET/IB : Got completion …`, `NET/IB: Got
/// completion …`, `communicator encountered a fatal error …`), after a launcher's `[rank0]: `.
fn relayed_warn_result(line: &str) -> Option<&'static str> {
    if line.contains(" WARN ") {
        return None;
    }
    let t = after_prefix(line);
    if t.starts_with("NET/IB : Got completion ")
        || t.starts_with("NET/IB: Got completion ")
        || t.starts_with("communicator encountered a fatal error (detected in ")
        || t.starts_with("Failed to bind NVLink SHARP (NVLS) Multicast memory of size ")
        || duplicate_gpu(t)
    {
        return warn_result(t);
    }
    // the socket layer's messages start with the function's own name, which no other text does
    socket_warn_result(t)
}

/// NCCL's WARN for a shared-memory segment it could not remove or unmap, which its caller
/// returns as `ncclSystemError`: NVIDIA/nccl `src/misc/shmutils.cc` (read at v2.12.7-1,
/// v2.21.5-1, v2.22.3-1, v2.28.3-1; `src/os/linux.cc` `ncclOsShmClose` / `ncclOsShmUnlink` at
/// 5067397c). `ncclShmClose` and `ncclShmUnlink` warn `unlink shared memory %s failed, error: %s`
/// and set `ret = ncclSystemError`, but 2.12–2.21's `ncclShmOpen` warned the same text when the
/// last peer's unlink of a segment it had attached failed and went on with `ncclSuccess`. 2.22
/// added `(%d)` (errno) to all three and made `ncclShmOpen`'s an INFO, so only the WARN that
/// ends in the errno in parentheses is the error; the older wording alone may be an attach
/// that succeeded (the NCCL guide's systemd example, `runtime_and_mpi_issues.rst`, prints that
/// older line: the crash it describes is a later error). `munmap of shared memory failed`
/// (2.12), `munmap of shared memory %p size %ld failed, error: %s` (2.19+, ` (%d)` from 2.22)
/// is followed by `ncclSystemError` in every version.
fn shm_teardown_failed(warn: &str) -> bool {
    if let Some(rest) = warn.strip_prefix("unlink shared memory ") {
        let rest = rest.trim_end();
        return rest.contains(" failed, error: ")
            && rest.strip_suffix(')').is_some_and(|r| {
                r.rsplit_once(" (")
                    .is_some_and(|(_, n)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            });
    }
    warn.starts_with("munmap of shared memory ") && warn.contains(" failed")
}

/// aws-ofi-nccl's WARN for a libfabric call that builds a connection's endpoint (see the
/// header): `NET/OFI Couldn't open AV. RC: -22, ERROR: Invalid argument`.
fn ofi_endpoint_failed(warn: &str) -> bool {
    const ENDPOINT: [&str; 5] = [
        "allocate endpoint. RC: ",
        "open AV. RC: ",
        "bind EP-CQ. RC: ",
        "bind EP-AV. RC: ",
        "enable endpoint. RC: ",
    ];
    warn.strip_prefix("NET/OFI Couldn't ")
        .is_some_and(|rest| ENDPOINT.iter().any(|p| rest.starts_with(p)))
}

/// NCCL's verbs wrapper WARN for a call whose failure `net_ib.cc` passes up (see the header):
/// `Call to ibv_modify_qp failed with error Connection timed out`, `ibv_post_send() failed …`.
fn verbs_call_failed(warn: &str) -> bool {
    const FATAL: [&str; 11] = [
        "alloc_pd",
        "create_cq",
        "create_qp",
        "modify_qp",
        "query_qp",
        "create_ah",
        "reg_mr",
        "reg_mr_iova2",
        "reg_dmabuf_mr",
        "post_send",
        "post_recv",
    ];
    let call_of = |rest: &str| -> String {
        rest.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    if let Some(rest) = warn.strip_prefix("Call to ibv_") {
        let name = call_of(rest);
        return FATAL.contains(&name.as_str()) && rest[name.len()..].starts_with(" failed");
    }
    if let Some(rest) = warn.strip_prefix("ibv_") {
        let name = call_of(rest);
        return (name == "post_send" || name == "post_recv")
            && rest[name.len()..].starts_with("() failed");
    }
    false
}

fn marked(line: &str) -> bool {
    line.contains("Watchdog caught")
        || line.contains("Caught collective")
        || line.contains("Nccl error, ")
        || line.contains("NCCL work:")
        || line.contains("nccl")
        || line.contains("NCCL error")
        || line.contains("NCCL Error")
        || line.contains("shared memory segment")
        || line.contains("failed to extend")
        || is_old_shm_create(line)
        || line.contains("Bus error")
        || line.contains("Cuda failure")
        || line.contains("Last error")
        || line.contains("NCCL failure")
        || line.contains(" -> ")
        || line.contains("checkTimeout")
        || line.contains("work sequence id")
        || line.contains("dump signal")
}

/// `NCCL error: <text>` naming one of `ncclGetErrorString`'s texts, or its result code
/// before it: (result, NCCL version where printed).
fn error_text(line: &str) -> Option<(&'static str, Option<&str>)> {
    let c = ERROR_TEXT
        .captures(line)
        .filter(|c| {
            c.get(1).is_some()
                || c.get(2)
                    .is_some_and(|t| result_of_string(t.as_str()).is_some())
        })
        .or_else(|| QUOTED_ERROR_TEXT.captures(line))?;
    let r = match c.get(1) {
        Some(code) => result_of_code(code.as_str())?,
        None => result_of_string(c.get(2)?.as_str())?,
    };
    Some((r, c.get(3).map(|m| m.as_str())))
}

/// An `NCCLCHECK` macro's line naming one of `ncclGetErrorString`'s texts: (FILE:LINE, result).
fn check_failed(line: &str) -> Option<(&str, &'static str)> {
    let c = CHECK_FAILED.captures(line)?;
    let r = result_of_string(c.get(2)?.as_str())?;
    Some((c.get(1)?.as_str(), r))
}

/// Markers this reader recognises inside a larger paste.
pub fn recognised_line(line: &str) -> bool {
    timeout_line(line)
        // the same message's second row when a word wrap broke it after `Watchdog`
        || line.starts_with("caught collective operation timeout: WorkNCCL(")
        || RESULT.is_match(line)
        || TIMEOUT_AT.is_match(line)
        || RAISED_IN_CHECK_TIMEOUT.is_match(line)
        || line.contains("NCCL error in: ")
        || error_text(line).is_some()
        || paddle_error(line).is_some()
        || oneflow_error(line).is_some()
        || check_failed(line).is_some()
        || CHECK_TRACE.is_match(line)
        || (line.contains("NCCL WARN") && line.contains("shared memory segment"))
        // a back trace's frame in NCCL's segment set-up (see `shm_bus_error`)
        || line.contains("ncclShmOpen(")
        // shmutils.cc's message with NCCL's own segment name, its `host:pid:tid [rank]` prefix
        // and `NCCL WARN` dropped by a launcher that relays the worker's stderr (Ray's
        // `(Runner pid=N) …`, github.com/hiyouga/EasyR1/issues/228)
        || line.contains("Error while creating shared memory segment /dev/shm/nccl-")
        || line.contains("Error while attaching to shared memory segment /dev/shm/nccl-")
        || line
            .split_once(" WARN ")
            .is_some_and(|(_, w)| warn_result(w).is_some())
        || relayed_warn_result(line).is_some()
        // PyTorch's distributed log itself (no failure by itself, see the header)
        || C10D_LINE.is_match(line)
        // the flight recorder's dump signal (see the header)
        || DUMP_SIGNAL.is_match(line)
        || DUMP_SIGNAL_NOTICES.iter().any(|n| line.contains(n))
        // NCCL's RAS report (see the header): its communicator table's heading
        || RAS_HEADING.is_match(line)
}

pub fn looks_like(text: &str) -> bool {
    looks_like_in(&super::scan::Late::alone(text))
}

/// [`looks_like`] of a text whose late searches are made once ([`super::scan::Late`]).
pub(crate) fn looks_like_in(late: &super::scan::Late<'_>) -> bool {
    let text = late.text();
    late.lines(super::scan::Set::NcclErrors).any(recognised_line)
        // (each reads nothing from a text without its words)
        || late.holds(super::scan::Set::NcclWhole)
            && (!watchdog_stuck(text).is_empty() || !flight_recorder_not_joined(text).is_empty())
}

/// The words without one of which [`watchdog_stuck`] and [`flight_recorder_not_joined`] read
/// nothing.
pub(crate) const WHOLE_TEXT_WORDS: [&str; 4] = [
    "stuck",
    "monitor timed",
    "watchdog hang",
    FLIGHT_RECORDER_HEAD,
];

/// The search of [`looks_like`]: every line [`recognised_line`] accepts holds a match.
pub(crate) fn anchors() -> &'static Regex {
    // only lines holding one of these (one phrase of each conjunction, and RESULT's own
    // pattern) can be recognised: the text is searched for them once, not line by line
    static ANCHORS: LazyLock<Regex> = LazyLock::new(|| {
        let p = super::scan::phrases(ANCHOR_PHRASES);
        // CHECK_TRACE from its first literal on (`NCCL INFO file:line -> N`): a pattern that
        // starts with `\S+` gives the search no literal to skip ahead by, and the whole text
        // was scanned at ~600 MB/s; each line found is tested in full below
        Regex::new(&format!(
            "{}|{}|{}",
            p.as_str(),
            RESULT.as_str(),
            CHECK_TRACE_ANCHOR
        ))
        .expect("static regex")
    });
    &ANCHORS
}

/// The part of [`anchors`] that finds CHECK_TRACE's lines.
const CHECK_TRACE_ANCHOR: &str = r"NCCL INFO \S+?\.(?:cc|c|h|cu|cpp):\d+ -> [1-6]\b";

/// Literal text one of which every match of [`anchors`] holds: its phrases, RESULT's words
/// and [`CHECK_TRACE_ANCHOR`]'s file suffixes (for a search of literals that finds the lines
/// its regex then tests).
pub(crate) fn anchor_literals() -> Vec<&'static str> {
    let mut l = ANCHOR_PHRASES.to_vec();
    l.extend(RESULT_NAMES);
    l.extend([".cc:", ".c:", ".h:", ".cu:", ".cpp:"]);
    l
}

/// The phrases of [`anchors`].
const ANCHOR_PHRASES: &[&str] = &[
    "Watchdog caught collective operation timeout",
    "caught collective operation timeout: WorkNCCL(",
    "Caught collective operation timeout: ",
    "NCCL error(",
    "Nccl error, ",
    "NCCL error in: ",
    "NCCL error ",
    "NCCL error: ",
    "NCCL Error ",
    "NCCL failure ",
    // `oneflow_error`
    "Check failed: nccl",
    "shared memory segment",
    "ncclShmOpen(",
    "Got completion from peer ",
    "communicator encountered a fatal error",
    "Failed to bind NVLink SHARP (NVLS) Multicast memory",
    "Error encountered progressing operation=",
    "] Failed to execute operation ",
    "WARN Call to ibv_",
    "WARN ibv_post_",
    "WARN NET/OFI Couldn't ",
    // `net_init_failed`
    "WARN Failed to initialize any NET plugin",
    "WARN Error: network ",
    // `cuda_failure_warn`
    "Cuda failure ",
    // `shm_teardown_failed`
    "WARN unlink shared memory ",
    "WARN munmap of shared memory ",
    // the socket layer's WARNs, with or without their header (`socket_warn_result`)
    "ocketStartConnect",
    "ocketPollConnect",
    // `connect_address_failed` (2.4–2.9)
    "WARN Connect to ",
    "ocketProgressOpt: Call to ",
    "socketProgress: Connection closed by remote peer ",
    "Timeout at NCCL work: ",
    "Received a dump signal due to a collective timeout from",
    "Observed flight recorder dump signal from another rank via TCPStore",
    "Broadcasting flight-recorder dump signal to other processes via TCPStore",
    "Exception raised from checkTimeout at ",
    "::WorkNCCL::checkTimeout(",
    "] [c10d] ",
    "] [c10d - debug] ",
    "] [c10d - trace] ",
    "Ranks    Status  Errors",
    // `duplicate_gpu`
    " both on CUDA device ",
];

fn parse_work(inner: &str, t: &mut CollectiveTimeout) {
    // `SeqNum=5, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000`; a TensorShape's
    // brackets may hold commas
    let mut depth = 0i32;
    let mut start = 0;
    let mut fields = Vec::new();
    for (i, c) in inner.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' if depth == 0 => {
                fields.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    fields.push(&inner[start..]);
    for f in fields {
        let Some((k, v)) = f.trim().split_once('=') else {
            continue;
        };
        let v = v.trim();
        match k.trim() {
            "SeqNum" => t.seq = v.parse().ok(),
            "OpType" => t.op = super::clip(v, 60),
            "NumelIn" => t.numel_in = v.parse().ok(),
            "NumelOut" => t.numel_out = v.parse().ok(),
            "TensorShape" => t.tensor_shape = Some(super::clip(v, 120)),
            "Timeout(ms)" => t.timeout_ms = v.parse().ok(),
            _ => {}
        }
    }
}

fn note_result(out: &mut NcclErrors, result: &str) -> Option<usize> {
    if let Some(i) = out.errors.iter().position(|e| e.result == result) {
        out.errors[i].count += 1;
        return Some(i);
    }
    if out.errors.len() >= super::MAX_ITEMS {
        return None;
    }
    out.errors.push(NcclError {
        result: result.to_string(),
        last_error: None,
        location: None,
        nccl_version: None,
        count: 1,
    });
    out.error_results.push(result.to_string());
    Some(out.errors.len() - 1)
}

/// The text after a line prefix a launcher adds (`[rank0]: `, `(VllmWorkerProcess pid=87)
/// ERROR 07-19 10:59:03 file.py:226] `): what follows the last `] ` or `]: ` before `s`.
fn after_prefix(line: &str) -> &str {
    let t = line.trim();
    match t.rfind("]: ").map(|i| i + 3).or_else(|| {
        t.strip_prefix('[')
            .and_then(|_| t.find("] "))
            .map(|i| i + 2)
    }) {
        Some(i) if i < t.len() => t[i..].trim(),
        _ => t,
    }
}

/// NCCL's reason as the paste carries it, back to NCCL's words (`None`: nothing to undo).
/// NVIDIA/nccl's messages are printf formats of plain words, numbers and addresses (read at
/// v2.27.5-1 and v2.28.9-1: `src/transport/net_ib.cc` `NET/IB: Got completion from peer %s with
/// status=%d …`, the peer `ncclSocketToString`'s `ip<port>`; `src/init.cc` `Duplicate GPU
/// detected : rank %d and rank %d both on CUDA device %lx`): no markdown link and no caret.
/// Two things a paste adds to them are undone:
/// - a rich-text editor's or GitHub's autolink of text that looks like a host (`10.1.3.201`,
///   `net_ib.cc:101`) stored as `[T](http://T/)`: the link whose target is its own text behind
///   `http://` or `https://` (a trailing `/` allowed) is put back to `T` (nccl#1710); a link
///   with other text is the poster's and kept;
/// - CPython 3.11+'s traceback underline (`^` under the failing expression), which several
///   ranks writing to one stderr interleave into the lines of each other's errors, so a
///   reason line ends in `^` (`… CUDA device ac000^`, DEIMv2#155): trailing `^` and the
///   spaces among them are cut.
fn nccls_words(reason: &str) -> Option<String> {
    let mut out = reason.to_string();
    let mut changed = false;
    if out.contains("](http") {
        let mut from = 0;
        while let Some(at) = out[from..].find("](http").map(|i| i + from) {
            let open = out[..at].rfind('[');
            let close = out[at + 2..].find(')').map(|i| i + at + 2);
            let (Some(open), Some(close)) = (open, close) else {
                break;
            };
            let text = &out[open + 1..at];
            let url = &out[at + 2..close];
            let target = url
                .strip_prefix("http://")
                .or_else(|| url.strip_prefix("https://"))
                .map(|t| t.strip_suffix('/').unwrap_or(t));
            if !text.is_empty() && !text.contains(['[', ']']) && target == Some(text) {
                let text = text.to_string();
                out.replace_range(open..=close, &text);
                from = open + text.len();
                changed = true;
            } else {
                from = at + 2;
            }
        }
    }
    if out.ends_with('^') {
        let cut = out.trim_end_matches(['^', ' ']);
        if !cut.is_empty() {
            out = cut.to_string();
            changed = true;
        }
    }
    changed.then_some(out)
}

pub fn parse_nccl_errors(text: &str) -> NcclErrors {
    // a text wrapped at word boundaries (a commit message, an e-mail: pytorch/pytorch#123023's
    // test plan at 72 columns) breaks `[Rank 0] Watchdog` / `caught collective operation
    // timeout: WorkNCCL(…`: the space the wrap took is put back before reading
    let unwrapped;
    let text = if text.contains(WRAPPED_WATCHDOG) {
        unwrapped = text
            .replace(
                "Watchdog\r\ncaught collective",
                "Watchdog caught collective",
            )
            .replace(WRAPPED_WATCHDOG, "Watchdog caught collective");
        unwrapped.as_str()
    } else {
        text
    };
    let mut out = NcclErrors {
        watchdog_stuck: watchdog_stuck(text),
        not_joined: flight_recorder_not_joined(text),
        ..NcclErrors::default()
    };
    // `Last error:` alone on its line: NCCL's reason is the next line
    // (error, the text before `Last error:`: a launcher's prefix the reason line repeats)
    let mut want_last_error: Option<(usize, String)> = None;
    // the error the last result line named; `fresh` while an `NCCL error in:` line has counted
    // it and the result line that follows it has not been seen yet
    let mut last_result: Option<usize> = None;
    let mut fresh = false;
    let mut last_warn: Option<String> = None;
    // the thread (`host:pid:tid`) of the last WARN, until its back trace has been counted
    let mut warn_thread: Option<String> = None;
    // a WARN that is itself a result (`warn_result`), until its back trace or the next WARN
    let mut pending: Option<(&'static str, String)> = None;
    // threads whose back trace has been counted as a result (its `[Async thread]` frame is the
    // same error), and the first frame of each other thread's trace: `file:line` and the
    // `(strerror)` 2.19+ adds (see `async_frame`)
    let mut traced: Vec<String> = Vec::new();
    let mut first_frames: Vec<(String, String, Option<String>)> = Vec::new();
    // `Timeout at NCCL work: S` lines: (pg, rank, seq)
    let mut timed_out_at: Vec<(Option<String>, Option<u32>, Option<u64>)> = Vec::new();
    let mut lines = text.lines();
    // the watchdog line's continuation rows, rejoined (see `rejoin_wrapped_work`)
    let mut joined;
    while let Some(mut line) = lines.next() {
        if timeout_line(line)
            && let Some((whole, rows)) = rejoin_wrapped_work(line, lines.clone())
        {
            joined = whole;
            line = joined.as_str();
            for _ in 0..rows {
                lines.next();
            }
        }
        if let Some((i, prefix)) = want_last_error.take() {
            let reason = line.strip_prefix(prefix.as_str()).unwrap_or(line).trim();
            if !reason.is_empty() && out.errors[i].last_error.is_none() {
                out.errors[i].last_error = Some(super::clip(reason, super::MAX_TEXT));
                if reason.contains("shared memory segment") {
                    note_shm(&mut out, reason);
                }
                continue;
            }
        }
        // NCCL's WARN (`host:pid:tid [dev] file:line NCCL WARN …`, 2.0's `host [dev]
        // file:line WARN …`) comes before the call returns: the reason an `NCCLCHECK` line lacks
        if let Some((_, w)) = line.split_once(" WARN ") {
            // a WARN NCCL returns an error right after is that error: held until the next WARN
            // or the end, so the back trace of the same thread, when printed, names the result
            // (the code of the version that printed it) and is not counted twice
            flush_warn_result(&mut out, pending.take(), &mut last_result);
            last_warn = Some(super::clip(w.trim(), super::MAX_TEXT));
            warn_thread = WARN_AT.captures(line).map(|c| c[1].to_string());
            if let Some(r) = warn_result(w) {
                pending = Some((r, super::clip(w.trim(), super::MAX_TEXT)));
                if cuda_failure_warn(w) && w.contains("'out of memory'") {
                    out.cuda_oom_in_nccl = true;
                }
                out.lines += 1;
                continue;
            }
        }
        // the same WARN text without its header: NCCL's last error as torch relays it under
        // `Last error:` (read above when that line precedes it), or pasted on its own
        if let Some(r) = relayed_warn_result(line) {
            flush_warn_result(&mut out, pending.take(), &mut last_result);
            pending = Some((r, super::clip(after_prefix(line), super::MAX_TEXT)));
            warn_thread = None;
            out.lines += 1;
            continue;
        }
        if !marked(line) {
            continue;
        }
        let mut carried = false;
        if timeout_line(line) {
            carried = true;
            out.timeout_count += 1;
            let mut t = CollectiveTimeout::default();
            if let Some(c) = PREFIX.captures(line) {
                t.pg = c.get(1).map(|m| m.as_str().to_string());
                t.rank = c[2].parse().ok();
            }
            if let Some(c) = WORK.captures(line) {
                parse_work(&c[1], &mut t);
            }
            t.ran_for_ms = RAN_FOR.captures(line).and_then(|c| c[1].parse().ok());
            if let Some(r) = t.rank
                && !out.timeout_ranks.contains(&r)
                && out.timeout_ranks.len() < 4096
            {
                out.timeout_ranks.push(r);
            }
            if !t.op.is_empty() && !out.timeout_ops.contains(&t.op) && out.timeout_ops.len() < 32 {
                out.timeout_ops.push(t.op.clone());
            }
            if out.timeouts.len() < super::MAX_ITEMS {
                out.timeouts.push(t);
            }
        }
        if let Some(c) = DUMP_SIGNAL.captures(line) {
            carried = true;
            let from = c.get(4).and_then(|m| m.as_str().parse::<i64>().ok());
            let d = DumpSignal {
                rank: c.get(2).and_then(|m| m.as_str().parse().ok()),
                pg: c.get(1).map(|m| m.as_str().to_string()),
                from_rank: from.and_then(|r| u32::try_from(r).ok()),
                from_self: c[3].starts_with("this"),
                last_enqueued: c.get(5).and_then(|m| m.as_str().parse().ok()),
                last_completed: c.get(6).and_then(|m| m.as_str().parse().ok()),
            };
            if !out.dump_signals.iter().any(|x| {
                x.rank == d.rank && x.from_rank == d.from_rank && x.from_self == d.from_self
            }) && out.dump_signals.len() < super::MAX_ITEMS
            {
                out.dump_signals.push(d);
            }
        } else if DUMP_SIGNAL_NOTICES.iter().any(|n| line.contains(n)) {
            carried = true;
        }
        if let Some(c) = TIMEOUT_AT.captures(line) {
            timed_out_at.push((
                c.get(1).map(|m| m.as_str().to_string()),
                c.get(2).and_then(|m| m.as_str().parse().ok()),
                c[3].parse().ok(),
            ));
        }
        if let Some(c) = RAISED_IN_CHECK_TIMEOUT.captures(line) {
            carried = true;
            out.timeout_raised_at.get_or_insert_with(|| match c.get(1) {
                Some(at) => format!("checkTimeout at {}", super::clip(at.as_str(), 200)),
                None => "the WorkNCCL::checkTimeout frame of a back trace".into(),
            });
        }
        if let Some(c) = WORK_STATE.captures(line) {
            carried = true;
            let enq: Option<i64> = c[2].parse().ok();
            let done: Option<i64> = c[3].parse().ok();
            if let Some(d) = done {
                out.last_completed_work = Some(out.last_completed_work.map_or(d, |x| x.min(d)));
            }
            if let Some(e) = enq {
                out.last_enqueued_work = Some(out.last_enqueued_work.map_or(e, |x| x.max(e)));
            }
        }
        if let Some(c) = ERROR_IN.captures(line) {
            carried = true;
            if let Some(r) = result_of_string(&c[2])
                && let Some(i) = note_result(&mut out, r)
            {
                let e = &mut out.errors[i];
                e.location.get_or_insert_with(|| super::clip(&c[1], 200));
                if let Some(v) = c.get(3) {
                    e.nccl_version
                        .get_or_insert_with(|| nccl_version_of(v.as_str()));
                }
                last_result = Some(i);
                fresh = true;
            }
            if let Some(v) = c.get(3) {
                out.nccl_version
                    .get_or_insert_with(|| nccl_version_of(v.as_str()));
            }
        } else if let Some((r, version)) = error_text(line) {
            // the same as `NCCL error in:` without its FILE:LINE; the `ncclRemoteError: …`
            // line torch prints under it is this error, not another
            carried = true;
            if let Some(i) = note_result(&mut out, r) {
                if let Some(v) = version {
                    out.errors[i]
                        .nccl_version
                        .get_or_insert_with(|| nccl_version_of(v));
                }
                last_result = Some(i);
                fresh = true;
            }
            if let Some(v) = version {
                out.nccl_version.get_or_insert_with(|| nccl_version_of(v));
            }
        } else if let Some((r, call)) = oneflow_error(line) {
            // OneFlow's wording: the call it checked is where NCCL failed
            carried = true;
            if let Some(i) = note_result(&mut out, r) {
                out.errors[i]
                    .location
                    .get_or_insert_with(|| super::clip(call, 200));
                last_result = Some(i);
                fresh = true;
            }
        } else if let Some(r) = paddle_error(line) {
            // Paddle's own wording of the same failure; its `[Hint: 'nccl…Error'. …]` line
            // after it is this error, not another
            carried = true;
            if let Some(i) = note_result(&mut out, r) {
                if let Some(at) = PADDLE_AT.captures(line) {
                    out.errors[i]
                        .location
                        .get_or_insert_with(|| super::clip(&at[1], 200));
                }
                last_result = Some(i);
                fresh = true;
            }
        } else if let Some(c) = RESULT.captures(line) {
            carried = true;
            let r = c[1].to_string();
            let i = match last_result {
                Some(i) if fresh && out.errors[i].result == r => Some(i),
                _ => note_result(&mut out, &r),
            };
            fresh = false;
            if let Some(i) = i {
                last_result = Some(i);
                last_error_on(line, i, &mut out, &mut want_last_error);
            }
        } else if let Some((at, r)) = check_failed(line) {
            carried = true;
            if let Some(i) = note_result(&mut out, r) {
                let e = &mut out.errors[i];
                e.location.get_or_insert_with(|| super::clip(at, 200));
                if e.last_error.is_none()
                    && let Some(w) = last_warn.as_ref().filter(|w| !w.is_empty())
                {
                    e.last_error = Some(w.clone());
                }
                last_result = Some(i);
                fresh = false;
            }
        } else if let Some(c) = CHECK_TRACE.captures(line)
            && warn_thread.as_deref() == Some(&c[1])
        {
            // the first frame of the trace after the WARN of the same thread; its other
            // frames repeat the same result
            warn_thread = None;
            pending = None;
            carried = true;
            note_traced(&mut traced, &c[1]);
            if let Some(r) = result_of_code(&c[2])
                && let Some(i) = note_result(&mut out, r)
            {
                let e = &mut out.errors[i];
                if e.last_error.is_none()
                    && let Some(w) = last_warn.as_ref().filter(|w| !w.is_empty())
                {
                    e.last_error = Some(w.clone());
                }
                last_result = Some(i);
                fresh = false;
            }
        } else if let Some(c) = CHECK_TRACE.captures(line) {
            carried = true;
            let thread = c[1].to_string();
            if socket_layer_frame(line)
                && !traced.contains(&thread)
                && !first_frames.iter().any(|f| f.0 == thread)
            {
                // the socket layer's own failure, its thread printed no WARN (see
                // `socket_layer_frame`): this frame is where it failed
                note_traced(&mut traced, &thread);
                let (at, why) = frame_at(line);
                if first_frames.len() < super::MAX_ITEMS {
                    first_frames.push((thread, at.clone(), why.clone()));
                }
                if let Some(r) = result_of_code(&c[2])
                    && let Some(i) = note_result(&mut out, r)
                {
                    let e = &mut out.errors[i];
                    e.location.get_or_insert(at);
                    if e.last_error.is_none() {
                        e.last_error = why;
                    }
                    last_result = Some(i);
                    fresh = false;
                }
            } else if async_frame(line) && !traced.contains(&thread) {
                // the async job's own result (see `async_frame`), its thread printed no WARN:
                // the failing check's frame (the first of the thread) is where it failed
                note_traced(&mut traced, &thread);
                if let Some(r) = result_of_code(&c[2])
                    && let Some(i) = note_result(&mut out, r)
                {
                    if let Some((_, at, why)) = first_frames.iter().find(|f| f.0 == thread) {
                        let e = &mut out.errors[i];
                        e.location.get_or_insert_with(|| at.clone());
                        if e.last_error.is_none() {
                            e.last_error.clone_from(why);
                        }
                    }
                    last_result = Some(i);
                    fresh = false;
                }
            } else if !first_frames.iter().any(|f| f.0 == thread)
                && first_frames.len() < super::MAX_ITEMS
            {
                let (at, why) = frame_at(line);
                first_frames.push((thread, at, why));
            }
        } else if let Some(i) = last_result {
            last_error_on(line, i, &mut out, &mut want_last_error);
        }
        if line.contains("shared memory segment")
            || line.contains("failed to extend")
            || is_old_shm_create(line)
        {
            carried = true;
            note_shm(&mut out, line);
        }
        if line.contains("Bus error") {
            out.bus_error = true;
            carried = true;
        }
        if line.contains("Cuda failure") && line.contains("'out of memory'") {
            out.cuda_oom_in_nccl = true;
            carried = true;
        }
        if out.nccl_version.is_none()
            && let Some(c) = VERSION.captures(line)
        {
            out.nccl_version = Some(nccl_version_of(&c[1]));
        }
        if carried {
            out.lines += 1;
        }
    }
    flush_warn_result(&mut out, pending, &mut last_result);
    read_ras(text, &mut out);
    // a timed-out work the watchdog's own line did not already name (that line cut off, or
    // pasted without it) is a timeout of its own
    for (pg, rank, seq) in timed_out_at {
        if out
            .timeouts
            .iter()
            .any(|t| t.seq == seq && (t.rank == rank || t.rank.is_none() || rank.is_none()))
        {
            continue;
        }
        out.timeout_count += 1;
        if let Some(r) = rank
            && !out.timeout_ranks.contains(&r)
            && out.timeout_ranks.len() < 4096
        {
            out.timeout_ranks.push(r);
        }
        if out.timeouts.len() < super::MAX_ITEMS {
            out.timeouts.push(CollectiveTimeout {
                rank,
                pg,
                seq,
                ..Default::default()
            });
        }
    }
    // each reason back to NCCL's own words where the paste added to them
    for e in &mut out.errors {
        if let Some(r) = e.last_error.as_mut()
            && let Some(words) = nccls_words(r)
        {
            *r = words;
        }
    }
    // a SIGBUS inside NCCL's shared-memory code: a segment tmpfs could not back
    if !out.shm_create_failed
        && let Some(l) = shm_bus_error(text)
    {
        out.shm_create_failed = true;
        out.bus_error = true;
        if out.shm_error.is_none() {
            out.shm_error = Some(super::clip(l.trim(), 300));
        }
    }
    out
}

/// NCCL's RAS status report as its text client prints it (see the header): the communicator
/// table's rows and what the `Errors` / `Warnings` sections count.
#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct RasReport {
    /// Rows of the `Group  Comms  Nodes …  Status  Errors` table.
    pub groups: Vec<RasGroup>,
    /// `DEAD`: job processes RAS considers dead (unreachable through its network).
    pub dead_processes: u64,
    /// `INCOMPLETE`: job processes no communicator data came from.
    pub missing_processes: u64,
    /// `Initialization error(s) on N rank(s)`, summed over communicators.
    pub init_error_ranks: u64,
    /// `Asynchronous error(s) on N rank(s)`, summed over communicators.
    pub async_error_ranks: u64,
    /// `Communicator ranks have different <op> operation counts` (`MISMATCH`).
    pub mismatched_ops: Vec<String>,
    /// `Communicator ranks have different status`.
    pub status_mismatch: bool,
    /// `TIMEOUT`: communication timeouts while RAS gathered the data.
    pub collection_timeouts: u64,
}

/// One row of the RAS communicator table.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RasGroup {
    pub comms: u64,
    pub nodes: u64,
    pub ranks_per_comm: u64,
    /// `NOCOMM`, `INIT`, `RUNNING`, `FINALIZE`, `ABORT`.
    pub status: String,
    /// `OK`, or `INCOMPLETE` / `ERROR` / `MISMATCH` joined by commas.
    pub errors: String,
}

/// The table's heading as `rasClientRunComms` prints it.
static RAS_HEADING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*Group\s+Comms\s+Nodes\s+Ranks\s+Ranks\s+Ranks\s+Status\s+Errors\s*$")
        .expect("static regex")
});
/// `"%5d  %8d  %8d  %8s  %8d  %8d  %8s  %6s"`: group, comms, nodes, ranks per node (`N` or
/// `N-M`), ranks per comm, ranks in group, status, errors.
static RAS_ROW: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*\d+\s+(\d+)\s+(\d+)\s+\d+(?:-\d+)?\s+(\d+)\s+\d+\s+(NOCOMM|INIT|RUNNING|FINALIZE|ABORT)\s+(OK|(?:INCOMPLETE|ERROR|MISMATCH)(?:,(?:ERROR|MISMATCH))*)\s*$")
        .expect("static regex")
});
static RAS_COUNT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*(?:(\d+) job process(?:es are| is) considered dead|Missing communicator data from (\d+) job process|(Initialization|Asynchronous) errors? on (\d+) ranks?|Encountered (\d+) communication timeouts? while gathering|Communicator ranks have different (\S+) operation counts|Communicator ranks have (different status))")
        .expect("static regex")
});
/// `rasClientBreakDownErrors`: `N ranks reported <error>` / `Rank R reported <error> -- …`.
static RAS_REPORTED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*(?:(\d+) ranks|Rank \d+) reported (.+?)(?: -- .*)?\s*$").expect("static regex")
});

/// RAS's own `ncclErrorToString` text (`src/ras/client_support.cc`) → the result.
fn result_of_ras_string(s: &str) -> Option<&'static str> {
    Some(match s.trim() {
        "Unhandled CUDA error" => "ncclUnhandledCudaError",
        "System error" => "ncclSystemError",
        "Internal error" => "ncclInternalError",
        "Invalid argument" => "ncclInvalidArgument",
        "Invalid usage" => "ncclInvalidUsage",
        "Remote process error" => "ncclRemoteError",
        _ => return None,
    })
}

/// The RAS report in `text`, if it holds the communicator table's heading; the errors its
/// `ERROR` sections break down are noted as results of `out`.
fn read_ras(text: &str, out: &mut NcclErrors) {
    if !text.contains("Status  Errors") {
        return;
    }
    let mut lines = text.lines();
    // the report opens with `NCCL version %s compiled with CUDA %d.%d` (`rasClientRunInit`)
    let mut version = None;
    if !lines.by_ref().any(|l| {
        if version.is_none() && l.contains(" compiled with CUDA ") {
            version = VERSION.captures(l).map(|c| c[1].to_string());
        }
        RAS_HEADING.is_match(l)
    }) {
        return;
    }
    if out.nccl_version.is_none() {
        out.nccl_version = version;
    }
    let mut r = RasReport::default();
    // `Initialization` or `Asynchronous`: the section the breakdown lines under it belong to
    let mut section = "";
    for line in lines {
        if let Some(c) = RAS_ROW.captures(line) {
            if r.groups.len() < super::MAX_ITEMS {
                r.groups.push(RasGroup {
                    comms: c[1].parse().unwrap_or(0),
                    nodes: c[2].parse().unwrap_or(0),
                    ranks_per_comm: c[3].parse().unwrap_or(0),
                    status: c[4].to_string(),
                    errors: c[5].to_string(),
                });
            }
            out.lines += 1;
            continue;
        }
        if let Some(c) = RAS_COUNT.captures(line) {
            let n =
                |i: usize| -> u64 { c.get(i).and_then(|m| m.as_str().parse().ok()).unwrap_or(0) };
            if c.get(1).is_some() {
                r.dead_processes += n(1);
            } else if c.get(2).is_some() {
                r.missing_processes += n(2);
            } else if let Some(kind) = c.get(3) {
                section = if kind.as_str() == "Initialization" {
                    "initialization"
                } else {
                    "asynchronous"
                };
                if section == "initialization" {
                    r.init_error_ranks += n(4);
                } else {
                    r.async_error_ranks += n(4);
                }
            } else if c.get(5).is_some() {
                r.collection_timeouts += n(5);
            } else if let Some(op) = c.get(6) {
                if !r.mismatched_ops.iter().any(|o| o == op.as_str()) && r.mismatched_ops.len() < 32
                {
                    r.mismatched_ops.push(op.as_str().to_string());
                }
            } else if c.get(7).is_some() {
                r.status_mismatch = true;
            }
            out.lines += 1;
            continue;
        }
        if !section.is_empty()
            && let Some(c) = RAS_REPORTED.captures(line)
            && let Some(res) = result_of_ras_string(&c[2])
        {
            let ranks = c
                .get(1)
                .map_or("1 rank".to_string(), |m| format!("{} ranks", m.as_str()));
            if let Some(i) = note_result(out, res) {
                out.errors[i].last_error.get_or_insert_with(|| {
                    format!(
                        "NCCL RAS: {ranks} reported {} ({section} error)",
                        c[2].trim()
                    )
                });
            }
            out.lines += 1;
        }
        // a heading of the next section ends a breakdown
        if matches!(line.trim(), "Warnings" | "Errors") || line.trim_start().starts_with('#') {
            section = "";
        }
    }
    out.ras = Some(r);
}

/// Notes a WARN that is itself a result (see [`warn_result`]) no back trace followed.
fn flush_warn_result(
    out: &mut NcclErrors,
    pending: Option<(&'static str, String)>,
    last_result: &mut Option<usize>,
) {
    if let Some((r, w)) = pending
        && let Some(i) = note_result(out, r)
    {
        out.errors[i].last_error.get_or_insert(w);
        *last_result = Some(i);
    }
}

/// A watchdog line whose `WorkNCCL(` is not closed on its own row: a terminal or a log viewer
/// that hard-wraps at a fixed width (`NumelIn=112, Numel` / `Out=112, Timeout(ms)=…`, `OpTy` /
/// `pe=BROADCAST`) breaks PyTorch's one-line message without dropping a character, so the rows
/// that follow are appended as they are until the `WorkNCCL(…)` closes. At most two rows, none
/// of them a watchdog line of its own; `None` (nothing consumed) when the work never closes.
/// "Closes" counts parentheses: `operator<<(WorkNCCL)` ends the work with `Timeout(ms)=T)`, so
/// a row that ends right after `Timeout(ms)=1800000` (HKUDS/GraphGPT#44's 75-column terminal,
/// whose next row starts `) ran for …`) has not closed it although [`WORK`] would already
/// match there, at the `)` of `(ms)`.
fn rejoin_wrapped_work<'a>(
    line: &str,
    mut rest: impl Iterator<Item = &'a str>,
) -> Option<(String, usize)> {
    if work_closed(line) != Some(false) {
        return None;
    }
    let mut whole = line.to_string();
    for rows in 1..=2 {
        let next = rest.next()?;
        if next.contains("Watchdog caught")
            || next.contains("Caught collective")
            || next.trim().is_empty()
        {
            return None;
        }
        whole.push_str(next);
        if work_closed(&whole) == Some(true) {
            return Some((whole, rows));
        }
    }
    None
}

/// Whether the first `WorkNCCL(` of `line` is closed by its matching `)` (nested parentheses,
/// `Timeout(ms)` and a `TensorShape`'s none, counted); `None` where the line holds no work.
fn work_closed(line: &str) -> Option<bool> {
    let at = line.find("WorkNCCL(")? + "WorkNCCL".len();
    let mut depth = 0i32;
    for c in line[at..].chars() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(true);
                }
            }
            _ => {}
        }
    }
    Some(false)
}

/// NCCL's reason after `Last error:`: on the same line, or (nothing after it) on the next one.
fn last_error_on(line: &str, i: usize, out: &mut NcclErrors, want: &mut Option<(usize, String)>) {
    let Some(at) = line.find("Last error:") else {
        return;
    };
    let rest = line[at + "Last error:".len()..].trim();
    if rest.is_empty() {
        *want = Some((i, line[..at].to_string()));
    } else if out.errors[i].last_error.is_none() {
        out.errors[i].last_error = Some(super::clip(rest, super::MAX_TEXT));
    }
}

/// True when the text shows an NCCL call returning `ncclUnhandledCudaError` through NCCL's own
/// back trace: a `NCCL WARN` of a thread, then `NCCLCHECK`'s `NCCL INFO file:line -> 1` of the
/// same `host:pid:tid` (NVIDIA/nccl `src/include/checks.h`, 2.4 through 2.28:
/// `INFO(NCCL_ALL,"%s:%d -> %d", __FILE__, __LINE__, res)`; `1` is `ncclUnhandledCudaError` in
/// `src/nccl.h.in`'s `ncclResult_t`). `CUDACHECK`'s `Cuda failure '…'` WARN is that result's
/// reason, as where the text prints ncclGetErrorString's `unhandled cuda error` (h105:
/// diffusion-pipe#292's `include/alloc.h:237 NCCL WARN Cuda failure 999 'unknown error'` and
/// its ten `-> 1` frames, the Python traceback cut before the DistBackendError line).
pub fn unhandled_cuda_traced(text: &str) -> bool {
    if !text.contains("NCCL WARN") || !text.contains(" -> 1") {
        return false;
    }
    let mut warned: Vec<String> = Vec::new();
    for line in text.lines() {
        if line.contains("NCCL WARN") {
            if let Some(c) = WARN_AT.captures(line)
                && warned.len() < super::MAX_ITEMS
                && !warned.iter().any(|w| w == &c[1])
            {
                warned.push(c[1].to_string());
            }
        } else if line.contains(" -> 1")
            && let Some(c) = CHECK_TRACE.captures(line)
            && &c[2] == "1"
            && warned.iter().any(|w| w == &c[1])
        {
            return true;
        }
    }
    false
}

/// A process killed by `SIGBUS` while NCCL touched one of its `/dev/shm` segments: the report
/// of the signal, the first line of `text` that gives it. NCCL maps files only in `/dev/shm`
/// (NVIDIA/nccl `src/misc/shmutils.cc`, `ncclShmOpen`: `mkstemp("/dev/shm/nccl-XXXXXX")`, the
/// file grown to the segment's size, `mmap(MAP_SHARED)`, then `memset` of the new segment);
/// where tmpfs cannot give a page of that file when it is first touched, the kernel sends
/// `SIGBUS` with `si_code` `BUS_ADRERR` ("nonexistent physical address", mmap(2): "SIGBUS
/// Attempted access to a page of the buffer that lies beyond the end of the mapped file"), which
/// is how a too-small `/dev/shm` shows where no WARN gets printed (JAX-Toolbox#183, pytorch/
/// tutorials#2475 "segfault in `ncclShmOpen`", fixed with `--shm-size`). The reports read:
///
/// - gdb's (`gdb/infrun.c`, `print_signal_received_reason`): `Thread N "name" received signal
///   SIGBUS, Bus error.`, then the frames of `bt`;
/// - UCX's handler (openucx `src/ucs/debug/debug.c`, `ucs_error_signal_handler`: `Caught signal
///   %d (%s)` with the signal's name and its `si_code` text, `Bus error: nonexistent physical
///   address`), then `==== backtrace (tid: N) ====` and its frames;
/// - Open MPI's (`opal/util/stacktrace.c`: `Signal: Bus error (7)`, `Signal code: Non-existant
///   physical address (2)`), then its `[ N] lib(+0x…)` frames.
///
/// The signal is NCCL's when a frame of the trace right after it (up to 40 lines, until a blank
/// line) names `ncclShmOpen`, or, where the report says `BUS_ADRERR` (the UCX or Open MPI
/// code above), a frame is in `libnccl.so` or an `nccl…` function (a stripped libnccl resolves
/// its frames to the nearest exported name: msr-fiddle/pipedream#76's `ncclGroupEnd()` /
/// `ncclGetUniqueId()` under a bus error in Docker's default 64 MB).
pub fn shm_bus_error(text: &str) -> Option<&str> {
    fn report(l: &str) -> Option<bool> {
        if l.contains("received signal SIGBUS") {
            Some(l.contains("BUS_ADRERR"))
        } else if l.contains("Caught signal 7 (Bus error") {
            Some(l.contains("nonexistent physical address"))
        } else if l.contains("Signal: Bus error (7)") {
            Some(false)
        } else {
            None
        }
    }
    static NCCL_FRAME: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"libnccl\.so|\bnccl[A-Z]\w*\s*\(").expect("static regex"));
    if !text.contains("SIGBUS") && !text.contains("Bus error") {
        return None;
    }
    let lines: Vec<&str> = text.lines().take(200_000).collect();
    for (i, l) in lines.iter().enumerate() {
        let Some(mut adrerr) = report(l) else {
            continue;
        };
        for f in lines.iter().skip(i + 1).take(40) {
            if f.trim().is_empty() {
                break;
            }
            // Open MPI prints the code on the line after the signal's
            if f.contains("Non-existant physical address") || f.contains("BUS_ADRERR") {
                adrerr = true;
            }
            if f.contains("ncclShmOpen") || (adrerr && NCCL_FRAME.is_match(f)) {
                return Some(l);
            }
        }
    }
    None
}

/// NCCL 2.3–2.12's wordings of a segment it could not allocate in /dev/shm (`shm.h`).
pub fn is_old_shm_create(line: &str) -> bool {
    line.contains("NCCL WARN")
        && (line.contains("Call to posix_fallocate failed")
            || line.contains("Unable to allocate shared memory"))
}

fn note_shm(out: &mut NcclErrors, line: &str) {
    let creating = line.contains("Error while creating shared memory segment")
        || (line.contains("failed to extend") && line.contains("/dev/shm"))
        || is_old_shm_create(line);
    if creating {
        out.shm_create_failed = true;
    } else if line.contains("Error while attaching to shared memory segment") {
        out.shm_attach_failed = true;
    } else {
        return;
    }
    if out.shm_segment_bytes.is_none()
        && let Some(c) = SHM_SIZE.captures(line)
    {
        out.shm_segment_bytes = c
            .get(1)
            .or_else(|| c.get(2))
            .and_then(|m| m.as_str().parse().ok());
    }
    if out.shm_error.is_none() {
        out.shm_error = Some(super::clip(after_prefix(line), 300));
    }
}

/// The registry entry (see [`super::EvidenceKind`]).
pub struct NcclErrorsKind;

impl super::EvidenceKind for NcclErrorsKind {
    fn name(&self) -> &'static str {
        "nccl-error-log"
    }
    fn doc(&self) -> &'static str {
        "collective failures in a PyTorch or NCCL log: ProcessGroupNCCL watchdog timeouts, ncclSystemError/ncclInternalError/… with NCCL's Last error, NCCL's /dev/shm failures"
    }
    fn example(&self) -> &'static str {
        "torchrun --nproc_per_node 8 train.py 2>&1 | tee train.log"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "timeouts",
                "watchdog timeouts: rank, pg, seq, op, numel_in, numel_out, tensor_shape, timeout_ms, ran_for_ms",
            ),
            ("timeout_count", "every watchdog timeout line"),
            ("timeout_ranks", "ranks that reported a timeout"),
            ("timeout_ops", "ops that timed out"),
            (
                "watchdog_stuck",
                "the heartbeat monitor saw the watchdog stuck (a hang): rank, pg, seconds",
            ),
            (
                "not_joined",
                "the flight recorder analyzer's collectives that some ranks never reached: seq, op, missing_ranks, state",
            ),
            (
                "dump_signals",
                "the flight recorder's dump signal a rank received: a collective failed (timed out or raised) on from_rank while this rank waited: rank, pg, from_rank, from_self, last_enqueued, last_completed",
            ),
            (
                "timeout_raised_at",
                "a back trace of the exception PyTorch's WorkNCCL::checkTimeout built (a timeout whose message line may be missing)",
            ),
            (
                "last_completed_work",
                "the lowest sequence number a rank reports completed (-1: none completed)",
            ),
            (
                "last_enqueued_work",
                "the highest sequence number a rank reports enqueued",
            ),
            (
                "errors",
                "NCCL error results: result, last_error, location, nccl_version, count",
            ),
            ("error_results", "distinct NCCL results"),
            (
                "shm_create_failed",
                "NCCL could not create or grow a /dev/shm segment",
            ),
            (
                "shm_attach_failed",
                "NCCL could not attach to a peer's /dev/shm segment",
            ),
            ("shm_segment_bytes", "the segment size NCCL asked for"),
            ("shm_error", "the first shared-memory WARN"),
            ("bus_error", "`Bus error` in the same text"),
            (
                "cuda_oom_in_nccl",
                "`Cuda failure 'out of memory'` inside NCCL",
            ),
            ("nccl_version", "the NCCL version the text names"),
            ("lines", "lines that carried one of these messages"),
            (
                "ras",
                "NCCL's RAS status report: groups (comms, nodes, ranks_per_comm, status, errors), dead_processes, missing_processes, init_error_ranks, async_error_ranks, mismatched_ops, status_mismatch, collection_timeouts",
            ),
        ]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["nccl.errors", "shm"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        // the failure can sit anywhere in a long log: scan for its line, collecting nothing
        looks_like_in(s.late)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        super::to_value(&parse_nccl_errors(text))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_flight_recorders_dump_signal_names_the_rank_whose_collective_failed() {
        // github.com/PrimeIntellect-ai/prime-rl/pull/3186 (h160): rank 0's heartbeat monitor, no
        // watchdog line of its own; `from  rank 13` with the two spaces `c10::str(" rank ", N)`
        // leaves after "from "
        let t = "[rank0]:[E804 23:05:54.816499929 ProcessGroupNCCL.cpp:1849] [PG ID 0 PG GUID 0(default_pg) Rank 0] Observed flight recorder dump signal from another rank via TCPStore.\n[rank0]:[E804 23:05:54.817424543 ProcessGroupNCCL.cpp:1914] [PG ID 0 PG GUID 0(default_pg) Rank 0] Received a dump signal due to a collective timeout from  rank 13 and we will try our best to dump the debug info. Last enqueued NCCL work: 1261, last completed NCCL work: 1259.This is most likely caused by incorrect usages of collectives, e.g., wrong sizes used across ranks, the order of collectives is not same for all ranks or the scheduled collective, for some reason, didn't run. Additionally, this can be caused by GIL deadlock or other reasons such as network errors or bugs in the communications library (e.g. NCCL), etc. \n[rank0]:[E804 23:05:54.818690144 ProcessGroupNCCL.cpp:1628] [PG ID 0 PG GUID 0(default_pg) Rank 0] ProcessGroupNCCL preparing to dump debug info. Include stack trace: 1, only active collectives: 0\n";
        assert!(looks_like(t));
        let e = parse_nccl_errors(t);
        assert_eq!(
            e.dump_signals,
            [DumpSignal {
                rank: Some(0),
                pg: Some("0".into()),
                from_rank: Some(13),
                from_self: false,
                last_enqueued: Some(1261),
                last_completed: Some(1259),
            }]
        );
        // a signal is no watchdog timeout of this rank, nor an NCCL result
        assert_eq!(e.timeout_count, 0);
        assert!(e.errors.is_empty());
        // the rank whose own watchdog raised it (`getNCCLWatchdogTimeoutErrorMsg("this local
        // rank")`), the store unreadable (`timeOutRank` stays -1), and the line without the
        // log prefix, as the source builds it
        let e = parse_nccl_errors(
            "[PG ID 0 PG GUID 0(default_pg) Rank 3] Received a dump signal due to a collective timeout from this local rank and we will try our best to dump the debug info. Last enqueued NCCL work: 1, last completed NCCL work: -1.This is most likely caused by incorrect usages of collectives\n",
        );
        assert!(e.dump_signals[0].from_self);
        assert_eq!(e.dump_signals[0].from_rank, None);
        assert_eq!(e.dump_signals[0].last_completed, Some(-1));
        let e = parse_nccl_errors(
            "Received a dump signal due to a collective timeout from  rank -1 and we will try our best to dump the debug info. \n",
        );
        assert_eq!(e.dump_signals.len(), 1);
        assert_eq!(
            (e.dump_signals[0].rank, e.dump_signals[0].from_rank),
            (None, None)
        );
        assert!(!e.dump_signals[0].from_self);
        // the same signal repeated by one rank is one; two ranks are two
        let two = format!(
            "{l}{l}{}",
            "[rank5]:[E804 23:05:54.1 ProcessGroupNCCL.cpp:1914] [PG ID 0 PG GUID 0(default_pg) Rank 5] Received a dump signal due to a collective timeout from  rank 13 and we will try our best\n",
            l = "[rank0]:[E804 23:05:54.1 ProcessGroupNCCL.cpp:1914] [PG ID 0 PG GUID 0(default_pg) Rank 0] Received a dump signal due to a collective timeout from  rank 13 and we will try our best\n"
        );
        assert_eq!(parse_nccl_errors(&two).dump_signals.len(), 2);
        // healthy neighbours: the notices alone are read and count nothing; prose about a dump
        // signal and a dump the user asked for (`DumpPipe`) are not this line
        for t in [
            "[rank1]:[E804 23:05:54.1 ProcessGroupNCCL.cpp:1849] [PG ID 0 PG GUID 0(default_pg) Rank 1] Observed flight recorder dump signal from another rank via TCPStore.\n",
            "[rank1]:[E804 23:05:54.1 ProcessGroupNCCL.cpp:2000] [PG ID 0 PG GUID 0(default_pg) Rank 1] Broadcasting flight-recorder dump signal to other processes via TCPStore.\n",
        ] {
            assert!(looks_like(t), "{t}");
            let e = parse_nccl_errors(t);
            assert!(e.dump_signals.is_empty(), "{t}");
            assert_eq!(e.timeout_count, 0, "{t}");
        }
        for t in [
            "We received a dump signal from the scheduler and restarted the job.\n",
            "[rank0]:[I804 23:05:54.1 ProcessGroupNCCL.cpp:1500] [PG ID 0 PG GUID 0(default_pg) Rank 0] ProcessGroupNCCL dumping nccl trace to /tmp/nccl_trace_rank_0\n",
        ] {
            assert!(parse_nccl_errors(t).dump_signals.is_empty(), "{t}");
        }
    }

    #[test]
    fn a_cuda_failure_warn_is_unhandled_cuda_error_with_or_without_its_trace() {
        // h108, PKU-YuanGroup/Open-Sora-Plan#386 ("NCCL Error 1: unhandled cuda error"): the
        // log stops at CUDACHECK's WARN; the channel lines' `2[1040] -> 0[1020]` are no trace
        let t = "ins-7df6eojsifuykig9:3018453:3024011 [2] NCCL INFO Channel 01 : 2[1040] -> 0[1020] via SHM/direct/direct\n\nins-7df6eojsifuykig9:3018451:3018451 [0] enqueue.cc:1085 NCCL WARN Cuda failure 'out of memory'\n";
        assert!(looks_like(t));
        let e = parse_nccl_errors(t);
        assert_eq!(e.error_results, ["ncclUnhandledCudaError"]);
        assert_eq!(
            e.errors[0].last_error.as_deref(),
            Some("Cuda failure 'out of memory'")
        );
        assert!(e.cuda_oom_in_nccl);
        // cudawrap.h's CUCHECK form (`Cuda failure %d '%s'`), NCCL 2.27's `(function)` header
        for t in [
            "KhoaDesktop:1090:1348 [0] include/alloc.h:237 NCCL WARN Cuda failure 999 'unknown error'\n",
            "h:1:2 [0] include/alloc.h:237 (ncclCudaCalloc) NCCL WARN Cuda failure 1 'invalid argument'\n",
        ] {
            assert_eq!(
                parse_nccl_errors(t).error_results,
                ["ncclUnhandledCudaError"],
                "{t}"
            );
        }
        // with NCCLCHECK's trace of the same thread: one error, as before
        let t = "[2025-06-15 05:29:38] KhoaDesktop:1090:1348 [0] include/alloc.h:237 NCCL WARN Cuda failure 999 'unknown error'\nKhoaDesktop:1090:1348 [0] NCCL INFO include/alloc.h:338 -> 1\nKhoaDesktop:1090:1348 [0] NCCL INFO channel.cc:42 -> 1\n";
        let e = parse_nccl_errors(t);
        assert_eq!(e.error_results, ["ncclUnhandledCudaError"]);
        assert_eq!(e.errors[0].count, 1);
        // healthy neighbours: CUDACHECKIGNORE's INFO line (NCCL cleared the error and went on),
        // a WARN in other words, prose
        for t in [
            "node1:123:456 [0] NCCL INFO misc/cudawrap.cc:100 Cuda failure 'an illegal memory access was encountered'\n",
            "node1:123:456 [0] NCCL WARN Cuda failure in my own words\n",
            "I got a Cuda failure 'out of memory' from NCCL yesterday\n",
        ] {
            assert!(parse_nccl_errors(t).errors.is_empty(), "{t}");
        }
    }

    #[test]
    fn a_segment_line_relayed_without_nccls_prefix() {
        // github.com/hiyouga/EasyR1/issues/228 (Ray relays the worker's line without
        // `host:pid:tid [rank] misc/shmutils.cc:N NCCL WARN`)
        let l = "(Runner pid=868697) Error while creating shared memory segment /dev/shm/nccl-UmqSM9 (size 7340384)\n";
        assert!(looks_like(l));
        let e = parse_nccl_errors(l);
        assert!(e.shm_create_failed);
        assert_eq!(e.shm_segment_bytes, Some(7340384));
        // prose naming a segment without NCCL's path is not it
        assert!(!looks_like(
            "Error while creating shared memory segment for my app\n"
        ));
    }

    #[test]
    fn nccls_last_error_relayed_without_its_warn_header() {
        // github.com/pytorch/pytorch/issues/122301: the poster retyped torch's message (the
        // result name misspelt) and kept NCCL's last error, `src/debug.cc`'s bare WARN text
        let t = "[rank21]: [E ProcessGroupNCCL.cpp:537] Some NCCL operations have failed or time out.\nNCCL version 2.19.3 \nncclRemoteERror: A call failed possibly due to a network error or a remote process exting prematurely\nNET/IB : Got completion from peer 192.168.xxx.xxx<40846> with error 5, opcode 0, len 5, vendor err 249 (Recv) localGid\n";
        assert!(looks_like(t));
        let e = parse_nccl_errors(t);
        assert_eq!(e.error_results, ["ncclRemoteError"]);
        assert!(
            e.errors[0]
                .last_error
                .as_deref()
                .is_some_and(|w| w.starts_with("NET/IB : Got completion from peer 192.168"))
        );
        // under torch's `Last error:` the same line is the reason of the error torch named,
        // not a second one (github.com/deepspeedai/DeepSpeed/issues/6875, NCCL 2.22.3)
        let t = "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.\nLast error:\nNET/IB: Got completion from peer 10.0.1.23<34696> with status=5 opcode=0 len=0 vendor err 249 (Recv) hca ibp152s0\n";
        let e = parse_nccl_errors(t);
        assert_eq!(e.error_results, ["ncclRemoteError"]);
        assert_eq!(e.errors[0].count, 1);
        // the words in a sentence are no error (healthy: nothing failed)
        let e = parse_nccl_errors(
            "We never see NET/IB : Got completion from peer errors on this cluster.\n",
        );
        assert!(e.error_results.is_empty());
        // a healthy IB init line is not one either
        let e = parse_nccl_errors(
            "node2:14159:14168 [0] NCCL INFO NET/IB : Using [0]mlx5_4:1/RoCE [RO]; OOB enp24s0np0:10.10.10.1<0>\n",
        );
        assert!(e.error_results.is_empty());
    }

    #[test]
    fn an_error_text_quoted_inside_a_sentence() {
        // blog.gitcode.com's write-up of a vLLM two-node failure: vLLM's pynccl message quoted
        // in the middle of a Chinese sentence, NCCL's ring WARN quoted after it
        let t = "在实际部署中,当尝试在两个节点上运行vLLM服务时,系统报错\"NCCL error: internal error - please report this issue to the NCCL developers\"。错误日志显示在尝试构建通信环时失败,具体表现为\"ring 0 does not loop back to start (12 != 0)\"。\n";
        assert!(looks_like(t));
        assert_eq!(
            parse_nccl_errors(t).error_results,
            vec!["ncclInternalError"]
        );
        // typographic quotes, the code form, and a version before the closing quote
        let t = "it died with “NCCL error 3: internal error - please report this issue to the NCCL developers” twice\n";
        assert_eq!(
            parse_nccl_errors(t).error_results,
            vec!["ncclInternalError"]
        );
        // prose that names a result without NCCL's wording, or quotes no known text, is not one
        assert!(!looks_like(
            "the \"NCCL error: something odd\" message went away\n"
        ));
        assert!(!looks_like(
            "I keep getting an NCCL error: internal error in my code, any idea?\n"
        ));
    }

    #[test]
    fn an_error_text_without_file_and_line() {
        // github.com/OpenRLHF/OpenRLHF/issues/621: torch's async failure of a broadcast, NCCL's
        // text and version after `NCCL error: ` (Ray's worker prefix already taken off)
        let t = "[rank1]:[E1224 13:23:05.483840160 ProcessGroupNCCL.cpp:542] [Rank 12] Collective WorkNCCL(SeqNum=1, OpType=BROADCAST, NumelIn=778567680, NumelOut=778567680, Timeout(ms)=1800000) raised the following async exception: NCCL error: remote process exited or there was a network error, NCCL version 2.21.5\n";
        assert!(looks_like(t));
        let e = parse_nccl_errors(t);
        assert_eq!(e.error_results, vec!["ncclRemoteError"]);
        assert_eq!(e.nccl_version.as_deref(), Some("2.21.5"));
        // github.com/vllm-project/vllm/issues/5828: vLLM 0.5's wrapper prints the code first
        let t = "ERROR 06-25 15:28:30 worker_base.py:148] RuntimeError: NCCL Error 2: unhandled system error (run with NCCL_DEBUG=INFO for details)\n";
        assert!(looks_like(t));
        assert_eq!(parse_nccl_errors(t).error_results, vec!["ncclSystemError"]);
        // with torch's detail line under it: one error, counted once
        let t = "NCCL error: remote process exited or there was a network error, NCCL version 2.22.3\nncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.\n";
        let e = parse_nccl_errors(t);
        assert_eq!(e.errors.len(), 1);
        assert_eq!(e.errors[0].count, 1);
        // a success, or words that are no NCCL result, are not an error
        assert!(!looks_like("NCCL error: none so far\n"));
        assert!(!looks_like("wrapper prints NCCL error 0: no error\n"));
    }

    use super::*;

    #[test]
    fn duplicate_gpu_is_ncclinvalidusage_with_or_without_nccls_header() {
        // thomaskalnik.com's DeepSeek V3 run (h142): the body retyped behind `Error: `
        let t =
            std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(
                "tests/fixtures/corpus/h142_ncclerr_kalnik_dsv3_duplicate_gpu_rank_mapping.txt",
            ))
            .expect("corpus file");
        let e = parse_nccl_errors(&t);
        assert_eq!(e.error_results, ["ncclInvalidUsage"], "{e:?}");
        assert!(
            e.errors[0]
                .last_error
                .as_deref()
                .is_some_and(|r| r.contains("rank 27 and rank 19 both on CUDA device 53000")),
            "{e:?}"
        );
        assert!(t.lines().all(recognised_line));
        // NCCL's own WARN with its header
        let t = "node1:1234:1300 [3] NCCL WARN Duplicate GPU detected : rank 3 and rank 7 both on CUDA device 1b000\n";
        assert_eq!(parse_nccl_errors(t).error_results, ["ncclInvalidUsage"]);
        // neighbours not claimed: prose about the check, the format string, other ranks' talk
        for not in [
            "I think rank 3 and rank 7 both run on the same GPU\n",
            r#"WARN("Duplicate GPU detected : rank %d and rank %d both on CUDA device %lx", rank, i, busId);"#,
            "Error: rank 3 and rank 7 both timed out\n",
        ] {
            assert!(parse_nccl_errors(not).error_results.is_empty(), "{not}");
        }
    }

    #[test]
    fn reasons_lose_the_autolinks_and_carets_a_paste_added() {
        // github.com/NVIDIA/nccl/issues/1710: the quote as stored, every host-like text an
        // autolink `[T](http://T/)`
        let t = "> node023:10214:10303 [0] transport/[net_ib.cc:1909](http://net_ib.cc:1909/) NCCL WARN NET/IB : Got completion from peer [10.1.3.201](http://10.1.3.201/)<33057> with status=9 opcode=0 len=0 vendor err 138 (Send) localGid ::ffff:[10.206.1.23](http://10.206.1.23/) remoteGids::ffff:[10.206.1.11](http://10.206.1.11/)\n> node023:10214:10303 [0] NCCL INFO transport/[net.cc:1137](http://net.cc:1137/) -> 6\n";
        let e = parse_nccl_errors(t);
        assert_eq!(e.error_results, ["ncclRemoteError"]);
        assert_eq!(
            e.errors[0].last_error.as_deref(),
            Some(
                "NET/IB : Got completion from peer 10.1.3.201<33057> with status=9 opcode=0 len=0 vendor err 138 (Send) localGid ::ffff:10.206.1.23 remoteGids::ffff:10.206.1.11"
            )
        );
        // github.com/Intellindust-AI-Lab/DEIMv2/issues/155: ranks' tracebacks interleaved,
        // CPython's caret stuck to the end of the reason line
        let t = "ncclInvalidUsage: This usually reflects invalid usage of NCCL library.\nLast error:\nDuplicate GPU detected : rank 0 and rank 1 both on CUDA device ac000^ \n^ ^ ^^ ^^ ^^\n";
        let e = parse_nccl_errors(t);
        assert_eq!(
            e.errors[0].last_error.as_deref(),
            Some("Duplicate GPU detected : rank 0 and rank 1 both on CUDA device ac000")
        );
        // neighbours: the same reasons as NCCL prints them, and a link of the poster's own
        // (text other than its target) are kept as they are
        let t = "[rank2]: ncclInvalidUsage: This usually reflects invalid usage of NCCL library.\n[rank2]: Last error:\n[rank2]: Duplicate GPU detected : rank 0 and rank 1 both on CUDA device 6000\n";
        assert_eq!(
            parse_nccl_errors(t).errors[0].last_error.as_deref(),
            Some("Duplicate GPU detected : rank 0 and rank 1 both on CUDA device 6000")
        );
        assert_eq!(
            nccls_words("NET/IB : Got completion from peer 10.1.3.201<33057> with status=9"),
            None
        );
        assert_eq!(
            nccls_words("see [the log](https://example.com/x.log) for details"),
            None
        );
        assert_eq!(nccls_words("^^^"), None);
        assert_eq!(
            nccls_words("peer [10.0.0.2](https://10.0.0.2)<1> and [a](http://b/)").as_deref(),
            Some("peer 10.0.0.2<1> and [a](http://b/)")
        );
    }
    use crate::evidence::testutil::{fixture, prefixes};
    use proptest::prelude::*;

    #[test]
    fn watchdog_timeout_of_torch_2_reads_every_field() {
        let e = parse_nccl_errors(&fixture("nccl_errors/watchdog_allreduce_llamafactory.log"));
        assert_eq!(e.timeout_count, 2);
        let t = &e.timeouts[0];
        assert_eq!(t.rank, Some(0));
        assert_eq!(t.seq, Some(1580));
        assert_eq!(t.op, "ALLREDUCE");
        assert_eq!(t.numel_in, Some(466119168));
        assert_eq!(t.numel_out, Some(466119168));
        assert_eq!(t.timeout_ms, Some(600000));
        assert_eq!(t.ran_for_ms, Some(600060));
        assert_eq!(e.timeout_ranks, [0, 4]);
        assert_eq!(e.timeout_ops, ["ALLREDUCE"]);
        assert_eq!(e.last_completed_work, Some(1579));
        assert_eq!(e.last_enqueued_work, Some(1582));
        assert!(e.errors.is_empty());
    }

    #[test]
    fn watchdog_timeout_of_torch_1_without_numel() {
        let e = parse_nccl_errors(&fixture("nccl_errors/watchdog_old_format_ofa.log"));
        assert_eq!(e.timeouts[0].rank, Some(1));
        assert_eq!(e.timeouts[0].seq, Some(469508));
        assert_eq!(e.timeouts[0].timeout_ms, Some(1800000));
        assert_eq!(e.timeouts[0].numel_in, None);
        assert_eq!(e.timeouts[0].pg, None);
    }

    #[test]
    fn work_state_minus_one_is_a_group_with_no_completed_collective() {
        // github.com/ai-dynamo/dynamo/pull/1065: torch 2.6+'s state line behind Ray's prefix;
        // `ProcessGroupStatus::lastCompletedSeq` starts at -1, so the group's first collective
        // (SeqNum=1) never completed
        let e = parse_nccl_errors(&fixture(
            "nccl_errors/watchdog_first_collective_dynamo1065.log",
        ));
        assert_eq!(e.timeout_count, 1);
        assert_eq!(e.timeouts[0].seq, Some(1));
        assert_eq!(e.last_completed_work, Some(-1));
        assert_eq!(e.last_enqueued_work, Some(1));
        // github.com/thu-pacman/chitu/issues/80: the same wording after work had completed,
        // behind a log collector's date and host
        let t = "2025-03-27 17:31:09.952  sm228-a100-40g-23 [rank1]:[E327 09:31:09.977409258 ProcessGroupNCCL.cpp:2168] [PG ID 0 PG GUID 0(default_pg) Rank 1]  failure detected by watchdog at work sequence id: 3313 PG status: last enqueued work: 3313, last completed work: 3312\n";
        let e = parse_nccl_errors(t);
        assert_eq!(
            (e.last_completed_work, e.last_enqueued_work),
            (Some(3312), Some(3313))
        );
        // the lowest any rank reports: one rank with none completed makes it -1
        let both = format!(
            "{t}[rank0]:[E327 09:31:09.977409258 ProcessGroupNCCL.cpp:2168] [PG ID 0 PG GUID 0(default_pg) Rank 0]  failure detected by watchdog at work sequence id: 1 PG status: last enqueued work: 1, last completed work: -1\n"
        );
        let e = parse_nccl_errors(&both);
        assert_eq!(
            (e.last_completed_work, e.last_enqueued_work),
            (Some(-1), Some(3313))
        );
    }

    #[test]
    fn pg_prefixed_timeout_and_work_state() {
        let e = parse_nccl_errors(&fixture("nccl_errors/watchdog_basicsr_pg_guid.log"));
        assert_eq!(e.timeouts[0].rank, Some(1));
        assert_eq!(e.timeouts[0].seq, Some(808));
        assert_eq!(e.last_completed_work, Some(807));
        assert_eq!(e.last_enqueued_work, Some(811));
    }

    #[test]
    fn system_error_with_shm_reason_on_the_next_line() {
        let e = parse_nccl_errors(&fixture("nccl_errors/vllm_shm_system_error.log"));
        assert_eq!(e.error_results, ["ncclSystemError"]);
        let x = &e.errors[0];
        assert_eq!(
            x.location.as_deref(),
            Some("../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970")
        );
        assert_eq!(x.nccl_version.as_deref(), Some("2.20.5"));
        assert!(x.last_error.as_deref().unwrap().starts_with(
            "Error while creating shared memory segment /dev/shm/nccl-bWHyCi (size 9637888)"
        ));
        assert!(e.shm_create_failed && !e.shm_attach_failed);
        assert_eq!(e.shm_segment_bytes, Some(9637888));
        assert_eq!(e.nccl_version.as_deref(), Some("2.20.5"));
    }

    #[test]
    fn unhandled_cuda_error_with_rank_prefixes() {
        let e = parse_nccl_errors(&fixture(
            "nccl_errors/unhandled_cuda_error_invalid_argument.log",
        ));
        assert_eq!(e.error_results, ["ncclUnhandledCudaError"]);
        assert_eq!(
            e.errors[0].last_error.as_deref(),
            Some("Cuda failure 1 'invalid argument'")
        );
        assert!(!e.shm_create_failed);
    }

    #[test]
    fn nccl_warn_shm_lines_without_torch() {
        let e = parse_nccl_errors(&fixture("nccl_errors/nccl_tests_shm_extend_failed.log"));
        assert!(e.shm_create_failed);
        assert_eq!(e.shm_segment_bytes, Some(5967872));
        assert!(e.timeouts.is_empty());
    }

    #[test]
    fn an_ofi_endpoint_call_that_failed_is_a_system_error() {
        // github.com/aws/aws-ofi-nccl/issues/24: Horovod over EFA hangs after the plugin could
        // not open the address vector of a connection's endpoint (problem), behind mpirun's
        // `[1,23]<stdout>:` prefix
        let t = "[1,23]<stdout>:ip-172-32-45-165:72593:73427 [7] create_nccl_ofi_component:459 NCCL WARN NET/OFI Couldn't open AV. RC: -22, ERROR: Invalid argument\n";
        assert!(looks_like(t));
        let e = parse_nccl_errors(t);
        assert_eq!(e.error_results, ["ncclSystemError"]);
        assert_eq!(
            e.errors[0].last_error.as_deref(),
            Some("NET/OFI Couldn't open AV. RC: -22, ERROR: Invalid argument")
        );
        // the other endpoint calls of `nccl_ofi_ofiutils_ep_create` (1.7+)
        assert!(ofi_endpoint_failed(
            "NET/OFI Couldn't bind EP-AV. RC: -22, ERROR: Invalid argument"
        ));
        // github.com/aws/aws-ofi-nccl/issues/67: the plugin's init finds no provider, NCCL goes
        // on without it (not a failed call), and aws-ofi-nccl#715's init lines (healthy)
        assert!(!ofi_endpoint_failed(
            "NET/OFI Couldn't find any optimal provider"
        ));
        assert!(!ofi_endpoint_failed(
            "NET/OFI Couldn't open a fabric provider. RC: -61, ERROR: No data available"
        ));
        let h = "algo-1:18057:18130 [0] NCCL INFO NET/OFI Setting provider_filter to efa\n\
algo-1:18057:18130 [0] NCCL INFO NET/OFI Using transport protocol SENDRECV\n";
        assert!(parse_nccl_errors(h).error_results.is_empty());
    }

    #[test]
    fn a_verbs_call_whose_failure_net_ib_passes_up_is_a_system_error() {
        // github.com/OpenRLHF/OpenRLHF/pull/335: a weight broadcast to a vLLM Ray actor whose
        // IB queue pair never connects (problem), behind Ray's actor prefix
        let t = "(LLMRayActor pid=1112, ip=172.26.5.7) update weight: model.embed_tokens.weight, dtype: torch.bfloat16, shape: torch.Size([128256, 8192])\n\
(LLMRayActor pid=1112, ip=172.26.5.7) job-hvjmrsm8sqf4r2h5q2tl-worker-0:1112:13532 [0] ibvwrap.c:160 NCCL WARN Call to ibv_modify_qp failed with error Connection timed out\n\
(LLMRayActor pid=1112, ip=172.26.5.7) ERROR 06-30 06:10:12 worker_base.py:145] Error executing method update_weight. This might cause deadlock in distributed execution.\n";
        assert!(looks_like(t));
        let e = parse_nccl_errors(t);
        assert_eq!(e.error_results, ["ncclSystemError"]);
        assert_eq!(
            e.errors[0].last_error.as_deref(),
            Some("Call to ibv_modify_qp failed with error Connection timed out")
        );
        // 2.19+'s wording and the inline post call
        assert!(verbs_call_failed(
            "Call to ibv_reg_mr_iova2 failed with error Cannot allocate memory errno 12"
        ));
        assert!(verbs_call_failed(
            "ibv_post_send() failed with error Cannot allocate memory, opcode 0, len 8"
        ));
        // the same log's lines before the WARN (healthy), and github.com/NVIDIA/nccl-tests/issues/14's
        // verbs library WARN that NCCL answers by using sockets (healthy)
        assert!(
            parse_nccl_errors(t.lines().next().unwrap())
                .error_results
                .is_empty()
        );
        let h =
            "e66aa18dc444:3171:3171 [0] misc/ibvwrap.cu:61 WARN Failed to open libibverbs.so[.1]\n";
        assert!(parse_nccl_errors(h).error_results.is_empty());
        // a device discovery skips (ibv_open_device) and an optional probe are not the job's error
        assert!(!verbs_call_failed("Call to ibv_open_device failed"));
        assert!(!verbs_call_failed(
            "Call to ibv_query_ece failed with error Invalid argument errno 22"
        ));
        assert!(!verbs_call_failed("Call to ibv_reg_mr_iova2x failed"));
    }

    #[test]
    fn a_bus_error_in_nccls_shared_memory_code() {
        // github.com/NVIDIA/JAX-Toolbox/issues/183 (problem): gdb's report, a frame in
        // ncclShmOpen
        let t = "Thread 787 \"imagenet_fake_d\" received signal SIGBUS, Bus error.\n[Switching to Thread 0x7f45d7dff640 (LWP 3925)]\n0x00007f6b59544f3b in ncclShmOpen(char*, unsigned long, void**, void**, int, void**) () from /usr/local/lib/python3.10/dist-packages/jaxlib/xla_extension.so\n(gdb) bt\n#0 0x00007f6b59544f3b in ncclShmOpen(char*, unsigned long, void**, void**, int, void**) ()\n";
        assert!(shm_bus_error(t).is_some_and(|l| l.contains("received signal SIGBUS")));
        let e = parse_nccl_errors(t);
        assert!(e.shm_create_failed && e.bus_error);
        assert!(looks_like(t));
        // github.com/msr-fiddle/pipedream/issues/76 (problem): UCX's report with BUS_ADRERR's
        // text, the frames in a stripped libnccl
        let t = "[8d6bf97c3bf4:3039 :0:3095] Caught signal 7 (Bus error: nonexistent physical address)\n==== backtrace (tid:   3095) ====\n 0 0x0000000000043090 killpg()  ???:0\n 1 0x000000000018bb41 __nss_database_lookup()  ???:0\n 2 0x000000000007587d ncclGroupEnd()  ???:0\n";
        assert!(shm_bus_error(t).is_some());
        assert!(parse_nccl_errors(t).shm_create_failed);
        // github.com/ofiwg/libfabric/issues/9422 (not NCCL's): Open MPI's report, the frames
        // in libfabric
        let t = "[fd7fd1d78666:03983] Signal: Bus error (7)\n[fd7fd1d78666:03983] Signal code: Non-existant physical address (2)\n[fd7fd1d78666:03983] Failing at address: 0x7f04ac0ce000\n[fd7fd1d78666:03983] [ 0] /lib64/libc.so.6(+0x3e990)[0x7f04b5c5a990]\n[fd7fd1d78666:03983] [ 2] /lib64/libfabric.so.1(+0x625500)[0x7f04af005500]\n";
        assert_eq!(shm_bus_error(t), None);
        assert!(!parse_nccl_errors(t).shm_create_failed);
        // a gdb SIGBUS elsewhere, an NCCL frame without the code that says BUS_ADRERR: not read
        assert_eq!(
            shm_bus_error(
                "Thread 2 received signal SIGBUS, Bus error.\n#0 0x1 in ncclGroupEnd ()\n"
            ),
            None
        );
    }

    #[test]
    fn nccl_2_4_posix_fallocate_wording_is_a_segment_not_created() {
        // github.com/NVIDIA/nccl/issues/290: Horovod on 4 GPUs in an NGC container started
        // without --shm-size (problem); the same log's rings over shared memory before the
        // failure are a healthy NCCL log
        let healthy = "gpu2-ru7:2144:2556 [2] NCCL INFO Ring 00 : 2[3d000] -> 3[3e000] via direct shared memory\n\
                       gpu2-ru7:2143:2561 [1] NCCL INFO Ring 00 : 1[1b000] -> 2[3d000] via direct shared memory\n";
        let e = parse_nccl_errors(healthy);
        assert!(!e.shm_create_failed && !e.shm_attach_failed);
        let t = format!(
            "{healthy}\ngpu2-ru7:2143:2561 [1] include/shm.h:28 NCCL WARN Call to posix_fallocate failed : No space left on device\n\
             gpu2-ru7:2143:2561 [1] NCCL INFO include/shm.h:41 -> 2\n"
        );
        let e = parse_nccl_errors(&t);
        assert!(e.shm_create_failed);
        assert!(!e.shm_attach_failed);
        // a warning about another call is not a shared-memory failure
        assert!(!is_old_shm_create(
            "h:1:2 [0] NCCL WARN Call to ibv_reg_mr failed : Cannot allocate memory"
        ));
    }

    #[test]
    fn attach_failure_is_not_a_size_problem() {
        let e = parse_nccl_errors(&fixture("nccl_errors/shm_attach_no_such_file.log"));
        assert!(e.shm_attach_failed);
        assert!(!e.shm_create_failed);
        assert_eq!(e.shm_segment_bytes, Some(14156128));
    }

    #[test]
    fn ncclcheck_macro_lines_name_the_result() {
        // github.com/NVIDIA/nccl/issues/111: a program's NCCLCHECK at commInitRank across
        // nodes, under NCCL 2.0's socket WARN
        let l = "*server name* [0] include/socket.h:185 WARN Call to connect failed : Connection refused\nNCCL failure *MyProgram*.cu:110 'unhandled system error'\n";
        assert!(looks_like(l));
        let e = parse_nccl_errors(l);
        assert_eq!(e.error_results, ["ncclSystemError"]);
        assert_eq!(e.errors[0].location.as_deref(), Some("*MyProgram*.cu:110"));
        assert_eq!(
            e.errors[0].last_error.as_deref(),
            Some("Call to connect failed : Connection refused")
        );
        // nccl-tests' wording with ncclGetLastError after the slash
        let t = "node1: Test NCCL failure common.cu:1005 'remote process exited or there was a network error / socketProgress: Connection closed by remote peer'\n";
        assert_eq!(parse_nccl_errors(t).error_results, ["ncclRemoteError"]);
        // healthy: the macro's source quoted in a post, and a quoted text that is no result
        for h in [
            "    printf(\"Failed, NCCL error %s:%d '%s'\\n\",\n",
            "NCCL error main.cu:12 'success'\n",
        ] {
            assert!(!looks_like(h), "{h}");
            assert!(parse_nccl_errors(h).errors.is_empty(), "{h}");
        }
    }

    #[test]
    fn ncclcheck_trace_after_a_warn_of_the_same_thread_is_a_result() {
        // github.com/sgl-project/sglang/issues/3820: a bootstrap connect fails, result 2
        let t = "node5:240:240 [6] misc/socket.cc:533 NCCL WARN socketPollConnect: Connect to 10.0.0.4<56849> returned 113(No route to host) errno 115(Operation now in progress)\n\
node5:240:240 [6] NCCL INFO misc/socket.cc:570 -> 2\n\
node5:240:240 [6] NCCL INFO misc/socket.cc:621 -> 2\n";
        assert!(looks_like(t));
        let e = parse_nccl_errors(t);
        assert_eq!(e.error_results, vec!["ncclSystemError".to_string()]);
        assert_eq!(e.errors[0].count, 1);
        assert!(
            e.errors[0]
                .last_error
                .as_deref()
                .unwrap()
                .contains("No route to host")
        );
        // github.com/NVIDIA/nccl/issues/676 (healthy): NCCL_IBEXT_DISABLE=1 makes the plugin's
        // init return 3 with no WARN; NCCL goes on with its internal IB
        let h = "gpu01:351578:351578 [0] NCCL INFO NCCL_IBEXT_DISABLE set by environment to 1.\n\
gpu01:351578:351578 [0] NCCL INFO net.cc:55 -> 3\n";
        assert!(parse_nccl_errors(h).errors.is_empty());
        // a WARN of another thread does not make a trace an error
        let o = "a:1:2 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]\na:1:3 [0] NCCL INFO net.cc:55 -> 3\n";
        assert!(parse_nccl_errors(o).errors.is_empty());
    }

    #[test]
    fn a_socket_layer_frame_without_a_warn_is_a_failed_connection() {
        // github.com/hiyouga/LlamaFactory/issues/5018 (torch 2.2.2, NCCL 2.19): two docker
        // containers on two hosts, bootstrap on the bridge's 172.17.0.3; socketPollConnect's
        // silent `return ncclSystemError` (2.16-2.19), its caller's frame first
        let t = "c39f5cf046aa:4773:4907 [0] NCCL INFO NET/Socket : Using [0]eth0:172.17.0.3<0>\n\
c39f5cf046aa:4773:4907 [0] NCCL INFO Using network Socket\n\
c39f5cf046aa:4774:4835 [1] NCCL INFO misc/socket.cc:568 -> 2\n";
        assert!(looks_like(t));
        let e = parse_nccl_errors(t);
        assert_eq!(e.error_results, vec!["ncclSystemError".to_string()]);
        assert_eq!(e.errors[0].location.as_deref(), Some("misc/socket.cc:568"));
        // the rest of the same thread's trace is the same error, not another (the frames
        // v2.19.3-1 prints above it: ncclSocketConnect's `socket.cc:619`, bootstrap's
        // `bootstrap.cc:274`, `group.cc:64`'s `[Async thread]`)
        let t2 = format!(
            "{t}c39f5cf046aa:4774:4835 [1] NCCL INFO misc/socket.cc:619 -> 2\n\
c39f5cf046aa:4774:4835 [1] NCCL INFO bootstrap.cc:274 -> 2\n\
c39f5cf046aa:4774:4835 [1] NCCL INFO group.cc:64 -> 2 [Async thread]\n"
        );
        assert_eq!(parse_nccl_errors(&t2).errors[0].count, 1);
        // an aborted communicator's sockets (`socketProgressOpt: abort called`, result 3) after
        // a watchdog timeout (NVIDIA/nccl#1610's log): the abort, not another error
        let a = " 2025-02-18 12:54 ncivki7qpk7pmo1btv0h0:180:915 [7] NCCL INFO misc/socket.cc:47 -> 3\n\
 2025-02-18 12:54 ncivki7qpk7pmo1btv0h0:180:915 [7] NCCL INFO misc/socket.cc:550 -> 3\n";
        assert!(parse_nccl_errors(a).errors.is_empty());
        // healthy: the plugin NCCL skips traces in net.cc / net_ib.cc, not the socket layer
        let h = "gpu01:351578:351578 [0] NCCL INFO net.cc:55 -> 3\n\
vm:859:859 [0] NCCL INFO transport/net_ib.cc:852 -> 3\n";
        assert!(parse_nccl_errors(h).errors.is_empty());
    }

    #[test]
    fn oneflows_nccl_check_names_the_call_and_the_result() {
        // Oneflow-Inc/oneflow `OF_NCCL_CHECK`'s message, as the macro prints it
        let t = "Check failed: ncclGroupEnd() : unhandled system error (2). To see more detail, please run OneFlow with system variable NCCL_DEBUG=INFO\n";
        let e = parse_nccl_errors(t);
        assert_eq!(e.error_results, vec!["ncclSystemError".to_string()]);
        assert_eq!(e.errors[0].location.as_deref(), Some("ncclGroupEnd()"));
        // Oneflow-Inc/oneflow#3586's title, the same text without the code
        let e = parse_nccl_errors("NCCL Check failed: ncclGroupEnd() : unhandled system error\n");
        assert_eq!(e.error_results, vec!["ncclSystemError".to_string()]);
        // another library's failed check, or a text that is not NCCL's, is not read
        assert!(
            parse_nccl_errors("Check failed: cudaMalloc(&p, n) : out of memory (2)\n")
                .errors
                .is_empty()
        );
        assert!(
            parse_nccl_errors("Check failed: ncclCommCount(comm) : something else\n")
                .errors
                .is_empty()
        );
    }

    #[test]
    fn an_async_thread_frame_is_the_init_jobs_result_without_a_warn() {
        // github.com/pytorch/pytorch/issues/131781 (a comment's run, NCCL 2.20 by its frames):
        // socket.cc's EQCHECK prints only its frame, no WARN; the trace reaches group.cc's
        // `[Async thread]`
        let t = "g105:26927:27054 [6] NCCL INFO Using network IB\n\
g105:26921:27058 [0] NCCL INFO misc/socket.cc:505 -> 2 (Operation now in progress)\n\
g105:26921:27058 [0] NCCL INFO misc/socket.cc:570 -> 2\n\
g105:26921:27058 [0] NCCL INFO bootstrap.cc:275 -> 2\n\
g105:26921:27058 [0] NCCL INFO init.cc:1493 -> 2\n\
g105:26921:27058 [0] NCCL INFO group.cc:64 -> 2 [Async thread]\n\
g105:26923:27059 [2] NCCL INFO misc/socket.cc:505 -> 2 (Operation now in progress)\n\
g105:26923:27059 [2] NCCL INFO group.cc:64 -> 2 [Async thread]\n";
        assert!(looks_like(t));
        let e = parse_nccl_errors(t);
        assert_eq!(e.error_results, vec!["ncclSystemError".to_string()]);
        assert_eq!(e.errors[0].count, 2);
        assert_eq!(e.errors[0].location.as_deref(), Some("misc/socket.cc:505"));
        assert_eq!(
            e.errors[0].last_error.as_deref(),
            Some("Operation now in progress")
        );
        // the frame alone (a paste that kept only it) is the result too, without a place
        let a = parse_nccl_errors("n1:7:9 [1] NCCL INFO group.cc:72 -> 3 [Async thread]\n");
        assert_eq!(a.error_results, vec!["ncclInternalError".to_string()]);
        assert_eq!(a.errors[0].location, None);
        // a WARN's trace that goes on to the frame is one error, not two
        let w = "n1:7:9 [1] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 10.0.0.2<4000> failed : Connection refused\n\
n1:7:9 [1] NCCL INFO misc/socket.cc:567 -> 2\n\
n1:7:9 [1] NCCL INFO bootstrap.cc:270 -> 2\n\
n1:7:9 [1] NCCL INFO group.cc:65 -> 2 [Async thread]\n";
        let e = parse_nccl_errors(w);
        assert_eq!(e.error_results, vec!["ncclSystemError".to_string()]);
        assert_eq!(e.errors[0].count, 1);
        assert!(
            e.errors[0]
                .last_error
                .as_deref()
                .unwrap()
                .contains("Connection refused")
        );
        // a trace cut before its async frame that starts in the socket layer is still the
        // socket's failure (see `socket_layer_frame`)
        let c = parse_nccl_errors(
            "n1:7:9 [1] NCCL INFO misc/socket.cc:505 -> 2 (Operation now in progress)\nn1:7:9 [1] NCCL INFO init.cc:1493 -> 2\n",
        );
        assert_eq!(c.error_results, vec!["ncclSystemError".to_string()]);
        assert_eq!(c.errors[0].count, 1);
        // neighbours: frames without the async frame and without a WARN outside the socket
        // layer (a skipped plugin, nccl#676) stay nothing, and so does a frame that ends
        // otherwise
        for h in [
            "gpu01:351578:351578 [0] NCCL INFO net.cc:55 -> 3\n",
            "n1:7:9 [1] NCCL INFO init.cc:1493 -> 2\n",
            "n1:7:9 [1] NCCL INFO group.cc:64 -> 0 [Async thread]\n",
            "n1:7:9 [1] NCCL INFO [Async thread] -> 2\n",
        ] {
            assert!(parse_nccl_errors(h).errors.is_empty(), "{h}");
        }
    }

    #[test]
    fn no_net_plugin_initialized_is_invalid_usage() {
        // the Polaris evidence file (rcc-uchicago/pedramh-profiling, polaris_nccl_debug_info.md):
        // aws-ofi-nccl 1.21.1 fails, then NCCL 2.28.3's ncclNetInit gives up
        let t = "NCCL INFO NET/OFI No eligible providers were found\n\
[2026-09-17 04:02:30] x3002c0s31b0n0:3333526:3333526 [0] int nccl_net_ofi_create_plugin(nccl_net_ofi_plugin_t**):418 NCCL WARN NET/OFI aws-ofi-nccl initialization failed\n\
[2026-09-17 04:02:30] x3002c0s31b0n0:3333526:3333526 [0] plugin/net.cc:306 NCCL WARN Failed to initialize any NET plugin\n";
        assert!(looks_like(t));
        let e = parse_nccl_errors(t);
        assert_eq!(e.error_results, vec!["ncclInvalidUsage".to_string()]);
        assert_eq!(
            e.errors[0].last_error.as_deref(),
            Some("Failed to initialize any NET plugin")
        );
        // 2.12–2.26's wording, NCCL_NET naming a network no plugin provides
        let o = "h:1:1 [0] net.cc:285 NCCL WARN Error: network AWS Libfabric not found.\n";
        assert_eq!(
            parse_nccl_errors(o).error_results,
            vec!["ncclInvalidUsage".to_string()]
        );
        // neighbours: the plugin's own failure alone (NCCL may go on with IB or Socket), NCCL's
        // INFO that one plugin failed, and a WARN that only mentions a network
        for h in [
            "h:1:1 [0] int nccl_net_ofi_create_plugin(nccl_net_ofi_plugin_t**):418 NCCL WARN NET/OFI aws-ofi-nccl initialization failed\n",
            "h:1:1 [0] NCCL INFO Failed to initialize NET plugin IB\n",
            "h:1:1 [0] init.cc:100 NCCL WARN Error: network interface eth9 not usable, trying the next\n",
        ] {
            assert!(parse_nccl_errors(h).errors.is_empty(), "{h}");
        }
    }

    /// NCCL 2.4–2.9's `connectAddress` (`src/include/socket.h`) warns `Connect to %s failed : %s`
    /// and returns ncclSystemError (see [`connect_address_failed`]).
    #[test]
    fn nccl_2_4_to_2_9_connect_failure_is_a_system_error() {
        // wenet-e2e/wenet#1891 (torch 1.9.0+cu111, NCCL 2.7.8): a two-node job dials a peer's
        // IPv6 link-local address; the poster's Chinese line and the inline-code backtick kept
        let t = "启动后得到如下报错，求指导\n\n\
`voicec105:90736:90736 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]\n\
voicec105:90736:90736 [0] NCCL INFO NET/Socket : Using [0]eno1:172.16.20.105<0>\n\
voicec105:90736:91655 [0] NCCL INFO Channel 00 : 1[89000] -> 2[b1000] [send] via NET/Socket/0\n\
\n\
voicec105:90736:91655 [0] include/socket.h:403 NCCL WARN Connect to fe80::c4eb:49ff:fe04:e32d%6<57335> failed : Network is unreachable\n";
        assert!(looks_like(t));
        let e = parse_nccl_errors(t);
        assert_eq!(e.error_results, vec!["ncclSystemError".to_string()]);
        assert!(
            e.errors[0]
                .last_error
                .as_deref()
                .unwrap()
                .contains("Network is unreachable")
        );
        // an IPv4 peer refusing after NCCL's retries (the same WARN, another errno)
        let t = "n1:7:9 [1] include/socket.h:390 NCCL WARN Connect to 10.0.0.2<4000> failed : Connection refused\n";
        assert_eq!(
            parse_nccl_errors(t).error_results,
            vec!["ncclSystemError".to_string()]
        );
        // neighbours: the retry 2.4–2.9 log at INFO, the missing-verbs WARN that goes on over
        // sockets, 2.10–2.14's `Net : ` wording (its result changed between releases), and the
        // same words without NCCL's WARN header
        for t in [
            "n1:7:9 [1] NCCL INFO Call to connect returned Connection refused, retrying\n",
            "n1:7:7 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]\n",
            "n1:7:9 [1] misc/socket.cc:456 NCCL WARN Net : Connect to 10.0.0.2<4000> failed : Connection refused\n",
            "Connect to 10.0.0.2<4000> failed : Connection refused\n",
        ] {
            assert!(parse_nccl_errors(t).error_results.is_empty(), "{t}");
        }
    }

    #[test]
    fn a_socket_warn_nccl_returns_an_error_after_is_that_error() {
        // github.com/gpustack/gpustack/issues/2275: a maintainer quotes the poster's one WARN
        // line (NCCL 2.21.5, `socketStartConnect` returns ncclSystemError), no trace after it
        let t = "gpu:77952:77952 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 172.21.0.1<57093> failed : Software caused connection abort\n";
        assert!(looks_like(t));
        let e = parse_nccl_errors(t);
        assert_eq!(e.error_results, vec!["ncclSystemError".to_string()]);
        assert!(
            e.errors[0]
                .last_error
                .as_deref()
                .unwrap()
                .contains("Software caused connection abort")
        );
        // github.com/sgl-project/sglang/issues/5594: the IB plugin's copy (`socket.c`), its
        // thread's trace after it names the same result once
        let t = "h100-15:139:1092 [7] socket.c:485 NCCL WARN socketStartConnect: Connect to 10.0.0.82<38455> failed : Software caused connection abort\n\
h100-15:139:1092 [7] NCCL INFO transport/net.cc:687 -> 2\n";
        let e = parse_nccl_errors(t);
        assert_eq!(e.error_results, vec!["ncclSystemError".to_string()]);
        assert_eq!(e.errors[0].count, 1);
        // the wordings of each release and the result each returns (NVIDIA/nccl
        // src/misc/socket.cc v2.21.5-1 and v2.27.3-1, src/os/linux.cc v2.29.3-1)
        for (w, r) in [
            (
                "socketStartConnect: exceeded retries (20)",
                "ncclRemoteError",
            ),
            (
                "socketPollConnect: exceeded timeouts (10)",
                "ncclRemoteError",
            ),
            (
                "socketPollConnect: Connect to 10.0.0.4<56849> returned 113(No route to host) errno 115(Operation now in progress)",
                "ncclSystemError",
            ),
            (
                "socketStartConnect: connect to 10.1.0.7<41234> failed : Network is unreachable",
                "ncclSystemError",
            ),
            (
                "socketPollConnect: connect to 10.1.0.7<41234> returned Connection refused, exceeded error retry count after 35 attempts",
                "ncclRemoteError",
            ),
            (
                "ncclOsSocketStartConnect: connect to 10.1.0.7<41234> failed : Network is unreachable",
                "ncclSystemError",
            ),
            (
                "socketPollConnect poll() failed with error Interrupted system call",
                "ncclRemoteError",
            ),
            (
                "socketProgressOpt: Call to recv from 172.16.1.2<33759> failed : Connection reset by peer",
                "ncclRemoteError",
            ),
            (
                "socketProgressOpt: Call to send to 172.16.1.2<33759> failed : Broken pipe",
                "ncclRemoteError",
            ),
            (
                "socketProgress: Connection closed by remote peer node1<57557>",
                "ncclRemoteError",
            ),
        ] {
            assert_eq!(socket_warn_result(w), Some(r), "{w}");
        }
        // the retry the socket layer logs at INFO, a NULL-argument WARN and the `Net :` wording
        // whose result changed between releases are not read as a result
        for w in [
            "socketStartConnect: connect to 10.1.0.7<41234> returned Connection refused, retrying (1/34) after sleep for 100 msec",
            "ncclSocketConnect: pass NULL socket",
            "Net : Connect to 10.0.0.2<45763> failed : Connection refused",
        ] {
            assert_eq!(socket_warn_result(w), None, "{w}");
        }
        // github.com/hkproj/pytorch-transformer-distributed/issues/1: torch relays the WARN
        // after `Last error:`; one error, the reason kept
        let t = "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1333, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.6\n\
ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. \n\
Last error:\n\
socketStartConnect: Connect to 192.168.19.14<52822> failed : No route to host\n";
        let e = parse_nccl_errors(t);
        assert_eq!(e.errors.len(), 1);
        assert_eq!(e.errors[0].count, 1);
        assert!(
            e.errors[0]
                .last_error
                .as_deref()
                .unwrap()
                .contains("No route to host")
        );
        // the relayed line pasted alone, after a launcher's rank prefix
        let t = "[rank3]: socketProgress: Connection closed by remote peer node1<57557>\n";
        assert!(looks_like(t));
        assert_eq!(
            parse_nccl_errors(t).error_results,
            vec!["ncclRemoteError".to_string()]
        );
        // healthy (github.com/NVIDIA/nccl/issues/1538, one worker's ring over P2P/CUMEM):
        // nothing of the socket layer, no error
        let h = "job-3bb823c0-6d27-4312-8094-1c5910bf9b51-worker-0:5670:5810 [7] NCCL INFO Channel 02/0 : 7[7] -> 0[0] via P2P/CUMEM\n";
        assert!(parse_nccl_errors(h).errors.is_empty());
        // prose naming the function is not its WARN
        assert!(!looks_like("we saw socketStartConnect fail once\n"));
    }

    #[test]
    fn a_watchdog_line_word_wrapped_after_watchdog_is_read() {
        // github.com/pytorch/pytorch/pull/123023's test plan, wrapped at 72 columns
        let t = "[E329 19:15:11.775879730 ProcessGroupNCCL.cpp:565] [Rank 0] Watchdog\n\
caught collective operation timeout: WorkNCCL(SeqNum=2,\n\
OpType=ALLREDUCE, NumelIn=10, NumelOut=10, Timeout(ms)=10000) ran for\n\
10028 milliseconds before timing out.\n";
        assert!(looks_like(t));
        let e = parse_nccl_errors(t);
        assert_eq!(e.timeout_count, 1);
        assert_eq!(e.timeouts[0].rank, Some(0));
        assert_eq!(e.timeouts[0].seq, Some(2));
        assert_eq!(e.timeouts[0].op, "ALLREDUCE");
        assert_eq!(e.timeouts[0].timeout_ms, Some(10000));
        // a healthy line mentioning the watchdog is not one
        assert!(!looks_like(
            "[I ProcessGroupNCCL.cpp:686] [Rank 0] ProcessGroupNCCL initialization options: TIMEOUT(ms): 1800000\n"
        ));
    }

    #[test]
    fn a_c10d_log_line_is_read_and_names_no_failure() {
        // blog.gitcode.com/f78d4cd39715695693749a93add86b4d.html (modded-nanogpt on 8xH100):
        // C10D_DEBUG under c10's log prefix, alone in the paste
        let t = "[I1107 01:20:27.770733060 TCPStoreLibUvBackend.cpp:119] [c10d - debug] Read callback failed. code:-4095 name:EOF desc:end of file\n";
        assert!(looks_like(t));
        let e = parse_nccl_errors(t);
        assert_eq!(e.timeout_count, 0);
        assert!(e.error_results.is_empty());
        // the H200 capture's C10D_INFO lines under torchrun's start-up (tests/fixtures/corpus/
        // h200_nccl_watchdog_healthy.log): read, no failure
        let t = "[I1203 15:07:23.847694479 TCPStoreLibUvBackend.cpp:1321] [c10d] uv_loop_close failed with:-16 errn:EBUSY desc:resource busy or locked\n";
        assert!(looks_like(t));
        assert_eq!(parse_nccl_errors(t).timeout_count, 0);
        // a c10d line beside the timeout capture's watchdog line (h200_nccl_watchdog_timeout.log,
        // line 12): still one timeout
        let t = concat!(
            "[I1203 15:07:18.652291871 socket.cpp:955] [c10d] The client socket has connected to [localhost]:42797 on SocketImpl(fd=34, addr=[localhost]:47868, remote=[localhost]:42797).\n",
            "[rank0]:[E1203 15:06:00.795629686 ProcessGroupNCCL.cpp:689] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=2, OpType=ALLREDUCE, NumelIn=1048576, NumelOut=1048576, Timeout(ms)=10000) ran for 10030 milliseconds before timing out.\n",
        );
        assert_eq!(parse_nccl_errors(t).timeout_count, 1);
        // github.com/gensyn-ai/rl-swarm/issues/197: April 27, month-day `427` in three digits
        // (c10's `(tm_mon + 1) * 100 + tm_mday`, not zero-padded): read, no failure
        let t = "[W427 01:04:16.149509694 socket.cpp:752] [c10d] The client socket has failed to connect to [::ffff:198.18.0.1]:3254 (errno: 110 - Connection timed out).\n";
        assert!(looks_like(t));
        let e = parse_nccl_errors(t);
        assert_eq!(e.timeout_count, 0);
        assert!(e.error_results.is_empty());
        // a month-day of two digits or five is not c10's
        assert!(!looks_like(
            "[W27 01:04:16.149509694 socket.cpp:752] [c10d] x\n"
        ));
        assert!(!looks_like(
            "[W12345 01:04:16.149509694 socket.cpp:752] [c10d] x\n"
        ));
        // prose about c10d, or the tag outside c10's prefix, is not such a line
        assert!(!looks_like("the [c10d] logger prints store traffic\n"));
        assert!(!looks_like("INFO [c10d] rendezvous ok\n"));
    }

    #[test]
    fn the_flight_recorder_analysis_names_the_collective_and_the_ranks_that_never_joined() {
        // pytorch/pytorch#140969's test plan (fr_trace's `: sequence number:` head)
        let t = "Not all ranks joining collective: sequence number: 31117\ninternal record id: 31116\ngroup info: 0:default_pg\ncollective: nccl:all_reduce\nmissing ranks: {3, 4, 5, 6, 7}\ninput sizes: [[1571911]]\nworld size: 8\ncollective state: scheduled\ncollective stack trace:\n all_reduce at /x/torch/distributed/distributed_c10d.py:2707\n";
        assert!(looks_like(t));
        let e = parse_nccl_errors(t);
        assert_eq!(e.not_joined.len(), 1);
        let n = &e.not_joined[0];
        assert_eq!(n.seq, Some(31117));
        assert_eq!(n.op.as_deref(), Some("nccl:all_reduce"));
        assert_eq!(n.missing_ranks, vec![3, 4, 5, 6, 7]);
        assert_eq!(n.state.as_deref(), Some("scheduled"));
        // pytorch/tutorials prototype_source/flight_recorder_tutorial.rst (`N at entry E`)
        let t = "  $torchfrtrace --prefix \"trace_\" /tmp/\n  Not all ranks joining collective 5 at entry 4\n  group info: 0:default_pg\n  collective: nccl:all_reduce\n  missing ranks: {1}\n  expected ranks: 2\n  collective state: scheduled\n";
        let n = &parse_nccl_errors(t).not_joined[0];
        assert_eq!((n.seq, n.missing_ranks.clone()), (Some(5), vec![1]));
        // 2.7 on (`EntryState.log`), pytorch/tutorials debug_hangs_with_flight_recorder
        let t = "Not all ranks joining collective, sequence number: 4\ncollective: nccl:all_reduce\nmissing ranks: {1}\ncollective state: scheduled\n";
        assert_eq!(parse_nccl_errors(t).not_joined[0].seq, Some(4));
        // 2.5's one line (tools/flight_recorder/fr_trace.py)
        let t = "Not all ranks joining collective for group 0:default_pg collective nccl:all_reduce Missing ranks are {2, 3}\n";
        let n = &parse_nccl_errors(t).not_joined[0];
        assert_eq!(n.op.as_deref(), Some("nccl:all_reduce"));
        assert_eq!(n.missing_ranks, vec![2, 3]);
        // a healthy run's analysis reports nothing; the recorder's settings are not a report
        assert!(!looks_like(
            "TORCH_FR_BUFFER_SIZE=2000 TORCH_NCCL_DUMP_ON_TIMEOUT=1 torchrun train.py\n"
        ));
    }

    #[test]
    fn heartbeat_monitor_stuck_watchdog_hard_wrapped_is_read() {
        // github.com/om-ai-lab/VLM-R1/issues/257: rank 6's heartbeat monitor, pasted wrapped at
        // the terminal's width (mid-word, trailing spaces kept)
        let t = concat!(
            "[rank6]:[E429 13:55:49.384372190 ProcessGroupNCCL.cpp:1743] [PG ID 0 PG GUID 0(default_pg) Rank 6] ProcessGroupNCCL'\n",
            "s watchdog got stuck for 480 seconds without making progress in monitoring enqueued collectives. This typically indi\n",
            "cates a NCCL/CUDA API (e.g., CudaEventDestroy) hang blocking the watchdog, and could be triggered by another thread \n",
        );
        assert!(looks_like(t));
        let e = parse_nccl_errors(t);
        assert_eq!(
            e.watchdog_stuck,
            vec![WatchdogStuck {
                rank: Some(6),
                pg: Some("0".into()),
                seconds: Some(480)
            }]
        );
        assert_eq!(e.timeout_count, 0);
    }

    #[test]
    fn heartbeat_monitor_with_no_work_is_a_teardown_hang_not_a_collective() {
        // mit-han-lab/distrifuser#6 (torch 2.3): the run finished, then the abort at exit hung
        // and both ranks' monitors found their watchdog with no work (`workMetaList_.size()=0`)
        let t = crate::test_corpus("h111_watchdog_distrifuser6_abort_at_exit_heartbeat.log");
        let e = parse_nccl_errors(&t);
        assert!(e.watchdog_stuck.is_empty(), "{:?}", e.watchdog_stuck);
        assert_eq!(e.timeout_count, 0);
        // the same monitor with works in flight (an ALCF Polaris page's 2.3 log): a hang
        let busy = concat!(
            "[rank25]:[E ProcessGroupNCCL.cpp:1316] [PG 0 Rank 25] Heartbeat monitor timed out! Process will be terminated after dumping debug info. workMetaList_.size()=2\n",
            "[rank25]:[F ProcessGroupNCCL.cpp:1169] [PG 0 Rank 25] [PG 0 Rank 25] ProcessGroupNCCL's watchdog got stuck for 600 seconds without making progress in monitoring enqueued collectives. workMetaList_.size() = 2\n",
        );
        let e = parse_nccl_errors(busy);
        assert_eq!(e.watchdog_stuck.len(), 1);
        assert_eq!(e.watchdog_stuck[0].rank, Some(25));
        assert_eq!(e.watchdog_stuck[0].seconds, Some(600));
        // a size of 0 on one rank leaves another rank's busy monitor a hang
        let mixed = format!(
            "{busy}[rank3]:[E ProcessGroupNCCL.cpp:1316] [PG 0 Rank 3] Heartbeat monitor timed out! Process will be terminated after dumping debug info. workMetaList_.size()=0\n"
        );
        let e = parse_nccl_errors(&mixed);
        assert_eq!(e.watchdog_stuck.len(), 1);
        assert_eq!(e.watchdog_stuck[0].rank, Some(25));
        // the monitor's line without the size (a paste that cut it) is still a hang
        let cut = "[rank1]:[E ProcessGroupNCCL.cpp:1316] [PG 0 Rank 1] Heartbeat monitor timed out! Process will be terminated after dumping debug info.\n";
        assert_eq!(parse_nccl_errors(cut).watchdog_stuck.len(), 1);
    }

    #[test]
    fn heartbeat_settings_in_a_launch_are_not_a_stuck_watchdog() {
        // github.com/sgl-project/sglang/issues/3783: the monitor's settings, no hang reported
        let t = concat!(
            "TORCH_NCCL_ENABLE_MONITORING=0 TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC=10000000 python3 -m sglang.launch_server --model-path /DeepSeek-R1-BF16 --watchdog-timeout 0 --tensor-parallel-size 32\n",
            "    -e TORCH_NCCL_ENABLE_MONITORING='0' \\\n",
            "    -e TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC='10000' \\\n",
        );
        assert!(!looks_like(t));
        assert!(parse_nccl_errors(t).watchdog_stuck.is_empty());
    }

    #[test]
    fn timeout_at_nccl_work_alone_is_a_timeout_and_the_error_wording_is_not() {
        // github.com/axolotl-ai-cloud/axolotl/issues/2267 (torch 2.5, a tmux scroll-back: rows
        // overwritten mid-record, `[NN/1422]` markers at the pane's right edge)
        let t = "ued NCCL E114 16:14:58.940745885 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank 0] Exception (either an error or timeout) detected by watchdog at work: 1, last enque[30/1422]\n\
                 \x20        E114 16:14:58.306997582 ProcessGroupNCCL.cpp:1834] [PG ID 0 PG GUID 0(default_pg) Rank 1] Timeout at NCCL work: 1, last enqueued NCCL work: 1, last completed NCCL work: -1.[25/1422]\n";
        assert!(looks_like(t));
        let e = parse_nccl_errors(t);
        assert_eq!(e.timeout_count, 1);
        assert_eq!(e.timeout_ranks, vec![1]);
        let w = &e.timeouts[0];
        assert_eq!(
            (w.rank, w.seq, w.pg.as_deref()),
            (Some(1), Some(1), Some("0"))
        );
        // `last completed NCCL work: -1`: none had completed (2.4-2.5's wording of the state)
        assert_eq!(e.last_completed_work, Some(-1));
        assert!(w.op.is_empty() && w.timeout_ms.is_none());
        // the watchdog's line for an error or a timeout alike is no timeout by itself
        // (github.com/XPixelGroup/BasicSR/issues/737's second line)
        let either = "[rank1]:[E626 06:24:44.906457629 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank 1] Exception (either an error or timeout) detected by watchdog at work: 808, last enqueued NCCL work: 811, last completed NCCL work: 807.\n";
        assert_eq!(parse_nccl_errors(either).timeout_count, 0);
        // the message line and the `Timeout at` line of the same work count once
        // (github.com/OpenRLHF/OpenRLHF/issues/624, torch 2.5 behind Ray's actor prefix; the
        // stored copy cuts the last row after `[repea`)
        let both = "(ReferenceModelRayActor pid=5823, ip=10.164.227.153) [rank0]:[E1225 12:58:32.712922209 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=17284, OpType=_ALLGATHER_BASE, NumelIn=415236096, NumelOut=1245708288, Timeout(ms)=7200000) ran for 7200031 milliseconds before timing out. [repeated 14x across cluster]\n\
                    (ReferenceModelRayActor pid=5823, ip=10.164.227.153) [rank0]:[E1225 12:58:32.713134032 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank 0] Exception (either an error or timeout) detected by watchdog at work: 17284, last enqueued NCCL work: 17290, last completed NCCL work: 17283. [repeated 14x across cluster]\n\
                    (ReferenceModelRayActor pid=5823, ip=10.164.227.153) [rank0]:[E1225 12:58:32.713143751 ProcessGroupNCCL.cpp:1834] [PG ID 0 PG GUID 0(default_pg) Rank 0] Timeout at NCCL work: 17284, last enqueued NCCL work: 17290, last completed NCCL work: 17283. [repea\n";
        let e = parse_nccl_errors(both);
        assert_eq!(e.timeout_count, 1);
        assert_eq!(e.timeouts[0].op, "_ALLGATHER_BASE");
    }

    #[test]
    fn check_timeout_back_trace_without_its_message_is_a_timeout() {
        // github.com/NVIDIA/Megatron-LM/issues/935: the paste starts at the frames of the
        // exception `WorkNCCL::checkTimeout` built; the `what():` line naming it was cut
        let t = "frame #0: c10::Error::Error(c10::SourceLocation, std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >) + 0x99 (0x7fe76ab98969 in /usr/local/lib/python3.10/dist-packages/torch/lib/libc10.so)\n\
                 frame #1: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, std::ratio<1l, 1000l> > >) + 0x1e1 (0x7fe705ea04e1 in /usr/local/lib/python3.10/dist-packages/torch/lib/libtorch_cuda.so)\n\
                 frame #2: c10d::ProcessGroupNCCL::watchdogHandler() + 0x222 (0x7fe705ea81a2 in /usr/local/lib/python3.10/dist-packages/torch/lib/libtorch_cuda.so)\n\
                 \n\
                 terminate called after throwing an instance of 'c10::DistBackendError'\n";
        assert!(looks_like(t));
        let e = parse_nccl_errors(t);
        assert_eq!(e.timeout_count, 0);
        assert_eq!(
            e.timeout_raised_at.as_deref(),
            Some("the WorkNCCL::checkTimeout frame of a back trace")
        );
        // the header c10 prints above the frames names the function and the line
        // (github.com/axolotl-ai-cloud/axolotl/issues/1670, torch 2.2)
        let h = "Exception raised from checkTimeout at ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:525 (most recent call first):\n";
        assert_eq!(
            parse_nccl_errors(h).timeout_raised_at.as_deref(),
            Some("checkTimeout at ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:525")
        );
        // the watchdog's frames under an NCCL error (no checkTimeout) are not a timeout
        // (github.com/NVIDIA/Megatron-LM/issues/935's neighbours: the error path rethrows from
        // ncclCommWatchdog; github.com/deepspeedai/DeepSpeed/issues/6875 raises from
        // checkForNCCLErrorsInternal)
        let err = "Exception raised from checkForNCCLErrorsInternal at /opt/pytorch/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1954 (most recent call first):\n\
                   frame #0: c10::Error::Error(c10::SourceLocation, std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >) + 0x98 (0x7fad0a5e2cc8 in /usr/local/lib/python3.10/dist-packages/torch/lib/libc10.so)\n";
        assert_eq!(parse_nccl_errors(err).timeout_raised_at, None);
        assert!(!looks_like(err));
    }

    #[test]
    fn healthy_nccl_init_log_has_no_errors() {
        let t = fixture("nccl/single_node_p2p.log");
        let e = parse_nccl_errors(&t);
        assert!(e.timeouts.is_empty() && e.errors.is_empty() && !e.shm_create_failed);
        assert!(!looks_like(&t));
    }

    #[test]
    fn a_watchdog_line_wrapped_mid_word_is_read_whole() {
        // huggingface/open-r1#620: a terminal 136 columns wide split each line inside
        // `WorkNCCL(…)`, once inside `NumelOut` and once inside `OpType`
        let e = parse_nccl_errors(concat!(
            " ProcessGroupNCCL.cpp:629] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=4, OpType=BROADCAST, NumelIn=112, Numel\n",
            "Out=112, Timeout(ms)=1800000) ran for 1800010 milliseconds before timing out.\n",
            "[rank2]:[E424 01:11:21.160832730 ProcessGroupNCCL.cpp:629] [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=4, OpTy\n",
            "pe=BROADCAST, NumelIn=112, NumelOut=112, Timeout(ms)=1800000) ran for 1800010 milliseconds before timing out.\n",
        ));
        assert_eq!(e.timeout_count, 2);
        assert_eq!(e.timeout_ranks, vec![1, 2]);
        for t in &e.timeouts {
            assert_eq!(t.op, "BROADCAST");
            assert_eq!(t.seq, Some(4));
            assert_eq!(t.numel_out, Some(112));
            assert_eq!(t.timeout_ms, Some(1800000));
            assert_eq!(t.ran_for_ms, Some(1800010));
        }
        assert_eq!(e.lines, 2);
        // an unwrapped line reads as before and its neighbour is not swallowed
        let e = parse_nccl_errors(concat!(
            "[rank0]:[E626 06:24:44.903881913 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=808, OpType=ALLREDUCE, NumelIn=9801523, NumelOut=9801523, Timeout(ms)=600000) ran for 600020 milliseconds before timing out.\n",
            "[rank0]:[E626 06:24:44.906457629 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank 0] Exception (either an error or timeout) detected by watchdog at work: 808, last enqueued NCCL work: 811, last completed NCCL work: 807.\n",
        ));
        assert_eq!(e.timeouts[0].op, "ALLREDUCE");
        assert_eq!(e.last_completed_work, Some(807));
        // a work cut off for good (the paste ends, or a new watchdog line follows) joins nothing
        let e = parse_nccl_errors(concat!(
            "[Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=4, OpTy\n",
            "[Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=4, OpType=BROADCAST, Timeout(ms)=60000) ran for 60001 milliseconds before timing out.\n",
        ));
        assert_eq!(e.timeout_count, 2);
        assert_eq!(e.timeouts[0].op, "");
        assert_eq!(e.timeouts[1].op, "BROADCAST");
    }

    #[test]
    fn a_watchdog_line_wrapped_right_after_its_timeout_is_read_whole() {
        // HKUDS/GraphGPT#44: a 75-column terminal padded each row and broke the message after
        // `WorkNCCL(` and again right after `Timeout(ms)=1800000`, so the `)` closing the work
        // opens the next row; the `what():` copy below it breaks inside `OpType`
        let t = concat!(
            "[E ProcessGroupNCCL.cpp:915] [Rank 1] NCCL watchdog thread terminated with \n",
            "exception: [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(\n",
            "SeqNum=778778, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000\n",
            ") ran for 1800413 milliseconds before timing out.                          \n",
            "terminate called after throwing an instance of 'std::runtime_error'\n",
            "  what():  [Rank 1] NCCL watchdog thread terminated with exception: [Rank 1\n",
            "] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=778778, OpT\n",
            "ype=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800413 \n",
            "milliseconds before timing out.   \n",
        );
        let e = parse_nccl_errors(t);
        assert_eq!(e.timeout_count, 2);
        for w in &e.timeouts {
            assert_eq!(w.op, "ALLREDUCE");
            assert_eq!(w.seq, Some(778778));
            assert_eq!(w.numel_in, Some(1));
            assert_eq!(w.timeout_ms, Some(1800000));
        }
        assert_eq!(e.timeouts[0].ran_for_ms, Some(1800413));
        // the row after a work closed on its own row is not swallowed
        let e = parse_nccl_errors(concat!(
            "[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE, Timeout(ms)=600000\n",
            ") ran for 600011 milliseconds before timing out.\n",
            "[Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600020 milliseconds before timing out.\n",
        ));
        assert_eq!(e.timeout_count, 2);
        assert_eq!(e.timeouts[0].timeout_ms, Some(600000));
        assert_eq!(e.timeouts[0].ran_for_ms, Some(600011));
        assert_eq!(e.timeouts[1].ran_for_ms, Some(600020));
        // a TensorShape's brackets and a closed work on one row: nothing to join
        assert_eq!(
            work_closed(
                "WorkNCCL(OpType=BROADCAST, TensorShape=[25365, 2], Timeout(ms)=1800000) ran"
            ),
            Some(true)
        );
        assert_eq!(
            work_closed("WorkNCCL(SeqNum=1, Timeout(ms)=60000"),
            Some(false)
        );
        assert_eq!(work_closed("no work here"), None);
    }

    #[test]
    fn oldest_work_format_with_tensor_shape() {
        let e = parse_nccl_errors(
            "[E ProcessGroupNCCL.cpp:566] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(OpType=BROADCAST, TensorShape=[25365, 2], Timeout(ms)=1800000) ran for 1805993 milliseconds before timing out.\n",
        );
        assert_eq!(e.timeouts[0].op, "BROADCAST");
        assert_eq!(e.timeouts[0].tensor_shape.as_deref(), Some("[25365, 2]"));
        assert_eq!(e.timeouts[0].seq, None);
        assert_eq!(e.timeouts[0].timeout_ms, Some(1800000));
    }

    #[test]
    fn every_truncation_parses() {
        let text = fixture("nccl_errors/vllm_shm_system_error.log");
        for p in prefixes(&text, 7) {
            let _ = parse_nccl_errors(p);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            failure_persistence: None,
            ..ProptestConfig::with_cases(256)
        })]

        #[test]
        fn random_text_never_panics(s in "\\PC{0,600}") {
            let _ = parse_nccl_errors(&s);
        }

        #[test]
        fn garbled_work_never_panics(inner in "[A-Za-z=0-9, \\[\\]()]{0,80}") {
            let t = format!("[Rank 1] Watchdog caught collective operation timeout: WorkNCCL({inner}) ran for 9 milliseconds before timing out.\nncclSystemError: x\nLast error:\n");
            let _ = parse_nccl_errors(&t);
        }
    }

    #[test]
    fn shm_unlink_warn_is_a_system_error_only_in_the_errno_wording() {
        // NCCL 2.22+ (`ncclShmClose` / `ncclShmUnlink`, then `ret = ncclSystemError`)
        let t = "node1:4242:4242 [0] NCCL WARN unlink shared memory /dev/shm/nccl-d5rTd0 failed, error: No such file or directory (2)\n";
        assert!(looks_like(t));
        let e = parse_nccl_errors(t);
        assert_eq!(e.error_results, ["ncclSystemError"], "{e:?}");
        assert!(
            e.errors[0]
                .last_error
                .as_deref()
                .unwrap_or_default()
                .starts_with("unlink shared memory /dev/shm/nccl-d5rTd0")
        );
        // the same failure in 2.22+'s `ncclShmOpen` is an INFO and NCCL goes on
        let info = "node1:4242:4242 [0] NCCL INFO unlink shared memory /dev/shm/nccl-d5rTd0 failed, error: No such file or directory (2)\n";
        assert!(parse_nccl_errors(info).error_results.is_empty());
        // before 2.22 `ncclShmOpen` warned this wording and returned success: the line alone,
        // as NCCL's troubleshooting guide prints it, names no result
        let old = "NCCL WARN unlink shared memory /dev/shm/nccl-d5rTd0 failed, error: No such file or directory\n";
        assert!(parse_nccl_errors(old).error_results.is_empty());
        // munmap's WARN is followed by ncclSystemError in every version
        let m = "h:1:2 [3] NCCL WARN munmap of shared memory 0x7f0000000000 size 9637888 failed, error: Invalid argument (22)\n";
        assert_eq!(parse_nccl_errors(m).error_results, ["ncclSystemError"]);
    }

    #[test]
    fn nvls_bind_warn_is_the_unhandled_cuda_error() {
        // NVIDIA/DCGM#304: nodes whose local NVLink got into a bad state; NCCL 2.27+ prints the
        // function name before `NCCL WARN`
        let t = "[2026-06-23 15:45:07] gpu-stress-dgc86-xfpt6:420:437 [5] transport/nvls.cc:379 (nvlsAllocateMem) NCCL WARN Failed to bind NVLink SHARP (NVLS) Multicast memory of size 2097152 : CUDA error 401 'the operation cannot be performed in the present state'.\n";
        assert!(looks_like(t));
        let e = parse_nccl_errors(t);
        assert_eq!(e.error_results, ["ncclUnhandledCudaError"], "{e:?}");
        assert!(
            e.errors[0]
                .last_error
                .as_deref()
                .unwrap_or_default()
                .contains("CUDA error 401")
        );
        // its back trace in the same thread names the same result, counted once
        let t = "h:1:2 [0] transport/nvls.cc:379 (nvlsAllocateMem) NCCL WARN Failed to bind NVLink SHARP (NVLS) Multicast memory of size 2097152 : CUDA error 1 'invalid argument'.\nh:1:2 [0] NCCL INFO transport/nvls.cc:520 -> 1\n";
        assert_eq!(
            parse_nccl_errors(t).error_results,
            ["ncclUnhandledCudaError"]
        );
        // the WARN's own text as torch relays it under `Last error:`
        assert_eq!(
            relayed_warn_result(
                "Failed to bind NVLink SHARP (NVLS) Multicast memory of size 2097152 : CUDA error 2 'out of memory'."
            ),
            Some("ncclUnhandledCudaError")
        );
        // NCCL's INFO that NVLS is not available is no error
        assert!(
            parse_nccl_errors(
                "h:1:2 [0] NCCL INFO NVLS multicast support is not available on dev 0\n"
            )
            .error_results
            .is_empty()
        );
    }

    #[test]
    fn ib_warns_that_return_an_error_are_the_error() {
        // NVIDIA/nccl#1905: three WARNs behind a log collector's stamps, no back trace
        let t = "2025-11-09 15:39:31.043 +08:00 [2025-11-09 07:39:30] h100-28:238:1313 [0] transport/net_ib.cc:139 NCCL WARN communicator encountered a fatal error (detected in ncclIbTest)\n\
2025-11-09 15:39:31.043 +08:00 [2025-11-09 07:39:30] h100-28:238:1219 [0] transport/net_ib.cc:180 NCCL WARN NET/IB : mlx5_ib0:1 async fatal event on QP (0x7f69f01519a8): local access violation work queue error\n\
2025-11-09 15:39:31.043 +08:00 [2025-11-09 07:39:30] h100-28:238:1313 [0] transport/net_ib.cc:2451 NCCL WARN NET/IB: Got completion from peer 172.16.12.34<38081> with status=4 opcode=0 len=0 vendor err 83 (Send) hca mlx5_ib0\n";
        assert!(looks_like(t));
        let e = parse_nccl_errors(t);
        assert_eq!(e.error_results, ["ncclSystemError", "ncclRemoteError"]);
        assert_eq!(
            e.errors[0].last_error.as_deref(),
            Some("communicator encountered a fatal error (detected in ncclIbTest)")
        );
        // NVIDIA/nccl#1814 (2.2x): the WARN and its back trace are one error, not two
        let t = "hostname-test:984:1357 [4] ib_plugin.c:1615 NCCL WARN NET/IB : Got completion from peer 172.36.143.59<44206> with status=12 opcode=129 len=65536 vendor err 129 (Recv) localGid ::ffff:29.87.88.182 remoteGids::ffff:29.87.4.221\n\
hostname-test:984:1357 [4] NCCL INFO transport/net.cc:1298 -> 6\n\
hostname-test:984:1357 [4] NCCL INFO proxy.cc:694 -> 6\n";
        let e = parse_nccl_errors(t);
        assert_eq!(e.error_results, ["ncclRemoteError"]);
        assert_eq!(e.errors[0].count, 1);
        // NVIDIA/nccl-tests#24 (2.4): the wording before the peer was named
        let t = "gpu5:35917:35994 [0] transport/net_ib.cu:788 NCCL WARN NET/IB : Got completion with error 12, opcode 1, len 0, vendor err 129\n\
gpu5:35917:35994 [0] NCCL INFO include/net.h:34 -> 2\n\
gpu5:35917:35994 [0] NCCL INFO transport/net.cu:537 -> 2\n";
        let e = parse_nccl_errors(t);
        assert_eq!(e.error_results, ["ncclSystemError"]);
        assert_eq!(e.errors[0].count, 1);
        assert_eq!(
            parse_nccl_errors(t.lines().next().unwrap()).error_results,
            ["ncclSystemError"]
        );
        // the proxy service thread's WARNs name the result (NVIDIA/nccl#952, NCCL 2.18 behind
        // a masked host name; the frames before them belong to the operation, not to a WARN)
        let t = "<cluster_name>:922:1158 [3] NCCL INFO proxy.cc:1306 -> 2\n\
\n\
<cluster_name>:922:1158 [3] proxy.cc:1485 NCCL WARN [Service thread] Error encountered progressing operation=Connect, res=2, closing connection\n\
\n\
<cluster_name>:922:1158 [3] proxy.cc:1519 NCCL WARN [Proxy Service 11] Failed to execute operation Connect from rank 11, retcode 2\n";
        assert!(looks_like(t));
        let e = parse_nccl_errors(t);
        assert_eq!(e.error_results, ["ncclSystemError"]);
        assert_eq!(
            e.errors[0].last_error.as_deref(),
            Some(
                "[Service thread] Error encountered progressing operation=Connect, res=2, closing connection"
            )
        );
        // NVIDIA/nccl-tests#166 (2.18): the second wording alone
        let t = "ubuntu:39964:40075 [0] proxy.cc:1519 NCCL WARN [Proxy Service 0] Failed to execute operation Connect from rank 0, retcode 2\n";
        assert!(looks_like(t));
        assert_eq!(parse_nccl_errors(t).error_results, ["ncclSystemError"]);
        // mosaicml/diffusion#110 (2.18, host blanked to `-`): `retcode 6` is ncclRemoteError;
        // `Proxy Call to rank 1 failed (Connect)` names no result of its own
        let t = "-:6015:6225 [1] proxy.cc:1119 NCCL WARN [Proxy Service 1] Failed to execute operation Connect from rank 1, retcode 6\n";
        assert_eq!(parse_nccl_errors(t).error_results, ["ncclRemoteError"]);
        let call = "-:6015:6224 [1] proxy.cc:884 NCCL WARN Proxy Call to rank 1 failed (Connect)";
        assert!(parse_nccl_errors(call).error_results.is_empty());
        assert!(!recognised_line(call));
        // WARNs NCCL goes on after: the async thread's event alone (#1905), the socket
        // transport's size mismatch (pytorch/torchtitan#1681, its trace is what fails), a
        // plugin not found
        for w in [
            "h100-28:238:1219 [0] transport/net_ib.cc:180 NCCL WARN NET/IB : mlx5_ib0:1 async fatal event on QP (0x7f69f01519a8): local access violation work queue error",
            "nid001097:5838:6020 [0] transport/net_socket.cc:561 NCCL WARN NET/Socket : peer 10.249.23.66<41138> message truncated : receiving 8 bytes instead of 4.",
            "a:1:2 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]",
        ] {
            assert!(parse_nccl_errors(w).error_results.is_empty(), "{w}");
            assert!(!recognised_line(w), "{w}");
        }
    }

    #[test]
    fn pytorch_2_6_to_2_11_watchdog_wordings() {
        // github.com/NVIDIA/nccl/issues/1730 (PyTorch with NCCL 2.26.2): the timeout, then the
        // 2.6+ state line `failure detected by watchdog at work sequence id: S PG status: …`
        let t = "[rank118]:[E603 17:48:01.005271823 ProcessGroupNCCL.cpp:632] [Rank 118] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=2398459, OpType=ALLREDUCE, NumelIn=8652160, NumelOut=8652160, Timeout(ms)=1800000) ran for 1800068 milliseconds before timing out.\n[rank118]:[E603 17:48:01.005538748 ProcessGroupNCCL.cpp:2268] [PG ID 0 PG GUID 0(default_pg) Rank 118]  failure detected by watchdog at work sequence id: 2398459 PG status: last enqueued work: 2398578, last completed work: 2398458\n";
        let e = parse_nccl_errors(t);
        assert_eq!(e.timeout_count, 1);
        assert_eq!(e.timeouts[0].rank, Some(118));
        assert_eq!(e.timeouts[0].seq, Some(2398459));
        assert_eq!(e.last_completed_work, Some(2398458));
        assert_eq!(e.last_enqueued_work, Some(2398578));
        // the state line alone (an error as well as a timeout prints it) is no timeout
        let e = parse_nccl_errors(t.lines().nth(1).unwrap());
        assert_eq!(e.timeout_count, 0);
        assert!(e.watchdog_stuck.is_empty());
        assert_eq!(e.last_completed_work, Some(2398458));
    }

    #[test]
    fn log_prefix_with_an_empty_uid_or_a_named_group() {
        // github.com/NVIDIA/Fuser/issues/3055 (NCCL 2.23.4): a group without a uid prints
        // `PG GUID  Rank 2`; the monitor's exit line repeats logPrefix() and names the hang
        let t = "[E930 15:23:00.059980974 ProcessGroupNCCL.cpp:1487] [PG ID 4 PG GUID  Rank 2] ProcessGroupNCCL's watchdog got stuck for 10 seconds without making progress in monitoring enqueued collectives.\n[F930 15:23:07.686401350 ProcessGroupNCCL.cpp:1309] [PG ID 6 PG GUID  Rank 0] [PG ID 6 PG GUID  Rank 0] Terminating the process after attempting to dump debug info, due to ProcessGroupNCCL watchdog hang.\n";
        let e = parse_nccl_errors(t);
        assert_eq!(e.watchdog_stuck.len(), 2);
        assert_eq!(e.watchdog_stuck[0].rank, Some(2));
        assert_eq!(e.watchdog_stuck[0].pg.as_deref(), Some("4"));
        assert_eq!(e.watchdog_stuck[0].seconds, Some(10));
        assert_eq!(e.watchdog_stuck[1].rank, Some(0));
        assert_eq!(e.watchdog_stuck[1].pg.as_deref(), Some("6"));
        assert_eq!(e.watchdog_stuck[1].seconds, None);
        // the exit line alone is the hang (github.com/modelscope/ms-swift/issues/7992, a named
        // group behind a log viewer's time prefix)
        let t = "18:19:06.687 [rank2]:[F205 18:19:06.383067836 ProcessGroupNCCL.cpp:1614] [PG ID 17 PG GUID 137(INTRA_DISTRIBUTED_OPTIMIZER_INSTANCE_GROUP) Rank 2] [PG ID 17 PG GUID 137(INTRA_DISTRIBUTED_OPTIMIZER_INSTANCE_GROUP) Rank 2] Terminating the process after attempting to dump debug info, due to ProcessGroupNCCL watchdog hang.\n";
        assert!(looks_like(t));
        let e = parse_nccl_errors(t);
        assert_eq!(e.watchdog_stuck.len(), 1);
        assert_eq!(e.watchdog_stuck[0].rank, Some(2));
        assert_eq!(e.watchdog_stuck[0].pg.as_deref(), Some("17"));
        // the exit after a timeout or an error the watchdog printed is not a hang of its own
        let t = "[rank0]:[F709 17:06:38.162895613 ProcessGroupNCCL.cpp:1614] [PG ID 0 PG GUID 0(default_pg) Rank 0] [PG ID 0 PG GUID 0(default_pg) Rank 0] Terminating the process after attempting to dump debug info, due to collective timeout or exception.\n";
        assert!(parse_nccl_errors(t).watchdog_stuck.is_empty());
        // a timeout under a named group's prefix keeps its pg and rank
        let t = "[rank4]:[E205 18:11:06.375750231 ProcessGroupNCCL.cpp:632] [PG ID 12 PG GUID 99(EXPERT_MODEL_PARALLEL_GROUP) Rank 4] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600013 milliseconds before timing out.\n";
        let e = parse_nccl_errors(t);
        assert_eq!(e.timeouts[0].pg.as_deref(), Some("12"));
        assert_eq!(e.timeouts[0].rank, Some(4));
    }

    /// github.com/NVIDIA/nccl/issues/1730: NCCL 2.26.2's RAS report of a healthy 256-rank job.
    const RAS_OK: &str = "NCCL version 2.26.2 compiled with CUDA 12.4\nCUDA runtime version 12040, driver version 12040\n\nJob summary\n===========\n\n  Nodes  Processes         GPUs  Processes     GPUs\n(total)   per node  per process    (total)  (total)\n     32          8            1        256      256\n\nCommunicators... (0.01s)\n=============\n\nGroup     Comms     Nodes     Ranks     Ranks     Ranks    Status  Errors\n    #  in group  per comm  per node  per comm  in group\n    0         1        32         8       256       256   RUNNING      OK\n\nErrors\n======\n\nWarnings\n========\n";

    #[test]
    fn ras_report_reads_its_table_and_sections() {
        assert!(looks_like(RAS_OK));
        let e = parse_nccl_errors(RAS_OK);
        let r = e.ras.expect("a RAS report");
        assert_eq!(r.groups.len(), 1);
        assert_eq!(r.groups[0].comms, 1);
        assert_eq!(r.groups[0].nodes, 32);
        assert_eq!(r.groups[0].ranks_per_comm, 256);
        assert_eq!(r.groups[0].status, "RUNNING");
        assert_eq!(r.groups[0].errors, "OK");
        assert_eq!(
            r.dead_processes + r.missing_processes + r.async_error_ranks,
            0
        );
        assert!(e.error_results.is_empty());
        assert_eq!(e.nccl_version.as_deref(), Some("2.26.2"));
        // github.com/NVIDIA/nccl/issues/1911 (NCCL 2.26.2): ranks at different AllGather counts
        let t = "Group     Comms     Nodes     Ranks     Ranks     Ranks    Status  Errors\n    #  in group  per comm  per node  per comm  in group\n    0         1         4         8        32        32   RUNNING  MISMATCH\n\nErrors\n======\n\nWarnings\n========\n\n#0-0 (fa93daea854b060b) MISMATCH\n  Communicator ranks have different AllGather operation counts\n  30 ranks have launched up to operation 640\n  2 ranks have launched up to operation 641\n  Rank 12 -- GPU 4 managed by process 323032 on node 10.137.190.124\n  Rank 13 -- GPU 5 managed by process 323033 on node 10.137.190.124\n";
        let e = parse_nccl_errors(t);
        let r = e.ras.expect("a RAS report");
        assert_eq!(r.groups[0].errors, "MISMATCH");
        assert_eq!(r.mismatched_ops, vec!["AllGather"]);
        assert!(e.error_results.is_empty());
        // the Errors section as `rasClientRunComms` / `rasClientBreakDownErrors` print it
        // (NVIDIA/nccl src/ras/client_support.cc): a dead process and a rank's async error
        let t = "Group     Comms     Nodes     Ranks     Ranks     Ranks    Status  Errors\n    #  in group  per comm  per node  per comm  in group\n    0         1         2         8        16        16   RUNNING  INCOMPLETE,ERROR\n\nErrors\n======\n\nDEAD\n  1 job process is considered dead (unreachable via the RAS network)\n  Process 4711 on node 10.0.0.2 managing GPU 3\n\n#0-0 (0123456789abcdef) ERROR\n  Asynchronous error on 1 rank\n  Rank 11 reported Remote process error -- GPU 3 managed by process 4711 on node 10.0.0.2\n\nWarnings\n========\n\nTIMEOUT\n  Encountered 2 communication timeouts while gathering communicator data\n\n";
        let e = parse_nccl_errors(t);
        let r = e.ras.as_ref().expect("a RAS report");
        assert_eq!(r.groups[0].errors, "INCOMPLETE,ERROR");
        assert_eq!(r.dead_processes, 1);
        assert_eq!(r.async_error_ranks, 1);
        assert_eq!(r.collection_timeouts, 2);
        assert_eq!(e.error_results, vec!["ncclRemoteError"]);
        assert_eq!(
            e.errors[0].last_error.as_deref(),
            Some("NCCL RAS: 1 rank reported Remote process error (asynchronous error)")
        );
        // a table heading in prose, without RAS's spacing, is no report
        assert!(
            parse_nccl_errors("Group Comms Nodes Ranks Ranks Ranks Status Errors\n")
                .ras
                .is_none()
        );
    }

    #[test]
    fn paddles_own_nccl_failure_in_both_wordings() {
        // Paddle 2.0-2.2 (`" Nccl error, " + ncclGetErrorString`), github.com/PaddlePaddle/PaddleClas/issues/330
        let t = "ExternalError:  Nccl error, unhandled cuda error  (at /paddle/paddle/fluid/platform/collective_helper.cc:83)\n";
        assert!(looks_like(t));
        let e = parse_nccl_errors(t);
        assert_eq!(e.error_results, vec!["ncclUnhandledCudaError"]);
        assert_eq!(
            e.errors[0].location.as_deref(),
            Some("/paddle/paddle/fluid/platform/collective_helper.cc:83")
        );
        // the ENOSPC/EAGAIN detail build_nvidia_error_msg appends (Paddle 2.0-2.2)
        let t = "OSError: (External)  Nccl error, unhandled system error, detail: No space left on device\nPlease try one of the following solutions:\n";
        assert_eq!(parse_nccl_errors(t).error_results, vec!["ncclSystemError"]);
        // Paddle 2.3 on (`NCCL error(N), <text>. ` then the hint line),
        // github.com/PaddlePaddle/PaddleSpeech/issues/3171: one error, not two
        let t = "OSError: (External) NCCL error(1), unhandled cuda error. \n  [Hint: 'ncclUnhandledCudaError'. A call to a CUDA function failed.] (at /paddle/paddle/fluid/platform/collective_helper.cc:100)\n";
        assert!(looks_like(t));
        let e = parse_nccl_errors(t);
        assert_eq!(e.error_results, vec!["ncclUnhandledCudaError"]);
        assert_eq!(e.errors[0].count, 1);
        // the code names the result where the hint line was not pasted
        let t = "OSError: (External) NCCL error(3), internal error - please report this issue to the NCCL developers.\n";
        assert_eq!(
            parse_nccl_errors(t).error_results,
            vec!["ncclInternalError"]
        );
        // healthy: Paddle's launcher lines and NCCL's own banner name no failure
        for h in [
            "LAUNCH INFO 2023-08-17 16:45:21,473 run_mode: collective\n",
            "NCCL version 2.8.4+cuda11.1\n",
            "I0529 18:26:59.316160 30147 nccl_context.cc:127] init nccl context nranks: 2 local rank: 0\n",
        ] {
            assert!(!looks_like(h), "{h}");
            assert!(parse_nccl_errors(h).error_results.is_empty(), "{h}");
        }
    }

    #[test]
    fn blocking_waits_timeout_is_a_collective_timeout() {
        // `WorkNCCL::synchronizeInternal` under NCCL_BLOCKING_WAIT=1 (PyTorch 1.8-2.1)
        let t = "RuntimeError: [Rank 0] Caught collective operation timeout: WorkNCCL(SeqNum=3, OpType=BROADCAST, Timeout(ms)=60000) ran for 60006 milliseconds before timing out.\n";
        assert!(looks_like(t));
        let e = parse_nccl_errors(t);
        assert_eq!(e.timeout_count, 1);
        let w = &e.timeouts[0];
        assert_eq!(
            (w.rank, w.seq, w.op.as_str(), w.timeout_ms, w.ran_for_ms),
            (Some(0), Some(3), "BROADCAST", Some(60000), Some(60006))
        );
        // the watchdog's own line is read as before, once
        let t = "[E ProcessGroupNCCL.cpp:828] [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=2511984, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1809826 milliseconds before timing out.\n";
        assert_eq!(parse_nccl_errors(t).timeout_count, 1);
        // healthy: a log that only sets the timeout names none
        assert!(!looks_like(
            "init_process_group(backend='nccl', timeout=timedelta(seconds=1800))\n"
        ));
    }

    #[test]
    fn torchs_pre_1_12_version_decoding_is_undone() {
        // github.com/hpcaitech/ColossalAI/pull/1320 (NCCL 2.10.3 printed as 21.0.3)
        let t = "RuntimeError: NCCL error in: /opt/conda/conda-bld/pytorch_1640811803361/work/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:957, unhandled system error, NCCL version 21.0.3\nncclSystemError: System call (socket, malloc, munmap, etc) failed.\n";
        let e = parse_nccl_errors(t);
        assert_eq!(e.nccl_version.as_deref(), Some("2.10.3"));
        assert_eq!(e.errors[0].nccl_version.as_deref(), Some("2.10.3"));
        assert_eq!(nccl_version_of("21.1.4"), "2.11.4");
        assert_eq!(nccl_version_of("20.9.9"), "2.9.9");
        assert_eq!(nccl_version_of("21.2.7"), "2.12.7");
        // codes before 2.9 and every later torch print it right
        assert_eq!(nccl_version_of("2.7.8"), "2.7.8");
        assert_eq!(nccl_version_of("2.21.5"), "2.21.5");
    }
}
