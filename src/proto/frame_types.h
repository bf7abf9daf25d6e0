// Every `type` a frame of the worker protocol carries (spec kernel.md §3.2,
// §3.3 and the requests this project added), in one place, so the host code,
// its tests and the shared corpus (tests/protocol/frames.jsonl) name the
// same set. The worker's Python side (python/openai4s/kernel/) spells the
// same strings; tests/cpp/unit/protocol_corpus_test.cpp fails if a type here
// has no real frame in the corpus, or the corpus has a type not listed here.
#pragma once

#include <array>
#include <string_view>

namespace o4s::proto::frame {

// --- host -> worker ---------------------------------------------------------

// host->worker: first line after a spawn; carries the attestation key (§3.5).
inline constexpr std::string_view kInitialize = "initialize";
// host->worker: run one cell (`id`, `code`, `origin`); a frame with no type
// is taken as this by the worker (§3.2, §4.3).
inline constexpr std::string_view kExecute = "execute";
// host->worker: the answer to one host_call (`data` or `error`) (§3.7).
inline constexpr std::string_view kHostResponse = "host_response";
// host->worker: "keep waiting" for a pending host_call; compatibility only,
// the host never sends it (§3.2).
inline constexpr std::string_view kHostAck = "host_ack";
// host->worker: list the namespace's variables, idle only (§3.9).
inline constexpr std::string_view kInspectVariables = "inspect_variables";
// host->worker: leave the main loop and exit 0 (§2.12).
inline constexpr std::string_view kShutdown = "shutdown";
// host->worker: resend a cell's kept stdout whole; also the fence after an
// idle request (kernel/worker_request.cpp).
inline constexpr std::string_view kStdoutRequest = "stdout_request";
// host->worker: completions at a cursor, idle only (kernel/code_requests.cpp).
inline constexpr std::string_view kComplete = "complete";
// host->worker: help for the name at a cursor, idle only.
inline constexpr std::string_view kInspect = "inspect";
// host->worker: whether a code fragment is a complete statement (Jupyter).
inline constexpr std::string_view kIsComplete = "is_complete";
// host->worker: the caller's line for an input_request (`value` or `error`).
inline constexpr std::string_view kInputReply = "input_reply";
// host->worker: a warm worker is claimed: `generation` is the authorization
// generation it serves from now on (never known before; issue 28). No
// answer: frames are handled in order, so it is set before any later
// request runs, and a worker that ignored it presents no trusted generation.
inline constexpr std::string_view kAdopt = "adopt";
// host->worker: the cell whose execute carried `seq` was interrupted. Sent
// once per cell, before its SIGINT (or before the execute itself when the
// interrupt came first): a signal that lands before the cell's code starts
// finds no cell to stop, and the worker checks this when it arms the cell.
// No answer; one read between cells is stale and ignored.
inline constexpr std::string_view kInterrupt = "interrupt";

// --- worker -> host ---------------------------------------------------------

// worker->host: the handshake succeeded (echoes initialize's id).
inline constexpr std::string_view kInitialized = "initialized";
// worker->host: the handshake was refused; the worker then exits.
inline constexpr std::string_view kInitializationError = "initialization_error";
// worker->host: up to 64,000 chars of a running cell's stdout, live, with
// `stream`/`seq` so the host can tell a stale or missing chunk (§3.6).
inline constexpr std::string_view kStdoutChunk = "stdout_chunk";
// worker->host: the answer to stdout_request (`text`, or `error`).
inline constexpr std::string_view kStdoutText = "stdout_text";
// worker->host: a synchronous RPC from cell code (`id`, `method`, `args`).
inline constexpr std::string_view kHostCall = "host_call";
// worker->host: a diagnostic line (`msg`) kept in the worker log tail.
inline constexpr std::string_view kLog = "log";
// worker->host: an untrusted skill-sidecar import event (§4.20).
inline constexpr std::string_view kSkillSidecarLoad = "skill_sidecar_load";
// worker->host: exactly one per execute: the cell's result (§3.8).
inline constexpr std::string_view kResponse = "response";
// worker->host: exactly one per inspect_variables (§3.9).
inline constexpr std::string_view kVariablesResponse = "variables_response";
// worker->host: a rich display bundle of the running cell (`data` by MIME).
inline constexpr std::string_view kDisplay = "display";
// worker->host: clear the running cell's output (`wait`: on the next one).
inline constexpr std::string_view kClearOutput = "clear_output";
// worker->host: input()/getpass() asks the caller for a line.
inline constexpr std::string_view kInputRequest = "input_request";
// worker->host: the answer to complete (`matches`, `cursor_start/_end`).
inline constexpr std::string_view kCompleteReply = "complete_reply";
// worker->host: the answer to inspect (`found`, `data`).
inline constexpr std::string_view kInspectReply = "inspect_reply";
// worker->host: the answer to is_complete (`status`, `indent`).
inline constexpr std::string_view kIsCompleteReply = "is_complete_reply";

// An idle request's answer is its type plus this (complete -> complete_reply).
inline constexpr std::string_view kReplySuffix = "_reply";

inline constexpr std::array kHostToWorker = {
    kInitialize, kExecute,       kHostResponse, kHostAck, kInspectVariables,
    kShutdown,   kStdoutRequest, kComplete,     kInspect, kIsComplete,
    kInputReply, kAdopt,         kInterrupt,
};

inline constexpr std::array kWorkerToHost = {
    kInitialized, kInitializationError, kStdoutChunk,   kStdoutText,        kHostCall,
    kLog,         kSkillSidecarLoad,    kResponse,      kVariablesResponse, kDisplay,
    kClearOutput, kInputRequest,        kCompleteReply, kInspectReply,      kIsCompleteReply,
};

}  // namespace o4s::proto::frame
