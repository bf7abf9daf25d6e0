# What the R worker says about an object (the variable inspector, spec
# kernel.md §7.5, and the text of an `inspect` request) as R users see it:
# class, dims, columns, levels, length. Sourced into the worker's locked
# environment by r_worker.R.
#
# Nothing here runs user code: no S3/S4 dispatch on the object (attributes
# are read with attr(), columns with .subset2(), lengths only where no
# method outside base R could be called), and active bindings are never read.

# The class a user sees: the class attribute, else R's implicit class
# (matrix/array, then the storage type as class() names it).
class_of <- function(x) {
  explicit <- attr(x, "class", exact = TRUE)
  if (!is.null(explicit)) {
    return(as.character(explicit))
  }
  dims <- attr(x, "dim", exact = TRUE)
  if (length(dims) == 2L) {
    return("matrix")
  }
  if (length(dims) > 0L) {
    return("array")
  }
  switch(typeof(x),
    double = "numeric",
    closure = ,
    builtin = ,
    special = "function",
    symbol = "name",
    language = "call",
    typeof(x)
  )
}

# A method for `generic` that some class of `x` would dispatch to and that
# does not come from base R itself (a package's or the user's own code).
foreign_method <- function(generic, classes) {
  for (cls in classes) {
    method <- tryCatch(utils::getS3method(generic, cls, optional = TRUE), error = function(e) NULL)
    if (is.function(method) && !identical(environment(method), baseenv()) &&
      !identical(environment(method), .BaseNamespaceEnv)) {
      return(TRUE)
    }
  }
  FALSE
}

# length() without dispatch: lists and unclassed values directly; a classed
# atomic value only when length() would reach no method outside base R.
safe_length <- function(x) {
  if (is.null(attr(x, "class", exact = TRUE)) || is.list(x) && !isS4(x)) {
    return(if (is.list(x)) length(unclass(x)) else length(x))
  }
  if (isS4(x) || foreign_method("length", class_of(x))) NULL else length(x)
}

# Short storage names, as str() and tibble print them.
abbreviation <- function(x) {
  classes <- class_of(x)
  known <- c(
    factor = "fct", ordered = "ord", Date = "date", POSIXct = "dttm", difftime = "drtn",
    numeric = "dbl", integer = "int", character = "chr", logical = "lgl", complex = "cpl",
    raw = "raw", list = "list", matrix = "mat", data.frame = "df", tbl_df = "tibble"
  )
  hit <- classes[classes %in% names(known)]
  if (length(hit)) known[[hit[[1L]]]] else classes[[1L]]
}

data_frame_rows <- function(x) {
  rows <- tryCatch(.row_names_info(x, 2L), error = function(e) NA_integer_)
  if (is.numeric(rows) && length(rows) == 1L && !is.na(rows)) as.integer(abs(rows)) else NA_integer_
}

max_columns <- 50L
max_levels <- 20L

# The structured facts of one value: a list of R values (the caller turns
# them into JSON or into text).
facts <- function(x) {
  out <- list(class = class_of(x), typeof = typeof(x))
  if (isS4(x)) {
    return(out)
  }
  dims <- attr(x, "dim", exact = TRUE)
  if ("data.frame" %in% out$class && is.list(x)) {
    columns <- attr(x, "names", exact = TRUE)
    out$shape <- c(data_frame_rows(x), length(columns))
    shown <- seq_len(min(length(columns), max_columns))
    out$columns <- lapply(shown, function(i) {
      list(name = columns[[i]], type = abbreviation(.subset2(x, i)))
    })
    out$length <- out$shape[[1L]]
  } else if (is.numeric(dims) && length(dims) >= 1L) {
    out$shape <- as.integer(dims)
    out$length <- safe_length(x)
  } else if (is.atomic(x) || is.list(x)) {
    out$length <- safe_length(x)
  }
  levels <- attr(x, "levels", exact = TRUE)
  if ("factor" %in% out$class && is.character(levels)) {
    out$nlevels <- length(levels)
    out$levels <- utils::head(levels, max_levels)
  }
  out
}

# One line: "5 x 2 data.frame: a <int>, b <chr>", "factor w/ 3 levels: a, b, c".
summary_line <- function(f) {
  head <- if (!is.null(f$shape)) {
    paste0(paste(ifelse(is.na(f$shape), "?", f$shape), collapse = " x "), " ", f$class[[1L]])
  } else if (!is.null(f$length)) {
    paste0(f$class[[1L]], " of length ", f$length)
  } else {
    f$class[[1L]]
  }
  if (!is.null(f$columns)) {
    cols <- vapply(f$columns, function(c1) paste0(c1$name, " <", c1$type, ">"), "")
    more <- if (length(cols) < f$shape[[2L]]) ", \u2026" else ""
    return(paste0(head, ": ", paste(cols, collapse = ", "), more))
  }
  if (!is.null(f$levels)) {
    more <- if (length(f$levels) < f$nlevels) ", \u2026" else ""
    return(paste0(head, " w/ ", f$nlevels, " levels: ", paste(f$levels, collapse = ", "), more))
  }
  head
}

# The JSON fields the inspector adds for a classed or dimensioned value.
facts_json <- function(f) {
  fields <- list(
    type = W$json_string(f$class[[1L]]),
    class = W$json_array(lapply(f$class, W$json_string)),
    typeof = W$json_string(f$typeof)
  )
  if (!is.null(f$shape)) {
    fields$shape <- W$json_array(lapply(f$shape, function(n) W$json_number(as.integer(n))))
  }
  if (!is.null(f$length)) fields$length <- W$json_number(as.integer(f$length))
  if (!is.null(f$columns)) {
    fields$columns <- W$json_array(lapply(f$columns, function(c1) {
      W$json_object(list(name = W$json_string(c1$name), type = W$json_string(c1$type)))
    }))
  }
  if (!is.null(f$levels)) {
    fields$nlevels <- W$json_number(as.integer(f$nlevels))
    fields$levels <- W$json_array(lapply(f$levels, W$json_string))
  }
  fields$kind <- W$json_string(if (!is.null(f$columns)) "table" else if (!is.null(f$shape)) "array" else "object")
  fields$preview <- W$json_string(W$cut_text(summary_line(f), 240L))
  fields
}

cut_text <- function(text, limit) {
  if (nchar(text) > limit) paste0(substr(text, 1L, limit - 1L), "\u2026") else text
}

# A binding of `envir` without running code: an active binding is named,
# not read.
peek <- function(name, envir) {
  if (!exists(name, envir = envir, inherits = FALSE)) {
    return(list(state = "missing"))
  }
  if (bindingIsActive(name, envir)) {
    return(list(state = "active_binding"))
  }
  list(state = "value", value = get(name, envir = envir, inherits = FALSE))
}
