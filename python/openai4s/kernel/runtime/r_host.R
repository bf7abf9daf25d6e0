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

# How long one wait for a host's reply lasts before R looks for an
# interrupt again: it bounds the case of a SIGINT that lands just before
# the wait starts (one that lands during it ends the wait at once).
W$reply_wait_ms <- 200L

# One line from the host for a host_call, or NULL at end of stream. A
# pending interrupt fires here, in the cell, where Ctrl-C is meant, as soon
# as it lands (with _r_fds.so; without it, once the reply is read): the
# call is then abandoned, and its late reply dropped (W$unexpected_reply).
W$read_reply_line <- function() {
  if (is.null(W$fds_dll)) {
    line <- W$connection_line()
    Sys.sleep(0)
    return(line)
  }
  repeat {
    line <- W$next_line(W$reply_wait_ms)
    Sys.sleep(0)
    if (!identical(line, NA_character_)) {
      return(line)
    }
  }
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
  reply <- withCallingHandlers(W$await_host_reply(method, id), interrupt = function(e) {
    S$abandoned_calls <- utils::tail(c(S$abandoned_calls, id), W$host_call_max_skipped)
  })
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

# The R library of the workspace's active environment, or NULL: no library
# named, no active environment, or a state this worker cannot read or
# trust (runtime/env_restore.py reads the same file for Python). The host
# names its library in OPENAI4S_ENV_LIBRARY (kernel_manager.h) and keeps
# the active environment's paths in its state.json.
W$active_r_library <- function() {
  library <- Sys.getenv("OPENAI4S_ENV_LIBRARY")
  state_file <- file.path(library, "state.json")
  if (!nzchar(library) || !W$has_jsonlite || !file.exists(state_file)) {
    return(NULL)
  }
  # Untraced: the host's state is no file the first cell read.
  state <- tryCatch(
    {
      con <- W$untraced_file(state_file, open = "r", encoding = "UTF-8")
      on.exit(close(con))
      jsonlite::fromJSON(paste(readLines(con, warn = FALSE), collapse = "\n"), simplifyVector = FALSE)
    },
    error = function(e) NULL, warning = function(w) NULL
  )
  path <- if (is.list(state) && is.list(state$active_paths)) state$active_paths$r_library
  if (!is.character(path) || length(path) != 1L || !dir.exists(path)) {
    return(NULL)
  }
  # Only a directory of this library: the host wrote the file, but a path
  # elsewhere would put a directory the host never chose on .libPaths().
  root <- paste0(normalizePath(library, mustWork = FALSE), "/")
  if (startsWith(normalizePath(path, mustWork = FALSE), root)) path else NULL
}

# A fresh worker (a new kernel, a restart, a standby swapped in) starts
# with the workspace's active environment, read from the host's state
# before the first cell (not at start: a standby started before the choice
# still honours it). No host call, so no audit row per worker; no library,
# or none active: the R library path stays R's own.
W$restore_active_env <- function() {
  library <- tryCatch(W$active_r_library(), error = function(e) NULL)
  if (!is.null(library)) W$use_env_library(list(r_library = library))
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
