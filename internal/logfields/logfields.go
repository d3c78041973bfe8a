// Package logfields holds the one rule zkelect's packages share for the
// fields they add to a caller's zerolog.Logger: a field the caller's
// logger already carries is not added again (a daemon that names its
// member on every line would otherwise print it twice).
package logfields

import (
	"bytes"
	"encoding/json"

	"github.com/rs/zerolog"
)

// With returns log with the string fields kv (name, value, name, value,
// …) added, except those whose name log's context already carries. A
// name without a value is ignored.
func With(log zerolog.Logger, kv ...string) zerolog.Logger {
	has := names(log)
	ctx := log.With()
	for i := 0; i+1 < len(kv); i += 2 {
		if !has[kv[i]] {
			ctx = ctx.Str(kv[i], kv[i+1])
		}
	}
	return ctx.Logger()
}

// names returns the names of the context fields of log, read from one
// event written to a buffer instead of log's output.
func names(log zerolog.Logger) map[string]bool {
	var buf bytes.Buffer
	probe := log.Output(&buf)
	probe.Log().Send()
	var fields map[string]json.RawMessage
	if json.Unmarshal(buf.Bytes(), &fields) != nil {
		return nil
	}
	out := make(map[string]bool, len(fields))
	for k := range fields {
		out[k] = true
	}
	return out
}
