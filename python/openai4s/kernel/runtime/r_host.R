# The R cell's `host` object (issue 30): the R sibling of the Python SDK's
# facade (python/openai4s/sdk/host.py). Each member sends one `host_call`
# frame on the worker's protocol pipe and waits for its `host_response`, as
# the Python worker's host_rpc.py does; the host serves R and Python calls
# through the same dispatcher (permission gate, audit, egress policy), so
# nothing here decides anything: it only encodes arguments and reads replies.
# Sourced into the worker's environment by r_worker.R, which attaches
# `host` to the "openai4s" environment on the search path (beside the
# quit() guard): a cell sees it, ls() does not, rm(list = ls()) leaves it.

# The host's bounds on a frame it reads (proto/limits.h; host_rpc.py checks
# the same before it writes).
W$host_call_wire_cap <- 15000000
W$host_call_max_skipped <- 100L

# One line from the host for a host_call, or NULL at end of stream. The read
# runs with interrupts held (the line is stored before one fires), then a
# pending interrupt fires here, in the cell, where Ctrl-C is meant: the
# reply has been read, so the channel stays in step.
W$read_reply_line <- function() {
  S$line <- NULL
  suspendInterrupts({
    S$line <- tryCatch(readLines(S$proto_in, n = 1L, warn = FALSE), error = function(e) NULL)
  })
  if (length(S$line) == 0L && !S$reopened_in) {
    # A cell closed our connection (closeAllConnections()): reopen fd 4 once.
    S$reopened_in <- TRUE
    S$proto_in <- W$open_in()
    suspendInterrupts({
      S$line <- tryCatch(readLines(S$proto_in, n = 1L, warn = FALSE), error = function(e) NULL)
    })
  }
  Sys.sleep(0)
  if (length(S$line) == 0L) NULL else S$line
}

W$host_fail <- function(message) stop(simpleError(message, call = NULL))

# Sends one host_call and returns the reply's data (JSON objects as named
# lists, arrays of scalars as vectors); an error reply is an R error with
# the host's message, as Python's RuntimeError("host.<method> error: ...").
W$host_call <- function(method, args = list()) {
  if (!W$has_jsonlite) W$host_fail(W$jsonlite_missing)
  S$host_calls <- S$host_calls + 1L
  id <- sprintf("rhc-%d-%d", as.integer(Sys.time()), S$host_calls)
  frame <- list(type = "host_call", id = id, method = method, args = args)
  text <- tryCatch(
    as.character(jsonlite::toJSON(frame, auto_unbox = TRUE, null = "null", na = "null", digits = NA)),
    error = function(e) W$host_fail(sprintf("host$%s: arguments are not JSON: %s", method, conditionMessage(e)))
  )
  # Refused before writing: a frame the host would drop cannot desynchronise the channel.
  if (nchar(text, type = "bytes") > W$host_call_wire_cap) {
    W$host_fail(sprintf(
      "host$%s: the call is %d bytes, over the 15MB wire cap (the host rejects oversized frames)",
      method, nchar(text, type = "bytes")
    ))
  }
  W$write_line(text)
  reply <- W$await_host_reply(method, id)
  if (!is.null(reply$error)) {
    W$host_fail(sprintf("host.%s error: %s", method, W$in_r_spelling(paste(reply$error, collapse = "\n"))))
  }
  reply$data
}

# The host's hints name the call to make in Python's spelling
# (host.request_network_access('x', reason='...')): an R cell is told R's.
W$in_r_spelling <- function(message) {
  message <- gsub("host\\.env\\.([a-z]+)\\(", "host$env_\\1(", message)
  message <- gsub("host\\.([a-z_]+)\\(", "host$\\1(", message)
  gsub("\\b(domain|reason)='", "\\1 = '", message)
}

# A reply to an earlier call that an interrupt abandoned is skipped; too
# many frames that are not ours is a desync.
W$await_host_reply <- function(method, id) {
  skipped <- 0L
  repeat {
    line <- W$read_reply_line()
    if (is.null(line)) W$host_fail("host channel closed during host_call")
    reply <- tryCatch(
      jsonlite::fromJSON(line, simplifyVector = TRUE, simplifyDataFrame = FALSE, simplifyMatrix = FALSE),
      error = function(e) NULL
    )
    if (is.list(reply) && identical(reply$type, "host_response") && identical(reply$id, id)) {
      return(reply)
    }
    skipped <- skipped + 1L
    if (skipped > W$host_call_max_skipped) {
      W$host_fail(sprintf("host.%s: protocol desync, too many out-of-order frames", method))
    }
  }
}

# A spec object as the host reads it: NULLs dropped (the host's defaults
# apply), everything else as given.
W$host_spec <- function(...) {
  spec <- list(...)
  spec <- spec[!vapply(spec, is.null, TRUE)]
  if (is.null(names(spec))) names(spec) <- character(0) # {} even when empty
  spec
}

W$host_string <- function(value, what) {
  if (!is.character(value) || length(value) != 1L || is.na(value) || !nzchar(value)) {
    W$host_fail(sprintf("%s must be one non-empty string", what))
  }
  value
}

# -- environments: the active one's R library leads .libPaths() ---------------------

# Puts the environment the host answered with first on .libPaths(),
# replacing the one put there before; a package already loaded stays as it
# was loaded. A result without r_library (another kind of answer) is left.
W$use_env_library <- function(result) {
  if (!is.list(result) || !("r_library" %in% names(result))) {
    return(result)
  }
  paths <- setdiff(.libPaths(), S$env_library)
  S$env_library <- NULL
  lib <- result$r_library
  if (is.character(lib) && length(lib) == 1L && dir.exists(lib)) {
    paths <- c(lib, paths)
    S$env_library <- lib
  }
  .libPaths(paths)
  result
}

# A fresh worker (a new kernel, a restart, a standby swapped in) starts
# with the workspace's active environment, asked of the host on the first
# cell (the host serves calls only while a request runs). No dispatcher,
# no environment, or none active: the R library path stays R's own.
W$restore_active_env <- function() {
  listed <- tryCatch(W$host_call("env_list", list(W$host_spec())), error = function(e) NULL)
  active <- listed$active
  if (!is.character(active) || length(active) != 1L) {
    return(invisible(NULL))
  }
  for (env in listed$environments) {
    if (identical(env$name, active)) W$use_env_library(env)
  }
  invisible(NULL)
}

# "r:<name>" is how the host tells an R package from a pip requirement; in
# R a bare name is an R package, and pip requirements are `python =`.
W$env_packages <- function(packages, python) {
  packages <- as.character(unlist(packages))
  bare <- !startsWith(packages, "r:")
  packages[bare] <- paste0("r:", packages[bare])
  as.list(c(packages, as.character(unlist(python))))
}

# -- host$bash: the host authorizes, the worker runs (sdk/bash.py) --------------------

W$bash_generation <- function() {
  generation <- Sys.getenv("OPENAI4S_KERNEL_GENERATION")
  if (nzchar(generation)) generation else sprintf("worker:%d", Sys.getpid())
}

# The host checks the digest it is sent; without the digest package the
# claim is left empty and the host computes it (the capability still
# binds the command, the cwd, this worker's generation and the challenge).
W$bash_sha256 <- function(command) {
  if (!requireNamespace("digest", quietly = TRUE)) {
    return("")
  }
  digest::digest(enc2utf8(command), algo = "sha256", serialize = FALSE)
}

# From the system's random source, not sample(): the cell's RNG stream
# (set.seed) stays its own, and the challenge is not predictable from it.
W$bash_challenge <- function() {
  paste(as.character(readBin("/dev/urandom", "raw", 24L)), collapse = "")
}

# The capability must be bound to what this worker asked for.
W$bash_check_capability <- function(capability, binding) {
  if (!is.list(capability) || !is.character(capability$token) || nchar(capability$token) < 24L) {
    W$host_fail("bash: host authorization returned no capability")
  }
  for (key in c("cwd", "generation", "challenge")) {
    if (!identical(capability[[key]], binding[[key]])) {
      W$host_fail(sprintf("bash: host capability binding mismatch (%s)", key))
    }
  }
  if (nzchar(binding$command_sha256) && !identical(capability$command_sha256, binding$command_sha256)) {
    W$host_fail("bash: host capability binding mismatch (command_sha256)")
  }
  capability$token
}

W$bash_tail <- function(path, limit = 200000L) {
  size <- file.size(path)
  if (is.na(size) || size <= 0) {
    return(list(text = "", seen = 0L))
  }
  con <- W$untraced_file(path, open = "rb")
  on.exit(close(con))
  if (size > limit) seek(con, size - limit)
  bytes <- readBin(con, "raw", min(size, limit))
  text <- rawToChar(bytes[bytes != as.raw(0L)])
  if (!validUTF8(text)) text <- iconv(text, "UTF-8", "UTF-8", sub = "byte")
  list(text = text, seen = as.integer(size))
}

# A permission refusal is a decision, said in one line the user can act on
# (sdk/bash.py's _refusal); anything else says the command did not run.
W$bash_refused <- function(message, command) {
  why <- sub("^host\\.authorize_bash error: ", "", message)
  shown <- gsub("[[:cntrl:]]", " ", command)
  if (nchar(shown) > 200L) shown <- paste0(substr(shown, 1L, 199L), "\u2026")
  if (startsWith(why, "Permission denied: ")) {
    W$host_fail(sprintf("host$bash was refused (%s): %s", sub("^Permission denied: ", "", why), shown))
  }
  W$host_fail(sprintf("bash: host authorization unavailable; command was not executed (%s)", why))
}

W$bash_run <- function(command, cwd, timeout) {
  out <- tempfile("o4s-bash-out-")
  err <- tempfile("o4s-bash-err-")
  on.exit(unlink(c(out, err)))
  started <- Sys.time()
  old <- setwd(cwd)
  on.exit(setwd(old), add = TRUE)
  status <- suppressWarnings(system2(
    "/bin/bash", c("-c", shQuote(command)),
    stdout = out, stderr = err, stdin = "/dev/null", timeout = timeout
  ))
  duration <- as.integer(1000 * as.numeric(difftime(Sys.time(), started, units = "secs")))
  list(
    status = if (identical(as.integer(status), 124L) && duration >= 1000 * timeout) "timed_out" else "completed",
    exit_code = as.integer(status), stdout = W$bash_tail(out), stderr = W$bash_tail(err),
    duration_ms = duration
  )
}

W$host_bash <- function(command, timeout = 120, workdir = NULL) {
  W$host_string(command, "bash: command")
  if (!is.numeric(timeout) || length(timeout) != 1L || !is.finite(timeout) || timeout <= 0) {
    W$host_fail("bash: timeout must be finite and positive")
  }
  cwd <- normalizePath(if (is.null(workdir)) getwd() else file.path(getwd(), workdir), mustWork = FALSE)
  if (!dir.exists(cwd)) W$host_fail(sprintf("bash: workdir not found: %s", workdir))
  binding <- list(
    command = command, command_sha256 = W$bash_sha256(command), cwd = cwd,
    workspace = Sys.getenv("OPENAI4S_WORKSPACE"), generation = W$bash_generation(),
    challenge = W$bash_challenge(), timeout = timeout
  )
  capability <- tryCatch(W$host_call("authorize_bash", list(binding)), error = function(e) {
    W$bash_refused(conditionMessage(e), command)
  })
  token <- W$bash_check_capability(capability, binding)
  consume <- list(
    token = token, command_sha256 = capability$command_sha256, cwd = binding$cwd,
    generation = binding$generation, challenge = binding$challenge
  )
  receipt <- W$host_call("consume_bash_authorization", list(consume))
  if (!isTRUE(receipt$ok)) W$host_fail("bash: host did not confirm the capability; command was not executed")
  ran <- W$bash_run(command, binding$cwd, timeout)
  report <- c(consume, list(
    status = ran$status, exit_code = ran$exit_code, stdout = ran$stdout$text,
    stderr = ran$stderr$text, stdout_seen_chars = ran$stdout$seen, stderr_seen_chars = ran$stderr$seen,
    duration_ms = ran$duration_ms, workspace_diff = list()
  ))
  recorded <- tryCatch(W$host_call("record_bash_result", list(report)), error = function(e) NULL)
  if (ran$status == "timed_out") W$host_fail(sprintf("bash: timed out after %gs", timeout))
  list(
    exit_code = ran$exit_code, stdout = ran$stdout$text, stderr = ran$stderr$text,
    workdir = binding$cwd, duration_ms = ran$duration_ms,
    audit_recorded = isTRUE(recorded$ok)
  )
}

# -- the object ------------------------------------------------------------------------

W$make_host <- function() {
  h <- new.env(parent = emptyenv())
  h$bash <- function(command, timeout = 120, workdir = NULL) W$host_bash(command, timeout, workdir)
  h$web_fetch <- function(url, format = "markdown", timeout = 30, max_chars = 20000) {
    W$host_call("web_fetch", list(W$host_spec(
      url = W$host_string(url, "url"), format = format, timeout = timeout, max_chars = max_chars
    )))
  }
  h$web_download <- function(url, path, max_bytes = NULL, timeout = 60) {
    W$host_call("web_download", list(W$host_spec(
      url = W$host_string(url, "url"), path = W$host_string(path, "path"),
      max_bytes = max_bytes, timeout = timeout
    )))
  }
  h$request_network_access <- function(domain, reason = NULL) {
    W$host_call("request_network_access", list(W$host_spec(
      domain = W$host_string(domain, "domain"), reason = reason
    )))
  }
  h$env_create <- function(name = NULL, packages = character(), python = character()) {
    spec <- W$host_spec(name = name, packages = W$env_packages(packages, python))
    invisible(W$use_env_library(W$host_call("env_setup", list(spec))))
  }
  h$env_use <- function(name = NULL) {
    invisible(W$use_env_library(W$host_call("env_use", list(W$host_spec(name = name)))))
  }
  h$env_list <- function() W$host_call("env_list", list(W$host_spec()))
  h$env_lock <- function(name = NULL) W$host_call("env_lock", list(W$host_spec(name = name)))
  h$exec_background <- function(code, origin = "agent") {
    W$host_call("exec_background", list(list(code = W$host_string(code, "code"), origin = origin)))
  }
  h$exec_peek <- function(exec_id) W$host_call("exec_peek", list(exec_id))
  h$exec_interrupt <- function(exec_id) W$host_call("exec_interrupt", list(exec_id))
  h$exec_list <- function() W$host_call("exec_list", list())
  h$save_artifact <- function(path, filename = NULL, content_type = NULL, input_version_ids = list()) {
    # Stamped with the running cell, as host_rpc.py stamps Python's.
    W$host_call("save_artifact", list(W$host_spec(
      path = W$host_string(path, "path"), filename = filename, content_type = content_type,
      input_version_ids = as.list(input_version_ids), priority = 0L,
      execution_cell_id = S$cell_id, producing_cell_id = S$cell_id
    )))
  }
  h$capabilities <- function() W$host_call("capabilities", list())
  lockEnvironment(h, bindings = TRUE)
  class(h) <- "openai4s_host"
  h
}

# Shown where a cell prints `host` (registered as print's method for it).
W$print_host <- function(x, ...) {
  cat("<openai4s host>", paste0("  host$", sort(ls(x)), "()"), sep = "\n")
  invisible(x)
}
