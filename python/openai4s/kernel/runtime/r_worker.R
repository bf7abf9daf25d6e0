# The openai4s R worker (spec kernel.md §7): the R sibling of worker.py on the
# same JSON-lines protocol. Spawned as
#   /bin/sh -c 'exec "$0" --vanilla "$1" 3>&1 4<&0 </dev/null 1>&2' Rscript <this file>
# so protocol OUT is fd 3, protocol IN is fd 4, fd 0 is /dev/null (a cell
# reading stdin cannot eat frames) and fd 1 is stderr. Cell output never
# travels on the protocol pipe: the host hands each execute two fifos, R
# sinks its output and messages into them, and fds 1 and 2 point at them
# while the cell runs (_r_fds.so), so children and native code write there
# too. Idle requests (complete, inspect, is_complete, the
# stdout fence) are in r_requests.R, the description of objects in
# r_describe.R; both are sourced into the same environment.
#
# Everything lives in one environment whose parent is the base environment
# and which is locked before the loop starts: a cell that rebinds `cat`,
# `paste` or `.oai4s_worker` in the global environment cannot change what
# the loop calls.
#
# Rscript hands this file to R's console reader, which parses a top-level
# expression again from its start after every line it adds: reading the
# worker's one long expression below that way cost about 0.5 s of CPU, most
# of the worker's start (parse() reads the whole file in a few ms). So this
# first, short expression parses the file at once, evaluates what follows
# it, and ends R before the console reader gets further.
local({
  self <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[[1L]])
  exprs <- parse(self, keep.source = FALSE, encoding = "UTF-8")
  for (expr in as.list(exprs)[-1L]) eval(expr, globalenv())
  # quit() itself: the worker's guard (below) replaces base's binding.
  .Internal(quit("no", 0L, FALSE))
})

local(envir = new.env(parent = baseenv()), {
  W <- environment()

  W$max_error_chars <- 1000000
  W$max_frame_bytes <- 12 * 2 * 1000000 + 2000000
  W$jsonlite_missing <- paste0(
    "openai4s R worker requires the 'jsonlite' package \u2014 ",
    "install.packages(\"jsonlite\") or select the prebuilt 'r' environment"
  )
  W$has_jsonlite <- requireNamespace("jsonlite", quietly = TRUE)
  W$workspace <- getwd()
  # Where this file is: the worker's other parts are beside it.
  W$runtime_dir <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[[1L]]))
  S <- new.env(parent = emptyenv())
  S$cells <- 0L
  S$reopened_in <- FALSE
  S$deferred <- list() # lines read past a cell's execute frame, for the main loop
  S$swallowed <- FALSE # an interrupt swallowed between requests
  S$reopened_out <- FALSE
  S$reading <- NULL # files_read of the running cell, NULL outside one
  S$sinks <- NULL # the running cell's fifo paths (out, err), NULL outside one
  S$host_calls <- 0L # host_call frames sent (their ids' sequence)
  S$env_library <- NULL # the host.env R library this worker put on .libPaths()
  S$cell_id <- NULL # the running cell's id (its execute frame's), NULL outside one
  S$bash_tokens <- character() # host$bash capabilities spent (r_bash.R)
  S$abandoned_calls <- character() # host_call ids an interrupt stopped waiting for

  # -- protocol connections ----------------------------------------------------

  W$open_in <- function() file("/dev/fd/4", open = "r", encoding = "UTF-8", raw = TRUE)
  W$open_out <- function() file("/dev/fd/3", open = "wb", raw = TRUE)
  S$proto_in <- NULL # fd 4 as an R connection: only without _r_fds.so (W$connection_line)
  S$in_chunks <- list() # bytes read from fd 4 past the last whole line
  S$proto_out <- W$open_out()
  W$read_chunk_bytes <- 65536L

  W$write_line <- function(text) {
    bytes <- c(charToRaw(enc2utf8(text)), as.raw(10L))
    ok <- tryCatch(
      {
        writeBin(bytes, S$proto_out)
        flush(S$proto_out)
        TRUE
      },
      error = function(e) FALSE
    )
    if (!ok && !S$reopened_out) {
      # A cell closed our connection (closeAllConnections()): reopen fd 3 once.
      S$reopened_out <- TRUE
      S$proto_out <- W$open_out()
      writeBin(bytes, S$proto_out)
      flush(S$proto_out)
    }
    invisible(NULL)
  }

  # -- protocol input ----------------------------------------------------------------

  # With _r_fds.so, fd 4 is read by its o4s_r_read_some (r_read.cpp): a
  # wait that a SIGINT ends, so a host call can stop waiting at once
  # (r_host.R). R keeps what it read past the last whole line; only the
  # last chunk kept may hold a newline (every earlier one was searched).
  W$pending_line <- function() {
    n <- length(S$in_chunks)
    if (n == 0L) {
      return(NULL)
    }
    last <- S$in_chunks[[n]]
    newline <- which(last == as.raw(10L))[1L] # not match(): it hashes the whole chunk
    if (is.na(newline)) {
      return(NULL)
    }
    bytes <- do.call(c, c(S$in_chunks[-n], list(last[seq_len(newline - 1L)])))
    rest <- last[-seq_len(newline)]
    S$in_chunks <- if (length(rest)) list(rest) else list()
    text <- tryCatch(rawToChar(bytes), error = function(e) "") # a NUL: not a frame
    Encoding(text) <- "UTF-8"
    text
  }

  # One line; NULL at the end of the stream; NA when nothing came within
  # wait_ms (< 0: no limit) or a signal ended the wait. Interrupts are held
  # throughout, and the line is stored in S$line before they are not: the
  # caller says where a pending one fires, and nothing read is lost to it.
  W$next_line <- function(wait_ms) {
    suspendInterrupts({
      S$line <- W$next_line_held(wait_ms)
    })
    S$line
  }

  W$next_line_held <- function(wait_ms) {
    repeat {
      line <- W$pending_line()
      if (!is.null(line)) {
        return(line)
      }
      got <- .C(W$fds_dll$o4s_r_read_some, 4L, as.integer(wait_ms),
        buffer = raw(W$read_chunk_bytes), W$read_chunk_bytes,
        count = 0L
      )
      if (got$count == -1L) {
        return(NA_character_)
      }
      if (got$count <= 0L) {
        return(NULL) # the end of the stream, or a read error
      }
      S$in_chunks[[length(S$in_chunks) + 1L]] <- got$buffer[seq_len(got$count)]
    }
  }

  # Without _r_fds.so: R's connection, whose read a SIGINT does not end (R
  # installs its handler with SA_RESTART, so the read resumes); the
  # interrupt stays pending until the line is stored. A cell that closed
  # the connection (closeAllConnections()) has it reopened once.
  W$connection_line <- function() {
    if (is.null(S$proto_in)) S$proto_in <- W$open_in()
    suspendInterrupts({
      line <- tryCatch(readLines(S$proto_in, n = 1L, warn = FALSE), error = function(e) NULL)
      if (length(line) == 0L && !S$reopened_in) {
        S$reopened_in <- TRUE
        S$proto_in <- W$open_in()
        line <- tryCatch(readLines(S$proto_in, n = 1L, warn = FALSE), error = function(e) NULL)
      }
      S$line <- if (length(line)) line
    })
    S$line
  }

  # One request, or NULL at the end of the stream. The loop runs with
  # interrupts held (W$serve), so a SIGINT between requests can fire only
  # here, where it is swallowed: it must neither end the worker (an
  # uncaught interrupt halts Rscript) nor lose a frame, nor stop the next
  # request.
  W$read_line <- function() {
    if (length(S$deferred)) {
      line <- S$deferred[[1L]]
      S$deferred <- S$deferred[-1L]
      return(line)
    }
    repeat {
      S$line <- NA_character_
      if (is.null(W$fds_dll)) W$connection_line() else W$next_line(-1L)
      # Resuming does not deliver a pending interrupt by itself; this does.
      # One swallowed here may have been meant for the cell being read:
      # W$take_owed_interrupt looks for the host's frame naming it.
      allowInterrupts(tryCatch(Sys.sleep(0), interrupt = function(e) S$swallowed <- TRUE))
      if (!identical(S$line, NA_character_)) {
        return(S$line)
      }
    }
  }

  # -- JSON out, escaped by hand (no jsonlite needed to answer) -------------------

  W$json_string <- function(x) {
    if (is.null(x) || length(x) == 0L || is.na(x[[1L]])) {
      return("null")
    }
    x <- as.character(x[[1L]])
    # Invalid bytes become visible <xx> escapes instead of breaking the frame.
    if (!validUTF8(x)) x <- iconv(x, "UTF-8", "UTF-8", sub = "byte")
    x <- enc2utf8(x)
    # Most strings (ids, keys, short values) need no escaping at all.
    if (!grepl("[\\\\\"\001-\037\177]", x, useBytes = TRUE)) {
      return(paste0("\"", x, "\""))
    }
    x <- gsub("\\", "\\\\", x, fixed = TRUE, useBytes = TRUE)
    x <- gsub("\"", "\\\"", x, fixed = TRUE, useBytes = TRUE)
    x <- gsub("\n", "\\n", x, fixed = TRUE, useBytes = TRUE)
    x <- gsub("\r", "\\r", x, fixed = TRUE, useBytes = TRUE)
    x <- gsub("\t", "\\t", x, fixed = TRUE, useBytes = TRUE)
    if (grepl("[\001-\037\177]", x, useBytes = TRUE)) {
      m <- gregexpr("[\001-\037\177]", x, useBytes = TRUE)
      regmatches(x, m) <- lapply(regmatches(x, m), function(ch) {
        vapply(ch, function(c1) sprintf("\\u%04x", as.integer(charToRaw(c1))), "")
      })
    }
    Encoding(x) <- "UTF-8"
    paste0("\"", x, "\"")
  }

  # sprintf formats numbers with R's C numeric locale: always a '.' decimal
  # mark, whatever options(OutDec) a cell set.
  W$json_number <- function(x) {
    if (is.null(x) || length(x) == 0L || is.na(x) || !is.finite(x)) {
      return("null")
    }
    if (is.integer(x)) sprintf("%d", x) else sprintf("%.6f", x)
  }

  W$json_bool <- function(x) if (isTRUE(x)) "true" else "false"

  # A named list of already-encoded JSON values -> an object.
  W$json_object <- function(fields) {
    keys <- vapply(names(fields), W$json_string, "")
    paste0("{", paste0(keys, ":", unlist(fields, use.names = FALSE), collapse = ","), "}")
  }

  W$json_array <- function(items) paste0("[", paste0(unlist(items), collapse = ","), "]")

  W$send <- function(fields) {
    text <- W$json_object(fields)
    if (nchar(text, type = "bytes") + 1 > W$max_frame_bytes) {
      text <- W$json_object(list(
        type = "\"response\"", id = fields$id, stdout = "\"\"", stderr = "\"\"",
        error = W$json_string(sprintf(
          "R kernel dropped an oversized response frame (>%d bytes)",
          as.integer(W$max_frame_bytes)
        )),
        interrupted = if (is.null(fields$interrupted)) "false" else fields$interrupted
      ))
    }
    W$write_line(text)
  }

  W$cap_error <- function(msg) {
    if (nchar(msg, allowNA = TRUE) > W$max_error_chars) {
      msg <- paste0(substr(msg, 1L, W$max_error_chars), "\n...(truncated at 1000000 characters)")
    }
    msg
  }

  W$response <- function(id, error = NULL, interrupted = FALSE, lineno = NULL, call = NULL,
                         usage = NULL, files_read = character(), sink_capture = TRUE) {
    fields <- list(
      type = "\"response\"", id = W$json_string(id),
      sink_capture = W$json_bool(sink_capture), stdout = "\"\"", stderr = "\"\"",
      error = if (is.null(error)) "null" else W$json_string(W$cap_error(error)),
      interrupted = W$json_bool(interrupted),
      trace = W$json_object(list(
        error_lineno = if (is.null(lineno)) "null" else W$json_number(as.integer(lineno)),
        error_call = if (is.null(call)) "null" else W$json_string(call)
      )),
      guards = "{}",
      files_read = W$json_array(lapply(files_read, W$json_string)),
      usage = if (is.null(usage)) "{}" else usage
    )
    W$send(fields)
  }

  # -- usage ---------------------------------------------------------------------

  W$peak_rss_kb <- function() {
    status <- tryCatch(
      {
        con <- W$untraced_file("/proc/self/status", open = "r")
        on.exit(close(con))
        readLines(con, warn = FALSE)
      },
      error = function(e) NULL
    )
    line <- grep("^VmHWM:", status, value = TRUE)
    if (length(line) == 0L) {
      return("null")
    }
    sprintf("%d", as.integer(gsub("[^0-9]", "", line[[1L]])))
  }

  W$cpu_seconds <- function() {
    t <- proc.time()
    sum(t[c(1L, 2L, 4L, 5L)], na.rm = TRUE)
  }

  # -- files_read: R opens files through these constructors ------------------------

  W$normalise <- function(path) {
    parts <- strsplit(path, "/", fixed = TRUE)[[1L]]
    out <- character()
    for (part in parts) {
      if (part == "" || part == ".") next
      if (part == "..") {
        if (length(out)) out <- out[-length(out)]
      } else {
        out <- c(out, part)
      }
    }
    paste0("/", paste(out, collapse = "/"))
  }

  # The spelling actually opened, relative to the workspace; symlinks are
  # never resolved (the host resolves what it needs).
  W$workspace_relative <- function(raw) {
    if (!is.character(raw) || length(raw) != 1L || is.na(raw) || !nzchar(raw)) {
      return(NULL)
    }
    if (grepl("^[a-z][a-z0-9+.-]*://", raw, ignore.case = TRUE)) {
      return(NULL)
    }
    raw <- path.expand(raw)
    absolute <- if (startsWith(raw, "/")) raw else paste0(getwd(), "/", raw)
    absolute <- W$normalise(absolute)
    root <- W$normalise(W$workspace)
    if (absolute == root || !startsWith(absolute, paste0(root, "/"))) {
      return(NULL)
    }
    rel <- substr(absolute, nchar(root) + 2L, nchar(absolute))
    if (nchar(rel) > 1024L) NULL else rel
  }

  W$note_open <- function(description, open) {
    reading <- S$reading
    if (is.null(reading)) {
      return(invisible(NULL))
    }
    if (!is.character(open) || length(open) != 1L) open <- ""
    is_read <- grepl("[r+]", open) || (open == "" && isTRUE(file.exists(description)))
    if (!is_read) {
      return(invisible(NULL))
    }
    rel <- tryCatch(W$workspace_relative(description), error = function(e) NULL)
    if (!is.null(rel) && !(rel %in% reading) && length(reading) < 256L) {
      S$reading <- c(reading, rel)
    }
    invisible(NULL)
  }

  # The worker's own reads skip the tracer (and its cost per call).
  W$untraced_file <- base::file

  # `tracer` runs first in base's `what`, in the function's own frame (it
  # sees and may change the arguments), for every caller: base's bindings
  # are its namespace's too. This is what trace(what, tracer, where =
  # baseenv()) installs, without its class and its set-up of methods'
  # tracing classes (10-20 ms of the worker's start for the six).
  W$prepend_to_base <- function(what, tracer) {
    original <- get(what, envir = baseenv(), inherits = FALSE)
    traced <- original
    body(traced) <- call("{", tracer, body(original))
    locked <- bindingIsLocked(what, baseenv())
    if (locked) unlockBinding(what, baseenv())
    assign(what, traced, envir = baseenv())
    if (locked) lockBinding(what, baseenv())
  }

  W$install_read_tracing <- function() {
    tracer <- bquote(.(W$note_open)(description, open))
    for (what in c("file", "gzfile", "bzfile", "xzfile")) {
      tryCatch(W$prepend_to_base(what, tracer), error = function(e) NULL)
    }
  }

  # -- child processes and native code: their output joins the cell's -----------

  # While a cell runs, fds 1 and 2 are the cell's fifos (r_fds.cpp): what a
  # child (system(), system2(), a shell, one started with wait = FALSE) or
  # native code writes there is the cell's, in order with R's own output,
  # which R's sinks write to the same fifos unbuffered. A child that
  # outlives the cell keeps writing to the host, which passes it to the
  # worker's log. Between cells fds 1 and 2 are the worker's own again.
  W$fds_dll <- tryCatch(
    dyn.load(file.path(W$runtime_dir, "_r_fds.so"), local = TRUE, now = TRUE),
    error = function(e) NULL
  )

  # 0, or the errno of the step that failed (logged; the cell still runs).
  W$redirect_fds <- function(out_path, err_path) {
    if (is.null(W$fds_dll)) {
      return(0L)
    }
    status <- .C(W$fds_dll$o4s_r_redirect, out_path, err_path, status = 0L)$status
    if (status != 0L) W$log(sprintf("R worker: fds 1/2 stay the worker's own (errno %d)", status))
    status
  }

  W$restore_fds <- function() {
    if (!is.null(W$fds_dll)) .C(W$fds_dll$o4s_r_restore, status = 0L)
    invisible(NULL)
  }

  # Without _r_fds.so (a build that lacks it), system() and system2()
  # children that R waits for are sent to the fifos by rewriting their
  # command (the rest then reaches only the log).
  W$child_command <- function(command, intern, wait) {
    sinks <- S$sinks
    if (is.null(sinks) || !isTRUE(wait) || !is.character(command) || length(command) != 1L) {
      return(command)
    }
    redirect <- paste0(" 2>>", shQuote(sinks$err))
    if (!isTRUE(intern)) redirect <- paste0(" >>", shQuote(sinks$out), redirect)
    paste0("{ ", command, "\n}", redirect)
  }

  # system2's own stdout/stderr arguments: "" (inherit) becomes the sink.
  W$child_targets <- function(stdout, stderr, wait) {
    sinks <- S$sinks
    if (is.null(sinks) || !isTRUE(wait)) {
      return(list(stdout = stdout, stderr = stderr))
    }
    if (identical(stdout, "")) stdout <- sinks$out
    if (identical(stderr, "")) stderr <- sinks$err
    list(stdout = stdout, stderr = stderr)
  }

  W$install_child_capture <- function() {
    system_tracer <- bquote(command <- .(W$child_command)(command, intern, wait))
    system2_tracer <- bquote({
      .oai4s_targets <- .(W$child_targets)(stdout, stderr, wait)
      stdout <- .oai4s_targets$stdout
      stderr <- .oai4s_targets$stderr
    })
    tracers <- list(system = system_tracer, system2 = system2_tracer)
    for (what in names(tracers)) {
      tryCatch(W$prepend_to_base(what, tracers[[what]]), error = function(e) NULL)
    }
  }

  # -- plots: the default device draws PNGs under .openai4s/figures -------------

  # The device draws into R's own session temp dir: each page becomes a
  # display frame and its file is removed, so a plot leaves no file behind
  # in the workspace (a front door that keeps figures saves the display,
  # one file per plot, as it does for Python's).
  W$figures_dir <- file.path(tempdir(), "openai4s-figures")

  W$figure_device <- function(...) {
    dir.create(W$figures_dir, recursive = TRUE, showWarnings = FALSE)
    pattern <- file.path(W$figures_dir, sprintf("cell-%d-%%03d.png", S$cells))
    grDevices::png(filename = pattern, width = 7, height = 5, units = "in", res = 96)
  }

  # Closes the devices the cell opened (so their files are complete) and
  # announces each page as a display frame (contracts: image/png, base64).
  W$flush_figures <- function(id, devices_before) {
    opened <- setdiff(grDevices::dev.list(), devices_before)
    for (dev in opened) tryCatch(grDevices::dev.off(dev), error = function(e) NULL)
    if (!dir.exists(W$figures_dir)) {
      return(invisible(NULL))
    }
    prefix <- sprintf("^cell-%d-[0-9]+\\.png$", S$cells)
    files <- sort(list.files(W$figures_dir, pattern = prefix, full.names = TRUE))
    on.exit(unlink(files))
    for (page in seq_along(files)) {
      size <- file.size(files[[page]])
      if (is.na(size) || size <= 0) next
      data <- jsonlite::base64_enc(readBin(files[[page]], "raw", size))
      W$send(list(
        type = "\"display\"", id = W$json_string(id),
        data = W$json_object(list(
          "image/png" = W$json_string(data),
          "text/plain" = W$json_string(sprintf("<R plot %d of cell %d>", page, S$cells))
        )),
        metadata = "{}", display_id = "null", update = "false"
      ))
    }
  }

  # -- cells -----------------------------------------------------------------------

  W$one_line <- function(expr) {
    text <- paste(trimws(deparse(expr, width.cutoff = 500L, nlines = 20L)), collapse = " ")
    if (nchar(text) > 500L) substr(text, 1L, 500L) else text
  }

  W$eval_call <- quote(eval(expr, envir))

  # R's JIT would byte-compile each worker function on its first calls,
  # which costs the first cells tens of milliseconds of CPU; the worker runs
  # interpreted and the JIT is on (at R's own level) only for the cell's code.
  W$user_jit <- compiler::enableJIT(0L)
  W$eval_user <- function(expr, envir) {
    compiler::enableJIT(W$user_jit)
    on.exit(compiler::enableJIT(0L))
    withVisible(eval(expr, envir))
  }

  # Printed as R's console prints a visible value: called from a frame
  # whose top is the global environment, so the cell's own print methods
  # are found (S3 lookup from the worker's environment stops at base).
  W$print_value <- function(value) {
    if (isS4(value)) {
      return(methods::show(value))
    }
    at_top <- new.env(parent = globalenv())
    assign("x", value, envir = at_top)
    eval(quote(base::print(x)), at_top)
  }

  # Runs the parsed expressions in order; returns the outcome as a list.
  W$run_exprs <- function(exprs, lines, out, err) {
    outcome <- list(error = NULL, interrupted = FALSE, lineno = NULL, call = NULL)
    envir <- globalenv()
    for (i in seq_along(exprs)) {
      expr <- exprs[[i]]
      failed <- tryCatch(
        withCallingHandlers(
          {
            shown <- W$eval_user(expr, envir)
            if (shown$visible) W$print_value(shown$value)
            NULL
          },
          warning = function(w) {
            cat("Warning: ", conditionMessage(w), "\n", sep = "", file = err)
            invokeRestart("muffleWarning")
          }
        ),
        interrupt = function(e) list(interrupted = TRUE),
        error = function(e) list(condition = e)
      )
      tryCatch(flush(out), error = function(e) NULL)
      if (is.null(failed)) next
      if (isTRUE(failed$interrupted)) {
        outcome$error <- "Interrupted"
        outcome$interrupted <- TRUE
        return(outcome)
      }
      e <- failed$condition
      call <- conditionCall(e)
      if (identical(call, W$eval_call)) call <- NULL
      msg <- conditionMessage(e)
      if (is.null(call)) {
        outcome$error <- paste0("Error: ", msg)
      } else {
        outcome$error <- paste0("Error in ", W$one_line(call), ": ", msg)
        fn <- if (is.call(call)) call[[1L]] else call
        outcome$call <- W$one_line(fn)
      }
      outcome$lineno <- lines[[i]]
      return(outcome)
    }
    outcome
  }

  W$parse_cell <- function(code) {
    tryCatch(
      {
        src <- srcfilecopy("<text>", strsplit(code, "\n", fixed = TRUE)[[1L]])
        exprs <- parse(text = code, keep.source = TRUE, srcfile = src)
        refs <- attr(exprs, "srcref")
        lines <- vapply(seq_along(exprs), function(i) as.integer(refs[[i]][[1L]]), 0L)
        list(exprs = exprs, lines = lines)
      },
      error = function(e) {
        msg <- conditionMessage(e)
        hit <- regmatches(msg, regexec("<text>:([0-9]+):", msg))[[1L]]
        list(error = paste0("ParseError: ", msg), lineno = if (length(hit) == 2L) as.integer(hit[[2L]]))
      }
    )
  }

  W$usage_json <- function(wall0, cpu0) {
    W$json_object(list(
      wall_s = W$json_number(as.numeric(difftime(Sys.time(), wall0, units = "secs"))),
      cpu_s = W$json_number(W$cpu_seconds() - cpu0),
      peak_rss_kb = W$peak_rss_kb()
    ))
  }

  W$open_sink <- function(path) fifo(path, open = "w", blocking = TRUE)

  W$execute <- function(request) {
    id <- request$id
    out_path <- request$sink_out
    err_path <- request$sink_err
    if (!is.character(out_path) || !is.character(err_path) || !nzchar(out_path) || !nzchar(err_path)) {
      W$response(id, error = "R kernel received an execute frame with no host capture sinks", sink_capture = FALSE)
      return(invisible(NULL))
    }
    S$cells <- S$cells + 1L
    S$cell_id <- id # host$save_artifact records the cell that made it
    on.exit(S$cell_id <- NULL)
    wall0 <- Sys.time()
    cpu0 <- W$cpu_seconds()
    code <- if (is.character(request$code)) request$code else ""
    # Blocking opens: a non-blocking fifo silently drops what the pipe buffer
    # cannot hold. The host opened the read ends before it sent this frame.
    out <- W$open_sink(out_path)
    err <- W$open_sink(err_path)
    sink(out)
    sink(err, type = "message")
    W$redirect_fds(out_path, err_path)
    S$sinks <- list(out = out_path, err = err_path)
    devices_before <- grDevices::dev.list()
    S$reading <- character()
    outcome <- tryCatch(
      {
        if (W$take_owed_interrupt(request$seq)) {
          signalCondition(structure(list(message = "interrupt", call = NULL),
            class = c("interrupt", "condition")
          ))
        }
        if (S$cells == 1L) W$restore_active_env()
        parsed <- W$parse_cell(code)
        if (!is.null(parsed$error)) {
          list(error = parsed$error, interrupted = FALSE, lineno = parsed$lineno, call = NULL)
        } else {
          W$run_exprs(parsed$exprs, parsed$lines, out, err)
        }
      },
      interrupt = function(e) list(error = "Interrupted", interrupted = TRUE)
    )
    files_read <- S$reading
    S$reading <- NULL
    S$sinks <- NULL
    # Unwind the cell's own sinks too, then close the fifos: the host sees
    # end of stream before it reads the response.
    W$restore_fds()
    while (sink.number() > 0L) sink()
    if (sink.number(type = "message") != 2L) sink(type = "message")
    tryCatch(close(out), error = function(e) NULL)
    tryCatch(close(err), error = function(e) NULL)
    tryCatch(W$flush_figures(id, devices_before), error = function(e) NULL)
    W$response(id,
      error = outcome$error, interrupted = isTRUE(outcome$interrupted),
      lineno = outcome$lineno, call = outcome$call, usage = W$usage_json(wall0, cpu0),
      files_read = files_read
    )
  }

  # -- variable inspector (spec §7.5) -----------------------------------------------

  W$djb2 <- function(text) {
    h <- 5381
    for (b in as.integer(charToRaw(enc2utf8(text)))) h <- (h * 33 + b) %% 4294967296
    paste0(sprintf("%04x", as.integer(h %/% 65536)), sprintf("%04x", as.integer(h %% 65536)))
  }

  W$plain_scalar <- function(x) {
    is.atomic(x) && length(x) == 1L && is.null(attributes(x))
  }

  W$scalar_preview <- function(x) {
    if (is.na(x)) {
      return("NA")
    }
    if (is.character(x)) {
      if (nchar(x, allowNA = TRUE) > 60L) x <- paste0(substr(x, 1L, 59L), "\u2026")
      return(W$json_string(x))
    }
    if (is.raw(x)) {
      return(sprintf("%02x", as.integer(x)))
    }
    if (is.logical(x)) {
      return(if (x) "TRUE" else "FALSE")
    }
    if (is.double(x) && !is.finite(x)) {
      return(if (is.nan(x)) "NaN" else if (x > 0) "Inf" else "-Inf")
    }
    as.character(x)
  }

  W$describe <- function(name) {
    entry <- list(name = W$json_string(substr(name, 1L, 160L)))
    envir <- globalenv()
    if (bindingIsActive(name, envir)) {
      entry$type <- "\"active_binding\""
      return(W$json_object(entry))
    }
    value <- get(name, envir = envir, inherits = FALSE)
    entry$type <- W$json_string(typeof(value))
    if (!is.null(attr(value, "class", exact = TRUE)) || !is.null(attr(value, "dim", exact = TRUE)) ||
      isS4(value)) {
      # As R users see it (class, dims, columns, levels), read without
      # dispatch; what cannot be read safely keeps the bare entry.
      fields <- tryCatch(W$facts_json(W$facts(value)), error = function(e) NULL)
      if (!is.null(fields)) entry[names(fields)] <- fields
      return(W$json_object(entry))
    }
    if (is.atomic(value) && !is.null(value)) {
      entry$kind <- W$json_string(if (is.character(value)) "text" else if (is.raw(value)) "bytes" else "vector")
    } else if (is.list(value)) {
      entry$kind <- "\"container\""
    } else {
      return(W$json_object(entry))
    }
    n <- length(value)
    entry$length <- sprintf("%d", as.integer(n))
    head <- if (is.list(value)) value[seq_len(min(n, 12L))] else as.list(value[seq_len(min(n, 12L))])
    if (all(vapply(head, W$plain_scalar, TRUE))) {
      items <- vapply(head, W$scalar_preview, "")
      preview <- paste0("[", paste(items, collapse = ", "), if (n > 12L) ", \u2026", "]")
      if (nchar(preview) > 240L) preview <- paste0(substr(preview, 1L, 239L), "\u2026")
      entry$preview <- W$json_string(preview)
      entry$fingerprint <- W$json_string(W$djb2(paste0(typeof(value), ":", n, ":", paste(items, collapse = "|"))))
    }
    W$json_object(entry)
  }

  W$inspect_variables <- function(request) {
    id <- W$json_string(request$id)
    limit <- request$limit
    if (!is.numeric(limit) || length(limit) != 1L || is.na(limit) || limit != floor(limit) ||
      limit < 1 || limit > 500) {
      W$send(list(
        type = "\"variables_response\"", id = id, variables = "[]", truncated = "false",
        limit = "0", error = "\"invalid variable inspection limit\""
      ))
      return(invisible(NULL))
    }
    limit <- as.integer(limit)
    body <- tryCatch(
      {
        names <- ls(globalenv(), all.names = TRUE, sorted = FALSE)
        names <- sort(names, method = "radix")
        names <- names[!startsWith(names, ".oai4s_") & !(names %in% c("quit", "q"))]
        shown <- names[seq_len(min(length(names), limit))]
        list(
          variables = W$json_array(lapply(shown, W$describe)),
          truncated = W$json_bool(length(names) > limit)
        )
      },
      error = function(e) NULL
    )
    if (is.null(body)) {
      W$send(list(
        type = "\"variables_response\"", id = id, variables = "[]", truncated = "false",
        limit = sprintf("%d", limit), error = "\"variable inspection failed closed\""
      ))
    } else {
      W$send(list(
        type = "\"variables_response\"", id = id, variables = body$variables,
        truncated = body$truncated, limit = sprintf("%d", limit), error = "null"
      ))
    }
  }

  # -- requests --------------------------------------------------------------------

  W$recovered_id <- function(line) {
    hit <- regmatches(line, regexec("\"id\"\\s*:\\s*\"([^\"\\\\]*)\"", line))[[1L]]
    if (length(hit) == 2L) hit[[2L]] else "unknown"
  }

  W$refuse <- function(line, error) {
    id <- W$recovered_id(line)
    if (grepl("\"type\"\\s*:\\s*\"inspect_variables\"", line)) {
      W$send(list(
        type = "\"variables_response\"", id = W$json_string(id), variables = "[]",
        truncated = "false", limit = "0", error = W$json_string(error)
      ))
    } else {
      W$response(id, error = error, sink_capture = FALSE)
    }
  }

  # TRUE to keep serving, FALSE to exit.
  W$handle <- function(line) {
    if (!W$has_jsonlite) {
      if (grepl("\"type\"\\s*:\\s*\"shutdown\"", line)) {
        return(FALSE)
      }
      W$refuse(line, W$jsonlite_missing)
      return(TRUE)
    }
    request <- tryCatch(jsonlite::fromJSON(line, simplifyVector = FALSE), error = function(e) NULL)
    if (!is.list(request) || is.null(names(request))) {
      W$refuse(line, "invalid JSON request")
      return(TRUE)
    }
    # A frame with no type is an execute (spec 3.2), as in the Python worker.
    type <- if (is.null(request$type)) "execute" else request$type
    if (!is.character(type) || length(type) != 1L) {
      W$log("R worker: a frame whose type is not a string was ignored")
      return(TRUE)
    }
    if (identical(type, "shutdown")) {
      return(FALSE)
    }
    handler <- W$frame_table[[type]]
    if (is.null(handler)) {
      W$log(sprintf("R worker: unknown frame type %s ignored", W$json_string(type)))
    } else {
      handler(request)
    }
    TRUE
  }

  W$log <- function(msg) W$send(list(type = "\"log\"", msg = W$json_string(msg)))

  # The frames that answer a worker's own request arrive while host$ waits
  # for them (r_host.R). One arriving between requests for a call an
  # interrupt abandoned is stale and dropped, as worker.py drops it; any
  # other is a host error (an input reply too: R asks for no input), said
  # in the log.
  W$unexpected_reply <- function(request) {
    if (is.character(request$id) && request$id %in% S$abandoned_calls) {
      if (identical(request$type, "host_response")) {
        S$abandoned_calls <- setdiff(S$abandoned_calls, request$id)
      }
      return(invisible(NULL))
    }
    W$log(sprintf(
      "R worker: unexpected %s frame (no host call or input request is waiting for it)",
      request$type
    ))
  }

  W$no_handshake <- function(request) {
    id <- if (is.character(request$id)) request$id else "unknown"
    W$send(list(
      type = "\"initialization_error\"", id = W$json_string(id),
      error = "\"the R worker has no attestation handshake\""
    ))
  }

  # The one dispatch by type: every type the host may send a worker
  # (src/proto/frame_types.h kHostToWorker) is here, handled or answered
  # with a clear error; shutdown ends the loop in W$handle. A test holds
  # these names to the header's list.
  W$frame_table <- list(
    initialize = function(request) W$no_handshake(request),
    execute = function(request) W$execute(request),
    host_response = function(request) W$unexpected_reply(request),
    host_ack = function(request) W$unexpected_reply(request),
    inspect_variables = function(request) W$inspect_variables(request),
    stdout_request = function(request) W$stdout_request(request),
    complete = function(request) W$complete(request),
    inspect = function(request) W$inspect(request),
    is_complete = function(request) W$is_complete(request),
    input_reply = function(request) W$unexpected_reply(request),
    adopt = function(request) W$adopt(request),
    interrupt = function(request) W$note_interrupt(request)
  )

  # The host names the cell an interrupt was for (kernel/cell_interrupts.h);
  # read here, it came before that cell's execute frame (or is stale).
  W$note_interrupt <- function(request) S$owed_interrupt <- request$seq

  W$take_owed_interrupt <- function(seq) {
    owed <- list(S$owed_interrupt)
    S$owed_interrupt <- NULL
    # A signal swallowed between requests: the host wrote its frame before
    # it, so the frame is in the pipe now (or was read above).
    if (isTRUE(S$swallowed) && !is.null(W$fds_dll)) {
      S$swallowed <- FALSE
      repeat {
        line <- W$next_line(0L)
        if (is.null(line) || identical(line, NA_character_)) break
        frame <- tryCatch(jsonlite::fromJSON(line, simplifyVector = FALSE), error = function(e) NULL)
        if (is.list(frame) && identical(frame$type, "interrupt")) {
          owed[[length(owed) + 1L]] <- frame$seq
        } else {
          S$deferred[[length(S$deferred) + 1L]] <- line
        }
      }
    }
    same <- function(x) is.numeric(x) && length(x) == 1L && is.numeric(seq) && x == seq
    length(seq) == 1L && any(vapply(owed, same, TRUE))
  }

  # Interrupts are held but while a request is handled (and where
  # W$read_line swallows one): one landing between requests, wherever R
  # would check for it, cannot end the worker.
  W$serve <- function() suspendInterrupts(W$serve_requests())

  W$serve_requests <- function() {
    repeat {
      line <- W$read_line()
      if (is.null(line)) break
      keep <- TRUE
      # Exactly one response per request: a failure or an interrupt that
      # lands outside the cell's own handlers still answers.
      status <- tryCatch(
        {
          keep <- allowInterrupts(W$handle(line))
          "ok"
        },
        interrupt = function(e) "Interrupted",
        error = function(e) paste0("openai4s r_worker internal error: ", conditionMessage(e))
      )
      if (!identical(status, "ok")) {
        tryCatch(W$restore_fds(), error = function(e) NULL, interrupt = function(e) NULL)
        while (sink.number() > 0L) sink()
        if (sink.number(type = "message") != 2L) try(sink(type = "message"), silent = TRUE)
        S$reading <- NULL
        S$sinks <- NULL
        tryCatch(
          W$response(W$recovered_id(line),
            error = status, interrupted = identical(status, "Interrupted"), sink_capture = FALSE
          ),
          error = function(e) NULL, interrupt = function(e) NULL
        )
      }
      if (!isTRUE(keep)) break
    }
  }

  # -- start -----------------------------------------------------------------------

  # The worker's other parts, beside this file.
  for (part in c("r_describe.R", "r_requests.R", "r_host.R", "r_bash.R")) {
    sys.source(file.path(W$runtime_dir, part), envir = W, keep.source = FALSE)
  }

  # quit()/q() are refused by an environment on the search path, not by
  # bindings in the global one: a fresh kernel's ls() is empty, and
  # rm(list = ls(all.names = TRUE)) leaves the guard standing.
  disabled <- function(name) {
    force(name)
    function(...) {
      stop(sprintf(
        paste0(
          "%s() is disabled inside openai4s R cells; the kernel stays alive. To leave, ",
          "type `exit` or press Ctrl-D in the REPL, or shut the kernel down from Jupyter"
        ),
        name
      ), call. = FALSE)
    }
  }
  guard <- attach(NULL, pos = 2L, name = "openai4s")
  for (name in c("quit", "q")) {
    assign(name, disabled(name), envir = guard)
    # And base's own binding: base::quit() and a detached guard meet it.
    unlockBinding(name, baseenv())
    assign(name, disabled(name), envir = baseenv())
    lockBinding(name, baseenv())
  }
  assign(".oai4s_worker", W, envir = guard)
  assign("host", W$make_host(), envir = guard)
  # Registered, not bound: S3 lookup skips attached environments (R >= 4.1).
  registerS3method("print", "openai4s_host", W$print_host, envir = baseenv())
  lockEnvironment(guard, bindings = TRUE)
  options(device = W$figure_device, warn = 1)
  W$install_read_tracing()
  if (is.null(W$fds_dll)) W$install_child_capture()
  lockEnvironment(W, bindings = TRUE)
  W$serve()
})
invisible(NULL)
