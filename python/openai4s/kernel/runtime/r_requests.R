# The R worker's idle requests (complete, inspect, is_complete, and the
# stdout_request fence the host sends after each), on the same protocol as
# worker.py. Sourced into the worker's locked environment by r_worker.R.
# None of them runs a cell's code: completion is R's own machinery in
# `utils` with operator completion off (it would evaluate what precedes `$`),
# and `$` after a plain name is completed here from the names of the value.

# R's completer evaluates the left side of `$`/`@` when `ops` is on.
utils::rc.settings(ops = FALSE, ipck = FALSE)

max_matches <- 500L

# The text before the cursor (a code point index, clamped) and where its
# line starts, as a code point offset.
before_cursor <- function(code, cursor) {
  if (!is.character(code) || length(code) != 1L || is.na(code)) code <- ""
  if (!is.numeric(cursor) || length(cursor) != 1L || is.na(cursor)) cursor <- nchar(code)
  cursor <- max(0L, min(as.integer(cursor), nchar(code)))
  text <- substr(code, 1L, cursor)
  newlines <- gregexpr("\n", text, fixed = TRUE)[[1L]]
  line_start <- if (newlines[[1L]] > 0L) max(newlines) else 0L
  list(cursor = cursor, line = substr(text, line_start + 1L, cursor), line_start = line_start)
}

# `name$pre`: the names of the value bound to `name`, read without dispatch.
dollar_matches <- function(line) {
  hit <- regmatches(line, regexec("([A-Za-z.][A-Za-z0-9._]*)\\$([A-Za-z0-9._]*)$", line))[[1L]]
  if (length(hit) != 3L) {
    return(NULL)
  }
  seen <- W$peek(hit[[2L]], globalenv())
  names <- if (identical(seen$state, "value")) {
    value <- seen$value
    if (is.environment(value)) {
      ls(value, all.names = FALSE)
    } else if (is.list(value) && !isS4(value)) {
      attr(value, "names", exact = TRUE)
    }
  }
  names <- names[startsWith(names, hit[[3L]]) & nzchar(names)]
  start <- nchar(line) - nchar(hit[[3L]])
  list(matches = sort(unique(names)), start = start)
}

utils_matches <- function(line) {
  utils:::.assignLinebuffer(line)
  utils:::.assignEnd(nchar(line))
  utils:::.guessTokenFromLine()
  utils:::.completeToken()
  list(
    matches = utils:::.retrieveCompletions(),
    start = as.integer(utils:::.CompletionEnv[["start"]])
  )
}

complete <- function(request) {
  at <- W$before_cursor(request$code, request$cursor)
  found <- tryCatch(
    {
      W$dollar_matches(at$line) %||% W$utils_matches(at$line)
    },
    error = function(e) list(matches = character(), start = nchar(at$line))
  )
  matches <- utils::head(as.character(found$matches), W$max_matches)
  W$send(list(
    type = "\"complete_reply\"", id = W$json_string(request$id),
    matches = W$json_array(lapply(matches, W$json_string)),
    cursor_start = W$json_number(as.integer(at$line_start + found$start)),
    cursor_end = W$json_number(as.integer(at$cursor)),
    metadata = "{}"
  ))
}

`%||%` <- function(a, b) if (is.null(a)) b else a

# The name around the cursor: letters, digits, `.`, `_` and `::`.
name_at <- function(code, cursor) {
  at <- W$before_cursor(code, cursor)
  rest <- substr(code, at$cursor + 1L, nchar(code))
  left <- regmatches(at$line, regexpr("[A-Za-z0-9._:]*$", at$line))
  right <- regmatches(rest, regexpr("^[A-Za-z0-9._]*", rest))
  name <- sub("^:+", "", paste0(left, right))
  if (!grepl("^([A-Za-z.][A-Za-z0-9._]*:::?)?[A-Za-z.][A-Za-z0-9._]*$", name)) "" else name
}

# R's help page of `topic` as plain text, or NULL.
help_text <- function(topic, package = NULL) {
  found <- if (is.null(package)) {
    utils::help((topic), help_type = "text")
  } else {
    utils::help((topic), package = (package), help_type = "text")
  }
  paths <- as.character(found)
  if (!length(paths)) {
    return(NULL)
  }
  rd <- utils:::.getHelpFile(paths[[1L]])
  lines <- character()
  con <- textConnection("lines", "w", local = TRUE)
  on.exit(close(con))
  tools::Rd2txt(rd, out = con, options = list(underline_titles = FALSE))
  paste(lines, collapse = "\n")
}

# A function's signature (detail 0) or its source (detail 1).
function_text <- function(name, f, detail) {
  if (detail >= 1L && is.function(f) && !is.primitive(f)) {
    return(paste(deparse(unclass(f), width.cutoff = 80L), collapse = "\n"))
  }
  signature <- deparse(args(f), width.cutoff = 80L)
  signature <- signature[-length(signature)] # args() ends with a NULL body
  paste0(name, " <- ", paste(signature, collapse = "\n"))
}

# What a name in the global environment is, without running its methods.
value_text <- function(name, value, detail) {
  if (is.function(value)) {
    return(W$function_text(name, value, detail))
  }
  f <- W$facts(value)
  text <- W$summary_line(f)
  plain <- (is.atomic(value) || is.list(value)) && is.null(attr(value, "class", exact = TRUE))
  if (plain && !isS4(value)) {
    # str() of an unclassed value dispatches on nothing of the user's...
    # except on classed elements of a list, which it would describe by
    # their methods; those lists get the summary line only.
    nested <- is.list(value) && any(vapply(value, function(v) !is.null(attr(v, "class", exact = TRUE)), TRUE))
    if (!nested) {
      shown <- utils::capture.output(utils::str(value, max.level = 2L, list.len = 20L))
      text <- paste(c(text, utils::head(shown, 40L)), collapse = "\n")
    }
  }
  paste0(name, ": ", text)
}

inspect_text <- function(code, cursor, detail) {
  name <- W$name_at(code, cursor)
  if (!nzchar(name)) {
    return(NULL)
  }
  if (grepl(":", name, fixed = TRUE)) {
    parts <- strsplit(name, ":::?")[[1L]]
    return(W$help_text(parts[[2L]], parts[[1L]]))
  }
  seen <- W$peek(name, globalenv())
  if (identical(seen$state, "active_binding")) {
    return(paste0(name, ": an active binding (reading it runs code)"))
  }
  if (identical(seen$state, "value")) {
    return(W$value_text(name, seen$value, detail))
  }
  W$help_text(name)
}

inspect <- function(request) {
  detail <- if (identical(request$detail_level, 1L) || identical(request$detail_level, 1)) 1L else 0L
  text <- tryCatch(W$inspect_text(request$code, request$cursor, detail), error = function(e) NULL)
  data <- if (is.null(text)) "{}" else W$json_object(list("text/plain" = W$json_string(text)))
  W$send(list(
    type = "\"inspect_reply\"", id = W$json_string(request$id),
    found = W$json_bool(!is.null(text)), data = data, metadata = "{}"
  ))
}

# R's own parser decides: complete, incomplete (it ran out of input: the
# error is past the last line, or inside a string), or invalid.
is_complete <- function(request) {
  code <- if (is.character(request$code) && length(request$code) == 1L) request$code else ""
  message <- tryCatch(
    {
      parse(text = code, keep.source = FALSE)
      NULL
    },
    error = function(e) conditionMessage(e)
  )
  status <- if (is.null(message)) {
    "complete"
  } else {
    lines <- length(strsplit(code, "\n", fixed = TRUE)[[1L]])
    at <- regmatches(message, regexec("<text>:([0-9]+):", message))[[1L]]
    past_end <- length(at) == 2L && as.integer(at[[2L]]) > lines
    if (past_end || grepl("INCOMPLETE_STRING", message, fixed = TRUE)) "incomplete" else "invalid"
  }
  W$send(list(
    type = "\"is_complete_reply\"", id = W$json_string(request$id),
    status = W$json_string(status), indent = if (status == "incomplete") "\"  \"" else "\"\""
  ))
}

# R keeps no cell's stdout on the protocol (its output goes through the
# host's sinks); answering says so, and is the fence the host waits for
# after a request this worker may not know.
stdout_request <- function(request) {
  W$send(list(
    type = "\"stdout_text\"", id = W$json_string(request$id), text = "\"\"",
    error = "\"the R worker keeps no cell stdout\""
  ))
}

# A warm worker is claimed (issue 28): the generation its bash capabilities
# are bound to is told only now, never at its spawn. Not answered.
adopt <- function(request) {
  generation <- request$generation
  if (is.character(generation) && length(generation) == 1L && nzchar(generation)) {
    Sys.setenv(OPENAI4S_KERNEL_GENERATION = generation)
  }
}
