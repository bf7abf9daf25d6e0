# host$bash for R cells: the R sibling of the Python SDK's host.bash
# (python/openai4s/sdk/bash.py), step for step. The worker validates the
# command (the SDK's own static precheck included, before any host call),
# asks the host about the URLs it names, asks for a one-shot capability
# bound to this command, directory and worker (`authorize_bash`), checks
# and consumes it, runs the command, and reports a safe summary with the
# files it changed (`record_bash_result`). The host decides and audits;
# the worker runs. Sourced into the worker's environment by r_worker.R.

W$bash_capability_version <- "openai4s-bash-capability-v1"
W$bash_capability_fields <- c(
  "version", "token", "command_sha256", "cwd", "workspace", "allowed_root",
  "generation", "challenge", "issued_at_ms", "expires_at_ms"
)
W$bash_max_ttl_ms <- 60000
W$bash_max_skew_ms <- 5000
W$bash_replay_window <- 1024L
# Output kept of each stream, in characters (sdk/shell_run.py).
W$bash_tail_chars <- c(stdout = 30000L, stderr = 8000L)
# The workspace snapshot around a command (sdk/workspace_diff.py).
W$bash_max_files <- 5000L
W$bash_max_listed <- 100L
W$bash_skipped_dirs <- c(".git", ".venv", "node_modules", "__pycache__")

# -- before any host call --------------------------------------------------------------

# The SDK's precheck, run by the Python it ships in (r_bash_precheck.py):
# one rule set for both workers, not a copy in R. The reason a command is
# blocked, or NULL; NULL too where no python3 can run it (the host's own
# precheck still refuses the command before any capability exists).
W$bash_precheck <- function(command) {
  python <- Sys.which("python3")
  if (!nzchar(python)) {
    return(NULL)
  }
  input <- tempfile("o4s-bash-precheck-")
  on.exit(unlink(input))
  writeBin(charToRaw(enc2utf8(command)), input)
  script <- file.path(W$runtime_dir, "r_bash_precheck.py")
  reason <- suppressWarnings(tryCatch(
    system2(python, c("-I", "-S", shQuote(script)), stdout = TRUE, stderr = FALSE, stdin = input),
    error = function(e) NULL
  ))
  if (!is.null(attr(reason, "status")) || !length(reason)) {
    return(NULL)
  }
  paste(reason, collapse = "\n")
}

# Python's `timeout or 120`: NULL or 0 is the default.
W$bash_validate <- function(command, timeout) {
  if (!is.character(command) || length(command) != 1L || is.na(command) || !nzchar(trimws(command))) {
    W$host_fail("bash: empty command")
  }
  if (is.null(timeout) || (is.numeric(timeout) && identical(as.numeric(timeout), 0))) timeout <- 120
  if (!is.numeric(timeout) || length(timeout) != 1L || is.na(timeout)) {
    W$host_fail("bash: timeout must be a number")
  }
  if (!is.finite(timeout) || timeout <= 0) W$host_fail("bash: timeout must be finite and positive")
  reason <- W$bash_precheck(command)
  if (!is.null(reason) && nzchar(reason)) {
    W$host_fail(sprintf("bash: blocked by static safety precheck: %s", reason))
  }
  as.numeric(timeout)
}

W$bash_domains <- function(command) {
  # The host after any userinfo (https://user:pass@host names host).
  urls <- regmatches(command, gregexpr("[hH][tT][tT][pP][sS]?://([^[:space:]/?#@]*@)?[A-Za-z0-9.-]+", command))[[1L]]
  hosts <- sub("\\.+$", "", tolower(sub("^https?://([^@]*@)?", "", urls, ignore.case = TRUE)))
  sort(unique(hosts[nzchar(hosts)]), method = "radix")
}

# The host judges the URLs a command names by the egress policy; when it
# cannot be asked, an allowlist policy is no permission.
W$bash_check_egress <- function(command) {
  domains <- W$bash_domains(command)
  if (!length(domains)) {
    return(invisible(NULL))
  }
  verdict <- tryCatch(W$host_call("egress_check", list(list(domains = as.list(domains)))),
    error = function(e) {
      mode <- tolower(trimws(Sys.getenv("OPENAI4S_EGRESS")))
      if (identical(mode, "allowlist")) list(blocked = domains[[1L]]) else NULL
    }
  )
  blocked <- if (is.list(verdict)) verdict$blocked
  if (is.character(blocked) && length(blocked) == 1L) {
    message <- verdict$message
    if (!is.character(message) || !nzchar(message[[1L]])) {
      message <- sprintf("bash: domain %s is outside the egress allowlist", blocked)
    }
    W$host_fail(W$in_r_spelling(message[[1L]]))
  }
  invisible(NULL)
}

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
# Untraced and raw: /dev/urandom is no file the cell read, nor a regular one.
W$bash_challenge <- function() {
  con <- W$untraced_file("/dev/urandom", open = "rb", raw = TRUE)
  on.exit(close(con))
  paste(as.character(readBin(con, "raw", 24L)), collapse = "")
}

# -- the capability --------------------------------------------------------------------

# The capability must be whole, current, bound to what this worker asked
# for, and used once (bash.py's _check_capability and _spend).
W$bash_check_capability <- function(capability, binding) {
  if (!is.list(capability)) W$host_fail("bash: host authorization returned no capability")
  missing <- setdiff(W$bash_capability_fields, names(capability))
  if (length(missing)) {
    W$host_fail(sprintf("bash: host authorization omitted capability fields: %s", paste(missing, collapse = ", ")))
  }
  if (!identical(capability$version, W$bash_capability_version)) {
    W$host_fail("bash: host capability version is not supported")
  }
  token <- capability$token
  if (!is.character(token) || length(token) != 1L || nchar(token) < 24L) {
    W$host_fail("bash: host capability token is malformed")
  }
  for (key in c("cwd", "generation", "challenge")) {
    if (!identical(capability[[key]], binding[[key]])) {
      W$host_fail(sprintf("bash: host capability binding mismatch (%s)", key))
    }
  }
  if (nzchar(binding$command_sha256) && !identical(capability$command_sha256, binding$command_sha256)) {
    W$host_fail("bash: host capability binding mismatch (command_sha256)")
  }
  W$bash_check_capability_paths(capability)
  W$bash_check_capability_times(capability)
  W$bash_spend(token)
  token
}

W$bash_check_capability_paths <- function(capability) {
  paths <- list()
  for (key in c("cwd", "workspace", "allowed_root")) {
    value <- capability[[key]]
    if (!is.character(value) || length(value) != 1L || !dir.exists(value)) {
      W$host_fail(sprintf("bash: host capability %s is not a directory", key))
    }
    paths[[key]] <- normalizePath(value)
  }
  inside <- vapply(c(paths$allowed_root, paths$workspace), function(root) {
    paths$cwd == root || startsWith(paths$cwd, paste0(sub("/+$", "", root), "/"))
  }, TRUE)
  if (!any(inside)) W$host_fail("bash: host capability cwd is outside its allowed root")
}

W$bash_check_capability_times <- function(capability) {
  issued <- capability$issued_at_ms
  expires <- capability$expires_at_ms
  numbers <- is.numeric(issued) && is.numeric(expires) && length(issued) == 1L && length(expires) == 1L
  if (!numbers) W$host_fail("bash: host capability times are malformed")
  now <- 1000 * as.numeric(Sys.time())
  if (expires <= now) W$host_fail("bash: host capability expired")
  if (issued > now + W$bash_max_skew_ms) W$host_fail("bash: host capability was issued in the future")
  if (expires <= issued || expires - issued > W$bash_max_ttl_ms) {
    W$host_fail("bash: host capability lifetime is invalid")
  }
}

W$bash_spend <- function(token) {
  if (token %in% S$bash_tokens) W$host_fail("bash: host capability token replayed")
  S$bash_tokens <- utils::tail(c(S$bash_tokens, token), W$bash_replay_window)
}

# The host gate's refusal texts (permission_gate.cpp), and what the cell
# is told for each: who refused, and for an unattended run how to allow it
# (sdk/bash.py's _REFUSALS, in R's spelling).
W$bash_refusals <- c(
  "denied by user" = "host$bash was denied by the user: %s",
  "approval required but no interactive channel is attached" = paste0(
    "host$bash needs approval and nobody can be asked here (unattended): %s",
    " -- allow it with OPENAI4S_UNATTENDED_APPROVAL=allow or a standing allow rule"
  ),
  "approval required but this client cannot show approval prompts" = paste0(
    "host$bash needs approval and this client cannot show approval prompts",
    " (it declared no MCP elicitation): %s -- use a client that supports",
    " elicitation, or add a standing allow rule"
  ),
  "blocked by a standing 'deny' permission rule" = "host$bash is refused by a standing 'deny' permission rule: %s"
)

# The command as a refusal quotes it: one line, control characters as
# escapes (an ESC sequence must not repaint the terminal), 200 characters.
W$bash_shown <- function(command) {
  shown <- paste(strsplit(trimws(command), "[[:space:]]+")[[1L]], collapse = " ")
  chars <- strsplit(shown, "", fixed = TRUE)[[1L]]
  controls <- grepl("[[:cntrl:]]", chars)
  codes <- vapply(chars[controls], utf8ToInt, 0L)
  chars[controls] <- ifelse(codes < 256L, sprintf("\\x%02x", codes), sprintf("\\u%04x", codes))
  shown <- paste(chars, collapse = "")
  if (nchar(shown) > 200L) shown <- paste0(substr(shown, 1L, 199L), "\u2026")
  shown
}

# A permission refusal is a decision, said in one line the user can act on
# (sdk/bash.py's _refusal); anything else says the command did not run.
W$bash_refused <- function(message, command) {
  why <- sub("^host\\.authorize_bash error: ", "", message)
  if (startsWith(why, "Permission denied: ")) {
    why <- sub("^Permission denied: ", "", why)
    shown <- W$bash_shown(command)
    W$host_fail(if (why %in% names(W$bash_refusals)) {
      sprintf(W$bash_refusals[[why]], shown)
    } else {
      sprintf("host$bash was refused (%s): %s", why, shown)
    })
  }
  W$host_fail(sprintf("bash: host authorization unavailable; command was not executed (%s)", why))
}

# The consumed capability's binding: what the result report echoes.
W$bash_authorize <- function(binding) {
  capability <- tryCatch(W$host_call("authorize_bash", list(binding)), error = function(e) {
    W$bash_refused(conditionMessage(e), binding$command)
  })
  token <- W$bash_check_capability(capability, binding)
  consume <- list(
    token = token, command_sha256 = capability$command_sha256, cwd = binding$cwd,
    generation = binding$generation, challenge = binding$challenge
  )
  receipt <- tryCatch(W$host_call("consume_bash_authorization", list(consume)), error = function(e) {
    W$host_fail("bash: host capability could not be consumed; command was not executed")
  })
  if (!isTRUE(receipt$ok)) W$host_fail("bash: host did not confirm the capability; command was not executed")
  consume
}

# -- the run ---------------------------------------------------------------------------

# UTF-8 characters in `bytes`: every byte but a continuation byte starts one.
W$utf8_chars <- function(bytes) sum(bitwAnd(as.integer(bytes), 0xC0L) != 0x80L)

# The last `limit` characters a stream wrote, and how many it wrote in all.
W$bash_tail <- function(path, limit) {
  size <- file.size(path)
  if (is.na(size) || size <= 0) {
    return(list(text = "", seen = 0L))
  }
  con <- W$untraced_file(path, open = "rb")
  on.exit(close(con))
  seen <- 0
  repeat {
    chunk <- readBin(con, "raw", 1048576L)
    if (!length(chunk)) break
    seen <- seen + W$utf8_chars(chunk)
  }
  keep <- min(size, 4 * limit) # a character is at most 4 bytes
  seek(con, size - keep)
  bytes <- readBin(con, "raw", keep)
  while (length(bytes) && bitwAnd(as.integer(bytes[[1L]]), 0xC0L) == 0x80L) bytes <- bytes[-1L]
  text <- rawToChar(bytes[bytes != as.raw(0L)])
  if (!validUTF8(text)) text <- iconv(text, "UTF-8", "UTF-8", sub = "byte")
  Encoding(text) <- "UTF-8"
  if (nchar(text) > limit) text <- substr(text, nchar(text) - limit + 1L, nchar(text))
  list(text = text, seen = as.integer(seen))
}

# Python's Outcome.streams(): each stream's text and its counts.
W$bash_streams <- function(tails) {
  fields <- list(stdout = tails$stdout$text, stderr = tails$stderr$text)
  for (name in c("stdout", "stderr")) {
    retained <- nchar(tails[[name]]$text)
    dropped <- max(0L, tails[[name]]$seen - retained)
    fields[[paste0(name, "_seen_chars")]] <- tails[[name]]$seen
    fields[[paste0(name, "_retained_chars")]] <- retained
    fields[[paste0(name, "_dropped_chars")]] <- dropped
    fields[[paste0(name, "_truncated")]] <- dropped > 0L
  }
  fields
}

# The command runs in a session of its own, started without waiting (as
# Python's shell_run starts it): R's own wait for a child (system2) takes
# a SIGINT to stop the child and carries on, so the cell would go on as
# if nothing happened. Here the worker waits in Sys.sleep, where an
# interrupt is R's interrupt condition at once; whatever way the wait
# ends, nothing the command started outlives it.
W$bash_script <- paste(
  'echo $$ > "$1"',
  '/bin/bash -c "$(cat "$2")" < /dev/null > "$3" 2> "$4"',
  'echo $? > "$5.part" && mv "$5.part" "$5"',
  sep = "; "
)
W$bash_grace_s <- 5

W$bash_run <- function(command, cwd, timeout) {
  files <- tempfile(c("o4s-bash-pid-", "o4s-bash-cmd-", "o4s-bash-out-", "o4s-bash-err-", "o4s-bash-status-"))
  names(files) <- c("pid", "cmd", "out", "err", "status")
  on.exit(unlink(c(files, paste0(files[["status"]], ".part"))))
  writeBin(charToRaw(enc2utf8(command)), files[["cmd"]])
  started <- Sys.time()
  old <- setwd(cwd)
  on.exit(setwd(old), add = TRUE)
  launcher <- if (nzchar(Sys.which("setsid"))) c("setsid", "/bin/bash") else "/bin/bash"
  system2(launcher[[1L]], c(launcher[-1L], "-c", shQuote(W$bash_script), "o4s-bash", shQuote(files)),
    stdout = FALSE, stderr = FALSE, stdin = "/dev/null", wait = FALSE
  )
  # First of the exit handlers: the pid file is still there.
  on.exit(W$bash_kill_group(files[["pid"]], "KILL"), add = TRUE, after = FALSE)
  done <- W$bash_wait(files, started + timeout)
  timed_out <- is.null(done)
  if (timed_out) {
    W$bash_kill_group(files[["pid"]], "TERM")
    done <- W$bash_wait(files, Sys.time() + W$bash_grace_s)
  }
  duration <- as.integer(1000 * as.numeric(difftime(Sys.time(), started, units = "secs")))
  tails <- list(
    stdout = W$bash_tail(files[["out"]], W$bash_tail_chars[["stdout"]]),
    stderr = W$bash_tail(files[["err"]], W$bash_tail_chars[["stderr"]])
  )
  list(
    status = if (timed_out) "timed_out" else "completed",
    exit_code = done$exit_code, streams = W$bash_streams(tails), duration_ms = duration
  )
}

# The integer on the first line of `path`, or NULL; untraced (the
# worker's own files are no files the cell read).
W$first_integer <- function(path) {
  line <- tryCatch(
    {
      con <- W$untraced_file(path, open = "r")
      on.exit(close(con))
      readLines(con, n = 1L, warn = FALSE)
    },
    error = function(e) character(), warning = function(w) character()
  )
  value <- suppressWarnings(as.integer(line))
  if (length(value) == 1L && !is.na(value)) value
}

# list(exit_code) once the command's shell ended before `deadline`, else
# NULL. The pause grows to 50 ms: a quick command costs a few ms of wait.
W$bash_wait <- function(files, deadline) {
  pause <- 0.002
  repeat {
    if (file.exists(files[["status"]])) {
      return(list(exit_code = W$first_integer(files[["status"]])))
    }
    if (Sys.time() >= deadline) {
      return(NULL)
    }
    Sys.sleep(pause)
    pause <- min(0.05, 2 * pause)
  }
}

# Signals the command's whole session (its shell leads it: setsid); a
# session whose leader has not written its pid yet is waited for briefly.
W$bash_kill_group <- function(pid_file, signal) {
  for (i in 1:50) {
    pid <- W$first_integer(pid_file)
    if (!is.null(pid)) break
    Sys.sleep(0.01)
  }
  if (!is.null(pid) && pid > 1L) {
    system2("/bin/bash", c("-c", shQuote(sprintf("kill -%s -- -%d %d 2>/dev/null", signal, pid, pid))),
      stdout = FALSE, stderr = FALSE
    )
  }
  invisible(NULL)
}

# -- the files a command changed (sdk/workspace_diff.py) ----------------------------

# path (relative to root) -> "mtime:size" of every regular file under root,
# symlinks and the skipped directories left out, at most bash_max_files.
W$bash_snapshot <- function(root) {
  stamps <- character()
  truncated <- FALSE
  pending <- root
  while (length(pending) && !truncated) {
    dir <- pending[[length(pending)]]
    pending <- pending[-length(pending)]
    names <- tryCatch(list.files(dir, all.files = TRUE, no.. = TRUE), error = function(e) character())
    if (!length(names)) next
    full <- file.path(dir, names)
    info <- file.info(full, extra_cols = FALSE)
    plain <- !is.na(info$isdir) & !nzchar(Sys.readlink(full))
    pending <- c(pending, full[plain & info$isdir & !(names %in% W$bash_skipped_dirs)])
    files <- which(plain & !info$isdir)
    room <- W$bash_max_files - length(stamps)
    if (length(files) > room) {
      files <- files[seq_len(room)]
      truncated <- TRUE
    }
    stamp <- sprintf("%.6f:%.0f", as.numeric(info$mtime[files]), info$size[files])
    names(stamp) <- substring(full[files], nchar(root) + 2L)
    stamps <- c(stamps, stamp)
  }
  list(stamps = stamps, truncated = truncated)
}

# The raw lists the host's record is made from: the host keeps at most its
# own number of paths and names a secret file only as <secret-path>.
W$bash_diff <- function(before, after) {
  old <- before$stamps
  new <- after$stamps
  old_paths <- as.character(names(old))
  new_paths <- as.character(names(new))
  common <- intersect(new_paths, old_paths)
  kinds <- list(
    created = setdiff(new_paths, old_paths),
    modified = common[new[common] != old[common]],
    deleted = setdiff(old_paths, new_paths)
  )
  truncated <- before$truncated || after$truncated
  diff <- list()
  for (kind in names(kinds)) {
    paths <- sort(kinds[[kind]], method = "radix")
    truncated <- truncated || length(paths) > W$bash_max_listed
    diff[[kind]] <- as.list(utils::head(paths, W$bash_max_listed))
  }
  diff$truncated <- truncated
  diff
}

# -- host$bash ---------------------------------------------------------------------------

# Python's os.path.join(os.getcwd(), workdir): an absolute workdir is itself.
W$bash_working_directory <- function(workdir) {
  target <- if (is.null(workdir)) {
    getwd()
  } else if (startsWith(as.character(workdir), "/")) {
    workdir
  } else {
    file.path(getwd(), workdir)
  }
  cwd <- normalizePath(target, mustWork = FALSE)
  if (!dir.exists(cwd)) W$host_fail(sprintf("bash: workdir not found: %s", workdir))
  cwd
}

W$host_bash <- function(command, timeout = 120, workdir = NULL) {
  timeout <- W$bash_validate(command, timeout)
  W$bash_check_egress(command)
  cwd <- W$bash_working_directory(workdir)
  binding <- list(
    command = command, command_sha256 = W$bash_sha256(command), cwd = cwd,
    workspace = Sys.getenv("OPENAI4S_WORKSPACE"), generation = W$bash_generation(),
    challenge = W$bash_challenge(), timeout = timeout
  )
  consumed <- W$bash_authorize(binding)
  workspace <- Sys.getenv("OPENAI4S_WORKSPACE")
  root <- normalizePath(if (nzchar(workspace)) workspace else cwd, mustWork = FALSE)
  before <- W$bash_snapshot(root)
  ran <- W$bash_run(command, binding$cwd, timeout)
  diff <- W$bash_diff(before, W$bash_snapshot(root))
  report <- c(consumed, list(status = ran$status, exit_code = ran$exit_code), ran$streams, list(
    duration_ms = ran$duration_ms, workspace_diff = diff
  ))
  recorded <- tryCatch(W$host_call("record_bash_result", list(report)), error = function(e) NULL)
  if (ran$status == "timed_out") W$host_fail(sprintf("bash: timed out after %gs", timeout))
  audited <- is.list(recorded) && isTRUE(recorded$ok)
  c(list(exit_code = ran$exit_code), ran$streams, list(
    workdir = binding$cwd, duration_ms = ran$duration_ms,
    # The host's record of the diff (secret names hidden, its bounds): none
    # when the host kept no record.
    workspace_diff = if (audited) W$bash_host_diff(recorded$audit$workspace_diff),
    audit_recorded = audited
  ))
}

# The diff as the host recorded it, each list a character vector.
W$bash_host_diff <- function(diff) {
  if (!is.list(diff)) {
    return(NULL)
  }
  for (kind in c("created", "modified", "deleted")) diff[[kind]] <- as.character(unlist(diff[[kind]]))
  diff
}
